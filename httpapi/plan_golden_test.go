package httpapi_test

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
	"github.com/pricewatch/pricewatch/rank"
)

// Golden plans over testdata/plans (see its PROVENANCE.md), scraped by the
// real vast, runpod, cny-index and ecb scrapers from a loopback server.
// Throughput is the estimate (no measured or published row applies): the
// fitted U of the card's class × its 16-bit peak over the FLOPs of a token,
// 6N (LoRA) or 8N (full) with checkpointing plus attention's
// 16 × 32 × 4096 × 2048 = 4.295e9 (46.295e9 and 60.295e9 in all):
//
//	lora-7b on H100-80GB-SXM: 0.480 × 989e12 / 46.295e9   = 10,254.2 tokens/s per GPU
//	full-ft-7b on RTX-4090:   0.544 × 165.2e12 / 60.295e9 = 1,490.5
//	lora-7b on RTX-4090:      0.544 × 165.2e12 / 46.295e9 = 1,941.2
//	lora-7b on V100-32GB-SXM2 (fp16, no bf16): 0.363 × 125e12 / 46.295e9 = 980.1
//
// Several GPUs keep what the link model leaves (rank.TrainingScaling, at
// link efficiency 0.55 and overlap 0.80):
//
//	lora-7b, 8 × H100: 70 MB of adapter gradients all-reduced over NVLink
//	  (8 µs + 1.75 × 70e6 / 247.5e9 = 0.50 ms) against 2048 / 10,254.2 =
//	  199.7 ms of compute: 0.9995
//	lora-7b, 2 × 4090: 25 µs + 70e6 / 8.66e9 = 8.1 ms over PCIe through the
//	  host against 1,055 ms: 0.9985
//	full-ft-7b, 3 × 4090 (FSDP): 3 × 2/3 × 14e9 / 8.66e9 = 3.232 s of gathers
//	  and scatters per micro-batch against 1.374 s of compute:
//	  1.374 / (3.232 + 0.2 × 1.374) = 0.3918
//
// Start-up is the default 15 minutes on every GPU rented; no storage or
// egress is asked for.

const (
	h100Lora  = 0.480 * 989e12 / 46.295e9
	r4090Full = 0.544 * 165.2e12 / 60.295e9
	r4090Lora = 0.544 * 165.2e12 / 46.295e9
	v100Lora  = 0.363 * 125e12 / 46.295e9
	h100x8    = 0.9995
	r4090x2   = 0.9985
	r4090x3   = 0.3918
)

// scalingOf is the link model's scaling of a built-in workload on n
// GPUs of a card, checked against the hand figure above.
func scalingOf(t *testing.T, workload, card string, n int, want float64) float64 {
	t.Helper()
	w, _ := rank.WorkloadByName(workload)
	c, _ := normalize.DefaultCatalog().Card(card)
	got := rank.TrainingScaling(w, c, n)
	if math.Abs(got-want) > 1e-4 {
		t.Fatalf("%s on %d × %s keeps %.4f, worked by hand as %.4f", workload, n, card, got, want)
	}
	return got
}

func planEnv(t *testing.T) *harness {
	t.Helper()
	h := fixtures.Handler(os.DirFS("testdata/plans"))
	env := pipelinetest.New(t, h, func(c *config.Config) {
		for name, s := range c.Sources {
			s.Settings.Enabled = slices.Contains([]string{"vast", "runpod", "cny-index", "ecb"}, name)
			c.Sources[name] = s
		}
		c.Owned = []rank.Owned{
			{Name: "lab", Card: "RTX-4090", Count: 2, PurchasePrice: 15000, Currency: "CNY", Months: 24, Watts: 450, KWhPrice: 1, Utilization: 0.5},
			{Name: "dear", Card: "RTX-4090", Count: 1, PurchasePrice: 150000, Currency: "CNY", Months: 24, Watts: 450, KWhPrice: 1, Utilization: 0.5},
		}
	})
	for _, s := range env.Round(t) {
		if s.Err != nil {
			t.Fatalf("%s: %v", s.Source, s.Err)
		}
	}
	return newHarnessOn(t, env)
}

func postPlan(t *testing.T, h *harness, spec string) rank.PlanResult {
	t.Helper()
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/plan", bytes.NewBufferString(spec)))
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: %d %s", spec, rec.Code, rec.Body)
	}
	var res rank.PlanResult
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func optionBy(res rank.PlanResult, offer string) *rank.Option {
	for i := range res.Options {
		if res.Options[i].Offer == offer {
			return &res.Options[i]
		}
	}
	return nil
}

func close(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

// seconds bills h hours as Vast and RunPod do, by the started second
// (rank/data/billing.csv; docs.vast.ai/guides/instances/pricing,
// docs.runpod.io/pods/pricing).
func seconds(h float64) float64 { return math.Ceil(h*3600-1e-6) / 3600 }

func TestGoldenPlan_FixedUnitsAndPerGPU(t *testing.T) {
	h := planEnv(t)
	res := postPlan(t, h, `{"workload": "lora-7b", "tokens": 15e6, "card": "H100-80GB-SXM", "modes": ["ondemand"]}`)
	// The 8-GPU Vast instance bills 8 GPUs: it runs the job on all 8:
	// 8 × 10,254.2 × 0.9995 = 81,993 tokens/s; 15e6 / (81,993 × 3600) =
	// 0.05082 h × 20.00 per hour = 1.0163; start-up 0.25 h × 20.00 = 5.00;
	// Vast bills by the second: 0.30082 h run = 1082.9 s, billed 1083 s =
	// 0.300833 h × 20.00 = 6.0167 in all. Pessimistic: 1.0163 / 0.7 + 40 min
	// × 20.00 + 5.00 = 19.785, plus the same part second, 0.0003.
	o := optionBy(res, "90000008")
	hours8 := 15e6 / (8 * h100Lora * scalingOf(t, "lora-7b", "H100-80GB-SXM", 8, h100x8) * 3600)
	if o == nil || o.GPUs != 8 || o.GPUsUsed != 8 || o.RentUnit != pricewatch.RentFixed || !close(o.UnitPricePerHour, 20) ||
		!close(o.Hours, hours8) || !close(o.ComputeCost, hours8*20) || !close(o.HiddenCosts["startup"], 5) ||
		!close(o.TotalCost, seconds(hours8+0.25)*20) || !close(o.BilledHours, seconds(hours8+0.25)) ||
		!close(o.PessimisticTotalCost, hours8*20/0.7+40.0/60*20+5+(seconds(hours8+0.25)-hours8-0.25)*20) {
		t.Errorf("8 × H100 on vast: %+v", o)
	}
	// One GPU: 15e6 / (10,254.2 × 3600) = 0.40634 h, + 0.25 h start-up =
	// 2362.8 s, billed 2363 s = 0.656389 h. Vast 1 × 2.60: 1.7066. RunPod
	// per GPU at 3.00 rents one: 1.9692.
	hours1 := 15e6 / (h100Lora * 3600)
	for offer, price := range map[string]float64{"90000001": 2.6, "NVIDIA H100 80GB HBM3/secure": 3.0} {
		o := optionBy(res, offer)
		if o == nil || o.GPUs != 1 || !close(o.Hours, hours1) || !close(o.TotalCost, seconds(hours1+0.25)*price) {
			t.Errorf("%s: %+v", offer, o)
		}
	}
	if len(res.Options) != 3 || res.Options[0].Offer != "90000001" || res.Options[2].Offer != "90000008" {
		t.Errorf("order: %+v", res.Options)
	}
	// A per-GPU source bills exactly the GPUs used: full-ft-7b on 24 GiB
	// cards needs 3 (52.9 GiB of state and activations: 3 × 17.4 + 0.8
	// within 19.2 GiB usable each). RunPod community 0.40: 3 × 1,490.5 ×
	// 0.3918 = 1,751.9 tokens/s; 1e8 / (1,751.9 × 3600) = 15.856 h × 1.20
	// per hour = 19.027; start-up 0.25 × 1.20 = 0.30; 16.1065 h billed by
	// the second, 16.10667 h: total 19.328. The 2-GPU Vast bundle cannot
	// hold it and cannot be added to.
	res = postPlan(t, h, `{"workload": "full-ft-7b", "tokens": 1e8, "card": "RTX-4090", "modes": ["ondemand"]}`)
	o = optionBy(res, "NVIDIA GeForce RTX 4090/community")
	hours3 := 1e8 / (3 * r4090Full * scalingOf(t, "full-ft-7b", "RTX-4090", 3, r4090x3) * 3600)
	if o == nil || o.GPUs != 3 || o.GPUsUsed != 3 || o.RentUnit != pricewatch.RentPerGPU || !close(o.ComputeCost, hours3*1.2) ||
		!close(o.TotalCost, seconds(hours3+0.25)*1.2) || !close(o.MemoryTotalGiB, 3*o.MemoryPerGPUGiB) {
		t.Errorf("full-ft-7b on runpod 4090: %+v", o)
	}
	if optionBy(res, "90000002") != nil || len(res.Options) != 2 {
		t.Errorf("options: %+v", res.Options)
	}
}

func TestGoldenPlan_MonthlyBillsWholeMonths(t *testing.T) {
	h := planEnv(t)
	// 88e6 tokens at 10,254.2 tokens/s: 2.3838 h of work, 2.6338 h billed
	// with start-up: one month of 730 h at 2.00 = 1460, 727.37 h unused.
	// The cheapest on-demand H100 renting one GPU is Vast's 2.60: the month
	// beats it when 2.00 / 2.60 = 76.9% of it is used.
	res := postPlan(t, h, `{"workload": "lora-7b", "tokens": 88e6, "card": "H100-80GB-SXM", "modes": ["monthly"], "utilization": 0.5}`)
	if len(res.Options) != 1 {
		t.Fatalf("options: %+v", res.Options)
	}
	o := res.Options[0]
	work := 88e6 / (h100Lora * 3600)
	if o.Mode != pricewatch.ModeMonthly || o.PeriodsBilled != 1 || !close(o.ComputeCost, 1460) || !close(o.TotalCost, 1460) ||
		!close(o.UnusedHours, 730-work-0.25) || o.BreakEvenUtilization == nil || !close(*o.BreakEvenUtilization, 2.0/2.6) ||
		!close(o.OtherWorkCredit, (730-work-0.25)*0.5*2.0) || o.HiddenCosts["startup"] != 0 {
		t.Errorf("monthly: %+v", o)
	}
	// 800 h of work (800 × 3600 × 10,254.2 tokens) bills two months: 2920.
	res = postPlan(t, h, `{"workload": "lora-7b", "tokens": 2.953e10, "card": "H100-80GB-SXM", "modes": ["monthly"]}`)
	if len(res.Options) != 1 || res.Options[0].PeriodsBilled != 2 || !close(res.Options[0].ComputeCost, 2920) {
		t.Errorf("800 h: %+v", res.Options)
	}
}

func TestGoldenPlan_ReferencesPrecisionOwned(t *testing.T) {
	h := planEnv(t)
	// The CNY index row for RTX 4090 is a reference: in no plan, in no
	// /v1/best entry, only beside the card.
	res := postPlan(t, h, `{"workload": "lora-7b", "tokens": 1e7, "currency": "CNY", "limit": 1000, "include_unfit": true}`)
	for _, o := range res.Options {
		if o.Source == "cny-index" {
			t.Errorf("reference planned: %+v", o)
		}
	}
	code, body := h.get(t, "/v1/best?workload=lora-7b&currency=CNY")
	best := decode[httpapi.BestResponse](t, body)
	var c4090 *httpapi.BestCard
	for i, c := range best.Cards {
		if c.Source == "cny-index" {
			t.Errorf("reference ranked: %+v", c.Entry)
		}
		if c.Card == "RTX-4090" {
			c4090 = &best.Cards[i]
		}
	}
	if code != 200 || c4090 == nil || len(c4090.Reference) != 1 || c4090.Reference[0].OfferPrice != 1.24 || c4090.Reference[0].PricePerGPUHour != 1.24 {
		t.Errorf("RTX-4090 reference: %+v", c4090)
	}
	// V100 has no bf16: it trains in fp16 at 980.1 tokens/s and says so;
	// a job that requires bf16 leaves it out.
	v := optionBy(res, "Tesla V100-SXM2-32GB/community")
	if v == nil || v.Precision != rank.PrecisionFP16 || v.PrecisionNote == "" || !close(v.TokensPerSecondPerGPU, v100Lora) {
		t.Errorf("V100: %+v", v)
	}
	res = postPlan(t, h, `{"workload": "lora-7b", "tokens": 1e7, "currency": "CNY", "limit": 1000, "require_bf16": true}`)
	if optionBy(res, "Tesla V100-SXM2-32GB/community") != nil || len(res.Options) == 0 {
		t.Errorf("bf16 required: %+v", res.Options)
	}
	// Owned: 15000 CNY / 24 months = 625 a month. The cheapest hourly
	// rental of an RTX-4090 is the Vast pair at 0.35 USD per GPU-hour =
	// 0.35 × 6.8095 / 1.0163 = 2.3451 CNY: owning pays above
	// 625 / (2.3451 − 0.45) = 329.8 h a month. At 150000 it would take
	// 3298 h, more than a month has: never. Neither pays start-up.
	cheapest := 0.35 * 6.8095 / 1.0163
	for _, name := range []string{"lab", "dear"} {
		o := optionBy(res, name)
		if o == nil {
			t.Fatalf("no owned option %s", name)
		}
		if _, ok := o.HiddenCosts["startup"]; ok || o.HiddenCosts["egress"] != 0 {
			t.Errorf("owned %s pays rental costs: %v", name, o.HiddenCosts)
		}
		if h := o.OwnedBreakEvenMonthlyHours; h != nil && *h > 730 {
			t.Errorf("owned %s: break-even %.1f h a month", name, *h)
		}
	}
	lab, dear := optionBy(res, "lab"), optionBy(res, "dear")
	if lab.OwnedBreakEvenMonthlyHours == nil || !close(*lab.OwnedBreakEvenMonthlyHours, 625/(cheapest-0.45)) {
		t.Errorf("lab: %v", lab.OwnedBreakEvenMonthlyHours)
	}
	if dear.OwnedBreakEvenMonthlyHours != nil || dear.OwnedBreakEven != "never" {
		t.Errorf("dear: %v %q", dear.OwnedBreakEvenMonthlyHours, dear.OwnedBreakEven)
	}
	// lora-7b fits one 4090; the Vast pair is rented whole: 2 × 1,941.2 ×
	// 0.9985 = 3,876.6 tokens/s for 0.70 an hour.
	p := optionBy(res, "90000002")
	if p == nil || p.GPUs != 2 || !close(p.TokensPerSecond, 2*r4090Lora*scalingOf(t, "lora-7b", "RTX-4090", 2, r4090x2)) || !close(p.UnitPricePerHour, 0.7*6.8095/1.0163) {
		t.Errorf("vast pair: %+v", p)
	}
}
