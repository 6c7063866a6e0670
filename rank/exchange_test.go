package rank

import (
	"math"
	"strings"
	"testing"
)

// A token's k experts, spread evenly over n ranks (E/n each), lie on
// (n − 1) × (1 − C(E − E/n, k) / C(E, k)) of the other ranks on average.
// Worked by hand from the presets' counts:
//   - Qwen3-30B-A3B (E 128, k 8) over 2 ranks: none on the other rank with
//     chance (64·63·62·61·60·59·58·57)/(128·127·126·125·124·123·122·121)
//     = 0.0030959, so 1 × 0.9969041 = 0.99690 (a per-expert count says
//     k (n − 1)/n = 4);
//   - the same over 8 ranks: (112·111·…·105)/(128·127·…·121) = 0.3325804,
//     7 × 0.6674196 = 4.67194 (per expert: 7);
//   - DeepSeek-V3 (E 256, k 8) over 8: (224·…·217)/(256·…·249) = 0.3381685,
//     7 × 0.6618315 = 4.63282;
//   - Llama 4 Maverick (E 128, k 1) over 8: 7 × 16/128 = 0.875, the
//     per-expert count itself (one expert cannot land twice);
//   - one rank, or a dense model: 0.
func TestModel_RanksReached(t *testing.T) {
	for _, tc := range []struct {
		preset string
		n      int
		want   float64
	}{
		{"qwen3-30b-a3b", 2, 0.99690},
		{"qwen3-30b-a3b", 8, 4.67194},
		{"deepseek-v3", 8, 4.63282},
		{"llama4-maverick-17b-128e", 8, 0.875},
		{"qwen3-30b-a3b", 1, 0},
		{"llama3.1-8b", 8, 0},
	} {
		m, ok := Presets()[tc.preset]
		if !ok {
			t.Fatalf("no preset %s", tc.preset)
		}
		if got := m.RanksReached(tc.n); math.Abs(got-tc.want) > 5e-5 {
			t.Errorf("%s over %d ranks: %.5f other ranks reached, want %.5f", tc.preset, tc.n, got, tc.want)
		}
	}
}

// One MoE layer's token exchange among attention data-parallel ranks, 100
// tokens on each, Qwen3-30B-A3B (hidden 2048), links at the calibrated
// efficiency 0.55 (links.csv rates per direction):
//   - vLLM on 8 × H100 (NVLink 4: 450 × 0.55 = 247.5 GB/s, 8 µs) gathers:
//     each way 8 µs + 100 × 7 × 2048 × 2 B / 247.5 GB/s = 8 + 11.5846 =
//     19.5846 µs, 39.1693 µs out and back;
//   - TensorRT-LLM on 8 × B200 (NVLink 5: 495 GB/s, 8 µs) with NVFP4 GEMMs
//     gathers the quantized tokens (0.5625 B a value) and reduce-scatters
//     16-bit outputs: 8 + 100 × 7 × 2048 × 0.5625 / 495e9 = 9.6291 µs out,
//     8 + 100 × 7 × 2048 × 2 / 495e9 = 13.7923 µs back, 23.4214 µs;
//   - TensorRT-LLM on 16 GB200 of an NVL72 rack (495 GB/s, 10 µs) with
//     16-bit GEMMs: EP 16 > k 8 over a domain wider than a node, so an
//     all-to-all to the 6.184231 ranks reached (RanksReached over 16:
//     15 × (1 − Π(120 − i)/(128 − i)) = 15 × (1 − 0.5877179)): each way
//     10 + 100 × 6.184231 × 2048 × 2 / 495e9 = 15.1173 µs, 30.2346 µs;
//   - the same on 8 GB200 (EP 8 = k) gathers: 2 × (10 + 100 × 7 × 4096 /
//     495e9) = 31.5846 µs.
func TestServing_ExpertExchangeAsTheEngineRunsIt(t *testing.T) {
	if calibrated.linkEff != 0.55 {
		t.Fatalf("link efficiency %.2f: the worked figures assume 0.55", calibrated.linkEff)
	}
	for _, tc := range []struct {
		name, card, engine, precision string
		ep                            int
		wantUS                        float64
	}{
		{"vLLM, 8 × H100", "H100-80GB-SXM", EngineVLLM, "fp8", 8, 39.1693},
		{"TensorRT-LLM, 8 × B200, FP4", "B200-180GB-SXM", EngineTRT, "fp4", 8, 23.4214},
		{"TensorRT-LLM, 16 × GB200", "B200-186GB-GB200", EngineTRT, "bf16", 16, 30.2346},
		{"TensorRT-LLM, 8 × GB200", "B200-186GB-GB200", EngineTRT, "bf16", 8, 31.5846},
	} {
		c := card(t, tc.card)
		w := presetServe(t, "qwen3-30b-a3b", tc.precision)
		w.Engine = tc.engine
		s, _, ok := servingCaseFor(w, c, calibrated)
		if !ok {
			t.Fatalf("%s: no serving case", tc.name)
		}
		lay := Layout{TP: 1, PP: 1, DP: tc.ep, EP: tc.ep}
		copies, _ := exchangeCopies(c, s, tc.ep)
		got, _, ok := expertExchangeSeconds(c, s, lay, 100, copies)
		if !ok || math.Abs(got*1e6-tc.wantUS) > 1e-3 {
			t.Errorf("%s: exchange %.4f µs a layer (ok %v), want %.4f", tc.name, got*1e6, ok, tc.wantUS)
		}
	}
}

// With attention tensor parallel every rank holds every token: experts
// spread over the ranks change what each reads, not what crosses the
// link, which is the all-reduce of the layer's output as in a dense
// layer. TP 8 × EP 8 and TP 8 price the same communication; DP 8 × EP 8
// exchanges tokens instead, and llama.cpp (no expert parallelism) never.
func TestServing_TensorParallelExpertsAllReduce(t *testing.T) {
	c := card(t, "H100-80GB-SXM")
	w := presetServe(t, "qwen3-30b-a3b", "fp8")
	w.MaxSequences, w.Concurrency = 64, 64
	s, _, ok := servingCaseFor(w, c, calibrated)
	if !ok {
		t.Fatal("no serving case")
	}
	comm := func(l Layout) float64 {
		s.layout = l
		r := servingRate(c, s)
		if !r.fits {
			t.Fatalf("%v does not fit", l)
		}
		return r.commT
	}
	if a, b := comm(Layout{TP: 8, PP: 1, EP: 8}), comm(Layout{TP: 8, PP: 1}); math.Abs(a-b) > 1e-15 {
		t.Errorf("TP 8 × EP 8 communicates %.3g s a token, TP 8 %.3g: want the same all-reduces", a, b)
	}
	if !exchanges(s.eng, Layout{TP: 1, PP: 1, DP: 8, EP: 8}) || exchanges(s.eng, Layout{TP: 8, PP: 1, EP: 8}) {
		t.Error("vLLM: DP 8 × EP 8 should exchange tokens and TP 8 × EP 8 not")
	}
	if exchanges(engineFor(EngineLlamaCpp), Layout{TP: 1, PP: 1, DP: 8, EP: 8}) {
		t.Error("llama.cpp runs no expert parallelism, yet exchanges tokens")
	}
}

// A run that turns on an all-to-all backend (DeepEP, pplx) says so with
// expert_all_to_all: vLLM's DP 8 × EP 8 on H100 then sends each token to
// the 4.67194 ranks its experts reach (TestModel_RanksReached), not all
// 7: each way 8 µs + 100 × 4.67194 × 2048 × 2 B / 247.5 GB/s = 15.7318 µs,
// 31.4636 µs a layer against the gather's 39.1693. Through EstimateFor the
// same job is faster with it, each note says how the tokens move, a serving job echoes the switch, and a training job
// refuses it, naming the field.
func TestServing_ExpertAllToAllOnRequest(t *testing.T) {
	c := card(t, "H100-80GB-SXM")
	w := presetServe(t, "qwen3-30b-a3b", "fp8")
	w.ExpertAllToAll = true
	s, _, ok := servingCaseFor(w, c, calibrated)
	if !ok {
		t.Fatal("no serving case")
	}
	copies, byA2A := exchangeCopies(c, s, 8)
	got, _, ok := expertExchangeSeconds(c, s, Layout{TP: 1, PP: 1, DP: 8, EP: 8}, 100, copies)
	if !byA2A {
		t.Error("expert_all_to_all set, yet the exchange is a gather")
	}
	if !ok || math.Abs(got*1e6-31.4636) > 1e-3 {
		t.Errorf("all-to-all exchange %.4f µs a layer (ok %v), want 31.4636", got*1e6, ok)
	}

	lay := Layout{TP: 1, PP: 1, DP: 8, EP: 8}
	req := EstimateRequest{Model: &ModelSpec{Preset: "qwen3-30b-a3b"}, Card: "H100-80GB-SXM", Precision: "fp8",
		GPUs: 8, Layout: &lay, InputTokens: 1000, OutputTokens: 1000, Concurrency: 512}
	gather, err := EstimateFor(req, catalog().Card)
	if err != nil || !gather.Fits {
		t.Fatalf("gather: %v %+v", err, gather)
	}
	req.ExpertAllToAll = true
	a2a, err := EstimateFor(req, catalog().Card)
	if err != nil || !a2a.Fits {
		t.Fatalf("all-to-all: %v %+v", err, a2a)
	}
	if !strings.Contains(gather.Note, "all-gathers the tokens of its 8 ranks") || !strings.Contains(a2a.Note, "by all-to-all to the 4.7 of 7 other ranks") {
		t.Errorf("the notes do not say how the tokens move:\n%s\n%s", gather.Note, a2a.Note)
	}
	if a2a.TokensPerSecond <= gather.TokensPerSecond {
		t.Errorf("all-to-all %.0f tokens/s, gather %.0f: fewer copies should be faster", a2a.TokensPerSecond, gather.TokensPerSecond)
	}
	serveOnlySwitch(t, "expert_all_to_all", func(s *JobSpec) { s.ExpertAllToAll = true },
		func(j Job) bool { return j.ExpertAllToAll && j.Workload.ExpertAllToAll })
}

// serveOnlySwitch checks a serving job's boolean switch: a serving job
// takes it and echoes it (echoed), a training job refuses it with an
// error that starts with the field's name.
func serveOnlySwitch(t *testing.T, field string, set func(*JobSpec), echoed func(Job) bool) {
	t.Helper()
	known := func(string) bool { return true }
	serve, train := JobSpec{Workload: "serve-7b"}, JobSpec{Workload: "lora-7b", Tokens: 1e6}
	set(&serve)
	set(&train)
	if job, err := serve.Resolve(WorkloadByName, known, "USD"); err != nil || !echoed(job) {
		t.Errorf("serving job with %s: %v, echoed %v", field, err, err == nil && echoed(job))
	}
	if _, err := train.Resolve(WorkloadByName, known, "USD"); err == nil || !strings.HasPrefix(err.Error(), field) {
		t.Errorf("training job with %s: %v, want an error naming the field", field, err)
	}
}
