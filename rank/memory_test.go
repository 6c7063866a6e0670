package rank

import (
	"math"
	"strings"
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

// gib turns bytes into GiB.
func gib(bytes float64) float64 { return bytes / (1 << 30) }

func TestMemoryPerGPU_Components(t *testing.T) {
	// Activations of seq 2048, micro-batch 1, hidden 4096, 32 layers:
	// checkpointed 32 × 2·s·b·h + 34·s·b·h; without 32 × 34·s·b·h.
	sbh := 2048.0 * 4096
	actCkpt := gib(32*2*sbh + 34*sbh)
	actFull := gib(32 * 34 * sbh)
	adapter := 7e9 * 0.005
	kv1 := gib(524288 * 1280) // one 1280-token sequence: 524,288 bytes per token
	nf4 := 4.127 / 8          // QLoRA's NF4 with double quantization (data/quant.csv)
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
		// 14e9 bytes = 13.04 GiB; 28e9 = 26.08 GiB.
		{"full-ft-7b: 14 + 14 + 28 GB", workload(t, "full-ft-7b"), 1,
			Memory{WeightsGiB: gib(14e9), GradientsGiB: gib(14e9), OptimizerGiB: gib(28e9), ActivationsGiB: actCkpt}},
		{"full-ft-7b on 4 GPUs", workload(t, "full-ft-7b"), 4,
			Memory{WeightsGiB: gib(3.5e9), GradientsGiB: gib(3.5e9), OptimizerGiB: gib(7e9), ActivationsGiB: actCkpt}},
		{"full-ft-7b without checkpointing", noCkpt, 1,
			Memory{WeightsGiB: gib(14e9), GradientsGiB: gib(14e9), OptimizerGiB: gib(28e9), ActivationsGiB: actFull}},
		{"full-ft-7b fp32 optimizer: 16 bytes/param", fp32, 1,
			Memory{WeightsGiB: gib(14e9), GradientsGiB: gib(14e9), OptimizerGiB: gib(84e9), ActivationsGiB: actCkpt}},
		{"lora-7b", workload(t, "lora-7b"), 1,
			Memory{WeightsGiB: gib(14e9 + adapter*2), GradientsGiB: gib(adapter * 2), OptimizerGiB: gib(adapter * 8), ActivationsGiB: actCkpt}},
		{"qlora-7b: NF4 base, 4.127 bits a weight", workload(t, "qlora-7b"), 1,
			Memory{WeightsGiB: gib(7e9*nf4 + adapter*2), GradientsGiB: gib(adapter * 2), OptimizerGiB: gib(adapter * 8), ActivationsGiB: actCkpt}},
		// vLLM's reserve of 1.5 GiB (data/engines.csv) on every GPU.
		{"serve-7b: weights + one 1280-token sequence + reserve", workload(t, "serve-7b"), 1,
			Memory{WeightsGiB: gib(14e9), KVCacheGiB: kv1, ReserveGiB: 1.5}},
		{"serve-7b on 2 GPUs: weights and KV halved, reserve on each", workload(t, "serve-7b"), 2,
			Memory{WeightsGiB: gib(7e9), KVCacheGiB: kv1 / 2, ReserveGiB: 1.5}},
		{"gpus 0 counts as 1", workload(t, "full-ft-7b"), 0,
			Memory{WeightsGiB: gib(14e9), GradientsGiB: gib(14e9), OptimizerGiB: gib(28e9), ActivationsGiB: actCkpt}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := MemoryPerGPU(tc.w, tc.gpus)
			want := tc.want
			want.TotalGiB = want.WeightsGiB + want.GradientsGiB + want.OptimizerGiB + want.ActivationsGiB + want.KVCacheGiB + want.ReserveGiB
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"weights", got.WeightsGiB, want.WeightsGiB},
				{"gradients", got.GradientsGiB, want.GradientsGiB},
				{"optimizer", got.OptimizerGiB, want.OptimizerGiB},
				{"activations", got.ActivationsGiB, want.ActivationsGiB},
				{"kv", got.KVCacheGiB, want.KVCacheGiB},
				{"reserve", got.ReserveGiB, want.ReserveGiB},
				{"total", got.TotalGiB, want.TotalGiB},
			} {
				if !near(f.got, f.want, 1e-9) {
					t.Errorf("%s = %.6f GiB, want %.6f GiB", f.name, f.got, f.want)
				}
			}
		})
	}
}

// Capacity is in the unit the datasheet means: an "80 GB" HBM card holds
// 80 GiB, a GDDR data-centre card with ECC on 15/16 of its GiB, B300's
// "288 GB" is decimal (268.2 GiB); a training job plans on 80% of it.
func TestUsableGiB_EightyPercentOfCapacity(t *testing.T) {
	for _, tc := range []struct {
		card             string
		capacity, usable float64
	}{
		{"RTX-4090", 24, 19.2},    // GeForce: no ECC
		{"T4", 15, 12},            // 16 × 15/16
		{"A100-80GB-SXM", 80, 64}, // HBM, binary
		{"L40S", 45, 36},          // 48 × 15/16
		{"B300-288GB-SXM", 288e9 / (1 << 30), 0.8 * 288e9 / (1 << 30)}, // 268.2 GiB
	} {
		t.Run(tc.card, func(t *testing.T) {
			c := card(t, tc.card)
			if got := c.CapacityGiB(); !near(got, tc.capacity, 1e-9) {
				t.Errorf("CapacityGiB = %v, want %v", got, tc.capacity)
			}
			if got := UsableGiB(c); !near(got, tc.usable, 1e-9) {
				t.Errorf("UsableGiB = %v, want %v", got, tc.usable)
			}
		})
	}
}

func TestFits_RequiredOutcomes(t *testing.T) {
	fp32 := workload(t, "full-ft-7b")
	fp32.OptimizerBytes = OptimizerBytesFP32
	llama70 := Presets()["llama3-70b"]
	serve70 := func(prec string, engine string) Workload {
		return Workload{Name: "serve-70b-" + prec, Model: llama70, Method: MethodServe, Precision: prec,
			WeightBytes: weightBytesFor(MethodServe, prec), InputTokens: 1024, OutputTokens: 256, Engine: engine}
	}
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
		// T4: 15 GiB × 0.9 = 13.5 GiB, less 1.5 reserve, less 13.04 weights.
		{"serve-7b not on a 16 GB card", workload(t, "serve-7b"), "T4", 1, false},
		// 70.6e9 bytes = 65.75 GiB of fp8 weights; vLLM: 0.9 × 80 − 1.5 −
		// 65.75 = 4.75 GiB of KV cache, 15,270 tokens at 327,680 bytes a
		// token: a 1280-token sequence fits. It was run in public.
		{"70B fp8 on one H100 (vLLM)", serve70(PrecisionFP8, ""), "H100-80GB-SXM", 1, true},
		// TensorRT-LLM: 0.9 × (80 − 1.5 − 65.75) = 11.5 GiB.
		{"70B fp8 on one H100 (TensorRT-LLM)", serve70(PrecisionFP8, EngineTRT), "H100-80GB-SXM", 1, true},
		// bf16: 131.5 GiB of weights; two GPUs leave 2 × (72 − 1.5) −
		// 131.5 = 9.5 GiB.
		{"70B bf16 not on one H100", serve70(PrecisionBF16, ""), "H100-80GB-SXM", 1, false},
		{"70B bf16 on two H100", serve70(PrecisionBF16, ""), "H100-80GB-SXM", 2, true},
		{"zero GPUs never fit", workload(t, "qlora-7b"), "H100-80GB-SXM", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := card(t, tc.card)
			if got := Fits(tc.w, c, tc.gpus); got != tc.wantFits {
				t.Errorf("Fits(%s, %s, %d) = %v, want %v (%s)", tc.w.Name, tc.card, tc.gpus, got, tc.wantFits, NoFitReason(tc.w, c, tc.gpus))
			}
			if r := NoFitReason(tc.w, c, max(tc.gpus, 1)); tc.gpus > 0 && (r == "") != tc.wantFits {
				t.Errorf("NoFitReason = %q, want a reason exactly when it does not fit", r)
			}
		})
	}
}

// A refusal says why in GiB. serve-7b on a T4 (vLLM): weights 14e9 B =
// 13.04 GiB, one 1280-token sequence 524,288 × 1280 B = 0.625 GiB, reserve
// 1.5: 15.2 GiB against 0.9 × 15 = 13.5 GiB usable.
func TestNoFitReason_InGiB(t *testing.T) {
	got := NoFitReason(workload(t, "serve-7b"), card(t, "T4"), 1)
	want := "needs 15.2 GiB per GPU on 1 GPU: weights 13.0 + KV cache 0.6 (1 sequence of 1280 tokens) + runtime reserve 1.5 > 13.5 GiB usable on T4 (0.9 of 15.0 GiB)"
	if got != want {
		t.Errorf("NoFitReason =\n %s\nwant\n %s", got, want)
	}
	// full-ft-7b on one RTX 4090: 13.04 + 13.04 + 26.08 + activations
	// (32 × 2 + 34) × 2048 × 4096 B = 0.77 GiB = 52.9 GiB against 19.2.
	got = NoFitReason(workload(t, "full-ft-7b"), card(t, "RTX-4090"), 1)
	if !strings.HasPrefix(got, "needs 52.9 GiB per GPU on 1 GPU (weights 13.0 + gradients 13.0 + optimizer 26.1 + activations 0.8); RTX-4090 has 19.2 GiB usable (80% of 24.0 GiB)") {
		t.Errorf("NoFitReason = %s", got)
	}
}

// GPUs that hold an 8B model's weights, gradients and fp32 Adam state (16
// bytes a parameter: 8.03e9 × 16 = 128.48e9 B = 119.66 GiB) in 80% of
// their capacity, before activations: H100 64 GiB each: 2 (59.8 each);
// L40S 36 GiB: 4 (3 hold 39.9); RTX 4090 19.2 GiB: 7 (6 hold 19.94); T4 12
// GiB: 10 (11.97 each). The reference profiles.csv counts decimal GB
// and gets 3 for H100 (128.48 / 64 GB = 2.007).
func TestMemoryPerGPU_MinGPUs16Bytes(t *testing.T) {
	w := Workload{Name: "full-ft-8b-fp32", Model: llama31_8B(), Method: MethodFull, WeightBytes: 2,
		SeqLen: 2048, MicroBatch: 1, Checkpointing: true, OptimizerBytes: OptimizerBytesFP32}
	for id, want := range map[string]int{"H100-80GB-SXM": 2, "L40S": 4, "RTX-4090": 7, "T4": 10} {
		c := card(t, id)
		got := 0
		for g := 1; g <= 64; g++ {
			m := MemoryPerGPU(w, g)
			if m.WeightsGiB+m.GradientsGiB+m.OptimizerGiB <= UsableGiB(c) {
				got = g
				break
			}
		}
		if got != want {
			t.Errorf("%s: min GPUs = %d, want %d", id, got, want)
		}
	}
}
