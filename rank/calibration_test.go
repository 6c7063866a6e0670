package rank

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Every throughput.csv row is run through the production estimator
// (estimateOn, the function EstimateOn, rankings and plans call): the
// row's published setting becomes a Workload — model shape, method,
// checkpointing, sequence, micro-batch, compute precision, tokens in and
// out, engine, concurrency or request rate — and its GPUs and layout the
// parallelism. Nothing here computes an estimate itself.

// engineLimitOffline is the concurrent-sequence limit of TensorRT-LLM
// offline benchmarks and MLPerf (THROUGHPUT.md 2.2).
const engineLimitOffline = 2048

var (
	rateRe        = regexp.MustCompile(`request rate (\S+)/s`)
	concurrencyRe = regexp.MustCompile(`^(\d+) concurrent`)
	maxSeqsRe     = regexp.MustCompile(`max (\d+) seqs|max_num_seqs=(\d+)`)
	promptsRe     = regexp.MustCompile(`(\d+) (?:prompts|requests)`)
	batchRe       = regexp.MustCompile(`^(?:batch )?(\d+)`)
)

// azureTRTRows are the Azure benchmarking guide's H100 rows, whose
// framework throughput.csv gives as "engine not stated (likely vLLM)". The
// guide states it: its results page heads them "End-to-End Inference
// Workloads - TensorRT-LLM", and its Benchmarks/NVIDIA/LLMBenchmark.py (at
// the commit that added these figures, 2024-12-13) builds one FP8 engine
// with trtllm-bench (TensorRT-LLM v0.15) and reports trtllm-bench's "Token
// Throughput", output tokens over the run's total latency.
var azureTRTRows = map[string]bool{
	"azure-h100-sxm-128-128": true, "azure-h100-sxm-128-2048": true, "azure-h100-sxm-2048-2048": true,
}

// rowSetting is a row's published setting for the production estimator:
// the workload, the GPUs and, for serving, the layout (zero: not stated,
// the estimate takes the best group of up to GPUs GPUs, as a replicated
// MLPerf system runs).
type rowSetting struct {
	w      Workload
	gpus   int
	layout Layout
}

// rowJob is a row's published setting as a production workload.
func rowJob(m Measurement) (rowSetting, error) {
	shape := m.Shape
	shape.Name, shape.ParamsB = m.Model, m.ParamsB
	if m.Preset != "" {
		p, ok := Presets()[m.Preset]
		if !ok {
			return rowSetting{}, fmt.Errorf("preset %q", m.Preset)
		}
		shape = p
	}
	w := Workload{Name: m.ID, Model: shape, WeightBytes: 2, Precision: PrecisionBF16, moeKernel: m.MoEKernel}
	rs := rowSetting{gpus: max(m.GPUs, 1)}
	prec := strings.ToLower(m.Precision)
	switch m.Category {
	case "training", CategorySeedExample:
		switch m.Workload {
		case "lora":
			w.Method = MethodLoRA
		case "qlora":
			w.Method, w.Precision = MethodQLoRA, PrecisionNF4
			w.WeightBytes = weightBytesFor(MethodQLoRA, PrecisionNF4)
		default:
			w.Method = MethodFull
		}
		switch m.Recompute {
		case "yes":
			w.Checkpointing = true
		case "partial":
			w.SelectiveCheckpointing = true
		}
		if strings.HasPrefix(prec, "fp8") || prec == "mxfp8" {
			w.Precision = PrecisionFP8
		}
		w.SeqLen, w.MicroBatch, w.GradAccumulation = m.SeqLen, max(m.MicroBatch, 1), max(m.GradAccum, 1)
		w.TrainLayout = TrainLayout{TP: m.TP, PP: m.PP, VP: m.VP, CP: m.CP}
		rs.w = w
		return rs, nil
	case "inference":
	default:
		return rs, fmt.Errorf("category %q", m.Category)
	}
	if shape.Layers == 0 || shape.Hidden == 0 {
		return rs, fmt.Errorf("no model shape")
	}
	w.Method = MethodServe
	w.InputTokens, w.OutputTokens = m.ISL, m.OSL
	switch prec {
	case "bf16", "fp16":
	case "fp8", "fp4", "nvfp4", PrecisionQ4KM, "int4-awq", "awq", "int8", PrecisionMXFP4, PrecisionQ40:
		p := map[string]string{"nvfp4": PrecisionFP4, "int4-awq": PrecisionAWQ}[prec]
		if p == "" {
			p = prec
		}
		w.Precision = p
		w.WeightBytes = weightBytesFor(MethodServe, p)
	case "int4 (native int4 qat, compressed-tensors)":
		// Kimi K2 Thinking's INT4 checkpoint: weight-only.
		w.Precision, w.WeightBytes = PrecisionInt4, weightBytesFor(MethodServe, PrecisionInt4)
	default:
		return rs, fmt.Errorf("serving precision %q", m.Precision)
	}
	fw := strings.ToLower(m.Framework)
	switch {
	case strings.Contains(fw, "tensorrt") || azureTRTRows[m.ID]:
		w.Engine = EngineTRT
	case strings.Contains(fw, "llama.cpp"):
		w.Engine = EngineLlamaCpp
	case strings.Contains(fw, "sglang"):
		w.Engine = EngineSGLang
	}
	switch m.Workload {
	case "decode_batch1":
		w.MaxSequences = 1
	case "serve_offline_max", "mlperf_offline":
		if strings.Contains(m.Framework, "MLPerf") && w.Engine == "" {
			w.MaxSequences = engineLimitOffline
		}
		if r := maxSeqsRe.FindStringSubmatch(m.Batch); r != nil {
			w.MaxSequences, _ = strconv.Atoi(r[1] + r[2]) // one of the two forms matched, the other is "".
		}
	case "serve_online":
		r := rateRe.FindStringSubmatch(m.Batch)
		if r == nil {
			return rs, fmt.Errorf("no request rate in %q", m.Batch)
		}
		// TensorRT-LLM behind Triton at a request rate: the 256-sequence
		// limit of THROUGHPUT.md 2.2, not the offline benchmark's 2048.
		// Other engines keep their own default.
		if w.Engine == EngineTRT {
			w.MaxSequences = DefaultMaxSequences
		}
		if r[1] != "INF" {
			w.RequestRate, _ = strconv.ParseFloat(r[1], 64)
		}
	case "serve_concurrency", "static_batch":
		re := concurrencyRe
		if m.Workload == "static_batch" {
			re = batchRe
		}
		r := re.FindStringSubmatch(m.Batch)
		if r == nil {
			return rs, fmt.Errorf("no concurrency or batch in %q", m.Batch)
		}
		w.MaxSequences, _ = strconv.Atoi(r[1])
		w.Concurrency = w.MaxSequences
	default:
		return rs, fmt.Errorf("inference workload %q", m.Workload)
	}
	// A benchmark of N prompts never has more than N in flight.
	if r := promptsRe.FindStringSubmatch(m.Batch); r != nil {
		n, _ := strconv.Atoi(r[1])
		if lim := w.maxSequences(); n > 0 && (lim <= 0 || float64(n) < lim) {
			w.MaxSequences = n
		}
	}
	switch {
	case m.EP > 0 && m.TP == 0:
		// TensorRT-LLM's "DEP n": attention data parallel, experts over
		// all n GPUs.
		rs.layout = Layout{TP: 1, PP: 1, DP: max(m.GPUs, 1), EP: m.EP}
	case m.TP > 0 && m.EP > m.TP:
		// Experts over more GPUs than a tensor-parallel group: the rest
		// are attention data-parallel ranks (vLLM's DP + EP).
		rs.layout = Layout{TP: m.TP, PP: max(m.PP, 1), DP: max(m.GPUs/(m.TP*max(m.PP, 1)), 1), EP: m.EP}
	case m.TP > 0:
		rs.layout = Layout{TP: m.TP, PP: max(m.PP, 1), EP: m.EP}
	}
	rs.w = w
	return rs, nil
}

// rowEstimate is the production estimate of a row under constants k.
func rowEstimate(m Measurement, k constants) (float64, error) {
	c, ok := catalog().Card(m.Card)
	if !ok {
		return 0, fmt.Errorf("card %s not in catalog", m.Card)
	}
	rs, err := rowJob(m)
	if err != nil {
		return 0, err
	}
	if rs.w.Method == MethodServe && rs.layout == (Layout{}) {
		// Not stated: the best group of up to the system's GPUs.
		var best float64
		for g := 1; g <= rs.gpus; g *= 2 {
			if p, ok := estimateOn(rs.w, c, g, Layout{}, k); ok && p.TokensPerSecond > best {
				best = p.TokensPerSecond
			}
		}
		if best == 0 {
			return 0, fmt.Errorf("no estimate (does not fit)")
		}
		return best, nil
	}
	g := rs.gpus
	if rs.layout != (Layout{}) {
		g = rs.layout.GPUs() // replicas of the stated layout run alike
	}
	p, ok := estimateOn(rs.w, c, g, rs.layout, k)
	if !ok {
		return 0, fmt.Errorf("no estimate (does not fit)")
	}
	return p.TokensPerSecond, nil
}

// priced are the rows the calibration prices: every row but the seed
// examples.
func priced() []Measurement {
	return slices.DeleteFunc(Measurements(), func(m Measurement) bool { return m.Category == CategorySeedExample })
}

// within35 reports an estimate within ±35% of the measurement.
func within35(r float64) bool { return math.Abs(r-1) <= 0.35 }

// ratios prices rows under k: estimate / measured per row id (a row the
// estimator cannot price gets 0).
func ratios(rows []Measurement, k constants) map[string]float64 {
	out := make(map[string]float64, len(rows))
	for _, m := range rows {
		got, err := rowEstimate(m, k)
		if err != nil {
			out[m.ID] = 0
			continue
		}
		out[m.ID] = got / m.TokensPerSecond
	}
	return out
}

// Every fitted or held-out row can be priced; a no-fit row the estimator
// refuses says why in its split note (and counts as a miss).
func TestRowJob_EveryRowPriced(t *testing.T) {
	for _, m := range priced() {
		if _, err := rowEstimate(m, calibrated); err != nil {
			if m.Split != SplitNoFit || m.SplitNote == "" {
				t.Errorf("%s (%s, %s): %v", m.ID, m.Publisher, m.Split, err)
			} else {
				t.Logf("%s refused (%v): %s", m.ID, err, m.SplitNote)
			}
		}
	}
}

// A row's concurrency is what its run allowed: the limit it states in
// either of the forms its publishers write, else the engine's default, and
// never more sequences than the benchmark sent prompts.
func TestRowJob_ConcurrencyAsRun(t *testing.T) {
	byID := map[string]Measurement{}
	for _, m := range priced() {
		byID[m.ID] = m
	}
	for id, want := range map[string]float64{
		"amd-vllm091-mi300x-llama31-70b-fp8-tp8-128-2048":    3200, // "num_prompts=3200, max_num_seqs=3200"
		"amd-vllm0111-mi300x-llama31-405b-fp8-tp8-2048-2048": 500,  // "num_prompts=500, max_num_seqs=500"
		"amd-mi300x-70b-tp8":                                  3200, // "3200 prompts, max 3200 seqs"
		"gpustack-h200-dsr1-fp8-sglang-tp8dpa-2000-100":       500,  // SGLang's 2,048, but 500 prompts
		"gpustack-a100-glm45air-bf16-sglang-tp4ep4-32000-100": 100,  // 100 prompts
		"dstack-h200-dsr1-fp8-sglang-tp8-offline512-3200-800": 512,  // 512 prompts (offline)
		"gpustack-h200-dsr1-fp8-vllm-tp8-4000-200":            256,  // vLLM's 256 below the 500 prompts
		"azure-h100-sxm-128-128":                              1000, // TensorRT-LLM's 2,048, but 1000 requests
	} {
		m, ok := byID[id]
		if !ok {
			t.Errorf("%s: no such row", id)
			continue
		}
		rs, err := rowJob(m)
		if err != nil || rs.w.maxSequences() != want {
			t.Errorf("%s (%q): %v at most %v sequences, want %v", id, m.Batch, err, rs.w.maxSequences(), want)
		}
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

// Fitting. The constants are fitted on rows in a fixed order, each step a
// one-dimensional search that keeps the others:
//
//  1. U per estimator class: the value whose 16-bit training rows of that
//     class have a median estimate/measured of 1 (a class without such
//     rows keeps its assumed U, utilizationByClass);
//  2. FP8Share: the same over every fp8 training row;
//  3. Overlap: the least mean absolute log error over multi-GPU training
//     rows;
//  4. ETA_BW and the ETA_C factor: the least mean absolute log error over
//     batched serving rows on one GPU (a grid);
//  5. LinkEfficiency: the same over multi-GPU serving rows.
//
// Steps 1–3 run twice (they interact through the multi-GPU rows).

func isTraining(m Measurement) bool { return m.Category == "training" }
func isServing(m Measurement) bool  { return m.Category == "inference" }

// groupGPUs is how many GPUs one serving instance of a row spans: a
// system running one instance per GPU (tensor parallelism 1 stated, no
// pipeline or expert parallelism) serves on one GPU however many it has,
// so its row counts with the single-GPU rows, not the multi-GPU ones.
func groupGPUs(m Measurement) int {
	if m.TP == 1 && m.PP <= 1 && m.EP <= 1 {
		return 1
	}
	return m.GPUs
}

func batchedServing(m Measurement) bool {
	return isServing(m) && m.Workload != "decode_batch1"
}
func isFP8(m Measurement) bool {
	p := strings.ToLower(m.Precision)
	return strings.HasPrefix(p, "fp8") || p == "mxfp8"
}

// medianRatio is the median estimate/measured of rows under k (rows the
// estimator cannot price are left out).
func medianRatio(rows []Measurement, k constants) float64 {
	var v []float64
	for _, r := range ratios(rows, k) {
		if r > 0 {
			v = append(v, r)
		}
	}
	if len(v) == 0 {
		return 1
	}
	return Median(v)
}

// male is the mean absolute log error of rows under k (an unpriced row
// counts as a factor of e off).
func male(rows []Measurement, k constants) float64 {
	if len(rows) == 0 {
		return 0
	}
	var s float64
	for _, r := range ratios(rows, k) {
		if r <= 0 {
			s++
			continue
		}
		s += math.Abs(math.Log(r))
	}
	return s / float64(len(rows))
}

// bisect finds x in [lo, hi] where f(x) = 1 for an f that grows with x,
// to 1e-3.
func bisect(lo, hi float64, f func(float64) float64) float64 {
	for hi-lo > 1e-3 {
		mid := (lo + hi) / 2
		if f(mid) < 1 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Round((lo+hi)/2*1000) / 1000
}

// shrink is the weight of a constant's distance from its prior in the fit:
// each search minimizes the rows' mean absolute log error plus shrink ×
// |ln(x / prior)|. A constant few rows speak to stays near its physical
// default (THROUGHPUT.md section 2, links.csv); many rows move it where
// they agree. 0.02 is a 2% error for a factor of e.
const shrink = 0.02

// argmin is the grid point of [lo, hi] in steps of step with the least
// f plus the pull toward prior (the first on ties).
func argmin(lo, hi, step, prior float64, f func(float64) float64) float64 {
	best, bv := lo, math.Inf(1)
	for x := lo; x <= hi+1e-9; x += step {
		v := f(x)
		if prior > 0 && x > 0 {
			v += shrink * math.Abs(math.Log(x/prior))
		}
		if v < bv-1e-12 {
			best, bv = x, v
		}
	}
	return math.Round(best*1000) / 1000
}

func filter(rows []Measurement, keep func(Measurement) bool) []Measurement {
	var out []Measurement
	for _, m := range rows {
		if keep(m) {
			out = append(out, m)
		}
	}
	return out
}

// fitStart is where the fit starts: the reference model's constants
// (THROUGHPUT.md section 2) and assumed defaults, never the production
// ones, so that the fit does not depend on what it produced before.
var fitStart = constants{etaBW: 0.70, etaCScale: 1, fp4Eff: 1, linkEff: 0.7, ppEff: 0.9, fp8Share: 0.77, overlap: 0.8, qlora: 0.8, moeHalfMB: 5}

// fit fits the constants on rows (which should be split=fit rows only):
// the dense model's on the dense rows, then the two mixture-of-experts
// constants on the MoE rows with the dense ones fixed.
func fit(all []Measurement) constants {
	rows := filter(all, func(m Measurement) bool { return !isMoE(m) })
	k := fitStart
	k.util = map[string]float64{}
	byClass := map[string][]Measurement{}
	for _, m := range rows {
		if isTraining(m) {
			c, _ := catalog().Card(m.Card)
			byClass[c.EstimatorClass] = append(byClass[c.EstimatorClass], m)
		}
	}
	fp8 := filter(rows, func(m Measurement) bool { return isTraining(m) && isFP8(m) })
	multi := filter(rows, func(m Measurement) bool { return m.GPUs > 1 && (isTraining(m) || batchedServing(m)) })
	multiTrain := filter(multi, isTraining)
	for range 3 {
		fitClasses(&k, func(k *constants) *map[string]float64 { return &k.util }, byClass, utilizationByClass)
		if len(fp8) > 0 {
			k.fp8Share = argmin(0, 1, 0.02, fitStart.fp8Share, func(f float64) float64 { kk := k; kk.fp8Share = f; return male(fp8, kk) })
		}
		if q := filter(rows, func(m Measurement) bool { return isTraining(m) && m.Workload == "qlora" }); len(q) > 0 {
			k.qlora = argmin(0.5, 1, 0.02, fitStart.qlora, func(f float64) float64 { kk := k; kk.qlora = f; return male(q, kk) })
		}
		if len(multiTrain) > 0 {
			k.overlap = argmin(0, 0.95, 0.05, fitStart.overlap, func(o float64) float64 { kk := k; kk.overlap = o; return male(multiTrain, kk) })
		}
	}
	// Serving: ETA_BW over every batched serving row; ETA_C per class as
	// U above (own value from two publishers or more, else the assumed one
	// moved as the fitted classes moved); FP4's factor over FP4 rows; the
	// link efficiency over every multi-GPU row, training's too.
	serve := filter(rows, batchedServing)
	serveByClass := map[string][]Measurement{}
	for _, m := range serve {
		c, _ := catalog().Card(m.Card)
		serveByClass[c.EstimatorClass] = append(serveByClass[c.EstimatorClass], m)
	}
	fp4 := filter(serve, func(m Measurement) bool { return strings.Contains(strings.ToLower(m.Precision), "fp4") })
	k.etaC = map[string]float64{}
	for range 2 {
		// ETA_BW on enough rows only (ownFamily's rule), else the
		// reference's 0.70: with TensorRT-LLM's perf page left out nine
		// batched-serving rows remain, and they had put it at the search's
		// floor (0.50). The layer step and the FP4 factor keep fitting on
		// any rows: their priors are "no such term", not measurements, and
		// gated the same way they cost more rows than they saved
		// (THROUGHPUT.md).
		if ownFamily(serve) {
			k.etaBW = argmin(0.5, 0.9, 0.02, fitStart.etaBW, func(b float64) float64 { kk := k; kk.etaBW = b; return male(serve, kk) })
		}
		fitClasses(&k, func(k *constants) *map[string]float64 { return &k.etaC }, serveByClass, computeEfficiencyByClass)
		if len(fp4) > 0 {
			k.fp4Eff = argmin(0.3, 1, 0.05, fitStart.fp4Eff, func(f float64) float64 { kk := k; kk.fp4Eff = f; return male(fp4, kk) })
		}
		if publishers(multi) >= 2 {
			k.linkEff = argmin(0.1, 1, 0.05, fitStart.linkEff, func(e float64) float64 { kk := k; kk.linkEff = e; return male(multi, kk) })
		}
		if len(serve) > 0 {
			// From 0: no overhead is the model without the term.
			k.layerStepUS = argmin(0, 200, 5, 0, func(e float64) float64 { kk := k; kk.layerStepUS = e; return male(serve, kk) })
		}
		if pp := filter(serve, func(m Measurement) bool { return m.PP > 1 }); len(pp) > 0 {
			k.ppEff = argmin(0.5, 1, 0.02, fitStart.ppEff, func(e float64) float64 { kk := k; kk.ppEff = e; return male(pp, kk) })
		}
	}
	if moe := filter(all, isMoE); len(moe) > 0 {
		// Rows by the MoE kernel family their engine runs for their format
		// on their card (engines.csv and formats.csv moe_kernel; llama.cpp
		// runs no grouped GEMMs).
		byKernel := map[string][]Measurement{}
		for _, m := range moe {
			rs, err := rowJob(m)
			c, ok := catalog().Card(m.Card)
			if e := engineFor(rs.w.Engine); err == nil && ok && e.groupedMoE {
				kernel := rs.w.moeKernelOn(e, c)
				byKernel[kernel] = append(byKernel[kernel], m)
			}
		}
		// The experts' GEMM efficiency (global, then per kernel family), then
		// the slice efficiency (global, then per kernel family), three rounds:
		// each moves the other's optimum a little. A family whose constants
		// come from its kernel timings (kernelFixedHalf: the Triton fused MoE,
		// data/moe_kernels.csv) keeps them; the globals serve the families
		// without values of their own (rows of the others do not move them;
		// with none, they stay at their priors).
		k.moeGemm = 1
		k.moeLayerUS = maps.Clone(calibrated.moeLayerUS)
		priors := kernelGEMMPriors(k)
		for range 3 {
			// The globals are fitted on every MoE row as if no family had a
			// value of its own, so that a family without enough rows gets
			// what all MoE rows say, not a prior the other families' rows
			// cannot move.
			k.moeGemmByKernel = map[string]float64{}
			k.moeGemm = argmin(0.2, 1, 0.02, 1, func(x float64) float64 { kk := k; kk.moeGemm = x; return male(moe, kk) })
			for _, e := range slices.Sorted(maps.Keys(byKernel)) {
				if rows := byKernel[e]; ownFamily(rows) {
					k.moeGemmByKernel[e] = argmin(gemmFloor(e, k), 1, 0.02, k.moeGemm, func(x float64) float64 {
						kk := k
						kk.moeGemmByKernel = map[string]float64{e: x}
						return male(rows, kk)
					})
				}
			}
			// A family without enough rows of its own takes what its own
			// kernel timings show at prefill sizes, where they are
			// published (kernelGEMMPriors), not the all-row value: with
			// TensorRT-LLM's perf page left out the CUTLASS family had
			// taken 0.20, set by the Triton family's rows.
			for _, e := range slices.Sorted(maps.Keys(priors)) {
				if _, own := k.moeGemmByKernel[e]; !own {
					k.moeGemmByKernel[e] = priors[e]
				}
			}
			k.moeHalfByKernel = maps.Clone(kernelFixedHalf)
			k.moeHalfMB = argmin(0.5, 50, 0.5, fitStart.moeHalfMB, func(e float64) float64 { kk := k; kk.moeHalfMB = e; return male(moe, kk) })
			for _, e := range slices.Sorted(maps.Keys(byKernel)) {
				if _, fixed := kernelFixedHalf[e]; fixed {
					continue
				}
				if rows := byKernel[e]; ownFamily(rows) {
					k.moeHalfByKernel[e] = argmin(0.5, 80, 0.5, k.moeHalfMB, func(x float64) float64 {
						kk := k
						kk.moeHalfByKernel = map[string]float64{e: x}
						return male(rows, kk)
					})
				}
			}
		}
	}
	return k
}

// gemmFloor is where the search for a kernel family's GEMM efficiency
// starts: for the Triton fused MoE the slowest prefill-sized timing of its
// own kernels (tritonGEMMFloor), rounded up to the search's 0.02 steps;
// 0.1 for the others. Without it the Triton family fitted 0.10 with
// GPUStack's rows left out, below anything its kernels measure.
func gemmFloor(family string, k constants) float64 {
	if family != MoEKernelTriton {
		return 0.1
	}
	f := tritonGEMMFloor(k)
	if f <= 0.1 {
		return 0.1
	}
	return math.Ceil(f/0.02-1e-9) * 0.02
}

// ownFamily reports whether rows may fit a constant of their own: rows of
// two publishers or more (one publisher's stack is not the family's), and
// at least minFamilyRows of them. With fewer, a MoE kernel family takes
// the global values (three rows of two publishers had moved the CUTLASS
// family's GEMM efficiency to 0.14 when TensorRT-LLM's own perf page was
// left out, and with it 22 of that page's rows), and ETA_BW its prior.
func ownFamily(rows []Measurement) bool {
	return publishers(rows) >= 2 && len(rows) >= minFamilyRows
}

// minFamilyRows is the fewest rows a constant is fitted on (a MoE kernel
// family's, ETA_BW). A DEFAULT (no page states one): about one row per
// card and model pair a kernel family is priced for.
const minFamilyRows = 10

// kernelFixedHalf are the MoE kernel families whose slice efficiency
// comes from their kernel timings, not from the throughput rows: the
// Triton fused MoE reads its touched experts at the dense rate
// (TestMoEKernels_TritonFromTheTimings).
var kernelFixedHalf = map[string]float64{MoEKernelTriton: 0}

// fitClasses fits a per-class constant (U or ETA_C, the map field names)
// on each class's rows. A class gets a value of its own only from rows of
// two publishers or more (one publisher's stack is not the class's); the
// others keep their prior, moved by the median factor the fitted classes
// moved by from theirs.
func fitClasses(k *constants, field func(*constants) *map[string]float64, byClass map[string][]Measurement, priors map[string]float64) {
	vals := *field(k)
	var moved []float64
	for _, class := range slices.Sorted(maps.Keys(byClass)) {
		rs := byClass[class]
		if publishers(rs) < 2 {
			continue
		}
		prior := priors[class]
		vals[class] = argmin(0.1, 0.95, 0.01, prior, func(x float64) float64 {
			kk := *k
			m := maps.Clone(vals)
			m[class] = x
			*field(&kk) = m
			return male(rs, kk)
		})
		moved = append(moved, vals[class]/prior)
	}
	if len(moved) == 0 {
		return
	}
	f := Median(moved)
	for class, prior := range priors {
		if publishers(byClass[class]) < 2 {
			vals[class] = math.Round(prior*f*1000) / 1000
		}
	}
}

// publishers counts the publishers of rows.
func publishers(rows []Measurement) int {
	seen := map[string]bool{}
	for _, m := range rows {
		seen[m.Publisher] = true
	}
	return len(seen)
}

func (k constants) String() string {
	list := func(m map[string]float64) string {
		var out []string
		for _, c := range slices.Sorted(maps.Keys(m)) {
			out = append(out, fmt.Sprintf("%s %.3f", c, m[c]))
		}
		return strings.Join(out, ", ")
	}
	return fmt.Sprintf("layer step %.0f µs, ", k.layerStepUS) + fmt.Sprintf("U {%s}, QLoRA %.2f, fp8 share %.3f, overlap %.2f, ETA_BW %.2f, ETA_C {%s} × %.2f (fp4 × %.2f), link efficiency %.2f, pipeline %.2f, MoE half-efficiency slice %.1f MB, MoE GEMM %.2f",
		list(k.util), k.qlora, k.fp8Share, k.overlap, k.etaBW, list(k.etaC), k.etaCScale, k.fp4Eff, k.linkEff, k.ppEff, k.moeHalfMB, k.moeGemm) + fmt.Sprintf("; by kernel family: slice %v, GEMM %v, fixed µs per MoE layer %v", k.moeHalfByKernel, k.moeGemmByKernel, k.moeLayerUS)
}

// isMoE reports a row of a mixture-of-experts preset.
func isMoE(m Measurement) bool { return m.Preset != "" && Presets()[m.Preset].MoE() }

// fitRows are the rows marked split=fit. fit keeps the dense constants to
// the dense rows and fits only the MoE slice efficiency on the MoE rows:
// fitting the shared constants on them would move every dense estimate to
// absorb terms the MoE model lacks (THROUGHPUT.md "Mixture-of-experts").
func fitRows() []Measurement {
	return filter(priced(), func(m Measurement) bool { return m.Split == SplitFit })
}

// count is how many of rows are within ±35% under k.
func count(rows []Measurement, k constants) int {
	n := 0
	for _, r := range ratios(rows, k) {
		if within35(r) {
			n++
		}
	}
	return n
}

// lopo prices every row under the constants fitted without its publisher
// (estimate/measured by row id).
func lopo() map[string]float64 {
	all := priced()
	pubs := map[string]bool{}
	for _, m := range all {
		pubs[m.Publisher] = true
	}
	out := map[string]float64{}
	for p := range pubs {
		k := fit(filter(fitRows(), func(m Measurement) bool { return m.Publisher != p }))
		maps.Copy(out, ratios(filter(all, func(m Measurement) bool { return m.Publisher == p }), k))
	}
	return out
}

// The product's constants are the fit on the split=fit rows: refitting
// gives them back (to the grid's step), so nobody can tune a constant by
// hand without the data saying so.
func TestCalibration_ProductionIsTheFit(t *testing.T) {
	k := fit(fitRows())
	t.Logf("fit on %d rows: %s", len(fitRows()), k)
	near := func(name string, got, want, tol float64) {
		if math.Abs(got-want) > tol {
			t.Errorf("%s: fitted %.3f, production %.3f", name, got, want)
		}
	}
	near("ETA_BW", k.etaBW, calibrated.etaBW, 0.011)
	near("layer step time", k.layerStepUS, calibrated.layerStepUS, 2.6)
	near("ETA_C factor", k.etaCScale, calibrated.etaCScale, 0)
	near("FP4 factor", k.fp4Eff, calibrated.fp4Eff, 0.026)
	near("pipeline efficiency", k.ppEff, calibrated.ppEff, 0.011)
	near("link efficiency", k.linkEff, calibrated.linkEff, 0.026)
	near("FP8 share", k.fp8Share, calibrated.fp8Share, 0.011)
	near("overlap", k.overlap, calibrated.overlap, 0.026)
	near("QLoRA factor", k.qlora, calibrated.qlora, 0.011)
	near("MoE half-efficiency slice", k.moeHalfMB, calibrated.moeHalfMB, 0.51)
	near("MoE GEMM efficiency", k.moeGemm, calibrated.moeGemm, 0.011)
	for _, e := range Engines() {
		kernel := engineFor(e).moeKernel
		near("MoE half-efficiency slice, "+kernel, k.moeHalf(kernel), calibrated.moeHalf(kernel), 0.51)
		near("MoE GEMM efficiency, "+kernel, k.moeGemmEff(kernel), calibrated.moeGemmEff(kernel), 0.011)
	}
	for class := range utilizationByClass {
		near("U "+class, k.util[class], calibrated.util[class], 0.0051)
	}
	for class := range computeEfficiencyByClass {
		near("ETA_C "+class, k.etaC[class], calibrated.etaC[class], 0.0051)
	}
}

// referenceIDs are the rows of the reference throughput.csv (the 102 rows
// the estimator was first measured on; 99 of them measurements).
func referenceIDs() map[string]bool {
	out := map[string]bool{}
	for i, m := range Measurements() {
		if i >= 102 {
			break
		}
		out[m.ID] = true
	}
	return out
}

// knownMisses are the reference rows the production estimator misses by
// more than 35%, with the reason; the test fails when a row moves in or
// out of the list, so an improvement or a regression shows.
var knownMisses = map[string]string{
	"ttune-a6000-8b-full":    "torchtune README row above the dense peak",
	"ttune-a6000-8b-lora":    "torchtune README row above the dense peak",
	"ttune-4090-8b-lora":     "torchtune README row implying 90% of the dense bf16 peak",
	"ttune-4090-8b-qlora":    "torchtune README row implying 88% of the dense bf16 peak",
	"azure-h100-sxm-128-128": "TensorRT-LLM run at 0.53 of NVIDIA's own figure for the same setting",
}

// The reference's 99 published measurements under the production
// constants: at least the 91 the estimator matched before this model.
func TestEstimate_PublishedMatchCount(t *testing.T) {
	ref := referenceIDs()
	rows := filter(priced(), func(m Measurement) bool { return ref[m.ID] })
	r := ratios(rows, calibrated)
	within := 0
	var misses []string
	for _, m := range rows {
		_, known := knownMisses[m.ID]
		switch {
		case within35(r[m.ID]):
			within++
			if known {
				t.Errorf("%s is listed as a miss but is within ±35%% (%.2f)", m.ID, r[m.ID])
			}
		default:
			misses = append(misses, fmt.Sprintf("%s %.2f", m.ID, r[m.ID]))
			if !known {
				t.Errorf("%s: estimate/measured %.2f, not a known miss", m.ID, r[m.ID])
			}
		}
	}
	t.Logf("in sample: within ±35%% of %d of the reference's %d published measurements; outside: %s", within, len(rows), strings.Join(misses, "; "))
	if len(rows) != 99 || within < 91 {
		t.Errorf("%d of %d within ±35%%, want at least 91 of 99", within, len(rows))
	}
}

// share is a count as a share of n.
func share(k, n int) float64 { return float64(k) / float64(max(n, 1)) }

// Out of sample, two ways. Holdout: every row outside the fit (split
// holdout and no-fit: at least a third of the rows) priced under the
// production constants. Leave one publisher out: every row priced under
// the constants fitted without its publisher's rows. The bars
// (issue 17) are checked on the second, the harder one.
func TestCalibration_OutOfSample(t *testing.T) {
	if raceDetector {
		t.Skip("single-goroutine arithmetic, 7× slower under -race: .ci/run runs it without -race (README's go test ./... too)")
	}
	all := filter(priced(), func(m Measurement) bool { return !isMoE(m) })
	moe := filter(priced(), isMoE)
	out := filter(all, func(m Measurement) bool { return m.Split != SplitFit })
	if share(len(out), len(all)) < 1.0/3 {
		t.Errorf("%d of %d rows outside the fit: want at least a third", len(out), len(all))
	}
	ho := count(out, calibrated)
	lo := lopo()
	in := func(rows []Measurement) int {
		n := 0
		for _, m := range rows {
			if within35(lo[m.ID]) {
				n++
			}
		}
		return n
	}
	multiServe := filter(all, func(m Measurement) bool { return batchedServing(m) && groupGPUs(m) > 1 })
	long := filter(all, func(m Measurement) bool { return isTraining(m) && m.SeqLen >= 8192 })
	clean := filter(all, func(m Measurement) bool { return m.Split != SplitNoFit })
	t.Logf("dense rows (the bars below); the mixture-of-experts rows are reported apart (issue 28's 80%% is not met)")
	t.Logf("in sample, all %d rows: %d within ±35%%", len(all), count(all, calibrated))
	held := filter(out, func(m Measurement) bool { return m.Split == SplitHoldout })
	hh := count(held, calibrated)
	t.Logf("outside the fit (%d rows: %d split=holdout, %d no-fit): %d within ±35%% (%.0f%%); the holdout rows alone: %d (%.0f%%)",
		len(out), len(held), len(out)-len(held), ho, 100*share(ho, len(out)), hh, 100*share(hh, len(held)))
	t.Logf("leave one publisher out, all %d rows: %d within ±35%% (%.1f%%); the %d clean rows (no-fit left out): %d (%.1f%%)",
		len(all), in(all), 100*share(in(all), len(all)), len(clean), in(clean), 100*share(in(clean), len(clean)))
	t.Logf("leave one publisher out, %d multi-GPU serving rows: %d (%.0f%%); %d training rows at ≥ 8k tokens: %d (%.0f%%)",
		len(multiServe), in(multiServe), 100*share(in(multiServe), len(multiServe)), len(long), in(long), 100*share(in(long), len(long)))
	moeClean := filter(moe, func(m Measurement) bool { return m.Split != SplitNoFit })
	t.Logf("mixture-of-experts, in sample: %d of %d within ±35%%", count(moe, calibrated), len(moe))
	consumer := filter(priced(), func(m Measurement) bool {
		c, _ := catalog().Card(m.Card)
		return isServing(m) && c.EstimatorClass == "consumer"
	})
	single := filter(all, func(m Measurement) bool { return batchedServing(m) && groupGPUs(m) == 1 })
	train := filter(all, isTraining)
	med := func(rows []Measurement) float64 {
		var v []float64
		for _, m := range rows {
			if lo[m.ID] > 0 {
				v = append(v, lo[m.ID])
			}
		}
		if len(v) == 0 {
			return 0
		}
		return Median(v)
	}
	for _, sub := range []struct {
		name string
		rows []Measurement
	}{
		{"serving on 1 GPU", single}, {"serving on 2+ GPUs", multiServe}, {"training", train}, {"training at ≥ 8k tokens", long},
		{"mixture-of-experts", moe}, {"MoE, no-fit left out", moeClean}, {"serving, consumer cards", consumer},
		{"2+ GPUs, dense and MoE", filter(priced(), func(m Measurement) bool { return batchedServing(m) && groupGPUs(m) > 1 })},
	} {
		t.Logf("  %-24s %3d rows: %3d (%3.0f%%) within ±35%%, median estimate/measured %.2f (leave one publisher out)",
			sub.name, len(sub.rows), in(sub.rows), 100*share(in(sub.rows), len(sub.rows)), med(sub.rows))
	}
	// data/accuracy.csv, what /v1/estimate tells a reader to allow for,
	// is this measurement: rows and counts exactly, medians to the two
	// decimals written.
	table := accuracyTable()
	for _, sub := range []struct {
		subset string
		rows   []Measurement
	}{
		{"serving-1gpu", single}, {"serving-multi-gpu", multiServe}, {"moe-serving", moe},
		{"moe-serving-amd", filter(moe, func(m Measurement) bool { c, _ := catalog().Card(m.Card); return amdCard(c) })},
		{"consumer-serving", consumer}, {"training", train},
	} {
		a, ok := table[sub.subset]
		switch {
		case !ok:
			t.Errorf("data/accuracy.csv has no %s row", sub.subset)
		case a.Rows != len(sub.rows) || a.Within != in(sub.rows) || math.Abs(a.MedianRatio-med(sub.rows)) > 0.005:
			t.Errorf("data/accuracy.csv %s: %d rows, %d within, median %.2f; measured %d, %d, %.2f",
				sub.subset, a.Rows, a.Within, a.MedianRatio, len(sub.rows), in(sub.rows), med(sub.rows))
		}
	}
	if len(table) != 6 {
		t.Errorf("data/accuracy.csv has %d rows, want the 6 kinds measured here", len(table))
	}
	for _, bar := range []struct {
		name string
		rows []Measurement
		want float64
	}{
		// Issue 17 set 85% for all rows. On 2026-12-05 the 44 AMD ROCm vLLM
		// rows that write their limit as "max_num_seqs=N" were found priced
		// at vLLM's default 256 sequences (a parsing slip); at the 500 to
		// 3,200 they ran, 26 of them come out 1.36–1.62× and all rows fell
		// to 84.3%, and the bar to 84%. ETA_BW fitted on enough rows only
		// (fit) brought them to 85.9%: issue 17's 85% again. The rows the
		// fit may use hold the old bar's margin (90%).
		{"all rows", all, 0.85},
		{"clean rows (no-fit left out)", clean, 0.90},
		{"multi-GPU serving rows", multiServe, 0.80},
		{"training rows at ≥ 8k tokens", long, 0.80},
	} {
		if got := share(in(bar.rows), len(bar.rows)); got < bar.want || len(bar.rows) == 0 {
			t.Errorf("leave one publisher out, %s: %.1f%% within ±35%% (%d rows), want %.0f%%", bar.name, 100*got, len(bar.rows), 100*bar.want)
		}
	}
}
