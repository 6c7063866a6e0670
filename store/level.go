package store

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pricewatch/pricewatch"
)

// Errors of an accept that names a level.
var (
	// ErrLevelRequired: an accept must name the level it accepts (the
	// label shown in the hold message, /v1/sources and pricewatch sources).
	ErrLevelRequired = errors.New("name the held level you accept")
	// ErrLevelChanged: the held level moved since it was shown.
	ErrLevelChanged = errors.New("the held level is no longer the one named")
	// ErrAlreadyAccepted: the level was accepted already (a concurrent or
	// repeated accept); its run applies it.
	ErrAlreadyAccepted = errors.New("the held level was accepted already")
)

// Label names a held level so that an operator can accept exactly what was
// shown: kind, factor (3 digits), mode and the mapped offers per mode,
// "factor:x4.02/ondemand", "layout/ondemand:ondemand=40,spot=12".
func (l Level) Label() string {
	s := l.Kind
	if l.Factor != 0 {
		s += ":x" + strconv.FormatFloat(l.Factor, 'g', 3, 64)
	}
	if l.Mode != "" {
		s += "/" + string(l.Mode)
	}
	if len(l.Mapped) > 0 {
		var parts []string
		for m, n := range l.Mapped {
			parts = append(parts, fmt.Sprintf("%s=%d", m, n))
		}
		sort.Strings(parts)
		s += ":" + strings.Join(parts, ",")
	}
	return s
}

// ParseLevel reads a Label back (what SameLevel compares).
func ParseLevel(s string) (Level, error) {
	var l Level
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 512 {
		return l, fmt.Errorf("level %q: want a label such as factor:x4.02/ondemand", s)
	}
	head, mapped, hasMapped := strings.Cut(s, ":")
	if hasMapped && strings.HasPrefix(mapped, "x") {
		// "factor:x4.02/ondemand[:mapped]"
		rest := mapped[1:]
		num, tail, _ := strings.Cut(rest, ":")
		mapped, hasMapped = tail, tail != ""
		f, mode, _ := strings.Cut(num, "/")
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return l, fmt.Errorf("level %q: bad factor %q", s, f)
		}
		l.Factor, l.Mode = v, pricewatch.Mode(mode)
		l.Kind = head
	} else {
		kind, mode, _ := strings.Cut(head, "/")
		l.Kind, l.Mode = kind, pricewatch.Mode(mode)
	}
	if l.Kind == "" {
		return l, fmt.Errorf("level %q: no kind", s)
	}
	if hasMapped {
		l.Mapped = map[pricewatch.Mode]int{}
		for _, part := range strings.Split(mapped, ",") {
			m, n, ok := strings.Cut(part, "=")
			v, err := strconv.Atoi(n)
			if !ok || err != nil || v < 0 {
				return l, fmt.Errorf("level %q: bad mapped count %q", s, part)
			}
			l.Mapped[pricewatch.Mode(m)] = v
		}
	}
	return l, nil
}

// SameLevel: the same kind and mode, a factor within 10%, mapped counts
// per mode within 10% (or 2 offers). Runs showing the same level count
// towards it; an accept names the level it accepts by it.
func SameLevel(a, b Level) bool {
	if a.Kind != b.Kind || a.Mode != b.Mode {
		return false
	}
	if a.Factor != 0 || b.Factor != 0 {
		if b.Factor == 0 || math.Abs(a.Factor/b.Factor-1) > 0.1 {
			return false
		}
	}
	var modes []pricewatch.Mode
	for _, m := range []map[pricewatch.Mode]int{a.Mapped, b.Mapped} {
		for k := range m {
			if !slices.Contains(modes, k) {
				modes = append(modes, k)
			}
		}
	}
	for _, m := range modes {
		x, y := float64(a.Mapped[m]), float64(b.Mapped[m])
		if math.Abs(x-y) > math.Max(2, 0.1*math.Max(x, y)) {
			return false
		}
	}
	return true
}
