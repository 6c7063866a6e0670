package rank

import (
	"fmt"
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
	case "serve_decode_only":
		// The decode GPUs of a disaggregated deployment: the prompts were
		// prefilled on other GPUs and their KV caches sent over, so the
		// timed GPUs only decode (as if every prompt were cached).
		w.CachedPromptShare = 1
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
	// A run whose notes state the attention-DP balancer on (TensorRT-LLM's
	// attention_dp_config enable_balance; MLPerf harnesses pass their
	// adp_balancing_enable as it, and their rows' notes say so).
	w.BalancedAttentionDP = strings.Contains(m.Notes, "attention_dp_config enable_balance")
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
	near("MLA layer step time", k.mlaLayerUS, calibrated.mlaLayerUS, 2.6)
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
	t.Logf("dense rows first; the mixture-of-experts rows are reported apart (issue 28: 80%% leave one publisher out)")
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
		t.Logf("  %-24s %3d rows: %3d (%4.1f%%) within ±35%%, median estimate/measured %.2f (leave one publisher out)",
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
		// Issue 28: the mixture-of-experts rows, and serving on 2+ GPUs
		// with the MoE rows counted, 80% each (met 2026-12-06, sixteenth
		// session: 173 of 216 and 313 of 380).
		{"mixture-of-experts rows", moe, 0.80},
		{"2+ GPU serving rows, dense and MoE", filter(priced(), func(m Measurement) bool { return batchedServing(m) && groupGPUs(m) > 1 }), 0.80},
	} {
		if got := share(in(bar.rows), len(bar.rows)); got < bar.want || len(bar.rows) == 0 {
			t.Errorf("leave one publisher out, %s: %.1f%% within ±35%% (%d rows), want %.0f%%", bar.name, 100*got, len(bar.rows), 100*bar.want)
		}
	}
}
