package vast

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/scrapers"
)

// parseStd is the decoder the scanner replaced (encoding/json, an offer
// at a time, as of 3d29c05): the reference the scanner must agree with.
func parseStd(r io.Reader, url string, emit func(pricewatch.Observation)) error {
	dec := json.NewDecoder(r)
	bad := func(err error) error { return fmt.Errorf("decode JSON: %w", err) }
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return scrapers.ErrEmptyBody
	}
	if err != nil {
		return bad(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return bad(fmt.Errorf("the answer is not an object (starts with %v)", tok))
	}
	var (
		success    *bool
		eText, msg string
		sawOffers  bool
		n          int
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return bad(err)
		}
		key, _ := tok.(string)
		switch key {
		case "offers":
			tok, err := dec.Token()
			if err != nil {
				return bad(err)
			}
			if tok == nil {
				continue // "offers": null
			}
			if d, ok := tok.(json.Delim); !ok || d != '[' {
				return bad(fmt.Errorf("offers is not a list (%v)", tok))
			}
			sawOffers = true
			for dec.More() {
				var o offer
				if err := dec.Decode(&o); err != nil {
					return bad(err)
				}
				n += observe(o, url, emit)
			}
			if _, err := dec.Token(); err != nil {
				return bad(err)
			}
		case "success":
			if err := dec.Decode(&success); err != nil {
				return bad(err)
			}
		case "error", "msg":
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return bad(err)
			}
			var v string
			if json.Unmarshal(raw, &v) != nil {
				v = string(raw)
			}
			if key == "error" {
				eText = v
			} else {
				msg = v
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return bad(err)
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return bad(err)
	}
	return verdict(success, eText, msg, sawOffers, n)
}

// decodeBoth runs both decoders over body (the scanner also one byte per
// read, so that every value straddles a refill) and fails when they
// disagree: on the observations, or on whether the body is an error.
func decodeBoth(t *testing.T, body []byte) ([]pricewatch.Observation, error) {
	t.Helper()
	collect := func(parse func(io.Reader, string, func(pricewatch.Observation)) error, r io.Reader) ([]pricewatch.Observation, error) {
		var out []pricewatch.Observation
		err := parse(r, "u", func(o pricewatch.Observation) { out = append(out, o) })
		return out, err
	}
	want, wantErr := collect(parseStd, bytes.NewReader(body))
	for _, r := range []io.Reader{bytes.NewReader(body), iotest.OneByteReader(bytes.NewReader(body))} {
		got, err := collect(ParseReader, r)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%.200q: scanner error %v, encoding/json error %v", body, err, wantErr)
		}
		if wantErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%.200q: scanner decodes\n %+v\nencoding/json\n %+v", body, got, want)
		}
		if errors.Is(wantErr, scrapers.ErrEmptyBody) != errors.Is(err, scrapers.ErrEmptyBody) ||
			errors.Is(wantErr, scrapers.ErrNothingParsed) != errors.Is(err, scrapers.ErrNothingParsed) {
			t.Fatalf("%.200q: scanner error %v, encoding/json error %v", body, err, wantErr)
		}
	}
	return want, wantErr
}

// One offer that every rule of observe keeps, in JSON, with one key's
// text replaced.
func oneOffer(kv string) string {
	return `{"offers":[{"id":7,"num_gpus":2,"gpu_name":"RTX 4090","gpu_ram":24564,"dph_total":0.5,"min_bid":0.3,` + kv + `}]}`
}

// The scanner decodes what encoding/json decodes, byte for byte of the
// observations, over the capture and over the corners of JSON and of
// encoding/json's rules. Before the scanner matched keys by case folding
// this failed on "ID"; before null left a value as it was, on
// `"dph_total":null` after a price.
func TestDecode_MatchesEncodingJSON(t *testing.T) {
	capture, err := fs.ReadFile(fixtures.FS(), "vast/bundles.json")
	if err != nil {
		t.Fatal(err)
	}
	if obs, err := decodeBoth(t, capture); err != nil || len(obs) < 1000 {
		t.Fatalf("capture: %d observations, %v", len(obs), err)
	}
	for _, body := range decodeCases() {
		decodeBoth(t, []byte(body))
	}
	// Every cut of an answer is an error for both (or, cut after its
	// closing brace, the same answer).
	full := oneOffer(`"geolocation":"Oslo, NO","reliability2":0.99,"rentable":true,"x":[1,{"y":"z"}]`)
	for i := range len(full) {
		decodeBoth(t, []byte(full[:i]))
	}
}

func decodeCases() []string {
	return []string{
		oneOffer(`"geolocation":"Oslo, NO"`),
		oneOffer(`"ID":8`), // case-folded key
		oneOffer(`"Geolocation":"X","GEOLOCATION":"Y"`),
		oneOffer(`"\u0067eolocation":"esc key"`),
		oneOffer(`"geolocation":"caf\u00e9 \"q\" \\ \/ \n"`),
		oneOffer(`"geolocation":"bad utf-8 ` + "\xff\xfe" + `"`),
		oneOffer(`"geolocation":"ünïcode"`),
		oneOffer(`"dph_total":null`),
		oneOffer(`"reliability2":0.9,"reliability2":null`),
		oneOffer(`"rentable":false`),
		oneOffer(`"rentable":null`),
		oneOffer(`"rentable":1`),
		oneOffer(`"id":7.5`),
		oneOffer(`"id":1e3`),
		oneOffer(`"id":"7"`),
		oneOffer(`"id":99999999999999999999`),
		oneOffer(`"num_gpus":-0`),
		oneOffer(`"gpu_ram":1e400`),
		oneOffer(`"gpu_ram":01`),
		oneOffer(`"gpu_ram":-`),
		oneOffer(`"gpu_ram":1.`),
		oneOffer(`"gpu_ram":.5`),
		oneOffer(`"gpu_ram":+1`),
		oneOffer(`"gpu_ram":1e`),
		oneOffer(`"gpu_ram":2E+2`),
		oneOffer(`"gpu_ram":[1]`),
		oneOffer(`"gpu_ram":{}`),
		oneOffer(`"gpu_ram":true`),
		oneOffer(`"gpu_name":5`),
		oneOffer(`"gpu_name":null`),
		oneOffer(`"skip":{"a":[1,2,{"b":null}],"c":"d"},"e":[],"f":{}`),
		oneOffer(`"skip":[1,2,]`),
		oneOffer(`"skip":{"a":1,}`),
		oneOffer(`"skip":{"a"}`),
		oneOffer(`"skip":{1:2}`),
		oneOffer(`"skip":["a":1]`),
		oneOffer(`"skip":tru`),
		oneOffer(`"skip":nul`),
		oneOffer(`"skip":"ctl` + "\x01" + `"`),
		oneOffer(`"skip":'x'`),
		"  \n" + oneOffer(`"a":1`) + "\n  trailing",
		`{"offers":[null,` + oneOffer(`"a":1`)[11:],
		`{"offers":[1]}`,
		`{"offers":["x"]}`,
		`{"offers":null}`,
		`{"offers":{}}`,
		`{"offers":[]}`,
		`{"offers":[{}]}`,
		`{"offers":[{"id":7}],"offers":[{"id":8,"num_gpus":1,"gpu_name":"A","dph_total":1}]}`,
		`{"success":false,"error":"bad","msg":"no"}`,
		`{"success":true,"offers":[]}`,
		`{"success":"x","offers":[]}`,
		`{"error":{"code":1},"msg":7}`,
		`{"other":[1,2,3],"offers":[{"id":1,"num_gpus":1,"gpu_name":"A","dph_total":1}]}`,
		`{"offers":[{"id":1,"num_gpus":1,"gpu_name":"A","dph_total":1}] "x":1}`,
		`{"offers":[{"id":1,"num_gpus":1,"gpu_name":"A","dph_total":1} {}]}`,
		`{"offers" [] }`,
		`{,}`, `{}`, `[]`, `"x"`, ``, `   `, `{"a":1`, `nul`,
		strings.Repeat(" ", 300<<10) + oneOffer(`"geolocation":"`+strings.Repeat("x", 600<<10)+`"`), // past the buffer
	}
}

// Random bodies decode alike too: go test ./scrapers/vast -fuzz FuzzDecodeMatches.
func FuzzDecodeMatches(f *testing.F) {
	for _, c := range decodeCases() {
		if len(c) < 4096 {
			f.Add([]byte(c))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) { decodeBoth(t, body) })
}

// Bodies in the scanner's pool: a second run on the pooled buffer
// decodes the same (a stale byte of the last run would show).
func TestDecode_ReusedBufferDecodesAlike(t *testing.T) {
	var a, b []pricewatch.Observation
	long := oneOffer(`"geolocation":"` + strings.Repeat("y", 300<<10) + `"`)
	if err := ParseReader(strings.NewReader(long), "u", func(o pricewatch.Observation) { a = append(a, o) }); err != nil {
		t.Fatal(err)
	}
	short := oneOffer(`"geolocation":"z"`)
	if err := ParseReader(strings.NewReader(short), "u", func(o pricewatch.Observation) { b = append(b, o) }); err != nil {
		t.Fatal(err)
	}
	if len(b) != 2 || b[0].Region != "z" || len(a[0].Region) != 300<<10 {
		t.Fatalf("after a long answer, a short one decodes as %+v", b)
	}
}
