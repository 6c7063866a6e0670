package rank

import (
	"fmt"
	"math"

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

// Estimate is the estimation model's throughput for the workload on one card
// (tokens per second per GPU, Origin estimated), with the inputs in Note.
//
// Training: U(class) × 16-bit peak × 1e12 / (k × N), k from TrainingK, ×
// QLoRAFactor for QLoRA. Serving: the saturated-serving formula of
// THROUGHPUT.md 2.2 at the workload's precision (16-bit weights: BF16 peak,
// FP16 where the card has no BF16; fp8 weights: the FP8 peak and an fp8 KV
// cache), counting output tokens, with the concurrent sequences the card's
// memory holds capped by MaxSequences.
//
// ok is false when no estimate is possible: unknown method or estimator
// class, a serving precision the card lacks or the model does not cover, or
// serving weights that leave no room for a KV cache.
func Estimate(w Workload, c pricewatch.Card) (Profile, bool) {
	p := Profile{Card: c.ID, Workload: w.Name, Origin: OriginEstimated}
	if w.Model.ParamsB <= 0 {
		return p, false
	}
	switch {
	case w.Method.Training():
		k, _ := TrainingK(w.Method, w.Checkpointing)
		tps, u, ok := trainingRate(c, w.Model.ParamsB, k, false)
		if !ok {
			return p, false
		}
		p.Note = fmt.Sprintf("estimated: U %.2f (%s) × %g TFLOPS / (k %g × %gB params)",
			u, c.EstimatorClass, c.TrainPeakTFLOPS(), k, w.Model.ParamsB)
		if w.Method == MethodQLoRA {
			tps *= QLoRAFactor
			p.Note += fmt.Sprintf(" × %g QLoRA", QLoRAFactor)
		}
		p.TokensPerSecond = tps
		return p, true
	case w.Method == MethodServe:
		s := servingCase{
			paramsB:         w.Model.ParamsB,
			weightBytes:     w.WeightBytes,
			kvBytesPerToken: w.Model.KVBytesPerToken(ServingKVBytes(w)),
			isl:             w.InputTokens,
			osl:             w.OutputTokens,
			maxSeqs:         w.maxSequences(),
			gpus:            1,
		}
		prec := "16-bit"
		switch w.WeightBytes {
		case 2:
			s.peakTFLOPS = c.TrainPeakTFLOPS()
		case 1:
			s.peakTFLOPS, prec = c.FP8TFLOPS, "fp8"
		}
		tps, seqs, ok := servingRate(c, s)
		if !ok {
			return p, false
		}
		p.TokensPerSecond = tps
		p.Note = fmt.Sprintf("estimated: saturated serving, %s peak %g TFLOPS, %g GB/s, %.1f concurrent sequences of %d tokens; output tokens",
			prec, s.peakTFLOPS, c.BandwidthGBs, seqs, w.ContextTokens())
		return p, true
	}
	return p, false
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
}

// servingRate is output tokens/s per GPU of a batching engine kept full, and
// the concurrent sequences B it runs:
//
//	B         = min(maxSeqs, (0.9 × memory − W − 2 GB) / (kv_per_token × (ISL + OSL)))
//	t_prefill = 2N × (ISL/OSL) / (min(0.95, 1.2 × ETA_C) × peak)
//	t_decode  = max(2N / (ETA_C × peak), (W/B + kv_per_token × (ISL + OSL/2)) / (ETA_BW × bandwidth))
//	tps       = 1 / (t_prefill + t_decode)
//
// Several GPUs are one device with summed memory, bandwidth and peak; the
// result is divided by the GPU count. ok is false when the weights leave no
// room for a KV cache or an input is missing.
func servingRate(c pricewatch.Card, s servingCase) (tps, seqs float64, ok bool) {
	eta, ok := ComputeEfficiency(c.EstimatorClass)
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
	prefill := 2 * n * (isl / osl) / (math.Min(MaxPrefillEfficiency, PrefillMultiplier*eta) * peak)
	decode := math.Max(2*n/(eta*peak),
		(weights/seqs+s.kvBytesPerToken*(isl+osl/2))/(EtaBW*bandwidth))
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
