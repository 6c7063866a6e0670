package rank

import (
	"fmt"

	"github.com/pricewatch/pricewatch"
)

// Memory model constants (DESIGN.md cost model 3). Byte counts are per
// parameter unless stated otherwise.
const (
	// BytesPerGB makes decimal gigabytes.
	BytesPerGB = 1e9
	// UsableFraction is the share of a card's memory a training job may
	// plan to use; the rest is kept free for peaks. A serving engine's
	// share is its own (data/engines.csv).
	UsableFraction = 0.8

	// GradientBytes is the gradient of one trained parameter (bf16).
	GradientBytes = 2
	// OptimizerBytesBF16 is AdamW with two bf16 moments (2 × 2 bytes):
	// with bf16 weights and gradients 8 bytes per parameter in all.
	OptimizerBytesBF16 = 4
	// OptimizerBytesFP32 is mixed precision with fp32 master weights and
	// two fp32 moments (4 + 2 × 4 bytes): with bf16 weights and gradients
	// 16 bytes per parameter in all.
	OptimizerBytesFP32 = 12

	// AdapterFraction is the LoRA/QLoRA adapter size as a share of the
	// model's parameters (0.5%: rank 16–64 on the attention and MLP
	// projections of a 7B model lands between 0.1% and 1%).
	AdapterFraction = 0.005
	// AdapterWeightBytes is an adapter parameter's bf16 weight. With
	// AdapterGradientBytes and AdapterOptimizerBytes an adapter parameter
	// carries 12 bytes (no fp32 master copy).
	AdapterWeightBytes = 2
	// AdapterGradientBytes is an adapter parameter's bf16 gradient.
	AdapterGradientBytes = 2
	// AdapterOptimizerBytes is an adapter parameter's two fp32 Adam moments.
	AdapterOptimizerBytes = 8

	// ActivationBytesPerLayer is the bytes per token per hidden unit that
	// one transformer layer stores for the backward pass with flash
	// attention and 16-bit activations (Korthikanti et al. 2022:
	// s·b·h·(34 + 5·a·s/h), the attention-score term gone).
	ActivationBytesPerLayer = 34
	// CheckpointBytesPerLayer is what activation checkpointing keeps per
	// layer: its 16-bit input, s·b·h·2 bytes.
	CheckpointBytesPerLayer = 2

	// KVBytes16 is the bytes per KV-cache value for 16-bit serving.
	KVBytes16 = 2
)

// Memory is what a workload needs on each GPU, in GiB (2^30 bytes, the
// unit card capacities are in: Card.CapacityGiB).
type Memory struct {
	// WeightsGiB is the model weights (for LoRA/QLoRA the frozen base plus
	// the adapter), divided over the GPUs.
	WeightsGiB float64 `json:"weights_gib"`
	// GradientsGiB is the gradients of the trained parameters, divided
	// over the GPUs.
	GradientsGiB float64 `json:"gradients_gib"`
	// OptimizerGiB is the optimizer state of the trained parameters,
	// divided over the GPUs.
	OptimizerGiB float64 `json:"optimizer_gib"`
	// ActivationsGiB is the activations kept for the backward pass, per
	// GPU (not divided).
	ActivationsGiB float64 `json:"activations_gib"`
	// KVCacheGiB is the serving KV cache of the workload's concurrent
	// requests (at least one full-context sequence, the minimum to serve
	// at all), divided over the group.
	KVCacheGiB float64 `json:"kv_cache_gib"`
	// ReserveGiB is a serving engine's own working memory per GPU (CUDA
	// context and graphs, activations; data/engines.csv).
	ReserveGiB float64 `json:"runtime_reserve_gib,omitempty"`
	// TotalGiB is the sum of the above.
	TotalGiB float64 `json:"total_gib"`
}

// MemoryPerGPU is the memory each of gpus GPUs needs for the workload,
// FSDP/ZeRO-3 style: weights, gradients and optimizer state are divided by
// the GPU count; activations are per GPU. Serving over gpus GPUs is tensor
// parallel: weights and the KV cache are divided. gpus below 1 counts as 1.
//
// Training: weights = params × WeightBytes; full fine-tuning adds gradients
// (params × GradientBytes) and optimizer state (params × OptimizerBytes);
// LoRA/QLoRA add an adapter of AdapterFraction × params carrying bf16
// weights and gradients and fp32 Adam moments. Activations per GPU are
// layers × s·b·h·34 bytes without checkpointing and layers × s·b·h·2 + one
// layer's s·b·h·34 with it. Serving: weights plus the KV cache of one
// sequence of InputTokens + OutputTokens (ServingKVBytes per value).
func MemoryPerGPU(w Workload, gpus int) Memory {
	if gpus < 1 {
		gpus = 1
	}
	n := w.Model.Params()
	var m Memory
	var weights, grads, opt, act, kv float64 // bytes
	switch w.Method {
	case MethodFull:
		weights = n * w.WeightBytes
		grads = n * GradientBytes
		opt = n * w.optimizerBytes()
		act = activationBytes(w)
	case MethodLoRA, MethodQLoRA:
		a := n * AdapterFraction
		weights = n*w.WeightBytes + a*AdapterWeightBytes
		grads = a * AdapterGradientBytes
		opt = a * AdapterOptimizerBytes
		act = activationBytes(w)
	case MethodServe:
		d, x := w.weightBytes()
		weights = d + x
		kv = w.Model.KVBytes(float64(w.ContextTokens()), ServingKVBytes(w)) * w.Model.KVReplication(gpus) * float64(max(w.Concurrency, 1))
		m.ReserveGiB = engineFor(w.Engine).reserveGiB
	default:
		weights = n * w.WeightBytes
	}
	g := float64(gpus)
	m.WeightsGiB = weights / g / pricewatch.BytesPerGiB
	m.GradientsGiB = grads / g / pricewatch.BytesPerGiB
	m.OptimizerGiB = opt / g / pricewatch.BytesPerGiB
	m.ActivationsGiB = act / pricewatch.BytesPerGiB
	// Tensor and pipeline parallelism split the KV cache (by heads, by
	// layers) like the weights.
	m.KVCacheGiB = kv / g / pricewatch.BytesPerGiB
	m.TotalGiB = m.WeightsGiB + m.GradientsGiB + m.OptimizerGiB + m.ActivationsGiB + m.KVCacheGiB + m.ReserveGiB
	return m
}

// activationBytes is the activation memory of one GPU's micro-batch.
func activationBytes(w Workload) float64 {
	mb := w.MicroBatch
	if mb < 1 {
		mb = 1
	}
	sbh := float64(w.SeqLen) * float64(mb) * float64(w.Model.Hidden)
	layers := float64(w.Model.Layers)
	if w.Checkpointing {
		return layers*CheckpointBytesPerLayer*sbh + ActivationBytesPerLayer*sbh
	}
	return layers * ActivationBytesPerLayer * sbh
}

// KVCacheGB is the KV cache in decimal GB of sequences of contextTokens
// (Model.KVBytes): for full attention 2 × layers × KV heads × head dim ×
// context tokens × concurrent sequences × bytes per value. The DESIGN.md
// example (32 layers, 32 KV heads of 128, 4096 tokens, 4 requests, fp16)
// gives 8.59 GB.
func KVCacheGB(m Model, contextTokens, sequences int, bytesPerValue float64) float64 {
	return m.KVBytes(float64(contextTokens), bytesPerValue) * float64(sequences) / BytesPerGB
}

// ServingKVBytes is the bytes per KV-cache value a serving workload uses:
// 1 (an fp8 cache) when it computes in fp8 or NVFP4, else 2. A DEFAULT,
// and not vLLM's or SGLang's: their --kv-cache-dtype "auto" keeps the
// model's 16 bits unless told fp8. The published fp8 and fp4 runs that
// state their cache mostly ran it in FP8 (throughput.csv: 122 of 123), and
// pricing vLLM and SGLang at their own default costs the mixture-of-experts
// rows ten of 183 within ±35% (rank/THROUGHPUT.md, 2026-12-06).
func ServingKVBytes(w Workload) float64 {
	// MXFP4 checkpoints (gpt-oss) keep a 16-bit cache: the engines'
	// default kv_cache_dtype "auto" follows the 16-bit activations.
	if c := w.computePrecision(); (c == PrecisionFP8 || c == PrecisionFP4) && w.Precision != PrecisionMXFP4 {
		return 1
	}
	return KVBytes16
}

// ServingGroup is the tensor-parallel group a serving workload needs on a
// card: the smallest power of two of GPUs, up to MaxMaxGPUs, that holds its
// weights and one full-context sequence; 0 when none does.
func ServingGroup(w Workload, c pricewatch.Card) int {
	for g := 1; g <= MaxMaxGPUs; g *= 2 {
		if Fits(w, c, g) {
			return g
		}
	}
	return 0
}

// MinGPUs is the fewest GPUs of a card, up to limit, that hold the
// workload: for training sharded FSDP/ZeRO-3 style over any count, for
// serving a ServingGroup; 0 when even limit GPUs do not.
func MinGPUs(w Workload, c pricewatch.Card, limit int) int {
	if w.Method == MethodServe {
		if g := ServingGroup(w, c); g > 0 && g <= limit {
			return g
		}
		return 0
	}
	for g := 1; g <= limit; g++ {
		if Fits(w, c, g) {
			return g
		}
	}
	return 0
}

// UsableGiB is the memory of a card a training job may plan to use: 0.8 ×
// its capacity in GiB.
func UsableGiB(c pricewatch.Card) float64 { return UsableFraction * c.CapacityGiB() }

// Fits reports whether the workload fits on gpus cards of this kind. A
// training job's MemoryPerGPU total must be within UsableGiB. A serving
// job needs the KV cache the engine leaves (data/engines.csv: its share
// of memory and its reserve, after the weights) to hold its Concurrency
// (at least one) whole sequences; more memory buys more concurrent
// sequences, which the estimate accounts for.
func Fits(w Workload, c pricewatch.Card, gpus int) bool {
	if gpus < 1 || c.MemoryGB <= 0 {
		return false
	}
	if w.Method == MethodServe {
		kv, need, _ := servingKV(c, servingFitCase(w, c), DefaultLayout(w.Model, c, gpus))
		return kv >= need && kv > 0
	}
	return MemoryPerGPU(w, gpus).TotalGiB <= UsableGiB(c)
}

// NoFitReason says why gpus GPUs of the card cannot run the workload (""
// when they can): for a serving job in a format the engine does not run
// on the card, the format and the card (data/formats.csv); otherwise in
// GiB, for training, what each GPU needs against
// 80% of its capacity; for serving, weights + the KV cache of its
// sequences + the engine's reserve against what the engine may use.
func NoFitReason(w Workload, c pricewatch.Card, gpus int) string {
	if w.Method == MethodServe {
		// A format the engine does not run on the card: say which.
		if p, ok := PrecisionOn(w, c); !ok {
			return p.Why
		}
	}
	if Fits(w, c, gpus) {
		if w.Method == MethodServe && w.SLO.Set() {
			if _, _, r, ok := servingEstimate(w, c, gpus, Layout{}, calibrated); !ok {
				return r.sloWhy
			}
		}
		return ""
	}
	on := gpus1(gpus)
	if w.Method != MethodServe {
		m := MemoryPerGPU(w, gpus)
		return fmt.Sprintf("needs %.1f GiB per GPU on %s (weights %.1f + gradients %.1f + optimizer %.1f + activations %.1f); %s has %.1f GiB usable (80%% of %.1f GiB)",
			m.TotalGiB, on, m.WeightsGiB, m.GradientsGiB, m.OptimizerGiB, m.ActivationsGiB, c.ID, UsableGiB(c), c.CapacityGiB())
	}
	return servingNoFit(w, c, servingFitCase(w, c), DefaultLayout(w.Model, c, gpus))
}

// servingNoFit says in GiB why the layout's GPUs cannot hold the serving
// job: weights + the KV cache of its sequences + the engine's reserve
// against what the engine may use.
func servingNoFit(w Workload, c pricewatch.Card, s servingCase, lay Layout) string {
	_, _, m := servingKV(c, s, lay)
	seqs := max(w.Concurrency, 1)
	total := m.WeightsGiB + m.KVMinGiB + m.ReserveGiB
	basis := fmt.Sprintf("%g of %.1f GiB", s.eng.memoryUtil, m.CapacityGiB)
	if s.eng.memoryBasis == basisFree {
		basis = fmt.Sprintf("%s keeps %g of what weights and reserve leave of %.1f GiB for the KV cache", s.eng.name, s.eng.memoryUtil, m.CapacityGiB)
	}
	on := gpus1(lay.GPUs())
	if lay.GPUs() > 1 {
		on += " (" + lay.String() + ")"
	}
	return fmt.Sprintf("needs %.1f GiB per GPU on %s: weights %.1f + KV cache %.1f (%d sequence%s of %d tokens) + runtime reserve %.1f > %.1f GiB usable on %s (%s)",
		total, on, m.WeightsGiB, m.KVMinGiB, seqs, plural(seqs), w.ContextTokens(), m.ReserveGiB, m.UsableGiB, c.ID, basis)
}

// servingFitCase is the serving setting memory is judged on: the card's
// (its precision decides the KV cache's bytes), or where the card cannot
// run the job at all the job's own formats.
func servingFitCase(w Workload, c pricewatch.Card) servingCase {
	if s, _, ok := servingCaseFor(w, c, calibrated); ok {
		return s
	}
	return servingMemoryCase(w)
}

// gpus1 writes a GPU count: "1 GPU", "8 GPUs".
func gpus1(n int) string {
	if n == 1 {
		return "1 GPU"
	}
	return fmt.Sprintf("%d GPUs", n)
}

// CheckpointBytes is what one training checkpoint writes: the trained
// state — for a full fine-tune the weights and the optimizer state
// (gradients are not saved), for LoRA and QLoRA the adapter's weights and
// optimizer state (the frozen base is not saved). Serving writes none.
func CheckpointBytes(w Workload) float64 {
	n := w.Model.Params()
	switch w.Method {
	case MethodFull:
		return n * (w.WeightBytes + w.optimizerBytes())
	case MethodLoRA, MethodQLoRA:
		return n * AdapterFraction * (AdapterWeightBytes + AdapterOptimizerBytes)
	}
	return 0
}
