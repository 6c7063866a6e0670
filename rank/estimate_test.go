package rank

import (
	"encoding/csv"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
)

// llama31_8B is the Llama-3.1-8B shape of reference profiles.csv.
func llama31_8B() Model {
	return Model{Name: "llama-3.1-8b", ParamsB: 8.03, Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128}
}

// readProfiles reads testdata/profiles.csv, a copy of reference profiles.csv.
func readProfiles(t *testing.T) []map[string]string {
	t.Helper()
	f, err := os.Open("testdata/profiles.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = strings.TrimSpace(r[i])
		}
		out = append(out, m)
	}
	return out
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return v
}

func mustEstimate(t *testing.T, w Workload, c pricewatch.Card) Profile {
	t.Helper()
	p, ok := Estimate(w, c)
	if !ok {
		t.Fatalf("Estimate(%s, %s): no estimate", w.Name, c.ID)
	}
	if p.Origin != OriginEstimated || p.Card != c.ID || p.Workload != w.Name || p.Note == "" {
		t.Errorf("Estimate(%s, %s) = %+v: want origin estimated, card, workload and a note", w.Name, c.ID, p)
	}
	return p
}

// THROUGHPUT.md section 4: "model estimate (7B LoRA, recompute on)".
func TestEstimate_SeedTable(t *testing.T) {
	for _, tc := range []struct {
		card string
		want float64
	}{
		{"RTX-4090", 1770}, {"A100-80GB-SXM", 4086}, {"H100-80GB-SXM", 9419},
	} {
		t.Run(tc.card, func(t *testing.T) {
			p := mustEstimate(t, workload(t, "lora-7b"), card(t, tc.card))
			if !near(p.TokensPerSecond, tc.want, 0.5) {
				t.Errorf("lora-7b on %s = %.1f tokens/s, want %.0f", tc.card, p.TokensPerSecond, tc.want)
			}
		})
	}
}

func TestEstimate_Training(t *testing.T) {
	for _, tc := range []struct {
		workload, card string
		want           float64
	}{
		// U × peak / (k × N): k 8 full with checkpointing, 6 LoRA, × 0.8 QLoRA.
		{"full-ft-7b", "H100-80GB-SXM", 0.40 * 989e12 / (8 * 7e9)},
		{"full-ft-7b", "T4", 0.30 * 65e12 / (8 * 7e9)}, // FP16 where no BF16
		{"qlora-7b", "A100-80GB-SXM", 0.8 * 0.55 * 312e12 / (6 * 7e9)},
		{"lora-7b", "MI300X-192GB", 0.28 * 1307.4e12 / (6 * 7e9)},
		{"lora-7b", "L40S", 0.40 * 362.05e12 / (6 * 7e9)},
	} {
		t.Run(tc.workload+"/"+tc.card, func(t *testing.T) {
			p := mustEstimate(t, workload(t, tc.workload), card(t, tc.card))
			if !near(p.TokensPerSecond, tc.want, 1e-6*tc.want) {
				t.Errorf("got %.2f, want %.2f", p.TokensPerSecond, tc.want)
			}
		})
	}
}

func TestTrainingK_Methods(t *testing.T) {
	for _, tc := range []struct {
		m      Method
		ckpt   bool
		want   float64
		wantOK bool
	}{
		{MethodFull, false, 6, true}, {MethodFull, true, 8, true},
		{MethodLoRA, false, 4, true}, {MethodLoRA, true, 6, true},
		{MethodQLoRA, true, 6, true}, {MethodServe, false, 0, false},
	} {
		t.Run(string(tc.m), func(t *testing.T) {
			got, ok := TrainingK(tc.m, tc.ckpt)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("TrainingK(%s, %v) = %v, %v; want %v, %v", tc.m, tc.ckpt, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// Reference profiles.csv is the estimation model applied to every card for
// Llama-3.1-8B workloads; the estimator must give the same training and
// batch-1 numbers. Its serving columns use the reference's single max over
// GEMM and attention time; the estimator adds the attention reads
// (servingRate), so a serving figure is at most the reference's and at
// least half of it. By hand for H100-80GB-SXM, fp8 (65,536 B of KV per
// token), 1024 in / 256 out, 256 sequences (the memory holds
// (0.9 × 80e9 − 8.03e9 − 2e9) / (65,536 × 1280) = 739), reading at
// 0.70 × 3,350 GB/s = 2.345e12 B/s:
//
//	prefill   2 × 8.03e9 × 4 / (0.54 × 1979e12)  = 60.11 µs
//	GEMMs     max(16.06e9 / (0.45 × 1979e12) = 18.03 µs, 8.03e9 / 256 / 2.345e12 = 13.38 µs) = 18.03 µs
//	attention 65,536 × (1024 + 128) / 2.345e12     = 32.19 µs
//
// 1 / 110.33 µs = 9,063 tokens/s, where the reference's max(18.03, 13.38
// + 32.19) gives 1 / 105.68 µs = 9,462 (its profiles.csv figure).
func TestEstimate_Profiles8B(t *testing.T) {
	m := llama31_8B()
	fp8 := Workload{Name: "serve-8b-fp8", Model: m, Method: MethodServe, WeightBytes: 1, Precision: PrecisionFP8,
		InputTokens: 1024, OutputTokens: 256, MaxSequences: 256}
	if p, ok := EstimateOn(fp8, card(t, "H100-80GB-SXM"), 1); !ok || !near(p.TokensPerSecond, 1e6/110.33, 1) {
		t.Errorf("H100 fp8 serving = %.1f, want %.1f (computed above)", p.TokensPerSecond, 1e6/110.33)
	}
	full := Workload{Name: "full-ft-8b", Model: m, Method: MethodFull, WeightBytes: 2, SeqLen: 2048, MicroBatch: 1, Checkpointing: true}
	lora := Workload{Name: "lora-8b", Model: m, Method: MethodLoRA, WeightBytes: 2, SeqLen: 2048, MicroBatch: 1, Checkpointing: true}
	qlora := Workload{Name: "qlora-8b", Model: m, Method: MethodQLoRA, WeightBytes: 0.5, SeqLen: 2048, MicroBatch: 1, Checkpointing: true}
	serve16 := Workload{Name: "serve-8b", Model: m, Method: MethodServe, WeightBytes: 2, InputTokens: 1024, OutputTokens: 256, MaxSequences: 256}
	serve8 := serve16
	serve8.Name, serve8.WeightBytes, serve8.Precision = "serve-8b-fp8", 1, PrecisionFP8
	for _, row := range readProfiles(t) {
		id := row["canonical_id"]
		t.Run(id, func(t *testing.T) {
			c := card(t, id)
			for _, col := range []struct {
				name string
				w    Workload
			}{
				{"train_full_ft_8b_tps", full},
				{"train_lora_8b_tps", lora},
				{"train_qlora_8b_tps", qlora},
				{"serve_8b_16bit_out_tps", serve16},
				{"serve_8b_fp8_out_tps", serve8},
			} {
				p, ok := EstimateOn(col.w, c, 1) // profiles.csv is one GPU
				if row[col.name] == "" {
					if ok {
						t.Errorf("%s: got %.1f, want no estimate", col.name, p.TokensPerSecond)
					}
					continue
				}
				want := num(t, row[col.name])
				if !ok {
					t.Errorf("%s: no estimate, want %v", col.name, want)
					continue
				}
				switch serving := col.w.Method == MethodServe; {
				case serving && (p.TokensPerSecond > want+0.51 || p.TokensPerSecond < want/2):
					t.Errorf("%s = %.2f, want within [%v/2, %v]", col.name, p.TokensPerSecond, want, want)
				case !serving && !near(p.TokensPerSecond, want, 0.51):
					t.Errorf("%s = %.2f, want %v", col.name, p.TokensPerSecond, want)
				}
			}
			if s := row["decode_b1_8b_16bit_tps"]; s != "" {
				if got, want := DecodeBatch1TokensPerSecond(c, 8.03, 2), num(t, s); !near(got, want, 0.51) {
					t.Errorf("decode_b1_8b_16bit_tps = %.2f, want %v", got, want)
				}
			}
		})
	}
}

func TestEstimate_Serving7B(t *testing.T) {
	w := workload(t, "serve-7b")
	for _, tc := range []struct {
		card     string
		wantSeqs float64 // concurrent 1280-token sequences the card holds
	}{
		// (0.9 × memory − 14 GB − 2 GB) / (524,288 B × 1280), at most 256.
		{"RTX-4090", (0.9*24e9 - 14e9 - 2e9) / (524288 * 1280)},
		{"L40S", (0.9*48e9 - 14e9 - 2e9) / (524288 * 1280)},
		{"A100-80GB-SXM", (0.9*80e9 - 14e9 - 2e9) / (524288 * 1280)},
		{"H100-80GB-SXM", (0.9*80e9 - 14e9 - 2e9) / (524288 * 1280)},
	} {
		t.Run(tc.card, func(t *testing.T) {
			c := card(t, tc.card)
			p := mustEstimate(t, w, c)
			tps, seqs, ok := servingRate(c, servingCase{paramsB: 7, weightBytes: 2, kvBytesPerToken: 524288,
				peakTFLOPS: c.TrainPeakTFLOPS(), isl: 1024, osl: 256, maxSeqs: 256, gpus: 1})
			if !ok || !near(seqs, tc.wantSeqs, 1e-9) || p.TokensPerSecond != tps {
				t.Errorf("serve-7b on %s: %.2f tokens/s with %.3f sequences (servingRate %.2f, ok %v); want %.3f sequences",
					tc.card, p.TokensPerSecond, seqs, tps, ok, tc.wantSeqs)
			}
			// Output tokens per second can never beat the bandwidth bound
			// of reading the weights once per step for all sequences.
			if bound := seqs * EtaBW * c.BandwidthGBs * 1e9 / 14e9; p.TokensPerSecond > bound {
				t.Errorf("%.1f tokens/s above the bandwidth bound %.1f", p.TokensPerSecond, bound)
			}
		})
	}
}

func TestEstimate_NotPossible(t *testing.T) {
	serveFP4 := workload(t, "serve-7b")
	serveFP4.WeightBytes, serveFP4.Precision = FP4BytesPerWeight, PrecisionFP4
	serveFP8 := workload(t, "serve-7b")
	serveFP8.WeightBytes, serveFP8.Precision = 1, PrecisionFP8
	bf16Only := workload(t, "lora-7b")
	bf16Only.RequireBF16 = true
	unknown := workload(t, "lora-7b")
	unknown.Method = "distill"
	noParams := workload(t, "lora-7b")
	noParams.Model.ParamsB = 0
	odd := card(t, "A100-80GB-SXM")
	odd.EstimatorClass = "tpu"
	for _, tc := range []struct {
		name string
		w    Workload
		c    pricewatch.Card
	}{
		{"fp4 serving on a card without FP4", serveFP4, card(t, "H100-80GB-SXM")},
		{"fp8 serving on a card without FP8", serveFP8, card(t, "A100-80GB-SXM")},
		{"bf16 required on a card without bf16", bf16Only, card(t, "V100-32GB-SXM2")},
		{"unknown method", unknown, card(t, "A100-80GB-SXM")},
		{"no parameters", noParams, card(t, "A100-80GB-SXM")},
		{"unknown estimator class", workload(t, "lora-7b"), odd},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if p, ok := Estimate(tc.w, tc.c); ok {
				t.Errorf("Estimate = %+v, want no estimate", p)
			}
		})
	}
	// On one GPU the 7B weights (14 GB) leave no KV room on a 16 GB card:
	// 0.9 × 16 − 14 − 2 < 0. Estimate then takes the two-GPU group.
	for _, id := range []string{"T4", "V100-16GB-SXM2"} {
		if p, ok := EstimateOn(workload(t, "serve-7b"), card(t, id), 1); ok {
			t.Errorf("%s on 1 GPU: %+v, want no estimate", id, p)
		}
		if p, ok := Estimate(workload(t, "serve-7b"), card(t, id)); !ok || p.GPUs != 2 {
			t.Errorf("%s: %+v, want the 2-GPU group", id, p)
		}
	}
}

// Weight-only 4-bit serving computes in 16 bits and reads a quarter of the
// weight bytes: on a bandwidth-bound card it decodes faster than bf16.
func TestEstimate_WeightOnlyQuantized(t *testing.T) {
	w16 := workload(t, "serve-7b")
	w4 := w16
	w4.WeightBytes, w4.Precision = 0.5, PrecisionInt4
	c := card(t, "RTX-4090")
	p16, p4 := mustEstimate(t, w16, c), mustEstimate(t, w4, c)
	if p4.TokensPerSecond <= p16.TokensPerSecond || !strings.Contains(p4.Note, "bf16") {
		t.Errorf("int4 %.0f (%s) vs bf16 %.0f tokens/s", p4.TokensPerSecond, p4.Note, p16.TokensPerSecond)
	}
}

// Cards without bf16 train in fp16 at their fp16 rate and say so; fp8 is
// used only where asked for and the card has it.
func TestPrecisionOn_Rules(t *testing.T) {
	lora := workload(t, "lora-7b")
	fp8 := lora
	fp8.Precision = PrecisionFP8
	serve8 := workload(t, "serve-7b")
	serve8.Precision = PrecisionFP8
	req := lora
	req.RequireBF16 = true
	for _, tc := range []struct {
		name    string
		w       Workload
		card    string
		want    string
		peak    float64
		noteHas string
		why     string
	}{
		{"V100 runs bf16 jobs in fp16", lora, "V100-16GB-SXM2", PrecisionFP16, 125, "no bf16", ""},
		{"T4 too", lora, "T4", PrecisionFP16, 65, "no bf16", ""},
		{"A100 runs bf16", lora, "A100-80GB-SXM", PrecisionBF16, 312, "", ""},
		{"bf16 required leaves V100 out", req, "V100-32GB-PCIE", "", 0, "", WhyNoBF16},
		{"fp8 training on H100", fp8, "H100-80GB-SXM", PrecisionFP8, 1979, "", ""},
		{"fp8 training on A100 falls back", fp8, "A100-80GB-SXM", PrecisionBF16, 312, "no fp8", ""},
		{"fp8 serving needs fp8", serve8, "A100-80GB-SXM", "", 0, "", WhyNoFP8},
		{"the default never uses fp8", lora, "H100-80GB-SXM", PrecisionBF16, 989, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := PrecisionOn(tc.w, card(t, tc.card))
			if ok != (tc.why == "") || p.Why != tc.why || p.Name != tc.want || p.PeakTFLOPS != tc.peak || !strings.Contains(p.Note, tc.noteHas) {
				t.Errorf("PrecisionOn = %+v, %v; want %s at %g (note %q, why %q)", p, ok, tc.want, tc.peak, tc.noteHas, tc.why)
			}
		})
	}
	// fp8 training runs at FP8TrainingFraction of the bf16 peak:
	// 0.65 × 989e12 / (6 × 7e9) = 15,306 tokens/s on an H100.
	if p := mustEstimate(t, fp8, card(t, "H100-80GB-SXM")); !near(p.TokensPerSecond, 0.65*989e12/(6*7e9), 0.01) {
		t.Errorf("fp8 lora-7b on H100: %.1f", p.TokensPerSecond)
	}
}

func TestEstimate_TrainingWhereItDoesNotFit(t *testing.T) {
	// Memory feasibility is separate from speed (THROUGHPUT.md caveats):
	// full-ft-7b on one RTX-4090 has an estimate, sharded over several.
	w, c := workload(t, "full-ft-7b"), card(t, "RTX-4090")
	if Fits(w, c, 1) {
		t.Fatal("full-ft-7b fits one RTX-4090")
	}
	p := mustEstimate(t, w, c)
	if want := 0.45 * 165.2e12 / (8 * 7e9); !near(p.TokensPerSecond, want, 1e-6*want) {
		t.Errorf("got %.1f, want %.1f", p.TokensPerSecond, want)
	}
}

func TestDecodeBatch1TokensPerSecond_Formula(t *testing.T) {
	for _, tc := range []struct {
		card         string
		paramsB, bpw float64
		want         float64
	}{
		{"RTX-4090", 8.03, 2, 0.75 * 1008e9 / 16.06e9},
		{"A100-40GB-SXM", 8.03, 2, 0.75 * 1555e9 / 16.06e9},
		{"H100-80GB-SXM", 7, 1, 0.75 * 3350e9 / 7e9},
		{"RTX-4090", 0, 2, 0},
	} {
		t.Run(tc.card, func(t *testing.T) {
			if got := DecodeBatch1TokensPerSecond(card(t, tc.card), tc.paramsB, tc.bpw); !near(got, tc.want, 1e-9*tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestClassConstants_Table(t *testing.T) {
	for _, tc := range []struct {
		class string
		u, c  float64
	}{
		{"hopper_blackwell", 0.40, 0.45}, {"ampere_dc", 0.55, 0.60}, {"amd_cdna2", 0.40, 0.30},
		{"amd_cdna3", 0.28, 0.30}, {"ada_dc", 0.40, 0.40}, {"workstation", 0.45, 0.45},
		{"consumer", 0.45, 0.45}, {"volta_turing", 0.30, 0.40},
	} {
		t.Run(tc.class, func(t *testing.T) {
			u, ok1 := Utilization(tc.class)
			c, ok2 := ComputeEfficiency(tc.class)
			if !ok1 || !ok2 || u != tc.u || c != tc.c {
				t.Errorf("U %v (%v), ETA_C %v (%v); want %v, %v", u, ok1, c, ok2, tc.u, tc.c)
			}
		})
	}
	t.Run("every catalog card has a class", func(t *testing.T) {
		cat := catalog()
		for _, id := range cat.IDs() {
			c, _ := cat.Card(id)
			if _, ok := Utilization(c.EstimatorClass); !ok {
				t.Errorf("%s: estimator class %q unknown", id, c.EstimatorClass)
			}
		}
	})
}
