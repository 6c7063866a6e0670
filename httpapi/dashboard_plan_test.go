package httpapi_test

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/httpapi"
)

// TestPlanSpecFromQuery_SameSpecAsTheBody: a plan form's address reads as
// the job spec whose fields it names, the same spec POST /v1/plan decodes
// from the body: a preset or a shape (mixture-of-experts too), precision,
// sequence, deadline (hours or a date), serving load and months, service
// level, hidden costs, modes as checkboxes or as the other pages' mode.
func TestPlanSpecFromQuery_SameSpecAsTheBody(t *testing.T) {
	for _, c := range []struct{ name, query, body string }{
		{"ServingPreset", "workload=&tokens=&model=llama3-8b&method=serve&peak_tokens_per_second=300&modes=ondemand&modes=monthly&currency=USD",
			`{"model": {"preset": "llama3-8b"}, "method": "serve", "peak_tokens_per_second": 300, "modes": ["ondemand", "monthly"], "currency": "USD", "limit": 20}`},
		{"MoEShapeWithServiceLevel", "params_b=120&active_params_b=5.1&layers=36&hidden=2880&heads=64&kv_heads=8&experts=128&experts_per_token=4" +
			"&precision=mxfp4&method=serve&context=8192&output_tokens=1024&peak_tokens_per_second=2000&base_tokens_per_second=500&peak_hours_per_day=6" +
			"&hours_per_month=600&months=6&ttft_ms=500&tpot_ms=50&percentile=95&user_tokens_per_second=20&cached_prompt_share=0.5",
			`{"model": {"params_b": 120, "active_params_b": 5.1, "layers": 36, "hidden": 2880, "heads": 64, "kv_heads": 8, "experts": 128, "experts_per_token": 4},
			  "precision": "mxfp4", "method": "serve", "context": 8192, "output_tokens": 1024, "peak_tokens_per_second": 2000, "base_tokens_per_second": 500,
			  "peak_hours_per_day": 6, "hours_per_month": 600, "months": 6, "slo": {"ttft_ms": 500, "tpot_ms": 50, "percentile": 95, "user_tokens_per_second": 20},
			  "cached_prompt_share": 0.5, "limit": 20}`},
		{"TrainingByDeadline", "workload=lora-7b&tokens=1.5e7&seq_len=4096&deadline=48&startup_minutes=30&egress_gb=10&storage_price_gb_month=0.1&max_gpus=4&card=H100-80GB-SXM&limit=50",
			`{"workload": "lora-7b", "tokens": 15000000, "seq_len": 4096, "deadline": 48, "hidden": {"startup_minutes": 30, "egress_gb": 10, "storage_price_gb_month": 0.1},
			  "max_gpus": 4, "card": "H100-80GB-SXM", "limit": 50}`},
		{"DeadlineDate", "workload=lora-7b&tokens=1e6&deadline=2027-03-01", `{"workload": "lora-7b", "tokens": 1000000, "deadline": "2027-03-01", "limit": 20}`},
		{"ModesOfTheOtherPages", "workload=lora-7b&tokens=1e6&mode=spot,monthly&modes=bid", `{"workload": "lora-7b", "tokens": 1000000, "modes": ["bid", "spot", "monthly"], "limit": 20}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			q, err := url.ParseQuery(c.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := httpapi.PlanSpecFromQuery(q)
			if err != nil {
				t.Fatalf("PlanSpecFromQuery(%s): %v", c.query, err)
			}
			want, err := httpapi.DecodeSpec(strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("the query reads as\n%s\nthe body as\n%s", g, w)
			}
		})
	}
}

// TestDashboard_PlanBadParameterNamesIt: a malformed or unknown plan
// parameter, or a spec the checks of POST /v1/plan refuse, is a 400 page
// naming the field above the form that set it.
func TestDashboard_PlanBadParameterNamesIt(t *testing.T) {
	h := newPlanHarness(t, "")
	serve := "model=llama3-8b&method=serve&"
	for _, c := range []struct{ name, query, want string }{
		{"IntegerField", serve + "context=4096.5", `context: an integer, got "4096.5"`},
		{"ShapeInteger", "method=serve&params_b=8&layers=many", `layers: an integer, got "many"`},
		{"NumberField", serve + "peak_tokens_per_second=lots", `peak_tokens_per_second: a number, got "lots"`},
		{"NotFinite", serve + "months=Inf", `months: a number, got "Inf"`},
		{"Deadline", "workload=lora-7b&tokens=1e6&deadline=soon", `deadline "soon"`},
		{"Unknown", serve + "zz=1", `unknown parameter "zz"`},
		{"Repeated", serve + "peak_tokens_per_second=1&peak_tokens_per_second=2", `parameter "peak_tokens_per_second" given 2 times`},
		{"UnknownMode", serve + "modes=ondemand&modes=hourly", "modes: unknown mode"},
		{"MonthsRange", serve + "months=500", "months: must be within"},
		{"MonthsTraining", "workload=lora-7b&tokens=1e6&months=2", "months: only for method serve"},
		{"PresetAndShape", serve + "params_b=8", "model: give a preset, a config or a shape, not two of them"},
		{"ShapeIncomplete", "method=serve&params_b=8", "model.layers: missing or out of range"},
		{"ServiceLevel", serve + "ttft_ms=-1", "slo.ttft_ms: must be within"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := h.page(t, "/plan?"+c.query)
			if code != http.StatusBadRequest || !strings.Contains(html.UnescapeString(body), c.want) {
				t.Errorf("/plan?%s: %d, want 400 with %q:\n%.600s", c.query, code, c.want, body[strings.Index(body, "<main>"):])
			}
		})
	}
}

// TestDashboard_PlanServingTotals: without JavaScript, a serving plan's
// table has the buyer's columns, and each row's total is the option's
// total_cost from POST /v1/plan, never 0.
// Before: each serving row's Total read "0 USD".
func TestDashboard_PlanServingTotals(t *testing.T) {
	h := newPlanHarness(t, "")
	code, page := h.page(t, "/plan?model=llama3-8b&method=serve&peak_tokens_per_second=300&months=3&modes=ondemand&modes=monthly&currency=USD")
	if code != 200 || !strings.Contains(page, `<table id="plan" class="data serving">`) {
		t.Fatalf("/plan: %d\n%.3000s", code, page)
	}
	for _, col := range []string{"GPUs", "Capacity tokens/s", "Headroom", "Per month", "Compute", "+ Hidden", "= Total, 3 months", "Cost / M tokens at load"} {
		if !strings.Contains(page, ">"+col+"</th>") {
			t.Errorf("no %s column", col)
		}
	}
	_, body := h.do(t, http.MethodPost, "/v1/plan", `{"model": {"preset": "llama3-8b"}, "method": "serve", "peak_tokens_per_second": 300, "months": 3,
		"modes": ["ondemand", "monthly"], "currency": "USD", "limit": 20}`, "")
	var api planAnswer
	if err := json.Unmarshal(body, &api); err != nil {
		t.Fatal(err)
	}
	totals := regexp.MustCompile(`<td class="num total">([^<]*)</td>`).FindAllStringSubmatch(page, -1)
	if len(api.Options) == 0 || len(totals) != len(api.Options) || api.Job.Months != 3 {
		t.Fatalf("%d totals on the page, %d options from POST /v1/plan (months %g)", len(totals), len(api.Options), api.Job.Months)
	}
	for i, o := range api.Options {
		if want := alerts.Money(o.TotalCost, "USD"); totals[i][1] != want || !(o.TotalCost > 0) {
			t.Errorf("row %d (%s %s): total %q, POST /v1/plan %g (%s)", i+1, o.Card, o.Offer, totals[i][1], o.TotalCost, want)
		}
	}
	if !strings.Contains(page, "Billed for 3 months.") {
		t.Error("the plan does not say the period it bills")
	}
}
