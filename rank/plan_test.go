package rank_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestOwned_PricePerUsedHour(t *testing.T) {
	for _, c := range []struct {
		name string
		o    rank.Owned
		want float64
	}{
		{"IssueExample", rank.Owned{PurchasePrice: 15000, Months: 24, Watts: 450, KWhPrice: 1, Utilization: 0.5}, 2.16},
		{"FullUse", rank.Owned{PurchasePrice: 15000, Months: 24, Watts: 450, KWhPrice: 1, Utilization: 1}, 1.31},
		{"NoPower", rank.Owned{PurchasePrice: 8760, Months: 12, Utilization: 1}, 1.0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.o.PricePerUsedHour(); math.Round(got*100)/100 != c.want {
				t.Errorf("price per used hour = %.4f, want %.2f", got, c.want)
			}
		})
	}
	o := rank.Owned{PurchasePrice: 15000, Months: 24, Watts: 450, KWhPrice: 1, Utilization: 0.5}
	// 625 a month of write-off over (3 − 0.45) per rented hour.
	if h, ok := o.BreakEvenMonthlyHours(3); !ok || !near(h, 625/2.55, 1e-9) {
		t.Errorf("break-even = %v %v", h, ok)
	}
	if _, ok := o.BreakEvenMonthlyHours(0.4); ok {
		t.Error("renting below the power cost can never be beaten by owning")
	}
}

func TestReclaimsPerHour_Bands(t *testing.T) {
	// A band's middle share p of instances reclaimed in a 730-hour month
	// is the rate −ln(1 − p)/730: ln 0.975 = −0.0253178, ln 0.925 =
	// −0.0779615, ln 0.875 = −0.1335314, ln 0.75 = −0.2876821 (">20%" read
	// as 20–30%).
	for band, want := range map[string]float64{"<5%": 0.0253178 / 730, "5-10%": 0.0779615 / 730, "10-15%": 0.1335314 / 730,
		"15-20%": 0.1923719 / 730, ">20%": 0.2876821 / 730} {
		if got, ok := rank.ReclaimsPerHour(band); !ok || !near(got, want, 1e-10) {
			t.Errorf("%s: %v %v, want %v", band, got, ok, want)
		}
	}
	// Defaults agree with the bands: an AWS offer with no band is planned
	// at the worst band's rate, never above it (issue 18: a p5.4xlarge
	// with no band once got 0.02/h, 58 times the >20% band's).
	worst, _ := rank.ReclaimsPerHour(">20%")
	if d := rank.DefaultsFor("aws").SpotReclaimsPerHour; !near(d, worst, 1e-6) {
		t.Errorf("aws default %v, worst band %v", d, worst)
	}
	for _, bad := range []string{"", "often", "10-5%"} {
		if _, ok := rank.ReclaimsPerHour(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

// planSnap builds a snapshot over offers with measured lora-7b profiles
// (the DESIGN.md worked example: 4090 800, A100 2500, H100 5000 tokens/s).
func planSnap(t *testing.T, offers ...pricewatch.Offer) *rank.Snapshot {
	t.Helper()
	cat := normalize.DefaultCatalog()
	ws := rank.BuiltinWorkloads()
	profiles := rank.SeedProfiles(cat, ws)
	for card, tps := range map[string]float64{"RTX-4090": 800, "A100-80GB-SXM": 2500, "H100-80GB-SXM": 5000} {
		profiles = append(profiles, rank.Profile{Card: card, Workload: "lora-7b", TokensPerSecond: tps, Origin: rank.OriginMeasured})
	}
	return rank.Build(offers, profiles, ws, cat, rank.Options{Now: now, ReliabilityFloor: 0.95, Base: "USD",
		Rates: &pricewatch.Rates{Base: "EUR", Rates: map[string]float64{"USD": 1.0163, "CNY": 6.8095}}})
}

func resolve(t *testing.T, spec rank.JobSpec) rank.Job {
	t.Helper()
	job, err := spec.Resolve(rank.WorkloadByName, normalize.KnownCurrency, "USD")
	if err != nil {
		t.Fatal(err)
	}
	return job
}

func zero() *float64 { v := 0.0; return &v }

func TestPlan_DesignExamples(t *testing.T) {
	snap := planSnap(t,
		off("p", "p", "4090", "RTX-4090", pricewatch.ModeOnDemand, 3, "CNY"),
		off("p", "p", "a100", "A100-80GB-SXM", pricewatch.ModeOnDemand, 12, "CNY"),
		off("p", "p", "h100", "H100-80GB-SXM", pricewatch.ModeOnDemand, 28, "CNY"),
	)
	job := resolve(t, rank.JobSpec{Workload: "lora-7b", Tokens: 15e6, Currency: "CNY", MaxGPUs: 1,
		Hidden: &rank.HiddenSpec{StartupMinutes: zero()}})
	res, err := snap.Plan(job, nil, normalize.DefaultCatalog())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ costMtok, hours float64 }{
		"RTX-4090": {1.04, 5.2}, "A100-80GB-SXM": {1.33, 1.67}, "H100-80GB-SXM": {1.56, 0.83},
	}
	if len(res.Options) != 3 {
		t.Fatalf("options: %+v", res.Options)
	}
	for i, o := range res.Options {
		w := want[o.Card]
		if math.Round(o.CostPerMillionTokens*100)/100 != w.costMtok || math.Round(o.Hours*100)/100 != math.Round(w.hours*100)/100 && math.Round(o.Hours*10)/10 != w.hours {
			t.Errorf("%s: %.4f CNY/Mtok over %.3f h, want %.2f over %.2f h", o.Card, o.CostPerMillionTokens, o.Hours, w.costMtok, w.hours)
		}
		if o.ThroughputOrigin != rank.OriginMeasured || o.GPUs != 1 || o.Currency != "CNY" {
			t.Errorf("option %+v", o)
		}
		if i > 0 && o.TotalCost < res.Options[i-1].TotalCost {
			t.Error("not ranked by total cost")
		}
	}
	// The fastest card is the dearest per token.
	if res.Options[0].Card != "RTX-4090" || res.Options[2].Card != "H100-80GB-SXM" {
		t.Errorf("order %s, %s, %s", res.Options[0].Card, res.Options[1].Card, res.Options[2].Card)
	}
}

func TestPlan_RentalUnitsAndFit(t *testing.T) {
	cat := normalize.DefaultCatalog()
	// A per-GPU 4090 (any count 1..8), a fixed 2 × 4090 bundle, a fixed
	// 8 × A100 SXM instance.
	per := perGPU(off("rp", "rp", "4090", "RTX-4090", pricewatch.ModeOnDemand, 0.4, "USD"), 1, 2, 3, 4, 5, 6, 7, 8)
	pair := fixed(off("vast", "vast", "2x4090", "RTX-4090", pricewatch.ModeOnDemand, 0.3, "USD"), 2)
	a100 := fixed(off("aws", "aws", "p4de", "A100-80GB-SXM", pricewatch.ModeOnDemand, 1.5, "USD"), 8)
	snap := planSnap(t, per, pair, a100)
	job := resolve(t, rank.JobSpec{Workload: "full-ft-7b", Tokens: 1e8, IncludeUnfit: true})
	res, err := snap.Plan(job, nil, cat)
	if err != nil {
		t.Fatal(err)
	}
	// 14e9 + 14e9 + 28e9 bytes = 13.04 + 13.04 + 26.08 GiB.
	if m := res.Memory; !near(m.WeightsGiB, 14e9/(1<<30), 1e-9) || m.GradientsGiB != m.WeightsGiB || !near(m.OptimizerGiB, 28e9/(1<<30), 1e-9) {
		t.Errorf("memory %+v, want 14 + 14 + 28 GB in GiB", m)
	}
	got := map[string]rank.Option{}
	for _, o := range res.Options {
		got[o.Offer] = o
	}
	// 52.9 GiB of state sharded: over 3 × 24 GiB cards it is 17.4 + 0.77
	// GiB each, within 80% (19.2). The per-GPU source rents exactly 3, at
	// the estimate per GPU (U × 165.2e12 / 60.295e9 FLOPs a token) × the
	// link model's scaling for FSDP over PCIe without peer-to-peer;
	// hours = 1e8 / (3 × that × 3600), billed on 3 GPUs at 0.4; 15 min
	// start-up on 3 GPUs = 0.25 × 1.2 = 0.30.
	r := got["4090"]
	c4090, _ := cat.Card("RTX-4090")
	ft, _ := rank.WorkloadByName("full-ft-7b")
	one, _ := rank.EstimateOn(ft, c4090, 1)
	eff3 := rank.TrainingScaling(ft, c4090, 3)
	wantH := 1e8 / (3 * one.TokensPerSecond * eff3 * 3600)
	if !r.Fits || r.GPUs != 3 || r.GPUsUsed != 3 || r.RentUnit != pricewatch.RentPerGPU || r.ScalingEfficiency != eff3 ||
		!near(r.Hours, wantH, 1e-6) || !near(r.ComputeCost, wantH*3*0.4, 1e-6) || !near(r.HiddenCosts["startup"], 0.3, 1e-9) ||
		!near(r.UnitPricePerHour, 1.2, 1e-12) || !near(r.MemoryTotalGiB, 3*r.MemoryPerGPUGiB, 1e-9) {
		t.Errorf("per-GPU 4090: %+v (want %.4f h)", r, wantH)
	}
	// The 8 × A100 instance is sold whole: the job pays for 8 and runs on
	// all 8 (it fits one): 8 × 3960.2 (published: (4641 + 3684) / 2 ×
	// 6.66 / 7) × the NVLink scaling of the link model tokens/s; 12.0 an
	// hour (8 × 1.5); start-up 0.25 h × 12 = 3.
	a := got["p4de"]
	perGPUA := (4641 + 3684) / 2.0 * 6.66 / 7
	cA100, _ := cat.Card("A100-80GB-SXM")
	wantA := 1e8 / (8 * perGPUA * rank.TrainingScaling(ft, cA100, 8) * 3600)
	if !a.Fits || a.GPUs != 8 || a.GPUsUsed != 8 || a.RentUnit != pricewatch.RentFixed || a.ThroughputOrigin != rank.OriginPublished ||
		!near(a.Hours, wantA, 1e-6) || !near(a.ComputeCost, wantA*12, 1e-6) || !near(a.HiddenCosts["startup"], 3, 1e-9) {
		t.Errorf("8 × A100: %+v (want %.4f h)", a, wantA)
	}
	// A 2-GPU bundle cannot hold it and cannot be split or added to.
	if b := got["2x4090"]; b.Fits || !strings.Contains(b.Reason, "rented only as 2 GPUs") {
		t.Errorf("2 × 4090 bundle: %+v", b)
	}
	// With at most 2 GPUs neither the per-GPU 4090 nor the 8-GPU instance
	// qualifies; without include_unfit nothing unfit is listed.
	job = resolve(t, rank.JobSpec{Workload: "full-ft-7b", Tokens: 1e8, MaxGPUs: 2})
	res, _ = snap.Plan(job, nil, cat)
	if len(res.Options) != 0 {
		t.Errorf("max 2 GPUs: %+v", res.Options)
	}
	// lora-7b fits one 4090: the per-GPU source rents 1 (1 GPU × 0.4 per
	// hour), the bundle both of its GPUs (2 × 0.3 = 0.6 per hour, twice the
	// throughput less the link model's scaling).
	job = resolve(t, rank.JobSpec{Workload: "lora-7b", Tokens: 1e8, Card: "RTX-4090"})
	res, _ = snap.Plan(job, nil, cat)
	for _, o := range res.Options {
		want := map[string][2]float64{"4090": {1, 0.4}, "2x4090": {2, 0.6}}[o.Offer]
		if o.GPUs != int(want[0]) || !near(o.UnitPricePerHour, want[1], 1e-12) ||
			!near(o.TokensPerSecond, want[0]*800*rank.TrainingScaling(job.Workload, c4090, int(want[0])), 1e-9) {
			t.Errorf("lora-7b on %s: %d GPUs at %.2f/h, %.0f tokens/s", o.Offer, o.GPUs, o.UnitPricePerHour, o.TokensPerSecond)
		}
	}
}

// A commitment whose hourly rate is not below the cheapest on-demand rate
// of the card can never pay for itself: no break-even share above 100%.
func TestPlan_CommitmentThatNeverPays(t *testing.T) {
	cheap := off("v", "v", "od", "RTX-4090", pricewatch.ModeOnDemand, 0.30, "USD")
	dear := off("p", "p", "od2", "RTX-4090", pricewatch.ModeOnDemand, 0.50, "USD")
	monthly := off("p", "p", "m", "RTX-4090", pricewatch.ModeMonthly, 0.36, "USD")
	weekly := off("p", "p", "w", "RTX-4090", pricewatch.ModeWeekly, 0.30, "USD")
	daily := off("p", "p", "d", "RTX-4090", pricewatch.ModeDaily, 0.24, "USD")
	snap := planSnap(t, cheap, dear, monthly, weekly, daily)
	res, err := snap.Plan(resolve(t, rank.JobSpec{Workload: "lora-7b", Tokens: 1e7, Modes: []string{"monthly", "weekly", "daily"}}),
		nil, normalize.DefaultCatalog())
	if err != nil {
		t.Fatal(err)
	}
	by := map[pricewatch.Mode]rank.Option{}
	for _, o := range res.Options {
		by[o.Mode] = o
	}
	// Against the cheapest on-demand 0.30 (not the dearer 0.50): the month
	// at 0.36 needs 120% use, so never; the week at exactly 0.30 can only
	// tie at full use, so never; the day at 0.24 pays above 0.24 / 0.30 =
	// 80% use.
	for _, c := range []struct {
		mode  pricewatch.Mode
		never bool
		share float64
	}{{pricewatch.ModeMonthly, true, 0}, {pricewatch.ModeWeekly, true, 0}, {pricewatch.ModeDaily, false, 0.8}} {
		o, ok := by[c.mode]
		switch {
		case !ok:
			t.Errorf("%s: no option", c.mode)
		case o.OnDemandPerGPUHour == nil || *o.OnDemandPerGPUHour != 0.30:
			t.Errorf("%s: compared with %v, want 0.30", c.mode, o.OnDemandPerGPUHour)
		case c.never && (o.BreakEven != "never" || o.BreakEvenUtilization != nil):
			t.Errorf("%s: break-even %q %v, want never", c.mode, o.BreakEven, o.BreakEvenUtilization)
		case !c.never && (o.BreakEven != "" || o.BreakEvenUtilization == nil || !near(*o.BreakEvenUtilization, c.share, 1e-12)):
			t.Errorf("%s: break-even %q %v, want %v", c.mode, o.BreakEven, o.BreakEvenUtilization, c.share)
		}
	}
}

// An empty plan says why: offers that cannot hold the job are counted,
// apart from there being no offer in the modes at all.
func TestPlan_EmptyPlanCountsUnfitOffers(t *testing.T) {
	snap := planSnap(t, fixed(off("v", "v", "a", "RTX-4090", pricewatch.ModeOnDemand, 0.3, "USD"), 1),
		off("r", "r", "b", "RTX-4090", pricewatch.ModeOnDemand, 0.4, "USD"))
	// full-ft-7b needs 56.8 GB; a 4090 holds 19.2 GB, so on one GPU
	// (max_gpus 1) neither the fixed one-GPU unit nor the per-GPU offer can
	// hold it.
	for _, c := range []struct {
		modes []string
		unfit int
	}{{[]string{"ondemand"}, 2}, {[]string{"monthly"}, 0}} {
		res, err := snap.Plan(resolve(t, rank.JobSpec{Workload: "full-ft-7b", Tokens: 1e7, MaxGPUs: 1, Modes: c.modes}), nil, normalize.DefaultCatalog())
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Options) != 0 || res.UnfitOffers != c.unfit {
			t.Errorf("%v: %d options, %d unfit offers, want 0 and %d", c.modes, len(res.Options), res.UnfitOffers, c.unfit)
		}
	}
}

// Identical offers (same card, source, mode, region, unit and price) are
// one option with a count.
func TestPlan_CollapsesIdenticalOffers(t *testing.T) {
	var offers []pricewatch.Offer
	for _, id := range []string{"b1", "b2", "b3"} {
		offers = append(offers, fixed(off("vast", "vast", id, "RTX-4090", pricewatch.ModeOnDemand, 0.3, "USD"), 1))
	}
	offers = append(offers, fixed(off("vast", "vast", "b4", "RTX-4090", pricewatch.ModeOnDemand, 0.31, "USD"), 1))
	snap := planSnap(t, offers...)
	res, err := snap.Plan(resolve(t, rank.JobSpec{Workload: "lora-7b", Tokens: 1e7}), nil, normalize.DefaultCatalog())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Options) != 2 || res.Options[0].IdenticalOffers != 3 || len(res.Options[0].OtherOffers) != 2 ||
		res.Options[1].IdenticalOffers != 1 || res.OffersConsidered != 4 || res.Considered != 2 {
		t.Errorf("options %+v (considered %d of %d offers)", res.Options, res.Considered, res.OffersConsidered)
	}
}

func TestPlan_CommitmentsBillWholePeriods(t *testing.T) {
	spot := off("aws-spot", "aws", "g5", "A100-80GB-SXM", pricewatch.ModeSpot, 1.0, "USD")
	spot.ReclaimRisk = ">20%"
	monthly := off("p", "p", "m", "A100-80GB-SXM", pricewatch.ModeMonthly, 1.2, "USD")
	ondemand := off("p", "p", "o", "A100-80GB-SXM", pricewatch.ModeOnDemand, 2.0, "USD")
	yearly := off("p", "p", "y", "A100-80GB-SXM", pricewatch.ModeReserved1Y, 0.9, "USD")
	snap := planSnap(t, spot, monthly, ondemand, yearly)
	ck, rs, st, sd, eg := 30.0, 10.0, 100.0, 30.0, 50.0
	hidden := &rank.HiddenSpec{StartupMinutes: zero(), CheckpointMinutes: &ck, RestartMinutes: &rs, StorageGB: &st, StorageDays: &sd, EgressGB: &eg}
	job := resolve(t, rank.JobSpec{Workload: "lora-7b", Tokens: 36e6, Modes: []string{"ondemand", "spot", "monthly", "reserved-1y"},
		Utilization: 0.6, Hidden: hidden})
	res, err := snap.Plan(job, nil, normalize.DefaultCatalog())
	if err != nil {
		t.Fatal(err)
	}
	by := map[pricewatch.Mode]rank.Option{}
	for _, o := range res.Options {
		by[o.Mode] = o
	}
	// 36M tokens at 2500 tokens/s = 4 h.
	od := by[pricewatch.ModeOnDemand]
	if od.Hours != 4 || od.ComputeCost != 8 || od.BilledHours != 4 {
		t.Errorf("on-demand: %.3f h, %.3f compute, %.3f billed", od.Hours, od.ComputeCost, od.BilledHours)
	}
	// Provider "p" has the fallback defaults: 0.10 USD/GB-month, 0.05 USD/GB.
	if od.HiddenCosts["storage"] != 10 || od.HiddenCosts["egress"] != 2.5 || od.TotalCost != 20.5 {
		t.Errorf("hidden %v total %v", od.HiddenCosts, od.TotalCost)
	}
	if !near(od.CostPerMillionTokens, 20.5/36, 1e-6) {
		t.Errorf("cost per Mtok incl. hidden = %v", od.CostPerMillionTokens)
	}
	// Pessimistic: compute / 0.7 + one restart (30 + 10 min) + hidden.
	if !near(od.PessimisticTotalCost, 8/0.7+40.0/60*2+12.5, 1e-5) {
		t.Errorf("pessimistic = %v", od.PessimisticTotalCost)
	}
	// Spot: ">20%" → 25% of instances a month = −ln 0.75 / 730 = 3.9409e-4
	// reclaims an hour. A lora-7b checkpoint is the adapter's state, 7e9 ×
	// 0.5% × 10 bytes = 0.35 GB: 0.35 s at 1 GB/s = 9.722e-5 h. Young/Daly:
	// √(2 × 9.722e-5 / 3.9409e-4) = 0.7024 h between checkpoints; 4 h /
	// 0.7024 × 9.722e-5 = 5.54e-4 h writing them; 4 × 3.9409e-4 = 1.576e-3
	// restarts, each losing 0.7024 / 2 + 10 / 60 = 0.5179 h: 8.16e-4 h
	// lost, at 1.0/h.
	sp := by[pricewatch.ModeSpot]
	rate := 0.2876821 / 730
	write := 7e9 * 0.005 * 10 / 1e9 / 3600
	tau := math.Sqrt(2 * write / rate)
	if !near(sp.ReclaimsPerHour, rate, 1e-9) || sp.Spot == nil || !near(sp.Spot.CheckpointIntervalMinutes, tau*60, 1e-5) ||
		!near(sp.HiddenCosts["spot_reclaims"], rate*4*(tau/2+10.0/60)*1.0, 1e-9) ||
		!near(sp.HiddenCosts["checkpoint_writes"], 4/tau*write*1.0, 1e-9) || !near(tau, 0.7024, 1e-4) {
		t.Errorf("spot: rate %v plan %+v hidden %v", sp.ReclaimsPerHour, sp.Spot, sp.HiddenCosts)
	}
	// AWS storage default 0.08/GB-month: 100 GB for 30 days = 8; the 50 GB
	// of egress are within AWS's free 100 GB a month: 0 (not 50 × 0.09).
	if !near(sp.HiddenCosts["storage"], 8, 1e-9) || sp.HiddenCosts["egress"] != 0 {
		t.Errorf("aws hidden %v", sp.HiddenCosts)
	}
	// Monthly: a 4 h job bills one whole month, 1.2 × 730 = 876, not
	// 4 × 1.2 = 4.8. 726 h are left; at 60% other use they are worth
	// 726 × 0.6 × 1.2 = 522.72, shown but not deducted. The month beats
	// on-demand (2.0 per hour) when 1.2 / 2.0 = 60% of it is used. Even the
	// pessimistic 4 / 0.7 + 40 min = 6.4 h fit the one month.
	mo := by[pricewatch.ModeMonthly]
	if mo.PeriodsBilled != 1 || mo.PeriodHours != 730 || !near(mo.PeriodPrice, 876, 1e-9) || !near(mo.ComputeCost, 876, 1e-9) ||
		!near(mo.UnusedHours, 726, 1e-9) || !near(mo.OtherWorkCredit, 522.72, 1e-6) || mo.Utilization != 0.6 ||
		!near(mo.TotalCost, 888.5, 1e-9) || !near(mo.PessimisticTotalCost, 888.5, 1e-9) ||
		mo.BreakEvenUtilization == nil || !near(*mo.BreakEvenUtilization, 0.6, 1e-12) || mo.HiddenCosts["startup"] != 0 {
		t.Errorf("monthly: %+v", mo)
	}
	// A 1-year reservation cannot be left after the job: 8760 × 0.9 = 7884.
	if y := by[pricewatch.ModeReserved1Y]; y.PeriodsBilled != 1 || !near(y.ComputeCost, 7884, 1e-9) || !near(*y.BreakEvenUtilization, 0.45, 1e-12) {
		t.Errorf("reserved-1y: %+v", y)
	}
	// Ranked by what is billed: spot (4 + 12.5 hidden + reclaims), then
	// on-demand 20.5, the month 888.5, the year 7896.5.
	var order []pricewatch.Mode
	for _, o := range res.Options {
		order = append(order, o.Mode)
	}
	if fmt.Sprint(order) != "[spot ondemand monthly reserved-1y]" {
		t.Errorf("order %v", order)
	}
	// 800 h of work (7.2e9 tokens at 2500/s) bills two months: 1752.
	job = resolve(t, rank.JobSpec{Workload: "lora-7b", Tokens: 2500 * 3600 * 800, Modes: []string{"monthly"}, Hidden: hidden})
	res, _ = snap.Plan(job, nil, normalize.DefaultCatalog())
	if len(res.Options) != 1 || res.Options[0].PeriodsBilled != 2 || !near(res.Options[0].ComputeCost, 1752, 1e-9) ||
		!near(res.Options[0].UnusedHours, 660, 1e-9) || res.Options[0].OtherWorkCredit != 0 {
		t.Errorf("800 h on a monthly offer: %+v", res.Options)
	}
}

func TestPlan_ServingCapacityAndOwned(t *testing.T) {
	snap := planSnap(t, perGPU(off("p", "p", "4090", "RTX-4090", pricewatch.ModeOnDemand, 3, "CNY"), 1, 2, 3, 4))
	job := resolve(t, rank.JobSpec{Workload: "serve-7b", PeakTokensPerSecond: 300, HoursPerMonth: 200, Currency: "CNY"})
	owned := []rank.Owned{
		{Name: "lab", Card: "RTX-4090", Count: 2, PurchasePrice: 15000, Currency: "CNY", Months: 24, Watts: 450, KWhPrice: 1, Utilization: 0.5},
		{Name: "dear", Card: "RTX-4090", Count: 1, PurchasePrice: 150000, Currency: "CNY", Months: 24, Watts: 450, KWhPrice: 1, Utilization: 0.5},
	}
	res, err := snap.Plan(job, owned, normalize.DefaultCatalog())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Options) != 3 {
		t.Fatalf("options %+v", res.Options)
	}
	for _, o := range res.Options {
		// Rentals of o.GPUs GPUs (the serving group that serves cheapest).
		want := int(math.Ceil(300*1.2/o.TokensPerSecond)) * o.GPUs
		if o.Serving == nil || o.Serving.GPUsNeeded != want || !near(o.Serving.MonthlyCost, float64(want)*o.PricePerGPUHour*200, 1e-3) {
			t.Errorf("%s serving %+v at %.1f tokens/s", o.Source, o.Serving, o.TokensPerSecond)
		}
		if o.Source != "owned" {
			continue
		}
		// Owned cards pay no start-up, storage or egress.
		if _, ok := o.HiddenCosts["startup"]; ok || o.HiddenCosts["storage"] != 0 || o.HiddenCosts["egress"] != 0 {
			t.Errorf("owned %s hidden costs %v", o.Offer, o.HiddenCosts)
		}
		switch o.Offer {
		case "lab":
			// 15000 / 24 = 625 a month over (3 − 0.45) per rented hour =
			// 245.1 h, within a 730-hour month.
			if o.Mode != rank.ModeOwned || math.Round(o.PricePerGPUHour*100)/100 != 2.16 || o.OwnedBreakEvenMonthlyHours == nil ||
				!near(*o.OwnedBreakEvenMonthlyHours, 625/(3-0.45), 0.05) || o.OwnedBreakEven != "" {
				t.Errorf("owned lab: %+v", o)
			}
		case "dear":
			// 150000 / 24 = 6250 a month / 2.55 = 2451 h: more than a month
			// has, so owning never pays within the write-off period.
			if o.OwnedBreakEvenMonthlyHours != nil || o.OwnedBreakEven != "never" {
				t.Errorf("owned dear: %+v", o)
			}
		}
	}
	// ceil(300 × 1.2 / 120) = 3: the example on its own.
	if n := int(math.Ceil(300 * rank.ServingHeadroom / 120)); n != 3 {
		t.Errorf("headroom rule gives %d", n)
	}
}

// A bf16-required job leaves V100 out; otherwise V100 trains in fp16 and
// the option says so.
func TestPlan_Precision(t *testing.T) {
	snap := planSnap(t, off("p", "p", "v100", "V100-32GB-SXM2", pricewatch.ModeOnDemand, 0.5, "USD"),
		off("p", "p", "a100", "A100-80GB-SXM", pricewatch.ModeOnDemand, 1.5, "USD"))
	res, _ := snap.Plan(resolve(t, rank.JobSpec{Workload: "lora-7b", Tokens: 1e7}), nil, normalize.DefaultCatalog())
	var v *rank.Option
	for i := range res.Options {
		if res.Options[i].Card == "V100-32GB-SXM2" {
			v = &res.Options[i]
		}
	}
	// U 0.363 × 125e12 / (6 × 7e9 + 16 × 32 × 4096 × 2048) = 980.1
	// tokens/s in fp16.
	if v == nil || v.Precision != rank.PrecisionFP16 || !strings.Contains(v.PrecisionNote, "no bf16") || !near(v.TokensPerSecond, 0.363*125e12/46.295e9, 0.05) {
		t.Errorf("V100 option: %+v", v)
	}
	res, _ = snap.Plan(resolve(t, rank.JobSpec{Workload: "lora-7b", Tokens: 1e7, RequireBF16: true}), nil, normalize.DefaultCatalog())
	if len(res.Options) != 1 || res.Options[0].Card != "A100-80GB-SXM" || res.Options[0].Precision != rank.PrecisionBF16 {
		t.Errorf("bf16 required: %+v", res.Options)
	}
}

// Reference prices are never planned.
func TestPlan_ReferenceRowsLeftOut(t *testing.T) {
	ref := off("cny-index", "cny-index", "RTX-4090", "RTX-4090", pricewatch.ModeOnDemand, 0.5, "CNY")
	ref.Kind, ref.RentUnit, ref.GPUCounts, ref.GPUs = pricewatch.KindReference, "", nil, 0
	snap := planSnap(t, ref, off("p", "p", "4090", "RTX-4090", pricewatch.ModeOnDemand, 3, "CNY"))
	res, _ := snap.Plan(resolve(t, rank.JobSpec{Workload: "lora-7b", Tokens: 1e7, IncludeUnfit: true}), nil, normalize.DefaultCatalog())
	if len(res.Options) != 1 || res.Options[0].Source != "p" {
		t.Errorf("options %+v", res.Options)
	}
}

func TestJobSpec_Resolve(t *testing.T) {
	tru := true
	job := resolve(t, rank.JobSpec{Model: &rank.ModelSpec{ParamsB: 7, Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 32, HeadDim: 128},
		Method: "full", Precision: "bf16", OptimizerState: "fp32", SeqLen: 2048, MicroBatch: 1, ActivationCheckpointing: &tru,
		Tokens: 15e6, Modes: []string{"ondemand", "spot", "monthly"}, Utilization: 0.6, MaxGPUs: 8, Currency: "cny"})
	if job.Workload.OptimizerBytes != rank.OptimizerBytesFP32 || job.Currency != "CNY" || len(job.Modes) != 3 || job.FromWorkload != "" {
		t.Errorf("job %+v", job)
	}
	if m := rank.MemoryPerGPU(job.Workload, 1); !near(m.WeightsGiB+m.GradientsGiB+m.OptimizerGiB, 112e9/(1<<30), 1e-9) {
		t.Errorf("fp32 optimizer state: %+v (want 16 bytes/param = 112e9 B = 104.3 GiB)", m)
	}
	job = resolve(t, rank.JobSpec{Workload: "lora-7b", Tokens: 1e6})
	if job.FromWorkload != "lora-7b" {
		t.Errorf("unchanged workload shape must keep its measured profiles: %q", job.FromWorkload)
	}
	job = resolve(t, rank.JobSpec{Workload: "lora-7b", Tokens: 1e6, SeqLen: 4096})
	if job.FromWorkload != "" || job.Workload.SeqLen != 4096 {
		t.Errorf("override: %+v", job)
	}
	job = resolve(t, rank.JobSpec{Model: &rank.ModelSpec{Preset: "llama3-8b"}, Method: "serve", Context: 4096, Concurrency: 4})
	if job.Workload.Model.KVHeads != 8 || job.Context != 4096 || job.Concurrency != 4 {
		t.Errorf("serve preset: %+v", job)
	}
	// The DESIGN.md KV example: 7B, 32 layers, 32 KV heads of 128, 4096
	// tokens, 4 requests: 8.59e9 bytes, 8.0 GiB.
	job = resolve(t, rank.JobSpec{Model: &rank.ModelSpec{Preset: "llama-7b"}, Method: "serve", Context: 4096, Concurrency: 4})
	if m := rank.MemoryPerGPU(job.Workload, 1); !near(m.KVCacheGiB, 8.589934592e9/(1<<30), 1e-9) {
		t.Errorf("KV cache = %.3f GiB, want 8.0", m.KVCacheGiB)
	}

	neg := -1.0
	for _, c := range []struct {
		name  string
		spec  rank.JobSpec
		field string
	}{
		{"NoModel", rank.JobSpec{Tokens: 1}, "model"},
		{"UnknownPreset", rank.JobSpec{Model: &rank.ModelSpec{Preset: "gpt-5"}, Tokens: 1}, "model.preset"},
		{"PresetAndShape", rank.JobSpec{Model: &rank.ModelSpec{Preset: "llama-7b", Layers: 3}, Tokens: 1}, "model"},
		{"NoLayers", rank.JobSpec{Model: &rank.ModelSpec{ParamsB: 7, Hidden: 4096, Heads: 32}, Tokens: 1}, "model.layers"},
		{"KVHeadsAboveHeads", rank.JobSpec{Model: &rank.ModelSpec{ParamsB: 7, Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 64}, Tokens: 1}, "model.kv_heads"},
		{"UnknownWorkload", rank.JobSpec{Workload: "x"}, "workload"},
		{"UnknownMethod", rank.JobSpec{Workload: "lora-7b", Method: "rlhf", Tokens: 1}, "method"},
		{"UnknownPrecision", rank.JobSpec{Workload: "lora-7b", Precision: "fp2", Tokens: 1}, "precision"},
		{"FP4Training", rank.JobSpec{Workload: "lora-7b", Precision: "fp4", Tokens: 1}, "precision"},
		{"EngineForTraining", rank.JobSpec{Workload: "lora-7b", Engine: "vllm", Tokens: 1}, "engine"},
		{"UnknownEngine", rank.JobSpec{Workload: "serve-7b", Engine: "ollama"}, "engine"},
		{"RequestRateForTraining", rank.JobSpec{Workload: "lora-7b", RequestRate: 2, Tokens: 1}, "request_rate"},
		{"NegativeRequestRate", rank.JobSpec{Workload: "serve-7b", RequestRate: -2}, "request_rate"},
		{"QLoRAOn16Bit", rank.JobSpec{Workload: "lora-7b", Method: "qlora", Precision: "bf16", Tokens: 1}, "precision"},
		{"UnknownOptimizer", rank.JobSpec{Workload: "full-ft-7b", OptimizerState: "int8", Tokens: 1}, "optimizer_state"},
		{"TrainingWithoutTokens", rank.JobSpec{Workload: "lora-7b"}, "tokens"},
		{"NegativeTokens", rank.JobSpec{Workload: "lora-7b", Tokens: -5}, "tokens"},
		{"UnknownMode", rank.JobSpec{Workload: "lora-7b", Tokens: 1, Modes: []string{"hourly"}}, "modes"},
		{"Utilization", rank.JobSpec{Workload: "lora-7b", Tokens: 1, Utilization: 1.5}, "utilization"},
		{"MaxGPUs", rank.JobSpec{Workload: "lora-7b", Tokens: 1, MaxGPUs: 1000}, "max_gpus"},
		{"Currency", rank.JobSpec{Workload: "lora-7b", Tokens: 1, Currency: "JPY"}, "currency"},
		{"NegativeHidden", rank.JobSpec{Workload: "lora-7b", Tokens: 1, Hidden: &rank.HiddenSpec{EgressGB: &neg}}, "hidden.egress_gb"},
		{"PeakForTraining", rank.JobSpec{Workload: "lora-7b", Tokens: 1, PeakTokensPerSecond: 10}, "peak_tokens_per_second"},
		{"OutputAboveContext", rank.JobSpec{Workload: "serve-7b", Context: 100, OutputTokens: 200}, "output_tokens"},
		{"Limit", rank.JobSpec{Workload: "lora-7b", Tokens: 1, Limit: 5000}, "limit"},
		// The case (1e300 peak tokens/s planned −9223372036854775808
		// GPUs) and the other numbers no job has.
		{"Peak1e300", rank.JobSpec{Workload: "serve-7b", PeakTokensPerSecond: 1e300}, "peak_tokens_per_second"},
		{"PeakNaN", rank.JobSpec{Workload: "serve-7b", PeakTokensPerSecond: math.NaN()}, "peak_tokens_per_second"},
		{"PeakInf", rank.JobSpec{Workload: "serve-7b", PeakTokensPerSecond: math.Inf(1)}, "peak_tokens_per_second"},
		{"NegativePeak", rank.JobSpec{Workload: "serve-7b", PeakTokensPerSecond: -1}, "peak_tokens_per_second"},
		{"HoursNaN", rank.JobSpec{Workload: "serve-7b", PeakTokensPerSecond: 10, HoursPerMonth: math.NaN()}, "hours_per_month"},
		{"TokensNaN", rank.JobSpec{Workload: "lora-7b", Tokens: math.NaN()}, "tokens"},
		{"TokensInf", rank.JobSpec{Workload: "lora-7b", Tokens: math.Inf(1)}, "tokens"},
		{"HugeContext", rank.JobSpec{Workload: "serve-7b", Context: math.MaxInt64}, "context"},
		{"HugeOutput", rank.JobSpec{Workload: "serve-7b", OutputTokens: math.MaxInt64}, "output_tokens"},
		{"NegativeOutput", rank.JobSpec{Workload: "serve-7b", OutputTokens: -1}, "output_tokens"},
		{"HugeConcurrency", rank.JobSpec{Workload: "serve-7b", Concurrency: math.MaxInt64}, "concurrency"},
		{"NegativeConcurrency", rank.JobSpec{Workload: "serve-7b", Concurrency: -1}, "concurrency"},
		{"HiddenNaN", rank.JobSpec{Workload: "lora-7b", Tokens: 1, Hidden: &rank.HiddenSpec{StorageGB: ptr(math.NaN())}}, "hidden.storage_gb"},
		{"HiddenPriceNaN", rank.JobSpec{Workload: "lora-7b", Tokens: 1, Hidden: &rank.HiddenSpec{EgressPricePerGB: ptr(math.NaN())}}, "hidden.egress_price_gb"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.spec.Resolve(rank.WorkloadByName, normalize.KnownCurrency, "USD")
			if err == nil || !strings.HasPrefix(err.Error(), c.field+":") || pricewatch.ErrorCode(err) != pricewatch.EInvalid {
				t.Errorf("err = %v, want an invalid error naming %q", err, c.field)
			}
		})
	}
}

// Spot, planned: the Young/Daly interval against a hand computation, the
// break-even reclaim rate, and no checkpoints when nothing is reclaimed.
func TestPlan_SpotCheckpoints(t *testing.T) {
	// 60 s to write, 0.1 reclaims an hour: √(2 × (1/60) / 0.1) = √(1/3) =
	// 0.57735 h = 34.64 minutes.
	if got := rank.YoungDalyInterval(1.0/60, 0.1); math.Abs(got/0.57735-1) > 0.01 {
		t.Errorf("interval %.5f h, want 0.57735", got)
	}
	if !math.IsInf(rank.YoungDalyInterval(1.0/60, 0), 1) {
		t.Error("no reclaims, yet an interval")
	}
	// Spot 0.5 against on-demand 1.0, writing in 0.01 h, restarting in
	// 0.1 h: √r = (−√0.02 + √(0.02 + 4 × 0.1 × 1)) / 0.2 = 2.5332, r =
	// 6.417; check: 0.5 × (1 + √(2 × 0.01 × 6.417) + 0.6417) = 1.0.
	r := rank.SpotBreakEvenRate(0.5, 1.0, 0.01, 0.1)
	if math.Abs(r/6.417-1) > 0.001 || math.Abs(0.5*(1+math.Sqrt(2*0.01*r)+r*0.1)-1) > 1e-9 {
		t.Errorf("break-even %.4f", r)
	}
	if rank.SpotBreakEvenRate(1.2, 1.0, 0.01, 0.1) != 0 {
		t.Error("a spot price above on-demand has a break-even rate")
	}
	// No restart time: r = ((1/0.5 − 1) / √0.02)² = 50.
	if r := rank.SpotBreakEvenRate(0.5, 1.0, 0.01, 0); math.Abs(r-50) > 1e-9 {
		t.Errorf("break-even without restarts %.4f, want 50", r)
	}
	// Nothing to write and no restart: a reclaim costs nothing, spot wins
	// at any rate (serving with restart_minutes 0).
	if r := rank.SpotBreakEvenRate(0.5, 1.0, 0, 0); !math.IsInf(r, 1) {
		t.Errorf("break-even without any cost of a reclaim %v, want +Inf", r)
	}

	spot := off("aws-spot", "aws", "s", "A100-80GB-SXM", pricewatch.ModeSpot, 1.0, "USD")
	od := off("aws", "aws", "o", "A100-80GB-SXM", pricewatch.ModeOnDemand, 2.0, "USD")
	snap := planSnap(t, spot, od)
	ck := 120.0
	for _, c := range []struct {
		name string
		rate float64
	}{{"no reclaims", 0}, {"reclaims", 0.05}} {
		rate := c.rate
		job := resolve(t, rank.JobSpec{Workload: "lora-7b", Tokens: 36e6, Modes: []string{"spot", "ondemand"}, CheckpointWriteSeconds: ck,
			Hidden: &rank.HiddenSpec{StartupMinutes: zero(), ReclaimsPerHour: &rate}})
		res, _ := snap.Plan(job, nil, normalize.DefaultCatalog())
		var s *rank.Option
		for i := range res.Options {
			if res.Options[i].Mode == pricewatch.ModeSpot {
				s = &res.Options[i]
			}
		}
		if s == nil || s.Spot == nil {
			t.Fatalf("%s: no spot option: %+v", c.name, res.Options)
		}
		// 36M tokens at 2500 tokens/s = 4 h at 1.0 an hour.
		if rate == 0 {
			if s.Spot.CheckpointIntervalMinutes != 0 || s.Spot.ExpectedRestarts != 0 || s.HiddenCosts["spot_reclaims"] != 0 ||
				s.HiddenCosts["checkpoint_writes"] != 0 || s.ComputeCost != 4 || s.TotalCost != 4+12.5*0 {
				t.Errorf("no reclaims: %+v %v (want price × hours = 4)", s.Spot, s.HiddenCosts)
			}
			continue
		}
		// 120 s = 1/30 h per checkpoint at 0.05 an hour: √(2/30/0.05) =
		// 1.1547 h; 4 / 1.1547 × (1/30) = 0.11547 h writing; 0.2 restarts
		// × (0.57735 + 1/6) = 0.14880 h lost.
		tau := math.Sqrt(2.0 / 30 / 0.05)
		if math.Abs(s.Spot.CheckpointIntervalMinutes/(tau*60)-1) > 0.01 || math.Abs(s.Spot.CheckpointHours-4/tau/30) > 1e-9 ||
			math.Abs(s.Spot.ExpectedLostHours-0.2*(tau/2+1.0/6)) > 1e-9 || s.Spot.ExpectedRestarts != 0.2 {
			t.Errorf("reclaims: %+v", s.Spot)
		}
		// Against on-demand 2.0 (same 1 GPU): restarts of 10 min.
		want := rank.SpotBreakEvenRate(1.0, 2.0, 1.0/30, 10.0/60)
		if s.Spot.BreakEvenReclaimsPerHour == nil || *s.Spot.BreakEvenReclaimsPerHour != want {
			t.Errorf("break-even %v, want %v", s.Spot.BreakEvenReclaimsPerHour, want)
		}
	}
}

// A serving load of 150 output tokens/s all day and 350 for 8 hours, on a
// card doing 100 tokens/s per GPU, committed at 0.55 and on demand at
// 1.00 per GPU-hour. With headroom: 180 base, 420 peak; a month has 730
// h, 243.33 at peak and 486.67 off peak. The on-demand units added for the
// peak start every day (730 / 24 = 30.42 days), each paying the default 15
// minutes of start-up: 0.25 × 1.00 × 30.42 = 7.604 a unit a month.
//
//	all on demand:  2 × 1.00 × 486.67 + 5 × 1.00 × 243.33 + 3 × 7.604 = 2212.8
//	all committed:  5 × 0.55 × 730                                    = 2007.5
//	1 committed:    401.5 + 1 × 486.67 + 4 × 243.33 + 3 × 7.604       = 1884.3
//	2 committed:    803.0 + 0 off peak + 3 × 243.33 + 3 × 7.604       = 1555.8
//	3 committed:    1204.5 + 2 × 243.33 + 2 × 7.604                   = 1706.4
//
// The mix of 2 committed and 3 on demand at peak is cheapest: it saves
// 2007.5 − 1555.8 = 451.7 (22.5%) on the cheaper pure choice.
func TestPlan_ServingFleetMix(t *testing.T) {
	cat := normalize.DefaultCatalog()
	ws := rank.BuiltinWorkloads()
	profiles := append(rank.SeedProfiles(cat, ws), rank.Profile{Card: "L4", Workload: "serve-7b", TokensPerSecond: 100, Origin: rank.OriginMeasured})
	offers := []pricewatch.Offer{
		perGPU(off("p", "p", "m", "L4", pricewatch.ModeMonthly, 0.55, "USD"), 1, 2, 3, 4, 5, 6, 7, 8),
		perGPU(off("p", "p", "o", "L4", pricewatch.ModeOnDemand, 1.00, "USD"), 1, 2, 3, 4, 5, 6, 7, 8),
	}
	snap := rank.Build(offers, profiles, ws, cat, rank.Options{Now: now, Base: "USD",
		Rates: &pricewatch.Rates{Base: "EUR", Rates: map[string]float64{"USD": 1.0163, "CNY": 6.8095}}})
	job := resolve(t, rank.JobSpec{Workload: "serve-7b", PeakTokensPerSecond: 350, BaseTokensPerSecond: 150, PeakHoursPerDay: 8, Card: "L4"})
	if !slices.Contains(job.Modes, pricewatch.ModeMonthly) {
		t.Fatalf("a fleet needs a committed mode: %v", job.Modes)
	}
	res, err := snap.Plan(job, nil, cat)
	if err != nil || len(res.Fleets) != 1 {
		t.Fatalf("fleets %+v, %v", res.Fleets, err)
	}
	f := res.Fleets[0]
	peakH := 8 * 730.0 / 24
	starts := 0.25 * 1.00 * 730 / 24 // one start-up a day per peak unit
	if f.CommittedUnits != 2 || f.OnDemandPeakUnits != 3 || f.OnDemandOffPeakUnits != 0 ||
		!near(f.MonthlyCost, 2*0.55*730+3*peakH+3*starts, 1e-9) || !near(*f.AllOnDemandMonthly, 2*(730-peakH)+5*peakH+3*starts, 1e-9) ||
		!near(*f.AllCommittedMonthly, 5*0.55*730, 1e-9) || !near(f.Saving, 5*0.55*730-(2*0.55*730+3*peakH+3*starts), 1e-9) ||
		math.Round(f.SavingPct*10)/10 != 22.5 || f.Committed.Mode != pricewatch.ModeMonthly || f.OnDemand.Mode != pricewatch.ModeOnDemand {
		t.Errorf("fleet %+v (all on demand %v, all committed %v)", f, *f.AllOnDemandMonthly, *f.AllCommittedMonthly)
	}
	// Bad loads are refused by field.
	for _, c := range []struct {
		spec  rank.JobSpec
		field string
	}{
		{rank.JobSpec{Workload: "serve-7b", BaseTokensPerSecond: 150}, "base_tokens_per_second"},
		{rank.JobSpec{Workload: "serve-7b", PeakTokensPerSecond: 100, BaseTokensPerSecond: 150}, "base_tokens_per_second"},
		{rank.JobSpec{Workload: "serve-7b", PeakTokensPerSecond: 350, BaseTokensPerSecond: 150, PeakHoursPerDay: 25}, "peak_hours_per_day"},
		{rank.JobSpec{Workload: "serve-7b", PeakTokensPerSecond: 350, PeakHoursPerDay: 8}, "peak_hours_per_day"},
	} {
		if _, err := c.spec.Resolve(rank.WorkloadByName, normalize.KnownCurrency, "USD"); err == nil || !strings.HasPrefix(err.Error(), c.field+":") {
			t.Errorf("%+v: %v, want an error naming %s", c.spec, err, c.field)
		}
	}
}

// A deadline plans only what finishes in time, and a per-GPU offer takes
// as many GPUs as that needs. planSnap measures lora-7b on an RTX 4090 at
// 800 tokens/s; over n of them it keeps the link model's scaling, which
// prices the adapter's 70 MB gradient all-reduce over PCIe through the host
// against the estimate's 2048 / 1941.2 = 1.055 s a micro-batch (4 GPUs:
// 25 µs + 1.5 × 70e6 / 8.66e9 = 12.15 ms, 0.2 of it unhidden: 0.99770;
// 5 GPUs: 12.96 ms, 0.99755). 5e8 tokens with 15 minutes of start-up:
//
//	4 GPUs: 5e8 / (4 × 800 × 0.99770 × 3600) = 43.50 h + 0.25 = 43.75 h
//	5 GPUs: 5e8 / (5 × 800 × 0.99755 × 3600) = 34.81 h + 0.25 = 35.06 h
//
// so a 40-hour deadline rents 5 of the per-GPU offer, and the one-GPU
// instance (173.6 h) is left out, saying why.
func TestPlan_Deadline(t *testing.T) {
	cat := normalize.DefaultCatalog()
	per := perGPU(off("rp", "rp", "4090", "RTX-4090", pricewatch.ModeOnDemand, 0.4, "USD"), 1, 2, 3, 4, 5, 6, 7, 8)
	one := fixed(off("v", "v", "1x4090", "RTX-4090", pricewatch.ModeOnDemand, 0.3, "USD"), 1)
	snap := planSnap(t, per, one)
	deadline := rank.Deadline{Hours: 40}
	job := resolve(t, rank.JobSpec{Workload: "lora-7b", Tokens: 5e8, Card: "RTX-4090", Deadline: &deadline, IncludeUnfit: true})
	res, err := snap.Plan(job, nil, cat)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]rank.Option{}
	for _, o := range res.Options {
		by[o.Offer] = o
	}
	// 5e8 tokens at 800 tokens/s per GPU: five GPUs would finish in 35.06 h
	// (34.81 h of work + 0.25 start-up), but at 30% lower throughput in
	// 34.81 / 0.7 + 0.25 = 49.98 h, after the deadline; six in about
	// 29.05 / 0.7 + 0.25 = 41.8 h, still after; seven (scaling 0.9974)
	// work 5e8 / (7 × 800 × 0.9974 × 3600) = 24.87 h, 35.77 h at worst.
	r := by["4090"]
	if !r.Fits || r.GPUs != 7 || !near(r.WallClockHours, 25.12, 0.005) || !near(r.WallClockHours, r.Hours+0.25, 1e-9) || r.DeadlineRisk != "" {
		t.Errorf("per-GPU 4090 by 40 h: %d GPUs, %.2f h of work, %.2f h wall clock", r.GPUs, r.Hours, r.WallClockHours)
	}
	if f := by["1x4090"]; f.Fits || !strings.Contains(f.Reason, "after the deadline (40 h)") {
		t.Errorf("1-GPU instance: fits %v, %q", f.Fits, f.Reason)
	}
	// Without a deadline the per-GPU offer rents the one GPU that fits.
	res, _ = snap.Plan(resolve(t, rank.JobSpec{Workload: "lora-7b", Tokens: 5e8, Card: "RTX-4090"}), nil, cat)
	for _, o := range res.Options {
		if o.Offer == "4090" && (o.GPUs != 1 || !near(o.WallClockHours, 5e8/(800*3600)+0.25, 1e-6)) {
			t.Errorf("no deadline: %d GPUs, %.1f h", o.GPUs, o.WallClockHours)
		}
	}
	// A date counts from the prices' time; one in the past is refused.
	at := rank.Deadline{At: now.Add(40 * time.Hour)}
	res, err = snap.Plan(resolve(t, rank.JobSpec{Workload: "lora-7b", Tokens: 5e8, Card: "RTX-4090", Deadline: &at}), nil, cat)
	if err != nil || res.Job.DeadlineHours != 40 || len(res.Options) != 1 || res.Options[0].GPUs != 7 {
		t.Errorf("deadline as a date: %v %+v", err, res)
	}
	// The one-GPU instance by 200 h: 173.6 h of work + 0.25 makes it at
	// the expected speed, but 173.6 / 0.7 + 0.25 = 248.3 h does not: it
	// fits and says it may miss.
	late := rank.Deadline{Hours: 200}
	res, _ = snap.Plan(resolve(t, rank.JobSpec{Workload: "lora-7b", Tokens: 5e8, Card: "RTX-4090", Deadline: &late, Modes: []string{"ondemand"}}), nil, cat)
	for _, o := range res.Options {
		if o.Offer == "1x4090" && (!o.Fits || !strings.Contains(o.DeadlineRisk, "248.3 h at 30% lower throughput")) {
			t.Errorf("1-GPU instance by 200 h: fits %v, risk %q", o.Fits, o.DeadlineRisk)
		}
	}
	past := rank.Deadline{At: now.Add(-time.Hour)}
	if _, err := snap.Plan(resolve(t, rank.JobSpec{Workload: "lora-7b", Tokens: 5e8, Deadline: &past}), nil, cat); err == nil || !strings.HasPrefix(err.Error(), "deadline:") {
		t.Errorf("a past deadline: %v", err)
	}
	if _, err := (rank.JobSpec{Workload: "serve-7b", Deadline: &deadline}).Resolve(rank.WorkloadByName, normalize.KnownCurrency, "USD"); err == nil || !strings.HasPrefix(err.Error(), "deadline:") {
		t.Errorf("a deadline without tokens: %v", err)
	}
}

// A plan that includes unfit options says why a card cannot run the job's
// format: an FP8 checkpoint in TensorRT-LLM on an A100 (no FP8 there,
// data/formats.csv), with the reason, where a card that runs it is priced.
func TestPlan_UnfitSaysTheFormat(t *testing.T) {
	snap := planSnap(t, off("p", "p", "a", "A100-80GB-SXM", pricewatch.ModeOnDemand, 1.5, "USD"),
		off("p", "p", "h", "H100-80GB-SXM", pricewatch.ModeOnDemand, 2.5, "USD"))
	job := resolve(t, rank.JobSpec{Model: &rank.ModelSpec{Preset: "qwen3-30b-a3b"}, Method: "serve", Precision: "fp8",
		Engine: "tensorrt-llm", IncludeUnfit: true})
	res, err := snap.Plan(job, nil, normalize.DefaultCatalog())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]rank.Option{}
	for _, o := range res.Options {
		got[o.Card] = o
	}
	if a := got["A100-80GB-SXM"]; a.Fits || !strings.Contains(a.Reason, "tensorrt-llm does not run fp8 weights on A100-80GB-SXM") {
		t.Errorf("A100: fits %v, reason %q; want the format and the card", a.Fits, a.Reason)
	}
	if h := got["H100-80GB-SXM"]; !h.Fits || h.Precision != "fp8" {
		t.Errorf("H100: fits %v, precision %q; want a priced fp8 option", h.Fits, h.Precision)
	}
}
