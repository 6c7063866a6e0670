package rank

import (
	"fmt"
	"math"

	"github.com/pricewatch/pricewatch"
)

// trainingFLOPs are the floating-point operations per trained token of a
// workload, split into the linear layers' (which FP8 can speed up) and
// attention's (which stays 16-bit):
//
//	linear:    6N full (forward 2N, backward 4N; N the active parameters
//	           of a mixture-of-experts), 4N LoRA/QLoRA (no weight
//	           gradients of the frozen base); +2N with activation
//	           checkpointing (a second forward), +N selective
//	attention: 12 × layers × hidden × seq (QKᵀ and AV: 4·L·h·s forward,
//	           twice that backward, counted without the causal mask as
//	           PaLM and Megatron count them); +4·L·h·s for either kind of
//	           checkpointing (selective recomputes exactly the attention
//	           core)
//
// A model without a shape (Layers, Hidden) counts no attention.
func trainingFLOPs(w Workload) (linear, attention float64) {
	n := w.Model.ActiveParams() // a mixture-of-experts trains through its active parameters
	k, ok := TrainingK(w.Method, w.Checkpointing)
	if !ok {
		return 0, 0
	}
	if w.SelectiveCheckpointing && !w.Checkpointing {
		k++
	}
	att := float64(w.Model.Layers) * float64(w.Model.Hidden) * float64(w.SeqLen)
	attention = 12 * att
	if w.Checkpointing || w.SelectiveCheckpointing {
		attention += 4 * att
	}
	return k * n, attention
}

// fp8Speedup is how much faster the linear layers run with FP8 GEMMs than
// in 16 bits on the card: Amdahl's law over the share f of their time that
// FP8 speeds up by the card's own FP8/16-bit peak ratio. A card whose two
// peaks are equal (Gaudi 3) gains nothing.
func fp8Speedup(c pricewatch.Card, f float64) float64 {
	p16 := c.TrainPeakTFLOPS()
	if c.FP8TFLOPS <= 0 || p16 <= 0 {
		return 1
	}
	r := math.Max(c.FP8TFLOPS/p16, 1)
	return 1 / ((1 - f) + f/r)
}

// TrainLayout is a training job's model parallelism: TP-way tensor and
// PP-way pipeline parallelism with VP virtual stages per GPU, CP-way
// context parallelism (each sequence split over CP GPUs); the rest of the
// GPUs are data parallel. The zero layout is FSDP/ZeRO-3 (or plain data
// parallelism when the state fits one GPU), what rentals of up to a few
// machines run.
type TrainLayout struct {
	TP, PP, VP, CP int
}

func (l TrainLayout) modelParallel() bool { return l.TP > 1 || l.PP > 1 || l.CP > 1 }

// trainingStep is one GPU's view of a training step: seconds of compute
// and of communication, and what was assumed.
type trainingStep struct {
	compute, step float64
	tokens        float64 // per GPU per step
	u             float64
	sharded       bool    // FSDP/ZeRO-3 (the state does not fit one GPU)
	a2a           float64 // seconds of expert all-to-alls a micro-batch
	link          string
}

// overlapped is the time of compute and communication that overlap by
// the share overlap: max of the two + the unhidden rest of the smaller.
func overlapped(compute, comm, overlap float64) float64 {
	return math.Max(compute, comm) + (1-overlap)*math.Min(compute, comm)
}

// trainingRate is tokens/s per GPU of a training workload on gpus GPUs of
// the card. Compute per token is trainingFLOPs over U(class) × the 16-bit
// peak, the linear part divided by fp8Speedup when the job trains in FP8,
// × 1/QLoRAFactor for QLoRA's dequantization (the fitted factor). Several GPUs add their
// traffic over the card's links (collectiveSeconds), hidden behind
// compute by the calibrated share Overlap:
//
//   - data parallel, the state fits one GPU: gradients of the trained
//     parameters (bf16) are all-reduced once per optimizer step, shared
//     by the accumulated micro-batches;
//   - FSDP/ZeRO-3, it does not: every micro-batch all-gathers the 16-bit
//     weights for the forward and again for the backward and
//     reduce-scatters the gradients (LoRA: only the two gathers of the
//     frozen base; adapters are tiny);
//   - a model-parallel layout (w.TrainLayout, Megatron-style): each
//     micro-batch's TP group all-reduces its activations 4 times per layer
//     (6 with checkpointing), the pipeline idles (PP−1)/(GA × VP) of a
//     step, and the data-parallel replicas all-reduce their share of the
//     gradients once per step;
//   - a mixture-of-experts on several GPUs (FSDP or data parallel, its
//     experts spread over the GPUs) adds four all-to-alls per MoE layer
//     per micro-batch: dispatch and combine, forward and backward.
//
// A mixture-of-experts counts FLOPs on its active parameters and memory
// (MemoryPerGPU: weights, gradients, optimizer state) on all of them.
func trainingRate(c pricewatch.Card, w Workload, gpus int, k constants) (float64, trainingStep, bool) {
	var st trainingStep
	u, ok := k.utilization(c.EstimatorClass)
	p16 := c.TrainPeakTFLOPS()
	lin, att := trainingFLOPs(w)
	if !ok || p16 <= 0 || lin <= 0 {
		return 0, st, false
	}
	prec, ok := PrecisionOn(w, c)
	if !ok {
		return 0, st, false
	}
	if prec.Name == PrecisionFP8 {
		lin /= fp8Speedup(c, k.fp8Share)
	}
	perToken := (lin + att) / (u * p16 * 1e12)
	if w.Method == MethodQLoRA {
		perToken /= k.qlora
	}
	st.u = u
	seq := float64(max(w.SeqLen, 1))
	mb := float64(max(w.MicroBatch, 1))
	ga := float64(max(w.GradAccumulation, 1))
	n := w.Model.Params()
	layers := float64(max(w.Model.Layers, 1))
	lay := w.TrainLayout
	if gpus <= 1 {
		st.tokens = mb * seq
		st.compute = perToken * st.tokens
		st.step = st.compute
		return st.tokens / st.step, st, true
	}
	if lay.modelParallel() {
		tp, pp, vp, cp := max(lay.TP, 1), max(lay.PP, 1), max(lay.VP, 1), max(lay.CP, 1)
		mp := tp * pp * cp
		if gpus%mp != 0 {
			return 0, st, false
		}
		dp := gpus / mp
		// One micro-batch on one GPU: its share of the replica's work.
		tokens := mb * seq / float64(mp)
		compute := perToken * tokens
		passes := 4.0
		if w.Checkpointing {
			passes = 6
		}
		tpComm, link, ok := collectiveSeconds(c, tp, mb*seq/float64(cp)*float64(w.Model.Hidden)*ActivationBytes, reduceFactor, k)
		if !ok {
			return 0, st, false
		}
		micro := overlapped(compute, layers/float64(pp)*passes*tpComm, k.overlap)
		bubble := float64(pp-1) / (ga * float64(vp))
		dpComm, dpLink, ok := collectiveSeconds(c, gpus, n/float64(tp*pp)*GradientBytes, reduceFactor, k)
		if !ok {
			return 0, st, false
		}
		if dp*cp == 1 {
			dpComm = 0
		}
		st.link = link
		if dpLink != "" {
			st.link = dpLink
		}
		st.tokens = ga * tokens
		st.compute = ga * compute
		st.step = ga*micro*(1+bubble) + (1-k.overlap)*dpComm
		return st.tokens / st.step, st, true
	}
	st.tokens = mb * seq
	st.compute = perToken * st.tokens
	st.sharded = !Fits(w, c, 1)
	var comm float64
	var link string
	switch {
	case st.sharded && w.Method == MethodFull:
		t, l, ok2 := collectiveSeconds(c, gpus, n*GradientBytes, gatherFactor, k)
		comm, link, ok = 3*t, l, ok2
	case st.sharded:
		t, l, ok2 := collectiveSeconds(c, gpus, n*w.WeightBytes, gatherFactor, k)
		comm, link, ok = 2*t, l, ok2
	default:
		trained := n
		if w.Method != MethodFull {
			trained = n * AdapterFraction
		}
		t, l, ok2 := collectiveSeconds(c, gpus, trained*GradientBytes, reduceFactor, k)
		comm, link, ok = t/ga, l, ok2
	}
	if !ok {
		return 0, st, false
	}
	if m := w.Model; m.MoE() {
		// Experts spread over the GPUs (expert parallel): every MoE
		// layer sends each token's hidden state to its k experts and back,
		// in the forward and again in the backward pass: 4 all-to-alls of
		// the micro-batch's tokens × k × hidden × 2 bytes.
		t, _, ok2 := collectiveSeconds(c, gpus, st.tokens*float64(m.ExpertsPerToken)*float64(m.Hidden)*ActivationBytes, gatherFactor, k)
		if !ok2 {
			return 0, st, false
		}
		st.a2a = 4 * float64(m.moeLayers()) * t
		comm += st.a2a
	}
	st.link = link
	st.step = overlapped(st.compute, comm, k.overlap)
	return st.tokens / st.step, st, true
}

// trainingNote describes a training estimate's inputs for Profile.Note.
func trainingNote(c pricewatch.Card, w Workload, prec Precision, gpus int, st trainingStep, k constants) string {
	lin, att := trainingFLOPs(w)
	note := fmt.Sprintf("estimated: U %.2f (%s) × %g TFLOPS / (%.3g GFLOP linear + %.3g attention per token at seq %d), %s",
		st.u, c.EstimatorClass, c.TrainPeakTFLOPS(), lin/1e9, att/1e9, w.SeqLen, prec.Name)
	if prec.Name == PrecisionFP8 {
		note += fmt.Sprintf(", linear layers × %.2f in fp8", fp8Speedup(c, k.fp8Share))
	}
	if w.Method == MethodQLoRA {
		note += fmt.Sprintf(" × %g QLoRA", k.qlora)
	}
	if gpus > 1 {
		kind := "data parallel"
		switch l := w.TrainLayout; {
		case l.modelParallel():
			kind = fmt.Sprintf("TP%d PP%d CP%d", max(l.TP, 1), max(l.PP, 1), max(l.CP, 1))
		case st.sharded:
			kind = "FSDP"
		}
		note += fmt.Sprintf("; %d GPUs %s over %s: %.0f%% of a step's compute in unhidden communication",
			gpus, kind, st.link, 100*(st.step-st.compute)/st.compute)
	}
	return note
}
