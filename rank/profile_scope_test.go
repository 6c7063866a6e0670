package rank_test

import (
	"math"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
)

// scopedSnap ranks three single A100 SXM offers for lora-7b with measured
// profiles at three scopes: the card (2500 tok/s), RunPod (1500) and one
// RunPod offer, a100-b (2400).
func scopedSnap(t *testing.T) *rank.Snapshot {
	t.Helper()
	cat := normalize.DefaultCatalog()
	ws := rank.BuiltinWorkloads()
	m := func(provider, offer string, tps float64) rank.Profile {
		return rank.Profile{Card: "A100-80GB-SXM", Workload: "lora-7b", TokensPerSecond: tps, Origin: rank.OriginMeasured,
			Provider: provider, Offer: offer}
	}
	profiles := append(rank.SeedProfiles(cat, ws), m("", "", 2500), m("runpod", "", 1500), m("runpod", "a100-b", 2400))
	offers := []pricewatch.Offer{
		off("runpod", "runpod", "a100-a", "A100-80GB-SXM", pricewatch.ModeOnDemand, 2.00, "USD"),
		off("runpod", "runpod", "a100-b", "A100-80GB-SXM", pricewatch.ModeOnDemand, 2.00, "USD"),
		off("lambda", "lambda", "a100", "A100-80GB-SXM", pricewatch.ModeOnDemand, 2.10, "USD"),
	}
	return rank.Build(offers, profiles, ws, cat, rank.Options{Now: now, ReliabilityFloor: 0.95, Base: "USD",
		Rates: &pricewatch.Rates{Base: "USD", Rates: map[string]float64{"USD": 1}}})
}

func TestBest_MostSpecificMeasurementWins(t *testing.T) {
	es := scopedSnap(t).Entries("lora-7b")
	// cost per Mtok = price × 1e6 / (tok/s × 3600):
	//   runpod a100-b at its own 2400: 2.00e6 / 8.64e6 = 0.231481
	//   lambda at the card-wide 2500:  2.10e6 / 9.00e6 = 0.233333
	//   runpod a100-a at RunPod's 1500: 2.00e6 / 5.40e6 = 0.370370
	// With the card-wide figure alone, runpod a100-a (0.222222) would lead.
	want := []struct {
		offer  string
		origin rank.Origin
		tps    float64
		cost   float64
	}{
		{"a100-b", "measured@runpod/a100-b", 2400, 0.231481},
		{"a100", "measured", 2500, 0.233333},
		{"a100-a", "measured@runpod", 1500, 0.370370},
	}
	if len(es) != len(want) {
		t.Fatalf("%d entries: %+v", len(es), es)
	}
	for i, w := range want {
		e := es[i]
		if e.OfferID != w.offer || e.ThroughputOrigin != w.origin || e.TokensPerSecondPerGPU != w.tps || math.Abs(e.CostPerMillionTokens-w.cost) > 5e-7 {
			t.Errorf("#%d: %s %s %.0f tok/s %.6f/Mtok, want %s %s %.0f %.6f", i, e.OfferID, e.ThroughputOrigin,
				e.TokensPerSecondPerGPU, e.CostPerMillionTokens, w.offer, w.origin, w.tps, w.cost)
		}
	}
	// RunPod's 1500 is far under the other measurements (flagged, still used).
	if !strings.Contains(es[2].ThroughputNote, "below norm") || es[0].ThroughputNote != "" || es[1].ThroughputNote != "" {
		t.Errorf("notes: %q %q %q", es[0].ThroughputNote, es[1].ThroughputNote, es[2].ThroughputNote)
	}
}

func TestPlan_MostSpecificMeasurementWins(t *testing.T) {
	res, err := scopedSnap(t).Plan(resolve(t, rank.JobSpec{Workload: "lora-7b", Tokens: 1e7, MaxGPUs: 1}), nil, normalize.DefaultCatalog())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]rank.Option{}
	for _, o := range res.Options {
		got[o.Provider+"/"+o.Offer] = o
	}
	for key, w := range map[string]struct {
		origin rank.Origin
		tps    float64
	}{"runpod/a100-a": {"measured@runpod", 1500}, "runpod/a100-b": {"measured@runpod/a100-b", 2400}, "lambda/a100": {"measured", 2500}} {
		o, ok := got[key]
		if !ok || o.ThroughputOrigin != w.origin || o.TokensPerSecondPerGPU != w.tps {
			t.Errorf("%s: %v %s %.0f, want %s %.0f", key, ok, o.ThroughputOrigin, o.TokensPerSecondPerGPU, w.origin, w.tps)
		}
	}
	if !strings.Contains(got["runpod/a100-a"].ThroughputNote, "below norm") {
		t.Errorf("the throttled RunPod figure is not explained: %+v", got["runpod/a100-a"])
	}
}

func TestCheckNorms(t *testing.T) {
	cat := normalize.DefaultCatalog()
	ws := rank.BuiltinWorkloads()
	w, _ := rank.WorkloadByName("lora-7b")
	pub, ok := rank.Published(w, "A100-80GB-SXM")
	if !ok {
		t.Fatal("no published lora-7b figure for the A100 SXM")
	}
	card, _ := cat.Card("L4")
	est, ok := rank.Estimate(w, card)
	if !ok {
		t.Fatal("no estimate for lora-7b on L4")
	}
	m := func(c, provider, offer string, tps float64) rank.Profile {
		return rank.Profile{Card: c, Workload: "lora-7b", TokensPerSecond: tps, Origin: rank.OriginMeasured, Provider: provider, Offer: offer}
	}
	for _, tc := range []struct {
		name     string
		profiles []rank.Profile
		norm     float64
		from     string
		ratio    float64
		below    bool
	}{
		// Alone, a measurement is held to the published figure: 75% of it
		// is 25% below (flagged); 85% is within 20% (not).
		{"PublishedNorm25Below", []rank.Profile{m("A100-80GB-SXM", "vast", "", 0.75*pub.TokensPerSecond)}, pub.TokensPerSecond, "published", 0.75, true},
		{"PublishedNorm15Below", []rank.Profile{m("A100-80GB-SXM", "vast", "", 0.85*pub.TokensPerSecond)}, pub.TokensPerSecond, "published", 0.85, false},
		// No published figure for the L4: the estimate is the norm.
		{"EstimateNorm", []rank.Profile{m("L4", "vast", "", 0.5*est.TokensPerSecond)}, est.TokensPerSecond, "estimated", 0.5, true},
		// Other measurements of the card win over the published figure:
		// median(1000, 1200, 1400) = 1200; 900 / 1200 = 0.75.
		{"MedianOfOthers", []rank.Profile{m("A100-80GB-SXM", "vast", "", 900), m("A100-80GB-SXM", "", "", 1000),
			m("A100-80GB-SXM", "lambda", "", 1200), m("A100-80GB-SXM", "runpod", "x", 1400)}, 1200, "median of 3 other measurements", 0.75, true},
		// Exactly 80% of the norm is not more than 20% below.
		{"AtTheLine", []rank.Profile{m("A100-80GB-SXM", "vast", "", 800), m("A100-80GB-SXM", "", "", 1000)}, 1000, "median of 1 other measurement", 0.8, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rank.CheckNorms(append(rank.SeedProfiles(cat, ws), tc.profiles...), ws, cat)
			var c *rank.NormCheck
			for i := range got {
				if got[i].Provider == "vast" {
					c = &got[i]
				}
			}
			if c == nil {
				t.Fatalf("vast's measurement not checked: %+v", got)
			}
			if math.Abs(c.Norm-tc.norm) > 1e-9 || c.NormFrom != tc.from || math.Abs(c.Ratio-tc.ratio) > 1e-9 || c.BelowNorm != tc.below {
				t.Errorf("got norm %.2f (%s) ratio %.4f below %v, want %.2f (%s) %.4f %v", c.Norm, c.NormFrom, c.Ratio, c.BelowNorm,
					tc.norm, tc.from, tc.ratio, tc.below)
			}
			if c.BelowNorm != strings.Contains(c.Note, "below norm") {
				t.Errorf("note %q", c.Note)
			}
		})
	}
	// Card-wide measurements and reference figures are norms, never checked.
	if got := rank.CheckNorms(append(rank.SeedProfiles(cat, ws), m("A100-80GB-SXM", "", "", 10)), ws, cat); len(got) != 0 {
		t.Errorf("checked %+v", got)
	}
}
