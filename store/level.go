package store

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

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

// DisputeKind is the kind of level an accept of a dispute names
// ("market:x10.1").
const DisputeKind = "market"

// Dispute is a source's applied level lying beyond the band against a
// market that formed after its anchor (three or more other sellers of its
// cards): a first run anchored alone on its cards, or on a database from
// before the market judged first runs. Factor is the median of its cards'
// ratios to the market; Away of the Cards judged lie beyond Band the same
// way. Its offers stay applied and ranked, the source flagged (and posted
// once), until a run comes back inside the band or an operator accepts the
// level (AcceptedAt, AcceptedBy: flagged no more while the level stays
// inside the band around the one accepted).
type Dispute struct {
	Factor     float64   `json:"factor"`
	Cards      int       `json:"cards"`
	Away       int       `json:"away"`
	Band       float64   `json:"band"`
	Since      time.Time `json:"since"`
	AcceptedAt time.Time `json:"accepted_at,omitzero"`
	AcceptedBy string    `json:"accepted_by,omitempty"`
}

// Level is what an accept names ("market:x10.1").
func (d Dispute) Level() Level { return Level{Kind: DisputeKind, Factor: d.Factor} }

// Open reports a dispute no operator accepted.
func (d *Dispute) Open() bool { return d != nil && d.AcceptedAt.IsZero() }

// Reason says what disagrees, what stays and how to accept it.
func (d Dispute) Reason(source string) string {
	lv := d.Level()
	s := fmt.Sprintf("its applied level lies at ×%.3g of the market that formed since it was anchored (%d of %d cards beyond the learned band %.3g–%.3g×) since %s; its offers stay ranked",
		d.Factor, d.Away, d.Cards, 1/d.Band, d.Band, d.Since.UTC().Format(time.RFC3339))
	if !d.AcceptedAt.IsZero() {
		return s + fmt.Sprintf("; accepted by %s at %s", d.AcceptedBy, d.AcceptedAt.UTC().Format(time.RFC3339))
	}
	return s + fmt.Sprintf(": if the level is right, accept it (pricewatch sources accept %s --level %s); if not, disable the source until it is fixed",
		source, lv.Label())
}

// accept records an operator's accept of the level named.
func (d *Dispute) accept(source, by, level string, at time.Time) (Level, error) {
	lv := d.Level()
	if !d.AcceptedAt.IsZero() {
		lv.AcceptedAt, lv.AcceptedBy = d.AcceptedAt, d.AcceptedBy
		return lv, fmt.Errorf("source %s: %s by %s at %s: %w", source, lv.Label(), d.AcceptedBy, d.AcceptedAt.UTC().Format(time.RFC3339), ErrAlreadyAccepted)
	}
	if level == "" {
		return lv, fmt.Errorf("source %s disputes the market at %s: %w", source, lv.Label(), ErrLevelRequired)
	}
	named, err := ParseLevel(level)
	if err != nil {
		return lv, fmt.Errorf("%w: %v", ErrLevelChanged, err)
	}
	if !SameLevel(named, lv) {
		return lv, fmt.Errorf("source %s now disputes the market at %s, not %s: %w", source, lv.Label(), level, ErrLevelChanged)
	}
	d.AcceptedAt, d.AcceptedBy = at, by
	lv.AcceptedAt, lv.AcceptedBy = at, by
	return lv, nil
}
