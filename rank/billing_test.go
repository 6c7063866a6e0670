package rank_test

import (
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
)

// Golden invoices, one per billing rule of rank/data/billing.csv: each
// price is the fixture's raw figure, each rule the linked page's, each
// total worked by hand in the comment. Start-up is set to 0 (and storage
// and egress to nothing) where the rule alone is under test.

// invoice plans one job on the given offers and returns the option of the
// named offer.
func invoice(t *testing.T, spec rank.JobSpec, offer string, offers ...pricewatch.Offer) rank.Option {
	t.Helper()
	res, err := planSnap(t, offers...).Plan(resolve(t, spec), nil, normalize.DefaultCatalog())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range res.Options {
		if o.Offer == offer {
			return o
		}
	}
	t.Fatalf("%s not planned: %+v", offer, res.Options)
	return rank.Option{}
}

// bare hides every cost but the compute: no start-up, storage or egress.
func bare() *rank.HiddenSpec {
	return &rank.HiddenSpec{StartupMinutes: zero(), StorageGB: zero(), EgressGB: zero()}
}

// vultrH100 is fixtures/vultr/plans-metal-1.json's vbm-112c-2048gb-8-h100-gpu:
// hourly_cost 23.92 for the 8 GPUs (2.99 each), monthly_cost 16074.24
// (= 672 × 23.92: the plan's cap, 672 h), bandwidth 15360 GB a month.
func vultrH100() pricewatch.Offer {
	o := fixed(off("vultr", "vultr", "vbm-112c-2048gb-8-h100-gpu", "H100-80GB-SXM", pricewatch.ModeOnDemand, 2.99, "USD"), 8)
	o.MonthlyCapHours, o.FreeEgressGBMonth = 16074.24/23.92, 15360
	return o
}

func TestInvoice_VultrWholeHourMinimum(t *testing.T) {
	// docs.vultr.com …/how-am-i-billed-for-my-servers: "The minimum billing
	// unit is one hour". 1M lora-7b tokens on 8 × H100 (5000 tokens/s a
	// GPU) run about 1e6 / (8 × 5000 × 3600) = 0.007 h: billed 1 h × 23.92
	// = 23.92, not 0.007 × 23.92 = 0.17.
	o := invoice(t, rank.JobSpec{Workload: "lora-7b", Tokens: 1e6, Modes: []string{"ondemand"}, Hidden: bare()},
		"vbm-112c-2048gb-8-h100-gpu", vultrH100())
	if o.Hours >= 1 || o.BilledHours != 1 || !near(o.TotalCost, 23.92, 1e-9) || !near(o.HiddenCosts["billing_increments"], 23.92-o.ComputeCost, 1e-9) {
		t.Errorf("1M tokens on Vultr: %.4f h run, %.4f billed, total %.4f, want 1 h, 23.92", o.Hours, o.BilledHours, o.TotalCost)
	}
	// Billing is by the started hour: a run of 5.4 h bills 6 × 23.92 =
	// 143.52 (5.4 × 23.92 = 129.168 is 10% low). The tokens are chosen so
	// the run is 5.4 h at the option's own rate.
	tokens := 5.4 * 3600 * o.TokensPerSecond
	o = invoice(t, rank.JobSpec{Workload: "lora-7b", Tokens: tokens, Modes: []string{"ondemand"}, Hidden: bare()},
		"vbm-112c-2048gb-8-h100-gpu", vultrH100())
	if !near(o.Hours, 5.4, 1e-9) || o.BilledHours != 6 || !near(o.TotalCost, 143.52, 1e-9) {
		t.Errorf("5.4 h on Vultr: %.4f h, %.4f billed, total %.4f, want 6 h, 143.52", o.Hours, o.BilledHours, o.TotalCost)
	}
}

func TestInvoice_VultrMonthlyCap(t *testing.T) {
	// Same page: "All Other Server Types (including … Bare Metal): Billed
	// up to 672 hours per month"; "GPU Instances: Billed up to 730 hours".
	// A bare-metal serving month bills 672 × 23.92 = 16074.24 an instance,
	// the plan's own monthly_cost (730 h would be 17461.60, 8.6% high).
	o := invoice(t, rank.JobSpec{Workload: "serve-7b", PeakTokensPerSecond: 2000, Modes: []string{"ondemand"}, Hidden: bare()},
		"vbm-112c-2048gb-8-h100-gpu", vultrH100())
	if o.Serving == nil || o.Serving.BilledHoursPerMonth != 672 || o.Serving.Instances < 1 ||
		!near(o.Serving.MonthlyCost, float64(o.Serving.Instances)*16074.24, 1e-6) {
		t.Errorf("Vultr bare-metal month: %+v", o.Serving)
	}
	// A Cloud GPU plan (vcg-a16-6c-64g-16vram, hourly 0.471, monthly 344 ≈
	// 730 × 0.471 = 343.83) caps at 730: a 744-hour month bills 730.
	for id, want := range map[string]float64{"vcg-a16-6c-64g-16vram": 730, "vbm-112c-2048gb-8-h100-gpu": 672} {
		if got := rank.BillingRuleFor("vultr", pricewatch.ModeOnDemand, id).MonthHours(744); got != want {
			t.Errorf("%s: a 744 h month bills %v h, want %v", id, got, want)
		}
	}
	// No other provider caps: 744 h bill 744.
	if got := rank.BillingRuleFor("aws", pricewatch.ModeOnDemand, "p5.48xlarge").MonthHours(744); got != 744 {
		t.Errorf("aws caps at %v", got)
	}
}

func TestInvoice_VultrLongRunCapped(t *testing.T) {
	// A run of 1089 h bills its first 730-hour month up to the cap, 672
	// h, then the 359 h left: 1031 h × 23.92 = 24,661.52 (1089 h would be
	// 26,048.88, 5.6% high). The tokens are chosen so the run is 1089 h
	// at the option's own rate.
	probe := invoice(t, rank.JobSpec{Workload: "lora-7b", Tokens: 1e6, Modes: []string{"ondemand"}, Hidden: bare()},
		"vbm-112c-2048gb-8-h100-gpu", vultrH100())
	o := invoice(t, rank.JobSpec{Workload: "lora-7b", Tokens: 1089 * 3600 * probe.TokensPerSecond, Modes: []string{"ondemand"}, Hidden: bare()},
		"vbm-112c-2048gb-8-h100-gpu", vultrH100())
	if !near(o.BilledHours, 1031, 1e-6) || !near(o.TotalCost, 24661.52, 1e-4) {
		t.Errorf("1089 h on Vultr: %.4f h billed, total %.4f, want 1031 h, 24661.52", o.BilledHours, o.TotalCost)
	}
}

func TestInvoice_VultrPlanBandwidth(t *testing.T) {
	// The bandwidth page: 2 TB (read 2000 GB) an account a month, and each
	// server accrues its plan's bandwidth by the hour over a 672-hour
	// month; beyond, 0.01 $/GB. A 100 h run on the H100 plan (15360 GB):
	// free 2000 + 15360 × 100 / 672 = 4285.71 GB; 6000 GB egress bills
	// 1714.29 × 0.01 = 17.1429.
	probe := invoice(t, rank.JobSpec{Workload: "lora-7b", Tokens: 1e6, Modes: []string{"ondemand"}, Hidden: bare()},
		"vbm-112c-2048gb-8-h100-gpu", vultrH100())
	eg := 6000.0
	h := &rank.HiddenSpec{StartupMinutes: zero(), StorageGB: zero(), EgressGB: &eg}
	o := invoice(t, rank.JobSpec{Workload: "lora-7b", Tokens: 100 * 3600 * probe.TokensPerSecond, Modes: []string{"ondemand"}, Hidden: h},
		"vbm-112c-2048gb-8-h100-gpu", vultrH100())
	if !near(o.HiddenCosts["egress"], (6000-2000-15360*100.0/672)*0.01, 1e-9) || !near(o.HiddenCosts["egress"], 17.1429, 1e-4) {
		t.Errorf("Vultr egress %v, want 17.1429", o.HiddenCosts["egress"])
	}
}

func TestInvoice_ServingMonthHasStorageAndEgress(t *testing.T) {
	// A serving month ranks by its monthly cost, so the month's storage
	// and egress are in it: 500 GB egress on Azure, 100 free, 400 ×
	// 0.087 = 34.80; 100 GB kept 30 days at Azure's 0.08 = 8.00.
	st, sd, eg := 100.0, 30.0, 500.0
	h := &rank.HiddenSpec{StorageGB: &st, StorageDays: &sd, EgressGB: &eg}
	nd := fixed(off("azure", "azure", "Standard_ND96isr_H100_v5", "H100-80GB-SXM", pricewatch.ModeOnDemand, 12.29, "USD"), 8)
	o := invoice(t, rank.JobSpec{Workload: "serve-7b", PeakTokensPerSecond: 2000, Modes: []string{"ondemand"}, Hidden: h}, "Standard_ND96isr_H100_v5", nd)
	if o.Serving == nil || !near(o.HiddenCosts["egress"], 34.8, 1e-9) || !near(o.HiddenCosts["storage"], 8, 1e-9) ||
		!near(o.Serving.MonthlyCost, float64(o.Serving.Instances)*98.32*730+34.8+8, 1e-6) {
		t.Errorf("Azure serving month: hidden %v serving %+v", o.HiddenCosts, o.Serving)
	}
}

func TestInvoice_AWSMinuteMinimum(t *testing.T) {
	// fixtures/aws/us-east-1.csv: p5.48xlarge on-demand 55.0400000000 USD
	// an hour (6.88 a GPU). The AWS per-second billing announcement: "one
	// second increments, with a minimum of 60 seconds"; StartInstances:
	// "Every time you start your instance, Amazon EC2 charges a one-minute
	// minimum". 1M tokens on 8 × H100 run 1e6 / (8 × 5000 × 3600) h ≈ 25 s:
	// billed 60 s = 55.04 / 60 = 0.91733.
	p5 := fixed(off("aws", "aws", "p5.48xlarge", "H100-80GB-SXM", pricewatch.ModeOnDemand, 6.88, "USD"), 8)
	o := invoice(t, rank.JobSpec{Workload: "lora-7b", Tokens: 1e6, Modes: []string{"ondemand"}, Hidden: bare()}, "p5.48xlarge", p5)
	if o.Hours*3600 >= 60 || !near(o.BilledHours, 1.0/60, 1e-12) || !near(o.TotalCost, 55.04/60, 1e-9) {
		t.Errorf("p5 short job: %.1f s run, %.5f h billed, total %.5f, want 60 s, 0.91733", o.Hours*3600, o.BilledHours, o.TotalCost)
	}
	// Past the minimum, by the started second: a run of 1000.2 s bills
	// 1001 s = 55.04 × 1001 / 3600 = 55095.04 / 3600 = 15.30418.
	tokens := 1000.2 * o.TokensPerSecond
	o = invoice(t, rank.JobSpec{Workload: "lora-7b", Tokens: tokens, Modes: []string{"ondemand"}, Hidden: bare()}, "p5.48xlarge", p5)
	if !near(o.BilledHours*3600, 1001, 1e-6) || !near(o.TotalCost, 15.30418, 1e-5) {
		t.Errorf("p5 1000.2 s: %.4f s billed, total %.5f, want 1001 s, 15.30418", o.BilledHours*3600, o.TotalCost)
	}
}

func TestInvoice_FreeEgress(t *testing.T) {
	// AWS: 100 GB of internet egress free a month (billing.csv, secondary
	// source), then 0.09 USD/GB (providers.csv). 150 GB: 50 × 0.09 = 4.50.
	// Azure: 100 GB free, then 0.087: 150 GB → 4.35. RunPod charges no
	// egress at all: 0. A provider with no allowance ("p", the fallback
	// 0.05/GB): 150 × 0.05 = 7.50.
	eg := 150.0
	h := &rank.HiddenSpec{StartupMinutes: zero(), StorageGB: zero(), EgressGB: &eg}
	for provider, want := range map[string]float64{"aws": 4.5, "azure": 4.35, "runpod": 0, "p": 7.5} {
		o := invoice(t, rank.JobSpec{Workload: "lora-7b", Tokens: 36e6, Modes: []string{"ondemand"}, Hidden: h}, "x",
			off(provider, provider, "x", "A100-80GB-SXM", pricewatch.ModeOnDemand, 2.0, "USD"))
		if !near(o.HiddenCosts["egress"], want, 1e-9) {
			t.Errorf("%s: egress %v, want %v", provider, o.HiddenCosts["egress"], want)
		}
	}
	// The allowance is monthly: a job running 1000 h (two months) gets
	// two, 200 GB; 250 GB egress on AWS bills 50 × 0.09 = 4.50.
	eg2 := 250.0
	h2 := &rank.HiddenSpec{StartupMinutes: zero(), StorageGB: zero(), EgressGB: &eg2}
	o := invoice(t, rank.JobSpec{Workload: "lora-7b", Tokens: 2500 * 3600 * 1000, Modes: []string{"ondemand"}, Hidden: h2}, "x",
		off("aws", "aws", "x", "A100-80GB-SXM", pricewatch.ModeOnDemand, 2.0, "USD"))
	if !near(o.HiddenCosts["egress"], 4.5, 1e-9) {
		t.Errorf("two months on aws: egress %v, want 4.5", o.HiddenCosts["egress"])
	}
}

func TestInvoice_OffersOwnStorageAndEgress(t *testing.T) {
	// fixtures/vast/bundles.json id 13489095 (RTX 4090 × 1): storage_cost
	// 0.2 $/GB per 30-day month, inet_up_cost 0.00390625 $/GB, dph_total
	// 0.16805555555555554. 200 GB for 7 days: 200 × 7 / 30 × 0.2 = 9.3333
	// (Vast's default 0.15 would give 7.00); 50 GB egress × 0.00390625 =
	// 0.1953125 (the default 0 would give nothing).
	st, sd, eg := 200.0, 7.0, 50.0
	h := &rank.HiddenSpec{StartupMinutes: zero(), StorageGB: &st, StorageDays: &sd, EgressGB: &eg}
	o := off("vast", "vast", "13489095", "RTX-4090", pricewatch.ModeOnDemand, 0.16805555555555554, "USD")
	o.StoragePerGBMonth, o.EgressPerGB = 0.2, 0.00390625
	opt := invoice(t, rank.JobSpec{Workload: "lora-7b", Tokens: 8e6, Modes: []string{"ondemand"}, Hidden: h}, "13489095", o)
	if !near(opt.HiddenCosts["storage"], 200*7.0/30*0.2, 1e-9) || !near(opt.HiddenCosts["egress"], 0.1953125, 1e-12) {
		t.Errorf("vast own prices: %v", opt.HiddenCosts)
	}
	// A spec's own price still wins: 0.05 $/GB-month → 200 × 7 / 30 ×
	// 0.05 = 2.3333.
	p := 0.05
	h.StoragePricePerGBMonth = &p
	opt = invoice(t, rank.JobSpec{Workload: "lora-7b", Tokens: 8e6, Modes: []string{"ondemand"}, Hidden: h}, "13489095", o)
	if !near(opt.HiddenCosts["storage"], 200*7.0/30*0.05, 1e-9) {
		t.Errorf("spec price: storage %v", opt.HiddenCosts["storage"])
	}
}

func TestOwned_BoundsKeepPlansFinite(t *testing.T) {
	// The audit's probe: a purchase written off over 1e-200 months at
	// 1e-200 utilization is +Inf per used hour; the spec is refused.
	known := func(string) bool { return true }
	tiny := rank.Owned{Card: "RTX-4090", Count: 1, PurchasePrice: 15000, Currency: "CNY", Months: 1e-200, Utilization: 1e-200}
	if err := tiny.Validate("owned[0]", known, known); err == nil || !strings.Contains(err.Error(), "owned[0].months") {
		t.Errorf("1e-200 months: %v", err)
	}
	tiny.Months = 24
	if err := tiny.Validate("owned[0]", known, known); err == nil || !strings.Contains(err.Error(), "owned[0].utilization") {
		t.Errorf("1e-200 utilization: %v", err)
	}
}

func TestBillingRule_Bill(t *testing.T) {
	for _, c := range []struct {
		rule rank.BillingRule
		h    float64
		want float64
	}{
		{rank.BillingRule{IncrementSeconds: 1, MinimumSeconds: 60}, 10.0 / 3600, 60.0 / 3600},
		{rank.BillingRule{IncrementSeconds: 1, MinimumSeconds: 60}, 100.5 / 3600, 101.0 / 3600},
		{rank.BillingRule{IncrementSeconds: 3600, MinimumSeconds: 3600}, 0.01, 1},
		{rank.BillingRule{IncrementSeconds: 3600, MinimumSeconds: 3600}, 1, 1},
		{rank.BillingRule{IncrementSeconds: 3600, MinimumSeconds: 3600}, 1.0001, 2},
		{rank.BillingRule{IncrementSeconds: 60, RoundDown: true}, 6.75 / 60, 0.1},
		{rank.BillingRule{IncrementSeconds: 60}, 6.75 / 60, 7.0 / 60},
		{rank.BillingRule{IncrementSeconds: 60}, 0, 0},
	} {
		if got := c.rule.Bill(c.h); !near(got, c.want, 1e-12) {
			t.Errorf("%+v.Bill(%v) = %v, want %v", c.rule, c.h, got, c.want)
		}
	}
}

func TestBillingRules_EveryRowHasItsBasis(t *testing.T) {
	// Every provider the scrapers name resolves every term, and each term
	// says its basis; a stated or secondary term links its page.
	for _, p := range []string{"aws", "aws-china", "azure", "gcp", "runpod", "vast", "lambda", "alibaba", "coreweave", "vultr",
		"autodl", "matpool", "gpushare", "jarvislabs", "tensordock", "verda", "nebius", "cudo", "oracle", "digitalocean",
		"linode", "seeweb"} {
		r := rank.BillingRuleFor(p, pricewatch.ModeOnDemand, "")
		if r.IncrementSeconds <= 0 {
			t.Errorf("%s: increment %v", p, r.IncrementSeconds)
		}
		for term, basis := range r.Terms {
			switch {
			case strings.HasPrefix(basis, rank.BasisDefault):
			case (strings.HasPrefix(basis, rank.BasisStated+" ") || strings.HasPrefix(basis, rank.BasisSecondary+" ")) && strings.Contains(basis, "https://"):
			default:
				t.Errorf("%s %s: basis %q", p, term, basis)
			}
		}
	}
}
