package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/rank"
)

// runEstimate prints one throughput estimate. It reads no database and
// asks no daemon: an estimate depends on the request, the embedded card
// catalog and the calibrated model only, so it is computed here by the
// same function POST /v1/estimate calls (httpapi.Estimate), and --json
// prints the body that endpoint answers.
func runEstimate(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("estimate", stdout, stderr)
	preset := fs.String("preset", "", "model preset: llama3-8b, llama3-70b, qwen3-32b, gpt-oss-120b, … (an unknown one lists them)")
	modelConfig := fs.String("model-config", "", "a Hugging Face config.json `FILE` (at most 1 MiB), read as published")
	paramsB := fs.Float64("params-b", 0, "model shape: total parameters, billions (with --layers, --hidden, --heads)")
	layers := fs.Int("layers", 0, "model shape: layers")
	hidden := fs.Int("hidden", 0, "model shape: hidden size")
	heads := fs.Int("heads", 0, "model shape: attention heads")
	kvHeads := fs.Int("kv-heads", 0, "model shape: key/value heads (default --heads)")
	headDim := fs.Int("head-dim", 0, "model shape: head size (default hidden / heads)")
	card := fs.String("card", "", "canonical card id, e.g. H100-80GB-SXM (required)")
	gpus := fs.Int("gpus", 0, "GPUs of the card (default 1, or the layout's tp × pp × dp)")
	method := fs.String("method", string(rank.MethodServe), "serve, full, lora or qlora")
	precision := fs.String("precision", "", "bf16 (default; a checkpoint published quantized serves as published), fp16, fp8, fp4, mxfp4, int8, nf4, int4, awq, gptq, q4_k_m")
	engine := fs.String("engine", "", "serving engine: "+strings.Join(rank.Engines(), ", ")+" (default vllm)")
	tp := fs.Int("tp", 0, "serving layout: tensor-parallel degree (any of --tp, --pp, --ep, --dp sets the layout; default the engine's)")
	pp := fs.Int("pp", 0, "serving layout: pipeline-parallel degree")
	ep := fs.Int("ep", 0, "serving layout: expert-parallel degree")
	dp := fs.Int("dp", 0, "serving layout: data-parallel degree")
	inTokens := fs.Int("input-tokens", 0, "serving: prompt tokens per request (default 1024, with --output-tokens 256)")
	outTokens := fs.Int("output-tokens", 0, "serving: generated tokens per request")
	concurrency := fs.Int("concurrency", 0, "serving: requests in flight (default as many as the engine's batch and the KV cache allow)")
	adpBalance := fs.Bool("attention-dp-balance", false, "serving: the engine's attention data-parallel balancer is on (TensorRT-LLM attention_dp_config.enable_balance)")
	expertA2A := fs.Bool("expert-all-to-all", false, "serving: expert-parallel tokens move by all-to-all (DeepEP, pplx, TensorRT-LLM MNNVL), not the engine's default gather")
	seqLen := fs.Int("seq-len", 0, "training: sequence length (default 2048)")
	microBatch := fs.Int("micro-batch", 0, "training: micro-batch per GPU (default 1)")
	asJSON := fs.Bool("json", false, "print the JSON the POST /v1/estimate endpoint answers")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("estimate takes no arguments, got %q", fs.Args())}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	req := rank.EstimateRequest{Method: *method, Precision: *precision, Card: *card, GPUs: *gpus, Engine: *engine,
		InputTokens: *inTokens, OutputTokens: *outTokens, Concurrency: *concurrency, SeqLen: *seqLen, MicroBatch: *microBatch,
		AttentionDPBalance: *adpBalance, ExpertAllToAll: *expertA2A}
	m := &rank.ModelSpec{Preset: *preset, ParamsB: *paramsB, Layers: *layers, Hidden: *hidden, Heads: *heads, KVHeads: *kvHeads, HeadDim: *headDim}
	shape := set["params-b"] || set["layers"] || set["hidden"] || set["heads"] || set["kv-heads"] || set["head-dim"]
	given := 0
	for _, b := range []bool{set["preset"], set["model-config"], shape} {
		if b {
			given++
		}
	}
	switch {
	case given == 0:
		return usageError{"give the model: --preset NAME, --model-config FILE, or the shape (--params-b, --layers, --hidden, --heads)"}
	case given > 1:
		return usageError{"give one model: --preset, --model-config or the shape flags, not two of them"}
	case set["preset"] && *preset == "":
		return usageError{"--preset: empty; name a preset such as llama3-8b"}
	}
	if set["model-config"] {
		raw, err := readModelConfig(*modelConfig)
		if err != nil {
			return err
		}
		m.Config = raw
	}
	req.Model = m
	if set["tp"] || set["pp"] || set["ep"] || set["dp"] {
		req.Layout = &rank.Layout{TP: *tp, PP: *pp, EP: *ep, DP: *dp}
	}

	res, err := httpapi.Estimate(req)
	if err != nil {
		return estimateError(err, *modelConfig)
	}
	if *asJSON {
		b, err := json.Marshal(res)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	printEstimate(stdout, req, res)
	return nil
}

// readModelConfig reads a config.json given to --model-config, at most
// rank.MaxConfigBytes (the limit the API holds a config to), and checks it
// is one JSON value: what the endpoint would have read from the body.
func readModelConfig(file string) (json.RawMessage, error) {
	if file == "" {
		return nil, usageError{"--model-config: empty; give a config.json FILE"}
	}
	data, err := readLimited(file, rank.MaxConfigBytes)
	if err != nil {
		return nil, usageError{"--model-config: " + err.Error()}
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, usageError{fmt.Sprintf("--model-config %s: empty file; give a Hugging Face config.json", file)}
	}
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, usageError{fmt.Sprintf("--model-config %s: not JSON: %v", file, err)}
	}
	return raw, nil
}

// estimateFlags are the flags of the request's fields where the name
// differs from the field with dashes.
var estimateFlags = map[string]string{
	"model":        "--preset, --model-config or the shape flags",
	"model.preset": "--preset",
	"layout":       "--tp, --pp, --ep, --dp",
}

// estimateError words an invalid request as a usage error naming the flag
// (the request's field, "card: unknown card", becomes "--card: unknown
// card"); any other error stays as it is.
func estimateError(err error, configFile string) error {
	var pe *pricewatch.Error
	if !errors.As(err, &pe) || pe.Code != pricewatch.EInvalid {
		return err
	}
	field, msg, ok := strings.Cut(pe.Message, ": ")
	if !ok || strings.ContainsAny(field, " \"") {
		return usageError{pe.Message}
	}
	var flagName string
	switch {
	case estimateFlags[field] != "":
		flagName = estimateFlags[field]
	case field == "model.config" || strings.HasPrefix(field, "model.config."):
		// model.config.architectures: the flag, the file and the key in it.
		flagName = "--model-config " + configFile
		if key := strings.TrimPrefix(strings.TrimPrefix(field, "model.config"), "."); key != "" {
			msg = key + ": " + msg
		}
	case strings.HasPrefix(field, "layout."):
		flagName = "--" + strings.TrimPrefix(field, "layout.")
	default:
		flagName = "--" + strings.ReplaceAll(strings.TrimPrefix(field, "model."), "_", "-")
	}
	return usageError{flagName + ": " + msg}
}

// printEstimate writes an estimate for a person: the throughput, the
// layout, the precision, the memory per GPU and whether it fits.
func printEstimate(w io.Writer, req rank.EstimateRequest, r rank.EstimateResult) {
	method := rank.Method(strings.ToLower(req.Method))
	if method == "" {
		method = rank.MethodServe
	}
	what := map[rank.Method]string{rank.MethodServe: "serving", rank.MethodFull: "full fine-tune", rank.MethodLoRA: "LoRA fine-tune",
		rank.MethodQLoRA: "QLoRA fine-tune"}[method]
	if what == "" {
		what = string(method)
	}
	fmt.Fprintf(w, "Estimate: %s of %s on %d × %s\n", what, r.Model, r.GPUs, req.Card)
	if r.Fits {
		fmt.Fprintf(w, "Throughput:   %.0f tokens/s per GPU, %.0f tokens/s in all (%s)\n", r.TokensPerSecondPerGPU, r.TokensPerSecond, r.Basis)
	} else {
		fmt.Fprintf(w, "Throughput:   none: the job does not run (%s)\n", r.Basis)
	}
	if r.Layout != nil {
		def := "the engine's default"
		if !r.EngineDefault {
			def = "not the engine's default"
		}
		fmt.Fprintf(w, "Layout:       %s (%s)\n", r.Layout, def)
	}
	if r.PrecisionUsed != "" {
		how := ""
		if r.WeightOnly {
			how = " (weight-only: dequantized in the matmul)"
		}
		fmt.Fprintf(w, "Precision:    %s weights, %s compute%s\n", r.WeightFormat, r.PrecisionUsed, how)
	}
	m := r.Memory
	var parts []string
	for _, p := range []struct {
		name string
		gib  float64
	}{
		{"weights", m.WeightsGiB}, {"KV cache", m.KVCacheGiB}, {"gradients", m.GradientsGiB}, {"optimizer", m.OptimizerGiB},
		{"activations", m.ActivationsGiB}, {"runtime reserve", m.ReserveGiB},
	} {
		if p.gib != 0 || p.name == "weights" {
			parts = append(parts, fmt.Sprintf("%s %.1f", p.name, p.gib))
		}
	}
	fmt.Fprintf(w, "Memory/GPU:   %s GiB; %.1f GiB usable of %.1f GiB\n", strings.Join(parts, " + "), m.UsableGiB, m.CapacityGiB)
	if r.Fits {
		fmt.Fprintln(w, "Fits:         yes")
	} else {
		fmt.Fprintf(w, "Fits:         no: %s\n", r.Reason)
	}
	if r.Accuracy != nil {
		fmt.Fprintf(w, "Accuracy:     %s\n", r.Accuracy)
	}
	if r.Note != "" {
		fmt.Fprintf(w, "Note:         %s\n", r.Note)
	}
}
