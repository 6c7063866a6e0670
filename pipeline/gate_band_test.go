package pipeline

import (
	"math"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/store"
)

// A reference built without a source does not lean on it through the
// kinds' ratio either. Seen from Vast (a marketplace), the market of a new
// install: RunPod, the one other marketplace, at ×10; Lambda and Verda,
// clouds. Vast's true A40 (0.35) against each reference without one
// source: without Lambda or Verda, RunPod alone (3.5): ×0.1; without
// RunPod, the clouds' median (of logs: √(0.50 × 0.60) = 0.5477) — the
// marketplace/cloud ratio only RunPod showed is not known without it, so
// ×1 — ×0.639. The nearest 1 is ×0.639. Before, that reference was the
// clouds ×(3.5/0.5477): ×0.1 too, and Vast's true run was held.
func TestMarket_KindRatioLeftOutWithItsSource(t *testing.T) {
	all := map[string]map[string]float64{}
	for src, cards := range map[string]map[string]float64{
		"runpod": {"A40": 3.5, "L4": 5.0, "T4": 2.0},
		"lambda": {"A40": 0.50, "L4": 0.70, "T4": 0.28},
		"verda":  {"A40": 0.60, "L4": 0.80, "T4": 0.32},
	} {
		for card, p := range cards {
			k := bandKey(card, pricewatch.ModeOnDemand)
			if all[k] == nil {
				all[k] = map[string]float64{}
			}
			all[k][src] = p
		}
	}
	mk := newMarket("vast", all, usd)
	r, ok := mk.ratio(bandKey("A40", pricewatch.ModeOnDemand), 0.35, "USD", 3)
	if want := 0.35 / math.Sqrt(0.50*0.60); !ok || math.Abs(r-want) > 1e-9 {
		t.Errorf("A40 ratio %v %v, want %.4g", r, ok, want)
	}
	next := append(append(offersAt(3, "A40", 0.35), offersAt(3, "L4", 0.50)...), offersAt(3, "T4", 0.20)...)
	for i := range next {
		next[i].Source = "vast"
	}
	in := gateIn{cfg: gateWith(nil, nil, store.Health{}).cfg, source: "vast", now: gateNow, next: next, market: mk}
	if out := judge(in); out.hold != "" || len(out.held) != 0 {
		t.Errorf("vast's true first run: %q %s, %d offers held", out.hold, out.reason, len(out.held))
	}
}

// A first run as a whole is judged with the band the other sources'
// levels show, not their single cards. Four clouds sell cards A–D at 1.00,
// each one card at 3.00 (c1 A, c2 B, …): of the 16 deviations from the
// others' median, 4 are ln 3, so the cards' band is 1.5 × 3 = 4.5×; each
// source's level (its median deviation) is 0, so the level band is the
// floor, 3×. A run at ×4 on every card lies at ×4 of each card's market
// (every reference without one source is 1.00): held by the level band,
// which the cards' band (4.5×) would have passed; ×2 is applied.
func TestMarket_LevelBandJudgesAWholeRun(t *testing.T) {
	mk := func() *market {
		return marketOf(map[string]map[string]float64{
			"c1": {"A": 3, "B": 1, "C": 1, "D": 1}, "c2": {"A": 1, "B": 3, "C": 1, "D": 1},
			"c3": {"A": 1, "B": 1, "C": 3, "D": 1}, "c4": {"A": 1, "B": 1, "C": 1, "D": 3}})
	}
	if b, lb := mk().band(3), mk().levelBand(3); math.Abs(b-4.5) > 1e-9 || lb != 3 {
		t.Fatalf("band %v, level band %v; want 4.5 and 3", b, lb)
	}
	next := append(append(offersAt(2, "A", 1), offersAt(2, "B", 1)...), append(offersAt(2, "C", 1), offersAt(2, "D", 1)...)...)
	for _, c := range []struct {
		f    float64
		held bool
	}{{1, false}, {2, false}, {4, true}, {0.25, true}} {
		in := gateWith(nil, scaled(next, c.f), store.Health{})
		in.market = mk()
		out := judge(in)
		if (out.hold == pricewatch.RunQuarantined) != c.held {
			t.Errorf("×%g: hold %q %s", c.f, out.hold, out.reason)
		}
		if c.held && !strings.Contains(out.reason, "0.333–3×") {
			t.Errorf("×%g: %s", c.f, out.reason)
		}
	}
}
