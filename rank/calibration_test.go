package rank

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Every throughput.csv row is run through the production estimator
// (EstimateOn, the function rankings and plans call): the row's published
// setting becomes a Workload — model shape, method, checkpointing, compute
// precision, tokens in and out, engine, concurrency or request rate — and
// its GPU count the parallelism. Nothing here computes an estimate itself.

// inferenceShapes are the attention shapes of the models of the inference
// rows (all grouped-query attention with 8 KV heads of 128: the llama3-8b
// and llama3-70b presets).
var inferenceShapes = map[string]string{
	"Llama-3-8B": "llama3-8b", "Llama-3.1-8B": "llama3-8b",
	"Llama-2-70B": "llama3-70b", "Llama-3.1-70B": "llama3-70b",
}

// engineLimitOffline is the concurrent-sequence limit of TensorRT-LLM
// offline benchmarks and MLPerf (THROUGHPUT.md 2.2).
const engineLimitOffline = 2048

var (
	rateRe        = regexp.MustCompile(`request rate (\S+)/s`)
	concurrencyRe = regexp.MustCompile(`^(\d+) concurrent`)
	maxSeqsRe     = regexp.MustCompile(`max (\d+) seqs`)
)

// rowJob is a row's published setting as a production workload, and the
// GPUs it ran on as one tensor-parallel device (serving).
func rowJob(m Measurement) (Workload, int, error) {
	w := Workload{Name: m.ID, Model: Model{Name: m.Model, ParamsB: m.ParamsB}, WeightBytes: 2, Precision: PrecisionBF16}
	prec := strings.ToLower(m.Precision)
	switch m.Category {
	case "training", CategorySeedExample:
		switch m.Workload {
		case "lora":
			w.Method = MethodLoRA
		case "qlora":
			w.Method, w.WeightBytes, w.Precision = MethodQLoRA, 0.5, PrecisionNF4
		default:
			w.Method = MethodFull
		}
		switch m.Recompute {
		case "yes":
			w.Checkpointing = true
		case "partial":
			w.SelectiveCheckpointing = true
		}
		if strings.HasPrefix(prec, "fp8") {
			w.Precision = PrecisionFP8
		}
		return w, max(m.GPUs, 1), nil
	case "inference":
	default:
		return w, 0, fmt.Errorf("category %q", m.Category)
	}
	preset, ok := inferenceShapes[m.Model]
	if !ok {
		return w, 0, fmt.Errorf("no shape for %s", m.Model)
	}
	shape := Presets()[preset]
	shape.Name, shape.ParamsB = m.Model, m.ParamsB
	w.Model, w.Method = shape, MethodServe
	w.InputTokens, w.OutputTokens = m.ISL, m.OSL
	switch prec {
	case "bf16", "fp16":
	case "fp8", "fp4", PrecisionQ4KM:
		w.Precision = prec
		w.WeightBytes = weightBytesFor(MethodServe, prec)
	default:
		return w, 0, fmt.Errorf("serving precision %q", m.Precision)
	}
	switch m.Workload {
	case "decode_batch1":
		w.MaxSequences = 1
		if strings.Contains(m.Framework, "llama.cpp") {
			w.Engine = EngineLlamaCpp
		}
	case "serve_offline_max", "mlperf_offline":
		switch {
		case strings.Contains(m.Framework, "TensorRT-LLM") || azureTRTRows[m.ID]:
			w.Engine = EngineTRT
		case strings.Contains(m.Framework, "MLPerf"):
			w.MaxSequences = engineLimitOffline
		}
		if r := maxSeqsRe.FindStringSubmatch(m.Batch); r != nil {
			w.MaxSequences, _ = strconv.Atoi(r[1])
		}
	case "serve_online":
		r := rateRe.FindStringSubmatch(m.Batch)
		if r == nil {
			return w, 0, fmt.Errorf("no request rate in %q", m.Batch)
		}
		// TensorRT-LLM behind Triton at a request rate: the 256-sequence
		// limit of THROUGHPUT.md 2.2, not the offline benchmark's 2048.
		w.Engine, w.MaxSequences = EngineTRT, DefaultMaxSequences
		if r[1] != "INF" {
			w.RequestRate, _ = strconv.ParseFloat(r[1], 64)
		}
	case "serve_concurrency":
		r := concurrencyRe.FindStringSubmatch(m.Batch)
		if r == nil {
			return w, 0, fmt.Errorf("no concurrency in %q", m.Batch)
		}
		w.MaxSequences, _ = strconv.Atoi(r[1])
		w.Concurrency = w.MaxSequences
	default:
		return w, 0, fmt.Errorf("inference workload %q", m.Workload)
	}
	return w, max(m.GPUs, 1), nil
}

// azureTRTRows are the Azure benchmarking guide's H100 rows, whose
// framework throughput.csv gives as "engine not stated (likely vLLM)". The
// guide states it: its results page heads them "End-to-End Inference
// Workloads - TensorRT-LLM", and its Benchmarks/NVIDIA/LLMBenchmark.py (at
// the commit that added these figures, 2024-12-13) builds one FP8 engine
// with trtllm-bench (TensorRT-LLM v0.15) and reports trtllm-bench's "Token
// Throughput", which trtllm-bench computes as output tokens over the run's
// total latency: the same engine, precision (FP8 weights and KV cache) and
// token basis as the trt017/trt10 rows.
var azureTRTRows = map[string]bool{
	"azure-h100-sxm-128-128": true, "azure-h100-sxm-128-2048": true, "azure-h100-sxm-2048-2048": true,
}

// rowEstimate is the production estimate of a row.
func rowEstimate(m Measurement) (float64, error) { return rowEstimateWith(m, referenceServing) }

// rowEstimateWith is the production estimator's figure for a row under the
// given serving constants.
func rowEstimateWith(m Measurement, sc servingConstants) (float64, error) {
	c, ok := catalog().Card(m.Card)
	if !ok {
		return 0, fmt.Errorf("card %s not in catalog", m.Card)
	}
	w, gpus, err := rowJob(m)
	if err != nil {
		return 0, err
	}
	p, ok := estimateOn(w, c, gpus, sc)
	if !ok {
		return 0, fmt.Errorf("no estimate")
	}
	return p.TokensPerSecond, nil
}

// servingFit is how well estimates under sc match the vetted batched
// serving rows (use_in_calibration, the TensorRT-LLM and MLPerf runs the
// reference calibrated on): the mean absolute log error and the median
// estimate/measured ratio; and how many of all published rows are within
// ±35%.
func servingFit(t *testing.T, sc servingConstants) (male, median float64, within int) {
	t.Helper()
	var ratios []float64
	for _, m := range Measurements() {
		if m.Category == CategorySeedExample {
			continue
		}
		got, err := rowEstimateWith(m, sc)
		if err != nil {
			t.Fatalf("%s: %v", m.ID, err)
		}
		r := got / m.TokensPerSecond
		if math.Abs(r-1) <= 0.35 {
			within++
		}
		if m.Calibration && batchedServing(m) {
			male += math.Abs(math.Log(r))
			ratios = append(ratios, r)
		}
	}
	return male / float64(len(ratios)), Median(ratios), within
}

// The per-operator decode roofline fits the vetted serving rows better
// than the reference model's single max, with the reference's own
// constants: mean absolute log error 0.090 against 0.095 over the 31 rows.
// It also leaves the estimate conservative (median 0.92 of measured); a
// refit of ETA_BW and the ETA_C factor on the same rows, the way the
// reference set its constants, would halve the error (the grid's best is
// about 0.046 at ETA_BW 0.76, ETA_C × 1.10, median 1.01) but count 89
// published rows within ±35%, not 91: the two that leave are the Azure
// rows below NVIDIA's own figures. The product keeps the reference's
// constants, unfitted; this test keeps those figures true.
func TestEstimate_ServingFit(t *testing.T) {
	var refMALE float64
	n := 0
	for _, m := range Measurements() {
		if m.Category != CategorySeedExample && m.Calibration && batchedServing(m) {
			refMALE += math.Abs(math.Log(m.EstimateTokensPerSecond / m.TokensPerSecond))
			n++
		}
	}
	refMALE /= float64(n)
	male, median, within := servingFit(t, referenceServing)
	t.Logf("%d vetted batched serving rows: error %.3f (reference model %.3f), median ratio %.2f; %d of 99 within ±35%%", n, male, refMALE, median, within)
	if n != 31 || male >= refMALE || within != 91 {
		t.Errorf("%d rows, error %.3f (reference %.3f), %d within: want 31, below the reference, 91", n, male, refMALE, within)
	}
	best := servingConstants{}
	bestMALE := math.Inf(1)
	for bw := 0.64; bw <= 0.841; bw += 0.02 {
		for f := 1.0; f <= 1.201; f += 0.02 {
			sc := servingConstants{etaBW: bw, etaCScale: f}
			if e, _, _ := servingFit(t, sc); e < bestMALE {
				best, bestMALE = sc, e
			}
		}
	}
	bm, bmed, bw := servingFit(t, best)
	t.Logf("refit grid's best: ETA_BW %.2f, ETA_C × %.2f: error %.3f, median ratio %.2f; %d of 99 within ±35%%", best.etaBW, best.etaCScale, bm, bmed, bw)
	if bm > male/1.5 || bw >= within {
		t.Errorf("the refit no longer halves the error at a cost in the count (%.3f, %d): update the comments above", bm, bw)
	}
}

// Where the production estimator deliberately departs from the reference
// model of THROUGHPUT.md (whose figures are throughput.csv's
// estimate_tokens_per_sec_per_gpu), with the reason.
var departures = map[string]string{
	"lcpp-a100-pcie-80gb-f16": "llama.cpp decode kernels capped at 900 GB/s (data/engines.csv)",
	"lcpp-a100-sxm4-80gb-f16": "llama.cpp decode kernels capped at 900 GB/s",
	"lcpp-h100-pcie-f16":      "llama.cpp decode kernels capped at 900 GB/s",
	"lcpp-a100-sxm4-80gb-q4":  "llama.cpp cap and Q4_K_M dequantization factor 0.8",
	"lcpp-h100-pcie-q4":       "llama.cpp cap and Q4_K_M dequantization factor 0.8",
	"lcpp-rtx-3090-q4":        "Q4_K_M dequantization factor 0.8",
	"lcpp-rtx-4090-q4":        "Q4_K_M dequantization factor 0.8",
	"lcpp-l40s-q4":            "Q4_K_M dequantization factor 0.8",
	"vllm-a100-40-b1":         "one formula for serving: batch-1 decode also pays the 1024-token prefill and the KV reads",
	"azure-h100-sxm-128-2048": "the source's engine is TensorRT-LLM (azureTRTRows): its 2048-sequence limit, not vLLM's 256",
	"azure-h100-sxm-128-128":  "the source's engine is TensorRT-LLM (azureTRTRows): its 2048-sequence limit, not vLLM's 256",
}

// batchedServing reports whether a row is served by a batching engine
// (more than one sequence at a time), where the production estimator adds
// decode attention's KV reads to the GEMM time instead of taking one max
// over both as the reference model does (servingRate).
func batchedServing(m Measurement) bool {
	return m.Category == "inference" && m.Workload != "decode_batch1"
}

// The production estimator reproduces the reference model's figure within
// 2% for every row it does not deliberately depart from, and each listed
// departure is real (more than 2%). Batched serving rows depart by the
// per-operator roofline: adding the attention reads to max(GEMM FLOPs,
// weight reads) instead of putting them inside that max can only lengthen
// a decode step, by at most the attention reads themselves, so such a row
// is at most the reference's figure and at least half of it; where the
// GEMMs stay bandwidth-bound it is the reference's figure.
func TestEstimate_ReproducesReferenceModel(t *testing.T) {
	n, split := 0, 0
	for _, m := range Measurements() {
		t.Run(m.ID, func(t *testing.T) {
			got, err := rowEstimate(m)
			if err != nil {
				t.Fatalf("cannot model: %v", err)
			}
			ratio := got / m.EstimateTokensPerSecond
			off := math.Abs(ratio - 1)
			why, departs := departures[m.ID]
			switch {
			case departs && off <= 0.02:
				t.Errorf("listed as a departure (%s) but within 2%% of the reference", why)
			case departs:
			case batchedServing(m):
				if ratio > 1.02 || ratio < 0.5 {
					t.Errorf("estimate %.1f, reference %.1f (%.2f): outside [0.5, 1] of the reference", got, m.EstimateTokensPerSecond, ratio)
				}
				if off > 0.02 {
					split++
				}
			case off > 0.02:
				t.Errorf("estimate %.1f, reference %.1f (%+.1f%%)", got, m.EstimateTokensPerSecond, 100*(ratio-1))
			}
		})
		n++
	}
	// The split moves most batched rows: all but the memory-bound ones
	// (L40S 128/2048 and the 2048-token rows on L40S and A100, whose GEMMs
	// stay bandwidth-bound, among them).
	t.Logf("%d batched serving rows depart from the reference by the per-operator roofline", split)
	if split == 0 {
		t.Error("no batched serving row departs: is the attention time still inside the max?")
	}
	if n != 102 {
		t.Errorf("%d rows, want 102", n)
	}
}

// The k a training row used is the method's k: TrainingK for recompute
// yes/no (unknown counts as no), one more for selective recomputation.
func TestMeasurements_TrainingK(t *testing.T) {
	for _, m := range Measurements() {
		if m.Category == "inference" {
			continue
		}
		t.Run(m.ID, func(t *testing.T) {
			method := MethodFull
			switch m.Workload {
			case "lora":
				method = MethodLoRA
			case "qlora":
				method = MethodQLoRA
			}
			want, _ := TrainingK(method, m.Recompute == "yes")
			if m.Recompute == "partial" {
				want++
			}
			if m.K != want {
				t.Errorf("k = %v, want %v for %s recompute %s", m.K, want, m.Workload, m.Recompute)
			}
		})
	}
}

// knownMisses are the published rows the production estimator misses by
// more than 35%, with the reason; the test fails when a row moves in or
// out of the list, so an improvement or a regression shows.
var knownMisses = map[string]string{
	// torchtune README rows: the A6000 rows imply more than 100% of the
	// card's dense peak, so the published settings cannot be the whole
	// story (THROUGHPUT.md caveats); not vetted, never used as published.
	"ttune-a6000-8b-full": "torchtune README row above the dense peak (0.42)",
	"ttune-a6000-8b-lora": "torchtune README row above the dense peak (0.31)",
	"ttune-4090-8b-lora":  "torchtune README row implying 90% of the dense bf16 peak (0.50)",
	"ttune-4090-8b-qlora": "torchtune README row implying 88% of the dense bf16 peak (0.51)",
	// Azure benchmarking guide, H100: TensorRT-LLM output tokens (see
	// azureTRTRows), yet 0.53 of what NVIDIA publishes for the same card,
	// engine, model and lengths (trt017-h100-sxm-128-128 28,837), which
	// the model matches. An estimate cannot be near both figures of one
	// setting without fitting to the lower one. Its 128/2048 row (0.71 of
	// NVIDIA's) is within at 1.30.
	"azure-h100-sxm-128-128": "TensorRT-LLM run at 0.53 of NVIDIA's own figure for the same setting (1.72)",
	// Azure benchmarking guide, MI300X: vLLM ROCm. The figures were added
	// by hand on 2025-01-23, when the guide's AMD script ran
	// benchmark_latency at batch 32/64 with 8 output tokens; the
	// "1000 requests" throughput script came later, so how they were
	// measured (batch, token basis) is not recorded. Excluded from the
	// reference calibration too. Its 128/128 row is within, at 1.35.
	"azure-mi300x-128-2048":  "vLLM ROCm, method not recorded by the source (1.46)",
	"azure-mi300x-2048-2048": "vLLM ROCm, method not recorded by the source (1.48)",
	// 70B over 8 MI300X with tensor parallelism: communication is not
	// modelled (THROUGHPUT.md 2.2); the reference excludes it too.
	"amd-mi300x-70b-tp8": "TP8 communication not modelled (2.01)",
}

// How many published measurements (every non-seed row) the production
// estimator matches within ±35%.
func TestEstimate_PublishedMatchCount(t *testing.T) {
	total, within := 0, 0
	var misses []string
	for _, m := range Measurements() {
		if m.Category == CategorySeedExample {
			continue
		}
		total++
		got, err := rowEstimate(m)
		if err != nil {
			t.Errorf("%s: cannot model: %v", m.ID, err)
			continue
		}
		r := got / m.TokensPerSecond
		_, known := knownMisses[m.ID]
		switch {
		case math.Abs(r-1) <= 0.35:
			within++
			if known {
				t.Errorf("%s is listed as a miss but is within ±35%% (%.2f)", m.ID, r)
			}
		default:
			misses = append(misses, fmt.Sprintf("%s %.2f", m.ID, r))
			if !known {
				t.Errorf("%s: estimate/measured %.2f, not a known miss", m.ID, r)
			}
		}
	}
	t.Logf("production estimator within ±35%% of %d of %d published measurements", within, total)
	t.Logf("outside: %s", strings.Join(misses, "; "))
	if total != 99 {
		t.Errorf("%d published rows, want 99 (throughput.csv changed?)", total)
	}
	// 91 of 99 with the reference's constants (ETA_BW 0.70, ETA_C per
	// class) and the per-operator decode roofline; 86 with the reference's
	// single max. The 8 misses above are rows whose settings are
	// inconsistent or unrecorded, or a TP8 run whose communication the
	// model leaves out. The target (issue 8) is 90.
	if within < 90 {
		t.Errorf("only %d of %d within ±35%%, want at least 90", within, total)
	}
}
