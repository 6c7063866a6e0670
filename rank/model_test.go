package rank

import (
	"math"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
)

// Training on one GPU: U × peak / FLOPs per token, the FLOPs worked by hand
// for the 7B built-ins (32 layers, hidden 4096, seq 2048, checkpointing):
//
//	linear    full 8N = 56e9, LoRA 6N = 42e9
//	attention (12 + 4) × 32 × 4096 × 2048 = 4.295e9
//
// so full-ft-7b on an H100 is U × 989e12 / 60.295e9 (U 0.46: 7,545 tok/s)
// and QLoRA × the QLoRA factor (0.74) on LoRA's 46.295e9.
func TestEstimate_TrainingFormula(t *testing.T) {
	u := func(class string) float64 { return calibrated.util[class] }
	att := 16.0 * 32 * 4096 * 2048
	for _, tc := range []struct {
		workload, card string
		want           float64
	}{
		{"full-ft-7b", "H100-80GB-SXM", u("hopper_blackwell") * 989e12 / (8*7e9 + att)},
		{"full-ft-7b", "T4", u("volta_turing") * 65e12 / (8*7e9 + att)}, // FP16 where no BF16
		{"qlora-7b", "A100-80GB-SXM", calibrated.qlora * u("ampere_dc") * 312e12 / (6*7e9 + att)},
		{"lora-7b", "MI300X-192GB", u("amd_cdna3") * 1307.4e12 / (6*7e9 + att)},
		{"lora-7b", "L40S", u("ada_dc") * 362.05e12 / (6*7e9 + att)},
		{"full-ft-7b", "RTX-4090", u("consumer") * 165.2e12 / (8*7e9 + att)}, // estimated where it does not fit
	} {
		t.Run(tc.workload+"/"+tc.card, func(t *testing.T) {
			p := mustEstimate(t, workload(t, tc.workload), card(t, tc.card))
			if !near(p.TokensPerSecond, tc.want, 1e-6*tc.want) {
				t.Errorf("got %.2f, want %.2f (%s)", p.TokensPerSecond, tc.want, p.Note)
			}
		})
	}
}

// Attention grows with the sequence: Llama-3-8B full training (no
// checkpointing) costs 6 × 8.03e9 = 48.18e9 FLOPs a token for the linear
// layers plus 12 × 32 × 4096 × s for attention: 3.22e9 at 2k, 51.54e9 at
// 32k. Throughput at 32k is (48.18 + 3.22) / (48.18 + 51.54) = 0.5155 of
// that at 2k, on any card.
func TestEstimate_TrainingSequenceLength(t *testing.T) {
	w := Workload{Name: "pre-8b", Model: llama31_8B(), Method: MethodFull, WeightBytes: 2, SeqLen: 2048, MicroBatch: 1}
	long := w
	long.SeqLen = 32768
	for _, id := range []string{"H100-80GB-SXM", "A100-80GB-SXM", "RTX-4090"} {
		c := card(t, id)
		short, _ := EstimateOn(w, c, 1)
		l, _ := EstimateOn(long, c, 1)
		if r := l.TokensPerSecond / short.TokensPerSecond; !near(r, 51.40/99.72, 1e-3) {
			t.Errorf("%s: 32k / 2k = %.4f, want 0.5155", id, r)
		}
	}
}

// FP8 speeds up only the linear layers, by at most the card's own
// FP8/BF16 peak ratio: Gaudi 3 (1,835 TFLOPS in both) gains nothing, an
// H100 (1,979 / 989) 1 / ((1 − f) + f/2) with the fitted share f.
func TestEstimate_FP8BoundedByPeakRatio(t *testing.T) {
	w := workload(t, "lora-7b")
	w8 := w
	w8.Precision = PrecisionFP8
	for _, tc := range []struct {
		card    string
		maxGain float64
	}{
		{"GAUDI3-128GB", 1},
		{"H100-80GB-SXM", 1 / ((1 - calibrated.fp8Share) + calibrated.fp8Share/2)},
	} {
		c := card(t, tc.card)
		p16, _ := EstimateOn(w, c, 1)
		p8, _ := EstimateOn(w8, c, 1)
		gain := p8.TokensPerSecond / p16.TokensPerSecond
		if gain > tc.maxGain+1e-9 || gain < 1 {
			t.Errorf("%s: fp8 gain %.3f, want within [1, %.3f]", tc.card, gain, tc.maxGain)
		}
		if gain > 2 {
			t.Errorf("%s: fp8 gain %.3f above the FP8/BF16 peak ratio", tc.card, gain)
		}
	}
}

// Tensor parallelism costs two all-reduces per layer per token. Llama-3-8B
// bf16, 1024 in / 256 out, 64 sequences (which one GPU already holds, so
// more GPUs buy no larger batch), TP 1/2/4/8:
//
// One GPU's time per output token, T1 (H100: peak 989 TFLOPS × ETA_C
// 0.48, reads at ETA_BW 0.70 × 3,350 GB/s = 2.345e12 B/s, 75 µs a layer
// and step):
//
//	prefill  2 × 8.03e9 × 1024/256 / (min(0.95, 1.2 × 0.48) × 989e12) = 112.77 µs
//	         + attention: 4 × 32 heads × 128 × 32 layers × 512 tokens
//	           attended (half the prompt) = 2.684e8 FLOPs a prompt
//	           token, × 1024/256 / (0.576 × 989e12)                   =   1.88 µs
//	decode   max(16.06e9 / (0.48 × 989e12), 16.06e9 / 64 / 2.345e12) = 107.01 µs
//	         + 131,072 × (1024 + 128) / 2.345e12                      =  64.39 µs
//	         + 32 layers × 75 µs / 64 sequences                       =  37.50 µs
//
// T1 = 323.55 µs. TP g divides all of it but the layers' step time (every
// GPU runs every layer's kernels) by g and adds, per token, 2 × 32
// all-reduces of one step's 64 × (1 + 1024/256) × 4096 × 2 B = 2.62 MB
// shared by its 64 sequences: 2 × 32 / 64 × (latency + 2(g−1)/g × 2.62 MB
// / link rate). Per GPU, throughput is 1 / (T1 + (g−1) × step + g × comm):
// the ratio to one GPU is T1 / (T1 + (g−1) × 37.5 µs + g × comm).
//
//	H100 SXM, NVLink 4: 450 GB/s × 0.55, 8 µs  comm = 8 + (g−1)/g × 21.18 µs
//	  g 2: 18.59 µs → 323.55 / 398.23 = 0.812;  g 4: 23.89 µs → 0.609;  g 8: 26.54 µs → 0.405
//	L40S, PCIe 4 P2P: 31.5 GB/s × 0.55, 15 µs  comm = 15 + (g−1)/g × 302.6 µs
//
// so per-GPU throughput falls with g, and faster over PCIe.
func TestEstimate_TensorParallelSweep(t *testing.T) {
	w := Workload{Name: "serve-8b", Model: llama31_8B(), Method: MethodServe, WeightBytes: 2, Precision: PrecisionBF16,
		InputTokens: 1024, OutputTokens: 256, MaxSequences: 64}
	stepBytes := 64.0 * 5 * 4096 * 2
	slope := func(c pricewatch.Card, g int) float64 {
		one, _ := EstimateLayout(w, c, Layout{TP: 1, PP: 1})
		t1 := 1 / one.TokensPerSecond
		l, _ := c.LinkFor(g)
		rate := l.GBsPerDirection * 1e9 * calibrated.linkEff
		comm := 2 * 32.0 / 64 * (l.LatencyUS*1e-6 + 2*float64(g-1)/float64(g)*stepBytes/rate)
		step := 32 * calibrated.layerStepUS * 1e-6 / 64
		return t1 / (t1 + float64(g-1)*step + float64(g)*comm)
	}
	h100, l40s := card(t, "H100-80GB-SXM"), card(t, "L40S")
	one, _ := EstimateLayout(w, h100, Layout{TP: 1, PP: 1})
	if !near(1/one.TokensPerSecond*1e6, 323.55, 0.05) {
		t.Errorf("H100 one GPU: %.2f µs a token, want 323.55 (worked above)", 1/one.TokensPerSecond*1e6)
	}
	for _, c := range []pricewatch.Card{h100, l40s} {
		base, _ := EstimateLayout(w, c, Layout{TP: 1, PP: 1})
		prev := base.TokensPerSecond
		for _, g := range []int{2, 4, 8} {
			p, ok := EstimateLayout(w, c, Layout{TP: g, PP: 1})
			if !ok {
				t.Fatalf("%s TP%d: no estimate", c.ID, g)
			}
			got := p.TokensPerSecond / base.TokensPerSecond
			if want := slope(c, g); !near(got, want, 0.002) {
				t.Errorf("%s TP%d: %.3f of one GPU's throughput per GPU, want %.3f", c.ID, g, got, want)
			}
			if p.TokensPerSecond >= prev {
				t.Errorf("%s TP%d: %.0f tok/s per GPU, not below TP%d's %.0f", c.ID, g, p.TokensPerSecond, g/2, prev)
			}
			prev = p.TokensPerSecond
		}
	}
	for _, g := range []int{2, 4, 8} {
		h, _ := EstimateLayout(w, h100, Layout{TP: g, PP: 1})
		l, _ := EstimateLayout(w, l40s, Layout{TP: g, PP: 1})
		hb, _ := EstimateLayout(w, h100, Layout{TP: 1, PP: 1})
		lb, _ := EstimateLayout(w, l40s, Layout{TP: 1, PP: 1})
		if l.TokensPerSecond/lb.TokensPerSecond >= h.TokensPerSecond/hb.TokensPerSecond {
			t.Errorf("TP%d: PCIe keeps %.3f, NVLink %.3f: want PCIe to fall faster", g,
				l.TokensPerSecond/lb.TokensPerSecond, h.TokensPerSecond/hb.TokensPerSecond)
		}
		want := map[int]float64{2: 0.812, 4: 0.609, 8: 0.405}[g]
		if !near(h.TokensPerSecond/hb.TokensPerSecond, want, 0.001) {
			t.Errorf("H100 TP%d: %.4f, want %.3f (worked above)", g, h.TokensPerSecond/hb.TokensPerSecond, want)
		}
	}
	// With no layout given, 8 L40S run as the engines run them: TP8 within
	// the PCIe host (issue 28: pricing them as PP8 came out 3.95× the
	// measured TP8 rate).
	if _, lay, ok := bestLayout(w, l40s, 8); !ok || lay != (Layout{TP: 8, PP: 1}) {
		t.Errorf("8 × L40S: default layout %v, want TP8", lay)
	}
}

func bestLayout(w Workload, c pricewatch.Card, g int) (Profile, Layout, bool) {
	return estimateServing(w, c, g, Layout{}, calibrated)
}

// Memory as the card has it: 70B bf16 on 2 × H100 no longer collapses to
// one sequence. vLLM leaves 2 × (0.9 × 80 − 1.5) − 131.5 = 9.5 GiB of KV
// cache: 9.5 × 2^30 / (327,680 B × (1024 + 128)) = 27 sequences, and the
// estimate runs at a batch, not at single-stream speed (which would be
// 0.75 × 2 × 3,350e9 / 141.2e9 / 2 = 17.8 tok/s per GPU).
func TestEstimate_70BOnTwoH100(t *testing.T) {
	w := Workload{Name: "serve-70b", Model: Presets()["llama3-70b"], Method: MethodServe, WeightBytes: 2, Precision: PrecisionBF16,
		InputTokens: 1024, OutputTokens: 256}
	c := card(t, "H100-80GB-SXM")
	s, _, _ := servingCaseFor(w, c, calibrated)
	s.layout = Layout{TP: 2, PP: 1}
	r := servingRate(c, s)
	if !r.fits || !near(r.seqs, 9.5*(1<<30)/(327680*1152), 0.2) {
		t.Errorf("2 × H100: %.1f sequences (fits %v), want 27", r.seqs, r.fits)
	}
	if r.tps < 10*17.8 {
		t.Errorf("2 × H100: %.0f tok/s per GPU, want far above single-stream 17.8", r.tps)
	}
	// fp8 on one H100 fits (TestFits_RequiredOutcomes) and is estimated.
	w.Precision, w.WeightBytes = PrecisionFP8, 1
	if p, ok := EstimateOn(w, c, 1); !ok || p.TokensPerSecond <= 0 {
		t.Errorf("70B fp8 on one H100: %+v, %v: want an estimate", p, ok)
	}
}

// No estimate beyond a physical limit, over every card × built-in
// workload (and a 70B serving job and single-stream decoding) on groups
// of 1 to 8: training never beats the dense peak at 6N FLOPs per token
// (the fp8 peak where it trains in fp8); serving never beats 2N FLOPs per
// output token at the serving precision's peak, nor, at batch 1, the
// group's bandwidth ÷ the weight bytes.
func TestEstimate_PhysicalLimits(t *testing.T) {
	ws := BuiltinWorkloads()
	s70 := Workload{Name: "serve-70b-fp8", Model: Presets()["llama3-70b"], Method: MethodServe, WeightBytes: 1, Precision: PrecisionFP8,
		InputTokens: 1024, OutputTokens: 256}
	b1 := workload(t, "serve-7b")
	b1.Name, b1.MaxSequences = "decode-7b-b1", 1
	fp8 := workload(t, "full-ft-7b")
	fp8.Name, fp8.Precision = "full-ft-7b-fp8", PrecisionFP8
	ws = append(ws, s70, b1, fp8)
	checked := 0
	for _, id := range catalog().IDs() {
		c, _ := catalog().Card(id)
		for _, w := range ws {
			for g := 1; g <= 8; g *= 2 {
				p, ok := EstimateOn(w, c, g)
				if !ok {
					continue
				}
				checked++
				prec, _ := PrecisionOn(w, c)
				n := w.Model.ComputeParams() // the parameters a token's matmuls run through
				switch {
				case w.Method.Training():
					if limit := prec.PeakTFLOPS * 1e12 / (6 * n); p.TokensPerSecond > limit {
						t.Errorf("%s %s ×%d: %.0f tok/s above the peak's %.0f", id, w.Name, g, p.TokensPerSecond, limit)
					}
				default:
					if limit := prec.PeakTFLOPS * 1e12 / (2 * n); p.TokensPerSecond > limit {
						t.Errorf("%s %s ×%d: %.0f tok/s above the compute limit %.0f", id, w.Name, g, p.TokensPerSecond, limit)
					}
					if w.MaxSequences == 1 {
						// The group's bandwidth reads the weights once a token.
						d, x := w.Model.WeightBytes(w.WeightBytes)
						read := d - w.Model.LookupParams()*w.WeightBytes + x*w.Model.TouchedShare(1)
						if limit := float64(g) * c.BandwidthGBs * 1e9 / read; p.TokensPerSecond*float64(g) > limit {
							t.Errorf("%s %s ×%d: %.1f tok/s at batch 1 above bandwidth ÷ weights %.1f", id, w.Name, g, p.TokensPerSecond*float64(g), limit)
						}
					}
				}
				if math.IsNaN(p.TokensPerSecond) || math.IsInf(p.TokensPerSecond, 0) || p.TokensPerSecond <= 0 {
					t.Errorf("%s %s ×%d: %v", id, w.Name, g, p.TokensPerSecond)
				}
			}
		}
	}
	if checked < 1000 {
		t.Errorf("only %d estimates checked", checked)
	}
}

// The serving group a plan picks is the one with the lowest cost per
// token that fits, not the smallest that fits: on a per-GPU offer, the
// throughput per GPU rented is the best of every group RentalFor could
// rent; on a fixed 8-GPU instance, the best per GPU billed.
func TestRentalFor_PicksTheCheapestGroup(t *testing.T) {
	w := Workload{Name: "serve-70b", Model: Presets()["llama3-70b"], Method: MethodServe, WeightBytes: 2, Precision: PrecisionBF16,
		InputTokens: 1024, OutputTokens: 256}
	c := card(t, "H100-80GB-SXM")
	perGPU := pricewatch.Offer{RentUnit: pricewatch.RentPerGPU, GPUCounts: pricewatch.CountsUpTo(8)}
	r, p, why := RentalFor(w, c, perGPU, 8, Profile{Origin: OriginEstimated})
	if why != "" {
		t.Fatal(why)
	}
	if need := MinGPUs(w, c, 8); need != 2 {
		t.Fatalf("smallest group %d, want 2", need)
	}
	chosen := r.TokensPerSecond(p.TokensPerSecond) / float64(r.GPUs)
	for g := 2; g <= 8; g *= 2 {
		if q, ok := EstimateOn(w, c, g); ok && q.TokensPerSecond > chosen*(1+1e-9) {
			t.Errorf("group %d serves %.0f tok/s per GPU, more than the chosen %d-GPU rental's %.0f", g, q.TokensPerSecond, r.Group, chosen)
		}
	}
	if r.Group == 2 {
		two, _ := EstimateOn(w, c, 2)
		four, _ := EstimateOn(w, c, 4)
		if four.TokensPerSecond > two.TokensPerSecond {
			t.Errorf("kept the smallest group although 4 GPUs serve more per GPU")
		}
	}
	fixed := pricewatch.Offer{RentUnit: pricewatch.RentFixed, GPUCounts: []int{8}}
	r8, p8, _ := RentalFor(w, c, fixed, 8, Profile{Origin: OriginEstimated})
	if r8.GPUs != 8 || r8.Used != r8.Replicas*r8.Group {
		t.Errorf("fixed 8-GPU instance: %+v", r8)
	}
	for g := 2; g <= 8; g *= 2 {
		q, ok := EstimateOn(w, c, g)
		if !ok {
			continue
		}
		if per := float64(8/g*g) * q.TokensPerSecond / 8; per > r8.TokensPerSecond(p8.TokensPerSecond)/8*(1+1e-9) {
			t.Errorf("fixed: %d groups of %d serve %.0f per GPU billed, more than the chosen layout", 8/g, g, per)
		}
	}
}

// Training over several GPUs uses the link model: a sharded full
// fine-tune keeps more of its per-GPU speed over NVLink than over PCIe
// without peer-to-peer (8 × H100 SXM against 8 × RTX 4090), and one GPU
// keeps all of it.
func TestTrainingScaling_LinkModel(t *testing.T) {
	w := workload(t, "full-ft-7b")
	h, g := card(t, "H100-80GB-SXM"), card(t, "RTX-4090")
	if e := TrainingScaling(w, h, 1); e != 1 {
		t.Errorf("one GPU: %v", e)
	}
	eh, eg := TrainingScaling(w, h, 8), TrainingScaling(w, g, 8)
	if !(eg < eh && eh <= 1 && eg > 0) {
		t.Errorf("8 GPUs: NVLink keeps %.3f, PCIe without P2P %.3f: want PCIe < NVLink ≤ 1", eh, eg)
	}
	// 8 × RTX 4090, FSDP: each micro-batch gathers and scatters 3 × 7/8 ×
	// 14e9 B = 36.75e9 B over PCIe 4 staged through the host, 31.5e9 / 2 B/s
	// × the link efficiency: 2.33 s at 1.0; compute is 2048 tokens ×
	// 60.295e9 FLOPs / (U × 165.2e12).
	comp := 2048 * (8*7e9 + 16*32*4096*2048.0) / (calibrated.util["consumer"] * 165.2e12)
	comm := 36.75e9 / (31.5e9 / 2 * calibrated.linkEff)
	want := comp / (math.Max(comp, comm) + (1-calibrated.overlap)*math.Min(comp, comm))
	if !near(eg, want, 0.01) {
		t.Errorf("8 × RTX 4090: keeps %.3f, want %.3f (comm %.2f s, compute %.2f s)", eg, want, comm, comp)
	}
}

// A configured engine efficiency scales that engine's serving estimate,
// and says so in the note.
func TestEstimate_EngineEfficiency(t *testing.T) {
	w := workload(t, "serve-7b")
	c := card(t, "H100-80GB-SXM")
	base, _ := EstimateOn(w, c, 1)
	w.EngineEfficiency = 1.2
	p, _ := EstimateOn(w, c, 1)
	if !near(p.TokensPerSecond, 1.2*base.TokensPerSecond, 1e-9) || !strings.Contains(p.Note, "1.2 engine efficiency") {
		t.Errorf("%.1f (%s), want 1.2 × %.1f", p.TokensPerSecond, p.Note, base.TokensPerSecond)
	}
}
