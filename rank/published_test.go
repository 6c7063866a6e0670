package rank

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestMeasurements_EmbeddedData(t *testing.T) {
	ref, err := os.ReadFile("data/throughput.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ref, throughputCSV) {
		t.Error("embedded throughput.csv differs from data/throughput.csv")
	}
	ms := Measurements()
	if len(ms) < 102 {
		t.Errorf("%d rows, want the reference's 102 and more", len(ms))
	}
	seen := map[string]bool{}
	seeds := 0
	for _, m := range ms {
		if seen[m.ID] {
			t.Errorf("duplicate id %s", m.ID)
		}
		seen[m.ID] = true
		if _, ok := catalog().Card(m.Card); !ok {
			t.Errorf("%s: card %s not in catalog", m.ID, m.Card)
		}
		if m.Category == CategorySeedExample {
			seeds++
		}
	}
	if seeds != 3 {
		t.Errorf("%d seed examples, want 3", seeds)
	}
	ms[0].ID = "changed"
	if Measurements()[0].ID == "changed" {
		t.Error("Measurements shares its slice")
	}
}

func TestParseMeasurements_Errors(t *testing.T) {
	for _, tc := range []struct{ name, csv string }{
		{"empty", ""},
		{"missing column", "id,category\nx,training\n"},
		{"bad number", "id,category,workload,params_b,precision,canonical_id,tokens_per_sec_per_gpu,estimate_tokens_per_sec_per_gpu,use_in_calibration\n" +
			"x,training,lora,seven,bf16,T4,100,100,yes\n"},
		{"no throughput", "id,category,workload,params_b,precision,canonical_id,tokens_per_sec_per_gpu,estimate_tokens_per_sec_per_gpu,use_in_calibration\n" +
			"x,training,lora,7,bf16,T4,,100,yes\n"},
		{"unknown MoE kernel family", "id,category,workload,params_b,precision,canonical_id,tokens_per_sec_per_gpu,estimate_tokens_per_sec_per_gpu,use_in_calibration,moe_kernel\n" +
			"x,inference,serve_concurrency,7,bf16,T4,100,100,no,trtion-fused-moe\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseMeasurements(strings.NewReader(tc.csv)); err == nil {
				t.Error("no error")
			}
		})
	}
}

func TestPublished_BuiltinWorkloads(t *testing.T) {
	for _, tc := range []struct {
		workload, card string
		want           float64 // 0: no published figure applies
		ids            []string
	}{
		// Qwen-7B (7.72 B) LoRA/QLoRA on A100, seq 2k and 4k: median of two.
		{"lora-7b", "A100-80GB-SXM", (3151 + 3244) / 2.0 * 7.72 / 7, []string{"qwen7b-lora-2k", "qwen7b-lora-4k"}},
		{"qlora-7b", "A100-80GB-SXM", (2341 + 2825) / 2.0 * 7.72 / 7, []string{"qwen7b-qlora-2k", "qwen7b-qlora-4k"}},
		// torchtune Llama-3.1-8B rows imply more than the dense peak
		// (THROUGHPUT.md caveats): not vetted, so they never apply.
		{"lora-7b", "RTX-4090", 0, nil},
		{"qlora-7b", "RTX-4090", 0, nil},
		{"full-ft-7b", "RTX-4090", 0, nil},
		{"lora-7b", "RTX-A6000", 0, nil},
		// Seven bf16 H100 rows (LLM Foundry MPT-7B, torchtitan Llama-3.1-8B);
		// the median is torchtitan compiled. FP8 rows do not apply.
		{"full-ft-7b", "H100-80GB-SXM", 6667 * 8.03 / 7, []string{"lf-h100-7b-2k", "lf-h100-7b-4k", "lf-h100-7b-8k",
			"lf-h100-7b-2k-128", "titan-h100-8b-fsdp", "titan-h100-8b-compile", "titan-h100-8b-compile-128"}},
		// 13B (12.85) and 3B (3.21) rows are outside ±25% of 7B.
		{"full-ft-7b", "A100-80GB-SXM", (4641 + 3684) / 2.0 * 6.66 / 7, []string{"lf-a100-80-7b-2k", "lf-a100-80-7b-4k"}},
		{"full-ft-7b", "A100-40GB-SXM", (3679 + 3623) / 2.0 * 6.66 / 7, []string{"lf-a100-40-7b-2k", "lf-a100-40-7b-2k-128"}},
		{"full-ft-7b", "MI250-128GB", (3843 + 3681) / 2.0 * 6.66 / 7, []string{"mi250-mpt7b-4", "mi250-mpt7b-128"}},
		// TensorRT-LLM Llama-3.1-8B FP16, 2048 in / 2048 out, has 8 KV heads;
		// serve-7b has 32, a 4x larger KV cache: the row does not apply.
		{"serve-7b", "A100-80GB-SXM", 0, nil},
		// Only the seed example (never published) and FP8 NeMo rows.
		{"lora-7b", "H100-80GB-SXM", 0, nil},
		{"lora-7b", "L40S", 0, nil},
		{"full-ft-7b", "H200-141GB-SXM", 0, nil}, // FP8 rows only
		{"serve-7b", "H100-80GB-SXM", 0, nil},    // FP8 rows only
		{"serve-7b", "L40S", 0, nil},
		{"qlora-7b", "T4", 0, nil},
		{"lora-7b", "NO-SUCH-CARD", 0, nil},
	} {
		t.Run(tc.workload+"/"+tc.card, func(t *testing.T) {
			p, ok := Published(workload(t, tc.workload), tc.card)
			if tc.want == 0 {
				if ok {
					t.Errorf("Published = %+v, want none", p)
				}
				return
			}
			if !ok {
				t.Fatalf("no published figure, want %.1f", tc.want)
			}
			if !near(p.TokensPerSecond, tc.want, 1e-6*tc.want) {
				t.Errorf("tokens/s = %.2f, want %.2f", p.TokensPerSecond, tc.want)
			}
			if p.Origin != OriginPublished || p.Card != tc.card || p.Workload != tc.workload {
				t.Errorf("profile = %+v", p)
			}
			for _, id := range tc.ids {
				if !strings.Contains(p.Note, id) {
					t.Errorf("note %q does not name %s", p.Note, id)
				}
			}
			if strings.Contains(p.Note, "seed-") {
				t.Errorf("note %q names a seed example", p.Note)
			}
		})
	}
}

func TestPublished_Rules(t *testing.T) {
	m8 := llama31_8B()
	serve := func(in, out int, wb float64) Workload {
		prec := PrecisionBF16
		if wb == 1 {
			prec = PrecisionFP8
		}
		return Workload{Name: "serve-8b", Model: m8, Method: MethodServe, WeightBytes: wb, Precision: prec, InputTokens: in, OutputTokens: out}
	}
	train := func(method Method, paramsB, wb float64) Workload {
		m := Llama7B()
		m.ParamsB = paramsB
		prec := PrecisionBF16
		if wb == 0.5 {
			prec = PrecisionNF4
		}
		return Workload{Name: "train", Model: m, Method: method, WeightBytes: wb, Precision: prec, SeqLen: 2048, MicroBatch: 1, Checkpointing: true}
	}
	for _, tc := range []struct {
		name string
		w    Workload
		card string
		want float64
	}{
		{"fp8 serving matches the vetted fp8 rows, median of two engines", serve(2048, 2048, 1), "H100-80GB-SXM", (9488.42 + 9305) / 2},
		{"serving rows need the same KV shape", Workload{Name: "s7", Model: Llama7B(), Method: MethodServe, WeightBytes: 2,
			InputTokens: 2048, OutputTokens: 2048}, "A100-80GB-SXM", 0},
		{"16-bit serving ignores fp8 rows", serve(2048, 2048, 2), "H100-80GB-SXM", 0},
		{"16-bit serving matches fp16 rows", serve(2048, 2048, 2), "A100-80GB-SXM", 2424.16},
		{"tokens in and out must match", serve(1024, 2048, 2), "A100-80GB-SXM", 0},
		{"serve_online rows never apply", serve(467, 256, 2), "H100-80GB-SXM", 0},
		{"decode_batch1 rows never apply", serve(1024, 128, 2), "A100-40GB-SXM", 0},
		{"mlperf rows never apply", Workload{Name: "s70", Model: Model{ParamsB: 70}, Method: MethodServe,
			WeightBytes: 1, Precision: PrecisionFP8, InputTokens: 300, OutputTokens: 291}, "H100-80GB-SXM", 0},
		{"fp8 training matches fp8 rows only", func() Workload { w := train(MethodLoRA, 7, 2); w.Precision = PrecisionFP8; return w }(),
			"H100-80GB-SXM", 24824 * 6.74 / 7},
		{"3B LoRA scaled by params", train(MethodLoRA, 3, 2), "A100-80GB-SXM", 8210 * 3.21 / 3},
		{"3B full: median of two", train(MethodFull, 3, 2), "A100-80GB-SXM", (8998 + 7210) / 2.0 * 3.21 / 3},
		{"+25% edge: 7.72B row applies to 6.2B", train(MethodLoRA, 6.2, 2), "A100-80GB-SXM", (3151 + 3244) / 2.0 * 7.72 / 6.2},
		{"beyond 25%: 7.72B row not for 6.1B", train(MethodLoRA, 6.1, 2), "A100-80GB-SXM", 0},
		{"13B LoRA rows are fp8 only", train(MethodLoRA, 13, 2), "H100-80GB-SXM", 0},
		{"QLoRA on a 16-bit base matches nothing", train(MethodQLoRA, 7, 2), "A100-80GB-SXM", 0},
		{"LoRA on a 4-bit base matches nothing", train(MethodLoRA, 7, 0.5), "A100-80GB-SXM", 0},
		{"zero params", train(MethodLoRA, 0, 2), "A100-80GB-SXM", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := Published(tc.w, tc.card)
			switch {
			case tc.want == 0 && ok:
				t.Errorf("Published = %+v, want none", p)
			case tc.want != 0 && !ok:
				t.Errorf("no published figure, want %.1f", tc.want)
			case ok && !near(p.TokensPerSecond, tc.want, 1e-6*tc.want):
				t.Errorf("tokens/s = %.2f, want %.2f (%s)", p.TokensPerSecond, tc.want, p.Note)
			}
		})
	}
}

func TestMedian_Cases(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []float64
		want float64
	}{
		{"one", []float64{3}, 3}, {"odd", []float64{5, 1, 3}, 3}, {"even", []float64{4, 1, 3, 2}, 2.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Median(tc.in); got != tc.want {
				t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}
