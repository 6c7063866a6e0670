package vast

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// The offer-search answer is decoded by a scanner of its own instead of
// encoding/json: a 50k-bundle answer is 117 MB of 86-key objects of which
// the offer struct keeps 17 keys, and encoding/json scanned each object
// twice (Decoder.Decode finds its end, then unmarshals it by reflection),
// 0.8 s of a 1.5 s run. The scanner reads each byte once, parses only the
// values the offer struct has a field for, and skips the rest without
// allocating; its buffer is reused across runs. It decodes exactly what
// encoding/json would (TestDecode_MatchesEncodingJSON, FuzzDecodeMatches):
// keys match the struct's json tags as encoding/json matches them (case
// folded), null leaves a value as it is (a pointer: nil), a value of the
// wrong type is an error, and a field of a kind it does not parse itself
// (or a string with escapes) is handed to encoding/json whole.

// field is one json-tagged field of offer.
type field struct {
	name  string
	index int
	kind  reflect.Kind // of the field, or of its element for a pointer
	ptr   bool
}

// offerFields are offer's fields by json name.
var offerFields = func() []field {
	t := reflect.TypeFor[offer]()
	var fs []field
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		k, ptr := f.Type.Kind(), false
		if k == reflect.Pointer {
			k, ptr = f.Type.Elem().Kind(), true
		}
		fs = append(fs, field{name: name, index: i, kind: k, ptr: ptr})
	}
	return fs
}()

// byName indexes offerFields by their json names.
var byName = func() map[string]*field {
	m := make(map[string]*field, len(offerFields))
	for i := range offerFields {
		m[offerFields[i].name] = &offerFields[i]
	}
	return m
}()

// lookup finds the field a key names: the exact tag, or else the one
// equal under case folding, as encoding/json matches them (only a key
// with an upper-case or non-ASCII letter can fold to another).
func lookup(key []byte) *field {
	if f, ok := byName[string(key)]; ok {
		return f
	}
	for _, c := range key {
		if c >= 'A' && c <= 'Z' || c >= 0x80 {
			for i := range offerFields {
				if strings.EqualFold(offerFields[i].name, string(key)) {
					return &offerFields[i]
				}
			}
			break
		}
	}
	return nil
}

// scanner reads JSON values from r through buf.
type scanner struct {
	r        io.Reader
	buf      []byte
	pos, end int
	// keep, when >= 0, is a position fill must not discard (the start of
	// a value read raw).
	keep int
	// read counts the bytes discarded from buf, for error offsets.
	read  int64
	err   error  // from r, once it failed or ended
	stack []byte // skip's open containers
	// names holds one string per distinct value of a string field (GPU
	// names and places repeat across thousands of offers).
	names map[string]string
}

// scanners keeps a scanner's buffer and names between runs: the answer
// streams through the buffer, so one run's serves the next.
var scanners = make(chan *scanner, 1)

func newScanner(r io.Reader) *scanner {
	select {
	case s := <-scanners:
		s.r, s.pos, s.end, s.keep, s.read, s.err = r, 0, 0, -1, 0, nil
		return s
	default:
		return &scanner{r: r, buf: make([]byte, 256<<10), keep: -1, names: map[string]string{}}
	}
}

// release hands the scanner back for the next run, unless a giant value
// grew its buffer.
func (s *scanner) release() {
	s.r = nil
	if len(s.buf) > 4<<20 || len(s.names) > 1<<16 {
		return
	}
	select {
	case scanners <- s:
	default:
	}
}

// fill reads more bytes so that buf[i] exists, discarding what lies
// before pos (or keep), and returns i moved by what was discarded; ok is
// false at the end of the input.
func (s *scanner) fill(i int) (int, bool) {
	for i >= s.end {
		if s.err != nil {
			return i, false
		}
		from := s.pos
		if s.keep >= 0 && s.keep < from {
			from = s.keep
		}
		if from > 0 {
			n := copy(s.buf, s.buf[from:s.end])
			s.end, s.pos, i = n, s.pos-from, i-from
			if s.keep >= 0 {
				s.keep -= from
			}
			s.read += int64(from)
		}
		if s.end == len(s.buf) {
			s.buf = append(s.buf, make([]byte, len(s.buf))...)
		}
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.err = err
		}
	}
	return i, true
}

// syntax is a malformed answer, with where.
func (s *scanner) syntax(at int, what string) error {
	if s.err != nil && !errors.Is(s.err, io.EOF) && at >= s.end {
		return s.err
	}
	if at >= s.end {
		return fmt.Errorf("unexpected end of JSON input at offset %d", s.read+int64(at))
	}
	return fmt.Errorf("%s at offset %d (%q)", what, s.read+int64(at), s.buf[at])
}

// next skips white space and returns the next byte without taking it;
// ok is false at the end of the input.
func (s *scanner) next() (byte, bool) {
	for {
		if s.pos >= s.end {
			var ok bool
			if s.pos, ok = s.fill(s.pos); !ok {
				return 0, false
			}
		}
		switch c := s.buf[s.pos]; c {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return c, true
		}
	}
}

// expect takes the byte c after white space.
func (s *scanner) expect(c byte, what string) error {
	got, ok := s.next()
	if !ok || got != c {
		return s.syntax(s.pos, "expected "+what)
	}
	s.pos++
	return nil
}

// str reads a string at pos and returns its bytes between the quotes
// (valid until the next read) and whether they need decoding (escapes, or
// bytes that are not UTF-8, which encoding/json replaces).
func (s *scanner) str() ([]byte, bool, error) {
	i := s.pos + 1
	esc, high := false, false
	for {
		if i >= s.end {
			var ok bool
			if i, ok = s.fill(i); !ok {
				return nil, false, s.syntax(i, "unterminated string")
			}
		}
		c := s.buf[i]
		switch {
		case c == '"':
			b := s.buf[s.pos+1 : i]
			s.pos = i + 1
			return b, esc || high && !utf8.Valid(b), nil
		case c == '\\':
			esc = true
			i += 2
			continue
		case c < 0x20:
			return nil, false, s.syntax(i, "control character in string")
		case c >= 0x80:
			high = true
		}
		i++
	}
}

// number reads a number at pos and returns its text (valid until the next
// read).
func (s *scanner) number() ([]byte, error) {
	i := s.pos
	for {
		if i >= s.end {
			var ok bool
			if i, ok = s.fill(i); !ok {
				break // a number may end the input
			}
		}
		c := s.buf[i]
		if c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			i++
			continue
		}
		break
	}
	b := s.buf[s.pos:i]
	if !validNumber(b) {
		return nil, s.syntax(s.pos, "invalid number")
	}
	s.pos = i
	return b, nil
}

// validNumber is JSON's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte) bool {
	i := 0
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

// literal takes true, false or null at pos.
func (s *scanner) literal(word string) error {
	i, ok := s.fill(s.pos + len(word) - 1)
	if !ok {
		return s.syntax(i, "")
	}
	if string(s.buf[s.pos:s.pos+len(word)]) != word {
		return s.syntax(s.pos, "invalid literal")
	}
	s.pos += len(word)
	return nil
}

// skip reads a value of any kind and discards it, without allocating
// (its stack of open containers is the scanner's, reused).
func (s *scanner) skip() error {
	stack := s.stack[:0]
	defer func() { s.stack = stack[:0] }()
	for {
		// A value.
		c, ok := s.next()
		if !ok {
			return s.syntax(s.pos, "")
		}
		switch {
		case c == '{' || c == '[':
			s.pos++
			close := byte('}')
			if c == '[' {
				close = ']'
			}
			if d, ok := s.next(); ok && d == close {
				s.pos++
				break // empty: a value like any other
			}
			stack = append(stack, close)
			if close == '}' {
				if err := s.key(); err != nil {
					return err
				}
			}
			continue
		case c == '"':
			if _, _, err := s.str(); err != nil {
				return err
			}
		case c == '-' || c >= '0' && c <= '9':
			if _, err := s.number(); err != nil {
				return err
			}
		case c == 't':
			if err := s.literal("true"); err != nil {
				return err
			}
		case c == 'f':
			if err := s.literal("false"); err != nil {
				return err
			}
		case c == 'n':
			if err := s.literal("null"); err != nil {
				return err
			}
		default:
			return s.syntax(s.pos, "invalid character looking for a value")
		}
		// After a value: the end of the containers it closes, then a
		// comma and the next value (after its key, in an object).
		for len(stack) > 0 {
			c, ok := s.next()
			if !ok {
				return s.syntax(s.pos, "")
			}
			top := stack[len(stack)-1]
			if c == top {
				s.pos++
				stack = stack[:len(stack)-1]
				continue
			}
			if c != ',' {
				return s.syntax(s.pos, "expected , or the end of a container")
			}
			s.pos++
			if top == '}' {
				if err := s.key(); err != nil {
					return err
				}
			}
			break
		}
		if len(stack) == 0 {
			return nil
		}
	}
}

// key reads an object's key and its colon.
func (s *scanner) key() error {
	if c, ok := s.next(); !ok || c != '"' {
		return s.syntax(s.pos, "expected a key")
	}
	if _, _, err := s.str(); err != nil {
		return err
	}
	return s.expect(':', ":")
}

// raw reads a value and returns its exact text.
func (s *scanner) raw() ([]byte, error) {
	if _, ok := s.next(); !ok {
		return nil, s.syntax(s.pos, "")
	}
	s.keep = s.pos
	err := s.skip()
	b := s.buf[s.keep:s.pos]
	s.keep = -1
	return b, err
}

// object reads an object into o, field by field.
func (s *scanner) object(o *offer) error {
	if err := s.expect('{', "an object"); err != nil {
		return err
	}
	if c, ok := s.next(); ok && c == '}' {
		s.pos++
		return nil
	}
	v := reflect.ValueOf(o).Elem()
	for {
		if c, ok := s.next(); !ok || c != '"' {
			return s.syntax(s.pos, "expected a key")
		}
		k, esc, err := s.str()
		if err != nil {
			return err
		}
		var f *field
		if esc {
			var name string
			if err := json.Unmarshal(append(append([]byte{'"'}, k...), '"'), &name); err != nil {
				return err
			}
			f = lookup([]byte(name))
		} else {
			f = lookup(k)
		}
		if err := s.expect(':', ":"); err != nil {
			return err
		}
		if f == nil {
			err = s.skip()
		} else {
			err = s.value(v, f)
		}
		if err != nil {
			return err
		}
		c, ok := s.next()
		switch {
		case ok && c == ',':
			s.pos++
		case ok && c == '}':
			s.pos++
			return nil
		default:
			return s.syntax(s.pos, "expected , or }")
		}
	}
}

// value reads the value of field f into v (the offer).
func (s *scanner) value(v reflect.Value, f *field) error {
	c, ok := s.next()
	if !ok {
		return s.syntax(s.pos, "")
	}
	fv := v.Field(f.index)
	if c == 'n' {
		// null leaves a value as it was and sets a pointer to nil.
		if err := s.literal("null"); err != nil {
			return err
		}
		if f.ptr {
			fv.SetZero()
		}
		return nil
	}
	mismatch := func(what string) error {
		return fmt.Errorf("json: cannot unmarshal %s into Go struct field offer.%s", what, f.name)
	}
	switch {
	case (f.kind == reflect.Float64 || !f.ptr && (f.kind == reflect.Int || f.kind == reflect.Int64)) &&
		(c == '-' || c >= '0' && c <= '9'):
		b, err := s.number()
		if err != nil {
			return err
		}
		// ParseFloat and ParseInt keep no reference to the text.
		t := unsafe.String(unsafe.SliceData(b), len(b))
		if f.kind == reflect.Float64 {
			x, err := strconv.ParseFloat(t, 64)
			if err != nil {
				return mismatch("number " + string(b))
			}
			if f.ptr {
				fv.Set(reflect.ValueOf(&x))
			} else {
				fv.SetFloat(x)
			}
			return nil
		}
		x, err := strconv.ParseInt(t, 10, 64)
		if err != nil || fv.OverflowInt(x) {
			return mismatch("number " + string(b))
		}
		fv.SetInt(x)
		return nil
	case f.kind == reflect.String && !f.ptr && c == '"':
		b, esc, err := s.str()
		if err != nil {
			return err
		}
		if esc {
			var x string
			if err := json.Unmarshal(append(append([]byte{'"'}, b...), '"'), &x); err != nil {
				return err
			}
			fv.SetString(x)
			return nil
		}
		x, ok := s.names[string(b)]
		if !ok {
			x = string(b)
			s.names[x] = x
		}
		fv.SetString(x)
		return nil
	case f.kind == reflect.Bool && (c == 't' || c == 'f'):
		x, word := c == 't', "false"
		if x {
			word = "true"
		}
		if err := s.literal(word); err != nil {
			return err
		}
		if f.ptr {
			fv.Set(reflect.ValueOf(&x))
		} else {
			fv.SetBool(x)
		}
		return nil
	}
	// Any other kind or value: encoding/json decodes (or refuses) it.
	b, err := s.raw()
	if err != nil {
		return err
	}
	return json.Unmarshal(b, fv.Addr().Interface())
}

// ParseReader decodes an offer search answer as a stream, one offer of the
// "offers" array at a time, and hands each observation to emit. The
// answer's other keys are skipped, except the error envelope
// ({"success": false, "error": …, "msg": …}), which is an error.
func ParseReader(r io.Reader, url string, emit func(pricewatch.Observation)) error {
	s := newScanner(r)
	defer s.release()
	bad := func(err error) error { return fmt.Errorf("decode JSON: %w", err) }
	c, ok := s.next()
	if !ok {
		if s.err != nil && !errors.Is(s.err, io.EOF) {
			return bad(s.err)
		}
		return scrapers.ErrEmptyBody
	}
	if c != '{' {
		return bad(fmt.Errorf("the answer is not an object (starts with %q)", c))
	}
	s.pos++
	var (
		success    *bool
		eText, msg string
		sawOffers  bool
		n          int
	)
	for first := true; ; first = false {
		c, ok := s.next()
		if ok && c == '}' {
			s.pos++
			break
		}
		if !first {
			if !ok || c != ',' {
				return bad(s.syntax(s.pos, "expected , or }"))
			}
			s.pos++
		}
		if c, ok := s.next(); !ok || c != '"' {
			return bad(s.syntax(s.pos, "expected a key"))
		}
		k, esc, err := s.str()
		if err != nil {
			return bad(err)
		}
		key := string(k)
		if esc {
			if err := json.Unmarshal(append(append([]byte{'"'}, k...), '"'), &key); err != nil {
				return bad(err)
			}
		}
		if err := s.expect(':', ":"); err != nil {
			return bad(err)
		}
		switch key {
		case "offers":
			m, err := s.offers(url, emit)
			if err != nil {
				return bad(err)
			}
			if m >= 0 {
				sawOffers = true
				n += m
			}
		case "success":
			b, err := s.raw()
			if err != nil {
				return bad(err)
			}
			if err := json.Unmarshal(b, &success); err != nil {
				return bad(err)
			}
		case "error", "msg":
			b, err := s.raw()
			if err != nil {
				return bad(err)
			}
			var v string
			if json.Unmarshal(b, &v) != nil {
				v = string(b)
			}
			if key == "error" {
				eText = v
			} else {
				msg = v
			}
		default:
			if err := s.skip(); err != nil {
				return bad(err)
			}
		}
	}
	return verdict(success, eText, msg, sawOffers, n)
}

// verdict is what a whole answer says: Vast's error envelope, no offers
// list, or no offer parsed from it.
func verdict(success *bool, eText, msg string, sawOffers bool, n int) error {
	if success != nil && !*success || !sawOffers && (eText != "" || msg != "") {
		return fmt.Errorf("vast error: %s: %s", eText, msg)
	}
	if !sawOffers {
		return fmt.Errorf("%w: no offers list", scrapers.ErrNothingParsed)
	}
	if n == 0 {
		return scrapers.ErrNothingParsed
	}
	return nil
}

// offers reads the offers list, one offer at a time, and returns how
// many observations it emitted; -1 for "offers": null.
func (s *scanner) offers(url string, emit func(pricewatch.Observation)) (int, error) {
	c, ok := s.next()
	switch {
	case ok && c == 'n':
		return -1, s.literal("null")
	case !ok || c != '[':
		return 0, fmt.Errorf("offers is not a list (%s)", s.syntax(s.pos, "starts with"))
	}
	s.pos++
	n := 0
	for first := true; ; first = false {
		c, ok := s.next()
		if ok && c == ']' {
			s.pos++
			return n, nil
		}
		if !first {
			if !ok || c != ',' {
				return n, s.syntax(s.pos, "expected , or ]")
			}
			s.pos++
			c, ok = s.next()
		}
		var o offer
		switch {
		case ok && c == 'n':
			if err := s.literal("null"); err != nil { // no offer
				return n, err
			}
		case ok && c == '{':
			if err := s.object(&o); err != nil {
				return n, err
			}
			n += observe(o, url, emit)
		default:
			return n, fmt.Errorf("json: cannot unmarshal %s into Go value of type vast.offer", s.syntax(s.pos, "a value that is not an object"))
		}
	}
}
