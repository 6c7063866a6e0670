package httpapi_test

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/rank"
)

// A plan at the bounds of every number (TestPlan_BadSpecs has those past
// them), with the slowest throughput a measured profile may claim, has
// every count and cost finite and positive: nothing overflows.
func TestPlan_AtTheBounds(t *testing.T) {
	h := newPlanHarness(t, "tok")
	if code, body := h.do(t, http.MethodPut, "/v1/profiles/RTX-4090/serve-7b", `{"tokens_per_second": 1e-300}`, "tok"); code != 400 ||
		!strings.Contains(string(body), "tokens_per_second") {
		t.Errorf("a vanishing measured throughput: %d %s", code, body)
	}
	if code, body := h.do(t, http.MethodPut, "/v1/profiles/RTX-4090/serve-7b", `{"tokens_per_second": 0.001}`, "tok"); code != 200 {
		t.Fatalf("profile at the lower bound: %d %s", code, body)
	}
	for _, spec := range []string{
		`{"workload":"serve-7b","peak_tokens_per_second":1e8,"hours_per_month":744,"modes":["ondemand","spot","monthly"],"limit":1000}`,
		`{"workload":"serve-7b","peak_tokens_per_second":1e8,"request_rate":0.001,"output_tokens":1,"context":2,"limit":1000}`,
		`{"workload":"lora-7b","tokens":1e16,"modes":["ondemand","spot","daily","monthly"],"limit":1000}`,
	} {
		code, body := h.do(t, http.MethodPost, "/v1/plan", spec, "")
		if code != 200 {
			t.Fatalf("%s: %d %s", spec, code, body)
		}
		var res rank.PlanResult
		if err := json.Unmarshal(body, &res); err != nil || len(res.Options) == 0 {
			t.Fatalf("%s: %v %s", spec, err, body)
		}
		for _, o := range res.Options {
			ok := o.TotalCost >= 0 && !math.IsInf(o.TotalCost, 0) && o.Hours >= 0 && o.PeriodsBilled >= 0
			if s := o.Serving; s != nil {
				ok = ok && s.GPUsNeeded >= 1 && s.Instances >= 1 && s.MonthlyCost > 0
			}
			if !ok {
				t.Errorf("%s: option %s/%s: total %v hours %v periods %d serving %+v", spec, o.Source, o.Offer, o.TotalCost, o.Hours, o.PeriodsBilled, o.Serving)
			}
		}
	}
}

// /metrics answers GET and HEAD; any other method is a 405 with Allow.
func TestMetrics_Methods(t *testing.T) {
	h := newHarness(t, true)
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		rec := httptest.NewRecorder()
		h.srv.ServeHTTP(rec, httptest.NewRequest(m, "/metrics", nil))
		if rec.Code != 200 {
			t.Errorf("%s /metrics: %d", m, rec.Code)
		}
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		rec := httptest.NewRecorder()
		h.srv.ServeHTTP(rec, httptest.NewRequest(m, "/metrics", strings.NewReader("x")))
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" || !strings.Contains(rec.Body.String(), `"error"`) {
			t.Errorf("%s /metrics: %d Allow %q %s", m, rec.Code, rec.Header().Get("Allow"), rec.Body)
		}
	}
}

// A write takes one JSON object: anything after it is refused.
func TestPutProfile_RejectsTrailingJSON(t *testing.T) {
	h := newPlanHarness(t, "tok")
	for _, c := range []struct{ name, target, method, body string }{
		{"SecondObject", "/v1/profiles/A100-80GB-SXM/lora-7b", http.MethodPut, `{"tokens_per_second": 3000} {"tokens_per_second": 1}`},
		{"StrayBrace", "/v1/profiles/A100-80GB-SXM/lora-7b", http.MethodPut, `{"tokens_per_second": 3000}}`},
		{"Garbage", "/v1/profiles/A100-80GB-SXM/lora-7b", http.MethodPut, `{"tokens_per_second": 3000} x`},
		{"PlanStrayBrace", "/v1/plan", http.MethodPost, `{"workload": "lora-7b", "tokens": 1}}`},
		{"PlanStrayBracket", "/v1/plan", http.MethodPost, `{"workload": "lora-7b", "tokens": 1}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := h.do(t, c.method, c.target, c.body, "tok")
			if code != 400 || !strings.Contains(string(body), "trailing data") {
				t.Errorf("%d %s, want 400 trailing data", code, body)
			}
		})
	}
	if code, body := h.do(t, http.MethodPut, "/v1/profiles/A100-80GB-SXM/lora-7b", "{\"tokens_per_second\": 3000}\n\t ", "tok"); code != 200 {
		t.Errorf("trailing white space: %d %s", code, body)
	}
	if ps, _ := h.env.Store.Profiles(); countMeasured(ps) != 1 {
		t.Errorf("%d measured profiles stored, want only the valid one", countMeasured(ps))
	}
}

func countMeasured(ps []rank.Profile) int {
	n := 0
	for _, p := range ps {
		if p.Origin == rank.OriginMeasured {
			n++
		}
	}
	return n
}
