package rank

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
)

// ModelSpec names a preset, carries a Hugging Face config.json as
// published (Config), or gives a model's shape field by field. A
// mixture-of-experts given by fields needs its active parameters, experts
// and experts per token; the attention fields (MLA ranks, sliding window)
// are optional.
type ModelSpec struct {
	Preset  string          `json:"preset,omitempty"`
	Config  json.RawMessage `json:"config,omitempty"`
	ParamsB float64         `json:"params_b,omitempty"`
	Layers  int             `json:"layers,omitempty"`
	Hidden  int             `json:"hidden,omitempty"`
	Heads   int             `json:"heads,omitempty"`
	KVHeads int             `json:"kv_heads,omitempty"`
	HeadDim int             `json:"head_dim,omitempty"`
	// Mixture-of-experts.
	ActiveParamsB      float64 `json:"active_params_b,omitempty"`
	Experts            int     `json:"experts,omitempty"`
	ExpertsPerToken    int     `json:"experts_per_token,omitempty"`
	SharedExperts      int     `json:"shared_experts,omitempty"`
	ExpertIntermediate int     `json:"expert_intermediate_size,omitempty"`
	DenseLayers        int     `json:"dense_layers,omitempty"`
	// Attention and checkpoint format.
	KVLoraRank           int    `json:"kv_lora_rank,omitempty"`
	QKRopeHeadDim        int    `json:"qk_rope_head_dim,omitempty"`
	SlidingWindow        int    `json:"sliding_window,omitempty"`
	SlidingLayers        int    `json:"sliding_layers,omitempty"`
	Quantization         string `json:"quantization,omitempty"`
	QuantizedExpertsOnly bool   `json:"quantized_experts_only,omitempty"`
}

// shapeGiven reports whether any field-by-field shape field is set.
func (m *ModelSpec) shapeGiven() bool {
	return m.ParamsB != 0 || m.Layers != 0 || m.Hidden != 0 || m.Heads != 0 || m.KVHeads != 0 || m.HeadDim != 0 ||
		m.ActiveParamsB != 0 || m.Experts != 0 || m.ExpertsPerToken != 0 || m.SharedExperts != 0 || m.ExpertIntermediate != 0 ||
		m.DenseLayers != 0 || m.KVLoraRank != 0 || m.QKRopeHeadDim != 0 || m.SlidingWindow != 0 || m.SlidingLayers != 0 ||
		m.Quantization != "" || m.QuantizedExpertsOnly
}

// HiddenSpec are the costs besides GPU time. Prices are in the job's
// currency; absent ones default per provider (data/providers.csv).
type HiddenSpec struct {
	StartupMinutes         *float64 `json:"startup_minutes,omitempty"`
	StorageGB              *float64 `json:"storage_gb,omitempty"`
	StorageDays            *float64 `json:"storage_days,omitempty"`
	EgressGB               *float64 `json:"egress_gb,omitempty"`
	CheckpointMinutes      *float64 `json:"checkpoint_minutes,omitempty"`
	RestartMinutes         *float64 `json:"restart_minutes,omitempty"`
	StoragePricePerGBMonth *float64 `json:"storage_price_gb_month,omitempty"`
	EgressPricePerGB       *float64 `json:"egress_price_gb,omitempty"`
	ReclaimsPerHour        *float64 `json:"reclaims_per_hour,omitempty"`
}

// JobSpec is a job as a user describes it (the body of POST /v1/plan).
// Starting from a named workload, the fields the spec sets override it.
type JobSpec struct {
	Workload                string     `json:"workload,omitempty"`
	Model                   *ModelSpec `json:"model,omitempty"`
	Method                  string     `json:"method,omitempty"`
	Precision               string     `json:"precision,omitempty"`
	OptimizerState          string     `json:"optimizer_state,omitempty"`
	SeqLen                  int        `json:"seq_len,omitempty"`
	MicroBatch              int        `json:"micro_batch,omitempty"`
	ActivationCheckpointing *bool      `json:"activation_checkpointing,omitempty"`
	SelectiveCheckpointing  bool       `json:"selective_checkpointing,omitempty"`
	Tokens                  float64    `json:"tokens,omitempty"`
	Context                 int        `json:"context,omitempty"`
	OutputTokens            int        `json:"output_tokens,omitempty"`
	Concurrency             int        `json:"concurrency,omitempty"`
	PeakTokensPerSecond     float64    `json:"peak_tokens_per_second,omitempty"`
	HoursPerMonth           float64    `json:"hours_per_month,omitempty"`
	// BaseTokensPerSecond and PeakHoursPerDay describe a serving load that
	// is at its peak only part of the day: the plan then mixes committed
	// GPUs for the base with on-demand GPUs for the peak (fleets).
	BaseTokensPerSecond float64 `json:"base_tokens_per_second,omitempty"`
	PeakHoursPerDay     float64 `json:"peak_hours_per_day,omitempty"`
	// Months is the period a serving plan bills (default 1): its
	// total_cost is that many months of the fleet.
	Months float64 `json:"months,omitempty"`
	// SLO is a serving job's service level; CachedPromptShare the share
	// of each prompt already in the engine's prefix cache (0..0.99).
	SLO               *SLO    `json:"slo,omitempty"`
	CachedPromptShare float64 `json:"cached_prompt_share,omitempty"`
	// AttentionDPBalance: a serving run turns on the engine's
	// attention data-parallel balancer (TensorRT-LLM's
	// attention_dp_config enable_balance); default the engine's default.
	AttentionDPBalance bool `json:"attention_dp_balance,omitempty"`
	// ExpertAllToAll: a serving run moves expert-parallel tokens by
	// all-to-all (DeepEP, pplx, TensorRT-LLM's MNNVL kernels), not the
	// engine's default gather (engines.csv ep_exchange).
	ExpertAllToAll bool `json:"expert_all_to_all,omitempty"`
	// CheckpointWriteSeconds is how long one checkpoint takes to write
	// (default: the training state at DefaultCheckpointWriteGBs); spot
	// options checkpoint at the interval that minimizes expected cost.
	CheckpointWriteSeconds float64  `json:"checkpoint_write_seconds,omitempty"`
	RequireBF16            bool     `json:"require_bf16,omitempty"`
	Engine                 string   `json:"engine,omitempty"`
	RequestRate            float64  `json:"request_rate,omitempty"`
	Modes                  []string `json:"modes,omitempty"`
	Utilization            float64  `json:"utilization,omitempty"`
	MaxGPUs                int      `json:"max_gpus,omitempty"`
	Currency               string   `json:"currency,omitempty"`
	Card                   string   `json:"card,omitempty"`
	IncludeUnfit           bool     `json:"include_unfit,omitempty"`
	// Available "any" includes offers the source says are out of stock.
	Available string      `json:"available,omitempty"`
	Limit     int         `json:"limit,omitempty"`
	Hidden    *HiddenSpec `json:"hidden,omitempty"`
	// Deadline is when the job must be done (hours from now, or a date):
	// only options that finish in time are planned, and a per-GPU rental
	// takes as many GPUs as finishing in time needs.
	Deadline *Deadline `json:"deadline,omitempty"`
	// Owned is hardware to price beside the rentals, as config's owned:
	// the CLI sends its config's entries when a daemon answers, so that
	// they are not lost. An entry named like one of the daemon's replaces
	// it.
	Owned []Owned `json:"owned,omitempty"`
}

// MaxSpecOwned bounds a spec's owned entries.
const MaxSpecOwned = 64

// Hidden are a job's costs besides GPU time, resolved.
type Hidden struct {
	StartupMinutes    float64 `json:"startup_minutes"`
	StorageGB         float64 `json:"storage_gb"`
	StorageDays       float64 `json:"storage_days"`
	EgressGB          float64 `json:"egress_gb"`
	CheckpointMinutes float64 `json:"checkpoint_minutes"`
	RestartMinutes    float64 `json:"restart_minutes"`
	// Prices set by the spec (job currency); nil: the provider default.
	StoragePricePerGBMonth *float64 `json:"storage_price_gb_month,omitempty"`
	EgressPricePerGB       *float64 `json:"egress_price_gb,omitempty"`
	ReclaimsPerHour        *float64 `json:"reclaims_per_hour,omitempty"`
}

// Job is a validated job spec.
type Job struct {
	// Workload is the job's shape; FromWorkload the named workload it
	// started from with its shape unchanged ("" otherwise), whose measured
	// profiles then apply.
	Workload            Workload `json:"-"`
	FromWorkload        string   `json:"workload,omitempty"`
	Model               Model    `json:"model"`
	Method              Method   `json:"method"`
	Precision           string   `json:"precision"`
	OptimizerState      string   `json:"optimizer_state,omitempty"`
	SeqLen              int      `json:"seq_len,omitempty"`
	MicroBatch          int      `json:"micro_batch,omitempty"`
	Checkpointing       bool     `json:"activation_checkpointing"`
	Selective           bool     `json:"selective_checkpointing,omitempty"`
	Tokens              float64  `json:"tokens,omitempty"`
	Context             int      `json:"context,omitempty"`
	OutputTokens        int      `json:"output_tokens,omitempty"`
	Concurrency         int      `json:"concurrency,omitempty"`
	PeakTokensPerSecond float64  `json:"peak_tokens_per_second,omitempty"`
	HoursPerMonth       float64  `json:"hours_per_month,omitempty"`
	BaseTokensPerSecond float64  `json:"base_tokens_per_second,omitempty"`
	PeakHoursPerDay     float64  `json:"peak_hours_per_day,omitempty"`
	// Months is the period a serving plan bills (serving only; 1 unless
	// the spec says).
	Months float64 `json:"months,omitempty"`
	// SLO and CachedPromptShare are the serving job's (Workload has them).
	SLO                *SLO    `json:"slo,omitempty"`
	CachedPromptShare  float64 `json:"cached_prompt_share,omitempty"`
	AttentionDPBalance bool    `json:"attention_dp_balance,omitempty"`
	ExpertAllToAll     bool    `json:"expert_all_to_all,omitempty"`
	// CheckpointWriteSeconds is resolved: the spec's, else the training
	// state (CheckpointBytes) at DefaultCheckpointWriteGBs.
	CheckpointWriteSeconds float64           `json:"checkpoint_write_seconds,omitempty"`
	RequireBF16            bool              `json:"require_bf16,omitempty"`
	Engine                 string            `json:"engine,omitempty"`
	RequestRate            float64           `json:"request_rate,omitempty"`
	Modes                  []pricewatch.Mode `json:"modes"`
	// Bids is whether spot offers that are marketplace bids (Vast's
	// minimum bid, kept only until outbid) are planned: a serving job
	// takes them only when its modes name "bid"; a training job, which
	// checkpoints through reclaims, with "spot" too.
	Bids bool `json:"bids"`
	// Utilization is the share of a committed rental's hours left after
	// the job that the team expects to use for other work (0: none); its
	// value is shown as a credit beside the total, never taken off it.
	Utilization  float64 `json:"utilization,omitempty"`
	MaxGPUs      int     `json:"max_gpus"`
	Currency     string  `json:"currency"`
	Card         string  `json:"card,omitempty"`
	IncludeUnfit bool    `json:"include_unfit"`
	// AnyAvailability includes offers the source says are out of stock.
	AnyAvailability bool   `json:"any_availability,omitempty"`
	Limit           int    `json:"limit"`
	Hidden          Hidden `json:"hidden"`
	// Deadline is the spec's; DeadlineHours the wall-clock hours the plan
	// allows (from the snapshot's time when the deadline is a date; 0:
	// none).
	Deadline      *Deadline `json:"deadline,omitempty"`
	DeadlineHours float64   `json:"deadline_hours,omitempty"`
}

// Defaults of a job spec.
const (
	DefaultMaxGPUs           = 8
	MaxMaxGPUs               = 64
	DefaultPlanLimit         = 50
	MaxPlanLimit             = 1000
	DefaultStartupMinutes    = 15 // drivers, environment, weights before work starts: 10–30 min
	DefaultCheckpointMinutes = 30
	DefaultRestartMinutes    = 10
	DefaultHoursPerMonth     = pricewatch.HoursPerMonth
	// DefaultCheckpointWriteGBs is the rate a checkpoint is written at when
	// the spec does not say how long one takes: 1 GB/s, an ASSUMPTION for a
	// network volume (local NVMe is faster, object storage slower).
	DefaultCheckpointWriteGBs = 1.0
	// MaxCheckpointWriteSeconds bounds checkpoint_write_seconds (a day).
	MaxCheckpointWriteSeconds = 86400
	// DefaultPeakHoursPerDay is a serving load's peak when a spec gives a
	// base but no peak hours: a working day.
	DefaultPeakHoursPerDay = 8
)

// Bounds of a job spec's numbers: a value outside them (or NaN, or an
// infinity) is refused with an error naming the field, so that no plan can
// overflow (GPU counts, billed periods) or lose its numbers to ±Inf.
const (
	MaxTokens              = 1e16    // tokens to process
	MaxPeakTokensPerSecond = 1e8     // serving peak, output tokens per second
	MinPeakTokensPerSecond = 1e-3    // a peak (or base) when given
	MaxHoursPerMonth       = 744     // 31 days
	MaxMonths              = 120     // a serving plan's period: ten years
	MinRequestRate         = 1e-3    // requests per second, when given
	MaxRequestRate         = 1e6     // requests per second
	MaxSeqLen              = 1 << 20 // training sequence length
	MaxMicroBatch          = 4096
	MaxContext             = 1 << 21 // serving context (input + output tokens)
	MaxConcurrency         = 1 << 16 // concurrent serving sequences
	MinParamsB             = 1e-3    // model size in billions of parameters
	MaxParamsB             = 2000
	MaxHiddenPrice         = 1e4 // storage and egress prices, reclaims per hour
	// A measured profile's tokens per second per GPU lies within
	// MinProfileTokensPerSecond and (below) MaxProfileTokensPerSecond: a
	// plan divides by it, so a vanishing one would overflow GPU counts.
	MinProfileTokensPerSecond = 1e-3
	MaxProfileTokensPerSecond = 1e7
)

// within reports whether v is a number within lo..hi; NaN is not.
func within(v, lo, hi float64) bool { return v >= lo && v <= hi }

func invalid(field, format string, args ...any) error {
	return pricewatch.Errorf(pricewatch.EInvalid, "%s: %s", field, fmt.Sprintf(format, args...))
}

// precisions are the job precisions a spec may name ("4bit" is nf4).
var precisions = []string{PrecisionBF16, PrecisionFP16, PrecisionFP8, PrecisionFP4, PrecisionMXFP4, PrecisionInt8, PrecisionNF4, PrecisionInt4, PrecisionAWQ, PrecisionGPTQ, PrecisionQ4KM, PrecisionQ40}

// weightBytesFor is the bytes per base weight of a method at a precision:
// training keeps 16-bit weights for bf16, fp16 and fp8 compute (fp8 GEMMs
// cast on the fly, TransformerEngine-style); serving stores fp8 and fp4
// weights; int8 and the 4-bit formats are weight-only quantizations.
func weightBytesFor(m Method, precision string) float64 {
	if m != MethodServe && (precision == PrecisionFP8 || precision == PrecisionFP4 || precision == PrecisionMXFP4) {
		return 2 // training keeps 16-bit master weights and casts per GEMM
	}
	if b, ok := BytesPerWeight(precision); ok {
		return b
	}
	return 2
}

// Resolve validates a spec into a job. base names the workloads a spec may
// start from; currencyKnown validates currency codes; an error names the
// offending field.
func (s JobSpec) Resolve(base func(string) (Workload, bool), currencyKnown func(string) bool, defaultCurrency string) (Job, error) {
	var w Workload
	job := Job{}
	if s.Workload != "" {
		bw, ok := base(s.Workload)
		if !ok {
			return job, invalid("workload", "unknown workload %q", s.Workload)
		}
		w = bw
	} else {
		w = Workload{Name: "custom", Method: MethodFull, WeightBytes: 2, Precision: PrecisionBF16, SeqLen: 2048, MicroBatch: 1, Checkpointing: true}
	}
	orig := w
	// Model.
	if s.Model != nil {
		m, err := s.Model.resolve()
		if err != nil {
			return job, err
		}
		w.Model = m
	} else if s.Workload == "" {
		return job, invalid("model", "required (a preset such as llama3-8b, or params_b, layers, hidden, heads)")
	}
	if s.Method != "" {
		switch m := Method(strings.ToLower(s.Method)); m {
		case MethodFull, MethodLoRA, MethodQLoRA, MethodServe:
			if m != w.Method && m == MethodQLoRA {
				w.Precision = PrecisionNF4
			} else if m != w.Method && w.Method == MethodQLoRA {
				w.Precision = PrecisionBF16
			}
			w.Method = m
		default:
			return job, invalid("method", "unknown method %q (full, lora, qlora, serve)", s.Method)
		}
	}
	if s.Precision != "" {
		p := strings.ToLower(s.Precision)
		if p == "4bit" {
			p = PrecisionNF4
		}
		if !slices.Contains(precisions, p) {
			return job, invalid("precision", "unknown precision %q (%s)", s.Precision, strings.Join(precisions, ", "))
		}
		w.Precision = p
	}
	if s.Precision == "" && s.Model != nil && w.Method == MethodServe && w.Model.Quantization != "" {
		// A checkpoint published quantized (gpt-oss's MXFP4, DeepSeek's
		// FP8) is served as published unless the spec says otherwise.
		w.Precision = w.Model.Quantization
	}
	if w.Precision == "" {
		w.Precision = PrecisionBF16
	}
	w.WeightBytes = weightBytesFor(w.Method, w.Precision)
	if w.Method == MethodQLoRA && w.Precision != PrecisionNF4 && w.Precision != PrecisionInt4 && w.Precision != PrecisionAWQ && w.Precision != PrecisionGPTQ {
		return job, invalid("precision", "qlora trains on a 4-bit base (nf4, int4, awq or gptq)")
	}
	if w.Method.Training() && (w.Precision == PrecisionFP4 || w.Precision == PrecisionQ4KM) {
		return job, invalid("precision", "%s is for serving; train in bf16, fp16 or fp8", w.Precision)
	}
	if s.RequireBF16 {
		w.RequireBF16 = true
	}
	if s.Engine != "" {
		if w.Method != MethodServe {
			return job, invalid("engine", "only for method serve")
		}
		if !slices.Contains(Engines(), strings.ToLower(s.Engine)) {
			return job, invalid("engine", "unknown engine %q (%s)", s.Engine, strings.Join(Engines(), ", "))
		}
		w.Engine = strings.ToLower(s.Engine)
	}
	if s.SLO != nil {
		if w.Method != MethodServe {
			return job, invalid("slo", "only for method serve")
		}
		if err := s.SLO.validate(); err != nil {
			return job, err
		}
		w.SLO = *s.SLO
	}
	if s.CachedPromptShare != 0 {
		if w.Method != MethodServe {
			return job, invalid("cached_prompt_share", "only for method serve")
		}
		if !within(s.CachedPromptShare, 0, MaxCachedPromptShare) {
			return job, invalid("cached_prompt_share", "must be within 0..%g, got %g", MaxCachedPromptShare, s.CachedPromptShare)
		}
		w.CachedPromptShare = s.CachedPromptShare
	}
	if s.AttentionDPBalance {
		if w.Method != MethodServe {
			return job, invalid("attention_dp_balance", "only for method serve")
		}
		w.BalancedAttentionDP = true
	}
	if s.ExpertAllToAll {
		if w.Method != MethodServe {
			return job, invalid("expert_all_to_all", "only for method serve")
		}
		w.ExpertAllToAll = true
	}
	if s.RequestRate != 0 {
		if w.Method != MethodServe {
			return job, invalid("request_rate", "only for method serve")
		}
		if !within(s.RequestRate, MinRequestRate, MaxRequestRate) {
			return job, invalid("request_rate", "must be within %g..%g requests per second, got %g", float64(MinRequestRate), float64(MaxRequestRate), s.RequestRate)
		}
		w.RequestRate = s.RequestRate
	}
	switch strings.ToLower(s.OptimizerState) {
	case "":
	case "bf16":
		w.OptimizerBytes = OptimizerBytesBF16
	case "fp32":
		w.OptimizerBytes = OptimizerBytesFP32
	default:
		return job, invalid("optimizer_state", "unknown %q (bf16 or fp32)", s.OptimizerState)
	}
	if s.SeqLen < 0 || s.SeqLen > MaxSeqLen {
		return job, invalid("seq_len", "must be within 1..%d", MaxSeqLen)
	}
	if s.SeqLen > 0 {
		w.SeqLen = s.SeqLen
	}
	if s.MicroBatch < 0 || s.MicroBatch > MaxMicroBatch {
		return job, invalid("micro_batch", "must be within 1..%d", MaxMicroBatch)
	}
	if s.MicroBatch > 0 {
		w.MicroBatch = s.MicroBatch
	}
	if s.ActivationCheckpointing != nil {
		w.Checkpointing = *s.ActivationCheckpointing
	}
	if s.SelectiveCheckpointing {
		if s.ActivationCheckpointing != nil && *s.ActivationCheckpointing {
			return job, invalid("selective_checkpointing", "give selective or full activation checkpointing, not both")
		}
		w.Checkpointing, w.SelectiveCheckpointing = false, true
	}
	if w.Method.Training() && (w.SeqLen <= 0 || w.MicroBatch <= 0) {
		w.SeqLen, w.MicroBatch = max(w.SeqLen, 2048), max(w.MicroBatch, 1)
	}
	// Serving shape.
	if s.Context != 0 && (s.Context < 2 || s.Context > MaxContext) {
		return job, invalid("context", "must be within 2..%d tokens (0: the default), got %d", MaxContext, s.Context)
	}
	if s.OutputTokens < 0 || s.OutputTokens >= MaxContext {
		return job, invalid("output_tokens", "must be within 1..%d tokens (0: the default), got %d", MaxContext-1, s.OutputTokens)
	}
	if s.Concurrency < 0 || s.Concurrency > MaxConcurrency {
		return job, invalid("concurrency", "must be within 1..%d sequences (0: the default), got %d", MaxConcurrency, s.Concurrency)
	}
	if w.Method == MethodServe {
		if s.Context > 0 {
			out := s.OutputTokens
			if out == 0 {
				out = max(1, s.Context/5)
			}
			if out >= s.Context {
				return job, invalid("output_tokens", "must be below context (%d)", s.Context)
			}
			w.InputTokens, w.OutputTokens = s.Context-out, out
		} else if s.OutputTokens > 0 {
			w.OutputTokens = s.OutputTokens
		}
		if w.InputTokens+w.OutputTokens == 0 {
			w.InputTokens, w.OutputTokens = 1024, 256
		}
		if s.Concurrency > 0 {
			w.Concurrency = s.Concurrency
			w.MaxSequences = s.Concurrency
		}
	}
	// Tokens.
	if s.Tokens != 0 && !within(s.Tokens, 1, MaxTokens) {
		return job, invalid("tokens", "must be within 1..%g, got %g", float64(MaxTokens), s.Tokens)
	}
	if w.Method.Training() && s.Tokens == 0 {
		return job, invalid("tokens", "required for training: the tokens to process")
	}
	if s.PeakTokensPerSecond != 0 && !within(s.PeakTokensPerSecond, MinPeakTokensPerSecond, MaxPeakTokensPerSecond) {
		return job, invalid("peak_tokens_per_second", "must be 0 or within %g..%g output tokens per second, got %g", MinPeakTokensPerSecond, float64(MaxPeakTokensPerSecond), s.PeakTokensPerSecond)
	}
	if !within(s.HoursPerMonth, 0, MaxHoursPerMonth) {
		return job, invalid("hours_per_month", "must be within 0..%d, got %g", MaxHoursPerMonth, s.HoursPerMonth)
	}
	if s.PeakTokensPerSecond > 0 && w.Method != MethodServe {
		return job, invalid("peak_tokens_per_second", "only for method serve")
	}
	if s.BaseTokensPerSecond != 0 && !within(s.BaseTokensPerSecond, MinPeakTokensPerSecond, MaxPeakTokensPerSecond) {
		return job, invalid("base_tokens_per_second", "must be 0 or within %g..%g output tokens per second, got %g", MinPeakTokensPerSecond, float64(MaxPeakTokensPerSecond), s.BaseTokensPerSecond)
	}
	if s.BaseTokensPerSecond > 0 && (s.PeakTokensPerSecond == 0 || s.BaseTokensPerSecond > s.PeakTokensPerSecond) {
		return job, invalid("base_tokens_per_second", "needs peak_tokens_per_second and must not exceed it")
	}
	if !within(s.PeakHoursPerDay, 0, 24) {
		return job, invalid("peak_hours_per_day", "must be within 0..24, got %g", s.PeakHoursPerDay)
	}
	if s.PeakHoursPerDay > 0 && s.BaseTokensPerSecond == 0 {
		return job, invalid("peak_hours_per_day", "goes with base_tokens_per_second")
	}
	if !within(s.Months, 0, MaxMonths) {
		return job, invalid("months", "must be within 0..%d, got %g", MaxMonths, s.Months)
	}
	if s.Months > 0 && w.Method != MethodServe {
		return job, invalid("months", "only for method serve (a training job's period is its tokens)")
	}
	if !within(s.CheckpointWriteSeconds, 0, MaxCheckpointWriteSeconds) {
		return job, invalid("checkpoint_write_seconds", "must be within 0..%d, got %g", MaxCheckpointWriteSeconds, s.CheckpointWriteSeconds)
	}
	job = Job{
		Workload: w, Model: w.Model, Method: w.Method, Precision: w.Precision,
		RequireBF16: w.RequireBF16, Engine: w.Engine, RequestRate: w.RequestRate,
		SeqLen: w.SeqLen, MicroBatch: w.MicroBatch, Checkpointing: w.Checkpointing, Selective: w.SelectiveCheckpointing, Tokens: s.Tokens,
		PeakTokensPerSecond: s.PeakTokensPerSecond, HoursPerMonth: s.HoursPerMonth,
		BaseTokensPerSecond: s.BaseTokensPerSecond, PeakHoursPerDay: s.PeakHoursPerDay,
		Card: s.Card, IncludeUnfit: s.IncludeUnfit,
	}
	if w.Method.Training() {
		job.CheckpointWriteSeconds = s.CheckpointWriteSeconds
		if job.CheckpointWriteSeconds == 0 {
			job.CheckpointWriteSeconds = CheckpointBytes(w) / (DefaultCheckpointWriteGBs * BytesPerGB)
		}
	}
	if w.Method == MethodFull {
		job.OptimizerState = "bf16"
		if w.OptimizerBytes == OptimizerBytesFP32 {
			job.OptimizerState = "fp32"
		}
	}
	if w.Method == MethodServe {
		job.Context, job.OutputTokens, job.Concurrency = w.ContextTokens(), w.OutputTokens, max(w.Concurrency, 1)
		job.SeqLen, job.MicroBatch, job.Checkpointing = 0, 0, false
		if job.HoursPerMonth == 0 {
			job.HoursPerMonth = DefaultHoursPerMonth
		}
		job.Months = s.Months
		if job.Months == 0 {
			job.Months = 1
		}
		if w.SLO.Set() {
			slo := w.SLO
			job.SLO = &slo
		}
		job.CachedPromptShare = w.CachedPromptShare
		job.AttentionDPBalance = w.BalancedAttentionDP
		job.ExpertAllToAll = w.ExpertAllToAll
	}
	if w == orig && s.Workload != "" {
		job.FromWorkload = s.Workload
	} else if s.Workload != "" {
		w.Name = s.Workload + "+custom"
		job.Workload.Name = w.Name
	}
	// Modes, utilization, GPUs, currency.
	modes, bids, err := parseJobModes(s.Modes)
	if err != nil {
		return job, invalid("modes", "%v", err)
	}
	job.Modes = modes
	job.Bids = bids || w.Method != MethodServe && slices.Contains(modes, pricewatch.ModeSpot)
	if job.BaseTokensPerSecond > 0 {
		// A fleet mixes committed capacity for the base with on-demand for
		// the peak: both must be priced.
		if !slices.Contains(job.Modes, pricewatch.ModeOnDemand) {
			job.Modes = append(job.Modes, pricewatch.ModeOnDemand)
		}
		if !slices.ContainsFunc(job.Modes, pricewatch.Mode.Committed) {
			job.Modes = append(job.Modes, pricewatch.ModeMonthly)
		}
		if job.PeakHoursPerDay == 0 {
			job.PeakHoursPerDay = DefaultPeakHoursPerDay
		}
	}
	if !within(s.Utilization, 0, 1) {
		return job, invalid("utilization", "must be within 0..1, got %v", s.Utilization)
	}
	job.Utilization = s.Utilization
	switch {
	case s.MaxGPUs == 0:
		job.MaxGPUs = DefaultMaxGPUs
	case s.MaxGPUs > 0 && s.MaxGPUs <= MaxMaxGPUs:
		job.MaxGPUs = s.MaxGPUs
	default:
		return job, invalid("max_gpus", "must be within 1..%d", MaxMaxGPUs)
	}
	job.Currency = strings.ToUpper(s.Currency)
	if job.Currency == "" {
		job.Currency = defaultCurrency
	}
	if !currencyKnown(job.Currency) {
		return job, invalid("currency", "unknown currency %q (USD, CNY or EUR)", s.Currency)
	}
	switch {
	case s.Limit == 0:
		job.Limit = DefaultPlanLimit
	case s.Limit > 0 && s.Limit <= MaxPlanLimit:
		job.Limit = s.Limit
	default:
		return job, invalid("limit", "must be within 1..%d", MaxPlanLimit)
	}
	switch strings.ToLower(s.Available) {
	case "", "yes":
	case "any":
		job.AnyAvailability = true
	default:
		return job, invalid("available", "unknown %q (yes: offers not known to be out of stock, the default; any)", s.Available)
	}
	h, err := s.Hidden.resolve()
	if err != nil {
		return job, err
	}
	job.Hidden = h
	if s.Deadline != nil {
		if job.Tokens <= 0 {
			return job, invalid("deadline", "needs tokens: a deadline bounds the time to process them")
		}
		if s.Deadline.At.IsZero() {
			if _, err := s.Deadline.hoursFrom(time.Time{}); err != nil {
				return job, err
			}
		}
		job.Deadline = s.Deadline
	}
	return job, nil
}

// ModeBid names marketplace bids among a job's modes: spot offers that are
// bids, planned only when asked for (serving) or with spot (training).
const ModeBid = "bid"

// parseJobModes reads a job's modes: the rental modes, and whether "bid"
// was named (it plans the spot offers that are bids; alone it means spot
// bids only).
func parseJobModes(names []string) ([]pricewatch.Mode, bool, error) {
	var rest []string
	bids := false
	for _, n := range names {
		for _, part := range strings.Split(n, ",") {
			if strings.EqualFold(strings.TrimSpace(part), ModeBid) {
				bids = true
				continue
			}
			rest = append(rest, part)
		}
	}
	if bids && len(rest) == 0 {
		return []pricewatch.Mode{pricewatch.ModeSpot}, true, nil
	}
	modes, err := pricewatch.ParseModes(strings.Join(rest, ","))
	if err != nil {
		return nil, false, fmt.Errorf("%w (or %s: marketplace bids)", err, ModeBid)
	}
	if bids && !slices.Contains(modes, pricewatch.ModeSpot) {
		modes = append(modes, pricewatch.ModeSpot)
	}
	return modes, bids, nil
}

func (m *ModelSpec) resolve() (Model, error) {
	given := 0
	for _, b := range []bool{m.Preset != "", len(m.Config) > 0, m.shapeGiven()} {
		if b {
			given++
		}
	}
	if given > 1 {
		return Model{}, invalid("model", "give a preset, a config or a shape, not two of them")
	}
	if m.Preset != "" {
		p, ok := presets()[strings.ToLower(m.Preset)]
		if !ok {
			return Model{}, invalid("model.preset", "unknown preset %q (%s)", m.Preset, strings.Join(PresetNames(), ", "))
		}
		return p, nil
	}
	if len(m.Config) > 0 {
		md, err := ModelFromConfig(m.Config)
		if err != nil {
			return Model{}, err
		}
		md.Name = "custom"
		return md, nil
	}
	for _, f := range []struct {
		name string
		ok   bool
	}{
		{"model.params_b", within(m.ParamsB, MinParamsB, MaxParamsB)},
		{"model.layers", m.Layers > 0 && m.Layers <= 1000},
		{"model.hidden", m.Hidden > 0 && m.Hidden <= 1<<17},
		{"model.heads", m.Heads > 0 && m.Heads <= 1024},
		{"model.kv_heads", m.KVHeads >= 0 && m.KVHeads <= m.Heads},
		{"model.head_dim", m.HeadDim >= 0 && m.HeadDim <= 1024},
		{"model.experts", m.Experts >= 0 && m.Experts <= 4096},
		{"model.experts_per_token", m.ExpertsPerToken >= 0 && m.ExpertsPerToken <= max(m.Experts, 0)},
		{"model.shared_experts", m.SharedExperts >= 0 && m.SharedExperts <= 64},
		{"model.expert_intermediate_size", m.ExpertIntermediate >= 0 && m.ExpertIntermediate <= 1<<17},
		{"model.dense_layers", m.DenseLayers >= 0 && m.DenseLayers < m.Layers},
		{"model.kv_lora_rank", m.KVLoraRank >= 0 && m.KVLoraRank <= 1<<14},
		{"model.qk_rope_head_dim", m.QKRopeHeadDim >= 0 && m.QKRopeHeadDim <= 1024},
		{"model.sliding_window", m.SlidingWindow >= 0 && m.SlidingWindow <= MaxContext},
		{"model.sliding_layers", m.SlidingLayers >= 0 && m.SlidingLayers <= m.Layers && (m.SlidingLayers == 0 || m.SlidingWindow > 0)},
	} {
		if !f.ok {
			return Model{}, invalid(f.name, "missing or out of range")
		}
	}
	md := Model{Name: "custom", ParamsB: m.ParamsB, Layers: m.Layers, Hidden: m.Hidden, Heads: m.Heads, KVHeads: m.KVHeads, HeadDim: m.HeadDim,
		Experts: m.Experts, ExpertsPerToken: m.ExpertsPerToken, SharedExperts: m.SharedExperts, ExpertIntermediate: m.ExpertIntermediate,
		DenseLayers: m.DenseLayers, KVLoraRank: m.KVLoraRank, QKRopeHeadDim: m.QKRopeHeadDim, SlidingWindow: m.SlidingWindow,
		SlidingLayers: m.SlidingLayers, ExpertsOnly: m.QuantizedExpertsOnly}
	if m.SlidingWindow > 0 && m.SlidingLayers == 0 {
		md.SlidingLayers = m.Layers // a window without a count: every layer
	}
	switch {
	case m.Experts > 0 || m.ExpertsPerToken > 0 || m.ActiveParamsB > 0:
		if m.Experts < 2 || m.ExpertsPerToken < 1 || m.ExpertsPerToken >= m.Experts {
			return Model{}, invalid("model.experts_per_token", "a mixture-of-experts needs experts (≥ 2) and experts_per_token (fewer than experts)")
		}
		if !within(m.ActiveParamsB, MinParamsB, m.ParamsB) || m.ActiveParamsB >= m.ParamsB {
			return Model{}, invalid("model.active_params_b", "required for a mixture-of-experts: the parameters a token runs through, below params_b (%g)", m.ParamsB)
		}
		md.ActiveParamsB = m.ActiveParamsB
		md.MoELayers = m.Layers - m.DenseLayers
	case m.QuantizedExpertsOnly:
		return Model{}, invalid("model.quantized_experts_only", "only for a mixture-of-experts")
	}
	if m.Quantization != "" {
		q := strings.ToLower(m.Quantization)
		if _, ok := BytesPerWeight(q); !ok {
			return Model{}, invalid("model.quantization", "unknown weight format %q (%s)", m.Quantization, strings.Join(precisions, ", "))
		}
		md.Quantization = q
	}
	return md, nil
}

func (h *HiddenSpec) resolve() (Hidden, error) {
	out := Hidden{StartupMinutes: DefaultStartupMinutes, CheckpointMinutes: DefaultCheckpointMinutes, RestartMinutes: DefaultRestartMinutes}
	if h == nil {
		return out, nil
	}
	for _, f := range []struct {
		name string
		src  *float64
		dst  *float64
		max  float64
	}{
		{"hidden.startup_minutes", h.StartupMinutes, &out.StartupMinutes, 24 * 60},
		{"hidden.storage_gb", h.StorageGB, &out.StorageGB, 1e7},
		{"hidden.storage_days", h.StorageDays, &out.StorageDays, 3650},
		{"hidden.egress_gb", h.EgressGB, &out.EgressGB, 1e7},
		{"hidden.checkpoint_minutes", h.CheckpointMinutes, &out.CheckpointMinutes, 7 * 24 * 60},
		{"hidden.restart_minutes", h.RestartMinutes, &out.RestartMinutes, 24 * 60},
	} {
		if f.src == nil {
			continue
		}
		if !within(*f.src, 0, f.max) {
			return out, invalid(f.name, "must be within 0..%g", f.max)
		}
		*f.dst = *f.src
	}
	for _, f := range []struct {
		name string
		src  *float64
		dst  **float64
	}{
		{"hidden.storage_price_gb_month", h.StoragePricePerGBMonth, &out.StoragePricePerGBMonth},
		{"hidden.egress_price_gb", h.EgressPricePerGB, &out.EgressPricePerGB},
		{"hidden.reclaims_per_hour", h.ReclaimsPerHour, &out.ReclaimsPerHour},
	} {
		if f.src == nil {
			continue
		}
		if !within(*f.src, 0, MaxHiddenPrice) {
			return out, invalid(f.name, "must be within 0..%g", float64(MaxHiddenPrice))
		}
		v := *f.src
		*f.dst = &v
	}
	return out, nil
}

// NamedSpec is a workload defined in config: a name, a description and a
// job spec (its tokens, modes and costs are ignored: a workload is a shape).
type NamedSpec struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	JobSpec
}

// Workloads returns the built-in workloads followed by those defined by
// specs, each of which may start from one defined before it. Names must
// be unique.
func Workloads(specs []NamedSpec) ([]Workload, error) {
	ws := BuiltinWorkloads()
	byName := map[string]Workload{}
	for _, w := range ws {
		byName[w.Name] = w
	}
	for i, s := range specs {
		field := fmt.Sprintf("workloads[%d]", i)
		if s.Name == "" || strings.ContainsAny(s.Name, " /?&#") {
			return nil, invalid(field+".name", "required, without spaces or / ? & #")
		}
		if _, dup := byName[s.Name]; dup {
			return nil, invalid(field+".name", "duplicate workload %q", s.Name)
		}
		if s.Tokens == 0 {
			s.Tokens = 1 // a workload is a shape; Resolve wants tokens for training
		}
		job, err := s.JobSpec.Resolve(func(n string) (Workload, bool) { w, ok := byName[n]; return w, ok },
			func(string) bool { return true }, "USD")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		w := job.Workload
		w.Name, w.Description = s.Name, s.Description
		if w.Description == "" {
			w.Description = fmt.Sprintf("%s of %s (%gB, %s)", w.Method, w.Model.Name, w.Model.ParamsB, w.Precision)
		}
		byName[w.Name] = w
		ws = append(ws, w)
	}
	return ws, nil
}
