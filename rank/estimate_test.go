package rank

import (
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
)

// llama31_8B is the Llama-3.1-8B shape (models.csv llama3-8b).
func llama31_8B() Model {
	return Model{Name: "llama-3.1-8b", ParamsB: 8.03, Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128}
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

func TestEstimate_NotPossible(t *testing.T) {
	serveFP4 := workload(t, "serve-7b")
	serveFP4.WeightBytes, serveFP4.Precision = FP4BytesPerWeight, PrecisionFP4
	serveFP8 := workload(t, "serve-7b")
	serveFP8.WeightBytes, serveFP8.Precision = 1, PrecisionFP8
	// data/formats.csv: TensorRT-LLM runs neither NVFP4 on Hopper nor FP8
	// on Ampere (vLLM runs both weight-only).
	trtFP4, trtFP8 := serveFP4, serveFP8
	trtFP4.Engine, trtFP8.Engine = EngineTRT, EngineTRT
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
		{"NVFP4 serving on Hopper in TensorRT-LLM", trtFP4, card(t, "H100-80GB-SXM")},
		{"fp8 serving on Ampere in TensorRT-LLM", trtFP8, card(t, "A100-80GB-SXM")},
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
	// On one GPU the 7B weights (14e9 B = 13.04 GiB) leave no KV room on
	// a 16 GB card: T4 0.9 × 15 − 1.5 − 13.04 < 0.6 GiB for one sequence,
	// V100 0.9 × 16 − 1.5 − 13.04 = −0.14. Estimate then takes a group.
	for _, id := range []string{"T4", "V100-16GB-SXM2"} {
		if p, ok := EstimateOn(workload(t, "serve-7b"), card(t, id), 1); ok {
			t.Errorf("%s on 1 GPU: %+v, want no estimate", id, p)
		}
		if p, ok := Estimate(workload(t, "serve-7b"), card(t, id)); !ok || p.GPUs < 2 {
			t.Errorf("%s: %+v, want a group of GPUs", id, p)
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
		{"fp8 serving on Ampere runs weight-only (vLLM's FP8 Marlin)", serve8, "A100-80GB-SXM", PrecisionBF16, 312, "weight-only", ""},
		{"the default never uses fp8", lora, "H100-80GB-SXM", PrecisionBF16, 989, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := PrecisionOn(tc.w, card(t, tc.card))
			if ok != (tc.why == "") || p.Why != tc.why || p.Name != tc.want || p.PeakTFLOPS != tc.peak || !strings.Contains(p.Note, tc.noteHas) {
				t.Errorf("PrecisionOn = %+v, %v; want %s at %g (note %q, why %q)", p, ok, tc.want, tc.peak, tc.noteHas, tc.why)
			}
		})
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

// The assumed U per class (before fitting) and ETA_C are the reference's.
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
	t.Run("every catalog card has a class, with a fitted U", func(t *testing.T) {
		cat := catalog()
		for _, id := range cat.IDs() {
			c, _ := cat.Card(id)
			if _, ok := Utilization(c.EstimatorClass); !ok {
				t.Errorf("%s: estimator class %q unknown", id, c.EstimatorClass)
			}
			if _, ok := calibrated.util[c.EstimatorClass]; !ok {
				t.Errorf("%s: no fitted U for class %q", id, c.EstimatorClass)
			}
		}
	})
}
