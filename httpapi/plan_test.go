package httpapi_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
	"github.com/pricewatch/pricewatch/rank"
)

// The job spec of the issue, verbatim.
const issueSpec = `{"model": {"params_b": 7, "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 32, "head_dim": 128},
  "method": "full", "precision": "bf16", "optimizer_state": "bf16", "seq_len": 2048, "micro_batch": 1,
  "activation_checkpointing": true, "tokens": 15000000, "modes": ["ondemand", "spot", "monthly"],
  "utilization": 0.6, "max_gpus": 8, "currency": "CNY", "include_unfit": false,
  "hidden": {"startup_minutes": 20, "storage_gb": 200, "storage_days": 7, "egress_gb": 50,
  "checkpoint_minutes": 30, "restart_minutes": 10}}`

func newPlanHarness(t *testing.T, token string) *harness {
	t.Helper()
	env := pipelinetest.New(t, nil, func(c *config.Config) {
		c.Server.APIToken = token
		c.Owned = []rank.Owned{{Name: "lab-4090", Card: "RTX-4090", Count: 4, PurchasePrice: 15000, Currency: "CNY",
			Months: 24, Watts: 450, KWhPrice: 1, Utilization: 0.5}}
	})
	env.Round(t)
	srv, err := httpapi.New(env.Pipeline, env.Registry, env.Registry, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return &harness{env: env, srv: srv}
}

func (h *harness) do(t *testing.T, method, target, body, token string) (int, []byte) {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, req)
	if !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Errorf("%s %s: content-type %q", method, target, rec.Header().Get("Content-Type"))
	}
	return rec.Code, rec.Body.Bytes()
}

func TestPlan_IssueSpec(t *testing.T) {
	h := newPlanHarness(t, "")
	code, body := h.do(t, http.MethodPost, "/v1/plan", issueSpec, "")
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	var raw map[string]json.RawMessage
	json.Unmarshal(body, &raw)
	for _, k := range []string{"job", "memory", "options"} {
		if raw[k] == nil {
			t.Errorf("answer lacks %q", k)
		}
	}
	var mem map[string]float64
	json.Unmarshal(raw["memory"], &mem)
	// 14e9, 14e9 and 28e9 bytes in GiB.
	for k, want := range map[string]float64{"weights_gib": 14e9 / (1 << 30), "gradients_gib": 14e9 / (1 << 30), "optimizer_gib": 28e9 / (1 << 30)} {
		if math.Abs(mem[k]-want) > 1e-9 {
			t.Errorf("memory.%s = %v, want %v", k, mem[k], want)
		}
	}
	for _, k := range []string{"activations_gib", "kv_cache_gib", "total_gib"} {
		if _, ok := mem[k]; !ok {
			t.Errorf("memory.%s missing", k)
		}
	}
	var opts []map[string]any
	json.Unmarshal(raw["options"], &opts)
	if len(opts) == 0 {
		t.Fatal("no options")
	}
	for _, f := range []string{"card", "source", "offer", "mode", "gpus", "fits", "tokens_per_second", "throughput_origin",
		"price_per_gpu_hour", "hours", "compute_cost", "hidden_costs", "total_cost", "cost_per_million_tokens", "currency"} {
		if _, ok := opts[0][f]; !ok {
			t.Errorf("option lacks %q", f)
		}
	}
	var res rank.PlanResult
	json.Unmarshal(body, &res)
	seenMulti := false
	for i, o := range res.Options {
		// Rentals add start-up (and storage, egress) to the compute; owned
		// cards pay none of those.
		hidden := o.TotalCost > o.ComputeCost || o.Source == "owned" && o.TotalCost == o.ComputeCost
		if !o.Fits || o.Currency != "CNY" || !hidden || o.PessimisticTotalCost <= o.TotalCost {
			t.Errorf("option %d: %+v", i, o)
		}
		if i > 0 && o.TotalCost < res.Options[i-1].TotalCost {
			t.Errorf("not ranked by total cost at %d", i)
		}
		if o.Mode == "monthly" && o.Utilization != 0.6 {
			t.Errorf("monthly option without utilization: %+v", o)
		}
		if o.Mode == "spot" && o.HiddenCosts["spot_reclaims"] <= 0 {
			t.Errorf("spot option without reclaim loss: %+v", o)
		}
		if o.GPUs > 1 {
			seenMulti = true
			if o.ScalingEfficiency >= 1 {
				t.Errorf("%d GPUs at efficiency %v", o.GPUs, o.ScalingEfficiency)
			}
		}
		for _, card := range []string{"RTX-4090", "A40", "L40S", "RTX-A6000", "RTX-3090"} {
			if o.Card == card && o.GPUs < 2 {
				t.Errorf("a full fine-tune on one %s", card)
			}
		}
	}
	if !seenMulti {
		t.Error("no option shards the job over several GPUs")
	}
}

func TestPlan_OwnedAndServing(t *testing.T) {
	h := newPlanHarness(t, "")
	code, body := h.do(t, http.MethodPost, "/v1/plan",
		`{"workload": "serve-7b", "card": "RTX-4090", "peak_tokens_per_second": 300, "hours_per_month": 300, "currency": "CNY", "limit": 1000}`, "")
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	var res rank.PlanResult
	json.Unmarshal(body, &res)
	var owned *rank.Option
	for i, o := range res.Options {
		if o.Serving == nil || o.Serving.GPUsNeeded < 1 {
			t.Errorf("serving option without capacity: %+v", o)
		}
		if o.Source == "owned" {
			owned = &res.Options[i]
		}
	}
	// 15000 CNY over 24 months at 50% use: 15000 / (24 × 730 × 0.5) +
	// 0.45 kW × 1 CNY = 2.1623 per used hour (full precision in JSON).
	if owned == nil || math.Abs(owned.PricePerGPUHour-(15000.0/(24*730*0.5)+0.45)) > 1e-9 {
		t.Fatalf("owned option: %+v", owned)
	}
	// Owning beats renting above 625 / (rent − 0.45) hours a month, which a
	// month of 730 hours may not reach: then it says "never".
	rent := math.Inf(1)
	for _, o := range res.Options {
		if o.Source != "owned" && !o.Mode.Committed() && o.PricePerGPUHour < rent {
			rent = o.PricePerGPUHour
		}
	}
	hours := 625 / (rent - 0.45)
	switch {
	case hours <= 730 && (owned.OwnedBreakEvenMonthlyHours == nil || math.Abs(*owned.OwnedBreakEvenMonthlyHours-hours) > 1e-6):
		t.Errorf("break-even %v, want %.1f h", owned.OwnedBreakEvenMonthlyHours, hours)
	case (hours > 730 || rent <= 0.45) && (owned.OwnedBreakEvenMonthlyHours != nil || owned.OwnedBreakEven != "never"):
		t.Errorf("break-even %v %q, want never (%.0f h at %.3f CNY)", owned.OwnedBreakEvenMonthlyHours, owned.OwnedBreakEven, hours, rent)
	}
}

func TestPlan_BadSpecs(t *testing.T) {
	h := newPlanHarness(t, "")
	for _, c := range []struct{ name, body, want string }{
		{"Empty", ``, "empty body"},
		{"NotJSON", `model: x`, "invalid JSON"},
		{"UnknownField", `{"workload": "lora-7b", "tokens": 1, "colour": "red"}`, "colour: unknown field"},
		{"WrongType", `{"workload": "lora-7b", "tokens": "many"}`, "tokens: want a float64"},
		{"NestedWrongType", `{"model": {"params_b": "seven"}}`, "model.params_b"},
		{"BadPreset", `{"model": {"preset": "gpt-5"}, "tokens": 1}`, "model.preset"},
		{"NoTokens", `{"workload": "full-ft-7b"}`, "tokens"},
		{"BadCard", `{"workload": "lora-7b", "tokens": 1, "card": "RTX-9090"}`, "card"},
		{"Trailing", `{"workload": "lora-7b", "tokens": 1} {}`, "trailing data"},
		// Numbers no job has (the issue: 1e300 peak tokens/s planned
		// −9223372036854775808 GPUs) name their field.
		{"Peak1e300", `{"workload":"serve-7b","peak_tokens_per_second":1e300}`, "peak_tokens_per_second:"},
		{"PeakAboveBound", `{"workload":"serve-7b","peak_tokens_per_second":1e9}`, "peak_tokens_per_second:"},
		{"NegativePeak", `{"workload":"serve-7b","peak_tokens_per_second":-1}`, "peak_tokens_per_second:"},
		{"Hours1e300", `{"workload":"serve-7b","peak_tokens_per_second":100,"hours_per_month":1e300}`, "hours_per_month:"},
		{"Tokens1e300", `{"workload":"lora-7b","tokens":1e300}`, "tokens:"},
		{"FractionOfAToken", `{"workload":"lora-7b","tokens":1e-300}`, "tokens:"},
		{"HugeConcurrency", `{"workload":"serve-7b","concurrency":9223372036854775807}`, "concurrency:"},
		{"ConcurrencyOverflowsInt", `{"workload":"serve-7b","concurrency":1e30}`, "concurrency:"},
		{"HugeContext", `{"workload":"serve-7b","context":9223372036854775807}`, "context:"},
		{"NegativeContext", `{"workload":"serve-7b","context":-5}`, "context:"},
		{"HugeOutput", `{"workload":"serve-7b","output_tokens":4611686018427387904}`, "output_tokens:"},
		{"TinyRequestRate", `{"workload":"serve-7b","request_rate":1e-300,"peak_tokens_per_second":100}`, "request_rate:"},
		{"TinyModel", `{"model":{"params_b":1e-300,"layers":1,"hidden":1,"heads":1},"tokens":1e6}`, "model.params_b:"},
		{"HiddenHuge", `{"workload":"lora-7b","tokens":1e6,"hidden":{"egress_gb":1e300}}`, "hidden.egress_gb:"},
		{"HiddenPriceHuge", `{"workload":"lora-7b","tokens":1e6,"hidden":{"egress_price_gb":1e300}}`, "hidden.egress_price_gb:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := h.do(t, http.MethodPost, "/v1/plan", c.body, "")
			var e map[string]string
			json.Unmarshal(body, &e)
			if code != 400 || !strings.Contains(e["error"], c.want) {
				t.Errorf("%d %s, want 400 naming %q", code, body, c.want)
			}
		})
	}
	if code, _ := h.do(t, http.MethodGet, "/v1/plan", "", ""); code != 405 {
		t.Errorf("GET /v1/plan: %d", code)
	}
}

func TestProfiles_WriteNeedsToken(t *testing.T) {
	off := newPlanHarness(t, "")
	if code, body := off.do(t, http.MethodPut, "/v1/profiles/A100-80GB-SXM/lora-7b", `{"tokens_per_second": 3000}`, "anything"); code != 403 ||
		!strings.Contains(string(body), "PRICEWATCH_API_TOKEN") {
		t.Errorf("no token configured: %d %s", code, body)
	}
	h := newPlanHarness(t, "s3cret")
	for _, c := range []struct {
		name, target, body, token string
		code                      int
	}{
		{"NoToken", "/v1/profiles/A100-80GB-SXM/lora-7b", `{"tokens_per_second": 3000}`, "", 401},
		{"WrongToken", "/v1/profiles/A100-80GB-SXM/lora-7b", `{"tokens_per_second": 3000}`, "s3cre", 401},
		{"UnknownCard", "/v1/profiles/RTX-9090/lora-7b", `{"tokens_per_second": 3000}`, "s3cret", 400},
		{"UnknownWorkload", "/v1/profiles/A100-80GB-SXM/gpt", `{"tokens_per_second": 3000}`, "s3cret", 400},
		{"ZeroTPS", "/v1/profiles/A100-80GB-SXM/lora-7b", `{"tokens_per_second": 0}`, "s3cret", 400},
		{"UnknownField", "/v1/profiles/A100-80GB-SXM/lora-7b", `{"tps": 3000}`, "s3cret", 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			if code, body := h.do(t, http.MethodPut, c.target, c.body, c.token); code != c.code {
				t.Errorf("%d %s, want %d", code, body, c.code)
			}
		})
	}
	// A measured profile replaces the published/estimated one everywhere.
	before := bestFor(t, h, "A100-80GB-SXM")
	code, body := h.do(t, http.MethodPut, "/v1/profiles/A100-80GB-SXM/lora-7b", `{"tokens_per_second": 1234.5, "note": "our 1h run"}`, "s3cret")
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	after := bestFor(t, h, "A100-80GB-SXM")
	if before.ThroughputOrigin == rank.OriginMeasured || after.ThroughputOrigin != rank.OriginMeasured || after.TokensPerSecond != 1234.5 {
		t.Errorf("best before %+v after %+v", before, after)
	}
	code, body = h.do(t, http.MethodPost, "/v1/plan", `{"workload": "lora-7b", "tokens": 1e8, "card": "A100-80GB-SXM", "max_gpus": 1}`, "")
	var res rank.PlanResult
	json.Unmarshal(body, &res)
	if code != 200 || len(res.Options) == 0 || res.Options[0].ThroughputOrigin != rank.OriginMeasured || res.Options[0].TokensPerSecondPerGPU != 1234.5 {
		t.Errorf("plan after the measured profile: %d %+v", code, res.Options)
	}
	code, body = h.do(t, http.MethodGet, "/v1/profiles?origin=measured", "", "")
	var list struct{ Profiles []rank.Profile }
	json.Unmarshal(body, &list)
	if code != 200 || len(list.Profiles) != 1 || list.Profiles[0].Note != "measured: our 1h run" {
		t.Errorf("profiles: %d %s", code, body)
	}
}

func bestFor(t *testing.T, h *harness, card string) rank.Entry {
	t.Helper()
	_, body := h.get(t, "/v1/best?workload=lora-7b&card="+card)
	var r httpapi.BestResponse
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&r); err != nil || len(r.Cards) != 1 {
		t.Fatalf("best for %s: %s", card, body)
	}
	return r.Cards[0].Entry
}
