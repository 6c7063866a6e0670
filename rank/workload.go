package rank

import (
	"cmp"
	_ "embed"
	"slices"
	"sync"

	"github.com/pricewatch/pricewatch"
)

// Method is how a workload uses the model: full fine-tuning, LoRA, QLoRA or
// serving.
type Method string

// The methods rank knows.
const (
	// MethodFull trains every weight (full fine-tune or pretraining).
	MethodFull Method = "full"
	// MethodLoRA trains a small adapter on a frozen 16-bit base.
	MethodLoRA Method = "lora"
	// MethodQLoRA trains a small adapter on a frozen 4-bit base.
	MethodQLoRA Method = "qlora"
	// MethodServe generates tokens with a batching inference engine.
	MethodServe Method = "serve"
)

// Training reports whether the method trains (full, LoRA, QLoRA).
func (m Method) Training() bool {
	return m == MethodFull || m == MethodLoRA || m == MethodQLoRA
}

// Workload is a named job shape: model, method, precision, sequence and batch
// for training; tokens in and out and the engine's concurrency limit for
// serving.
type Workload struct {
	Name, Description string
	Model             Model
	Method            Method
	// WeightBytes is bytes per base weight: 2 for bf16/fp16 (and fp8
	// training, which keeps 16-bit weights), 1 for fp8 or int8 serving,
	// FP4BytesPerWeight for fp4 serving, 0.5 for a 4-bit base (QLoRA, int4).
	WeightBytes float64
	// Precision is the precision the job asks for: bf16 (the default for
	// 16-bit weights), fp16, fp8, fp4, or a weight-only quantization (int8,
	// int4, nf4) that computes in 16 bits. PrecisionOn decides what a card
	// runs it in.
	Precision string
	// RequireBF16 leaves cards without bf16 out instead of running the job
	// in fp16 mixed precision on them.
	RequireBF16 bool
	// Engine is the serving engine (data/engines.csv; "" is vLLM): its
	// default limit on concurrent sequences and its decode speed.
	Engine string
	// RequestRate is the requests per second a serving workload receives;
	// its throughput is capped at RequestRate × OutputTokens (0: as many as
	// the engine takes).
	RequestRate float64
	// SeqLen and MicroBatch are the training sequence length and the
	// per-GPU micro-batch (sequences).
	SeqLen, MicroBatch int
	// Checkpointing is activation checkpointing (recomputation): less
	// activation memory, more FLOPs per token. SelectiveCheckpointing
	// recomputes only part of each layer (torchtitan's and Megatron's
	// selective mode): half the extra FLOPs, the memory of no checkpointing.
	Checkpointing          bool
	SelectiveCheckpointing bool
	// OptimizerBytes is the optimizer state per trained parameter for full
	// fine-tuning; 0 means OptimizerBytesBF16 (two bf16 AdamW moments).
	// OptimizerBytesFP32 gives fp32 master weights and moments.
	OptimizerBytes float64
	// InputTokens and OutputTokens are the tokens in and out per request
	// (serving).
	InputTokens, OutputTokens int
	// MaxSequences is the serving engine's limit on concurrent sequences;
	// 0 means DefaultMaxSequences.
	MaxSequences int
	// Concurrency is how many requests a serving job must hold at once
	// (their KV caches must fit); 0 means 1.
	Concurrency int
	// SLO is a serving job's service level (zero: none): the estimate
	// runs the concurrency that meets it. CachedPromptShare is the share
	// of each prompt the engine finds in its prefix cache (agents and
	// chats re-send their context): prefill is charged for the rest.
	SLO               SLO
	CachedPromptShare float64
	// BalancedAttentionDP: the run turns on the engine's attention
	// data-parallel balancer (TensorRT-LLM's attention_dp_config
	// enable_balance), so a DP × EP group keeps AttentionDPBalance of its
	// rate instead of the engine's default (engines.csv adp_balance).
	BalancedAttentionDP bool
	// ExpertAllToAll: the run moves expert-parallel tokens by all-to-all
	// (DeepEP, pplx, TensorRT-LLM's MNNVL kernels) instead of the engine's
	// default (engines.csv ep_exchange): each token reaches only the ranks
	// that hold its experts (Model.RanksReached).
	ExpertAllToAll bool
	// GradAccumulation is the micro-batches a training step accumulates
	// before its optimizer step (data-parallel gradients are reduced once
	// per step); 0 means 1.
	GradAccumulation int
	// TrainLayout is a training job's model parallelism (zero: FSDP or
	// data parallel).
	TrainLayout TrainLayout
	// EngineEfficiency scales the serving estimate (0 or 1: as
	// calibrated): a team that measured its engine faster or slower than
	// the calibrated software generation says so in config.
	EngineEfficiency float64
	// moeKernel is the MoE kernel family a published run states its engine
	// ran (a version before the engine's current default, or a backend
	// chosen by flag); "": what the engine runs by default for the format,
	// card and model (moeKernelFor). Set only by the calibration's rows.
	moeKernel string
}

// moeKernelOn is the MoE kernel family the workload's engine runs on the
// card.
func (w Workload) moeKernelOn(eng engine, c pricewatch.Card) string {
	if w.moeKernel != "" {
		return w.moeKernel
	}
	return moeKernelFor(eng, w.Precision, c, w.Model.Architecture)
}

// ContextTokens is the full context of one serving request (in + out).
func (w Workload) ContextTokens() int { return w.InputTokens + w.OutputTokens }

func (w Workload) optimizerBytes() float64 {
	if w.OptimizerBytes > 0 {
		return w.OptimizerBytes
	}
	return OptimizerBytesBF16
}

func (w Workload) maxSequences() float64 {
	if w.MaxSequences > 0 {
		return float64(w.MaxSequences)
	}
	return engineFor(w.Engine).maxSequences
}

// Compute precisions (Precision.Name) and job precisions.
const (
	PrecisionBF16 = "bf16"
	PrecisionFP16 = "fp16"
	PrecisionFP8  = "fp8"
	PrecisionFP4  = "fp4"
	PrecisionInt8 = "int8"
	PrecisionInt4 = "int4"
	PrecisionNF4  = "nf4"
	// PrecisionQ4KM is llama.cpp's Q4_K_M GGUF quantization (serving).
	PrecisionQ4KM = "q4_k_m"
)

// Weight formats besides the precisions above (data/quant.csv).
const (
	PrecisionAWQ   = "awq"
	PrecisionGPTQ  = "gptq"
	PrecisionMXFP4 = "mxfp4"
	// PrecisionQ40 is llama.cpp's Q4_0 GGUF quantization.
	PrecisionQ40 = "q4_0"
	// formatQ80 is llama.cpp's Q8_0: the non-expert weights of its MXFP4
	// MoE GGUF (weightBytes), not a job precision.
	formatQ80 = "q8_0"
)

//go:embed data/quant.csv
var quantCSV []byte

// quantFormat is one row of data/quant.csv.
type quantFormat struct {
	bytes   float64 // per weight, scales included
	compute string  // what its GEMMs run in
}

var quantFormats = sync.OnceValue(func() map[string]quantFormat {
	m := map[string]quantFormat{}
	for _, r := range readTable(quantCSV) {
		m[r[0]] = quantFormat{tableNum(r[1]) / 8, r[2]}
	}
	return m
})

// BytesPerWeight is the stored size of one weight in a format, its scales
// included, from the format's definition (data/quant.csv): fp8 1, NVFP4
// 0.5625, AWQ/GPTQ int4 at group 128 0.5195, QLoRA's NF4 0.5159, GGUF
// Q4_K_M 0.6125. ok is false for an unknown format.
func BytesPerWeight(format string) (float64, bool) {
	q, ok := quantFormats()[format]
	return q.bytes, ok
}

// Q4KMBytesPerWeight is Q4_K_M's average (data/quant.csv).
var Q4KMBytesPerWeight, _ = BytesPerWeight(PrecisionQ4KM)

// FP4BytesPerWeight is NVFP4 weights with their block scales (data/quant.csv).
var FP4BytesPerWeight, _ = BytesPerWeight(PrecisionFP4)

// computePrecision is the tensor precision the job asks for: fp8 or fp4
// when named, else 16 bits (weight-only quantizations compute in 16 bits).
func (w Workload) computePrecision() string {
	if q, ok := quantFormats()[w.Precision]; ok && q.compute != PrecisionBF16 {
		return q.compute
	}
	return PrecisionBF16
}

// weightOnlyQuantized reports a serving model whose weights are stored in
// fewer bits than it computes in (int8, int4, GGUF k-quants).
func (w Workload) weightOnlyQuantized() bool {
	return w.computePrecision() == PrecisionBF16 && w.WeightBytes > 0 && w.WeightBytes < 2
}

// weightBytes is the workload's weights, the dense part and the routed
// experts (Model.WeightBytes at the job's format). A GGUF of a checkpoint
// whose experts are MXFP4 (gpt-oss) keeps them MXFP4, as llama.cpp's
// converter does, and stores the rest in its own type:
//   - a k-quant quantizes the rest: gpt-oss-20b's Q4_K_M file is 11.6 GB,
//     not 20.9B × 4.9 bits = 12.8 GB;
//   - llama.cpp's "MXFP4 MoE" file (ggml-org's, which its gpt-oss guide
//     runs) stores the rest in Q8_0, not in the checkpoint's 16 bits:
//     llama-bench sizes gpt-oss-20b's at 11.27 GiB, a conversion with an
//     F16 rest at 12.83 GiB (TestMoE_LlamaCppMXFP4FileStoresTheRestInQ80).
func (w Workload) weightBytes() (dense, experts float64) {
	m := w.Model
	if !m.ExpertsOnly || m.Quantization != PrecisionMXFP4 {
		return m.WeightBytes(w.WeightBytes)
	}
	rest := w.WeightBytes // a k-quant's, for the rest too
	switch {
	case w.Precision == PrecisionMXFP4 && w.Engine == EngineLlamaCpp:
		rest, _ = BytesPerWeight(formatQ80)
	case w.Precision != PrecisionQ4KM && w.Precision != PrecisionQ40:
		return m.WeightBytes(w.WeightBytes) // the checkpoint itself
	}
	mx, _ := BytesPerWeight(PrecisionMXFP4)
	x := m.ExpertParams()
	return (m.Params() - x) * rest, x * mx
}

// DefaultMaxSequences is the serving engine's concurrency limit when a
// workload names none (vLLM's default; THROUGHPUT.md 2.2).
const DefaultMaxSequences = 256

// Llama7B is the generic 7B model of the built-in workloads ("llama-7b"
// shape: 32 layers, hidden 4096, 32 heads, no grouped-query attention).
func Llama7B() Model {
	return Model{Name: "llama-7b", ParamsB: 7.0, Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 32, HeadDim: 128}
}

// BuiltinWorkloads returns the named workloads every ranking knows, sorted by
// name: full-ft-7b, lora-7b, qlora-7b, serve-7b, and two mixture-of-experts
// serving workloads, serve-gpt-oss-120b and serve-qwen3-30b-a3b. The slice
// is a fresh copy.
func BuiltinWorkloads() []Workload {
	m := Llama7B()
	ws := []Workload{
		{
			Name:        "full-ft-7b",
			Description: "full fine-tune of a 7B model, bf16 weights, gradients and AdamW moments, seq 2048, micro-batch 1, activation checkpointing",
			Model:       m, Method: MethodFull, WeightBytes: 2, Precision: PrecisionBF16,
			SeqLen: 2048, MicroBatch: 1, Checkpointing: true,
			OptimizerBytes: OptimizerBytesBF16,
		},
		{
			Name:        "lora-7b",
			Description: "LoRA fine-tune of a 7B model on a bf16 base, seq 2048, micro-batch 1, activation checkpointing",
			Model:       m, Method: MethodLoRA, WeightBytes: 2, Precision: PrecisionBF16,
			SeqLen: 2048, MicroBatch: 1, Checkpointing: true,
		},
		{
			Name:        "qlora-7b",
			Description: "QLoRA fine-tune of a 7B model on a 4-bit base, seq 2048, micro-batch 1, activation checkpointing",
			Model:       m, Method: MethodQLoRA, WeightBytes: weightBytesFor(MethodQLoRA, PrecisionNF4), Precision: PrecisionNF4,
			SeqLen: 2048, MicroBatch: 1, Checkpointing: true,
		},
		moeServing("serve-gpt-oss-120b", "gpt-oss-120b",
			"serving gpt-oss-120b as published (MXFP4 experts, 5.1B of 117B parameters active), 1024 tokens in / 256 out per request; cost per million output tokens"),
		moeServing("serve-qwen3-30b-a3b", "qwen3-30b-a3b",
			"serving Qwen3-30B-A3B in bf16 (3.3B of 30.5B parameters active), 1024 tokens in / 256 out per request; cost per million output tokens"),
		{
			Name:        "serve-7b",
			Description: "serving a 7B model (32 KV heads) in bf16, 1024 tokens in / 256 out per request, up to 256 concurrent sequences; cost per million output tokens",
			Model:       m, Method: MethodServe, WeightBytes: 2, Precision: PrecisionBF16,
			InputTokens: 1024, OutputTokens: 256, MaxSequences: DefaultMaxSequences,
		},
	}
	slices.SortFunc(ws, func(a, b Workload) int { return cmp.Compare(a.Name, b.Name) })
	return ws
}

// moeServing is a built-in serving workload of a mixture-of-experts preset,
// in the checkpoint's own format, at the engine's default batch.
func moeServing(name, preset, description string) Workload {
	m := presets()[preset]
	prec := PrecisionBF16
	if m.Quantization != "" {
		prec = m.Quantization
	}
	return Workload{Name: name, Description: description, Model: m, Method: MethodServe,
		WeightBytes: weightBytesFor(MethodServe, prec), Precision: prec,
		InputTokens: 1024, OutputTokens: 256, MaxSequences: DefaultMaxSequences}
}

// WorkloadByName returns the built-in workload with that name.
func WorkloadByName(name string) (Workload, bool) {
	for _, w := range BuiltinWorkloads() {
		if w.Name == name {
			return w, true
		}
	}
	return Workload{}, false
}
