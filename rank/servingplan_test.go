package rank_test

import (
	"math"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
)

// measuredSnap builds a snapshot over offers with one measured serving
// profile (one GPU) and token prices, so fleets can be worked by hand.
func measuredSnap(t *testing.T, m rank.Profile, tokens []pricewatch.TokenPrice, offers ...pricewatch.Offer) *rank.Snapshot {
	t.Helper()
	cat := normalize.DefaultCatalog()
	ws := rank.BuiltinWorkloads()
	m.Origin, m.GPUs = rank.OriginMeasured, 1
	return rank.Build(offers, append(rank.SeedProfiles(cat, ws), m), ws, cat, rank.Options{Now: now, ReliabilityFloor: 0.95, Base: "USD",
		Rates: &pricewatch.Rates{Base: "EUR", Rates: map[string]float64{"USD": 1.0163, "CNY": 6.8095}}, TokenPrices: tokens})
}

// servingSnap: serve-7b measured at 200 tokens/s on one RTX 4090.
func servingSnap(t *testing.T, offers ...pricewatch.Offer) *rank.Snapshot {
	return measuredSnap(t, rank.Profile{Card: "RTX-4090", Workload: "serve-7b", TokensPerSecond: 200}, nil, offers...)
}

func planOf(t *testing.T, snap *rank.Snapshot, spec rank.JobSpec) *rank.PlanResult {
	t.Helper()
	res, err := snap.Plan(resolve(t, spec), nil, normalize.DefaultCatalog())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func optionOf(t *testing.T, res *rank.PlanResult, offer string) rank.Option {
	t.Helper()
	for _, o := range res.Options {
		if o.Offer == offer {
			return o
		}
	}
	t.Fatalf("%s not planned: %+v", offer, res.Options)
	return rank.Option{}
}

// hiddenSum is the sum of an option's hidden costs.
func hiddenSum(o rank.Option) float64 {
	h := 0.0
	for _, v := range o.HiddenCosts {
		h += v
	}
	return h
}

func TestServingPlan_TotalsAreTotals(t *testing.T) {
	// serve-7b at a 300 tokens/s peak, 730 h a month for 3 months, on a
	// RunPod RTX 4090 at 0.50 USD/h (billed per second: 730 h bill 730 h).
	// 200 tokens/s per instance: ceil(300 × 1.2 / 200) = 2 instances.
	//   a month of GPU time: 2 × 0.50 × 730 = 730.00
	//   storage: 100 GB × 30/30 × 0.07 (RunPod's volume price) = 7.00 a month
	//   monthly cost: 730 + 7 = 737.00
	//   start-up: 15 min on each instance once: 2 × 0.25 × 0.50 = 0.25
	//   3 months: compute 3 × 730 = 2190; hidden 0.25 + 3 × 7 = 21.25;
	//   total 2211.25. First invoice: 730 + 0.25 + 7 = 737.25.
	//   capacity 2 × 200 = 400 tokens/s: headroom 400/300 − 1 = 33.33%.
	//   at the load: 300 × 3600 × 730 = 788.4M tokens a month:
	//   737 / 788.4 = 0.934804 per million.
	//   pessimistic: ceil(360 / (200 × 0.7)) = 3 instances, so compute and
	//   start-up × 3/2: (2190 + 0.25) × 1.5 + 21 = 3306.375.
	o := off("runpod", "runpod", "rp4090", "RTX-4090", pricewatch.ModeOnDemand, 0.5, "USD")
	fifteen, gb, days, none := 15.0, 100.0, 30.0, 0.0
	spec := rank.JobSpec{Workload: "serve-7b", PeakTokensPerSecond: 300, Months: 3, Modes: []string{"ondemand"},
		Hidden: &rank.HiddenSpec{StartupMinutes: &fifteen, StorageGB: &gb, StorageDays: &days, EgressGB: &none}}
	opt := optionOf(t, planOf(t, servingSnap(t, o), spec), "rp4090")
	sv := opt.Serving
	if sv == nil || sv.Instances != 2 || sv.GPUsNeeded != 2 || sv.Months != 3 {
		t.Fatalf("serving %+v", sv)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"monthly_cost", sv.MonthlyCost, 737},
		{"compute_cost", opt.ComputeCost, 2190},
		{"hidden", hiddenSum(opt), 21.25},
		{"total_cost", opt.TotalCost, 2211.25},
		{"first_invoice", sv.FirstInvoice, 737.25},
		{"option first_invoice", opt.FirstInvoice, 737.25},
		{"capacity", sv.CapacityTokensPerSecond, 400},
		{"headroom_pct", sv.HeadroomPct, 100.0 / 3},
		{"cost_per_million_tokens_at_load", sv.CostPerMillionTokensAtLoad, 737 / 788.4},
		{"pessimistic_total_cost", opt.PessimisticTotalCost, 3306.375},
		{"compute + hidden", opt.ComputeCost + hiddenSum(opt), opt.TotalCost},
	} {
		if !near(c.got, c.want, 1e-6) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// Without a peak one instance serves, and the total is still its bill:
	// 0.50 × 730 + 0.125 start-up + 7 storage = 372.125.
	spec.PeakTokensPerSecond, spec.Months = 0, 0
	opt = optionOf(t, planOf(t, servingSnap(t, o), spec), "rp4090")
	if opt.Serving == nil || opt.Serving.Instances != 1 || !near(opt.TotalCost, 372.125, 1e-9) {
		t.Errorf("no peak: total %v serving %+v", opt.TotalCost, opt.Serving)
	}
}

func TestServingPlan_FewestGPUsForTheLoad(t *testing.T) {
	// The audit's case: llama3-8b at a 300 tokens/s peak on AutoDL's
	// RTX 4090D rented monthly per GPU (1–8) at 0.193 USD/h. One GPU
	// carries 300 × 1.2 = 360 tokens/s (asserted), so the plan rents one:
	// 0.193 × 730 = 140.89 a month, not two GPUs at 281.78.
	o := perGPU(off("autodl", "autodl", "4090d", "RTX-4090D", pricewatch.ModeMonthly, 0.193, "USD"), 1, 2, 3, 4, 5, 6, 7, 8)
	snap := planSnap(t, o)
	spec := rank.JobSpec{Model: &rank.ModelSpec{Preset: "llama3-8b"}, Method: "serve", PeakTokensPerSecond: 300,
		Modes: []string{"monthly"}, Hidden: bare()}
	one := optionOf(t, planOf(t, snap, rank.JobSpec{Model: spec.Model, Method: "serve", Modes: spec.Modes, MaxGPUs: 1, Hidden: bare()}), "4090d")
	if one.TokensPerSecond < 360 {
		t.Fatalf("precondition: one RTX 4090D serves %.0f tokens/s, under 360", one.TokensPerSecond)
	}
	opt := optionOf(t, planOf(t, snap, spec), "4090d")
	if opt.GPUs != 1 || opt.Serving.GPUsNeeded != 1 || !near(opt.Serving.MonthlyCost, 0.193*730, 1e-9) || !near(opt.TotalCost, 140.89, 1e-9) {
		t.Errorf("rents %d GPUs, %d needed, %.2f a month, total %.2f; want 1, 1, 140.89", opt.GPUs, opt.Serving.GPUsNeeded, opt.Serving.MonthlyCost, opt.TotalCost)
	}
	// Where a larger group serves more per GPU: llama3-8b on L4s rented
	// per GPU at 0.75 USD/h. Sized for throughput per GPU billed the
	// offer is a TP2 pair (asserted); a 150 tokens/s peak needs 180, which
	// one L4 carries (asserted), so the plan rents one: 0.75 × 730 =
	// 547.50 a month, half the pair's 1,095.
	l4 := perGPU(off("p", "p", "l4", "L4", pricewatch.ModeMonthly, 0.75, "USD"), 1, 2, 4, 8)
	l4card, _ := normalize.DefaultCatalog().Card("L4")
	w := resolve(t, spec).Workload
	if r, _, _ := rank.RentalForLoad(w, l4card, l4, 8, rank.Profile{Origin: rank.OriginEstimated}, 0); r.GPUs != 2 {
		t.Fatalf("precondition: the load-blind rental is %d L4s, not 2", r.GPUs)
	}
	snapL4 := planSnap(t, l4)
	oneL4 := optionOf(t, planOf(t, snapL4, rank.JobSpec{Model: spec.Model, Method: "serve", Modes: spec.Modes, MaxGPUs: 1, Hidden: bare()}), "l4")
	if oneL4.TokensPerSecond < 180 {
		t.Fatalf("precondition: one L4 serves %.0f tokens/s, under 180", oneL4.TokensPerSecond)
	}
	l4spec := spec
	l4spec.PeakTokensPerSecond = 150
	got := optionOf(t, planOf(t, snapL4, l4spec), "l4")
	if got.GPUs != 1 || got.Serving.GPUsNeeded != 1 || !near(got.TotalCost, 547.5, 1e-9) {
		t.Errorf("L4 at 150 tokens/s: rents %d, %d needed, total %.2f; want 1, 1, 547.50", got.GPUs, got.Serving.GPUsNeeded, got.TotalCost)
	}
	// A load one GPU cannot carry: never more GPUs billed than one-GPU
	// instances would take (ceil(3600 / one GPU's rate)).
	spec.PeakTokensPerSecond = 3000
	opt = optionOf(t, planOf(t, snap, spec), "4090d")
	if most := int(math.Ceil(3600 / one.TokensPerSecond)); opt.Serving.GPUsNeeded > most {
		t.Errorf("3000 tokens/s: %d GPUs billed, one-GPU instances need %d", opt.Serving.GPUsNeeded, most)
	}
	if got := float64(opt.Serving.Instances) * opt.TokensPerSecond; got < 3600 {
		t.Errorf("3000 tokens/s: %d × %.0f tokens/s does not carry 3600", opt.Serving.Instances, opt.TokensPerSecond)
	}
}

func TestServingPlan_CommitmentBesideOnDemand(t *testing.T) {
	// A month of serve-7b (peak 100: one instance of 200 tokens/s) on a
	// 1-year reservation at 2.00 USD/h against on demand at 3.00:
	//   reservation: the whole year bills, 2 × 8760 = 17,520; first
	//   invoice a month of it, 2 × 730 = 1,460; 8760 − 730 = 8,030 h unused.
	//   on demand, the same month: 3 × 730 + 3 × 0.25 start-up = 2,190.75.
	// The on-demand option ranks first; the reservation says why not.
	res := planOf(t, servingSnap(t,
		off("p", "p", "ry", "RTX-4090", pricewatch.ModeReserved1Y, 2, "USD"),
		off("p", "p", "od", "RTX-4090", pricewatch.ModeOnDemand, 3, "USD")),
		rank.JobSpec{Workload: "serve-7b", PeakTokensPerSecond: 100, Modes: []string{"ondemand", "reserved-1y"}, Hidden: bare15()})
	if len(res.Options) != 2 || res.Options[0].Offer != "od" {
		t.Fatalf("order %+v", res.Options)
	}
	od, ry := res.Options[0], res.Options[1]
	if !near(od.TotalCost, 2190.75, 1e-9) || !near(ry.TotalCost, 17520, 1e-9) || !near(ry.FirstInvoice, 1460, 1e-9) ||
		!near(ry.UnusedHours, 8030, 1e-9) || ry.OnDemandTotalCost == nil || !near(*ry.OnDemandTotalCost, 2190.75, 1e-9) {
		t.Errorf("on demand total %v; reservation total %v first %v unused %v on-demand %v", od.TotalCost, ry.TotalCost, ry.FirstInvoice, ry.UnusedHours, ry.OnDemandTotalCost)
	}
	if !strings.Contains(ry.CommitmentNote, "8030 h unused") || !strings.Contains(ry.CommitmentNote, "dearer than") {
		t.Errorf("note %q", ry.CommitmentNote)
	}
}

// bare15 is bare with the default 15 minutes of start-up.
func bare15() *rank.HiddenSpec {
	h, fifteen := bare(), 15.0
	h.StartupMinutes = &fifteen
	return h
}

func TestPlan_ThreeMonthJobAgainstAYearReserved(t *testing.T) {
	// The audit's commitment case, in round numbers: lora-7b at 800
	// tokens/s on one RTX 4090 for 800 × 3600 × 2190 tokens = 2,190 h
	// (three months), no start-up or storage.
	//   1-year reservation at 0.50/h: 0.5 × 8760 = 4,380 for the year;
	//   first invoice 0.5 × 730 = 365; 8760 − 2190 = 6,570 h unused;
	//   break-even share 0.5 / 0.8 = 62.5%.
	//   on demand at 0.80/h: 0.8 × 2190 = 1,752, also the reservation's
	//   "same job on demand".
	res := planOf(t, planSnap(t,
		off("p", "p", "ry", "RTX-4090", pricewatch.ModeReserved1Y, 0.5, "USD"),
		off("p", "p", "od", "RTX-4090", pricewatch.ModeOnDemand, 0.8, "USD")),
		rank.JobSpec{Workload: "lora-7b", Tokens: 800 * 3600 * 2190, Modes: []string{"ondemand", "reserved-1y"}, Hidden: bare()})
	if len(res.Options) != 2 || res.Options[0].Offer != "od" {
		t.Fatalf("order %+v", res.Options)
	}
	od, ry := res.Options[0], res.Options[1]
	if !near(od.TotalCost, 1752, 1e-6) || !near(ry.TotalCost, 4380, 1e-6) || !near(ry.FirstInvoice, 365, 1e-6) ||
		!near(ry.UnusedHours, 6570, 1e-6) || ry.BreakEvenUtilization == nil || !near(*ry.BreakEvenUtilization, 0.625, 1e-12) ||
		ry.OnDemandTotalCost == nil || !near(*ry.OnDemandTotalCost, 1752, 1e-6) {
		t.Errorf("on demand %v; reserved total %v first %v unused %v break-even %v on-demand %v",
			od.TotalCost, ry.TotalCost, ry.FirstInvoice, ry.UnusedHours, ry.BreakEvenUtilization, ry.OnDemandTotalCost)
	}
	if !strings.Contains(ry.CommitmentNote, "6570 h unused") || !strings.Contains(ry.CommitmentNote, "1752.00") {
		t.Errorf("note %q", ry.CommitmentNote)
	}
	// On demand, a 2,190-hour job's first invoice is its first 730 hours:
	// 0.8 × 730 = 584.
	if !near(od.FirstInvoice, 584, 1e-6) {
		t.Errorf("on-demand first invoice %v", od.FirstInvoice)
	}
}

func TestPlan_BidsAreBids(t *testing.T) {
	// A Vast minimum bid (0.16 + 0.0013889 disk, id 13489095) serving
	// serve-7b. Asked with modes [spot] a steady serving plan leaves it
	// out; with [bid] it is planned at the table's rate for bids, 0.25
	// reclaims an hour (providers.csv "*", a default), each a 10-minute
	// restart: up 1 − 0.25 × 10/60 = 95.833% of the time, reclaimed
	// 0.25 × 730 = 182.5 times a month per instance.
	o := off("vast", "vast", "13489095", "RTX-4090", pricewatch.ModeSpot, 0.16+5*0.2/720, "USD")
	o.Bid = true
	snap := planSnap(t, o)
	spec := rank.JobSpec{Workload: "serve-7b", PeakTokensPerSecond: 3000, Modes: []string{"spot"}}
	if res := planOf(t, snap, spec); len(res.Options) != 0 {
		t.Errorf("modes [spot] planned a bid for serving: %+v", res.Options)
	}
	spec.Modes = []string{"bid"}
	opt := optionOf(t, planOf(t, snap, spec), "13489095")
	sv, sp := opt.Serving, opt.Spot
	avail := 1 - 0.25*10.0/60
	if sv == nil || sp == nil || !opt.Bid || !near(sp.Availability, avail, 1e-12) || !strings.Contains(sp.ReclaimBasis, "for bids") {
		t.Fatalf("bid serving: bid %v serving %+v spot %+v", opt.Bid, sv, sp)
	}
	want := int(math.Ceil(3000 * 1.2 / (opt.TokensPerSecond * avail)))
	if sv.Instances != want || !near(sv.RestartsPerMonth, 182.5*float64(want), 1e-9) ||
		!near(sv.MonthlyCost, float64(want)*opt.UnitPricePerHour*730, 1e-9) {
		t.Errorf("bid serving: %d instances (want %d), %+v", sv.Instances, want, sv)
	}
	if opt.ModeLabel() != "bid" {
		t.Errorf("mode label %q", opt.ModeLabel())
	}
	// Cost per million tokens counts the downtime.
	if !near(opt.CostPerMillionTokens, opt.UnitPricePerHour/(opt.TokensPerSecond*avail*3600)*1e6, 1e-9) {
		t.Errorf("cost per Mtok %v", opt.CostPerMillionTokens)
	}
	// A training job with spot checkpoints through a bid's reclaims: planned.
	if res := planOf(t, snap, rank.JobSpec{Workload: "lora-7b", Tokens: 1e7, Modes: []string{"spot"}}); len(res.Options) != 1 {
		t.Errorf("training with [spot] left the bid out: %+v", res.Options)
	}
	// Reclaimed every 5 minutes with a 10-minute restart, it never serves.
	fast := 12.0
	res := planOf(t, snap, rank.JobSpec{Workload: "serve-7b", PeakTokensPerSecond: 3000, Modes: []string{"bid"},
		IncludeUnfit: true, Hidden: &rank.HiddenSpec{ReclaimsPerHour: &fast}})
	if len(res.Options) != 1 || res.Options[0].Fits || res.Options[0].Reason == "" {
		t.Errorf("12 reclaims an hour: %+v", res.Options)
	}
}
