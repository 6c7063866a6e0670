package scrapers

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Number is a JSON number that may also arrive as a numeric string, as the
// rental platforms' APIs send them; anything else counts as absent.
type Number struct {
	Value float64
	Valid bool
	raw   string
}

// UnmarshalJSON implements json.Unmarshaler.
func (n *Number) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	n.raw = s
	if s == "null" {
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		s = strings.TrimSpace(str)
		n.raw = s
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	n.Value, n.Valid = v, true
	return nil
}

// Get returns the number and whether one was there.
func (n Number) Get() (float64, bool) { return n.Value, n.Valid }

// Raw is the value as sent (for error messages).
func (n Number) Raw() string { return n.raw }

// ID is an identifier that may arrive as a string or a number.
type ID string

// UnmarshalJSON implements json.Unmarshaler.
func (f *ID) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		*f = ID(strings.TrimSpace(str))
		return nil
	}
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		return nil
	}
	*f = ID(s)
	return nil
}
