package rank

import (
	"fmt"
	"strings"

	"github.com/pricewatch/pricewatch"
)

// EstimateRequest asks for one throughput estimate (POST /v1/estimate,
// pricewatch estimate): a model on gpus GPUs of one card.
type EstimateRequest struct {
	Model     *ModelSpec `json:"model"`
	Method    string     `json:"method,omitempty"` // default serve
	Precision string     `json:"precision,omitempty"`
	Card      string     `json:"card"`
	GPUs      int        `json:"gpus,omitempty"` // default 1
	// Layout is a serving layout; nil: the engine's default for the GPUs
	// (DefaultLayout).
	Layout *Layout `json:"layout,omitempty"`
	Engine string  `json:"engine,omitempty"`
	// Serving: tokens in and out per request, and the requests in flight
	// (0: as many as the engine's default batch and the KV cache allow).
	InputTokens  int `json:"input_tokens,omitempty"`
	OutputTokens int `json:"output_tokens,omitempty"`
	Concurrency  int `json:"concurrency,omitempty"`
	// SLO lowers the concurrency until it holds; CachedPromptShare is the
	// share of each prompt in the prefix cache (prefill skips it).
	SLO               *SLO    `json:"slo,omitempty"`
	CachedPromptShare float64 `json:"cached_prompt_share,omitempty"`
	// AttentionDPBalance: the engine's attention data-parallel balancer is
	// on (TensorRT-LLM's attention_dp_config enable_balance).
	AttentionDPBalance bool `json:"attention_dp_balance,omitempty"`
	// ExpertAllToAll: expert-parallel tokens move by all-to-all (DeepEP,
	// pplx, TensorRT-LLM's MNNVL kernels), not the engine's default gather.
	ExpertAllToAll bool `json:"expert_all_to_all,omitempty"`
	// Training: sequence length and micro-batch per GPU.
	SeqLen     int `json:"seq_len,omitempty"`
	MicroBatch int `json:"micro_batch,omitempty"`
}

// EstimateMemory is the memory of an estimate per GPU, in GiB.
type EstimateMemory struct {
	WeightsGiB     float64 `json:"weights_gib"`
	KVCacheGiB     float64 `json:"kv_cache_gib"`
	GradientsGiB   float64 `json:"gradients_gib,omitempty"`
	OptimizerGiB   float64 `json:"optimizer_gib,omitempty"`
	ActivationsGiB float64 `json:"activations_gib,omitempty"`
	ReserveGiB     float64 `json:"runtime_reserve_gib,omitempty"`
	UsableGiB      float64 `json:"usable_gib"`
	CapacityGiB    float64 `json:"capacity_gib"`
}

// EstimateResult is one estimate: the same figure rankings and plans use.
type EstimateResult struct {
	TokensPerSecondPerGPU float64 `json:"tokens_per_second_per_gpu"`
	TokensPerSecond       float64 `json:"tokens_per_second"`
	// Basis is what the tokens count: output tokens (serving) or trained
	// tokens; and that the figure is estimated.
	Basis string `json:"basis"`
	GPUs  int    `json:"gpus"`
	// Layout is the serving layout; EngineDefault whether it is the one
	// the engine runs when told no other.
	Layout        *Layout `json:"layout,omitempty"`
	EngineDefault bool    `json:"layout_is_engine_default,omitempty"`
	PrecisionUsed string  `json:"precision_used,omitempty"`
	// WeightFormat is the format the weights are stored in (the job's
	// precision: bf16, fp8, mxfp4, …); WeightOnly that the card has no
	// tensor cores for it and the engine dequantizes in the matmul.
	WeightFormat string         `json:"weight_format,omitempty"`
	WeightOnly   bool           `json:"weight_only,omitempty"`
	Memory       EstimateMemory `json:"memory"`
	Fits         bool           `json:"fits"`
	// Reason says why the job does not run (memory in GiB, or the format
	// and the card).
	Reason string `json:"reason,omitempty"`
	Note   string `json:"note,omitempty"`
	// Sequences is the concurrent sequences the group runs (the engine's
	// batch, or fewer to meet the SLO); TTFTms and TPOTms the latencies
	// there (at the SLO's percentile, else the median).
	Sequences float64 `json:"sequences,omitempty"`
	TTFTms    float64 `json:"ttft_ms,omitempty"`
	TPOTms    float64 `json:"tpot_ms,omitempty"`
	Model     Model   `json:"model"`
	// Accuracy is how far off estimates of this kind were on published
	// runs (data/accuracy.csv), where the job runs.
	Accuracy *Accuracy `json:"accuracy,omitempty"`
}

// MaxEstimateGPUs bounds an estimate's GPUs.
const MaxEstimateGPUs = 1024

// EstimateFor validates a request and estimates it: an invalid request is
// an error naming the field; a job the GPUs cannot run is a result with
// Fits false and the reason.
func EstimateFor(req EstimateRequest, cardByID func(string) (pricewatch.Card, bool)) (EstimateResult, error) {
	var res EstimateResult
	if req.Model == nil {
		return res, invalid("model", "required: {\"preset\": …}, {\"config\": {…}} or the shape's fields")
	}
	if req.Card == "" {
		return res, invalid("card", "required: a card id such as H100-80GB-SXM")
	}
	c, ok := cardByID(req.Card)
	if !ok {
		return res, invalid("card", "unknown card %q", req.Card)
	}
	method := strings.ToLower(req.Method)
	if method == "" {
		method = string(MethodServe)
	}
	gpus := req.GPUs
	if gpus == 0 {
		gpus = 1
		if req.Layout != nil {
			gpus = req.Layout.GPUs()
		}
	}
	if gpus < 1 || gpus > MaxEstimateGPUs {
		return res, invalid("gpus", "must be within 1..%d", MaxEstimateGPUs)
	}
	spec := JobSpec{Model: req.Model, Method: method, Precision: req.Precision, Engine: req.Engine, Tokens: 1}
	serve := Method(method) == MethodServe
	if serve {
		if req.InputTokens < 0 || req.InputTokens >= MaxContext {
			return res, invalid("input_tokens", "must be within 0..%d", MaxContext-1)
		}
		if req.OutputTokens < 0 || req.OutputTokens >= MaxContext-req.InputTokens {
			return res, invalid("output_tokens", "must be within 1..%d", MaxContext-1-req.InputTokens)
		}
		in, out := req.InputTokens, req.OutputTokens
		if in == 0 && out == 0 {
			in, out = 1024, 256
		} else if out == 0 {
			return res, invalid("output_tokens", "required with input_tokens: the tokens generated per request")
		}
		spec.Context, spec.OutputTokens, spec.Concurrency = in+out, out, req.Concurrency
		spec.SLO, spec.CachedPromptShare, spec.AttentionDPBalance = req.SLO, req.CachedPromptShare, req.AttentionDPBalance
		spec.ExpertAllToAll = req.ExpertAllToAll
		if req.SeqLen != 0 || req.MicroBatch != 0 {
			return res, invalid("seq_len", "for training; serving takes input_tokens and output_tokens")
		}
	} else {
		if req.InputTokens != 0 || req.OutputTokens != 0 || req.Concurrency != 0 || req.SLO != nil || req.CachedPromptShare != 0 {
			return res, invalid("input_tokens", "for serving; training takes seq_len and micro_batch")
		}
		if req.AttentionDPBalance {
			return res, invalid("attention_dp_balance", "for serving; a training estimate has no attention data parallelism")
		}
		if req.ExpertAllToAll {
			return res, invalid("expert_all_to_all", "for serving; training's expert all-to-alls are priced per chosen expert")
		}
		if req.Layout != nil {
			return res, invalid("layout", "for serving; a training estimate is FSDP or data parallel over gpus")
		}
		spec.SeqLen, spec.MicroBatch = req.SeqLen, req.MicroBatch
	}
	job, err := spec.Resolve(func(string) (Workload, bool) { return Workload{}, false }, func(string) bool { return true }, "USD")
	if err != nil {
		return res, err
	}
	w := job.Workload
	w.Name = "estimate"
	res.Model, res.GPUs, res.WeightFormat = w.Model, gpus, w.Precision
	if !serve {
		return trainingEstimate(w, c, gpus, res), nil
	}
	res.Basis = "output tokens per second, estimated"
	lay := DefaultLayout(w.Model, c, gpus)
	res.EngineDefault = true
	if req.Layout != nil {
		l := req.Layout.norm()
		if l.GPUs() != gpus {
			return res, invalid("layout", "tp × pp × dp is %d GPUs, gpus is %d", l.GPUs(), gpus)
		}
		if why := l.validFor(w.Model, c); why != "" {
			return res, invalid("layout."+strings.SplitN(why, ":", 2)[0], "%s", why)
		}
		res.EngineDefault = l.norm() == lay.norm()
		lay = l
	}
	res.Layout = &lay
	prec, precOK := PrecisionOn(w, c)
	res.PrecisionUsed, res.WeightOnly = prec.Name, prec.WeightOnly
	p, _, r, ok := servingEstimate(w, c, gpus, lay, calibrated)
	switch {
	case !precOK:
		res.Reason = prec.Why
		_, _, m := servingKV(c, servingMemoryCase(w), lay)
		res.Memory = servingMemoryOut(m)
		return res, nil
	case !ok && r.sloWhy != "":
		res.Memory = servingMemoryOut(r.mem)
		res.Reason = r.sloWhy
		return res, nil
	case !ok:
		res.Memory = servingMemoryOut(r.mem)
		res.Reason = servingNoFit(w, c, servingFitCase(w, c), lay)
		if r.mem.CapacityGiB == 0 { // priced nothing: no estimate for the card's class
			res.Reason = fmt.Sprintf("no estimate for %s (estimator class %q)", c.ID, c.EstimatorClass)
		}
		return res, nil
	}
	res.Memory = servingMemoryOut(r.mem)
	res.Fits = true
	res.TokensPerSecondPerGPU = p.TokensPerSecond
	res.TokensPerSecond = p.TokensPerSecond * float64(gpus)
	res.Note = p.Note
	res.Sequences = r.seqs
	s, _, _ := servingCaseFor(w, c, calibrated)
	ttft, tpot := sloLatency(r, s, float64(gpus), w.SLO.Percentile)
	res.TTFTms, res.TPOTms = ttft*1000, tpot*1000
	if a, ok := AccuracyOf(w, c, gpus); ok {
		res.Accuracy = &a
	}
	return res, nil
}

func servingMemoryOut(m servingMemory) EstimateMemory {
	return EstimateMemory{WeightsGiB: m.WeightsGiB, KVCacheGiB: m.KVGiB, ReserveGiB: m.ReserveGiB, UsableGiB: m.UsableGiB, CapacityGiB: m.CapacityGiB}
}

// trainingEstimate is EstimateFor's training answer.
func trainingEstimate(w Workload, c pricewatch.Card, gpus int, res EstimateResult) EstimateResult {
	res.Basis = "trained tokens per second, estimated"
	m := MemoryPerGPU(w, gpus)
	res.Memory = EstimateMemory{WeightsGiB: m.WeightsGiB, GradientsGiB: m.GradientsGiB, OptimizerGiB: m.OptimizerGiB,
		ActivationsGiB: m.ActivationsGiB, UsableGiB: UsableGiB(c), CapacityGiB: c.CapacityGiB()}
	prec, ok := PrecisionOn(w, c)
	res.PrecisionUsed = prec.Name
	if !ok {
		res.Reason = prec.Why
		return res
	}
	if !Fits(w, c, gpus) {
		res.Reason = NoFitReason(w, c, gpus)
		return res
	}
	p, ok := EstimateOn(w, c, gpus)
	if !ok {
		res.Reason = fmt.Sprintf("no estimate for %s (estimator class %q)", c.ID, c.EstimatorClass)
		return res
	}
	res.Fits = true
	res.TokensPerSecondPerGPU = p.TokensPerSecond
	res.TokensPerSecond = p.TokensPerSecond * float64(gpus)
	res.Note = p.Note
	if a, ok := AccuracyOf(w, c, gpus); ok {
		res.Accuracy = &a
	}
	return res
}
