package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/rank"
)

// planRaw posts a spec and answers the status and body.
func planRaw(h *harness, spec string) (int, []byte) {
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/plan", bytes.NewBufferString(spec)))
	return rec.Code, rec.Body.Bytes()
}

// A serving plan with tokens to process used to divide by a zero
// checkpoint interval (serving writes no checkpoint): NaN totals, a 500.
// Its spot options now lose the restart per reclaim and nothing else.
func TestPlan_ServingWithTokensIsFinite(t *testing.T) {
	h := newHarness(t, true)
	code, body := planRaw(h, `{"workload":"serve-7b","tokens":15000000,"modes":["ondemand","spot"],"limit":1000}`)
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	var res rank.PlanResult
	if err := json.Unmarshal(body, &res); err != nil || len(res.Options) == 0 {
		t.Fatalf("%v: %d options", err, len(res.Options))
	}
	if p := rank.NonFinite(res); p != "" {
		t.Fatalf("non-finite %s", p)
	}
	spot := 0
	for _, o := range res.Options {
		if o.Spot == nil || !o.Fits {
			continue
		}
		spot++
		// 10 restart minutes a reclaim, at the option's rate over its hours.
		if o.Spot.CheckpointHours != 0 || o.HiddenCosts["checkpoint_writes"] != 0 ||
			!near(o.Spot.ExpectedLostHours, o.ReclaimsPerHour*o.Hours*10.0/60, 1e-9) {
			t.Errorf("%s spot: %+v, reclaims %v over %.3f h", o.Key, o.Spot, o.ReclaimsPerHour, o.Hours)
		}
	}
	if spot == 0 {
		t.Error("no spot option priced")
	}
}

// Owned hardware travels in the spec (the CLI sends its config's when a
// daemon answers): priced beside the rentals, validated with the field
// named.
func TestPlan_OwnedInSpec(t *testing.T) {
	h := newHarness(t, true)
	res := postPlan(t, h, `{"workload":"lora-7b","tokens":1e7,"card":"RTX-4090","owned":[{"name":"desk","card":"RTX-4090","count":1,"purchase_price":1600,"currency":"usd","months":24,"watts":450,"kwh_price":0.3,"utilization":0.5}]}`)
	o := optionBy(res, "desk")
	// 1600 / (24 × 730 × 0.5) + 0.45 × 0.3 = 0.3176 per used hour.
	if o == nil || o.Source != "owned" || !near(o.PricePerGPUHour, 1600.0/(24*730*0.5)+0.45*0.3, 1e-9) {
		t.Fatalf("owned option %+v", o)
	}
	code, body := planRaw(h, `{"workload":"lora-7b","tokens":1e7,"owned":[{"name":"x","card":"NOPE","count":1,"purchase_price":1,"currency":"USD","months":1,"utilization":1}]}`)
	if code != http.StatusBadRequest || !strings.Contains(string(body), "owned[0].card") {
		t.Errorf("bad owned card: %d %s", code, body)
	}
}

func near(a, b, tol float64) bool { return a-b <= tol && b-a <= tol }

// Every spec that validates is answered (never a 500), and every number in
// the answer is finite. Seeds are the specs of the README and the tests.
func FuzzPlanSpec(f *testing.F) {
	for _, s := range []string{
		`{"workload":"serve-7b","tokens":15000000}`,
		`{"workload":"lora-7b","tokens":1e7,"currency":"CNY","modes":["ondemand","spot","monthly"],"utilization":0.6}`,
		`{"workload":"serve-7b","peak_tokens_per_second":300,"base_tokens_per_second":50,"hours_per_month":200,"modes":["ondemand","monthly"]}`,
		`{"model":{"preset":"llama3-70b"},"method":"serve","precision":"fp8","context":4096,"concurrency":4,"include_unfit":true}`,
		`{"model":{"params_b":1,"layers":1,"hidden":64,"heads":1},"method":"full","seq_len":1,"tokens":1}`,
		`{"workload":"full-ft-7b","tokens":1e16,"max_gpus":64,"hidden":{"reclaims_per_hour":0,"checkpoint_minutes":0}}`,
		`{"workload":"serve-7b","request_rate":0.001,"tokens":1,"modes":["spot"],"hidden":{"restart_minutes":0}}`,
	} {
		f.Add(s)
	}
	h := newHarness(f, true)
	f.Fuzz(func(t *testing.T, spec string) {
		if len(spec) > 4096 {
			return
		}
		code, body := planRaw(h, spec)
		switch code {
		case http.StatusOK:
			var res rank.PlanResult
			if err := json.Unmarshal(body, &res); err != nil {
				t.Fatalf("%s: %v", spec, err)
			}
			if p := rank.NonFinite(res); p != "" {
				t.Fatalf("%s: %s", spec, p)
			}
		case http.StatusBadRequest, http.StatusServiceUnavailable:
			var e map[string]string
			if json.Unmarshal(body, &e) != nil || e["error"] == "" {
				t.Fatalf("%s: %d without a JSON error: %s", spec, code, body)
			}
		default:
			t.Fatalf("%s: %d %s", spec, code, body)
		}
	})
}

var _ = httpapi.MaxBodyBytes

// The same over the numbers of a spec rather than its bytes: built-in
// workloads with any tokens, rates, utilization, hidden costs and GPU
// limits a JSON body can carry.
func FuzzPlanNumbers(f *testing.F) {
	f.Add(uint8(3), 15e6, 0.0, 0.0, 0.0, 0.05, 10.0, 30.0, 8, uint8(3))
	f.Add(uint8(1), 1e7, 300.0, 50.0, 0.6, 0.0, 0.0, 0.0, 1, uint8(7))
	f.Add(uint8(0), 1.0, 1e8, 1e8, 1.0, 1e4, 0.0, 1e4, 64, uint8(1))
	h := newHarness(f, true)
	workloads := []string{"full-ft-7b", "lora-7b", "qlora-7b", "serve-7b"}
	modes := []string{"ondemand", "spot", "monthly"}
	f.Fuzz(func(t *testing.T, wl uint8, tokens, peak, base, util, reclaims, restart, ckpt float64, maxGPUs int, modeBits uint8) {
		spec := map[string]any{"workload": workloads[int(wl)%len(workloads)], "max_gpus": maxGPUs, "limit": 50,
			"hidden": map[string]any{"reclaims_per_hour": reclaims, "restart_minutes": restart, "checkpoint_minutes": ckpt}}
		for k, v := range map[string]float64{"tokens": tokens, "peak_tokens_per_second": peak, "base_tokens_per_second": base, "utilization": util} {
			if v != 0 {
				spec[k] = v
			}
		}
		var ms []string
		for i, m := range modes {
			if modeBits&(1<<i) != 0 {
				ms = append(ms, m)
			}
		}
		if len(ms) > 0 {
			spec["modes"] = ms
		}
		b, err := json.Marshal(spec)
		if err != nil {
			return // NaN and ±Inf cannot travel in JSON
		}
		code, body := planRaw(h, string(b))
		if code == http.StatusOK {
			var res rank.PlanResult
			if err := json.Unmarshal(body, &res); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if p := rank.NonFinite(res); p != "" {
				t.Fatalf("%s: %s", b, p)
			}
			return
		}
		if code != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", b, code, body)
		}
	})
}
