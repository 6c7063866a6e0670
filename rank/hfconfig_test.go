package rank

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
)

// Every config preset's parameter counts, counted from its config.json,
// against what its publisher states (data/configs/sources.csv). Publishers
// round ("117B", "5.1B active"), count the vision tower (Llama 4, Gemma 3)
// or not, so the bar is 6%; a miscounted layer kind (MLA, shared experts,
// interleaved MoE) is off by far more.
func TestPresets_CountsMatchThePublisher(t *testing.T) {
	for _, s := range PresetSources() {
		m, ok := Presets()[s.Preset]
		if !ok {
			t.Errorf("%s: not a preset", s.Preset)
			continue
		}
		t.Logf("%-26s %-30s counted %8.2fB total %7.2fB active; publisher %g / %g", s.Preset, m.Architecture, m.ParamsB, m.ActiveParams()/1e9, s.TotalParamsB, s.ActiveB)
		if s.TotalParamsB > 0 && math.Abs(m.ParamsB/s.TotalParamsB-1) > 0.06 {
			t.Errorf("%s: %.2fB counted, publisher states %gB", s.Preset, m.ParamsB, s.TotalParamsB)
		}
		// Publishers count active parameters three ways: with the
		// embeddings (Qwen, DeepSeek, Meta), without the input embedding
		// (OpenAI's gpt-oss: a lookup), or without both embedding tables
		// (Zhipu's GLM-4.5).
		table := float64(m.Vocab) * float64(m.Hidden)
		off := func(p float64) bool { return math.Abs(p/1e9/s.ActiveB-1) > 0.06 }
		if s.ActiveB > 0 && off(m.ActiveParams()) && off(m.ActiveParams()-table) && off(m.ActiveParams()-2*table) {
			t.Errorf("%s: %.2fB active counted, publisher states %gB", s.Preset, m.ActiveParams()/1e9, s.ActiveB)
		}
		if (s.ActiveB > 0) != m.MoE() {
			t.Errorf("%s: MoE %v, publisher states active %g", s.Preset, m.MoE(), s.ActiveB)
		}
	}
}

// Hand counts of the shapes that matter, from the configs as published.
//
// Qwen3-30B-A3B: 48 layers, hidden 2048, 32 heads of 128, 4 KV heads, 128
// experts of 768 (top-8), vocab 151,936, untied.
//
//	attention per layer 2048×4096 + 2×2048×512 + 4096×2048 = 18.87M
//	experts  48 × 128 × 3 × 2048 × 768 = 28.99B (active 8/128: 1.81B)
//	embeddings 2 × 151,936 × 2048 = 0.622B; routers 48 × 2048 × 128 = 12.6M
//	total 28.99 + 48 × 18.87M + 0.622 + … = 30.53B; active 3.35B
//	KV 2 × 48 × 4 × 128 × 2 B = 98,304 B per token
//
// gpt-oss-120b: 36 layers, hidden 2880, 64 heads of 64, 8 KV heads, 128
// experts of 2880 (top-4), sliding window 128 on 18 layers, MXFP4 experts.
//
//	experts 36 × 128 × 3 × 2880 × 2880 = 114.66B; total ≈ 116.8B, active ≈ 5.1B
//	KV per full-attention token and layer 2 × 8 × 64 × 2 B = 2,048 B:
//	  a 128k-token sequence 18 × 131,072 × 2,048 + 18 × 128 × 2,048 = 4.84 GB
//
// DeepSeek-V3: 61 layers (3 dense), MLA latent 512 + rotary 64:
//
//	KV 61 × 576 × 2 B = 70,272 B per token, whatever the 128 heads
func TestModelFromConfig_HandCounts(t *testing.T) {
	q := Presets()["qwen3-30b-a3b"]
	if !near(q.ParamsB, 30.53, 0.005) || !near(q.ActiveParams()/1e9, 3.35, 0.01) {
		t.Errorf("qwen3-30b-a3b: %.3fB / %.3fB active, want 30.53 / 3.35", q.ParamsB, q.ActiveParams()/1e9)
	}
	if got := q.KVBytesPerToken(2); got != 98304 {
		t.Errorf("qwen3-30b-a3b KV per token %v, want 98,304", got)
	}
	g := Presets()["gpt-oss-120b"]
	if g.SlidingLayers != 18 || g.SlidingWindow != 128 || g.Quantization != PrecisionMXFP4 || !g.ExpertsOnly {
		t.Errorf("gpt-oss-120b: %d sliding layers of %d, format %q experts-only %v; want 18 of 128, mxfp4, experts only",
			g.SlidingLayers, g.SlidingWindow, g.Quantization, g.ExpertsOnly)
	}
	if x := g.ExpertParams() / 1e9; !near(x, 114.66, 0.01) {
		t.Errorf("gpt-oss-120b experts %.2fB, want 114.66", x)
	}
	if kv := g.KVBytes(131072, 2) / 1e9; !near(kv, 18*131072*2048/1e9+18*128*2048/1e9, 0.001) {
		t.Errorf("gpt-oss-120b KV of a 128k sequence %.3f GB, want 4.84", kv)
	}
	d := Presets()["deepseek-v3"]
	if got := d.KVBytesPerToken(2); got != 70272 || d.DenseLayers != 3 || d.SharedExperts != 1 || d.Quantization != PrecisionFP8 {
		t.Errorf("deepseek-v3: KV %v B/token, %d dense layers, %d shared experts, %q; want 70,272, 3, 1, fp8", got, d.DenseLayers, d.SharedExperts, d.Quantization)
	}
	if r := d.KVReplication(8); r != 8 {
		t.Errorf("MLA on TP8 stores the latent %v times, want 8", r)
	}
}

// A config is refused with the field named: unknown architecture, missing
// fields, bad numbers, unknown quantization.
func TestModelFromConfig_Refusals(t *testing.T) {
	for _, tc := range []struct {
		name, config, field string
	}{
		{"not JSON", `{"architectures": [`, "model.config"},
		{"no architecture", `{"hidden_size": 4096}`, "model.config.architectures"},
		{"unknown architecture", `{"architectures": ["MambaForCausalLM"]}`, "model.config.architectures"},
		{"missing hidden", `{"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32000, "intermediate_size": 11008}`, "model.config.hidden_size"},
		{"missing experts", `{"architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 48, "num_attention_heads": 32, "vocab_size": 151936, "num_experts_per_tok": 8, "moe_intermediate_size": 768}`, "model.config.num_experts"},
		{"negative layers", `{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": -1, "num_attention_heads": 32, "vocab_size": 32000, "intermediate_size": 11008}`, "model.config.num_hidden_layers"},
		{"a million layers", `{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 1000000, "num_attention_heads": 32, "vocab_size": 32000, "intermediate_size": 11008}`, "model.config.num_hidden_layers"},
		{"unknown quantization", `{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32000, "intermediate_size": 11008, "quantization_config": {"quant_method": "exl2"}}`, "model.config.quantization_config.quant_method"},
		{"MLA without its rank", `{"architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 7168, "num_hidden_layers": 61, "num_attention_heads": 128, "vocab_size": 129280, "n_routed_experts": 256, "num_experts_per_tok": 8, "moe_intermediate_size": 2048, "intermediate_size": 18432}`, "model.config.kv_lora_rank"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ModelFromConfig([]byte(tc.config))
			if err == nil || pricewatch.ErrorCode(err) != pricewatch.EInvalid || !strings.HasPrefix(err.Error(), tc.field+":") {
				t.Errorf("err = %v, want an invalid-input error naming %s", err, tc.field)
			}
		})
	}
}

// A job spec takes a config.json as published: the same model as the
// preset read from the same file, served in the checkpoint's format.
func TestJobSpec_ModelConfig(t *testing.T) {
	raw, err := configFS.ReadFile("data/configs/gpt-oss-120b.json")
	if err != nil {
		t.Fatal(err)
	}
	spec := JobSpec{Model: &ModelSpec{Config: json.RawMessage(raw)}, Method: "serve"}
	job, err := spec.Resolve(func(string) (Workload, bool) { return Workload{}, false }, func(string) bool { return true }, "USD")
	if err != nil {
		t.Fatal(err)
	}
	want := Presets()["gpt-oss-120b"]
	want.Name, want.SourceURL = "custom", ""
	if job.Model != want {
		t.Errorf("model from config %+v, want the preset's %+v", job.Model, want)
	}
	if job.Precision != PrecisionMXFP4 {
		t.Errorf("precision %q, want the checkpoint's mxfp4", job.Precision)
	}
	for _, bad := range []ModelSpec{
		{Preset: "gpt-oss-120b", Config: json.RawMessage(raw)},
		{ParamsB: 30, Layers: 48, Hidden: 2048, Heads: 32, Experts: 128, ExpertsPerToken: 8},
	} {
		spec := JobSpec{Model: &bad, Method: "serve"}
		if _, err := spec.Resolve(func(string) (Workload, bool) { return Workload{}, false }, func(string) bool { return true }, "USD"); err == nil {
			t.Errorf("%+v: accepted", bad)
		} else {
			t.Logf("%v", err)
		}
	}
}
