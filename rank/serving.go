package rank

import (
	"fmt"
	"math"

	"github.com/pricewatch/pricewatch"
)

// servingCase is one saturated-serving setting: a model on a layout of
// GPUs of one card, behind one engine.
type servingCase struct {
	model           Model
	weightBytes     float64 // all weights, bytes
	kvBytesPerToken float64
	peakTFLOPS      float64 // per GPU, at the serving precision
	isl, osl        int
	maxSeqs         float64 // limit on concurrent sequences (engine or job)
	minSeqs         int     // sequences the job must hold at once (≥ 1)
	layout          Layout
	eng             engine
	decodeFactor    float64 // 0: 1
	fp4             bool    // the GEMMs run in FP4
	k               constants
}

// servingMemory is what serving needs on each GPU of the group, in GiB:
// the share of the weights, the KV cache at the batch run (KVGiB) and at
// the least the job needs (KVMinGiB), and the engine's own reserve,
// against what the engine lets the model use (UsableGiB of CapacityGiB).
type servingMemory struct {
	WeightsGiB, KVGiB, KVMinGiB, ReserveGiB, UsableGiB, CapacityGiB float64
}

// servingResult is servingRate's answer.
type servingResult struct {
	tps  float64 // output tokens/s per GPU
	seqs float64 // concurrent sequences the group runs
	// commShare is the share of a token's time spent in tensor- and
	// pipeline-parallel communication.
	commShare float64
	link      string
	mem       servingMemory
	fits      bool
}

// servingRate is output tokens/s per GPU of a batching engine kept full on
// a layout of g = TP × PP GPUs, and the concurrent sequences B it runs.
//
// Memory. The KV cache gets what the engine leaves: memory_basis "total"
// (vLLM: gpu_memory_utilization × each GPU's capacity, less its runtime
// reserve, less the weights) or "free" (TensorRT-LLM: that fraction of
// what is free once the weights and the reserve are loaded). Capacity is
// the card's in GiB (Card.CapacityGiB). B is that cache over one
// sequence's resident tokens: ISL + OSL/2 on average for paged engines
// that grow a sequence's blocks as it decodes, ISL + OSL where the engine
// reserves the whole sequence at admission; at most maxSeqs. The job fits
// when the cache holds minSeqs whole sequences.
//
// Time per output token, for the group:
//
//	prefill = 2N × (ISL/OSL) / (min(0.95, 1.2 × ETA_C) × peak × g)
//	decode  = max(2N / (ETA_C × peak × g), W / (B × read × g))
//	        + kv_per_token × (ISL + OSL/2) / (read × g)
//	tp      = 2L/PP × 2(TP−1)/TP × h × 2 bytes × (1 + ISL/OSL) / link
//	        + 2L × latency / B
//	pp      = (1 + ISL/OSL) × h × 2 bytes / link + PP × latency / B
//
// decode is a roofline per operator: the weight GEMMs take the longer of
// their FLOPs and their weight reads, and attention's KV reads come on top
// (their kernels wait for the QKV projection). tp is the two all-reduces
// per layer Megatron-style tensor parallelism does for every token
// (prefill and decode alike), each stage doing its L/PP layers; latency
// is paid per collective per decode step, shared by the step's B/PP
// sequences. pp is the activation a stage hands the next per token. read
// is ETA_BW × the card's bandwidth (EtaB1 for one sequence), capped by the
// engine. A pipelined group keeps PipelineEfficiency of that rate (stage
// imbalance and bubbles) per doubling of its stages. tps = efficiency /
// (sum) / g.
func servingRate(c pricewatch.Card, s servingCase) servingResult {
	var r servingResult
	eta, ok := s.k.computeEff(c.EstimatorClass)
	if s.fp4 && s.k.fp4Eff > 0 {
		eta *= s.k.fp4Eff
	}
	n := s.model.ParamsB * 1e9
	lay := Layout{TP: max(s.layout.TP, 1), PP: max(s.layout.PP, 1)}
	g := float64(lay.GPUs())
	if !ok || n <= 0 || s.weightBytes <= 0 || s.peakTFLOPS <= 0 || s.osl <= 0 || s.isl < 0 ||
		s.kvBytesPerToken <= 0 || c.BandwidthGBs <= 0 || c.MemoryGB <= 0 {
		return r
	}
	isl, osl := float64(s.isl), float64(s.osl)
	kvFree, need, mem := servingKV(c, s, lay.GPUs())
	r.mem = mem
	if kvFree < need || kvFree <= 0 {
		return r
	}
	resident := isl + osl
	if s.eng.pagedKV {
		resident = isl + osl/2
	}
	seqs := kvFree / (s.kvBytesPerToken * resident)
	if s.maxSeqs > 0 {
		seqs = math.Min(seqs, s.maxSeqs)
	}
	r.mem.KVGiB = seqs * s.kvBytesPerToken * resident / g / pricewatch.BytesPerGiB
	etaBW := s.k.etaBW
	if seqs <= 1 {
		seqs, etaBW = 1, EtaB1
	}
	readRate := etaBW * c.BandwidthGBs * 1e9 // bytes/s per GPU
	if s.eng.bandwidthCapGBs > 0 {
		readRate = math.Min(readRate, s.eng.bandwidthCapGBs*1e9)
	}
	if s.decodeFactor > 0 {
		readRate *= s.decodeFactor
	}
	peak := s.peakTFLOPS * 1e12 * g
	read := readRate * g
	prefill := 2 * n * (isl / osl) / (math.Min(MaxPrefillEfficiency, PrefillMultiplier*eta) * peak)
	decode := math.Max(2*n/(eta*peak), s.weightBytes/seqs/read) + s.kvBytesPerToken*(isl+osl/2)/read
	// One decode step of a stage carries its micro-batch of B/PP
	// sequences, each with its share of prefill tokens riding along.
	pp := float64(lay.PP)
	mb := seqs / pp
	stepBytes := mb * (1 + isl/osl) * float64(s.model.Hidden) * ActivationBytes
	layers := float64(s.model.Layers)
	var comm float64
	if lay.TP > 1 {
		t, link, ok := collectiveSeconds(c, lay.TP, stepBytes, reduceFactor, s.k)
		if !ok || s.model.Hidden <= 0 || layers <= 0 {
			return r
		}
		comm += 2 * layers / pp * t / mb
		r.link = link
	}
	eff := 1.0
	if lay.PP > 1 {
		l, ok := c.LinkFor(lay.GPUs())
		if !ok || s.model.Hidden <= 0 {
			return r
		}
		comm += (l.LatencyUS*1e-6 + stepBytes/linkRate(l, s.k)) / mb
		// Each doubling of the stages keeps PipelineEfficiency: deeper
		// pipelines idle more between micro-batches.
		eff = math.Pow(s.k.ppEff, math.Log2(pp))
		if r.link == "" {
			r.link = l.Name
		}
	}
	t := prefill + decode + comm
	r.tps, r.seqs, r.commShare, r.fits = eff/t/g, seqs, comm/t, true
	return r
}

// servingKV is the KV cache the engine leaves on g GPUs of the card
// (bytes, over the group), the least the job needs (minSeqs whole
// sequences), and the memory per GPU for explanations.
func servingKV(c pricewatch.Card, s servingCase, g int) (kvFree, need float64, mem servingMemory) {
	gf := float64(g)
	capBytes := c.CapacityGiB() * pricewatch.BytesPerGiB
	reserve := s.eng.reserveGiB * pricewatch.BytesPerGiB
	mem = servingMemory{WeightsGiB: s.weightBytes / gf / pricewatch.BytesPerGiB, ReserveGiB: s.eng.reserveGiB, CapacityGiB: c.CapacityGiB()}
	switch s.eng.memoryBasis {
	case basisFree:
		kvFree = s.eng.memoryUtil * (gf*(capBytes-reserve) - s.weightBytes)
		mem.UsableGiB = mem.WeightsGiB + mem.ReserveGiB + max(kvFree, 0)/gf/pricewatch.BytesPerGiB
	default:
		kvFree = gf*(s.eng.memoryUtil*capBytes-reserve) - s.weightBytes
		mem.UsableGiB = s.eng.memoryUtil * c.CapacityGiB()
	}
	need = s.kvBytesPerToken * float64(s.isl+s.osl) * float64(max(s.minSeqs, 1))
	mem.KVMinGiB = need / gf / pricewatch.BytesPerGiB
	return kvFree, need, mem
}

// bestServing is the layout of g GPUs with the highest throughput per GPU
// (tensor parallel, pipeline parallel or a mix), and its result.
func bestServing(c pricewatch.Card, s servingCase, g int) (Layout, servingResult) {
	var best Layout
	var br servingResult
	for _, l := range layoutsFor(g) {
		s.layout = l
		if r := servingRate(c, s); r.fits && r.tps > br.tps {
			best, br = l, r
		}
	}
	return best, br
}

// servingNote describes an estimate's inputs for Profile.Note.
func servingNote(eng engine, prec Precision, c pricewatch.Card, l Layout, r servingResult, w Workload) string {
	note := fmt.Sprintf("estimated: saturated serving (%s), %s peak %g TFLOPS, %g GB/s, %.1f concurrent sequences of %d tokens on %d GPU",
		eng.name, prec.Name, prec.PeakTFLOPS, c.BandwidthGBs, r.seqs, w.ContextTokens(), l.GPUs())
	if l.GPUs() > 1 {
		note += fmt.Sprintf(" (%s over %s: %.0f%% of each token's time communicating)", l, r.link, 100*r.commShare)
	}
	return note + "; output tokens"
}
