package rank

import (
	"math"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
)

// servingAt is the serving result of a workload held at exactly b
// concurrent sequences on one GPU of the card.
func servingAt(t *testing.T, w Workload, c pricewatch.Card, b int) servingResult {
	t.Helper()
	w.MaxSequences, w.Concurrency = b, b
	s, _, ok := servingCaseFor(w, c, calibrated)
	if !ok {
		t.Fatalf("%s on %s: no serving case", w.Model.Name, c.ID)
	}
	s.layout = Layout{TP: 1, PP: 1}
	r := servingRate(c, s)
	if !r.fits || r.seqs != float64(b) {
		t.Fatalf("%s on %s at %d sequences: fits %v, %.1f sequences", w.Model.Name, c.ID, b, r.fits, r.seqs)
	}
	return r
}

func presetServe(t *testing.T, preset, precision string) Workload {
	t.Helper()
	job, err := JobSpec{Model: &ModelSpec{Preset: preset}, Method: "serve", Precision: precision, Context: 640, OutputTokens: 128}.
		Resolve(func(string) (Workload, bool) { return Workload{}, false }, func(string) bool { return true }, "USD")
	if err != nil {
		t.Fatal(err)
	}
	return job.Workload
}

// A decode step reads the dense part and the experts its tokens touch: E ·
// (1 − (1 − k/E)^B) of E per layer. Worked from the presets' counts
// (hfconfig_test.go):
//
// The input embedding is a lookup: a step reads one row of it per token,
// so the dense part read is the dense weights less that table. Requests of
// 512 tokens in, 128 out, so that 256 of them fit one H100.
//
// Qwen3-30B-A3B in fp8 (1 byte a weight): dense 1.541 GB less the 151,936 ×
// 2,048 embedding (0.311 GB) = 1.230 GB read, experts 28.991 GB, k/E =
// 8/128 = 1/16.
//
//	B    touched = 1 − (15/16)^B      step bytes = 1.230 + touched × 28.991 GB
//	1    0.0625                       3.042 (the active parameters less the lookup)
//	8    1 − 0.59672 = 0.40328       12.921
//	64   1 − 0.016077 = 0.98392      29.755
//	256  1 − 6.7e-8                  30.221 (every expert)
//
// gpt-oss-120b in its MXFP4 (experts 4.25 bits = 0.53125 B, the rest bf16):
// dense 4.2545 GB less the 201,088 × 2,880 bf16 embedding (1.158 GB) =
// 3.096 GB read, experts 60.914 GB, k/E = 4/128 = 1/32.
//
//	B    touched = 1 − (31/32)^B      step bytes = 3.096 + touched × 60.914 GB
//	1    0.03125                      5.000 (OpenAI's 5.1B active, mostly 16-bit)
//	8    1 − 0.77570 = 0.22430       16.759
//	64   1 − 0.13108 = 0.86892       56.025
//	256  1 − 0.000295 = 0.99970      63.992
func TestMoE_WeightReadsSweep(t *testing.T) {
	h100 := card(t, "H100-80GB-SXM")
	for _, tc := range []struct {
		preset, precision string
		want              map[int][2]float64 // B → touched share, step bytes (GB)
	}{
		{"qwen3-30b-a3b", PrecisionFP8, map[int][2]float64{1: {0.0625, 3.042}, 8: {0.40328, 12.921}, 64: {0.98392, 29.755}, 256: {1, 30.221}}},
		{"gpt-oss-120b", "", map[int][2]float64{1: {0.03125, 5.000}, 8: {0.22430, 16.759}, 64: {0.86892, 56.025}, 256: {0.99970, 63.992}}},
	} {
		w := presetServe(t, tc.preset, tc.precision)
		prevBytes, prevTPS := 0.0, 0.0
		for _, b := range []int{1, 8, 64, 256} {
			r := servingAt(t, w, h100, b)
			want := tc.want[b]
			step := r.stepBytes * float64(b) / 1e9
			if !near(r.touched, want[0], 0.0005) || !near(step, want[1], 0.001) {
				t.Errorf("%s B=%d: touched %.5f, step %.3f GB; want %.5f, %.3f (worked above)", tc.preset, b, r.touched, step, want[0], want[1])
			}
			if step <= prevBytes || r.tps <= prevTPS {
				t.Errorf("%s B=%d: step %.3f GB, %.0f tok/s: want both above B's predecessor (%.3f, %.0f)", tc.preset, b, step, r.tps, prevBytes, prevTPS)
			}
			prevBytes, prevTPS = step, r.tps
		}
	}
}

// gpt-oss-120b as published (MXFP4 experts) fits one 80 GB card with room
// for long contexts: weights 4.2545 + 60.914 GB = 65.17 GB = 60.69 GiB
// against vLLM's 0.9 × 80 GiB − 1.5 GiB reserve = 70.5 GiB. Its 18
// sliding-window layers hold at most 128 tokens: a 128k-token sequence is
// 18 × 131,072 × 2,048 B + 18 × 128 × 2,048 B = 4.837 GB (4.50 GiB), not
// twice that.
func TestMoE_GptOss120bFitsOneH100(t *testing.T) {
	w := presetServe(t, "gpt-oss-120b", "")
	h100 := card(t, "H100-80GB-SXM")
	w.Concurrency = 1
	w.InputTokens, w.OutputTokens = 131072-1024, 1024
	if !Fits(w, h100, 1) {
		t.Fatalf("gpt-oss-120b at 128k on one H100: %s", NoFitReason(w, h100, 1))
	}
	s, prec, _ := servingCaseFor(w, h100, calibrated)
	if !prec.WeightOnly || prec.Name != PrecisionBF16 {
		t.Errorf("precision on H100: %+v, want MXFP4 weight-only in bf16 (no FP4 tensor cores)", prec)
	}
	_, need, mem := servingKV(h100, s, Layout{TP: 1, PP: 1})
	if !near(mem.WeightsGiB, 65.169e9/pricewatch.BytesPerGiB, 0.001) {
		t.Errorf("weights %.2f GiB, want 60.69", mem.WeightsGiB)
	}
	if !near(need/1e9, 4.837, 0.001) {
		t.Errorf("KV of one 128k sequence %.3f GB, want 4.837 (sliding layers bounded by the window)", need/1e9)
	}
	// Three such sequences do not fit (70.5 − 60.69 = 9.8 GiB < 3 × 4.50).
	w.Concurrency = 3
	if Fits(w, h100, 1) {
		t.Errorf("three 128k sequences fit one H100: want a refusal in GiB")
	} else if why := NoFitReason(w, h100, 1); why == "" {
		t.Errorf("no reason given")
	} else {
		t.Logf("refusal: %s", why)
	}
}

// No estimate beyond a physical limit, for every preset on every card at 1
// to 8 GPUs in the engine's default layout: a GPU generates at most its
// dense peak ÷ 2N_active tokens a second, and decoding at most B ×
// bandwidth ÷ the bytes a step reads.
func TestEstimate_PresetPhysicalLimits(t *testing.T) {
	cat := catalog()
	checked := 0
	for name, m := range Presets() {
		w := Workload{Name: name, Model: m, Method: MethodServe, WeightBytes: 2, Precision: PrecisionBF16, InputTokens: 1024, OutputTokens: 256}
		if m.Quantization != "" {
			w.Precision = m.Quantization
			w.WeightBytes = weightBytesFor(MethodServe, w.Precision)
		}
		for _, id := range cat.IDs() {
			c, _ := cat.Card(id)
			for g := 1; g <= 8; g *= 2 {
				s, prec, ok := servingCaseFor(w, c, calibrated)
				if !ok {
					continue
				}
				s.layout = DefaultLayout(m, c, g)
				r := servingRate(c, s)
				if !r.fits {
					continue
				}
				checked++
				compute := prec.PeakTFLOPS * 1e12 / (2 * m.ActiveParams())
				memory := r.seqs / float64(s.layout.norm().PP) * c.BandwidthGBs * 1e9 / (r.stepBytes * r.seqs / float64(s.layout.norm().PP))
				if r.tps > compute*(1+1e-9) || r.tps > memory*(1+1e-9) || math.IsNaN(r.tps) {
					t.Errorf("%s on %d × %s (%s): %.1f tok/s per GPU, limits: compute %.1f, memory %.1f", name, g, id, s.layout, r.tps, compute, memory)
				}
			}
		}
	}
	if checked < 1000 {
		t.Errorf("only %d estimates checked", checked)
	}
	t.Logf("%d preset × card × GPU estimates within their physical limits", checked)
}

// Training a mixture-of-experts: FLOPs on the active parameters, memory
// and optimizer state on every expert, and on several GPUs the expert
// all-to-alls. Qwen3-30B-A3B (30.53B total, 3.35B active) trained in full
// at seq 2048: 6 × 3.35e9 = 20.1 GFLOP of linear layers a token (a dense
// 30B would be 183), while bf16 weights, gradients and AdamW moments of
// all 30.53B take 8 bytes each, 244.3 GB. With the activations of one
// 2,048-token sequence (48 layers × 34 × 2,048 × 2,048 B = 6.375 GiB), two
// H100s need 113.7 + 6.4 GiB each, over the 64 GiB usable (80% of 80);
// four need 56.9 + 6.4 = 63.3 GiB, and fit.
func TestMoE_Training(t *testing.T) {
	w := Workload{Name: "ft-moe", Model: Presets()["qwen3-30b-a3b"], Method: MethodFull, WeightBytes: 2, Precision: PrecisionBF16,
		SeqLen: 2048, MicroBatch: 1, Checkpointing: false}
	lin, _ := trainingFLOPs(w)
	if !near(lin/1e9, 6*3.353, 0.001) {
		t.Errorf("linear FLOPs a token %.2f G, want 6 × 3.353", lin/1e9)
	}
	h100 := card(t, "H100-80GB-SXM")
	if m := MemoryPerGPU(w, 4); !near(m.WeightsGiB+m.GradientsGiB+m.OptimizerGiB, 30.532e9*8/4/pricewatch.BytesPerGiB, 0.001) {
		t.Errorf("state per GPU on 4: %.1f GiB, want 8 B × 30.53B / 4", m.WeightsGiB+m.GradientsGiB+m.OptimizerGiB)
	}
	if Fits(w, h100, 2) || !Fits(w, h100, 4) {
		t.Errorf("fits 2 × H100 %v, 4 × H100 %v; want no, yes", Fits(w, h100, 2), Fits(w, h100, 4))
	}
	// Expert all-to-alls on 8 H100s (NVLink 4: 450 GB/s × 0.55 link
	// efficiency, 8 µs): each GPU sends its 2,048 tokens × 8 experts ×
	// 2,048 × 2 B = 67.1 MB, 7/8 of it across: 8 µs + 58.7 MB / 247.5 GB/s
	// = 245.25 µs, four per MoE layer, 48 layers: 47.09 ms a micro-batch.
	_, st, ok := trainingRate(h100, w, 8, calibrated)
	if !ok || !near(st.a2a*1e3, 47.09, 0.01) {
		t.Errorf("all-to-alls %.2f ms a micro-batch, want 47.09 (worked above)", st.a2a*1e3)
	}
}

// Formats as the engines run them (data/formats.csv): gpt-oss's MXFP4
// runs natively on Blackwell, weight-only on Hopper and Ampere, not at all
// in vLLM on Volta (its weight-only kernels need Ampere) but in llama.cpp
// (GGML's MXFP4); an FP8 checkpoint runs weight-only on Ampere in vLLM and
// is refused, with the reason, by TensorRT-LLM and llama.cpp.
func TestFormats_AsEnginesRunThem(t *testing.T) {
	oss := presetServe(t, "gpt-oss-120b", "")
	fp8 := presetServe(t, "qwen3-30b-a3b", PrecisionFP8)
	with := func(w Workload, engine string) Workload { w.Engine = engine; return w }
	for _, tc := range []struct {
		name       string
		w          Workload
		card       string
		ok, weight bool
		compute    string
		why        string
	}{
		{"mxfp4 on B200", oss, "B200-180GB-SXM", true, false, PrecisionFP4, ""},
		{"mxfp4 on H100", oss, "H100-80GB-SXM", true, true, PrecisionBF16, ""},
		{"mxfp4 on A100", oss, "A100-80GB-SXM", true, true, PrecisionBF16, ""},
		{"mxfp4 on V100 in vLLM", oss, "V100-32GB-SXM2", false, false, "", "need Ampere"},
		{"mxfp4 on V100 in llama.cpp", with(oss, EngineLlamaCpp), "V100-32GB-SXM2", true, true, PrecisionFP16, ""},
		{"fp8 on A100 in vLLM", fp8, "A100-80GB-SXM", true, true, PrecisionBF16, ""},
		{"fp8 on A100 in TensorRT-LLM", with(fp8, EngineTRT), "A100-80GB-SXM", false, false, "", "FP8 needs Ada"},
		{"fp8 in llama.cpp", with(fp8, EngineLlamaCpp), "H100-80GB-SXM", false, false, "", "GGUF has no FP8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := card(t, tc.card)
			p, ok := PrecisionOn(tc.w, c)
			if ok != tc.ok || p.WeightOnly != tc.weight || p.Name != tc.compute || !strings.Contains(p.Why, tc.why) {
				t.Errorf("PrecisionOn = %+v, %v; want ok %v, weight-only %v, %q, why containing %q", p, ok, tc.ok, tc.weight, tc.compute, tc.why)
			}
			if !ok && (NoFitReason(tc.w, c, 8) != p.Why || p.Code == "") {
				t.Errorf("refusal: NoFitReason %q, code %q; want the same reason and a bounded code", NoFitReason(tc.w, c, 8), p.Code)
			}
		})
	}
}

// A GGUF k-quant of gpt-oss keeps its MXFP4 experts (llama.cpp's
// converter), so gpt-oss-20b in Q4_K_M is (20.91 − 19.11)B × 0.6125 B +
// 19.11B × 0.53125 B = 1.10 + 10.15 = 11.25 GB: it runs on a 12 GB RTX
// 3060, as geerlingguy's published run did (throughput.csv), where 20.91B
// × 4.9 bits (12.8 GB) would not fit.
func TestMoE_GptOssGGUFKeepsMXFP4Experts(t *testing.T) {
	w := presetServe(t, "gpt-oss-20b", PrecisionQ4KM)
	w.Engine, w.MaxSequences = EngineLlamaCpp, 1
	d, x := w.weightBytes()
	if !near((d+x)/1e9, 11.25, 0.01) {
		t.Errorf("weights %.2f GB, want 11.25 (worked above)", (d+x)/1e9)
	}
	if c := card(t, "RTX-3060"); !Fits(w, c, 1) {
		t.Errorf("does not fit an RTX 3060: %s", NoFitReason(w, c, 1))
	}
}

// llama.cpp's "MXFP4 MoE" GGUF of gpt-oss (ggml-org's conversions, the
// files its gpt-oss guide runs) stores the weights besides the experts in
// Q8_0, not in the checkpoint's 16 bits. llama-bench prints a file's size
// (ggml-org/llama.cpp benches/dgx-spark.md @4c7e9893): "gpt-oss 20B MXFP4
// MoE | 11.27 GiB | 20.91 B", "gpt-oss 120B MXFP4 MoE | 59.02 GiB |
// 116.83 B"; the 20B conversion with an F16 rest is "12.83 GiB"
// (mmontes11/llm-bench README @6e691bcc). From the presets' counts (20b:
// 19.110B expert and 1.798B other weights; 120b: 114.662B and 2.127B):
//
//	20b, llama.cpp:  19.110 × 4.25/8 + 1.798 × 8.5/8 = 10.152 + 1.910 = 12.062 GB = 11.23 GiB
//	20b, vLLM:       10.152 + 1.798 × 2              = 10.152 + 3.595 = 13.747 GB = 12.80 GiB
//	120b, llama.cpp: 114.662 × 4.25/8 + 2.127 × 8.5/8 = 60.914 + 2.260 = 63.174 GB = 58.84 GiB
//
// each within 0.5% of its file (the rest is F32 norms, biases and sinks).
// The rates differ as the bytes do: tg128 on one RTX PRO 4000 Blackwell is
// 109.68 t/s from the Q8_0-rest file, 84.96 from the F16 one (mmontes11).
func TestMoE_LlamaCppMXFP4FileStoresTheRestInQ80(t *testing.T) {
	for _, tc := range []struct {
		preset, engine string
		gib            float64
	}{{"gpt-oss-20b", EngineLlamaCpp, 11.23}, {"gpt-oss-20b", EngineVLLM, 12.80}, {"gpt-oss-120b", EngineLlamaCpp, 58.84}} {
		w := presetServe(t, tc.preset, PrecisionMXFP4)
		w.Engine = tc.engine
		d, x := w.weightBytes()
		if got := (d + x) / pricewatch.BytesPerGiB; !near(got, tc.gib, 0.01) {
			t.Errorf("%s on %s: weights %.3f GiB, want %.2f (worked above)", tc.preset, tc.engine, got, tc.gib)
		}
	}
}

// A job's concurrency is the requests in flight to the whole group, not to
// each attention data-parallel replica. Qwen3-30B-A3B in fp8 on 8 × H100
// as DEP8 (attention over 8 replicas, experts over all 8 GPUs) at 64
// requests in flight runs 64 sequences, 8 per replica; before, the cap
// applied per replica and the group was priced at up to 8 × 64 = 512.
// The same job on TP1 (one replica) runs its 64, unchanged.
func TestServing_ConcurrencyIsTheGroupsTotal(t *testing.T) {
	c, ok := catalog().Card("H100-80GB-SXM")
	if !ok {
		t.Fatal("no H100-80GB-SXM")
	}
	w := presetServe(t, "qwen3-30b-a3b", "fp8")
	w.MaxSequences, w.Concurrency = 64, 64
	s, _, ok := servingCaseFor(w, c, calibrated)
	if !ok {
		t.Fatal("no serving case")
	}
	for _, lay := range []Layout{{TP: 1, PP: 1, DP: 8, EP: 8}, {TP: 1, PP: 1}} {
		s.layout = lay
		r := servingRate(c, s)
		if !r.fits || r.seqs != 64 {
			t.Errorf("%s at 64 requests in flight: fits %v, %.0f sequences, want 64", lay, r.fits, r.seqs)
		}
	}
}

// An attention data-parallel group whose experts span its ranks waits
// for its busiest rank every step: it keeps the engine's adp_balance of
// the rate it would have were every step balanced (engines.csv: vLLM 0.90,
// a DEFAULT; TensorRT-LLM 0.65, its balancer off by default), or
// AttentionDPBalance (0.90) where the run turns the balancer on.
// Qwen3-30B-A3B in fp8 on 8 × H100 at 256 requests in flight: as DP 8 ×
// EP 8 under vLLM 0.90 of the balanced rate, under TensorRT-LLM 0.65, and
// 0.90 with its balancer; as TP 8 × EP 8 (one attention rank) and as
// eight replicas without expert parallelism nothing waits.
func TestServing_AttentionDPWaitsForItsBusiestRank(t *testing.T) {
	c := card(t, "H100-80GB-SXM")
	for _, tc := range []struct {
		engine   string
		balancer bool
		lay      Layout
		want     float64
	}{
		{"", false, Layout{TP: 1, PP: 1, DP: 8, EP: 8}, 0.90},
		{EngineTRT, false, Layout{TP: 1, PP: 1, DP: 8, EP: 8}, 0.65},
		{EngineTRT, true, Layout{TP: 1, PP: 1, DP: 8, EP: 8}, 0.90},
		{EngineTRT, false, Layout{TP: 8, PP: 1, EP: 8}, 1},
		{"", false, Layout{TP: 8, PP: 1, EP: 8}, 1},
		{"", false, Layout{TP: 1, PP: 1, DP: 8}, 1},
	} {
		w := presetServe(t, "qwen3-30b-a3b", "fp8")
		w.MaxSequences, w.Concurrency, w.Engine, w.BalancedAttentionDP = 256, 256, tc.engine, tc.balancer
		s, _, ok := servingCaseFor(w, c, calibrated)
		if !ok {
			t.Fatal("no serving case")
		}
		balanced := s
		balanced.eng.adpBalance, balanced.balancedADP = 1, false
		s.layout, balanced.layout = tc.lay, tc.lay
		got, ref := servingRate(c, s), servingRate(c, balanced)
		if !got.fits || ref.tps <= 0 || math.Abs(got.tps/ref.tps-tc.want) > 1e-9 {
			t.Errorf("%q balancer %v %v: %.1f of %.1f tokens/s balanced, want %.2f of it", tc.engine, tc.balancer, tc.lay, got.tps, ref.tps, tc.want)
		}
	}
}

// A job that turns TensorRT-LLM's attention-DP balancer on gets
// AttentionDPBalance (0.90) of the balanced rate instead of the engine's
// default 0.65 (engines.csv): the same DP 8 × EP 8 estimate is 0.90 / 0.65
// = 1.3846 times faster. A TP 8 layout has one attention rank and does not
// move. The job echoes the switch, and a training job refuses it.
func TestEstimate_AttentionDPBalancer(t *testing.T) {
	for _, tc := range []struct {
		lay  Layout
		want float64
	}{
		{Layout{TP: 1, PP: 1, DP: 8, EP: 8}, 0.90 / 0.65},
		{Layout{TP: 8, PP: 1}, 1},
	} {
		lay := tc.lay
		req := EstimateRequest{Model: &ModelSpec{Preset: "qwen3-30b-a3b"}, Card: "H100-80GB-SXM", Engine: "tensorrt-llm",
			GPUs: 8, Layout: &lay, InputTokens: 1000, OutputTokens: 1000, Concurrency: 512}
		off, err := EstimateFor(req, catalog().Card)
		if err != nil || !off.Fits {
			t.Fatalf("%v: %v %+v", tc.lay, err, off)
		}
		req.AttentionDPBalance = true
		on, err := EstimateFor(req, catalog().Card)
		if err != nil || !on.Fits {
			t.Fatalf("%v balanced: %v %+v", tc.lay, err, on)
		}
		if got := on.TokensPerSecond / off.TokensPerSecond; math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%v: balancer on / off = %.4f, want %.4f", tc.lay, got, tc.want)
		}
	}
	serveOnlySwitch(t, "attention_dp_balance", func(s *JobSpec) { s.AttentionDPBalance = true },
		func(j Job) bool { return j.AttentionDPBalance && j.Workload.BalancedAttentionDP })
}

// NVFP4 experts read slower than FP8 ones in TensorRT-LLM's CUTLASS MoE
// kernels, by a share that depends on the card (data/moe_read_rates.csv,
// from the kernels' own timings). A decode step reads its touched experts
// at moeEff × that share of the dense rate, so the experts' read time
// grows by 1/share: with the share halved instead (0.5) it grows by 1/0.5
// − 1 = 1 unit of the FP8-rate read time, with B200's 0.54 by 1/0.54 − 1 =
// 0.851852 units. Cards without timings, FP8 experts and other families
// read at 1.
func TestServing_NVFP4ExpertsReadAtTheirTimedRate(t *testing.T) {
	for _, tc := range []struct {
		family, format, card string
		want                 float64
	}{
		{MoEKernelCUTLASS, PrecisionFP4, "B200-180GB-SXM", 0.54},
		{MoEKernelCUTLASS, PrecisionFP4, "B300-288GB-GB300", 0.71},
		{MoEKernelCUTLASS, PrecisionFP4, "RTX-PRO-6000-SERVER", 0.90},
		{MoEKernelCUTLASS, PrecisionFP4, "RTX-PRO-6000-WS", 1}, // no timings of that edition
		{MoEKernelCUTLASS, PrecisionFP8, "B200-180GB-SXM", 1},
		{MoEKernelTriton, PrecisionFP4, "B200-180GB-SXM", 1},
	} {
		if got := moeReadRatio(tc.family, tc.format, tc.card); got != tc.want {
			t.Errorf("moeReadRatio(%s, %s, %s) = %v, want %v", tc.family, tc.format, tc.card, got, tc.want)
		}
	}

	for key := range moeReadRatios() {
		if _, ok := catalog().Card(key[2]); !ok {
			t.Errorf("moe_read_rates.csv %v: no such card in the catalog", key)
		}
	}

	c := card(t, "B200-180GB-SXM")
	w := presetServe(t, "qwen3-30b-a3b", PrecisionFP4)
	w.Engine, w.MaxSequences, w.Concurrency = EngineTRT, 64, 64
	s, _, ok := servingCaseFor(w, c, calibrated)
	if !ok || s.eng.moeKernel != MoEKernelCUTLASS || s.expertRead != 0.54 {
		t.Fatalf("serving case: ok %v, family %q, expert read %v; want cutlass-moe at 0.54", ok, s.eng.moeKernel, s.expertRead)
	}
	s.layout = Layout{TP: 1, PP: 1}
	at := func(share float64) float64 {
		v := s
		v.expertRead = share
		r := servingRate(c, v)
		if !r.fits || r.seqs != 64 {
			t.Fatalf("share %v: fits %v at %v sequences, want 64", share, r.fits, r.seqs)
		}
		return r.weightsT
	}
	fp8Rate, half, timed := at(1), at(0.5), at(0.54)
	if got := (timed - fp8Rate) / (half - fp8Rate); math.Abs(got-0.851852) > 1e-5 {
		t.Errorf("the experts' extra read time at 0.54 is %.6f units of the FP8-rate time, want 0.851852", got)
	}

	// The estimate says so; FP8 experts on the same card carry no such words.
	for _, tc := range []struct {
		precision string
		says      bool
	}{{PrecisionFP4, true}, {PrecisionFP8, false}} {
		res, err := EstimateFor(EstimateRequest{Model: &ModelSpec{Preset: "qwen3-30b-a3b"}, Card: "B200-180GB-SXM", Engine: "tensorrt-llm",
			Precision: tc.precision, InputTokens: 1024, OutputTokens: 1024}, catalog().Card)
		if err != nil || !res.Fits {
			t.Fatalf("%s: %v %+v", tc.precision, err, res)
		}
		if got := strings.Contains(res.Note, "experts at 0.54 of the cutlass-moe kernels' fp8 read rate on B200-180GB-SXM"); got != tc.says {
			t.Errorf("%s: note %q; says the timed read rate: %v, want %v", tc.precision, res.Note, got, tc.says)
		}
	}
}

// A latent-attention layer costs every decode step MLALayerMicros more
// than a grouped-query one, shared by the step's sequences. By hand:
// DeepSeek-R1 has 61 layers, all MLA; at one sequence on 8 × B200 (TP 8,
// one stage) a step gains 61 × 20 µs = 1.22 ms, at 16 sequences 1.22 /
// 16 = 0.07625 ms per sequence. Qwen3-235B-A22B (grouped-query attention)
// gains nothing.
func TestServing_MLALayersCostAFixedTime(t *testing.T) {
	c := card(t, "B200-180GB-SXM")
	for _, tc := range []struct {
		preset string
		seqs   int
		wantMS float64
	}{
		{"deepseek-r1", 1, 1.22},
		{"deepseek-r1", 16, 1.22 / 16},
		{"qwen3-235b-a22b", 1, 0},
	} {
		w := presetServe(t, tc.preset, "fp8")
		w.MaxSequences, w.Concurrency = tc.seqs, tc.seqs
		s, _, ok := servingCaseFor(w, c, calibrated)
		if !ok {
			t.Fatalf("%s: no serving case", tc.preset)
		}
		s.layout = Layout{TP: 8, PP: 1}
		without := s
		without.k.mlaLayerUS = 0
		got, ref := servingRate(c, s), servingRate(c, without)
		if !got.fits || !ref.fits {
			t.Fatalf("%s: does not fit", tc.preset)
		}
		// stepT is the fixed time per output token of the group: a
		// step's, shared by its sequences.
		if d := (got.stepT - ref.stepT) * 1e3; math.Abs(d-tc.wantMS) > 1e-6 {
			t.Errorf("%s at %d sequences: the MLA layers add %.4f ms per sequence, want %.4f", tc.preset, tc.seqs, d, tc.wantMS)
		}
	}
}

// The MoE constants belong to a kernel family (engines.csv moe_kernel),
// not to an engine: SGLang's fused_moe_triton is adapted from vLLM's
// fused_moe, so both engines get one expert-slice constant, and every
// engine that runs grouped GEMMs names a family the calibration fitted or
// leaves it at the prior. llama.cpp runs no grouped GEMMs: the slice
// constant does not touch it, so an absurd value changes nothing there,
// while it slows the Triton engines.
func TestMoE_ConstantsPerKernelFamily(t *testing.T) {
	vllm, sgl, trt, lcpp := engineFor(EngineVLLM), engineFor(EngineSGLang), engineFor(EngineTRT), engineFor(EngineLlamaCpp)
	if vllm.moeKernel != MoEKernelTriton || sgl.moeKernel != MoEKernelTriton || trt.moeKernel != MoEKernelCUTLASS {
		t.Fatalf("families: vllm %q, sglang %q, tensorrt-llm %q", vllm.moeKernel, sgl.moeKernel, trt.moeKernel)
	}
	if lcpp.groupedMoE || !vllm.groupedMoE || !sgl.groupedMoE || !trt.groupedMoE {
		t.Fatalf("grouped GEMMs: llama.cpp %v, vllm %v, sglang %v, tensorrt-llm %v", lcpp.groupedMoE, vllm.groupedMoE, sgl.groupedMoE, trt.groupedMoE)
	}
	if calibrated.moeHalf(vllm.moeKernel) != calibrated.moeHalf(sgl.moeKernel) {
		t.Errorf("vLLM and SGLang slice constants differ: %g, %g", calibrated.moeHalf(vllm.moeKernel), calibrated.moeHalf(sgl.moeKernel))
	}
	c := card(t, "H100-80GB-SXM")
	rate := func(engine string, k constants) float64 {
		w := presetServe(t, "gpt-oss-20b", "") // MXFP4: both engines run it on an H100
		w.Engine, w.MaxSequences, w.Concurrency = engine, 1, 1
		s, _, ok := servingCaseFor(w, c, k)
		if !ok {
			t.Fatalf("%s: no serving case", engine)
		}
		s.layout = Layout{TP: 1, PP: 1}
		return servingRate(c, s).tps
	}
	slow := calibrated
	slow.moeHalfByKernel = map[string]float64{MoEKernelTriton: 1000, MoEKernelCUTLASS: 1000}
	slow.moeHalfMB = 1000
	if a, b := rate(EngineLlamaCpp, calibrated), rate(EngineLlamaCpp, slow); a != b {
		t.Errorf("llama.cpp moved with the grouped-GEMM constant: %g → %g tok/s", a, b)
	}
	if a, b := rate(EngineVLLM, calibrated), rate(EngineVLLM, slow); !(b < a/2) {
		t.Errorf("vLLM did not slow with its family's constant: %g → %g tok/s", a, b)
	}
}

// A kernel family is what the engine runs for the checkpoint's format on
// the card (formats.csv moe_kernel), not only the engine's own:
// TensorRT-LLM runs gpt-oss's MXFP4 experts on Hopper through its TRITON
// MoE backend (its gpt-oss deployment guide), while vLLM's and SGLang's
// NVFP4 experts on Blackwell run CUTLASS grouped GEMMs. Every family a
// formats.csv row names is one engines.csv knows (or Marlin's, which
// only formats.csv names), and the estimate
// follows it: TensorRT-LLM's gpt-oss-120b on an H100 is priced with the
// Triton family's constants, not CUTLASS's.
func TestMoE_KernelFamilyByFormatAndCard(t *testing.T) {
	known := moeKernelFamilies()
	for key, r := range formatRows() {
		if r.moeKernel != "" && !known[r.moeKernel] {
			t.Errorf("formats.csv %v: moe_kernel %q is no known MoE kernel family", key, r.moeKernel)
		}
	}
	h100, b200, a100 := card(t, "H100-80GB-SXM"), card(t, "B200-180GB-SXM"), card(t, "A100-80GB-SXM")
	mi300x, mi355x := card(t, "MI300X-192GB"), card(t, "MI355X-288GB")
	// SGLang's FP8 MoE on Blackwell: DeepSeek-architecture models on the
	// TensorRT-LLM-gen kernels (SGLang PR #11816), the others on Triton.
	const deepseek, qwen3 = "DeepseekV3ForCausalLM", "Qwen3MoeForCausalLM"
	for _, tc := range []struct {
		engine, format string
		c              pricewatch.Card
		arch, want     string
	}{
		{EngineTRT, PrecisionMXFP4, h100, "", MoEKernelTriton},
		{EngineTRT, PrecisionMXFP4, b200, "", MoEKernelCUTLASS},
		{EngineTRT, PrecisionFP8, h100, "", MoEKernelCUTLASS},
		{EngineVLLM, PrecisionFP4, b200, "", MoEKernelCUTLASS},
		{EngineSGLang, PrecisionFP4, b200, "", MoEKernelCUTLASS},
		{EngineVLLM, PrecisionFP8, h100, "", MoEKernelTriton},
		{EngineVLLM, PrecisionMXFP4, h100, "", MoEKernelTriton},
		{EngineSGLang, PrecisionFP8, b200, deepseek, MoEKernelCUTLASS},
		{EngineSGLang, PrecisionFP8, b200, qwen3, MoEKernelTriton},
		{EngineSGLang, PrecisionFP8, h100, deepseek, MoEKernelTriton},
		{EngineVLLM, PrecisionFP8, b200, deepseek, MoEKernelTriton},
		// gpt-oss's MXFP4 experts on SM100: FlashInfer's TensorRT-LLM-gen
		// MoE under vLLM (get_mxfp4_backend) and SGLang (server_args picks
		// flashinfer_mxfp4 for GptOssForCausalLM); on Hopper, Triton.
		{EngineVLLM, PrecisionMXFP4, b200, "", MoEKernelCUTLASS},
		{EngineSGLang, PrecisionMXFP4, b200, "GptOssForCausalLM", MoEKernelCUTLASS},
		{EngineSGLang, PrecisionMXFP4, h100, "GptOssForCausalLM", MoEKernelTriton},
		// SGLang's ROCm images set SGLANG_USE_AITER=1: AITER's fused MoE
		// for every format (the engine's row for "*"); vLLM's default
		// leaves AITER off.
		{EngineSGLang, PrecisionFP8, mi300x, deepseek, MoEKernelAITER},
		{EngineSGLang, PrecisionBF16, mi300x, "", MoEKernelAITER},
		{EngineSGLang, PrecisionMXFP4, mi355x, "GptOssForCausalLM", MoEKernelAITER},
		{EngineVLLM, PrecisionFP8, mi300x, qwen3, MoEKernelTriton},
		// vLLM's gpt-oss recipe: Marlin MXFP4 MoE on Ampere; FP8 there
		// stays the engine's (no page says its FP8 Marlin covers MoE).
		{EngineVLLM, PrecisionMXFP4, a100, "", MoEKernelMarlin},
		{EngineVLLM, PrecisionFP8, a100, "", MoEKernelTriton},
		{EngineSGLang, PrecisionMXFP4, a100, "", MoEKernelTriton},
	} {
		if got := moeKernelFor(engineFor(tc.engine), tc.format, tc.c, tc.arch); got != tc.want {
			t.Errorf("%s %s of %q on %s: family %q, want %q", tc.engine, tc.format, tc.arch, tc.c.ID, got, tc.want)
		}
	}
	// The preset carries its config.json architecture, so the rule reaches
	// the estimate; a run that states other kernels keeps them.
	dsr1 := presetServe(t, "deepseek-r1", "fp8")
	dsr1.Engine = EngineSGLang
	if got := dsr1.moeKernelOn(engineFor(EngineSGLang), b200); got != MoEKernelCUTLASS {
		t.Errorf("SGLang DeepSeek-R1 FP8 on a B200: family %q, want %q", got, MoEKernelCUTLASS)
	}
	dsr1.moeKernel = MoEKernelTriton
	if got := dsr1.moeKernelOn(engineFor(EngineSGLang), b200); got != MoEKernelTriton {
		t.Errorf("a run stating the Triton MoE: family %q", got)
	}
	w := presetServe(t, "gpt-oss-120b", "")
	w.Engine = EngineTRT
	s, _, ok := servingCaseFor(w, h100, calibrated)
	if !ok || s.eng.moeKernel != MoEKernelTriton {
		t.Fatalf("TensorRT-LLM gpt-oss-120b on an H100: ok %v, family %q", ok, s.eng.moeKernel)
	}
	s.layout = Layout{TP: 1, PP: 1}
	onCUTLASS := s
	onCUTLASS.eng.moeKernel = MoEKernelCUTLASS
	if a, b := servingRate(h100, s).tps, servingRate(h100, onCUTLASS).tps; !(a > 0 && a < b) {
		t.Errorf("Triton family %.0f tok/s, CUTLASS %.0f: want the Triton estimate below", a, b)
	}
}

// A prompt's attention core is priced, and grows with the prompt. By hand,
// from gpt-oss-120b's config.json (36 layers, 64 heads of 64, every other
// layer a 128-token sliding window): a token attending to 16,000 earlier
// ones costs 4 × 64 × 64 × (18 × 16,000 + 18 × 128) = 16,384 × 290,304 =
// 4.7563e9 FLOPs, near the 2 × 5.1e9 of its weights; a window layer costs
// the same at any length beyond its window.
func TestPrefill_AttentionGrowsWithThePrompt(t *testing.T) {
	m := Presets()["gpt-oss-120b"]
	if m.Layers != 36 || m.Heads != 64 || m.headDim() != 64 || m.SlidingWindow != 128 || m.slidingLayers() != 18 {
		t.Fatalf("gpt-oss-120b shape: %+v", m)
	}
	if got := m.PrefillAttentionFLOPs(16000); !near(got/4.7563e9, 1, 1e-4) {
		t.Errorf("attention of a token attending to 16,000: %.5g FLOPs, want 4.7563e9", got)
	}
	// Prefill per output token: linear in the prompt for the weights,
	// quadratic for the attention, so doubling a long prompt more than
	// doubles it (exactly 2 without the term).
	w := presetServe(t, "gpt-oss-120b", "")
	h100 := card(t, "H100-80GB-SXM")
	prefill := func(isl int) float64 {
		w.InputTokens, w.OutputTokens = isl, 100
		s, _, ok := servingCaseFor(w, h100, calibrated)
		if !ok {
			t.Fatalf("no serving case at %d", isl)
		}
		s.layout = Layout{TP: 2, PP: 1}
		return servingRate(h100, s).prefillT
	}
	// With the weights' FLOPs P = 2 × (dense + experts / MoE GEMM
	// efficiency) per prompt token, both at the 16-bit peak (MXFP4 runs
	// weight-only on an H100), prefill(32k) / prefill(16k) = 2 × (P +
	// 4.7563e9) / (P + 2.3970e9), the latter 16,384 × (18 × 8,000 + 2,304).
	n, xn := m.ComputeParams(), m.ExpertComputeParams()
	p := 2 * (n - xn + xn/calibrated.moeGemmEff(MoEKernelTriton))
	want := 2 * (p + 4.7563e9) / (p + 2.3970e9)
	if r := prefill(32000) / prefill(16000); !near(r, want, 1e-3) || r <= 2.1 {
		t.Errorf("prefill at 32k / at 16k = %.4f, want %.4f (quadratic attention; 2 without it)", r, want)
	}
}

// Every MoE layer costs a decode step its kernel family's fixed time,
// shared by the step's sequences. By hand: Qwen3-30B-A3B has 48 layers,
// all MoE (config.json: no mlp_only_layers), so under vLLM (the Triton
// family, 31 µs) a step takes 48 × 31 = 1,488 µs more than without the
// term: 1,488 µs per output token at one sequence, 1,488 / 8 = 186 µs at
// eight. TensorRT-LLM's CUTLASS family has no such term.
func TestMoE_TritonLayerTimePerStep(t *testing.T) {
	w := presetServe(t, "qwen3-30b-a3b", "fp8")
	h100 := card(t, "H100-80GB-SXM")
	if m := w.Model; m.Layers != 48 || m.moeLayers() != 48 {
		t.Fatalf("qwen3-30b-a3b: %d layers, %d MoE", m.Layers, m.moeLayers())
	}
	perToken := func(engine string, k constants, b int) float64 {
		w.Engine, w.MaxSequences, w.Concurrency = engine, b, b
		s, _, ok := servingCaseFor(w, h100, k)
		if !ok {
			t.Fatalf("%s: no serving case", engine)
		}
		s.layout = Layout{TP: 1, PP: 1}
		r := servingRate(h100, s)
		if !r.fits || r.seqs != float64(b) {
			t.Fatalf("%s at %d: fits %v, %.1f sequences", engine, b, r.fits, r.seqs)
		}
		return 1 / r.tps // seconds per output token on the one GPU
	}
	none := calibrated
	none.moeLayerUS = map[string]float64{}
	for _, tc := range []struct {
		b      int
		wantUS float64
	}{{1, 1488}, {8, 186}} {
		if d := (perToken(EngineVLLM, calibrated, tc.b) - perToken(EngineVLLM, none, tc.b)) * 1e6; !near(d, tc.wantUS, 1e-6) {
			t.Errorf("vLLM at %d sequences: the MoE layers' fixed time adds %.3f µs a token, want %g", tc.b, d, tc.wantUS)
		}
		if d := perToken(EngineTRT, calibrated, tc.b) - perToken(EngineTRT, none, tc.b); d != 0 {
			t.Errorf("TensorRT-LLM at %d sequences: %g s a token from a fixed time its family does not have", tc.b, d)
		}
	}
}
