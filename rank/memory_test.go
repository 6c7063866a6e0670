package rank

import (
	"math"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
)

func card(t *testing.T, id string) pricewatch.Card {
	t.Helper()
	c, ok := normalize.DefaultCatalog().Card(id)
	if !ok {
		t.Fatalf("card %s not in catalog", id)
	}
	return c
}

func workload(t *testing.T, name string) Workload {
	t.Helper()
	w, ok := WorkloadByName(name)
	if !ok {
		t.Fatalf("workload %s not built in", name)
	}
	return w
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

func TestKVCacheGB_DesignExample(t *testing.T) {
	for _, tc := range []struct {
		name           string
		model          Model
		context, seqs  int
		bytes, wantGB  float64
		roundedOneDeci float64
	}{
		// 7B, 32 layers, 32 KV heads of 128, 4096 tokens, 4 requests, fp16.
		{"design example", Llama7B(), 4096, 4, 2, 8.589934592, 8.6},
		{"one sequence", Llama7B(), 4096, 1, 2, 2.147483648, 2.1},
		{"fp8 cache", Llama7B(), 4096, 4, 1, 4.294967296, 4.3},
		{"llama-3.1-8b GQA", llama31_8B(), 1280, 1, 2, 131072 * 1280 / 1e9, 0.2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := KVCacheGB(tc.model, tc.context, tc.seqs, tc.bytes)
			if !near(got, tc.wantGB, 1e-9) {
				t.Errorf("KVCacheGB = %.9f, want %.9f", got, tc.wantGB)
			}
			if math.Round(got*10)/10 != tc.roundedOneDeci {
				t.Errorf("KVCacheGB = %.3f, want ≈ %.1f", got, tc.roundedOneDeci)
			}
		})
	}
}

func TestModel_Defaults(t *testing.T) {
	m := Model{ParamsB: 7, Layers: 32, Hidden: 4096, Heads: 32}
	if got, want := m.KVBytesPerToken(2), Llama7B().KVBytesPerToken(2); got != want {
		t.Errorf("KVBytesPerToken with defaulted KV heads and head dim = %v, want %v", got, want)
	}
	if got := llama31_8B().KVBytesPerToken(2); got != 131072 {
		t.Errorf("Llama-3.1-8B KV bytes per token = %v, want 131072 (THROUGHPUT.md: 131 KB)", got)
	}
}

func TestMemoryPerGPU_Components(t *testing.T) {
	// Activations of seq 2048, micro-batch 1, hidden 4096, 32 layers:
	// checkpointed 32 × 2·s·b·h + 34·s·b·h; without 32 × 34·s·b·h.
	sbh := 2048.0 * 4096
	actCkpt := (32*2*sbh + 34*sbh) / 1e9
	actFull := 32 * 34 * sbh / 1e9
	adapter := 7e9 * 0.005
	kv1 := 0.524288 * 1280 / 1000 // one 1280-token sequence: 524,288 bytes per token
	noCkpt := workload(t, "full-ft-7b")
	noCkpt.Checkpointing = false
	fp32 := workload(t, "full-ft-7b")
	fp32.OptimizerBytes = OptimizerBytesFP32
	for _, tc := range []struct {
		name string
		w    Workload
		gpus int
		want Memory
	}{
		{"full-ft-7b: 14 + 14 + 28 GB", workload(t, "full-ft-7b"), 1,
			Memory{WeightsGB: 14, GradientsGB: 14, OptimizerGB: 28, ActivationsGB: actCkpt}},
		{"full-ft-7b on 4 GPUs", workload(t, "full-ft-7b"), 4,
			Memory{WeightsGB: 3.5, GradientsGB: 3.5, OptimizerGB: 7, ActivationsGB: actCkpt}},
		{"full-ft-7b without checkpointing", noCkpt, 1,
			Memory{WeightsGB: 14, GradientsGB: 14, OptimizerGB: 28, ActivationsGB: actFull}},
		{"full-ft-7b fp32 optimizer: 16 bytes/param", fp32, 1,
			Memory{WeightsGB: 14, GradientsGB: 14, OptimizerGB: 84, ActivationsGB: actCkpt}},
		{"lora-7b", workload(t, "lora-7b"), 1,
			Memory{WeightsGB: 14 + adapter*2/1e9, GradientsGB: adapter * 2 / 1e9, OptimizerGB: adapter * 8 / 1e9, ActivationsGB: actCkpt}},
		{"qlora-7b", workload(t, "qlora-7b"), 1,
			Memory{WeightsGB: 3.5 + adapter*2/1e9, GradientsGB: adapter * 2 / 1e9, OptimizerGB: adapter * 8 / 1e9, ActivationsGB: actCkpt}},
		{"serve-7b: weights + one 1280-token sequence", workload(t, "serve-7b"), 1,
			Memory{WeightsGB: 14, KVCacheGB: kv1}},
		// Tensor parallelism splits the KV cache by heads, like the weights.
		{"serve-7b on 2 GPUs: weights and KV halved", workload(t, "serve-7b"), 2,
			Memory{WeightsGB: 7, KVCacheGB: kv1 / 2}},
		{"gpus 0 counts as 1", workload(t, "full-ft-7b"), 0,
			Memory{WeightsGB: 14, GradientsGB: 14, OptimizerGB: 28, ActivationsGB: actCkpt}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := MemoryPerGPU(tc.w, tc.gpus)
			want := tc.want
			want.TotalGB = want.WeightsGB + want.GradientsGB + want.OptimizerGB + want.ActivationsGB + want.KVCacheGB
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"weights", got.WeightsGB, want.WeightsGB},
				{"gradients", got.GradientsGB, want.GradientsGB},
				{"optimizer", got.OptimizerGB, want.OptimizerGB},
				{"activations", got.ActivationsGB, want.ActivationsGB},
				{"kv", got.KVCacheGB, want.KVCacheGB},
				{"total", got.TotalGB, want.TotalGB},
			} {
				if !near(f.got, f.want, 1e-9) {
					t.Errorf("%s = %.6f GB, want %.6f GB", f.name, f.got, f.want)
				}
			}
		})
	}
}

func TestUsableGB_EightyPercent(t *testing.T) {
	for _, tc := range []struct {
		card string
		want float64
	}{
		{"RTX-4090", 19.2}, {"T4", 12.8}, {"A100-80GB-SXM", 64}, {"L40S", 38.4},
	} {
		t.Run(tc.card, func(t *testing.T) {
			if got := UsableGB(card(t, tc.card)); !near(got, tc.want, 1e-9) {
				t.Errorf("UsableGB = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFits_RequiredOutcomes(t *testing.T) {
	fp32 := workload(t, "full-ft-7b")
	fp32.OptimizerBytes = OptimizerBytesFP32
	for _, tc := range []struct {
		name     string
		w        Workload
		card     string
		gpus     int
		wantFits bool
	}{
		{"full-ft-7b not on one 24 GB card", workload(t, "full-ft-7b"), "RTX-4090", 1, false},
		{"full-ft-7b not on one 48 GB card (L40S)", workload(t, "full-ft-7b"), "L40S", 1, false},
		{"full-ft-7b not on one 48 GB card (RTX-A6000)", workload(t, "full-ft-7b"), "RTX-A6000", 1, false},
		{"full-ft-7b on one A100 80GB", workload(t, "full-ft-7b"), "A100-80GB-SXM", 1, true},
		{"full-ft-7b on one H100 80GB", workload(t, "full-ft-7b"), "H100-80GB-SXM", 1, true},
		{"full-ft-7b sharded over 4 RTX-4090", workload(t, "full-ft-7b"), "RTX-4090", 4, true},
		{"full-ft-7b not over 2 RTX-4090", workload(t, "full-ft-7b"), "RTX-4090", 2, false},
		{"full-ft-7b fp32 Adam not on one A100 80GB", fp32, "A100-80GB-SXM", 1, false},
		{"full-ft-7b fp32 Adam over 2 A100 80GB", fp32, "A100-80GB-SXM", 2, true},
		{"lora-7b on a 24 GB card", workload(t, "lora-7b"), "RTX-4090", 1, true},
		{"lora-7b not on a 16 GB card", workload(t, "lora-7b"), "T4", 1, false},
		{"qlora-7b on a 16 GB card", workload(t, "qlora-7b"), "T4", 1, true},
		{"serve-7b on a 24 GB card", workload(t, "serve-7b"), "RTX-4090", 1, true},
		{"serve-7b not on a 16 GB card", workload(t, "serve-7b"), "T4", 1, false},
		{"zero GPUs never fit", workload(t, "qlora-7b"), "H100-80GB-SXM", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := card(t, tc.card)
			if got := Fits(tc.w, c, tc.gpus); got != tc.wantFits {
				t.Errorf("Fits(%s, %s, %d) = %v, want %v (needs %.2f GB per GPU, usable %.2f)",
					tc.w.Name, tc.card, tc.gpus, got, tc.wantFits, MemoryPerGPU(tc.w, tc.gpus).TotalGB, UsableGB(c))
			}
		})
	}
}

// profiles.csv full_ft_8b_min_gpus: GPUs needed to hold weights, gradients
// and Adam state at 16 bytes/parameter, 80% usable, before activations.
func TestMemoryPerGPU_ProfilesMinGPUs(t *testing.T) {
	w := Workload{Name: "full-ft-8b-fp32", Model: llama31_8B(), Method: MethodFull, WeightBytes: 2,
		SeqLen: 2048, MicroBatch: 1, Checkpointing: true, OptimizerBytes: OptimizerBytesFP32}
	for _, row := range readProfiles(t) {
		t.Run(row["canonical_id"], func(t *testing.T) {
			c := card(t, row["canonical_id"])
			want := int(num(t, row["full_ft_8b_min_gpus"]))
			got := 0
			for g := 1; g <= 64; g++ {
				m := MemoryPerGPU(w, g)
				if m.WeightsGB+m.GradientsGB+m.OptimizerGB <= UsableGB(c) {
					got = g
					break
				}
			}
			if got != want {
				t.Errorf("min GPUs = %d, want %d", got, want)
			}
		})
	}
}
