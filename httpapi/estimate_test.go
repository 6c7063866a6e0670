package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/rank"
)

// postEstimate posts body to /v1/estimate and decodes a 200 into res.
func postEstimate(t *testing.T, h *harness, body string) (int, rank.EstimateResult, string) {
	t.Helper()
	code, b := h.do(t, http.MethodPost, "/v1/estimate", body, "")
	var res rank.EstimateResult
	var e struct{ Error string }
	if code == http.StatusOK {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&res); err != nil {
			t.Fatalf("decode the answer: %v\n%s", err, b)
		}
	} else if err := json.Unmarshal(b, &e); err != nil || e.Error == "" {
		t.Fatalf("%d without a JSON error: %s", code, b)
	}
	return code, res, e.Error
}

func TestEstimate_PresetOnH100(t *testing.T) {
	h := newHarness(t, true)
	code, res, msg := postEstimate(t, h, `{"model":{"preset":"llama3-8b"},"card":"H100-80GB-SXM"}`)
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, msg)
	}
	if !res.Fits || res.Reason != "" || res.GPUs != 1 || res.TokensPerSecondPerGPU <= 0 || res.TokensPerSecond != res.TokensPerSecondPerGPU {
		t.Errorf("answer: %+v", res)
	}
	if res.Layout == nil || res.Layout.GPUs() != 1 || !res.EngineDefault || res.PrecisionUsed != "bf16" || res.Model.Name != "llama3-8b" {
		t.Errorf("layout %v (engine default %v), precision %q, model %q", res.Layout, res.EngineDefault, res.PrecisionUsed, res.Model.Name)
	}
	if m := res.Memory; m.WeightsGiB <= 0 || m.CapacityGiB != 80 || m.UsableGiB <= 0 || m.UsableGiB > m.CapacityGiB {
		t.Errorf("memory: %+v", m)
	}
	// The same answer as the function the CLI calls.
	want, err := httpapi.Estimate(rank.EstimateRequest{Model: &rank.ModelSpec{Preset: "llama3-8b"}, Card: "H100-80GB-SXM"})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(res)
	b, _ := json.Marshal(want)
	if !bytes.Equal(a, b) {
		t.Errorf("the endpoint and httpapi.Estimate differ:\n%s\n%s", a, b)
	}
}

func TestEstimate_BadInputNamesTheField(t *testing.T) {
	h := newHarness(t, true)
	for _, c := range []struct{ body, field string }{
		{`{"model":{"preset":"llama3-8b"},"card":"NOPE-1"}`, "card: unknown card"},
		{`{"model":{"preset":"llama3-8b"}}`, "card: "},
		{`{"model":{"preset":"no-such-model"},"card":"H100-80GB-SXM"}`, "model.preset: unknown preset"},
		{`{"card":"H100-80GB-SXM"}`, "model: "},
		{`{"model":{"preset":"llama3-8b"},"card":"H100-80GB-SXM","colour":"red"}`, "colour: unknown field"},
		{`{"model":{"preset":"llama3-8b","colour":"red"},"card":"H100-80GB-SXM"}`, "colour: unknown field"},
		{`{"model":{"preset":"llama3-8b"},"card":"H100-80GB-SXM","gpus":"two"}`, "gpus: "},
		{`{"model":{"preset":"llama3-8b"},"card":"H100-80GB-SXM","gpus":5000}`, "gpus: "},
		{`{"model":{"preset":"llama3-8b"},"card":"H100-80GB-SXM","gpus":4,"layout":{"tp":2}}`, "layout: "},
		{`{"model":{"preset":"llama3-8b"},"card":"H100-80GB-SXM","engine":"nope"}`, "engine: "},
		{`{"model":{"preset":"llama3-8b"},"card":"H100-80GB-SXM","method":"full","attention_dp_balance":true}`, "attention_dp_balance: "},
		{`{"model":{"preset":"llama3-8b"},"card":"H100-80GB-SXM","attention_dp_balance":"yes"}`, "attention_dp_balance: "},
		{`{"model":{"preset":"qwen3-30b-a3b"},"card":"H100-80GB-SXM","method":"full","expert_all_to_all":true}`, "expert_all_to_all: "},
		{`{"model":{"preset":"qwen3-30b-a3b"},"card":"H100-80GB-SXM","expert_all_to_all":1}`, "expert_all_to_all: "},
		{`{"model":{"config":{"architectures":["NoSuchForCausalLM"]}},"card":"H100-80GB-SXM"}`, "model.config.architectures: "},
		{`{"model":{"preset":"llama3-8b"},"card":"H100-80GB-SXM"} {}`, "trailing data"},
		{``, "empty body"},
	} {
		code, _, msg := postEstimate(t, h, c.body)
		if code != http.StatusBadRequest || !strings.Contains(msg, c.field) {
			t.Errorf("%s: %d %q, want 400 naming %q", c.body, code, msg, c.field)
		}
	}
	if code, _, msg := postEstimate(t, h, `{"model":{"preset":"llama3-8b"},"card":"NOPE-1"}`); !strings.HasPrefix(msg, "card:") {
		t.Errorf("unknown card: %d %q, want the message to start with the field", code, msg)
	}
	if code, _, msg := postEstimate(t, h, `{"model":{"preset":"no-such-model"},"card":"H100-80GB-SXM"}`); !strings.HasPrefix(msg, "model.preset:") {
		t.Errorf("unknown preset: %d %q, want the message to start with the field", code, msg)
	}
	// Query parameters are refused as on /v1/plan.
	if code, _ := h.do(t, http.MethodPost, "/v1/estimate?card=L4", `{"model":{"preset":"llama3-8b"},"card":"L4"}`, ""); code != http.StatusBadRequest {
		t.Errorf("a query parameter: %d", code)
	}
	if code, _ := h.do(t, http.MethodGet, "/v1/estimate", "", ""); code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", code)
	}
}

// A 70B model in bf16 does not fit one L4: still a 200, with fits false
// and the reason in GiB.
func TestEstimate_DoesNotFitIs200WithReason(t *testing.T) {
	h := newHarness(t, true)
	code, res, msg := postEstimate(t, h, `{"model":{"preset":"llama3-70b"},"precision":"bf16","card":"L4"}`)
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, msg)
	}
	if res.Fits || res.TokensPerSecond != 0 || !strings.Contains(res.Reason, "GiB") || !strings.Contains(res.Reason, "L4") {
		t.Errorf("fits %v, %v tokens/s, reason %q", res.Fits, res.TokensPerSecond, res.Reason)
	}
	if res.Memory.WeightsGiB <= res.Memory.UsableGiB {
		t.Errorf("memory: %+v", res.Memory)
	}
	// The raw answer says fits: false (not left out).
	_, b := h.do(t, http.MethodPost, "/v1/estimate", `{"model":{"preset":"llama3-70b"},"precision":"bf16","card":"L4"}`, "")
	var raw map[string]any
	json.Unmarshal(b, &raw)
	if f, ok := raw["fits"]; !ok || f != false || raw["reason"] == "" {
		t.Errorf("raw answer: %s", b)
	}
}

// An estimate reads no ranking: it answers before the first scrape.
func TestEstimate_AnswersBeforeTheFirstRanking(t *testing.T) {
	h := newHarness(t, false)
	if code, _, msg := postEstimate(t, h, `{"model":{"preset":"llama3-8b"},"method":"lora","card":"A100-80GB-SXM","seq_len":2048}`); code != http.StatusOK {
		t.Errorf("%d %s", code, msg)
	}
}

// A config.json of up to rank.MaxConfigBytes fits the body limit (over
// /v1/plan's 1 MiB with the other fields), and is read as the preset it
// is; a larger body is a 413 naming the limit.
func TestEstimate_ConfigAndBodyLimit(t *testing.T) {
	h := newHarness(t, true)
	cfg, err := os.ReadFile("../rank/data/configs/qwen3-8b.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg = bytes.TrimSpace(cfg)
	code, fromPreset, msg := postEstimate(t, h, `{"model":{"preset":"qwen3-8b"},"card":"H100-80GB-SXM"}`)
	if code != http.StatusOK {
		t.Fatalf("preset: %d %s", code, msg)
	}
	code, fromConfig, msg := postEstimate(t, h, `{"model":{"config":`+string(cfg)+`},"card":"H100-80GB-SXM"}`)
	if code != http.StatusOK {
		t.Fatalf("config: %d %s", code, msg)
	}
	if fromConfig.TokensPerSecondPerGPU != fromPreset.TokensPerSecondPerGPU || fromConfig.Memory != fromPreset.Memory {
		t.Errorf("config %+v\npreset %+v", fromConfig, fromPreset)
	}
	// Pad the object inside to exactly MaxConfigBytes.
	padded := append([]byte("{"), bytes.Repeat([]byte(" "), rank.MaxConfigBytes-len(cfg))...)
	padded = append(padded, cfg[1:]...)
	if len(padded) != rank.MaxConfigBytes {
		t.Fatalf("padded to %d", len(padded))
	}
	body := `{"model":{"config":` + string(padded) + `},"card":"H100-80GB-SXM"}`
	if len(body) <= httpapi.MaxBodyBytes {
		t.Fatalf("the body is %d bytes, not over /v1/plan's limit", len(body))
	}
	if code, res, msg := postEstimate(t, h, body); code != http.StatusOK || res.TokensPerSecondPerGPU != fromPreset.TokensPerSecondPerGPU {
		t.Errorf("a %d-byte config: %d %s", len(padded), code, msg)
	}
	over := `{"model":{"config":{"architectures":["Qwen3ForCausalLM"],"pad":"` + strings.Repeat("x", httpapi.MaxEstimateBody) + `"}},"card":"H100-80GB-SXM"}`
	if code, _, msg := postEstimate(t, h, over); code != http.StatusRequestEntityTooLarge || !strings.Contains(msg, "limit") {
		t.Errorf("an oversized body: %d %q", code, msg)
	}
}

// The API reference lists the route with its schemas.
func TestEstimate_InTheAPIReference(t *testing.T) {
	h := newHarness(t, true)
	code, body := h.page(t, "/api")
	for _, want := range []string{`id="post-v1-estimate"`, "EstimateRequest", "EstimateResult"} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/api: %d, lacks %q", code, want)
		}
	}
}
