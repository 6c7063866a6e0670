package rank

import (
	"math"
	"testing"
)

// dense8BOneKVHead is the prefill tests' model: 8 B parameters, no
// vocabulary (no embedding lookup), one KV head (a small cache).
var dense8BOneKVHead = Model{Name: "dense-8b", ParamsB: 8, Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 1, HeadDim: 128}

// SGLang runs a new prompt in a forward pass of its own (engines.csv
// prefill_pass "own"), which every running sequence waits for; vLLM,
// TensorRT-LLM and llama.cpp run prompts inside their decode steps. The
// pass costs what a step costs besides its FLOPs: its reads, where they
// outlast its FLOPs, and the layers' fixed time.
//
// An 8 B dense model (no vocabulary: no embedding lookup), 32 layers, one
// KV head (a small cache, so 256 long sequences fit), in bf16 on one H100 SXM (3,350 GB/s, 989 TFLOPS), 256 sequences in flight:
//
//	reads of a pass   16e9 B / (0.70 × 3350e9 B/s)           = 6.823 ms
//	layers' fixed     32 × 75 µs                             = 2.400 ms
//	prefill rate      min(0.95, 1.2 × 0.48) × 989e12         = 5.697e14 FLOP/s
//
// 16-token prompts, 64 output tokens: 256/64 = 4 prompts arrive per decode
// step, so a pass takes P = 64 tokens, 16/(64 × 64) = 1/256 passes per
// output token. Its FLOPs, 64 × 2 × 8e9 / 5.697e14 = 1.797 ms (and its
// attention's, under 0.1% of that), are shorter than its reads:
// (6.823 − 1.797 + 2.400) ms / 256 = 29.01 µs per output token.
//
// 8,192-token prompts: 4 × 8,192 tokens exceed SGLang's
// --max-prefill-tokens, 16,384, so P = 16,384 and 8192/(16384 × 64) =
// 1/128 passes per token; 16,384 tokens compute for 460 ms, longer than
// the reads, so only the fixed time is extra: 2.400 ms / 128 = 18.75 µs.
func TestServing_SGLangPaysForItsOwnPrefillPasses(t *testing.T) {
	c := card(t, "H100-80GB-SXM")
	m := dense8BOneKVHead
	for _, tc := range []struct {
		isl    int
		wantUS float64
	}{
		{16, 29.01},
		{8192, 18.75},
	} {
		rate := map[string]servingResult{}
		for _, eng := range []string{EngineSGLang, EngineVLLM, EngineTRT} {
			w := Workload{Name: "pass", Model: m, Method: MethodServe, WeightBytes: 2, Precision: PrecisionBF16,
				Engine: eng, InputTokens: tc.isl, OutputTokens: 64, MaxSequences: 256, Concurrency: 256}
			s, _, ok := servingCaseFor(w, c, calibrated)
			if !ok {
				t.Fatalf("%s: no serving case", eng)
			}
			s.layout = Layout{TP: 1, PP: 1}
			r := servingRate(c, s)
			if !r.fits || r.seqs != 256 {
				t.Fatalf("ISL %d, %s: fits %v at %.0f sequences, want 256: %+v", tc.isl, eng, r.fits, r.seqs, r.mem)
			}
			rate[eng] = r
		}
		if got := rate[EngineSGLang].passT * 1e6; math.Abs(got/tc.wantUS-1) > 0.005 {
			t.Errorf("ISL %d: SGLang's prefill passes cost %.3f µs per output token, want %.3f", tc.isl, got, tc.wantUS)
		}
		for _, eng := range []string{EngineVLLM, EngineTRT} {
			if p := rate[eng].passT; p != 0 {
				t.Errorf("ISL %d: %s mixes prompts into decode steps, yet pays %.3g s for prefill passes", tc.isl, eng, p)
			}
		}
		// All else equal at 256 sequences, SGLang's time per token is
		// vLLM's plus the passes.
		d := 1/rate[EngineSGLang].tps - 1/rate[EngineVLLM].tps
		if math.Abs(d/rate[EngineSGLang].passT-1) > 1e-9 {
			t.Errorf("ISL %d: SGLang is %.4g s per token slower than vLLM, want its passes' %.4g", tc.isl, d, rate[EngineSGLang].passT)
		}
	}
}

// A disaggregated decode group (every prompt prefilled elsewhere) runs no
// prefill pass.
func TestServing_NoPrefillPassWithoutPrompts(t *testing.T) {
	c := card(t, "H100-80GB-SXM")
	w := Workload{Name: "decode", Model: dense8BOneKVHead, Method: MethodServe, WeightBytes: 2, Precision: PrecisionBF16,
		Engine: EngineSGLang, InputTokens: 1024, OutputTokens: 64, MaxSequences: 256, Concurrency: 256, CachedPromptShare: 1}
	s, _, ok := servingCaseFor(w, c, calibrated)
	if !ok {
		t.Fatal("no serving case")
	}
	s.layout = Layout{TP: 1, PP: 1}
	if r := servingRate(c, s); !r.fits || r.passT != 0 {
		t.Errorf("fits %v, prefill passes %.3g s per token, want 0", r.fits, r.passT)
	}
}
