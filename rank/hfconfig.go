package rank

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// MaxConfigBytes bounds a config.json a request may carry (the largest
// published ones, with per-layer lists, are a few tens of KiB).
const MaxConfigBytes = 1 << 20

// hfFamily is how one config.json architecture lays out its parameters.
type hfFamily int

const (
	famDense    hfFamily = iota // Llama, Mistral, Qwen2/3, Phi-3/4
	famMixtral                  // every layer MoE, num_local_experts
	famQwenMoE                  // Qwen2/3-MoE: decoder_sparse_step, mlp_only_layers
	famDeepSeek                 // DeepSeek-V2/V3, Kimi K2: MLA, first dense layers, shared experts
	famGLMMoE                   // GLM-4.5: GQA, first dense layers, shared experts
	famGptOss                   // gpt-oss: alternating sliding window, MXFP4 experts
	famGemma                    // Gemma 2/3: local and global layers
	famLlama4                   // Llama 4: interleaved MoE, chunked local attention
)

// hfArchitectures are the config.json architectures ModelFromConfig reads.
var hfArchitectures = map[string]hfFamily{
	"LlamaForCausalLM":                 famDense,
	"MistralForCausalLM":               famDense,
	"Qwen2ForCausalLM":                 famDense,
	"Qwen3ForCausalLM":                 famDense,
	"Phi3ForCausalLM":                  famDense,
	"MixtralForCausalLM":               famMixtral,
	"Qwen2MoeForCausalLM":              famQwenMoE,
	"Qwen3MoeForCausalLM":              famQwenMoE,
	"DeepseekV2ForCausalLM":            famDeepSeek,
	"DeepseekV3ForCausalLM":            famDeepSeek,
	"Glm4MoeForCausalLM":               famGLMMoE,
	"GptOssForCausalLM":                famGptOss,
	"Gemma2ForCausalLM":                famGemma,
	"Gemma3ForCausalLM":                famGemma,
	"Gemma3ForConditionalGeneration":   famGemma,
	"Llama4ForConditionalGeneration":   famLlama4,
	"Llama4ForCausalLM":                famLlama4,
	"KimiK2ForCausalLM":                famDeepSeek,
	"DeepseekV32ForCausalLM":           famDeepSeek,
	"Qwen3MoeForConditionalGeneration": famQwenMoE,
}

// Architectures lists the config.json architectures a model may be read
// from, sorted.
func Architectures() []string { return slices.Sorted(maps.Keys(hfArchitectures)) }

// gemma3TextDefaults are the keys Gemma3TextConfig fills in when a
// config.json leaves them out (transformers' configuration_gemma3.py,
// https://huggingface.co/docs/transformers/model_doc/gemma3#transformers.Gemma3TextConfig);
// google/gemma-3-4b-it's text_config omits several.
var gemma3TextDefaults = map[string]float64{
	"vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
	"num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "sliding_window": 4096,
	"sliding_window_pattern": 6,
}

// quantMethods maps a config.json quantization_config.quant_method to the
// weight format (data/quant.csv) it stores.
var quantMethods = map[string]string{"fp8": PrecisionFP8, "mxfp4": PrecisionMXFP4, "awq": PrecisionAWQ, "gptq": PrecisionGPTQ}

// hfConfig is a decoded config.json (the text model's part for
// multimodal ones), numbers kept as json.Number.
type hfConfig struct {
	m        map[string]any
	prefix   string             // field path for errors: "model.config." or "model.config.text_config."
	defaults map[string]float64 // what the architecture's config class fills in
}

func (c hfConfig) num(key string) (float64, bool) {
	switch v := c.m[key].(type) {
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	case nil:
		if d, ok := c.defaults[key]; ok {
			return d, true
		}
	}
	return 0, false
}

// need is a required positive integer field.
func (c hfConfig) need(key string) (int, error) {
	f, ok := c.num(key)
	if !ok {
		return 0, invalid(c.prefix+key, "missing: a %s needs it", "config.json of this architecture")
	}
	if f <= 0 || f != math.Trunc(f) || f > 1<<24 {
		return 0, invalid(c.prefix+key, "must be a positive integer, got %v", c.m[key])
	}
	return int(f), nil
}

// opt is an optional non-negative integer field (def when absent or null).
func (c hfConfig) opt(key string, def int) (int, error) {
	f, ok := c.num(key)
	if !ok {
		return def, nil
	}
	if f < 0 || f != math.Trunc(f) || f > 1<<24 {
		return 0, invalid(c.prefix+key, "must be a non-negative integer, got %v", c.m[key])
	}
	return int(f), nil
}

func (c hfConfig) boolean(key string, def bool) bool {
	if b, ok := c.m[key].(bool); ok {
		return b
	}
	return def
}

// list is a JSON array field.
func (c hfConfig) list(key string) []any {
	l, _ := c.m[key].([]any)
	return l
}

// ModelFromConfig reads a model from a Hugging Face config.json as
// published, offline: the architecture (architectures[0]) decides how its
// fields lay out the parameters. It counts the parameters a checkpoint
// holds for the text model (embeddings, attention, dense and expert MLPs,
// routers and norms; no vision tower, no multi-token-prediction layers,
// which serving without speculative decoding does not load), the active
// ones per token, the KV cache as the attention stores it, and the
// checkpoint's quantization. An unknown architecture or a missing field
// is an invalid-input error naming the field.
func ModelFromConfig(raw []byte) (Model, error) {
	if len(raw) > MaxConfigBytes {
		return Model{}, invalid("model.config", "larger than %d bytes", MaxConfigBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil || top == nil {
		return Model{}, invalid("model.config", "not a JSON object (a config.json as published): %v", err)
	}
	archs, _ := top["architectures"].([]any)
	if len(archs) == 0 {
		return Model{}, invalid("model.config.architectures", "missing: the architecture decides how the fields are read (%s)", strings.Join(Architectures(), ", "))
	}
	arch, _ := archs[0].(string)
	fam, ok := hfArchitectures[arch]
	if !ok {
		return Model{}, invalid("model.config.architectures", "unknown architecture %q (%s)", arch, strings.Join(Architectures(), ", "))
	}
	c := hfConfig{m: top, prefix: "model.config."}
	if tc, ok := top["text_config"].(map[string]any); ok {
		c = hfConfig{m: tc, prefix: "model.config.text_config."}
	}
	if fam == famGemma && (arch == "Gemma3ForConditionalGeneration" || arch == "Gemma3ForCausalLM") {
		c.defaults = gemma3TextDefaults
	}
	m, err := c.model(fam)
	if err != nil {
		return Model{}, err
	}
	m.Architecture = arch
	if q, ok := top["quantization_config"].(map[string]any); ok {
		if err := m.quantization(q); err != nil {
			return Model{}, err
		}
	}
	return m, nil
}

// quantization reads quantization_config.
func (m *Model) quantization(q map[string]any) error {
	method, _ := q["quant_method"].(string)
	f, ok := quantMethods[strings.ToLower(method)]
	if !ok {
		return invalid("model.config.quantization_config.quant_method", "unknown %q (%s)", method, strings.Join(slices.Sorted(maps.Keys(quantMethods)), ", "))
	}
	m.Quantization = f
	// gpt-oss keeps attention, routers, embeddings and the output layer in
	// 16 bits: only the routed experts are MXFP4.
	if skip, _ := q["modules_to_not_convert"].([]any); len(skip) > 0 && m.MoE() {
		for _, s := range skip {
			if name, _ := s.(string); strings.Contains(name, "self_attn") || strings.Contains(name, "attn") {
				m.ExpertsOnly = true
			}
		}
	}
	return nil
}

// model counts a family's parameters.
func (c hfConfig) model(fam hfFamily) (Model, error) {
	var err error
	field := func(key string) int {
		if err != nil {
			return 0
		}
		var v int
		v, err = c.need(key)
		return v
	}
	optional := func(key string, def int) int {
		if err != nil {
			return 0
		}
		var v int
		v, err = c.opt(key, def)
		return v
	}
	hidden, layers, heads, vocab := field("hidden_size"), field("num_hidden_layers"), field("num_attention_heads"), field("vocab_size")
	if err != nil {
		return Model{}, err
	}
	if layers > 1000 || hidden > 1<<17 || heads > 1024 {
		// The bounds of a shape given field by field: a request's work
		// stays bounded (the layers are counted one by one).
		return Model{}, invalid(c.prefix+"num_hidden_layers", "out of range: at most 1000 layers, hidden_size 131072, 1024 heads")
	}
	kvh := optional("num_key_value_heads", heads)
	hd := optional("head_dim", hidden/heads)
	if err != nil {
		return Model{}, err
	}
	m := Model{Layers: layers, Hidden: hidden, Heads: heads, KVHeads: kvh, HeadDim: hd, Vocab: vocab}
	h := float64(hidden)
	// Attention per layer: Q, K, V and O projections (grouped-query).
	attn := h*float64(heads*hd) + 2*h*float64(kvh*hd) + float64(heads*hd)*h
	mlp := func(inter int) float64 { return 3 * h * float64(inter) } // gate, up, down
	norms := 2 * h
	tied := c.boolean("tie_word_embeddings", fam == famGemma)
	embed := float64(vocab) * h
	if !tied {
		embed *= 2
	}
	m.TiedEmbeddings = tied
	var total, active float64 // over the layers
	// layersOf sums the layers of a mixture-of-experts: a MoE layer
	// (isMoE) holds attention, its router, the shared part (shared
	// parameters) and e experts of inter, k of them active; the others a
	// dense MLP of width dense (denseField names it when it is missing).
	layersOf := func(e, k, inter int, shared float64, dense int, denseField string, isMoE func(int) bool) error {
		for i := range layers {
			if isMoE(i) {
				m.MoELayers++
				base := attn + norms + h*float64(e) + shared
				total += base + float64(e)*mlp(inter)
				active += base + float64(k)*mlp(inter)
				continue
			}
			if dense == 0 {
				return invalid(c.prefix+denseField, "missing: layers without experts need the dense MLP's width")
			}
			total += attn + norms + mlp(dense)
			active += attn + norms + mlp(dense)
		}
		m.DenseLayers = layers - m.MoELayers
		return nil
	}
	switch fam {
	case famDense, famGemma:
		inter := field("intermediate_size")
		if err != nil {
			return Model{}, err
		}
		total = float64(layers) * (attn + mlp(inter) + norms)
		if fam == famGemma {
			err = c.gemmaSliding(&m)
		} else if w, _ := c.num("sliding_window"); w > 0 && c.boolean("use_sliding_window", true) {
			// Mistral 7B v0.1 (Qwen2/3 say use_sliding_window false):
			// every layer attends within the window.
			m.SlidingWindow, m.SlidingLayers = int(w), layers
		}
	case famMixtral, famGptOss:
		e := field("num_local_experts")
		k := optional("num_experts_per_tok", 0)
		if k == 0 {
			k = optional("experts_per_token", 0)
		}
		inter := field("intermediate_size")
		if err == nil && k == 0 {
			err = invalid(c.prefix+"num_experts_per_tok", "missing: a mixture-of-experts config names the experts per token")
		}
		if err != nil {
			return Model{}, err
		}
		m.Experts, m.ExpertsPerToken, m.ExpertIntermediate = e, k, inter
		err = layersOf(e, k, inter, 0, 0, "", func(int) bool { return true })
		if err == nil && fam == famGptOss {
			err = c.layerTypes(&m)
		}
	case famQwenMoE:
		e, k, inter := field("num_experts"), field("num_experts_per_tok"), field("moe_intermediate_size")
		dense := optional("intermediate_size", 0)
		step := optional("decoder_sparse_step", 1)
		shared := optional("shared_expert_intermediate_size", 0)
		if err != nil {
			return Model{}, err
		}
		only := map[int]bool{}
		for _, v := range c.list("mlp_only_layers") {
			if n, ok := v.(json.Number); ok {
				if i, e := n.Int64(); e == nil {
					only[int(i)] = true
				}
			}
		}
		m.Experts, m.ExpertsPerToken, m.ExpertIntermediate = e, k, inter
		sh := 0.0
		if shared > 0 {
			sh = mlp(shared) + h // the shared expert and its gate
		}
		err = layersOf(e, k, inter, sh, dense, "intermediate_size", func(i int) bool { return !only[i] && (i+1)%max(step, 1) == 0 })
	case famDeepSeek, famGLMMoE:
		e, k, inter := field("n_routed_experts"), field("num_experts_per_tok"), field("moe_intermediate_size")
		shared := optional("n_shared_experts", 0)
		firstDense := optional("first_k_dense_replace", 0)
		freq := optional("moe_layer_freq", 1)
		dense := field("intermediate_size")
		if err != nil {
			return Model{}, err
		}
		if fam == famDeepSeek {
			attn, err = c.mla(&m)
			if err != nil {
				return Model{}, err
			}
		}
		m.Experts, m.ExpertsPerToken, m.ExpertIntermediate, m.SharedExperts = e, k, inter, shared
		err = layersOf(e, k, inter, float64(shared)*mlp(inter), dense, "intermediate_size", func(i int) bool { return i >= firstDense && i%max(freq, 1) == 0 })
	case famLlama4:
		e, k, inter := field("num_local_experts"), field("num_experts_per_tok"), field("intermediate_size")
		dense := optional("intermediate_size_mlp", 0)
		step := optional("interleave_moe_layer_step", 1)
		if err != nil {
			return Model{}, err
		}
		m.Experts, m.ExpertsPerToken, m.ExpertIntermediate, m.SharedExperts = e, k, inter, 1
		// Every MoE layer has one shared expert of the experts' width.
		err = layersOf(e, k, inter, mlp(inter), dense, "intermediate_size_mlp", func(i int) bool { return (i+1)%max(step, 1) == 0 })
		// Chunked local attention: the layers with RoPE attend within
		// attention_chunk_size; every fourth (NoPE) layer is global.
		if w, ok := c.num("attention_chunk_size"); ok && w > 0 {
			m.SlidingWindow = int(w)
			m.SlidingLayers = layers - layers/4
			if nr := c.list("no_rope_layers"); len(nr) == layers {
				m.SlidingLayers = 0
				for _, v := range nr {
					if n, ok := v.(json.Number); ok && n.String() == "1" {
						m.SlidingLayers++
					}
				}
			}
		}
	}
	if err != nil {
		return Model{}, err
	}
	m.ParamsB = (total + embed + h) / 1e9
	if m.MoE() {
		m.ActiveParamsB = (active + embed + h) / 1e9
	}
	return m, nil
}

// mla reads multi-head latent attention: its parameters per layer and its
// cache (the latent and the rotary key per token and layer).
func (c hfConfig) mla(m *Model) (float64, error) {
	kvRank, err := c.need("kv_lora_rank")
	if err != nil {
		return 0, err
	}
	rope, err := c.need("qk_rope_head_dim")
	if err != nil {
		return 0, err
	}
	nope, err := c.need("qk_nope_head_dim")
	if err != nil {
		return 0, err
	}
	v, err := c.need("v_head_dim")
	if err != nil {
		return 0, err
	}
	qRank, err := c.opt("q_lora_rank", 0)
	if err != nil {
		return 0, err
	}
	h, heads := float64(m.Hidden), float64(m.Heads)
	qk := float64(nope + rope)
	q := h * heads * qk
	if qRank > 0 {
		q = h*float64(qRank) + float64(qRank)*heads*qk + float64(qRank) // with its norm
	}
	kvA := h * float64(kvRank+rope)
	kvB := float64(kvRank) * heads * float64(nope+v)
	o := heads * float64(v) * h
	m.KVLoraRank, m.QKRopeHeadDim, m.HeadDim, m.KVHeads = kvRank, rope, nope+rope, m.Heads
	return q + kvA + float64(kvRank) + kvB + o, nil
}

// layerTypes reads gpt-oss's per-layer attention kinds.
func (c hfConfig) layerTypes(m *Model) error {
	w, err := c.opt("sliding_window", 0)
	if err != nil || w == 0 {
		return err
	}
	types := c.list("layer_types")
	if len(types) == 0 {
		return invalid(c.prefix+"layer_types", "missing: which layers attend within sliding_window")
	}
	m.SlidingWindow = w
	for _, t := range types {
		if s, _ := t.(string); s == "sliding_attention" {
			m.SlidingLayers++
		}
	}
	return nil
}

// gemmaSliding reads Gemma's local layers: layer_types when given, else
// every sliding_window_pattern-th layer global (Gemma 3), else every
// other (Gemma 2).
func (c hfConfig) gemmaSliding(m *Model) error {
	w, err := c.opt("sliding_window", 0)
	if err != nil || w == 0 {
		return err
	}
	m.SlidingWindow = w
	if types := c.list("layer_types"); len(types) > 0 {
		for _, t := range types {
			if s, _ := t.(string); s == "sliding_attention" {
				m.SlidingLayers++
			}
		}
		return nil
	}
	pattern, err := c.opt("sliding_window_pattern", 2)
	if err != nil {
		return err
	}
	pattern = max(pattern, 1)
	m.SlidingLayers = m.Layers - m.Layers/pattern
	return nil
}

// String describes a model briefly: "gpt-oss-120b (116.8B total, 5.1B
// active, 128 experts top-4)".
func (m Model) String() string {
	if !m.MoE() {
		return fmt.Sprintf("%s (%.3gB)", m.Name, m.ParamsB)
	}
	return fmt.Sprintf("%s (%.4gB total, %.3gB active, %d experts top-%d)", m.Name, m.ParamsB, m.ActiveParams()/1e9, m.Experts, m.ExpertsPerToken)
}
