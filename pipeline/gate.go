package pipeline

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// The gate judges a parsed run before its offers are applied, against the
// source's own history first and the market only where that history is
// silent:
//
//   - layout: a mode, or the cards of a mode, lost more than the allowed
//     share of the last applied run's mapped offers, or the share of
//     offers mapping to no card jumped: the run is suspect;
//   - level: the prices of a mode moved as a whole beyond the band from the
//     source's anchor (its accepted level, gate_level.go) and the market
//     did not move with them: quarantined;
//   - a first run (no anchor): its cards' medians mostly lie beyond the
//     band learned from the other sources' levels (gate_market.go), or,
//     where fewer than three others sell its cards, beyond the reference
//     ranges (gate_reference.go): quarantined. A round's first runs are
//     judged against each other (round.go).
//
// Such a run is recorded, not applied, and its source shows as held until
// an operator accepts the level (sources accept): repetition alone never
// applies it. In an applied run, single outliers are held back until
// ConfirmRuns runs of the source bring the same price: an offer whose
// price moved by the band factor, a new offer beyond the band around its
// card's accepted range, or a card new to the source beyond the market's
// band.

// gateIn is what the gate judges a run with.
type gateIn struct {
	cfg    config.Ingest
	source string
	now    time.Time
	health store.Health
	ran    bool // the source has run before (health is real)
	prev   map[string]prevPrice
	next   []pricewatch.Offer
	// filterNext lets the verdict's offers reuse next's memory (the
	// caller reads next no more): a second copy of a 100k run's offers was
	// 47 MB of its peak. judge is pure only without it.
	filterNext bool
	// unknown counts the run's offers mapping to no card.
	unknown int
	// market is the other sources' prices (nil before any view).
	market *market
}

// prevPrice is what the gate knows of a stored offer.
type prevPrice struct {
	PricePerGPUHour float64
	Currency        string
	Card            string
	Mode            pricewatch.Mode
}

// gateOut is the verdict.
type gateOut struct {
	hold      pricewatch.RunHold
	reason    string
	confirmed string // why a held level was applied
	pending   *store.Level
	anchor    *store.Anchor      // the source's anchor after an applied run
	disputed  *store.Dispute     // an applied run's level against the market
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
	cells := cellsOf(in.next)
	if lv, why := layoutDrift(in); why != "" {
		return holdLevel(in, out, cells, pricewatch.RunSuspect, why, lv)
	}
	anchor := in.health.Anchor
	if anchor == nil && len(in.prev) > 0 {
		anchor = anchorFromStored(in.prev, in.market, in.now)
	}
	band := in.cfg.Band
	if anchor != nil {
		moves := anchorMoves(anchor, cells, in.market, band)
		for _, mv := range moves {
			if mv.held(band) {
				if ml, ok := backToMarket(in, cells); ok {
					// The market disputed the anchor and vouches for this
					// level: the market corroborates the move.
					out.confirmed = fmt.Sprintf("%s; the market, which disputed the anchor, has this run at ×%.3g of it: applied and anchored", mv, ml.Factor)
					out.anchor = anchorOf(cells, in.market, in.now, "the market (disputed anchor)")
					return out
				}
				lv := &store.Level{Kind: levelFactor, Mode: mv.mode, Factor: mv.factor}
				return holdLevel(in, out, cells, pricewatch.RunQuarantined, mv.String(), lv)
			}
		}
		out.anchor = followMarket(anchor, cells, in.market, moves, band)
		out.disputed = disputeOf(in, cells, nil)
	} else {
		if lv, why := outsideMarket(in, cells); why != "" {
			return holdLevel(in, out, cells, pricewatch.RunQuarantined, why, lv)
		}
		if lv, why := outsideReference(in, cells); why != "" {
			return holdLevel(in, out, cells, pricewatch.RunQuarantined, why, lv)
		}
		out.anchor = anchorOf(cells, in.market, in.now, "first run")
	}
	return holdOutliers(in, out, anchor, cells)
}

// holdLevel holds a run showing a new level until an operator accepts it;
// a run showing the accepted level is applied and anchors the source.
func holdLevel(in gateIn, out gateOut, cells map[string]*cell, hold pricewatch.RunHold, why string, lv *store.Level) gateOut {
	lv.NeedsAccept, lv.Runs, lv.Since = true, 1, in.now
	if p := in.health.Pending; p != nil && sameLevel(*p, *lv) {
		lv.Runs, lv.Since = p.Runs+1, p.Since
	}
	mapped := 0
	for _, n := range lv.Mapped {
		mapped += n
	}
	if a := in.health.Accepted; a != nil && sameLevel(*a, *lv) && (lv.Kind != levelLayout || mapped > 0) {
		out.confirmed = fmt.Sprintf("%s: accepted by %s at %s: applied", why, a.AcceptedBy, a.AcceptedAt.UTC().Format(time.RFC3339))
		out.anchor = anchorOf(cells, in.market, in.now, "accepted by "+a.AcceptedBy)
		// The operator accepted this level; where the market disagrees
		// with it, that stays on record, accepted.
		out.disputed = disputeOf(in, cells, a)
		return out
	}
	out.hold, out.pending, out.offers = hold, lv, nil
	out.reason = fmt.Sprintf("%s: held until the market moves with it or an operator accepts it (pricewatch sources accept %s --level %s); %d run(s) in a row since %s, last good offers kept",
		why, in.source, lv.Label(), lv.Runs, lv.Since.UTC().Format(time.RFC3339))
	out.heldState = in.health.HeldOffers
	return out
}

// Level kinds.
const (
	levelLayout = "layout"
	levelFactor = "factor"
	levelBand   = "band"
)

// sameLevel is store.SameLevel: the comparison accepts name levels by.
func sameLevel(a, b store.Level) bool { return store.SameLevel(a, b) }

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
	cards := map[string]int{}
	for _, o := range in.next {
		if o.Card != "" && !o.Reference() {
			mapped[o.Mode]++
			cards[bandKey(o.Card, o.Mode)]++
		}
	}
	var drops []string
	for _, m := range modesOf(in.health.Mapped) {
		was, now := in.health.Mapped[m], mapped[m]
		if was >= 5 && float64(was-now) > in.cfg.MaxMappedDrop*float64(was) {
			drops = append(drops, fmt.Sprintf("%s %d → %d mapped offers (%+.0f%%)", m, was, now, 100*float64(now-was)/float64(was)))
		}
	}
	lost := cardLoss(in.health.MappedCards, cards, in.health.Mapped, mapped, in.cfg.MaxCardLoss)
	for _, m := range modesOf(in.health.Mapped) {
		if l, ok := lost[m]; ok {
			drops = append(drops, l.String())
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
	lv := &store.Level{Kind: levelLayout, Mapped: mapped}
	for _, l := range lost {
		for k, n := range l.cards {
			if lv.Cards == nil {
				lv.Cards = map[string]int{}
			}
			lv.Cards[k] = n
		}
	}
	return lv, "layout drift: " + strings.Join(drops, "; ")
}

// modeLoss is what a mode's cards lost since the last applied run.
type modeLoss struct {
	mode      pricewatch.Mode
	lost, was int            // offers lost (net of the mode's gains), of the mode's
	cards     map[string]int // the cards that lost half or more (card\x00mode) → offers now
}

func (l modeLoss) String() string {
	return fmt.Sprintf("%s: %d cards lost half or more of their offers, the mode %d of %d mapped offers (%.0f%%) with them",
		l.mode, len(l.cards), l.lost, l.was, 100*share(l.lost, l.was))
}

// cardLoss finds, per mode, the cards that lost half or more of their
// mapped offers, and counts their loss as far as the mode as a whole
// shrank: on a marketplace hosts come and go, and a card that lost its few
// offers is made up by others that gained; a renamed field empties cards
// and nothing makes up for them. A mode lost its layout when that loss is
// at least 3 offers and more than maxLoss of the mode's offers.
func cardLoss(was, now map[string]int, wasMode, nowMode map[pricewatch.Mode]int, maxLoss float64) map[pricewatch.Mode]modeLoss {
	out := map[pricewatch.Mode]modeLoss{}
	for k, w := range was {
		n := now[k]
		if w < 1 || 2*(w-n) < w {
			continue
		}
		m := pricewatch.Mode(k[strings.IndexByte(k, 0)+1:])
		l := out[m]
		if l.cards == nil {
			l = modeLoss{mode: m, was: wasMode[m], cards: map[string]int{}}
		}
		l.lost += w - n
		l.cards[k] = n
		out[m] = l
	}
	for m, l := range out {
		l.lost = min(l.lost, max(0, wasMode[m]-nowMode[m]))
		out[m] = l
		if l.lost < 3 || float64(l.lost) <= maxLoss*float64(l.was) {
			delete(out, m)
		}
	}
	return out
}

func share(n, of int) float64 {
	if of <= 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// implausible is a factor at or beyond the band either way.
func implausible(f, band float64) bool { return f >= band || f <= 1/band }

// beyondBand judges a first run's cards by their ratios to a reference
// (the market, or the reference ranges): held when the median ratio f is
// beyond the band and so are more than half of them (away), the same way.
func beyondBand(rs []float64, band float64) (f float64, away int, held bool) {
	if len(rs) == 0 {
		return 0, 0, false
	}
	f = median(rs)
	for _, r := range rs {
		if implausible(r, band) && (r > 1) == (f > 1) {
			away++
		}
	}
	return f, away, implausible(f, band) && 2*away > len(rs)
}

// outsideMarket finds a first run whose cards mostly lie beyond the
// market's learned level band: the median of its cards' ratios to the
// market is beyond it, and so are more than half of them, the same way.
func outsideMarket(in gateIn, cells map[string]*cell) (*store.Level, string) {
	ml, held := marketLevelOf(in, cells)
	if !held {
		return nil, ""
	}
	return &store.Level{Kind: levelBand, Factor: ml.Factor},
		fmt.Sprintf("a first run whose cards lie at ×%.3g of the market (%d of %d cards beyond the learned band %.3g–%.3g×)", ml.Factor, ml.Away, ml.Cards, 1/ml.Band, ml.Band)
}

// marketLevelOf is a run's level against the market: the median of its
// cards' ratios to it (the cards three other sources sell), how many lie
// beyond the learned level band the same way, and whether that holds it
// (beyondBand).
func marketLevelOf(in gateIn, cells map[string]*cell) (store.Dispute, bool) {
	if in.market == nil {
		return store.Dispute{}, false
	}
	band := in.market.levelBand(in.cfg.Band)
	var rs []float64
	for _, c := range cells {
		if r, ok := in.market.ratio(c.marketCell(), c.median(), c.cur, in.cfg.Band); ok {
			rs = append(rs, r)
		}
	}
	f, away, held := beyondBand(rs, band)
	return store.Dispute{Factor: f, Cards: len(rs), Away: away, Band: band}, held
}

// backToMarket reports whether a run that moved from a disputed anchor
// lies inside the band against the market: the level the market disputed
// was the wrong one, and the run is applied without an accept.
func backToMarket(in gateIn, cells map[string]*cell) (store.Dispute, bool) {
	if in.health.Disputed == nil {
		return store.Dispute{}, false
	}
	ml, _ := marketLevelOf(in, cells)
	return ml, ml.Cards > 0 && !implausible(ml.Factor, ml.Band)
}

// disputeOf judges an anchored source's applied run against the market
// as a first run would be: a level the market would hold in a first run
// is a dispute (the anchor was set before such a market formed: alone on
// its cards, or before first runs met the market); a run the market finds
// inside the band ends it. It keeps the source's dispute's start, and an
// operator's accept while the level stays inside the band around the one
// accepted; accepted marks a dispute accepted with the level the run
// confirms.
func disputeOf(in gateIn, cells map[string]*cell, accepted *store.Level) *store.Dispute {
	d, held := marketLevelOf(in, cells)
	if !held {
		if d.Cards == 0 {
			// The market cannot judge the run now (a seller stale or
			// failing): the dispute stands as it was, not cleared to be
			// posted again when the market is back.
			return in.health.Disputed
		}
		return nil
	}
	d.Since = in.now
	if prev := in.health.Disputed; prev != nil {
		d.Since = prev.Since
		if !prev.AcceptedAt.IsZero() && !implausible(d.Factor/prev.Factor, in.cfg.Band) {
			d.AcceptedAt, d.AcceptedBy = prev.AcceptedAt, prev.AcceptedBy
		}
	}
	if accepted != nil {
		d.AcceptedAt, d.AcceptedBy = accepted.AcceptedAt, accepted.AcceptedBy
	}
	return &d
}

// holdOutliers holds back single offers until ConfirmRuns runs of the
// source bring the same price: an offer whose price moved by the band
// factor, a new offer beyond the band around its card's accepted range,
// or the offers of a card new to the source beyond the market's band.
func holdOutliers(in gateIn, out gateOut, anchor *store.Anchor, cells map[string]*cell) gateOut {
	if in.filterNext {
		out.offers = in.next[:0] // written behind the loop below, which reads each offer first
	} else {
		out.offers = make([]pricewatch.Offer, 0, len(in.next)) // most are kept: one allocation
	}
	out.heldState = map[string]store.HeldState{}
	offMarket := map[string]string{} // cell key → why
	for k, c := range cells {
		if anchor != nil {
			if _, known := anchor.Cells[k]; known {
				continue
			}
		}
		if in.market == nil {
			continue
		}
		band := in.market.band(in.cfg.Band)
		if r, ok := in.market.ratio(c.marketCell(), c.median(), c.cur, in.cfg.Band); ok && implausible(r, band) {
			offMarket[k] = fmt.Sprintf("%s %s new to the source at ×%.3g of the market (learned band %.3g×)", c.card, c.mode, r, band)
		}
	}
	for _, o := range in.next {
		why := ""
		p, stored := in.prev[o.Key]
		switch {
		case stored && p.Currency == o.Currency && p.PricePerGPUHour > 0:
			if r := o.PricePerGPUHour / p.PricePerGPUHour; implausible(r, in.cfg.Band) {
				why = fmt.Sprintf("price ×%.3g of its last (%.4g → %.4g %s)", r, p.PricePerGPUHour, o.PricePerGPUHour, o.Currency)
			}
		case !stored && o.Card != "" && !o.Reference():
			if w, ok := outsideOwnRange(anchor, o, in.cfg.Band); ok {
				why = w
			} else if w, ok := offMarket[cellKey(o.Card, o.Mode, o.Currency)]; ok {
				why = w
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
			Reason: fmt.Sprintf("%s; %d of %d runs of the source to confirm", why, st.Runs, in.cfg.ConfirmRuns)})
		if stored {
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
