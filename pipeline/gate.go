package pipeline

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// The gate judges a parsed run before its offers are applied. A run is
// quarantined when its prices are implausible as a whole — they moved by a
// common factor of at least the band (a unit change: cents for dollars, per
// month for per hour), or most of its offers lie outside the band around
// the card's market price — and suspect when its layout drifted: a mode
// lost more than the allowed share of its mapped offers, or the share of
// offers mapping to no card jumped. Such a run is recorded, not applied,
// and its source shows as suspect; when ConfirmRuns runs in a row show the
// same new level, it is applied (a run that maps no offer at all never is).
// In an applied run, single outliers (an offer whose price moved by the
// band factor, or a new offer outside the market band) are held back the
// same way: their last good version stays until the price is confirmed.

// gateIn is what the gate judges a run with.
type gateIn struct {
	cfg    config.Ingest
	health store.Health
	ran    bool // the source has run before (health is real)
	prev   map[string]prevPrice
	next   []pricewatch.Offer
	// unknown counts the run's offers mapping to no card.
	unknown int
	// band is the market price per GPU-hour in the base currency per card
	// and mode ("card\x00mode"), from other sources; base converts.
	band map[string]float64
	base func(price float64, cur string) (float64, bool)
}

// prevPrice is what the gate knows of a stored offer: its price.
type prevPrice struct {
	PricePerGPUHour float64
	Currency        string
}

// gateOut is the verdict.
type gateOut struct {
	hold      pricewatch.RunHold
	reason    string
	confirmed string // a new level applied after confirmation
	pending   *store.Level
	offers    []pricewatch.Offer // to apply
	keep      []string           // held outliers: stored versions stay
	held      []pricewatch.HeldOffer
	heldState map[string]store.HeldState
}

func bandKey(card string, m pricewatch.Mode) string { return card + "\x00" + string(m) }

// judge is pure: the same inputs give the same verdict.
func judge(in gateIn) gateOut {
	out := gateOut{offers: in.next}
	if len(in.next) == 0 {
		return out
	}
	if lv, why := layoutDrift(in); why != "" {
		return confirm(in, out, pricewatch.RunSuspect, why, lv)
	}
	if lv, why := commonFactor(in); why != "" {
		return confirm(in, out, pricewatch.RunQuarantined, why, lv)
	}
	if lv, why := outsideBand(in); why != "" {
		return confirm(in, out, pricewatch.RunQuarantined, why, lv)
	}
	return holdOutliers(in, out)
}

// confirm holds a run showing a new level, unless the runs in a row that
// show it reach ConfirmRuns.
func confirm(in gateIn, out gateOut, hold pricewatch.RunHold, why string, lv *store.Level) gateOut {
	lv.Runs = 1
	if p := in.health.Pending; p != nil && sameLevel(*p, *lv) {
		lv.Runs = p.Runs + 1
	}
	mapped := 0
	for _, n := range lv.Mapped {
		mapped += n
	}
	if lv.Runs >= in.cfg.ConfirmRuns && (lv.Kind != levelLayout || mapped > 0) {
		out.confirmed = fmt.Sprintf("%s, confirmed by %d runs in a row: applied", why, lv.Runs)
		return out
	}
	out.hold, out.pending, out.offers = hold, lv, nil
	out.reason = fmt.Sprintf("%s (%d of %d runs to confirm; last good offers kept)", why, lv.Runs, in.cfg.ConfirmRuns)
	out.heldState = in.health.HeldOffers
	return out
}

// Level kinds.
const (
	levelLayout = "layout"
	levelFactor = "factor"
	levelBand   = "band"
)

// sameLevel: the same kind, a factor within 10%, mapped counts per mode
// within 10% (or 2 offers).
func sameLevel(a, b store.Level) bool {
	if a.Kind != b.Kind {
		return false
	}
	if a.Factor != 0 || b.Factor != 0 {
		if b.Factor == 0 || math.Abs(a.Factor/b.Factor-1) > 0.1 {
			return false
		}
	}
	for _, m := range modesOf(a.Mapped, b.Mapped) {
		x, y := float64(a.Mapped[m]), float64(b.Mapped[m])
		if math.Abs(x-y) > math.Max(2, 0.1*math.Max(x, y)) {
			return false
		}
	}
	return true
}

func modesOf(ms ...map[pricewatch.Mode]int) []pricewatch.Mode {
	var out []pricewatch.Mode
	for _, m := range ms {
		for k := range m {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// layoutDrift compares the run's mapped offers per mode, and its unknown
// share, with the last applied run.
func layoutDrift(in gateIn) (*store.Level, string) {
	if !in.ran || len(in.health.Mapped) == 0 {
		return nil, ""
	}
	mapped := map[pricewatch.Mode]int{}
	for _, o := range in.next {
		if o.Card != "" && !o.Reference() {
			mapped[o.Mode]++
		}
	}
	var drops []string
	for _, m := range modesOf(in.health.Mapped) {
		was, now := in.health.Mapped[m], mapped[m]
		if was >= 5 && float64(was-now) > in.cfg.MaxMappedDrop*float64(was) {
			drops = append(drops, fmt.Sprintf("%s %d → %d mapped offers (%+.0f%%)", m, was, now, 100*float64(now-was)/float64(was)))
		}
	}
	lastUnknown := 0
	for _, n := range in.health.Unknown {
		lastUnknown += n
	}
	was := share(lastUnknown, in.health.Offers)
	now := share(in.unknown, len(in.next))
	if in.unknown >= 5 && now-was > in.cfg.MaxUnknownRise {
		drops = append(drops, fmt.Sprintf("offers mapping to no card %.0f%% → %.0f%% (%d of %d)", 100*was, 100*now, in.unknown, len(in.next)))
	}
	if len(drops) == 0 {
		return nil, ""
	}
	return &store.Level{Kind: levelLayout, Mapped: mapped}, "layout drift: " + strings.Join(drops, "; ")
}

func share(n, of int) float64 {
	if of <= 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// implausible is a factor at or beyond the band either way.
func implausible(f, band float64) bool { return f >= band || f <= 1/band }

// commonFactor finds prices that moved together by one factor beyond the
// band: at least 3 offers and half of those the run shares with the
// stored ones moved, and 80% of the moves are within 5% of their median.
func commonFactor(in gateIn) (*store.Level, string) {
	var ratios []float64
	common := 0
	for _, o := range in.next {
		p, ok := in.prev[o.Key]
		if !ok || p.Currency != o.Currency || !(p.PricePerGPUHour > 0) {
			continue
		}
		common++
		if r := o.PricePerGPUHour / p.PricePerGPUHour; math.Abs(r-1) > 1e-9 {
			ratios = append(ratios, r)
		}
	}
	if len(ratios) < 3 || 2*len(ratios) < common {
		return nil, ""
	}
	f := median(ratios)
	near := 0
	for _, r := range ratios {
		if math.Abs(r/f-1) <= 0.05 {
			near++
		}
	}
	if !implausible(f, in.cfg.Band) || float64(near) < 0.8*float64(len(ratios)) {
		return nil, ""
	}
	return &store.Level{Kind: levelFactor, Factor: f},
		fmt.Sprintf("prices moved by a common factor ×%.3g on %d of %d offers", f, near, common)
}

// outsideBand finds a run whose offers mostly lie outside the band around
// their card's market price (at least 3 offers and more than half of those
// with a market price).
func outsideBand(in gateIn) (*store.Level, string) {
	var ratios []float64
	with := 0
	for _, o := range in.next {
		r, ok := bandRatio(in, o)
		if !ok {
			continue
		}
		with++
		if implausible(r, in.cfg.Band) {
			ratios = append(ratios, r)
		}
	}
	if len(ratios) < 3 || 2*len(ratios) <= with {
		return nil, ""
	}
	f := median(ratios)
	return &store.Level{Kind: levelBand, Factor: f},
		fmt.Sprintf("%d of %d offers lie outside %.3g–%gx of their card's market price (median ×%.3g)", len(ratios), with, 1/in.cfg.Band, in.cfg.Band, f)
}

// bandRatio is an offer's price over its card's market price.
func bandRatio(in gateIn, o pricewatch.Offer) (float64, bool) {
	if o.Card == "" || o.Reference() {
		return 0, false
	}
	b, ok := in.band[bandKey(o.Card, o.Mode)]
	if !ok || !(b > 0) {
		return 0, false
	}
	p, ok := in.base(o.PricePerGPUHour, o.Currency)
	if !ok {
		return 0, false
	}
	return p / b, true
}

// holdOutliers holds back single offers whose price moved by the band
// factor (or, new, lies outside the market band) until ConfirmRuns runs
// in a row bring the same price.
func holdOutliers(in gateIn, out gateOut) gateOut {
	out.offers = nil
	out.heldState = map[string]store.HeldState{}
	for _, o := range in.next {
		why := ""
		if p, ok := in.prev[o.Key]; ok && p.Currency == o.Currency && p.PricePerGPUHour > 0 {
			if r := o.PricePerGPUHour / p.PricePerGPUHour; implausible(r, in.cfg.Band) {
				why = fmt.Sprintf("price ×%.3g of its last (%.4g → %.4g %s)", r, p.PricePerGPUHour, o.PricePerGPUHour, o.Currency)
			}
		} else if !ok {
			if r, ok := bandRatio(in, o); ok && implausible(r, in.cfg.Band) {
				why = fmt.Sprintf("new offer at ×%.3g of its card's market price", r)
			}
		}
		if why == "" {
			out.offers = append(out.offers, o)
			continue
		}
		st := store.HeldState{PricePerGPUHour: o.PricePerGPUHour, Runs: 1}
		if old, ok := in.health.HeldOffers[o.Key]; ok && math.Abs(old.PricePerGPUHour/o.PricePerGPUHour-1) <= 0.01 {
			st.Runs = old.Runs + 1
		}
		if st.Runs >= in.cfg.ConfirmRuns {
			out.offers = append(out.offers, o) // confirmed: the new price is real
			continue
		}
		out.heldState[o.Key] = st
		out.held = append(out.held, pricewatch.HeldOffer{Key: o.Key, PricePerGPUHour: o.PricePerGPUHour, Currency: o.Currency,
			Reason: fmt.Sprintf("%s; %d of %d runs to confirm", why, st.Runs, in.cfg.ConfirmRuns)})
		if _, ok := in.prev[o.Key]; ok {
			out.keep = append(out.keep, o.Key)
		}
	}
	if len(out.heldState) == 0 {
		out.heldState = nil
	}
	sort.Slice(out.held, func(i, j int) bool { return out.held[i].Key < out.held[j].Key })
	return out
}

var median = rank.Median
