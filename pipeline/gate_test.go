package pipeline

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/scrapers"
	_ "github.com/pricewatch/pricewatch/scrapers/all"
	"github.com/pricewatch/pricewatch/store"
)

var gateNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func gateOffer(id, card string, price float64) pricewatch.Offer {
	return pricewatch.Offer{Key: "s/" + id + "/-/ondemand", Source: "s", OfferID: id, Card: card,
		Mode: pricewatch.ModeOnDemand, PricePerGPUHour: price, Currency: "USD"}
}

// offersAt makes n offers of card at price each (1% apart).
func offersAt(n int, card string, price float64) []pricewatch.Offer {
	var out []pricewatch.Offer
	for i := range n {
		out = append(out, gateOffer(fmt.Sprint(card, "-", i), card, price*(1+float64(i)/100)))
	}
	return out
}

func scaled(os []pricewatch.Offer, f float64) []pricewatch.Offer {
	out := make([]pricewatch.Offer, len(os))
	for i, o := range os {
		o.PricePerGPUHour *= f
		out[i] = o
	}
	return out
}

func usd(p float64, cur string) (float64, bool) { return p, cur == "USD" }

// marketOf is a market of other sources' medians: source → card → price.
func marketOf(bySource map[string]map[string]float64) *market {
	all := map[string]map[string]float64{}
	for src, cards := range bySource {
		for card, p := range cards {
			k := bandKey(card, pricewatch.ModeOnDemand)
			if all[k] == nil {
				all[k] = map[string]float64{}
			}
			all[k][src] = p
		}
	}
	return newMarket("s", all, usd)
}

// gateWith judges next after prev was the source's applied run.
func gateWith(prev, next []pricewatch.Offer, h store.Health) gateIn {
	in := gateIn{cfg: config.DefaultIngest(), source: "s", now: gateNow, health: h, ran: true, prev: map[string]prevPrice{}, next: next}
	for _, o := range prev {
		in.prev[o.Key] = prevPrice{PricePerGPUHour: o.PricePerGPUHour, Currency: o.Currency, Card: o.Card, Mode: o.Mode}
	}
	return in
}

// applied is the source's health after an applied run's verdict.
func applied(h store.Health, out gateOut) store.Health {
	h.Pending, h.HeldOffers, h.Accepted = out.pending, out.heldState, nil
	if out.anchor != nil {
		h.Anchor = out.anchor
	}
	return h
}

func TestJudge_WholeSourceMoveWaitsForAnOperator(t *testing.T) {
	prev := append(offersAt(10, "A40", 0.40), offersAt(5, "L4", 0.70)...)
	first := judge(gateWith(nil, prev, store.Health{}))
	if first.hold != "" || first.anchor == nil || len(first.anchor.Cells) != 2 {
		t.Fatalf("first run: %+v", first)
	}
	h0 := applied(store.Health{}, first)
	for _, f := range []float64{10, 0.1, 100, 1.0 / 30, 730} {
		in := gateWith(prev, scaled(prev, f), h0)
		var out gateOut
		// Repetition alone never applies it: ten runs in a row stay held.
		for run := 1; run <= 10; run++ {
			out = judge(in)
			if out.hold != pricewatch.RunQuarantined || out.offers != nil || out.pending == nil || !out.pending.NeedsAccept ||
				out.pending.Runs != run || !strings.Contains(out.reason, fmt.Sprintf("×%.3g against the accepted level", f)) ||
				!strings.Contains(out.reason, "sources accept s") {
				t.Fatalf("×%g run %d: %+v", f, run, out)
			}
			in.health.Pending = out.pending
		}
		// An operator accepts it: the next run showing it is applied and
		// becomes the anchor.
		acc := *out.pending
		acc.AcceptedBy, acc.AcceptedAt = "ops", gateNow
		in.health.Accepted = &acc
		out = judge(in)
		if out.hold != "" || len(out.offers) != 15 || len(out.held) != 0 || !strings.Contains(out.confirmed, "accepted by ops") ||
			out.anchor == nil || math.Abs(out.anchor.Cells[cellKey("A40", pricewatch.ModeOnDemand, "USD")].Price/(0.40*1.045*f)-1) > 1e-9 {
			t.Fatalf("×%g accepted: %+v", f, out)
		}
		// An accept covers the level accepted, not another one.
		in.health.Accepted.Factor = f * 2
		if out := judge(in); out.hold == "" {
			t.Errorf("×%g applied under an accept of ×%g", f, f*2)
		}
	}
	// Real moves pass: everything 20% cheaper; ×2.5 (inside the band); one
	// card ×10 (not the source as a whole: its offers are outliers).
	oneCard := append(scaled(prev[:10], 10), prev[10:]...)
	for name, next := range map[string][]pricewatch.Offer{"×0.8": scaled(prev, 0.8), "×2.5": scaled(prev, 2.5), "one card ×10": oneCard} {
		out := judge(gateWith(prev, next, h0))
		if out.hold != "" {
			t.Errorf("%s: held: %s", name, out.reason)
		}
		if wantHeld := map[string]int{"one card ×10": 10}[name]; len(out.held) != wantHeld {
			t.Errorf("%s: %d outliers held, want %d", name, len(out.held), wantHeld)
		}
	}
}

// A drift of −5% per run is applied step by step until it adds up, against
// the anchor, to the band: 0.95^21 = 0.3406 > 1/3, 0.95^22 = 0.3235 ≤ 1/3,
// so runs 1–21 apply and run 22 is held.
func TestJudge_DriftAddsUpAgainstTheAnchor(t *testing.T) {
	prev := offersAt(8, "A40", 0.40)
	out := judge(gateWith(nil, prev, store.Health{}))
	h := applied(store.Health{}, out)
	for run := 1; run <= 30; run++ {
		next := scaled(prev, 0.95)
		out = judge(gateWith(prev, next, h))
		if run <= 21 {
			if out.hold != "" || len(out.held) != 0 {
				t.Fatalf("run %d (×%.4f): held: %s", run, math.Pow(0.95, float64(run)), out.reason)
			}
			h, prev = applied(h, out), next
			continue
		}
		if out.hold != pricewatch.RunQuarantined || !strings.Contains(out.reason, fmt.Sprintf("×%.3g against", math.Pow(0.95, 22))) {
			t.Fatalf("run %d: %+v", run, out)
		}
		h.Pending = out.pending
	}
}

// The market corroborates a move: the source's anchor follows where the
// market moved with it. It never makes a source that did not move look
// moved.
func TestJudge_TheMarketCorroborates(t *testing.T) {
	prev := offersAt(9, "A40", 0.40) // median 0.40 × 1.04 = 0.416
	before := marketOf(map[string]map[string]float64{"x": {"A40": 0.45}, "y": {"A40": 0.50}, "z": {"A40": 0.38}})
	in := gateWith(nil, prev, store.Health{})
	in.market = before
	h := applied(store.Health{}, judge(in))
	if m := h.Anchor.Cells[cellKey("A40", pricewatch.ModeOnDemand, "USD")].Market; m != 0.45 {
		t.Fatalf("anchor's market %v, want the median of 0.45, 0.50, 0.38", m)
	}
	quarter := marketOf(map[string]map[string]float64{"x": {"A40": 0.1125}, "y": {"A40": 0.125}, "z": {"A40": 0.095}})
	tenfold := marketOf(map[string]map[string]float64{"x": {"A40": 4.5}, "y": {"A40": 5.0}, "z": {"A40": 3.8}})
	for _, c := range []struct {
		name  string
		f     float64
		mk    *market
		held  bool
		moved bool // the anchor follows
	}{
		{"the source and the market ×0.25", 0.25, quarter, false, true},
		{"the source ×0.25 alone", 0.25, before, true, false},
		{"the market ×10, the source unchanged", 1, tenfold, false, false},
		{"the market ×0.25, the source ×10", 10, quarter, true, false},
	} {
		in := gateWith(prev, scaled(prev, c.f), h)
		in.market = c.mk
		out := judge(in)
		if (out.hold != "") != c.held {
			t.Errorf("%s: hold %q (%s)", c.name, out.hold, out.reason)
			continue
		}
		if c.held {
			continue
		}
		got := out.anchor.Cells[cellKey("A40", pricewatch.ModeOnDemand, "USD")].Price
		if moved := math.Abs(got/0.416-1) > 1e-9; moved != c.moved {
			t.Errorf("%s: anchor %v", c.name, got)
		}
	}
}

// A first run is judged against the market's learned band, and no single
// source of the market can get it held.
func TestJudge_FirstRunAgainstTheMarket(t *testing.T) {
	// Three clouds ("cloud" is the kind of a source with no kinds.csv row).
	mk := func() *market {
		return marketOf(map[string]map[string]float64{
			"c1": {"A40": 0.40, "L4": 0.70, "T4": 0.30}, "c2": {"A40": 0.50, "L4": 0.80, "T4": 0.35},
			"c3": {"A40": 0.45, "L4": 0.75, "T4": 0.32}})
	}
	next := append(append(offersAt(3, "A40", 0.42), offersAt(3, "L4", 0.72)...), offersAt(3, "T4", 0.31)...)
	for _, c := range []struct {
		f    float64
		held bool
	}{{1, false}, {2, false}, {0.5, false}, {100, true}, {0.01, true}, {730, true}} {
		in := gateWith(nil, scaled(next, c.f), store.Health{})
		in.market = mk()
		out := judge(in)
		if (out.hold == pricewatch.RunQuarantined) != c.held {
			t.Errorf("first run ×%g: hold %q %s", c.f, out.hold, out.reason)
		}
		if c.held && (out.pending == nil || !out.pending.NeedsAccept || out.pending.Kind != levelBand) {
			t.Errorf("first run ×%g: pending %+v", c.f, out.pending)
		}
	}
	// One market source ×100 does not get a true first run held (every
	// reference is also taken without it).
	m := mk()
	for cell := range m.medians {
		m.medians[cell]["c1"] *= 100
	}
	in := gateWith(nil, next, store.Health{})
	in.market = m
	if out := judge(in); out.hold != "" || len(out.held) != 0 {
		t.Errorf("a true run held by one wrong source: %s %+v", out.reason, out.held)
	}
}

func TestJudge_OutliersHeldBack(t *testing.T) {
	prev := offersAt(10, "A40", 0.40) // accepted range 0.40 … 0.436
	h := applied(store.Health{}, judge(gateWith(nil, prev, store.Health{})))
	next := append([]pricewatch.Offer(nil), prev...)
	next[3].PricePerGPUHour *= 10                          // one offer ×10: held, its stored version kept
	next = append(next, gateOffer("new-low", "A40", 0.05)) // new, ×0.125 of the lowest accepted 0.40: held
	next = append(next, gateOffer("new-ok", "A40", 0.30))  // new, inside the band around the range: applied
	next = append(next, gateOffer("new-nocard", "", 0.01)) // no card: applied
	in := gateWith(prev, next, h)
	out := judge(in)
	if out.hold != "" || len(out.offers) != 11 || len(out.held) != 2 || len(out.keep) != 1 || out.keep[0] != prev[3].Key {
		t.Fatalf("verdict %+v", out)
	}
	if out.heldState[prev[3].Key].Runs != 1 || !strings.Contains(out.held[1].Reason, "new offer at ×0.125 of the lowest accepted") {
		t.Errorf("held %+v state %+v", out.held, out.heldState)
	}
	// The same prices in two more runs of the source: confirmed on the third.
	in.health.HeldOffers = out.heldState
	out = judge(in)
	in.health.HeldOffers = out.heldState
	out = judge(in)
	if len(out.held) != 0 || len(out.offers) != 13 || out.heldState != nil {
		t.Errorf("third run: %+v", out)
	}
	// A card new to the source far from the market is held; near it, applied.
	in = gateWith(prev, append(append([]pricewatch.Offer(nil), prev...), append(offersAt(2, "L4", 7.5), offersAt(2, "T4", 0.3)...)...), h)
	in.market = marketOf(map[string]map[string]float64{"c1": {"L4": 0.70, "T4": 0.30}, "c2": {"L4": 0.80, "T4": 0.35}, "c3": {"L4": 0.75, "T4": 0.32}})
	out = judge(in)
	if len(out.held) != 2 || !strings.Contains(out.held[0].Reason, "L4 ondemand new to the source at ×") {
		t.Errorf("new cards: %+v", out.held)
	}
}

func TestJudge_LayoutDrift(t *testing.T) {
	// The last applied run: on-demand 60 offers (A40 30, L4 20, T4 10) and
	// 40 spot A40 offers.
	last := store.Health{Offers: 103, Mapped: map[pricewatch.Mode]int{pricewatch.ModeOnDemand: 60, pricewatch.ModeSpot: 40},
		MappedCards: map[string]int{"A40\x00ondemand": 30, "L4\x00ondemand": 20, "T4\x00ondemand": 10, "A40\x00spot": 40},
		Unknown:     map[string]int{"x": 3}}
	mk := func(a40, l4, t4, spot, unknown int) []pricewatch.Offer {
		var out []pricewatch.Offer
		for card, n := range map[string]int{"A40": a40, "L4": l4, "T4": t4} {
			for i := range n {
				out = append(out, gateOffer(fmt.Sprint(card, i), card, 0.4))
			}
		}
		for i := range spot {
			o := gateOffer(fmt.Sprint("sp", i), "A40", 0.2)
			o.Key, o.Mode = o.Key+"-spot", pricewatch.ModeSpot
			out = append(out, o)
		}
		for i := range unknown {
			out = append(out, gateOffer(fmt.Sprint("u", i), "", 0.4))
		}
		return out
	}
	for _, c := range []struct {
		name                    string
		a40, l4, t4, spot, unkn int
		want                    string // "" applied
	}{
		{"unchanged", 30, 20, 10, 40, 3, ""},
		{"a 15% dip spread over the cards", 26, 17, 8, 40, 3, ""},
		{"a marketplace's rare card gone", 30, 20, 8, 40, 3, ""},
		// T4 loses all 10 (≥ half): 10 of 60 = 17% > 10%, while the mode
		// lost only 17% (< 20%).
		{"one card's offers gone: 15% of the mode", 30, 20, 0, 40, 3, "ondemand: 1 cards lost half or more of their offers, the mode 10 of 60 mapped offers (17%) with them"},
		// The same card gone while others gained as many: churn, applied.
		{"one card gone, others gained", 36, 24, 0, 40, 3, ""},
		{"a renamed field drops 23 on-demand offers", 30, 7, 0, 40, 3, "ondemand 60 → 37 mapped offers (-38%)"},
		{"every GPU renamed", 0, 0, 0, 0, 103, "offers mapping to no card"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := gateWith(nil, mk(c.a40, c.l4, c.t4, c.spot, c.unkn), last)
			in.unknown = c.unkn
			out := judge(in)
			if c.want == "" {
				if out.hold != "" {
					t.Errorf("held: %s", out.reason)
				}
				return
			}
			if out.hold != pricewatch.RunSuspect || !strings.Contains(out.reason, c.want) {
				t.Fatalf("verdict %q %q, want suspect with %q", out.hold, out.reason, c.want)
			}
			// Not applied by repetition; applied once accepted — unless
			// nothing maps at all.
			in.health.Pending = out.pending
			in.health.Pending.Runs = 9
			if out := judge(in); out.hold == "" {
				t.Errorf("applied by repetition")
			}
			acc := *out.pending
			acc.AcceptedBy = "ops"
			in.health.Accepted = &acc
			out = judge(in)
			if ok := out.hold == ""; ok != (c.a40+c.l4+c.t4+c.spot > 0) {
				t.Errorf("accepted: applied = %v: %+v", ok, out)
			}
		})
	}
}

// A database from before anchors: the stored offers anchor the source, so
// the first run after the upgrade is judged against them too.
func TestJudge_StoredOffersAnchorAnOldDatabase(t *testing.T) {
	prev := offersAt(10, "A40", 0.40)
	h := store.Health{Mapped: map[pricewatch.Mode]int{pricewatch.ModeOnDemand: 10}, Offers: 10}
	if out := judge(gateWith(prev, scaled(prev, 10), h)); out.hold != pricewatch.RunQuarantined {
		t.Errorf("×10 over stored offers: %+v", out)
	}
	out := judge(gateWith(prev, prev, h))
	if out.hold != "" || out.anchor == nil || out.anchor.By != "stored offers" {
		t.Errorf("unchanged over stored offers: %+v", out)
	}
}

// Every registered source of GPU offers has a row in kinds.csv (a new one
// would be judged as a cloud by default, which is rarely what it is); the
// ECB's rates and OpenRouter's token prices are no GPU offers.
func TestKinds_EverySourceHasARow(t *testing.T) {
	k, err := sourceKinds()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range scrapers.Names() {
		if _, ok := k[name]; !ok && name != "ecb" && name != "openrouter" {
			t.Errorf("source %s has no row in pipeline/data/kinds.csv", name)
		}
	}
}
