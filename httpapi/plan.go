package httpapi

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
)

// MaxBodyBytes caps request bodies.
const MaxBodyBytes = 1 << 20

// DecodeSpec reads a job spec strictly: an unknown field or a value of the
// wrong type is an error naming the field.
func DecodeSpec(r io.Reader) (rank.JobSpec, error) {
	var spec rank.JobSpec
	err := decodeStrict(r, &spec, "a job spec")
	return spec, err
}

// decodeStrict reads one JSON value into v strictly: an unknown field or a
// value of the wrong type is an error naming the field, a body over the
// route's limit is ETooLarge, and anything after the value is refused.
// what names the value in the messages, with its article ("a job spec").
func decodeStrict(r io.Reader, v any, what string) error {
	_, noun, _ := strings.Cut(what, " ")
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return pricewatch.Errorf(ETooLarge, "body larger than %d bytes", mbe.Limit)
		case errors.As(err, &te):
			return pricewatch.Errorf(pricewatch.EInvalid, "%s: want a %s, got %s", te.Field, te.Type, te.Value)
		case errors.As(err, &se):
			return pricewatch.Errorf(pricewatch.EInvalid, "invalid JSON at byte %d: %v", se.Offset, err)
		case errors.Is(err, io.EOF):
			return pricewatch.Errorf(pricewatch.EInvalid, "empty body: send %s as JSON", what)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return pricewatch.Errorf(pricewatch.EInvalid, "%s: unknown field", strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`))
		}
		return pricewatch.Errorf(pricewatch.EInvalid, "invalid %s: %v", noun, err)
	}
	if trailing(dec) {
		return pricewatch.Errorf(pricewatch.EInvalid, "trailing data after the %s", noun)
	}
	return nil
}

// trailing reports whether anything but white space follows the value dec
// has read: a second object, a stray brace, garbage.
func trailing(dec *json.Decoder) bool {
	var extra json.RawMessage
	return dec.Decode(&extra) != io.EOF
}

// Plan answers a job spec from the snapshot, with owned hardware.
func Plan(snap *rank.Snapshot, spec rank.JobSpec, owned []rank.Owned) (*rank.PlanResult, error) {
	job, err := spec.Resolve(func(name string) (rank.Workload, bool) { return snap.Workload(name) }, normalize.KnownCurrency, snap.Base)
	if err != nil {
		return nil, err
	}
	if job.Card != "" {
		if _, ok := normalize.DefaultCatalog().Card(job.Card); !ok {
			return nil, pricewatch.Errorf(pricewatch.EInvalid, "card: unknown card %q", job.Card)
		}
	}
	if job.Currency != snap.Base && !snap.Rates.Has(job.Currency) {
		return nil, pricewatch.Errorf(pricewatch.EUnavailable, "no exchange rates yet to price in %s", job.Currency)
	}
	owned, err = withSpecOwned(owned, spec.Owned)
	if err != nil {
		return nil, err
	}
	return snap.Plan(job, owned, normalize.DefaultCatalog())
}

// withSpecOwned adds a spec's owned hardware to the daemon's, validated as
// config validates it; a spec entry replaces the daemon's of the same name
// (or the same entry, unnamed).
func withSpecOwned(owned, spec []rank.Owned) ([]rank.Owned, error) {
	if len(spec) == 0 {
		return owned, nil
	}
	if len(spec) > rank.MaxSpecOwned {
		return nil, pricewatch.Errorf(pricewatch.EInvalid, "owned: at most %d entries, got %d", rank.MaxSpecOwned, len(spec))
	}
	cat := normalize.DefaultCatalog()
	out := make([]rank.Owned, 0, len(owned)+len(spec))
	names := map[string]bool{}
	for i, o := range spec {
		o.Currency = strings.ToUpper(o.Currency)
		if err := o.Validate(fmt.Sprintf("owned[%d]", i), func(c string) bool { _, ok := cat.Card(c); return ok }, normalize.KnownCurrency); err != nil {
			return nil, pricewatch.Errorf(pricewatch.EInvalid, "%v", err)
		}
		names[o.Name] = true
		out = append(out, o)
	}
	for _, o := range owned {
		if (o.Name == "" || !names[o.Name]) && !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out, nil
}

func (s *Server) plan(w http.ResponseWriter, r *http.Request) error {
	v, err := s.view()
	if err != nil {
		return err
	}
	if len(r.URL.Query()) > 0 {
		return pricewatch.Errorf(pricewatch.EInvalid, "POST /v1/plan takes a JSON job spec in the body, no query parameters")
	}
	spec, err := DecodeSpec(http.MaxBytesReader(w, r.Body, MaxEstimateBody))
	if err != nil {
		return err
	}
	res, err := Plan(v.Snapshot, spec, s.backend.Config().Owned)
	if err != nil {
		return err
	}
	if p := rank.NonFinite(res); p != "" {
		return pricewatch.Errorf(pricewatch.EInternal, "the plan has a number that is not finite (%s): a bug, reported", p)
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// authorize checks the bearer token of a write request in constant time.
// Without a configured token the write endpoints are off.
func (s *Server) authorize(r *http.Request) error {
	want := s.backend.Config().Server.APIToken
	if want == "" {
		return pricewatch.Errorf(EForbidden, "write endpoints are off: no API token is configured (PRICEWATCH_API_TOKEN)")
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(want)) != 1 {
		return pricewatch.Errorf(EUnauthorized, "missing or wrong bearer token")
	}
	return nil
}

// Error codes of the write endpoints.
const (
	EUnauthorized = "unauthorized"
	EForbidden    = "forbidden"
	EMethod       = "method_not_allowed"
)
