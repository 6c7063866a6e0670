package rank

import (
	"slices"
	"testing"

	"github.com/pricewatch/pricewatch/normalize"
)

func catalog() *normalize.Catalog { return normalize.DefaultCatalog() }

func TestBuiltinWorkloads_Shapes(t *testing.T) {
	want := map[string]struct {
		method        Method
		weightBytes   float64
		seq, in, out  int
		checkpointing bool
	}{
		"full-ft-7b": {MethodFull, 2, 2048, 0, 0, true},
		"lora-7b":    {MethodLoRA, 2, 2048, 0, 0, true},
		"qlora-7b":   {MethodQLoRA, 4.127 / 8, 2048, 0, 0, true}, // NF4, data/quant.csv
		"serve-7b":   {MethodServe, 2, 0, 1024, 256, false},
		// gpt-oss-120b as published: its weight bytes are the MXFP4
		// format's (data/quant.csv, 4.25 bits), applied to the experts.
		"serve-gpt-oss-120b":  {MethodServe, 4.25 / 8, 0, 1024, 256, false},
		"serve-qwen3-30b-a3b": {MethodServe, 2, 0, 1024, 256, false},
	}
	moe := map[string]string{"serve-gpt-oss-120b": "gpt-oss-120b", "serve-qwen3-30b-a3b": "qwen3-30b-a3b"}
	ws := BuiltinWorkloads()
	if len(ws) != len(want) {
		t.Fatalf("%d built-in workloads, want %d", len(ws), len(want))
	}
	if !slices.IsSortedFunc(ws, func(a, b Workload) int {
		if a.Name < b.Name {
			return -1
		}
		return 1
	}) {
		t.Error("built-in workloads not sorted by name")
	}
	for _, w := range ws {
		t.Run(w.Name, func(t *testing.T) {
			e, ok := want[w.Name]
			if !ok {
				t.Fatalf("unexpected workload %q", w.Name)
			}
			if p, ok := moe[w.Name]; ok {
				if w.Model != Presets()[p] || !w.Model.MoE() {
					t.Errorf("model = %+v, want the %s preset", w.Model, p)
				}
			} else if w.Model != Llama7B() {
				t.Errorf("model = %+v, want llama-7b shape", w.Model)
			}
			if w.Method != e.method || w.WeightBytes != e.weightBytes || w.SeqLen != e.seq ||
				w.InputTokens != e.in || w.OutputTokens != e.out || w.Checkpointing != e.checkpointing {
				t.Errorf("workload = %+v, want %+v", w, e)
			}
			if w.Method.Training() && w.MicroBatch != 1 {
				t.Errorf("micro-batch = %d, want 1", w.MicroBatch)
			}
			if w.Method == MethodServe && (w.MaxSequences != 256 || w.ContextTokens() != 1280) {
				t.Errorf("serving: max sequences %d, context %d; want 256, 1280", w.MaxSequences, w.ContextTokens())
			}
			if w.Description == "" {
				t.Error("no description")
			}
		})
	}
	t.Run("llama-7b shape", func(t *testing.T) {
		m := Llama7B()
		if m.ParamsB != 7 || m.Layers != 32 || m.Hidden != 4096 || m.Heads != 32 || m.KVHeads != 32 || m.HeadDim != 128 {
			t.Errorf("Llama7B() = %+v", m)
		}
	})
	t.Run("fresh copy", func(t *testing.T) {
		a := BuiltinWorkloads()
		a[0].Name = "changed"
		if BuiltinWorkloads()[0].Name == "changed" {
			t.Error("BuiltinWorkloads shares its slice")
		}
	})
}

func TestWorkloadByName_Lookup(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"lora-7b", true}, {"qlora-7b", true}, {"full-ft-7b", true}, {"serve-7b", true},
		{"infer-7b", false}, {"", false}, {"LORA-7B", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, ok := WorkloadByName(tc.name)
			if ok != tc.ok || (ok && w.Name != tc.name) {
				t.Errorf("WorkloadByName(%q) = %q, %v; want ok %v", tc.name, w.Name, ok, tc.ok)
			}
		})
	}
}

func TestMethod_Training(t *testing.T) {
	for _, tc := range []struct {
		m    Method
		want bool
	}{
		{MethodFull, true}, {MethodLoRA, true}, {MethodQLoRA, true}, {MethodServe, false}, {"other", false},
	} {
		t.Run(string(tc.m), func(t *testing.T) {
			if got := tc.m.Training(); got != tc.want {
				t.Errorf("Training() = %v, want %v", got, tc.want)
			}
		})
	}
}
