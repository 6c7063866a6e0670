package pipeline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/store"
)

func gateOffer(id, card string, price float64) pricewatch.Offer {
	return pricewatch.Offer{Key: "s/" + id + "/-/ondemand", Source: "s", OfferID: id, Card: card,
		Mode: pricewatch.ModeOnDemand, PricePerGPUHour: price, Currency: "USD"}
}

// offersAt makes n offers of card at price each.
func offersAt(n int, card string, price float64) []pricewatch.Offer {
	var out []pricewatch.Offer
	for i := range n {
		out = append(out, gateOffer(fmt.Sprint(i), card, price*(1+float64(i)/100)))
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

func gateWith(prev, next []pricewatch.Offer, h store.Health) gateIn {
	in := gateIn{cfg: config.DefaultIngest(), health: h, ran: true, prev: map[string]prevPrice{}, next: next,
		band: map[string]float64{bandKey("A40", pricewatch.ModeOnDemand): 0.40},
		base: func(p float64, cur string) (float64, bool) { return p, cur == "USD" }}
	for _, o := range prev {
		in.prev[o.Key] = prevPrice{PricePerGPUHour: o.PricePerGPUHour, Currency: o.Currency}
	}
	return in
}

func TestJudge_CommonFactorQuarantinedThenConfirmed(t *testing.T) {
	prev := offersAt(10, "A40", 0.40)
	for _, f := range []float64{10, 0.1, 100, 1.0 / 30} {
		in := gateWith(prev, scaled(prev, f), store.Health{Mapped: map[pricewatch.Mode]int{pricewatch.ModeOnDemand: 10}, Offers: 10})
		out := judge(in)
		if out.hold != pricewatch.RunQuarantined || !strings.Contains(out.reason, fmt.Sprintf("×%.3g", f)) ||
			out.offers != nil || out.pending == nil || out.pending.Runs != 1 || out.pending.Kind != levelFactor {
			t.Fatalf("×%g: %+v", f, out)
		}
		// Two runs at the same level are still held; the third applies.
		in.health.Pending = &store.Level{Kind: levelFactor, Factor: f, Runs: 1}
		if out := judge(in); out.hold == "" || out.pending.Runs != 2 {
			t.Errorf("×%g second run: %+v", f, out)
		}
		in.health.Pending.Runs = 2
		if out := judge(in); out.hold != "" || len(out.offers) != 10 || !strings.Contains(out.confirmed, "confirmed by 3 runs") {
			t.Errorf("×%g third run: %+v", f, out)
		}
		// Another factor does not confirm this one.
		in.health.Pending = &store.Level{Kind: levelFactor, Factor: f * 2, Runs: 2}
		if out := judge(in); out.hold == "" || out.pending.Runs != 1 {
			t.Errorf("×%g after a different level: %+v", f, out)
		}
	}
	// Real moves — everything 20% cheaper, or ×2.5 on a few — pass.
	for _, next := range [][]pricewatch.Offer{scaled(prev, 0.8), scaled(prev, 2.5)} {
		if out := judge(gateWith(prev, next, store.Health{})); out.hold != "" || len(out.offers) != 10 || len(out.held) != 0 {
			t.Errorf("plausible move: %+v", out)
		}
	}
}

func TestJudge_OutliersHeldBack(t *testing.T) {
	prev := offersAt(10, "A40", 0.40)
	next := append([]pricewatch.Offer(nil), prev...)
	next[3].PricePerGPUHour *= 10                          // one offer ×10: held, its stored version kept
	next = append(next, gateOffer("new-low", "A40", 0.05)) // new, ×0.125 of the 0.40 market: held
	next = append(next, gateOffer("new-ok", "A40", 0.30))  // new, within the band: applied
	next = append(next, gateOffer("new-nocard", "", 0.01)) // no card, no band: applied
	out := judge(gateWith(prev, next, store.Health{}))
	if out.hold != "" || len(out.offers) != 11 || len(out.held) != 2 || len(out.keep) != 1 || out.keep[0] != prev[3].Key {
		t.Fatalf("verdict %+v", out)
	}
	if out.heldState[prev[3].Key].Runs != 1 || !strings.Contains(out.held[1].Reason, "new offer at ×0.125") {
		t.Errorf("held %+v state %+v", out.held, out.heldState)
	}
	// The same prices twice more: confirmed on the third run.
	in := gateWith(prev, next, store.Health{HeldOffers: out.heldState})
	out = judge(in)
	in.health.HeldOffers = out.heldState
	out = judge(in)
	if len(out.held) != 0 || len(out.offers) != 13 || out.heldState != nil {
		t.Errorf("third run: %+v", out)
	}
}

func TestJudge_OutsideTheMarketBand(t *testing.T) {
	// A source seen for the first time whose every price is ×10 the market.
	next := offersAt(6, "A40", 4.0)
	out := judge(gateWith(nil, next, store.Health{}))
	if out.hold != pricewatch.RunQuarantined || out.pending.Kind != levelBand || !strings.Contains(out.reason, "6 of 6 offers lie outside") {
		t.Errorf("verdict %+v", out)
	}
}

func TestJudge_LayoutDrift(t *testing.T) {
	last := store.Health{Offers: 149, Mapped: map[pricewatch.Mode]int{pricewatch.ModeOnDemand: 60, pricewatch.ModeSpot: 40},
		Unknown: map[string]int{"x": 3}}
	mk := func(od, spot, unknown int) []pricewatch.Offer {
		var out []pricewatch.Offer
		for i := range od {
			out = append(out, gateOffer(fmt.Sprint("od", i), "A40", 0.4))
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
		name             string
		od, spot, unknow int
		want             string // "" applied
	}{
		{"unchanged", 60, 40, 3, ""},
		{"a 15% dip", 51, 40, 3, ""},
		{"a renamed field drops 23 on-demand offers", 37, 40, 3, "ondemand 60 → 37 mapped offers (-38%)"},
		{"every GPU renamed", 0, 0, 103, "offers mapping to no card"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := gateWith(nil, mk(c.od, c.spot, c.unknow), last)
			in.unknown = c.unknow
			out := judge(in)
			if c.want == "" {
				if out.hold != "" {
					t.Errorf("held: %s", out.reason)
				}
				return
			}
			if out.hold != pricewatch.RunSuspect || !strings.Contains(out.reason, c.want) {
				t.Errorf("verdict %q %q, want suspect with %q", out.hold, out.reason, c.want)
			}
			// Confirmed by 3 runs in a row — unless nothing maps at all.
			in.health.Pending = &store.Level{Kind: levelLayout, Mapped: out.pending.Mapped, Runs: 2}
			out = judge(in)
			if applied := out.hold == ""; applied != (c.od+c.spot > 0) {
				t.Errorf("third run applied = %v: %+v", applied, out)
			}
		})
	}
}
