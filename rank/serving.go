package rank

import (
	"fmt"
	"math"

	"github.com/pricewatch/pricewatch"
)

// servingCase is one saturated-serving setting: a model on a layout of
// GPUs of one card, behind one engine.
type servingCase struct {
	model Model
	// denseBytes are the weights every token reads (attention,
	// embeddings, dense and shared MLPs); expertBytes the routed experts.
	denseBytes, expertBytes float64
	kvBPV                   float64 // bytes per KV-cache value
	peakTFLOPS              float64 // per GPU, at the serving precision
	isl, osl                int
	maxSeqs                 float64 // limit on concurrent sequences per engine instance (engine or job)
	// groupSeqs caps the sequences of the whole group: a job's
	// concurrency is requests in flight to the service, not per replica
	// (0: no cap beyond maxSeqs per replica).
	groupSeqs    float64
	minSeqs      int // sequences the job must hold at once (≥ 1)
	layout       Layout
	eng          engine
	decodeFactor float64 // 0: 1
	cached       float64 // share of each prompt found in the prefix cache
	// balancedADP: the run turns on the engine's attention-DP balancer
	// (Workload.BalancedAttentionDP).
	balancedADP bool
	// expertA2A: the run moves expert-parallel tokens by all-to-all
	// (Workload.ExpertAllToAll), whatever the engine's default.
	expertA2A bool
	fp4       bool // the GEMMs run in FP4
	// expertRead is the share of the family's FP8 read rate its kernels
	// reach on this card for the job's expert format (moeReadRatio; 0: 1).
	expertRead float64
	k          constants
}

func (s servingCase) weightBytes() float64 { return s.denseBytes + s.expertBytes }

// denseBytesPerWeight is the bytes of one dense-part weight.
func (s servingCase) denseBytesPerWeight() float64 {
	if d := s.model.Params() - s.model.ExpertParams(); d > 0 {
		return s.denseBytes / d
	}
	return 0
}

// kvSeq is the KV cache of one sequence of ctx tokens over a TP-way group
// (MLA's latent and split-out grouped heads are stored on every rank).
func (s servingCase) kvSeq(ctx float64, tp int) float64 {
	return s.model.KVBytes(ctx, s.kvBPV) * s.model.KVReplication(tp)
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
	// commShare is the share of a token's time spent in tensor-, expert-
	// and pipeline-parallel communication.
	commShare float64
	// touched is the share of the routed experts a decode step reads.
	touched float64
	// adpBalance is the AttentionDPBalance the rate was scaled by (0: an
	// attention group of one rank, nothing waits).
	adpBalance float64
	// expertRead is the share of its FP8 read rate the experts were read
	// at (servingCase.expertRead; 0: none applied).
	expertRead float64
	// stepBytes is the weight bytes read per output token.
	stepBytes float64
	// Per output token, seconds of the group: prefill, the decode GEMMs'
	// compute and weight reads (the larger counts), KV reads,
	// communication.
	prefillT, computeT, weightsT, kvT, commT float64
	// stepT is the layers' fixed time per decode step, per output token.
	stepT float64
	// passT is what prompts run in passes of their own cost besides
	// their FLOPs (engines.csv prefill_pass "own"), per output token;
	// passShare its share of a token's time.
	passT, passShare float64
	// exchangeCopies is how many other ranks each token of a MoE layer
	// reaches in the experts' token exchange (0: none), exchangeA2A
	// whether by all-to-all rather than a gather.
	exchangeCopies float64
	exchangeA2A    bool
	link           string
	mem            servingMemory
	fits           bool
	// sloWhy says why no concurrency meets the job's service level.
	sloWhy string
}

// servingRate is output tokens/s per GPU of a batching engine kept full on
// a layout of g = TP × PP × DP GPUs, and the concurrent sequences B it
// runs.
//
// Memory. Each GPU holds its share of the weights: the dense part over
// TP × PP, the routed experts over max(EP, TP) × PP. The KV cache gets
// what the engine leaves: memory_basis "total" (vLLM: gpu_memory_utilization
// × each GPU's capacity, less its runtime reserve, less the weights) or
// "free" (TensorRT-LLM: that fraction of what is free once the weights and
// the reserve are loaded). A sequence's cache is the attention's own
// (Model.KVBytes: MLA's latent, sliding-window layers holding only the
// window), stored KVReplication(TP) times. B is that cache over one
// sequence's resident tokens: ISL + OSL/2 for paged engines that grow a
// sequence's blocks as it decodes, ISL + OSL where the engine reserves the
// whole sequence at admission; at most maxSeqs per replica. The job fits
// when the cache holds minSeqs whole sequences.
//
// Time per output token, for the group (N the active parameters):
//
//	prefill = ISL/OSL × (2N / peak + attention(ISL/2) / peak16) / (min(0.95, 1.2 × ETA_C) × g)
//	decode  = Σ over the dense part and the routed experts of
//	          max(2N_part / (ETA_C × peak × g), part's step bytes / (B/PP × read × g))
//	        + KV of a sequence at ISL + OSL/2 / (read × g)
//	        + (layers × LayerStepMicros + MLA layers × MLALayerMicros
//	          + MoE layers × the kernel family's fixed time) / (B/PP)
//	step bytes = DP × dense + touched × experts
//	passes  = for an engine that runs prompts in passes of their own
//	          (SGLang), what they cost besides their FLOPs (ownPrefillPass)
//
// A decode step of a stage carries B/PP sequences (B/(PP·DP) per
// replica) and reads its weights once for all of them: the dense part,
// and of the routed experts the share a step of b tokens touches,
// 1 − (1 − k/E)^b (Model.TouchedShare): about k/E for one stream, nearly
// all of them for a full batch. Experts spread over the replicas (EP ≥ TP
// × DP) see the whole stage's tokens; otherwise each replica reads its
// own. Communication per stage step, over the card's link:
//
//	tensor parallel: 2 all-reduces per dense layer, per MoE layer 1 (the
//	  attention's) with experts spread (EP > 1), else 2; of the replica's
//	  step tokens (1 + ISL/OSL per sequence) × hidden × 2 bytes
//	expert parallel with attention data parallel: per MoE layer the
//	  tokens go out to the ranks holding their experts and come back
//	  (expertExchangeSeconds: a gather reaches all n − 1 other ranks, an
//	  all-to-all the RanksReached ones); with attention tensor parallel
//	  the experts' outputs are all-reduced as a dense layer's
//	pipeline: one hand-off of the replica's step activations per stage
//
// shared by the step's B/PP output tokens. read is ETA_BW × the card's
// bandwidth (EtaB1 for one sequence), capped by the engine. A pipelined
// group keeps PipelineEfficiency of that rate per doubling of its stages
// (stage imbalance), and with fewer sequences per replica than stages
// only that share of the stages works at a time. tps = efficiency / (sum)
// / g.
func servingRate(c pricewatch.Card, s servingCase) servingResult {
	var r servingResult
	eta, ok := s.k.computeEff(c.EstimatorClass)
	if s.fp4 && s.k.fp4Eff > 0 {
		eta *= s.k.fp4Eff
	}
	n := s.model.ComputeParams()
	lay := s.layout.norm()
	g := float64(lay.GPUs())
	if !ok || n <= 0 || s.weightBytes() <= 0 || s.peakTFLOPS <= 0 || s.osl <= 0 || s.isl < 0 ||
		s.kvBPV <= 0 || s.model.KVBytesPerToken(1) <= 0 || c.BandwidthGBs <= 0 || c.MemoryGB <= 0 {
		return r
	}
	isl, osl := float64(s.isl), float64(s.osl)
	kvFree, need, mem := servingKV(c, s, lay)
	r.mem = mem
	if kvFree < need || kvFree <= 0 {
		return r
	}
	resident := isl + osl
	if s.eng.pagedKV {
		resident = isl + osl/2
	}
	seqs := kvFree / s.kvSeq(resident, lay.TP)
	if s.maxSeqs > 0 {
		seqs = math.Min(seqs, s.maxSeqs*float64(lay.DP))
	}
	if s.groupSeqs > 0 {
		seqs = math.Min(seqs, s.groupSeqs)
	}
	r.mem.KVGiB = seqs * s.kvSeq(resident, lay.TP) / g / pricewatch.BytesPerGiB
	etaBW := s.k.etaBW
	if seqs <= 1 {
		seqs, etaBW = 1, EtaB1
	}
	// Engines that run the experts as grouped GEMMs (data/engines.csv
	// moe_grouped_gemm) reach s / (s + moeHalfMB) of the dense kernels'
	// efficiency on an expert slice of s MB, moeHalfMB their kernel
	// family's (moe_kernel); llama.cpp's per-expert matrix-vector kernels
	// read at the dense rate (its batch-1 rows).
	moeEff := 1.0
	if half := s.k.moeHalf(s.eng.moeKernel); s.model.MoE() && half > 0 && s.eng.groupedMoE {
		// One expert's slice on one GPU: whole experts under expert
		// parallelism, a TP-th of one otherwise.
		slice := s.expertBytes / float64(s.model.Experts*s.model.moeLayers()) / 1e6
		if lay.EP <= 1 {
			slice /= float64(lay.TP)
		}
		moeEff = slice / (slice + half)
	}
	if s.model.MoE() && s.eng.groupedMoE && s.expertRead > 0 {
		moeEff *= s.expertRead
		r.expertRead = s.expertRead
	}
	// In decode the experts' share of the FLOPs and bytes runs at moeEff
	// of the dense kernels' rate (a few tokens per expert): count it
	// 1/moeEff times. Prefill's GEMMs give every expert hundreds of tokens,
	// but the experts' GEMMs, in decode and prefill, still reach only
	// moeGemm of the dense kernels' (routing, permutation, imbalance).
	xn := s.model.ExpertComputeParams()
	gemmEff := 1.0
	if g := s.k.moeGemmEff(s.eng.moeKernel); s.model.MoE() && g > 0 {
		gemmEff = g
	}
	nEff := n - xn + xn/(moeEff*gemmEff)     // decode's FLOPs as dense-rate FLOPs
	nPre := n - xn + xn/gemmEff              // prefill's
	readRate := etaBW * c.BandwidthGBs * 1e9 // bytes/s per GPU
	if s.eng.bandwidthCapGBs > 0 {
		readRate = math.Min(readRate, s.eng.bandwidthCapGBs*1e9)
	}
	if s.decodeFactor > 0 {
		readRate *= s.decodeFactor
	}
	peak := s.peakTFLOPS * 1e12 * g
	read := readRate * g
	pp, dp := float64(lay.PP), float64(lay.DP)
	stageSeqs := seqs / pp // sequences of one stage step, over the replicas
	spread := lay.EP > 1 && lay.EP >= lay.TP*lay.DP
	r.touched = s.model.TouchedShare(stageSeqs / dp)
	if spread {
		r.touched = s.model.TouchedShare(stageSeqs)
	}
	// The input embedding is a lookup: a step reads a row per token, not
	// the table.
	dense := math.Max(s.denseBytes-s.model.LookupParams()*s.denseBytesPerWeight(), 0)
	readBytes := func(expertFactor float64) float64 {
		if spread {
			return dp*dense + r.touched*s.expertBytes*expertFactor
		}
		return dp * (dense + r.touched*s.expertBytes*expertFactor)
	}
	r.stepBytes = readBytes(1) / stageSeqs
	stepBytes := readBytes(1 / moeEff) // the experts' reads at their kernels' rate
	// A prompt's cached prefix is not computed again (prefix caching).
	fresh := isl * (1 - s.cached)
	preEff := math.Min(MaxPrefillEfficiency, PrefillMultiplier*eta)
	prefill := 2 * nPre * (fresh / osl) / (preEff * peak)
	// The attention core runs in 16 bits also in fp8 and fp4 engines
	// (FlashMLA, FlashAttention-3 in bf16): its FLOPs at the 16-bit peak.
	peak16 := c.TrainPeakTFLOPS() * 1e12 * g
	if peak16 <= 0 {
		peak16 = peak
	}
	gemm := 2*nEff/(eta*peak) + s.model.DecodeAttentionFLOPs(isl+osl/2)/(eta*peak16)
	// A prompt's attention core grows with its length (quadratic over the
	// prompt): a 32k-token prompt spends more FLOPs there than in the
	// weights of most models. It runs at prefill's efficiency, in 16 bits.
	// Each uncached prompt token attends to the cached prefix and, on
	// average, half of the rest.
	prefill += s.model.PrefillAttentionFLOPs(isl-fresh/2) * (fresh / osl) / (preEff * peak16)
	r.prefillT, r.computeT, r.weightsT, r.kvT = prefill, gemm, stepBytes/stageSeqs/read, s.kvSeq(isl+osl/2, lay.TP)/read

	// Every layer costs a step a fixed time besides (LayerStepMicros), a
	// latent-attention layer more (MLALayerMicros: twice the small
	// kernels), and every MoE layer its kernel family's fixed time
	// (constants.moeLayerUS), shared by the stage step's sequences.
	r.stepT = float64(s.model.Layers) / pp * s.k.layerStepUS * 1e-6 / stageSeqs
	if s.model.mla() {
		r.stepT += float64(s.model.Layers) / pp * s.k.mlaLayerUS * 1e-6 / stageSeqs
	}
	if s.model.MoE() && s.eng.groupedMoE {
		r.stepT += float64(s.model.moeLayers()) / pp * s.k.moeLayerUS[s.eng.moeKernel] * 1e-6 / stageSeqs
	}
	// The dense layers and the experts run one after the other, each
	// bound by its own compute or reads: a step's time is the sum of the
	// two parts' rooflines, not one roofline of their sum (a full batch
	// can keep the attention and shared GEMMs compute-bound while the
	// experts, a few tokens each, stay bound by their reads).
	expertCompute := 2 * (nEff - (n - xn)) / (eta * peak)
	expertReads := readBytes(1/moeEff) - readBytes(0)
	expertReads /= stageSeqs * read
	decode := math.Max(r.computeT-expertCompute, r.weightsT-expertReads) + math.Max(expertCompute, expertReads) + r.kvT + r.stepT
	// Communication of one stage step, shared by its stageSeqs tokens.
	repTokens := stageSeqs / dp * (1 + fresh/osl)
	hidden := float64(s.model.Hidden)
	layers := float64(s.model.Layers)
	moeLayers := 0.0
	if s.model.MoE() {
		moeLayers = float64(s.model.moeLayers())
	}
	var comm float64
	if lay.TP > 1 {
		t, link, ok := collectiveSeconds(c, lay.TP, repTokens*hidden*ActivationBytes, reduceFactor, s.k)
		if !ok || hidden <= 0 || layers <= 0 {
			return r
		}
		perLayer := 2 * layers
		if exchanges(s.eng, lay) {
			perLayer -= moeLayers // the experts' all-reduce becomes the token exchange
		}
		comm += perLayer / pp * t
		r.link = link
	}
	if exchanges(s.eng, lay) {
		r.exchangeCopies, r.exchangeA2A = exchangeCopies(c, s, lay.EP)
		t, link, ok := expertExchangeSeconds(c, s, lay, stageSeqs*(1+fresh/osl)/float64(lay.EP), r.exchangeCopies)
		if !ok {
			return r
		}
		comm += moeLayers / pp * t
		if r.link == "" {
			r.link = link
		}
	}
	eff := 1.0
	if lay.PP > 1 {
		l, ok := c.LinkFor(lay.GPUs())
		if !ok || hidden <= 0 {
			return r
		}
		comm += l.LatencyUS*1e-6 + repTokens*hidden*ActivationBytes/linkRate(l, s.k)
		// Each doubling of the stages keeps PipelineEfficiency (stage
		// imbalance); with fewer sequences per replica than stages the
		// rest of the stages wait.
		eff = math.Pow(s.k.ppEff, math.Log2(pp)) * math.Min(1, seqs/dp/pp)
		if r.link == "" {
			r.link = l.Name
		}
	}
	comm /= stageSeqs
	r.commT = comm
	if s.eng.prefillOwnPass && fresh > 0 && prefill > 0 {
		r.passT = ownPrefillPass(s, passInputs{
			seqs: seqs / dp, osl: osl, fresh: fresh, dense: dense, moeEff: moeEff, readRate: readRate,
			g: g, dp: dp, spread: spread, prefill: prefill, stepFixed: r.stepT * stageSeqs,
		})
	}
	t := prefill + decode + comm + r.passT
	if bal := s.adpBalance(); spread && lay.DP > 1 && bal > 0 && bal < 1 {
		// Attention ranks step together through the experts' all-to-alls:
		// the busiest rank sets the step.
		eff *= bal
		r.adpBalance = bal
	}
	r.tps, r.seqs, r.commShare, r.passShare, r.fits = eff/t/g, seqs, comm/t, r.passT/t, true
	return r
}

// adpBalance is the share of its rate an attention data-parallel group
// whose experts span its ranks keeps: the engine's default (engines.csv
// adp_balance), or AttentionDPBalance where the run turns the engine's
// balancer on and that loses less.
func (s servingCase) adpBalance() float64 {
	if s.balancedADP && s.k.adpBalance > s.eng.adpBalance {
		return s.k.adpBalance
	}
	return s.eng.adpBalance
}

// passInputs are what ownPrefillPass needs of servingRate's working.
type passInputs struct {
	seqs, osl, fresh   float64 // sequences of a replica; output and uncached prompt tokens of one
	dense, moeEff      float64 // dense bytes a step reads (the embedding as a lookup); the experts' read efficiency
	readRate, g, dp    float64 // bytes/s per GPU; GPUs of the group; replicas
	spread             bool    // experts spread over every replica's GPUs
	prefill, stepFixed float64 // the prompts' FLOPs per output token (group seconds); a step's fixed time (s)
}

// ownPrefillPass is, per output token of the group, what an engine that
// runs prompts in forward passes of their own (SGLang) pays for them
// besides their FLOPs, which prefill already counts. In a steady state a
// replica's sequences finish, and new ones arrive, seqs/osl per decode
// step, so a pass takes max(1, seqs/osl) prompts, at most prefillTokens
// prompt tokens: per output token fresh/(P·osl) passes of P tokens. Each
// pass reads what a step of P tokens reads (the dense part and the experts
// P tokens touch, 1 − (1 − k/E)^P of them) and pays the layers' fixed
// time; where its FLOPs take longer than its reads, only the fixed time is
// extra. Every running sequence of the replica waits for it.
func ownPrefillPass(s servingCase, in passInputs) float64 {
	p := math.Min(math.Max(1, in.seqs/in.osl)*in.fresh, s.eng.prefillTokens)
	passes := in.fresh / (p * in.osl) // passes per output token of a replica
	experts := s.model.TouchedShare(p) * s.expertBytes / in.moeEff
	gRep := in.g / in.dp // a replica's GPUs
	expertGPUs := gRep
	if in.spread {
		expertGPUs = in.g
	}
	reads := in.dense/(in.readRate*gRep) + experts/(in.readRate*expertGPUs)
	// prefill is group seconds per output token: a replica's pass of P
	// prompt tokens computes for prefill × osl/fresh × dp × P seconds.
	flops := in.prefill * in.osl / in.fresh * in.dp * p
	return (math.Max(0, reads-flops) + in.stepFixed) * passes / in.dp
}

// moeLayers is the layers with routed experts.
func (m Model) moeLayers() int {
	if m.MoELayers > 0 {
		return m.MoELayers
	}
	return max(m.Layers-m.DenseLayers, 0)
}

// servingKV is the KV cache the engine leaves on the layout's GPUs
// (bytes, over the group), the least the job needs (minSeqs whole
// sequences), and the memory per GPU for explanations.
func servingKV(c pricewatch.Card, s servingCase, lay Layout) (kvFree, need float64, mem servingMemory) {
	lay = lay.norm()
	gf := float64(lay.GPUs())
	perGPU := s.denseBytes/float64(lay.TP*lay.PP) + s.expertBytes/float64(max(lay.EP, lay.TP)*lay.PP)
	capBytes := c.CapacityGiB() * pricewatch.BytesPerGiB
	reserve := s.eng.reserveGiB * pricewatch.BytesPerGiB
	mem = servingMemory{WeightsGiB: perGPU / pricewatch.BytesPerGiB, ReserveGiB: s.eng.reserveGiB, CapacityGiB: c.CapacityGiB()}
	switch s.eng.memoryBasis {
	case basisFree:
		kvFree = s.eng.memoryUtil * gf * (capBytes - reserve - perGPU)
		mem.UsableGiB = mem.WeightsGiB + mem.ReserveGiB + max(kvFree, 0)/gf/pricewatch.BytesPerGiB
	default:
		kvFree = gf * (s.eng.memoryUtil*capBytes - reserve - perGPU)
		mem.UsableGiB = s.eng.memoryUtil * c.CapacityGiB()
	}
	need = s.kvSeq(float64(s.isl+s.osl), lay.TP) * float64(max(s.minSeqs, 1))
	mem.KVMinGiB = need / gf / pricewatch.BytesPerGiB
	return kvFree, need, mem
}

// servingOn is the serving result on g GPUs in the engine's default
// layout (DefaultLayout).
func servingOn(c pricewatch.Card, s servingCase, g int) (Layout, servingResult) {
	s.layout = DefaultLayout(s.model, c, g)
	return s.layout, servingRate(c, s)
}

// servingNote describes an estimate's inputs for Profile.Note.
func servingNote(eng engine, prec Precision, c pricewatch.Card, l Layout, r servingResult, w Workload) string {
	note := fmt.Sprintf("estimated: saturated serving (%s), %s peak %g TFLOPS, %g GB/s, %.1f concurrent sequences of %d tokens on %d GPU",
		eng.name, prec.Name, prec.PeakTFLOPS, c.BandwidthGBs, r.seqs, w.ContextTokens(), l.GPUs())
	if prec.Note != "" {
		note += " (" + prec.Note + ")"
	}
	if w.Model.MoE() {
		note += fmt.Sprintf("; %.3gB of %.4gB parameters active, a decode step reads %.0f%% of the experts", w.Model.ActiveParams()/1e9, w.Model.ParamsB, 100*r.touched)
		if r.expertRead > 0 && r.expertRead < 1 {
			note += fmt.Sprintf(" (its %s experts at %.2f of the %s kernels' fp8 read rate on %s: their timings)", w.Precision, r.expertRead, eng.moeKernel, c.ID)
		}
	}
	if l.GPUs() > 1 {
		note += fmt.Sprintf(" (%s over %s: %.0f%% of each token's time communicating)", l, r.link, 100*r.commShare)
	}
	if r.adpBalance > 0 {
		note += fmt.Sprintf("; every step waits for the busiest of %d attention ranks (× %.2f", l.DP, r.adpBalance)
		if r.adpBalance < AttentionDPBalance { // the balancer would lose less
			note += fmt.Sprintf(": %s's balancer is off unless the job sets attention_dp_balance, × %.2f", eng.name, AttentionDPBalance)
		}
		note += ")"
	}
	switch {
	case r.exchangeCopies > 0 && r.exchangeA2A:
		note += fmt.Sprintf("; each MoE layer sends a token by all-to-all to the %.1f of %d other ranks holding its experts, and back", r.exchangeCopies, l.EP-1)
	case r.exchangeCopies > 0:
		note += fmt.Sprintf("; each MoE layer all-gathers the tokens of its %d ranks and reduce-scatters the outputs (%s's default; expert_all_to_all for an all-to-all backend)", l.EP, eng.name)
	}
	if r.passShare > 0 {
		note += fmt.Sprintf("; prompts run in passes of their own, which the running sequences wait for (%.0f%% of each token's time)", 100*r.passShare)
	}
	return note + "; output tokens"
}

// exchanges: the layout moves tokens between attention data-parallel
// ranks for their experts. With attention tensor parallel (DP 1) every
// rank holds every token already: the experts' outputs are all-reduced
// as a dense layer's, and nothing else moves.
func exchanges(e engine, lay Layout) bool {
	return lay.EP > 1 && lay.DP > 1 && e.epExchange != exchangeNone
}

// FP4ActivationBytes is one NVFP4 activation value: 4 bits and an 8-bit
// scale per 16 values (TensorRT-LLM's fp4_quantize before the gather).
const FP4ActivationBytes = 0.5 + 1.0/16

// expertExchangeSeconds is one MoE layer's token exchange among the EP
// ranks of an attention data-parallel group, each holding tokens of its
// own and sending each to copies other ranks (exchangeCopies): out to
// the ranks that hold their experts (dispatch) and back (combine). The
// dispatch travels in the GEMMs' input format where the engine quantizes
// first (FP4 here); the combine in 16 bits.
func expertExchangeSeconds(c pricewatch.Card, s servingCase, lay Layout, tokensPerGPU, copies float64) (float64, string, bool) {
	n := lay.EP
	// The copies leave as collectiveSeconds's (n − 1)/n share of a
	// per-GPU buffer of tokens × copies × n/(n − 1).
	buf := tokensPerGPU * copies * float64(n) / float64(n-1) * float64(s.model.Hidden)
	dispatchBytes := float64(ActivationBytes)
	if s.eng.epQuantizedDispatch && s.fp4 {
		dispatchBytes = FP4ActivationBytes
	}
	out, link, ok := collectiveSeconds(c, n, buf*dispatchBytes, gatherFactor, s.k)
	if !ok {
		return 0, "", false
	}
	back, _, _ := collectiveSeconds(c, n, buf*ActivationBytes, gatherFactor, s.k)
	return out + back, link, true
}

// exchangeCopies is how many of the other n − 1 ranks a token reaches in
// the experts' token exchange (engines.csv ep_exchange), and whether by
// all-to-all: a gather (all-gather, then reduce-scatter) reaches all of
// them whatever the routing; an all-to-all (the engine's on this group,
// or the job's expert_all_to_all) only those holding one of its experts
// (Model.RanksReached): fewer than the k copies a per-expert count gives
// once k nears n.
func exchangeCopies(c pricewatch.Card, s servingCase, n int) (float64, bool) {
	if s.expertA2A || allToAll(s.eng, c, s.model, n) {
		return s.model.RanksReached(n), true
	}
	return float64(n - 1), false
}

// boardGPUs is the GPUs of one NVSwitch board (HGX/DGX, links.csv
// domain_gpus 8): an NVLink domain wider than it spans machines
// (TensorRT-LLM's MNNVL, GB200/GB300 NVL72).
const boardGPUs = 8

// allToAll: the engine exchanges tokens by all-to-all on this group, not
// by gather (engines.csv ep_exchange; TensorRT-LLM only over an NVLink
// domain that spans nodes, with EP above the experts per token).
func allToAll(e engine, c pricewatch.Card, m Model, n int) bool {
	switch e.epExchange {
	case exchangeA2A:
		return true
	case exchangeGatherNVL:
		l, ok := c.LinkFor(n)
		return ok && l.DomainGPUs > boardGPUs && n > m.ExpertsPerToken
	}
	return false
}
