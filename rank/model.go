package rank

import "math"

// Model is the shape of a transformer model as far as memory and throughput
// need it: a dense model, or a mixture-of-experts (Experts > 0), with its
// attention as it stores its KV cache (grouped heads, MLA's compressed
// latent, sliding-window layers). ModelFromConfig reads one from a Hugging
// Face config.json.
type Model struct {
	Name string `json:"name"`
	// Architecture is the config.json architecture it was read from ("" for
	// a shape given field by field).
	Architecture string `json:"architecture,omitempty"`
	// ParamsB is the total parameter count in billions: every expert.
	ParamsB float64 `json:"params_b"`
	// ActiveParamsB is the parameters one token runs through (the shared
	// part plus ExpertsPerToken routed experts per MoE layer); 0: a dense
	// model, ParamsB.
	ActiveParamsB float64 `json:"active_params_b,omitempty"`
	Layers        int     `json:"layers"`
	Hidden        int     `json:"hidden"`
	Heads         int     `json:"heads"`
	// KVHeads is the number of key/value heads (grouped-query attention);
	// 0 means Heads (multi-head attention).
	KVHeads int `json:"kv_heads"`
	// HeadDim is the size of one attention head (for MLA the query/key
	// head: nope + rope); 0 means Hidden / Heads.
	HeadDim int `json:"head_dim"`
	// Vocab is the vocabulary (0: not given); its input embedding is a
	// lookup, counted in the parameters but not in a token's FLOPs by some
	// publishers (OpenAI's "5.1B active" for gpt-oss-120b).
	Vocab int `json:"vocab_size,omitempty"`
	// TiedEmbeddings: the output layer is the input embedding (one table).
	TiedEmbeddings bool `json:"tied_embeddings,omitempty"`

	// Experts is the routed experts of each MoE layer; ExpertsPerToken how
	// many a token is routed to; SharedExperts the experts every token
	// runs through besides (part of the active parameters).
	Experts         int `json:"experts,omitempty"`
	ExpertsPerToken int `json:"experts_per_token,omitempty"`
	SharedExperts   int `json:"shared_experts,omitempty"`
	// ExpertIntermediate is one expert's feed-forward width.
	ExpertIntermediate int `json:"expert_intermediate_size,omitempty"`
	// MoELayers is the layers with routed experts (0: Layers −
	// DenseLayers); DenseLayers the leading layers with a dense MLP
	// (DeepSeek's first_k_dense_replace).
	MoELayers   int `json:"moe_layers,omitempty"`
	DenseLayers int `json:"dense_layers,omitempty"`

	// KVLoraRank and QKRopeHeadDim describe multi-head latent attention
	// (DeepSeek-V2/V3, Kimi K2): the cache keeps one compressed latent of
	// KVLoraRank plus the shared rotary key of QKRopeHeadDim per token and
	// layer, for all heads.
	KVLoraRank    int `json:"kv_lora_rank,omitempty"`
	QKRopeHeadDim int `json:"qk_rope_head_dim,omitempty"`
	// SlidingWindow is the window of the layers that attend locally;
	// SlidingLayers how many layers do (their KV cache holds at most the
	// window: gpt-oss alternates, Gemma 3 has five local layers to one
	// global, Llama 4 chunks three of four).
	SlidingWindow int `json:"sliding_window,omitempty"`
	SlidingLayers int `json:"sliding_layers,omitempty"`

	// Quantization is the checkpoint's weight format as published (a
	// data/quant.csv format: fp8, mxfp4, …; "" for 16-bit), the precision
	// a job serves it in unless it names one. ExpertsOnly: only the routed
	// experts are in that format, the rest stays 16-bit (gpt-oss's
	// modules_to_not_convert).
	Quantization string `json:"quantization,omitempty"`
	ExpertsOnly  bool   `json:"quantized_experts_only,omitempty"`
	// SourceURL is where the shape comes from (the preset's config.json).
	SourceURL string `json:"source_url,omitempty"`
}

// Params is the total parameter count (not in billions).
func (m Model) Params() float64 { return m.ParamsB * 1e9 }

// ActiveParams is the parameters one token runs through: the total for a
// dense model.
func (m Model) ActiveParams() float64 {
	if m.MoE() && m.ActiveParamsB > 0 {
		return m.ActiveParamsB * 1e9
	}
	return m.Params()
}

// MoE reports a mixture-of-experts: routed experts of which a token takes
// fewer than all.
func (m Model) MoE() bool {
	return m.Experts > 1 && m.ExpertsPerToken > 0 && m.ExpertsPerToken < m.Experts
}

// ExpertParams is the parameters of all routed experts, derived from the
// totals: a token runs through k of E experts, so total − active =
// experts × (1 − k/E). 0 for a dense model.
func (m Model) ExpertParams() float64 {
	if !m.MoE() || m.ActiveParamsB <= 0 {
		return 0
	}
	x := (m.Params() - m.ActiveParams()) / (1 - m.routedShare())
	return math.Min(math.Max(x, 0), m.Params())
}

// routedShare is k/E, the share of the routed experts one token uses.
func (m Model) routedShare() float64 {
	if !m.MoE() {
		return 1
	}
	return float64(m.ExpertsPerToken) / float64(m.Experts)
}

// TouchedShare is the expected share of a layer's routed experts a step of
// b tokens reads, each token choosing k of E: the expected distinct
// experts are E·(1 − (1 − k/E)^b), so one token reads k/E and a large
// batch nearly all. 1 for a dense model.
func (m Model) TouchedShare(b float64) float64 {
	if !m.MoE() {
		return 1
	}
	return 1 - math.Pow(1-m.routedShare(), math.Max(b, 1))
}

// RanksReached is how many of the other n − 1 ranks of an expert-parallel
// group a token's experts lie on, on average, with the routed experts
// spread evenly over the n ranks (E/n each): (n − 1) × the chance that
// one rank holds at least one of its k, 1 − C(E − E/n, k) / C(E, k). An
// all-to-all sends a token once to each such rank, however many of its
// experts the rank holds: about k (n − 1)/n while k ≪ n, at most n − 1.
func (m Model) RanksReached(n int) float64 {
	if !m.MoE() || n <= 1 {
		return 0
	}
	e, k := float64(m.Experts), m.ExpertsPerToken
	none := 1.0 // chance that one rank holds none of the token's experts
	for i := 0; i < k; i++ {
		none *= math.Max(0, e-e/float64(n)-float64(i)) / (e - float64(i))
	}
	return float64(n-1) * (1 - none)
}

// WeightBytes splits the weights at bytesPerWeight (the job's format)
// into the dense part (attention, embeddings, dense and shared MLPs,
// routers) and the routed experts. A checkpoint that
// quantizes only its experts (ExpertsOnly) keeps the rest in 16 bits.
func (m Model) WeightBytes(bytesPerWeight float64) (dense, experts float64) {
	x := m.ExpertParams()
	rest := bytesPerWeight
	if m.ExpertsOnly && bytesPerWeight < 2 {
		rest = 2
	}
	return (m.Params() - x) * rest, x * bytesPerWeight
}

// LookupParams is the parameters a token reads only one row of: the input
// embedding of an untied model (a tied one's table is the output layer,
// read whole every step). 0 when the vocabulary is not known.
func (m Model) LookupParams() float64 {
	if m.Vocab <= 0 || m.TiedEmbeddings {
		return 0
	}
	return float64(m.Vocab) * float64(m.Hidden)
}

// ComputeParams is the active parameters a token's matmuls run through:
// the active ones less the input embedding lookup.
func (m Model) ComputeParams() float64 { return m.ActiveParams() - m.LookupParams() }

// ExpertComputeParams is the routed experts' share of ComputeParams:
// k/E of every expert.
func (m Model) ExpertComputeParams() float64 { return m.ExpertParams() * m.routedShare() }

// DecodeAttentionFLOPs is the attention-core FLOPs of one decoded token at
// context ctx for multi-head latent attention, which decodes with its
// projections absorbed: every head scores the latent and rotary key (QKᵀ
// over kv_lora_rank + rope) and sums the latent (AV over kv_lora_rank),
// 2 × heads × (2 × kv_lora_rank + rope) × ctx per layer (DeepSeek-V3 at
// 2,000 tokens: 34 GFLOP a token, half its 2 × 37B; it runs in 16 bits,
// also in fp8 engines). 0 for other
// attention, whose decode FLOPs (4 × heads × head dim × ctx per layer,
// under 5% of 2N at these lengths) the calibrated constants absorb.
func (m Model) DecodeAttentionFLOPs(ctx float64) float64 {
	if !m.mla() || m.Layers <= 0 {
		return 0
	}
	return 2 * float64(m.Heads) * float64(2*m.KVLoraRank+m.QKRopeHeadDim) * ctx * float64(m.Layers)
}

// KVBytesPerToken is the KV-cache size of one token in bytes with every
// layer attending to it: for multi-head latent attention layers × (latent
// + rotary key) × bytes per value, else 2 (key and value) × layers × KV
// heads × head dim × bytes per value. A sliding-window layer stops
// holding a token once it leaves the window (KVBytes).
func (m Model) KVBytesPerToken(bytesPerValue float64) float64 {
	if m.mla() {
		return float64(m.Layers) * float64(m.KVLoraRank+m.QKRopeHeadDim) * bytesPerValue
	}
	return 2 * float64(m.Layers) * float64(m.kvHeads()) * float64(m.headDim()) * bytesPerValue
}

// KVBytes is the KV cache of one sequence of ctx tokens: every
// full-attention layer holds all of them, a sliding-window layer at most
// its window.
func (m Model) KVBytes(ctx, bytesPerValue float64) float64 {
	if m.Layers <= 0 {
		return 0
	}
	return m.KVBytesPerToken(bytesPerValue) / float64(m.Layers) * m.attendedTokens(ctx)
}

// attendedTokens is the tokens of a ctx-token context the layers attend
// to, summed over the layers.
func (m Model) attendedTokens(ctx float64) float64 {
	sl := m.slidingLayers()
	win := ctx
	if sl > 0 {
		win = math.Min(ctx, float64(m.SlidingWindow))
	}
	return float64(m.Layers-sl)*ctx + float64(sl)*win
}

// PrefillAttentionFLOPs is the attention core's FLOPs for one prompt
// token that attends to ctx tokens (ctx = n/2 on average over a causal
// prompt of n): QKᵀ and PV, 2 × head dim FLOPs each per head and attended
// token, a sliding-window layer over at most its window. MLA's prefill
// runs uncompressed heads; their value head (128 for DeepSeek-V3) is
// counted at the query head's size (192), about 20% over on the
// attention core alone.
func (m Model) PrefillAttentionFLOPs(ctx float64) float64 {
	return 4 * float64(m.Heads) * float64(m.headDim()) * m.attendedTokens(ctx)
}

func (m Model) slidingLayers() int {
	if m.SlidingWindow <= 0 {
		return 0
	}
	return min(max(m.SlidingLayers, 0), m.Layers)
}

func (m Model) mla() bool { return m.KVLoraRank > 0 }

// KVReplication is how many times a tensor-parallel group of tp GPUs
// stores each token's KV cache: MLA's latent is shared by all heads, so
// every rank keeps all of it (tp copies); grouped-query heads are split
// while there are heads to split, then copied (8 KV heads on TP16: 2).
func (m Model) KVReplication(tp int) float64 {
	tp = max(tp, 1)
	if m.mla() {
		return float64(tp)
	}
	kvh := max(m.kvHeads(), 1)
	return math.Max(float64(tp)/float64(kvh), 1)
}

func (m Model) kvHeads() int {
	if m.KVHeads > 0 {
		return m.KVHeads
	}
	return m.Heads
}

func (m Model) headDim() int {
	if m.HeadDim > 0 {
		return m.HeadDim
	}
	if m.Heads > 0 {
		return m.Hidden / m.Heads
	}
	return 0
}
