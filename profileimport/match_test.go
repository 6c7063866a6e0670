package profileimport_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/profileimport"
	"github.com/pricewatch/pricewatch/rank"
)

func workload(t *testing.T, name string) rank.Workload {
	t.Helper()
	w, ok := rank.WorkloadByName(name)
	if !ok {
		t.Fatalf("no workload %s", name)
	}
	return w
}

// presetWorkload is a serving workload of a models.csv preset, as a
// config's workloads: entry makes one.
func presetWorkload(t *testing.T, preset string) rank.Workload {
	t.Helper()
	m, ok := rank.Presets()[preset]
	if !ok {
		t.Fatalf("no preset %s", preset)
	}
	w := workload(t, "serve-7b")
	w.Name, w.Model = "serve-"+preset, m
	return w
}

// Issue 19 item 10: a log of the other kind than the workload (a vLLM
// serving benchmark for a training workload, a trainer's metrics for a
// serving one) is refused with an error naming the workload option and
// both kinds. Before the fix every pair was accepted.
func TestMatch_KindRefused(t *testing.T) {
	vllm, err := profileimport.Import(mustRead(t, "vllm_benchmark_serving.json"), profileimport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hf, err := profileimport.Import(mustRead(t, "hf_trainer_state.json"), profileimport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tt, err := profileimport.Import(mustRead(t, "torchtune_log_1714000000.txt"), profileimport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if vllm.Kind != profileimport.KindServing || hf.Kind != profileimport.KindTraining || tt.Kind != profileimport.KindTraining {
		t.Fatalf("kinds: vllm %q, hf %q, torchtune %q", vllm.Kind, hf.Kind, tt.Kind)
	}
	for _, c := range []struct {
		res      profileimport.Result
		workload string
		ok       bool
	}{
		{vllm, "lora-7b", false}, {vllm, "qlora-7b", false}, {vllm, "full-ft-7b", false}, {vllm, "serve-7b", true},
		{hf, "serve-7b", false}, {tt, "serve-7b", false}, {hf, "lora-7b", true}, {tt, "full-ft-7b", true},
	} {
		_, err := profileimport.Match(c.res, workload(t, c.workload))
		var oe *profileimport.OptionError
		switch {
		case c.ok && err != nil:
			t.Errorf("%s for %s: %v", c.res.Format, c.workload, err)
		case c.ok:
		case !errors.As(err, &oe) || oe.Option != profileimport.OptionWorkload:
			t.Errorf("%s for %s: %v, want an error of the workload option", c.res.Format, c.workload, err)
		case !strings.Contains(oe.Reason, c.res.Format) || !strings.Contains(oe.Reason, c.workload) ||
			!strings.Contains(oe.Reason, "serving") || !strings.Contains(oe.Reason, "training"):
			t.Errorf("%s for %s: %q does not name the format, the workload and both kinds", c.res.Format, c.workload, oe.Reason)
		}
	}
}

// The model a log names is compared with the workload's by size class
// (within 1.4× of the workload's parameters) and, where the workload names
// a model family (a preset other than the generic llama-7b), by family. A
// difference is a warning naming both, never a refusal.
func TestMatch_ModelWarns(t *testing.T) {
	serve7b := workload(t, "serve-7b") // generic 7B: 7.0 B parameters, no family
	for _, c := range []struct {
		model string
		w     rank.Workload
		warn  []string // empty: no warning
	}{
		// The fixture's model: 70 / 7 = 10×, another size class.
		{"meta-llama/Llama-3.1-70B-Instruct", serve7b, []string{"meta-llama/Llama-3.1-70B-Instruct", "70B", "serve-7b", "llama-7b", "7B"}},
		{"meta-llama/Llama-2-7b-hf", serve7b, nil},
		{"Qwen/Qwen2.5-7B-Instruct", serve7b, nil},                                // generic workload: no family compared
		{"meta-llama/Meta-Llama-3-8B-Instruct", serve7b, nil},                     // 8 / 7 = 1.14
		{"google/gemma-2-9b-it", serve7b, nil},                                    // 9 / 7 = 1.29
		{"meta-llama/Llama-2-13b-chat-hf", serve7b, []string{"13B", "7B"}},        // 13 / 7 = 1.86
		{"mistralai/Mixtral-8x7B-Instruct-v0.1", serve7b, []string{"8x7B", "7B"}}, // 56 / 7 = 8
		{"facebook/opt-125m", serve7b, []string{"125M", "7B"}},                    // 7 / 0.125 = 56
		{"/models/llama-70b-awq/", serve7b, []string{"70B"}},
		{"Qwen/Qwen3-30B-A3B", serve7b, []string{"30B"}}, // total parameters, not the active 3B
		{"TheBloke/Llama-2-7B-Chat-AWQ", serve7b, nil},
		{"models--meta-llama--Llama-2-7b-hf/snapshots/8cca527612d856d7d32bd94f8103728d614eb852", serve7b, nil},
		// A name without a size: the check cannot be made, and says so.
		{"gpt2", serve7b, []string{"gpt2", "size", "llama-7b"}},
		// A preset workload: its family is compared too.
		{"Qwen/Qwen2.5-7B-Instruct", presetWorkload(t, "llama3-8b"), []string{"qwen", "llama"}}, // 7 / 8.03: same size, other family
		{"meta-llama/Llama-3.1-8B-Instruct", presetWorkload(t, "llama3-8b"), nil},
		{"Qwen/Qwen2.5-7B-Instruct", presetWorkload(t, "qwen2.5-7b"), nil},
		{"meta-llama/Llama-3.3-70B-Instruct", presetWorkload(t, "llama3-70b"), nil},
		{"meta-llama/Llama-3.1-8B-Instruct", presetWorkload(t, "llama3-70b"), []string{"8B", "70.6B"}},
		// A log that names no model is not compared.
		{"", serve7b, nil},
	} {
		res := profileimport.Result{Format: profileimport.FormatVLLMServing, Kind: profileimport.KindServing, Model: c.model, TokensPerSecondPerGPU: 100}
		warnings, err := profileimport.Match(res, c.w)
		if err != nil {
			t.Errorf("%q for %s: %v", c.model, c.w.Name, err)
			continue
		}
		if len(c.warn) == 0 {
			if len(warnings) != 0 {
				t.Errorf("%q for %s: warned %q", c.model, c.w.Name, warnings)
			}
			continue
		}
		if len(warnings) != 1 {
			t.Errorf("%q for %s: %d warnings %q, want 1", c.model, c.w.Name, len(warnings), warnings)
			continue
		}
		for _, s := range c.warn {
			if !strings.Contains(warnings[0], s) {
				t.Errorf("%q for %s: warning %q does not say %q", c.model, c.w.Name, warnings[0], s)
			}
		}
	}
}

// A vLLM result names its model (model_id); the training formats name
// none.
func TestImport_Model(t *testing.T) {
	for file, want := range map[string]string{"vllm_benchmark_serving.json": "meta-llama/Llama-3.1-70B-Instruct",
		"hf_trainer_state.json": "", "torchtune_log_1714003600.jsonl": ""} {
		res, err := profileimport.Import(mustRead(t, file), profileimport.Options{})
		if err != nil || res.Model != want {
			t.Errorf("%s: model %q, %v; want %q", file, res.Model, err, want)
		}
	}
}
