package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/rank"
)

// estimateCLI runs pricewatch estimate with args and --json and decodes
// what it prints.
func estimateCLI(t *testing.T, args ...string) (map[string]any, rank.EstimateResult) {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := Run(t.Context(), append(append([]string{"estimate"}, args...), "--json"), &out, &errOut); err != nil {
		t.Fatalf("estimate %q: %v %s", args, err, errOut.String())
	}
	var raw map[string]any
	var res rank.EstimateResult
	if err := json.Unmarshal(out.Bytes(), &raw); err != nil {
		t.Fatalf("estimate %q printed no JSON: %v\n%s", args, err, out.String())
	}
	json.Unmarshal(out.Bytes(), &res)
	return raw, res
}

// TestEstimate_CLIMatchesEndpoint: pricewatch estimate --json prints what
// POST /v1/estimate of a running daemon answers for the same request.
func TestEstimate_CLIMatchesEndpoint(t *testing.T) {
	db := filepath.Join(t.TempDir(), "pw.db")
	cfg := writeConfig(t, db, "http://127.0.0.1:1", "@every 1h")
	d := startServe(t, "--config", cfg, "--demo")
	post := func(body string) map[string]any {
		t.Helper()
		res, err := http.Post(d.base+"/v1/estimate", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var v map[string]any
		if err := json.NewDecoder(res.Body).Decode(&v); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("POST /v1/estimate %s: %d %v %v", body, res.StatusCode, err, v)
		}
		return v
	}
	cfgJSON, err := os.ReadFile("../../rank/data/configs/qwen3-8b.json")
	if err != nil {
		t.Fatal(err)
	}
	ossJSON, err := os.ReadFile("../../rank/data/configs/gpt-oss-120b.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		body string
		args []string
	}{
		{`{"model":{"preset":"llama3-8b"},"card":"H100-80GB-SXM"}`, []string{"--preset", "llama3-8b", "--card", "H100-80GB-SXM"}},
		{`{"model":{"preset":"llama3-70b"},"precision":"bf16","card":"L4"}`, []string{"--preset", "llama3-70b", "--precision", "bf16", "--card", "L4"}},
		{`{"model":{"preset":"llama3-70b"},"card":"H100-80GB-SXM","gpus":4,"layout":{"tp":2,"pp":2},"input_tokens":2000,"output_tokens":500,"concurrency":64}`,
			[]string{"--preset", "llama3-70b", "--card", "H100-80GB-SXM", "--gpus", "4", "--tp", "2", "--pp", "2", "--input-tokens", "2000", "--output-tokens", "500", "--concurrency", "64"}},
		{`{"model":{"preset":"llama3-8b"},"method":"lora","card":"A100-80GB-SXM","seq_len":4096,"micro_batch":2}`,
			[]string{"--preset", "llama3-8b", "--method", "lora", "--card", "A100-80GB-SXM", "--seq-len", "4096", "--micro-batch", "2"}},
		{`{"model":{"config":` + string(cfgJSON) + `},"card":"RTX-4090","engine":"llama.cpp"}`,
			[]string{"--model-config", "../../rank/data/configs/qwen3-8b.json", "--card", "RTX-4090", "--engine", "llama.cpp"}},
		// Issue 28's cases: a mixture-of-experts preset, and gpt-oss-120b's
		// config.json as published (rank/data/configs/PROVENANCE.md says
		// where the copy comes from), MXFP4 weight-only on an H100.
		{`{"model":{"preset":"qwen3-30b-a3b"},"card":"H100-80GB-SXM"}`, []string{"--preset", "qwen3-30b-a3b", "--card", "H100-80GB-SXM"}},
		{`{"model":{"config":` + string(ossJSON) + `},"card":"H100-80GB-SXM"}`,
			[]string{"--model-config", "../../rank/data/configs/gpt-oss-120b.json", "--card", "H100-80GB-SXM"}},
		{`{"model":{"preset":"deepseek-r1"},"card":"H200-141GB-SXM","gpus":8,"layout":{"dp":8,"ep":8}}`,
			[]string{"--preset", "deepseek-r1", "--card", "H200-141GB-SXM", "--gpus", "8", "--dp", "8", "--ep", "8"}},
	} {
		endpoint := post(c.body)
		cli, _ := estimateCLI(t, c.args...)
		if !reflect.DeepEqual(cli, endpoint) {
			a, _ := json.Marshal(cli)
			b, _ := json.Marshal(endpoint)
			t.Errorf("estimate %q differs from POST /v1/estimate %s:\n%s\n%s", c.args, c.body, a, b)
		}
	}
	// The request of the brief, decoded into the result type both ways.
	var fromAPI rank.EstimateResult
	b, _ := json.Marshal(post(`{"model":{"preset":"qwen3-30b-a3b"},"card":"H100-80GB-SXM"}`))
	json.Unmarshal(b, &fromAPI)
	_, fromCLI := estimateCLI(t, "--preset", "qwen3-30b-a3b", "--card", "H100-80GB-SXM")
	if !reflect.DeepEqual(fromCLI, fromAPI) || !fromCLI.Fits || fromCLI.TokensPerSecond <= 0 || !fromCLI.Model.MoE() {
		t.Errorf("CLI %+v\nAPI %+v", fromCLI, fromAPI)
	}
}

// An input error is a usage error (exit status 2) naming the flag.
func TestEstimate_InputErrorsNameTheFlag(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, append([]byte(`{"architectures":["LlamaForCausalLM"],"pad":"`), bytes.Repeat([]byte("x"), rank.MaxConfigBytes)...), 0o600); err != nil {
		t.Fatal(err)
	}
	notJSON := filepath.Join(dir, "config.json")
	os.WriteFile(notJSON, []byte("architectures: [LlamaForCausalLM]\n"), 0o600)
	unknownArch := filepath.Join(dir, "arch.json")
	os.WriteFile(unknownArch, []byte(`{"architectures":["NoSuchForCausalLM"]}`), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--preset", "llama3-8b", "--card", "NOPE-1"}, "--card: unknown card"},
		{[]string{"--preset", "llama3-8b"}, "--card: required"},
		{[]string{"--preset", "no-such-model", "--card", "L4"}, "--preset: unknown preset"},
		{[]string{"--card", "L4"}, "--preset NAME, --model-config FILE"},
		{[]string{"--preset", "llama3-8b", "--model-config", notJSON, "--card", "L4"}, "not two of them"},
		{[]string{"--preset", "llama3-8b", "--card", "L4", "--gpus", "4", "--tp", "2"}, "--tp, --pp, --ep, --dp: "},
		{[]string{"--preset", "llama3-8b", "--card", "L4", "--gpus", "5000"}, "--gpus: "},
		{[]string{"--preset", "llama3-8b", "--card", "L4", "--engine", "nope"}, "--engine: unknown engine"},
		{[]string{"--preset", "llama3-8b", "--card", "L4", "--method", "lora", "--input-tokens", "10"}, "--input-tokens: "},
		{[]string{"--params-b", "7", "--layers", "32", "--card", "L4"}, "--hidden: "},
		{[]string{"--model-config", big, "--card", "L4"}, "--model-config: " + big + ": larger than 1048576 bytes"},
		{[]string{"--model-config", notJSON, "--card", "L4"}, "--model-config " + notJSON + ": not JSON"},
		{[]string{"--model-config", unknownArch, "--card", "L4"}, "--model-config " + unknownArch + ": architectures: unknown architecture"},
		{[]string{"--model-config", filepath.Join(dir, "missing.json"), "--card", "L4"}, "--model-config: "},
		{[]string{"--preset", "llama3-8b", "--card", "L4", "stray"}, "no arguments"},
	} {
		var out, errOut bytes.Buffer
		err := Run(t.Context(), append([]string{"estimate"}, c.args...), &out, &errOut)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("estimate %q: %v (exit %d), want exit 2 naming %q", c.args, err, exitCode(err), c.want)
		}
		if out.Len() > 0 {
			t.Errorf("estimate %q printed %q", c.args, out.String())
		}
	}
}

// The default output says the throughput, the layout, the precision, the
// memory parts and whether it fits.
func TestEstimate_ReadableOutput(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := Run(t.Context(), []string{"estimate", "--preset", "llama3-70b", "--card", "H100-80GB-SXM", "--tp", "2", "--pp", "2"}, &out, &errOut); err != nil {
		t.Fatalf("%v %s", err, errOut.String())
	}
	s := out.String()
	for _, want := range []string{"llama3-70b", "4 × H100-80GB-SXM", "tokens/s per GPU", "tokens/s in all", "TP2×PP2 (not the engine's default)",
		"Precision:    bf16", "weights ", "KV cache ", "GiB usable of 80.0 GiB", "Fits:         yes", "Note:"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	out.Reset()
	if err := Run(t.Context(), []string{"estimate", "--preset", "llama3-70b", "--precision", "bf16", "--card", "L4"}, &out, &errOut); err != nil {
		t.Fatalf("%v %s", err, errOut.String())
	}
	if s := out.String(); !strings.Contains(s, "Fits:         no: needs ") || !strings.Contains(s, "GiB") || !strings.Contains(s, "(the engine's default)") {
		t.Errorf("a job that does not fit:\n%s", s)
	}
}
