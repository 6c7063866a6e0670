package httpapi_test

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/httpapi"
)

// /v1/history of a serving workload with include_api=true carries the API
// series: gpt-oss-120b on OpenRouter at 1,024 in / 256 out costs
// 0.17 + 4 × 0.03 = 0.29 per million output tokens (the capture); after the
// fixture's output price goes to 0.20 (inside the gate's band, applied at
// once) 0.20 + 4 × 0.03 = 0.32. Two points, oldest first.
func TestHistory_IncludesTheAPISeries(t *testing.T) {
	h, dir := editableEnv(t)
	h.env.Round(t)
	h.env.Advance(time.Hour)
	editFixture(t, dir, "openrouter/models.json", `        "prompt": "0.00000003",
        "completion": "0.00000017",
        "input_cache_read": "0.00000003"`, `        "prompt": "0.00000003",
        "completion": "0.0000002",
        "input_cache_read": "0.00000003"`)
	h.env.Round(t, "openrouter")
	h.env.Advance(time.Minute)
	code, body := h.get(t, "/v1/history?card=H100-80GB-SXM&workload=serve-gpt-oss-120b&mode=ondemand&currency=USD&include_api=true")
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	r := decode[httpapi.HistoryResponse](t, body)
	if r.APIModel != "openai/gpt-oss-120b via openrouter" || len(r.API) != 2 ||
		math.Abs(r.API[0].CostPerMillionTokens-0.29) > 1e-9 || math.Abs(r.API[1].CostPerMillionTokens-0.32) > 1e-9 || !r.API[0].At.Before(r.API[1].At) {
		t.Errorf("api %q %+v", r.APIModel, r.API)
	}
	// Without it, or for a workload no API sells, none.
	for _, q := range []string{"/v1/history?card=H100-80GB-SXM&workload=serve-gpt-oss-120b&mode=ondemand",
		"/v1/history?card=H100-80GB-SXM&workload=serve-7b&mode=ondemand&include_api=true"} {
		_, body := h.get(t, q)
		if r := decode[httpapi.HistoryResponse](t, body); len(r.API) != 0 {
			t.Errorf("%s: api %+v", q, r.API)
		}
	}
	if code, _ := h.get(t, "/v1/history?card=H100-80GB-SXM&workload=serve-7b&include_api=yes"); code != http.StatusBadRequest {
		t.Errorf("include_api=yes: %d", code)
	}
}
