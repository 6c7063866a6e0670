package rank

import (
	_ "embed"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
)

// Constants of the estimation model that are not fitted (THROUGHPUT.md
// section 2 and rank/THROUGHPUT.md).
const (
	// EtaB1 is the share of memory bandwidth batch-1 decode achieves.
	EtaB1 = 0.75
	// PrefillMultiplier raises the compute efficiency of prefill GEMMs
	// over decode GEMMs.
	PrefillMultiplier = 1.2
	// MaxPrefillEfficiency caps PrefillMultiplier × ETA_C.
	MaxPrefillEfficiency = 0.95
)

// constants are the fitted constants of the estimation model. Production
// uses calibrated; the calibration tests fit them on part of
// throughput.csv and price the rest under the fit.
type constants struct {
	// etaBW is the share of memory bandwidth batched decode achieves;
	// etaCScale a factor on every class's serving compute efficiency;
	// fp4Eff a further factor where the GEMMs run in FP4 (FP4Efficiency).
	etaBW, etaCScale, fp4Eff float64
	// layerStepUS is the fixed time of one layer in one decode step, in
	// µs, whatever the batch (LayerStepMicros).
	layerStepUS float64
	// linkEff is the share of a link's per-direction rate collectives
	// reach; ppEff the throughput a pipelined serving group keeps.
	linkEff, ppEff float64
	// adpBalance is the throughput an attention data-parallel group with
	// experts over its ranks keeps (AttentionDPBalance).
	adpBalance float64
	// fp8Share is the share of the linear layers' training time FP8 GEMMs
	// speed up (fp8Speedup); overlap the share of data-parallel traffic
	// hidden behind compute.
	fp8Share, overlap float64
	// qlora is QLoRA's throughput relative to LoRA (QLoRAFactor).
	qlora float64
	// moeHalfMB is the size of one expert's slice on one GPU (MB) at
	// which the grouped GEMMs of decode reach half the dense kernels'
	// efficiency: a slice of s MB runs at s / (s + moeHalfMB), as if each
	// touched slice cost a fixed moeHalfMB of reads besides its own
	// (small experts, and experts split over tensor-parallel ranks, are
	// thin GEMMs). moeHalfByKernel holds the MoE kernel families
	// (engines.csv moe_kernel) with a value of their own: TensorRT-LLM's
	// CUTLASS kernels, fitted on its rows; vLLM's and SGLang's Triton
	// kernel, 0 from its kernel timings (data/moe_kernels.csv).
	moeHalfMB       float64
	moeHalfByKernel map[string]float64
	// moeGemm is the routed experts' GEMM efficiency relative to the
	// dense kernels' at any batch (0: 1): grouped GEMMs over a few hundred
	// tokens per expert, routing and permutation, and the load imbalance
	// of expert parallelism, which no dense row measures. moeGemmByKernel
	// holds the kernel families whose rows (two publishers or more, ten
	// rows or more) fit one of their own.
	moeGemm         float64
	moeGemmByKernel map[string]float64
	// moeLayerUS is the fixed time of one MoE layer's expert kernels in
	// one decode step, µs, per kernel family, besides the layer step and
	// the experts' reads (data/moe_kernels.csv: the intercept of the
	// engines' own kernel timings).
	moeLayerUS map[string]float64
	// mlaLayerUS is the fixed time a layer of multi-head latent attention
	// adds to a decode step beyond layerStepUS, µs (MLALayerMicros).
	mlaLayerUS float64
	// util is the training utilization U per estimator class; a class
	// without one uses utilizationByClass. etaC is the serving compute
	// efficiency ETA_C per class (before etaCScale); a class without one
	// uses computeEfficiencyByClass.
	util, etaC map[string]float64
}

// calibrated are the constants the product estimates with: the fit on the
// rows of throughput.csv marked split=fit (rank/calibration_test.go keeps
// them equal to that fit; THROUGHPUT.md names the rows held out).
var calibrated = constants{
	etaBW: EtaBW, etaCScale: 1, fp4Eff: FP4Efficiency, layerStepUS: LayerStepMicros, mlaLayerUS: MLALayerMicros, linkEff: LinkEfficiency, ppEff: PipelineEfficiency, adpBalance: AttentionDPBalance,
	fp8Share: FP8Share, overlap: Overlap, qlora: QLoRAFactor, moeHalfMB: MoEHalfMB, moeGemm: MoEGEMMEfficiency,
	moeHalfByKernel: map[string]float64{MoEKernelCUTLASS: 4, MoEKernelTriton: 0},
	moeGemmByKernel: map[string]float64{MoEKernelCUTLASS: 0.76, MoEKernelTriton: 0.24},
	moeLayerUS:      map[string]float64{MoEKernelTriton: MoETritonLayerMicros},
	util: map[string]float64{
		"ada_dc": 0.484, "amd_cdna2": 0.484, "amd_cdna3": 0.339, "ampere_dc": 0.670, "consumer": 0.544,
		"hopper_blackwell": 0.480, "intel_gaudi": 0.423, "volta_turing": 0.363, "workstation": 0.544,
	},
	etaC: map[string]float64{
		"ada_dc": 0.397, "amd_cdna2": 0.298, "amd_cdna3": 0.298, "ampere_dc": 0.550, "consumer": 0.446,
		"hopper_blackwell": 0.480, "intel_gaudi": 0.347, "volta_turing": 0.397, "workstation": 0.446,
	},
}

// Fitted constants (see calibrated).
const (
	// EtaBW is the share of memory bandwidth batched decode achieves.
	EtaBW = 0.70
	// LayerStepMicros is the time every layer costs a decode step beyond
	// its weight and KV reads and its FLOPs, whatever the batch: the
	// launches and the small kernels (norms, rotary, activations, residual
	// adds, the collectives' synchronisation) a step runs per layer. It
	// weighs on small batches and small models, and is shared by a
	// step's sequences. Fitted on the batched dense serving rows from 0.
	LayerStepMicros = 75
	// MLALayerMicros is the fixed time a layer of multi-head latent
	// attention (DeepSeek-V3/R1, Kimi K2) adds to every decode step beyond
	// LayerStepMicros: the latent's down- and up-projections, their norms,
	// the absorbed key and value BMMs, about twice the small kernels of a
	// grouped-query layer. Fitted on the MLA rows of one sequence from 0
	// (two publishers' fit rows); SGLang's per-op timings on a B200
	// (aiconfigurator) put the extra ops at 34-36 µs (rank/THROUGHPUT.md).
	MLALayerMicros = 20
	// FP4Efficiency scales ETA_C where the serving GEMMs run in FP4: FP4
	// kernels reach less of their (doubled) peak than FP8 kernels of
	// theirs.
	FP4Efficiency = 0.70
	// LinkEfficiency is the share of a link's per-direction rate a
	// collective reaches (NCCL and RCCL bus bandwidth at the message sizes
	// of decode steps and gradient buckets).
	LinkEfficiency = 0.55
	// PipelineEfficiency is what a pipeline-parallel serving group keeps,
	// per doubling of its stages, of the rate its GPUs would reach as one
	// device (stage imbalance): fitted on TensorRT-LLM's RTX PRO 6000
	// PP2/4/8 rows only, it comes out at 1 (no loss beyond the stages
	// that wait when a replica has fewer sequences than stages).
	PipelineEfficiency = 1.00
	// FP8Share is the share of the linear layers' training time that FP8
	// GEMMs speed up: 0.90 gives 1.82× on a card whose FP8 peak is twice
	// its BF16 one (Hopper, Blackwell).
	FP8Share = 0.90
	// Overlap is the share of data-parallel communication hidden behind
	// compute (FSDP prefetch, bucketed all-reduce).
	Overlap = 0.80
	// QLoRAFactor is QLoRA's throughput relative to LoRA on the same card
	// (dequantizing the 4-bit base in every GEMM).
	QLoRAFactor = 0.74
	// MoEHalfMB is the expert slice per GPU at which decode's grouped
	// GEMMs reach half the dense kernels' efficiency (constants.moeHalfMB),
	// for a kernel family without a value of its own
	// (calibrated.moeHalfByKernel: TensorRT-LLM's CUTLASS MoE 4 MB; the
	// Triton fused MoE of vLLM and SGLang 0, from its kernel timings).
	MoEHalfMB = 5
	// MoEGEMMEfficiency is the routed experts' GEMM efficiency relative to
	// the dense kernels' (constants.moeGemm) for a kernel family without a
	// value of its own (calibrated.moeGemmByKernel: TensorRT-LLM's CUTLASS
	// MoE 0.76, the Triton fused MoE 0.24), fitted on every MoE row.
	MoEGEMMEfficiency = 0.74
	// AttentionDPBalance is what an attention data-parallel group whose
	// experts span its ranks (DP n × EP n) keeps of its throughput with
	// the engine's balancer on: every step waits for its busiest rank, and
	// the ranks' batches differ (one prefills while the others decode).
	// TensorRT-LLM's ADP balance post measures DeepSeek V3 on 8 × GB200 at
	// DP 8 and EP 8: 34,140 tokens/s against 37,912 were every step
	// balanced, 0.90, with its balancing scheduler on (25,664 of 39,552,
	// 0.65, without it: engines.csv adp_balance, each engine's default).
	// Not fitted (docs/source/blogs/tech_blog/blog10_ADP_Balance_Strategy.md).
	AttentionDPBalance = 0.90
	// MoETritonLayerMicros is the fixed time of one MoE layer's Triton
	// fused-MoE kernels per decode step (token alignment, two grouped
	// GEMM launches, the activation), µs: the median intercept of the
	// kernel timings in data/moe_kernels.csv, which read the touched
	// experts at 0.79 of the memory bandwidth (median), no less than the
	// dense kernels' ETA_BW, so the family's experts pay no slice
	// penalty (moeHalfByKernel 0). Not fitted on throughput rows.
	MoETritonLayerMicros = 31
)

// MoE kernel families (data/engines.csv moe_kernel) with constants of
// their own.
const (
	MoEKernelTriton  = "triton-fused-moe"
	MoEKernelCUTLASS = "cutlass-moe"
	// MoEKernelMarlin is vLLM's Marlin MoE (weight-only W4A16 experts on
	// Ampere and Ada: gpt-oss's MXFP4 there). No engine's own family, so
	// named here; with too few rows of its own it takes the global
	// constants.
	MoEKernelMarlin = "marlin-moe"
	// MoEKernelAITER is AMD's AITER fused MoE (composable-kernel and
	// assembly kernels), which vLLM and SGLang run on Instinct cards where
	// a run turns it on; only the runs that state it are priced on it.
	MoEKernelAITER = "aiter-moe"
)

// moeHalf is the half-efficiency expert slice of a MoE kernel family, MB.
func (k constants) moeHalf(kernel string) float64 {
	if v, ok := k.moeHalfByKernel[kernel]; ok {
		return v
	}
	return k.moeHalfMB
}

// moeGemmEff is the routed experts' GEMM efficiency of a MoE kernel
// family relative to the dense kernels'.
func (k constants) moeGemmEff(kernel string) float64 {
	if v, ok := k.moeGemmByKernel[kernel]; ok {
		return v
	}
	return k.moeGemm
}

// computeEff is the class's serving ETA_C under k (etaCScale applied; the
// fit leaves it at 1 and fits etaC per class).
func (k constants) computeEff(class string) (float64, bool) {
	e, ok := k.etaC[class]
	if !ok {
		e, ok = ComputeEfficiency(class)
	}
	return e * k.etaCScale, ok
}

// utilization is the class's training U under k.
func (k constants) utilization(class string) (float64, bool) {
	if u, ok := k.util[class]; ok {
		return u, true
	}
	return Utilization(class)
}

// utilizationByClass is the training utilization U per cards.csv
// estimator_class assumed before fitting (THROUGHPUT.md 2.1): the prior a
// class without ten fitted rows of two publishers is scaled from.
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

// Utilization is the assumed training utilization U of an estimator class
// before fitting (the share of the dense 16-bit peak a well-tuned run
// sustains); the estimator uses the fitted one (constants.utilization).
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
// card, per GPU: on one GPU for training (multi-GPU scaling is the
// caller's, TrainingScaling), and for serving on the group and layout of
// up to DefaultMaxGPUs GPUs that serves the most tokens per GPU
// (BestServingGroup), which is the cheapest per token at one price per
// GPU. Profile.GPUs is that group.
func Estimate(w Workload, c pricewatch.Card) (Profile, bool) {
	if w.Method == MethodServe {
		p, _, ok := BestServingGroup(w, c, DefaultMaxGPUs)
		return p, ok
	}
	return EstimateOn(w, c, 1)
}

// BestServingGroup is the serving estimate on the power-of-two group of
// GPUs, up to maxGPUs, in the engine's default layout over it
// (DefaultLayout), with the highest throughput per GPU; ok is false when
// no group holds the job.
func BestServingGroup(w Workload, c pricewatch.Card, maxGPUs int) (Profile, Layout, bool) {
	s, _, ok := servingCaseFor(w, c, calibrated)
	bestG, bestTPS := 0, 0.0
	var lay Layout
	for g := 1; ok && g <= maxGPUs; g *= 2 {
		// The request-rate cap is per GPU: divided by g.
		if l, r := servingOn(c, s, g); r.fits {
			tps := r.tps
			if w.RequestRate > 0 {
				tps = math.Min(tps, w.RequestRate*float64(w.OutputTokens)/float64(g))
			}
			if tps > bestTPS {
				bestG, bestTPS, lay = g, tps, l
			}
		}
	}
	if bestG == 0 {
		return Profile{Card: c.ID, Workload: w.Name, Origin: OriginEstimated}, Layout{}, false
	}
	p, _, _ := estimateServing(w, c, bestG, lay, calibrated)
	return p, lay, true
}

// EstimateOn is the estimation model's throughput for the workload on gpus
// GPUs of the card, in tokens per second per GPU (Origin estimated), with
// its inputs in Note. This is the one estimator rankings, plans and the
// calibration tests use.
//
// Training (trainingRate): FLOPs per token from the method, checkpointing
// and sequence length (trainingFLOPs) over U(class) × the 16-bit peak, fp8
// speeding up the linear layers by at most the card's fp8/16-bit ratio
// (fp8Speedup), and for several GPUs the data-parallel or FSDP traffic
// over the card's link, partly hidden behind compute.
//
// Serving (servingRate): the saturated-serving roofline per operator, with
// the KV cache the engine leaves (capacity in GiB, the engine's memory
// share and reserve) setting the batch, on the layout of gpus GPUs
// (tensor parallel, pipeline parallel or a mix) that serves the most, its
// all-reduces and hand-offs costed over the card's link; output tokens,
// capped by the workload's request rate.
//
// ok is false when no estimate is possible: unknown method or estimator
// class, a precision the card lacks (Precision says which), a serving job
// whose weights and one whole sequence do not fit the group, or a group
// larger than any link of the card joins.
func EstimateOn(w Workload, c pricewatch.Card, gpus int) (Profile, bool) {
	return estimateOn(w, c, gpus, Layout{}, calibrated)
}

// EstimateLayout is EstimateOn for serving on one given layout (the one a
// published run used, say) instead of the best of its GPUs.
func EstimateLayout(w Workload, c pricewatch.Card, l Layout) (Profile, bool) {
	return estimateOn(w, c, l.GPUs(), l, calibrated)
}

// estimateOn is EstimateOn under the given constants; a zero layout means
// the best of gpus GPUs.
func estimateOn(w Workload, c pricewatch.Card, gpus int, l Layout, k constants) (Profile, bool) {
	if w.Method == MethodServe {
		p, _, ok := estimateServing(w, c, gpus, l, k)
		return p, ok
	}
	p := Profile{Card: c.ID, Workload: w.Name, Origin: OriginEstimated, GPUs: max(gpus, 1)}
	if w.Model.ParamsB <= 0 || !w.Method.Training() {
		return p, false
	}
	prec, ok := PrecisionOn(w, c)
	if !ok {
		return p, false
	}
	tps, st, ok := trainingRate(c, w, p.GPUs, k)
	if !ok {
		return p, false
	}
	p.TokensPerSecond = tps
	p.Note = trainingNote(c, w, prec, p.GPUs, st, k) + lowerBoundNote(c)
	if p.GPUs == 1 {
		p.GPUs = 0 // a single-GPU figure, as stored profiles write it
	}
	return p, true
}

// TrainingScaling is the share of g single GPUs' throughput g GPUs of the
// card keep for the workload (the link model of trainingRate): 1 for one
// GPU or a job that is not training.
func TrainingScaling(w Workload, c pricewatch.Card, g int) float64 {
	if g <= 1 || !w.Method.Training() {
		return 1
	}
	one, _, ok1 := trainingRate(c, w, 1, calibrated)
	many, _, ok2 := trainingRate(c, w, g, calibrated)
	if !ok1 || !ok2 || one <= 0 {
		return 1
	}
	return math.Min(many/one, 1)
}

// estimateServing is the serving estimate on gpus GPUs: on layout l, or
// with a zero l on the best layout of that many GPUs.
func estimateServing(w Workload, c pricewatch.Card, gpus int, l Layout, k constants) (Profile, Layout, bool) {
	p, l, _, ok := servingEstimate(w, c, gpus, l, k)
	return p, l, ok
}

// servingEstimate is estimateServing with the result it priced (its memory
// says why a job that does not fit does not).
func servingEstimate(w Workload, c pricewatch.Card, gpus int, l Layout, k constants) (Profile, Layout, servingResult, bool) {
	p := Profile{Card: c.ID, Workload: w.Name, Origin: OriginEstimated, GPUs: max(gpus, 1)}
	s, prec, ok := servingCaseFor(w, c, k)
	if !ok {
		return p, l, servingResult{}, false
	}
	if l == (Layout{}) {
		l = DefaultLayout(w.Model, c, p.GPUs)
	}
	if why := l.validFor(w.Model, c); why != "" {
		return p, l, servingResult{}, false
	}
	s.layout = l
	r := servingRate(c, s)
	if !r.fits || r.tps <= 0 {
		return p, l, r, false
	}
	full := r.seqs
	if w.SLO.Set() {
		if r, r.sloWhy = meetSLO(c, s, r, w.SLO); r.sloWhy != "" {
			return p, l, r, false
		}
	}
	p.TokensPerSecond = r.tps
	p.Note = servingNote(s.eng, prec, c, l, r, w) + lowerBoundNote(c)
	if r.seqs < full {
		p.Note += fmt.Sprintf("; %.0f of the %.0f sequences the engine would run, to meet the service level", r.seqs, full)
	}
	if f := w.EngineEfficiency; f > 0 && f != 1 {
		p.TokensPerSecond *= f
		p.Note += fmt.Sprintf("; × %g engine efficiency (configured)", f)
	}
	if w.RequestRate > 0 {
		if rc := w.RequestRate * float64(w.OutputTokens) / float64(p.GPUs); rc < p.TokensPerSecond {
			p.TokensPerSecond = rc
			p.Note += fmt.Sprintf("; capped by %g requests/s × %d output tokens", w.RequestRate, w.OutputTokens)
		}
	}
	return p, l, r, true
}

// servingCaseFor is the serving setting of a workload on a card.
func servingCaseFor(w Workload, c pricewatch.Card, k constants) (servingCase, Precision, bool) {
	if w.Model.ParamsB <= 0 {
		return servingCase{}, Precision{}, false
	}
	prec, ok := PrecisionOn(w, c)
	if !ok {
		return servingCase{}, prec, false
	}
	s := servingMemoryCase(w)
	s.peakTFLOPS, s.fp4, s.k = prec.PeakTFLOPS, prec.Name == PrecisionFP4, k
	s.eng.moeKernel = w.moeKernelOn(s.eng, c)
	s.expertRead = moeReadRatio(s.eng.moeKernel, w.Precision, c.ID)
	if prec.WeightOnly || w.weightOnlyQuantized() {
		s.decodeFactor = s.eng.quantizedFactor
	}
	if prec.WeightOnly {
		s.kvBPV = KVBytes16 // the cache stays in the 16 bits the GEMMs run in
	}
	return s, prec, true
}

// servingMemoryCase is what a serving workload stores, whatever card it
// runs on: its weights in the job's format, its KV cache, its sequences
// and its engine.
func servingMemoryCase(w Workload) servingCase {
	dense, experts := w.weightBytes()
	return servingCase{
		model: w.Model, denseBytes: dense, expertBytes: experts, kvBPV: ServingKVBytes(w),
		isl: w.InputTokens, osl: w.OutputTokens, maxSeqs: w.maxSequences(), minSeqs: max(w.Concurrency, 1),
		groupSeqs: float64(w.Concurrency), eng: engineFor(w.Engine), cached: w.CachedPromptShare, balancedADP: w.BalancedAttentionDP, expertA2A: w.ExpertAllToAll,
	}
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
	// can), in words; Code the same as one of a bounded set of reasons
	// (WhyNoBF16, WhyNoFP8, WhyNoFP4), what rankings count exclusions by.
	Why  string `json:"-"`
	Code string `json:"-"`
	// WeightOnly: the weights stay in the job's format (fp8, fp4) but the
	// card has no tensor cores for it, so the engine dequantizes them to
	// 16 bits in the matmul (data/formats.csv).
	WeightOnly bool `json:"weight_only,omitempty"`
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
			return Precision{Why: WhyNoBF16, Code: WhyNoBF16}, false
		}
		if note != "" {
			note += "; "
		}
		return Precision{Name: PrecisionFP16, PeakTFLOPS: c.TrainPeakTFLOPS(), Note: note + "no bf16: fp16 mixed precision"}, true
	}
	switch cp := w.computePrecision(); cp {
	case PrecisionFP8, PrecisionFP4:
		peak := c.FP8TFLOPS
		if cp == PrecisionFP4 {
			peak = c.FP4TFLOPS
		}
		if w.Method.Training() {
			if cp == PrecisionFP8 && peak > 0 {
				return Precision{Name: PrecisionFP8, PeakTFLOPS: peak}, true
			}
			return sixteen("no fp8: 16-bit")
		}
		switch mode, why := formatMode(w.Engine, w.Precision, c, peak > 0); mode {
		case modeNative:
			return Precision{Name: cp, PeakTFLOPS: peak}, true
		case modeWeightOnly:
			p, ok := sixteen(fmt.Sprintf("%s weights run weight-only (dequantized to 16 bits in the matmul): %s", w.Precision, why))
			p.WeightOnly = true
			return p, ok
		default:
			code := WhyNoFP8
			if cp == PrecisionFP4 {
				code = WhyNoFP4
			}
			return Precision{Why: why, Code: code}, false
		}
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
	// memoryUtil is the share of memory the engine gives the model, of
	// each GPU's capacity (basisTotal) or of what the weights and the
	// reserve leave free (basisFree).
	memoryUtil  float64
	memoryBasis string
	// pagedKV: a sequence's KV cache grows as it decodes (ISL + OSL/2
	// resident on average) instead of being reserved whole at admission.
	pagedKV    bool
	reserveGiB float64
	// groupedMoE: the engine runs a mixture-of-experts' experts as grouped
	// GEMMs (fused MoE kernels), whose thin expert slices reach less of
	// the dense kernels' efficiency (constants.moeHalfMB).
	groupedMoE bool
	// moeKernel is the family of MoE kernels the engine runs
	// (engines.csv moe_kernel): the MoE constants are the family's.
	moeKernel string
	// prefillOwnPass: the engine runs new prompts in forward passes of
	// their own, not in the decode steps (engines.csv prefill_pass "own"),
	// of at most prefillTokens prompt tokens each.
	prefillOwnPass bool
	prefillTokens  float64
	// adpBalance is the share of its rate an attention data-parallel group
	// whose experts span its ranks keeps by default (engines.csv
	// adp_balance): the busiest rank sets every step.
	adpBalance float64
	// epExchange is how the engine moves tokens between attention
	// data-parallel ranks whose experts span the group (engines.csv
	// ep_exchange); epQuantizedDispatch: it sends them in the GEMMs'
	// input format (engines.csv ep_dispatch).
	epExchange          string
	epQuantizedDispatch bool
}

// Token exchanges of expert parallelism (data/engines.csv ep_exchange).
const (
	exchangeGather = "gather"
	exchangeA2A    = "all-to-all"
	// exchangeGatherNVL gathers, and runs an all-to-all where the NVLink
	// domain spans nodes and EP exceeds the experts per token
	// (TensorRT-LLM's enable_alltoall).
	exchangeGatherNVL = "gather-nvl-all-to-all"
	exchangeNone      = "none"
)

// Engine memory bases (data/engines.csv memory_basis).
const (
	basisTotal = "total"
	basisFree  = "free"
)

// Serving engines a workload may name (data/engines.csv).
const (
	EngineVLLM     = "vllm"
	EngineTRT      = "tensorrt-llm"
	EngineLlamaCpp = "llama.cpp"
	EngineSGLang   = "sglang"
)

var engines = sync.OnceValue(func() map[string]engine {
	m := map[string]engine{}
	for _, r := range readTable(enginesCSV) {
		if r[5] != basisTotal && r[5] != basisFree || r[6] != "paged" && r[6] != "whole" || r[8] != "yes" && r[8] != "no" ||
			r[11] != "own" && r[11] != "mixed" || r[11] == "own" && tableNum(r[12]) <= 0 || r[13] == "" ||
			!(tableNum(r[14]) > 0 && tableNum(r[14]) <= 1) || r[15] == "" ||
			!slices.Contains([]string{exchangeGather, exchangeA2A, exchangeGatherNVL, exchangeNone}, r[16]) ||
			r[17] != "16-bit" && r[17] != "quantized" || r[18] == "" {
			panic(fmt.Sprintf("rank: engines.csv %s: memory_basis %q, kv_reserve %q, moe_grouped_gemm %q, prefill_pass %q, prefill_tokens %q, prefill_source %q, adp_balance %q, adp_balance_source %q, ep_exchange %q, ep_dispatch %q, ep_exchange_source %q",
				r[0], r[5], r[6], r[8], r[11], r[12], r[13], r[14], r[15], r[16], r[17], r[18]))
		}
		m[r[0]] = engine{name: r[0], maxSequences: tableNum(r[1]), bandwidthCapGBs: tableNum(r[2]),
			quantizedFactor: tableNum(r[3]), memoryUtil: tableNum(r[4]), memoryBasis: r[5],
			pagedKV: r[6] == "paged", reserveGiB: tableNum(r[7]), groupedMoE: r[8] == "yes", moeKernel: r[9],
			prefillOwnPass: r[11] == "own", prefillTokens: tableNum(r[12]), adpBalance: tableNum(r[14]),
			epExchange: r[16], epQuantizedDispatch: r[17] == "quantized"}
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

// lowerBoundNote says an estimate is a floor where the card is one whose
// form factor or edition the offer did not state (normalize.FormNotStated):
// its figures are the slowest part's, so the cost per token is a ceiling.
func lowerBoundNote(c pricewatch.Card) string {
	if !normalize.FormNotStated(c) {
		return ""
	}
	return "; the offer states no form factor or edition: priced at its slowest part's figures, a floor on throughput"
}
