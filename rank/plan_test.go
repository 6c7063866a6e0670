package rank_test

import (
	"math"
	"strings"
	"testing"

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

func TestScalingEfficiency_Table(t *testing.T) {
	for _, c := range []struct {
		class string
		n     int
		want  float64
	}{
		{pricewatch.InterconnectPCIe, 1, 1}, {pricewatch.InterconnectPCIe, 4, 0.7}, {pricewatch.InterconnectPCIe, 8, 0.57},
		{pricewatch.InterconnectPCIe, 6, 0.635}, {pricewatch.InterconnectPCIe, 16, 0.57}, {pricewatch.InterconnectSXM, 8, 0.9},
	} {
		if got := rank.ScalingEfficiency(c.class, c.n); !near(got, c.want, 1e-9) {
			t.Errorf("%s %d: %v, want %v", c.class, c.n, got, c.want)
		}
	}
	// DESIGN.md: 8 PCIe GPUs give 1.63× the throughput of 4 for 2× the price.
	ratio := 8 * rank.ScalingEfficiency(pricewatch.InterconnectPCIe, 8) / (4 * rank.ScalingEfficiency(pricewatch.InterconnectPCIe, 4))
	if math.Round(ratio*100)/100 != 1.63 {
		t.Errorf("8 vs 4 PCIe GPUs = %.3f×, want 1.63×", ratio)
	}
}

func TestReclaimsPerHour_Bands(t *testing.T) {
	for band, want := range map[string]float64{"<5%": 0.025 / 730, "5-10%": 0.075 / 730, "10-15%": 0.125 / 730, ">20%": 0.25 / 730} {
		if got, ok := rank.ReclaimsPerHour(band); !ok || !near(got, want, 1e-12) {
			t.Errorf("%s: %v %v", band, got, ok)
		}
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

func TestPlan_GPUCountAndFit(t *testing.T) {
	snap := planSnap(t,
		off("p", "p", "4090", "RTX-4090", pricewatch.ModeOnDemand, 0.4, "USD"),
		off("p", "p", "a100", "A100-80GB-SXM", pricewatch.ModeOnDemand, 1.5, "USD"),
	)
	for i := range snap.Offers {
		snap.Offers[i].GPUs = 8
	}
	job := resolve(t, rank.JobSpec{Workload: "full-ft-7b", Tokens: 1e8, IncludeUnfit: true})
	res, err := snap.Plan(job, nil, normalize.DefaultCatalog())
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Memory; m.WeightsGB != 14 || m.GradientsGB != 14 || m.OptimizerGB != 28 {
		t.Errorf("memory %+v, want 14 + 14 + 28 GB", m)
	}
	got := map[string]rank.Option{}
	for _, o := range res.Options {
		got[o.Card] = o
	}
	if a := got["A100-80GB-SXM"]; a.GPUs != 1 || !a.Fits {
		t.Errorf("an 80 GB card holds a 7B full fine-tune alone: %+v", a)
	}
	// 56 GB of state sharded: 3 × 24 GB cards are not enough at 80%, 4 are.
	if r := got["RTX-4090"]; r.GPUs != 4 || !r.Fits || r.ScalingEfficiency != 0.7 || !near(r.TokensPerSecond, 4*0.7*r.TokensPerSecondPerGPU, 0.02) {
		t.Errorf("RTX-4090: %+v", r)
	}
	// With at most 2 GPUs the 4090 cannot hold it: listed last with a reason.
	job = resolve(t, rank.JobSpec{Workload: "full-ft-7b", Tokens: 1e8, MaxGPUs: 2, IncludeUnfit: true})
	res, _ = snap.Plan(job, nil, normalize.DefaultCatalog())
	last := res.Options[len(res.Options)-1]
	if last.Card != "RTX-4090" || last.Fits || !strings.Contains(last.Reason, "GB per GPU") {
		t.Errorf("unfit option: %+v", last)
	}
	job.IncludeUnfit = false
	res, _ = snap.Plan(job, nil, normalize.DefaultCatalog())
	for _, o := range res.Options {
		if !o.Fits {
			t.Errorf("unfit option listed without include_unfit: %s", o.Card)
		}
	}
}

func TestPlan_HiddenCostsPeriodAndPessimism(t *testing.T) {
	spot := off("aws-spot", "aws", "g5", "A100-80GB-SXM", pricewatch.ModeSpot, 1.0, "USD")
	spot.ReclaimRisk = ">20%"
	monthly := off("p", "p", "m", "A100-80GB-SXM", pricewatch.ModeMonthly, 1.2, "USD")
	ondemand := off("p", "p", "o", "A100-80GB-SXM", pricewatch.ModeOnDemand, 2.0, "USD")
	snap := planSnap(t, spot, monthly, ondemand)
	ck, rs, st, sd, eg := 30.0, 10.0, 100.0, 30.0, 50.0
	job := resolve(t, rank.JobSpec{Workload: "lora-7b", Tokens: 36e6, Modes: []string{"ondemand", "spot", "monthly"}, Utilization: 0.6,
		Hidden: &rank.HiddenSpec{StartupMinutes: zero(), CheckpointMinutes: &ck, RestartMinutes: &rs, StorageGB: &st, StorageDays: &sd, EgressGB: &eg}})
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
	if od.Hours != 4 || od.ComputeCost != 8 {
		t.Errorf("on-demand: %.3f h, %.3f compute", od.Hours, od.ComputeCost)
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
	// Spot: ">20%" → 25% a month; lost = rate × 4 h × (15 + 10) min.
	sp := by[pricewatch.ModeSpot]
	rate := 0.25 / 730
	if !near(sp.ReclaimsPerHour, rate, 1e-9) || !near(sp.HiddenCosts["spot_reclaims"], rate*4*25.0/60*1.0, 1e-6) {
		t.Errorf("spot: rate %v loss %v", sp.ReclaimsPerHour, sp.HiddenCosts["spot_reclaims"])
	}
	// AWS storage and egress defaults: 0.08/GB-month, 0.09/GB.
	if !near(sp.HiddenCosts["storage"], 8, 1e-9) || !near(sp.HiddenCosts["egress"], 4.5, 1e-9) {
		t.Errorf("aws hidden %v", sp.HiddenCosts)
	}
	// Monthly at 60% use: 1.2 / 0.6 = 2.0 per used hour; on-demand at 2.0,
	// so on-demand is cheaper below 60% use.
	mo := by[pricewatch.ModeMonthly]
	if mo.PricePerGPUHour != 2.0 || mo.Utilization != 0.6 || mo.BreakEvenUtilization == nil || *mo.BreakEvenUtilization != 0.6 {
		t.Errorf("monthly: %+v", mo)
	}
}

func TestPlan_ServingCapacityAndOwned(t *testing.T) {
	snap := planSnap(t, off("p", "p", "4090", "RTX-4090", pricewatch.ModeOnDemand, 3, "CNY"))
	job := resolve(t, rank.JobSpec{Workload: "serve-7b", PeakTokensPerSecond: 300, HoursPerMonth: 200, Currency: "CNY"})
	owned := []rank.Owned{{Name: "lab", Card: "RTX-4090", Count: 2, PurchasePrice: 15000, Currency: "CNY", Months: 24, Watts: 450, KWhPrice: 1, Utilization: 0.5}}
	res, err := snap.Plan(job, owned, normalize.DefaultCatalog())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Options) != 2 {
		t.Fatalf("options %+v", res.Options)
	}
	for _, o := range res.Options {
		want := int(math.Ceil(300 * 1.2 / o.TokensPerSecond))
		if o.Serving == nil || o.Serving.GPUsNeeded != want || !near(o.Serving.MonthlyCost, float64(want)*o.PricePerGPUHour*200, 1e-3) {
			t.Errorf("%s serving %+v at %.1f tokens/s", o.Source, o.Serving, o.TokensPerSecond)
		}
		if o.Source == "owned" {
			if o.Mode != rank.ModeOwned || math.Round(o.PricePerGPUHour*100)/100 != 2.16 || o.OwnedBreakEvenMonthlyHours == nil ||
				!near(*o.OwnedBreakEvenMonthlyHours, 625/(3-0.45), 0.05) {
				t.Errorf("owned: %+v", o)
			}
		}
	}
	// ceil(300 × 1.2 / 120) = 3: the example on its own.
	if n := int(math.Ceil(300 * rank.ServingHeadroom / 120)); n != 3 {
		t.Errorf("headroom rule gives %d", n)
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
	if m := rank.MemoryPerGPU(job.Workload, 1); !near(m.WeightsGB+m.GradientsGB+m.OptimizerGB, 112, 1e-9) {
		t.Errorf("fp32 optimizer state: %+v (want 16 bytes/param = 112 GB)", m)
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
	// The DESIGN.md KV example: 7B, 32 layers, 32 KV heads of 128, 4096 tokens, 4 requests.
	job = resolve(t, rank.JobSpec{Model: &rank.ModelSpec{Preset: "llama-7b"}, Method: "serve", Context: 4096, Concurrency: 4})
	if m := rank.MemoryPerGPU(job.Workload, 1); math.Round(m.KVCacheGB*10)/10 != 8.6 {
		t.Errorf("KV cache = %.2f GB, want 8.6", m.KVCacheGB)
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
		{"UnknownPrecision", rank.JobSpec{Workload: "lora-7b", Precision: "fp4", Tokens: 1}, "precision"},
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
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.spec.Resolve(rank.WorkloadByName, normalize.KnownCurrency, "USD")
			if err == nil || !strings.HasPrefix(err.Error(), c.field+":") || pricewatch.ErrorCode(err) != pricewatch.EInvalid {
				t.Errorf("err = %v, want an invalid error naming %q", err, c.field)
			}
		})
	}
}
