package rank

import (
	_ "embed"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/pricewatch/pricewatch"
)

// Calibrated constants of the estimation model (reference THROUGHPUT.md
// section 2). They are the same for every card of a class; nothing is tuned
// per measurement.
const (
	// FP8TrainingFraction is the effective rate of FP8 training as a share
	// of the card's dense BF16 peak (used in place of the class U).
	FP8TrainingFraction = 0.65
	// QLoRAFactor is QLoRA throughput relative to LoRA (dequantisation).
	QLoRAFactor = 0.8
	// EtaBW is the share of memory bandwidth batched decode achieves.
	EtaBW = 0.70
	// EtaB1 is the share of memory bandwidth batch-1 decode achieves.
	EtaB1 = 0.75
	// PrefillMultiplier raises the compute efficiency of prefill GEMMs
	// over decode GEMMs.
	PrefillMultiplier = 1.2
	// MaxPrefillEfficiency caps PrefillMultiplier × ETA_C.
	MaxPrefillEfficiency = 0.95
	// ServeMemoryFraction is the share of memory a serving engine fills:
	// ServeMemoryFraction × memory − weights − ServeReserveGB holds the KV
	// cache.
	ServeMemoryFraction = 0.9
	// ServeReserveGB is the engine's own working memory (decimal GB).
	ServeReserveGB = 2
)

// Training utilization U per cards.csv estimator_class (THROUGHPUT.md 2.1).
var utilizationByClass = map[string]float64{
	"hopper_blackwell": 0.40,
	"ampere_dc":        0.55,
	"amd_cdna2":        0.40,
	"amd_cdna3":        0.28,
	"ada_dc":           0.40,
	"workstation":      0.45,
	"consumer":         0.45,
	"volta_turing":     0.30,
	// intel_gaudi (Gaudi 2/3) is an ASSUMPTION, not calibrated: no
	// published single-card LLM training throughput was used. Set between
	// ada_dc/hopper_blackwell (0.40) and amd_cdna3 (0.28): matrix engines
	// as fast as Hopper's on paper, with a non-CUDA stack (SynapseAI).
	"intel_gaudi": 0.35,
}

// Serving compute efficiency ETA_C per estimator_class (THROUGHPUT.md 2.2).
var computeEfficiencyByClass = map[string]float64{
	"hopper_blackwell": 0.45,
	"ampere_dc":        0.60,
	"ada_dc":           0.40,
	"amd_cdna3":        0.30,
	"workstation":      0.45,
	"consumer":         0.45,
	"volta_turing":     0.40,
	"amd_cdna2":        0.30,
	// intel_gaudi: an ASSUMPTION like its training U above (no Gaudi
	// serving measurement used), between ada_dc (0.40) and amd_cdna3 (0.30).
	"intel_gaudi": 0.35,
}

// Utilization is the calibrated training utilization U of an estimator
// class (the share of the dense 16-bit peak a well-tuned run sustains).
func Utilization(class string) (float64, bool) {
	u, ok := utilizationByClass[class]
	return u, ok
}

// ComputeEfficiency is the serving compute efficiency ETA_C of an
// estimator class.
func ComputeEfficiency(class string) (float64, bool) {
	e, ok := computeEfficiencyByClass[class]
	return e, ok
}

// TrainingK is the FLOPs per parameter per trained token of a training
// method: full 6 (8 with activation checkpointing), LoRA and QLoRA 4 (6 with
// checkpointing). ok is false for a method that does not train.
func TrainingK(m Method, checkpointing bool) (k float64, ok bool) {
	switch m {
	case MethodFull:
		k = 6
	case MethodLoRA, MethodQLoRA:
		k = 4
	default:
		return 0, false
	}
	if checkpointing {
		k += 2
	}
	return k, true
}

// Estimate is the estimation model's throughput for the workload on the
// card, per GPU, at the workload's own parallelism there: one GPU for
// training (multi-GPU scaling is applied by the caller), and for serving the
// smallest tensor-parallel group that holds the model (ServingGroup).
func Estimate(w Workload, c pricewatch.Card) (Profile, bool) {
	g := 1
	if w.Method == MethodServe {
		if g = ServingGroup(w, c); g == 0 {
			return Profile{Card: c.ID, Workload: w.Name, Origin: OriginEstimated}, false
		}
	}
	return EstimateOn(w, c, g)
}

// EstimateOn is the estimation model's throughput for the workload on gpus
// GPUs of the card, in tokens per second per GPU (Origin estimated), with
// its inputs in Note. This is the one estimator rankings, plans and the
// calibration tests use.
//
// Training: U(class) × 16-bit peak × 1e12 / (k × N) per GPU, k from
// TrainingK, × QLoRAFactor for QLoRA; with fp8 compute (asked for, and the
// card has it) FP8TrainingFraction of the 16-bit peak replaces U. gpus does
// not change the per-GPU figure (the scaling table does, at the caller).
//
// Serving: the saturated-serving formula of THROUGHPUT.md 2.2, with the
// KV-cache reads of decode attention added to the GEMM time rather than
// overlapped with it (servingRate says why), on gpus
// tensor-parallel GPUs treated as one device, at the workload's compute
// precision (16-bit: BF16, or FP16 on cards without BF16; fp8 and fp4 with
// an fp8 KV cache), counting output tokens, with the concurrent sequences
// the memory holds capped by the workload's or the engine's limit; a
// single sequence decodes at EtaB1; the engine's decode cap and
// quantized-weight factor (data/engines.csv) and the request rate apply.
//
// ok is false when no estimate is possible: unknown method or estimator
// class, a precision the card lacks (Precision says which), or serving
// weights that leave no room for a KV cache.
func EstimateOn(w Workload, c pricewatch.Card, gpus int) (Profile, bool) {
	return estimateOn(w, c, gpus, referenceServing)
}

// servingConstants are the calibrated serving constants: ETA_BW, and a
// factor on every class's ETA_C. Production uses referenceServing, the
// reference's calibration; the calibration tests price the same rows under
// others to show how much the fit depends on them.
type servingConstants struct{ etaBW, etaCScale float64 }

var referenceServing = servingConstants{etaBW: EtaBW, etaCScale: 1}

// estimateOn is EstimateOn under the given serving constants.
func estimateOn(w Workload, c pricewatch.Card, gpus int, sc servingConstants) (Profile, bool) {
	p := Profile{Card: c.ID, Workload: w.Name, Origin: OriginEstimated, GPUs: max(gpus, 1)}
	if w.Model.ParamsB <= 0 {
		return p, false
	}
	prec, ok := PrecisionOn(w, c)
	if !ok {
		return p, false
	}
	switch {
	case w.Method.Training():
		k, _ := TrainingK(w.Method, w.Checkpointing)
		if w.SelectiveCheckpointing && !w.Checkpointing {
			k++ // about half of the forward recomputed (THROUGHPUT.md 2.1)
		}
		tps, u, ok := trainingRate(c, w.Model.ParamsB, k, prec.Name == PrecisionFP8)
		if !ok {
			return p, false
		}
		p.Note = fmt.Sprintf("estimated: U %.2f (%s) × %g TFLOPS / (k %g × %gB params), %s",
			u, c.EstimatorClass, c.TrainPeakTFLOPS(), k, w.Model.ParamsB, prec.Name)
		if w.Method == MethodQLoRA {
			tps *= QLoRAFactor
			p.Note += fmt.Sprintf(" × %g QLoRA", QLoRAFactor)
		}
		p.TokensPerSecond = tps
		return p, true
	case w.Method == MethodServe:
		eng := engineFor(w.Engine)
		s := servingCase{
			paramsB:         w.Model.ParamsB,
			weightBytes:     w.WeightBytes,
			kvBytesPerToken: w.Model.KVBytesPerToken(ServingKVBytes(w)),
			peakTFLOPS:      prec.PeakTFLOPS,
			isl:             w.InputTokens,
			osl:             w.OutputTokens,
			maxSeqs:         w.maxSequences(),
			gpus:            p.GPUs,
			bandwidthCapGBs: eng.bandwidthCapGBs,
			constants:       sc,
		}
		if w.weightOnlyQuantized() {
			s.decodeFactor = eng.quantizedFactor
		}
		tps, seqs, ok := servingRate(c, s)
		if !ok {
			return p, false
		}
		p.TokensPerSecond = tps
		p.Note = fmt.Sprintf("estimated: saturated serving (%s), %s peak %g TFLOPS, %g GB/s, %.1f concurrent sequences of %d tokens on %d GPU; output tokens",
			eng.name, prec.Name, s.peakTFLOPS, c.BandwidthGBs, seqs, w.ContextTokens(), p.GPUs)
		if w.RequestRate > 0 {
			if rc := w.RequestRate * float64(w.OutputTokens) / float64(p.GPUs); rc < tps {
				p.TokensPerSecond = rc
				p.Note += fmt.Sprintf("; capped by %g requests/s × %d output tokens", w.RequestRate, w.OutputTokens)
			}
		}
		return p, true
	}
	return p, false
}

// Precision is what a workload computes in on one card.
type Precision struct {
	// Name is the compute precision used: bf16, fp16, fp8 or fp4.
	Name string `json:"precision"`
	// PeakTFLOPS is the card's dense tensor rate at Name.
	PeakTFLOPS float64 `json:"-"`
	// Note says why it differs from what the job asked for ("" when not).
	Note string `json:"precision_note,omitempty"`
	// Why is the reason the card cannot run the job at all ("" when it
	// can).
	Why string `json:"-"`
}

// PrecisionOn decides the precision a workload computes in on a card:
//   - 16-bit jobs run in BF16; a card without BF16 (Volta, Turing) runs them
//     in FP16 mixed precision at its FP16 tensor rate and says so, unless
//     the job requires BF16;
//   - fp8 is used only when the job asks for it and the card has it; a
//     training job on a card without FP8 falls back to 16 bits and says so,
//     a serving job (whose weights are stored in fp8) cannot run;
//   - fp4 serving needs an FP4 rate (Blackwell).
//
// ok is false when the card cannot run the job; Why says why.
func PrecisionOn(w Workload, c pricewatch.Card) (Precision, bool) {
	sixteen := func(note string) (Precision, bool) {
		if c.HasBF16() {
			return Precision{Name: PrecisionBF16, PeakTFLOPS: c.BF16TFLOPS, Note: note}, true
		}
		if w.RequireBF16 {
			return Precision{Why: WhyNoBF16}, false
		}
		if note != "" {
			note += "; "
		}
		return Precision{Name: PrecisionFP16, PeakTFLOPS: c.TrainPeakTFLOPS(), Note: note + "no bf16: fp16 mixed precision"}, true
	}
	switch w.computePrecision() {
	case PrecisionFP8:
		if c.FP8TFLOPS > 0 {
			return Precision{Name: PrecisionFP8, PeakTFLOPS: c.FP8TFLOPS}, true
		}
		if w.Method.Training() {
			return sixteen("no fp8: 16-bit")
		}
		return Precision{Why: WhyNoFP8}, false
	case PrecisionFP4:
		if c.FP4TFLOPS > 0 {
			return Precision{Name: PrecisionFP4, PeakTFLOPS: c.FP4TFLOPS}, true
		}
		return Precision{Why: WhyNoFP4}, false
	}
	return sixteen("")
}

//go:embed data/engines.csv
var enginesCSV []byte

// engine is one row of data/engines.csv.
type engine struct {
	name            string
	maxSequences    float64
	bandwidthCapGBs float64
	quantizedFactor float64
}

// Serving engines a workload may name (data/engines.csv).
const (
	EngineVLLM     = "vllm"
	EngineTRT      = "tensorrt-llm"
	EngineLlamaCpp = "llama.cpp"
)

var engines = sync.OnceValue(func() map[string]engine {
	m := map[string]engine{}
	for _, r := range readTable(enginesCSV) {
		m[r[0]] = engine{r[0], tableNum(r[1]), tableNum(r[2]), tableNum(r[3])}
	}
	return m
})

// Engines lists the serving engines, sorted.
func Engines() []string {
	var out []string
	for n := range engines() {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// engineFor is the named engine; "" is vLLM, the default.
func engineFor(name string) engine {
	if name == "" {
		name = EngineVLLM
	}
	if e, ok := engines()[name]; ok {
		return e
	}
	return engines()[EngineVLLM]
}

// trainingRate is tokens/s per GPU for training paramsB at k FLOPs per
// parameter per token, using the class U on the 16-bit peak, or
// FP8TrainingFraction of it for FP8 training (cards with FP8 only). It also
// returns the utilization used.
func trainingRate(c pricewatch.Card, paramsB, k float64, fp8 bool) (tps, u float64, ok bool) {
	u, ok = Utilization(c.EstimatorClass)
	if !ok || paramsB <= 0 || k <= 0 {
		return 0, 0, false
	}
	if fp8 {
		if c.FP8TFLOPS <= 0 {
			return 0, 0, false
		}
		u = FP8TrainingFraction
	}
	peak := c.TrainPeakTFLOPS()
	if peak <= 0 {
		return 0, 0, false
	}
	return u * peak * 1e12 / (k * paramsB * 1e9), u, true
}

// servingCase is one saturated-serving setting of THROUGHPUT.md 2.2.
type servingCase struct {
	paramsB         float64
	weightBytes     float64 // per parameter
	kvBytesPerToken float64
	peakTFLOPS      float64 // per GPU, at the serving precision
	isl, osl        int
	maxSeqs         float64 // engine limit on concurrent sequences
	gpus            int     // tensor-parallel GPUs treated as one device
	// bandwidthCapGBs caps the decode weight-read rate per GPU (0: none);
	// decodeFactor scales it for weight-only quantized weights (0: 1).
	bandwidthCapGBs float64
	decodeFactor    float64
	constants       servingConstants // zero: referenceServing
}

// servingRate is output tokens/s per GPU of a batching engine kept full, and
// the concurrent sequences B it runs:
//
//	B         = min(maxSeqs, (0.9 × memory − W − 2 GB) / (kv_per_token × (ISL + OSL)))
//	t_prefill = 2N × (ISL/OSL) / (min(0.95, 1.2 × ETA_C) × peak)
//	t_decode  = max(2N / (ETA_C × peak), W/B / (ETA_BW × bandwidth))
//	          + kv_per_token × (ISL + OSL/2) / (ETA_BW × bandwidth)
//	tps       = 1 / (t_prefill + t_decode)
//
// t_decode is a roofline per operator, not one for the whole step: the
// weight GEMMs take the longer of their FLOPs and their weight reads (the
// two overlap inside a GEMM), and attention then reads the KV cache in
// kernels of its own, which wait for the QKV projection and feed the
// output projection, so its reads cannot hide behind the GEMMs' tensor
// work. THROUGHPUT.md 2.2 takes one max over both, which is the same while
// the GEMMs are bandwidth-bound (small batches, batch-1 decode) and too
// fast once a large batch makes them compute-bound: that is its 1.4–1.5
// overestimate of long outputs on 96–141 GB Hopper parts and of FP4 on
// B200. The constants stay the reference's (ETA_BW 0.70, ETA_C per class);
// see rank/calibration_test.go for the fit with and without a refit.
//
// A single sequence (B = 1) reads at EtaB1 instead of ETA_BW; an engine cap
// bounds ETA × bandwidth per GPU, and decodeFactor scales it. Several GPUs
// are one device with summed memory, bandwidth and peak; the result is
// divided by the GPU count. ok is false when the weights leave no room for
// a KV cache or an input is missing.
func servingRate(c pricewatch.Card, s servingCase) (tps, seqs float64, ok bool) {
	sc := s.constants
	if sc == (servingConstants{}) {
		sc = referenceServing
	}
	eta, ok := ComputeEfficiency(c.EstimatorClass)
	eta *= sc.etaCScale
	if !ok || s.paramsB <= 0 || s.weightBytes <= 0 || s.peakTFLOPS <= 0 || s.osl <= 0 ||
		s.isl < 0 || s.kvBytesPerToken <= 0 || c.BandwidthGBs <= 0 {
		return 0, 0, false
	}
	g := float64(max(s.gpus, 1))
	n := s.paramsB * 1e9
	weights := n * s.weightBytes
	memory := c.MemoryGB * BytesPerGB * g
	bandwidth := c.BandwidthGBs * 1e9 * g
	peak := s.peakTFLOPS * 1e12 * g
	isl, osl := float64(s.isl), float64(s.osl)

	seqs = (ServeMemoryFraction*memory - weights - ServeReserveGB*BytesPerGB) / (s.kvBytesPerToken * (isl + osl))
	if s.maxSeqs > 0 {
		seqs = math.Min(seqs, s.maxSeqs)
	}
	if seqs <= 0 {
		return 0, 0, false
	}
	etaBW := sc.etaBW
	if seqs <= 1 {
		seqs, etaBW = 1, EtaB1
	}
	readRate := etaBW * bandwidth // bytes/s
	if s.bandwidthCapGBs > 0 {
		readRate = math.Min(readRate, s.bandwidthCapGBs*1e9*g)
	}
	if s.decodeFactor > 0 {
		readRate *= s.decodeFactor
	}
	prefill := 2 * n * (isl / osl) / (math.Min(MaxPrefillEfficiency, PrefillMultiplier*eta) * peak)
	decode := math.Max(2*n/(eta*peak), weights/seqs/readRate) +
		s.kvBytesPerToken*(isl+osl/2)/readRate
	return 1 / (prefill + decode) / g, seqs, true
}

// DecodeBatch1TokensPerSecond is single-stream generation speed, bound by
// memory bandwidth: EtaB1 × bandwidth / weight bytes (every token reads all
// weights once). 0 when an input is missing.
func DecodeBatch1TokensPerSecond(c pricewatch.Card, paramsB, bytesPerWeight float64) float64 {
	w := paramsB * 1e9 * bytesPerWeight
	if w <= 0 || c.BandwidthGBs <= 0 {
		return 0
	}
	return EtaB1 * c.BandwidthGBs * 1e9 / w
}
