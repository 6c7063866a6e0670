package rank_test

import (
	"math"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
)

// The service-level sweep, worked by hand: llama3-8b (8.03B parameters,
// 32 layers, 8 KV heads of 128) in bf16 on one H100 SXM in vLLM, 1,536
// prompt tokens and 512 output tokens per request.
//
//	peak 989 TFLOPS, ETA_C (Hopper) 0.48, prefill at min(0.95, 1.2 × 0.48) = 0.576
//	read 0.70 × 3,350 GB/s = 2,345 GB/s (one sequence: 0.75 × 3,350)
//	prefill per output token: 2 × 8.03e9 × 1536/512 / (0.576 × 989e12) = 84.576 µs
//	  + attention: 4 × 32 heads × 128 × 32 layers × 768 tokens attended
//	    (half the prompt) = 4.027e8 FLOPs a prompt token, × 1536/512
//	    / (0.576 × 989e12)                                             =  2.120 µs
//	decode GEMMs per token:   2 × 8.03e9 / (0.48 × 989e12)             = 33.83 µs
//	KV of a sequence at 1536 + 512/2 tokens: 1792 × 32 × 8 × 128 × 2 × 2 B
//	  = 234.88 MB, read per token in 234.88e6 / 2.345e12               = 100.162 µs
//	weights per step: 16.06 GB / 2.345e12                              = 6.84861 ms
//	the layers' fixed time per step: 32 × 75 µs                        = 2.4 ms
//
// While a step of B sequences is bound by its weight reads (B up to
// 6.8486 ms / 33.83 µs = 202), every sequence waits a whole step per
// token, prefills of others included:
//
//	TPOT(B) = B × (86.697 + 100.162) µs + 6.84861 + 2.4 ms = B × 0.186859 ms + 9.24861 ms
//
// so the largest B under a target T is floor((T − 9.24861) / 0.186859):
//
//	T = 30 ms → 111 sequences, TPOT 29.990 ms, 111 / 0.029990 = 3,701.2 tokens/s
//	T = 20 ms →  57 sequences, TPOT 19.900 ms, 57 / 0.019900  = 2,864.4 tokens/s
//	T = 10 ms →   4 sequences, TPOT  9.996 ms, 4 / 0.009996   = 400.16 tokens/s
//	T =  9 ms →   1 sequence (two take 9.622 ms), read at 0.75 × 3,350 GB/s:
//	  TPOT = 86.697 µs + (16.06e9 + 234.88e6) / 2.5125e12 + 2.4 ms = 8.972 ms, 111.46 tokens/s
//	T =  5 ms → none: one sequence already takes 9.0 ms: unfit, with why.
//
// A 3,000 tokens/s peak with 20% headroom (3,600) then needs
// ceil(3600 / tokens/s) GPUs: 1, 2, 9 and 33.
var sloSweep = []struct {
	tpotMS    float64
	seqs      float64
	tps, gpus float64
}{
	{30, 111, 3701.2, 1},
	{20, 57, 2864.4, 2},
	{10, 4, 400.16, 9},
	{9, 1, 111.46, 33},
}

func TestSLO_TightenedTPOTLowersConcurrency(t *testing.T) {
	cat := normalize.DefaultCatalog()
	req := rank.EstimateRequest{Model: &rank.ModelSpec{Preset: "llama3-8b"}, Card: "H100-80GB-SXM", Engine: "vllm",
		InputTokens: 1536, OutputTokens: 512}
	for _, c := range sloSweep {
		req.SLO = &rank.SLO{TPOTms: c.tpotMS}
		res, err := rank.EstimateFor(req, cat.Card)
		if err != nil || !res.Fits {
			t.Fatalf("TPOT %g ms: %v %+v", c.tpotMS, err, res)
		}
		if res.Sequences != c.seqs || math.Abs(res.TokensPerSecond-c.tps)/c.tps > 0.001 || res.TPOTms > c.tpotMS {
			t.Errorf("TPOT %g ms: %.0f sequences at %.1f tokens/s (TPOT %.3f ms), want %.0f at %.1f",
				c.tpotMS, res.Sequences, res.TokensPerSecond, res.TPOTms, c.seqs, c.tps)
		}
	}
	// 5 ms: no concurrency meets it; the reason names the figure.
	req.SLO = &rank.SLO{TPOTms: 5}
	res, err := rank.EstimateFor(req, cat.Card)
	if err != nil || res.Fits || !strings.Contains(res.Reason, "time per output token 9.0 ms > 5 ms") {
		t.Errorf("TPOT 5 ms: %v fits %v %q", err, res.Fits, res.Reason)
	}
	// At p90 the steady step is taken 1.25 × slower (a default):
	// 25 ms at p90 is 20 ms at the median, so 57 sequences again.
	req.SLO = &rank.SLO{TPOTms: 25, Percentile: 90}
	if res, _ := rank.EstimateFor(req, cat.Card); res.Sequences != 57 {
		t.Errorf("TPOT 25 ms at p90: %.0f sequences, want 57", res.Sequences)
	}
	// 50 tokens/s per user is a 20 ms TPOT: 57 sequences.
	req.SLO = &rank.SLO{UserTokensPerSecond: 50}
	if res, _ := rank.EstimateFor(req, cat.Card); res.Sequences != 57 {
		t.Errorf("50 tokens/s per user: %.0f sequences, want 57", res.Sequences)
	}
}

func TestSLO_PlanRentsTheFleetThatMeetsIt(t *testing.T) {
	// The sweep's GPUs needed, in a plan on one H100 instance at 2 USD/h.
	snap := planSnap(t, off("p", "p", "h100", "H100-80GB-SXM", pricewatch.ModeOnDemand, 2, "USD"))
	prev := 0
	for _, c := range sloSweep {
		spec := rank.JobSpec{Model: &rank.ModelSpec{Preset: "llama3-8b"}, Method: "serve", Engine: "vllm", Context: 2048, OutputTokens: 512,
			PeakTokensPerSecond: 3000, SLO: &rank.SLO{TPOTms: c.tpotMS}, Modes: []string{"ondemand"}, Hidden: bare()}
		o := optionOf(t, planOf(t, snap, spec), "h100")
		if sv := o.Serving; sv == nil || float64(sv.GPUsNeeded) != c.gpus || sv.SequencesPerInstance != c.seqs || sv.TPOTms > c.tpotMS ||
			!near(o.TotalCost, c.gpus*2*730, 1e-6) || sv.GPUsNeeded < prev {
			t.Errorf("TPOT %g ms: %+v, total %v; want %g GPUs (%g × 2 × 730), %g sequences", c.tpotMS, o.Serving, o.TotalCost, c.gpus, c.gpus, c.seqs)
		} else {
			prev = sv.GPUsNeeded
		}
	}
	spec := rank.JobSpec{Model: &rank.ModelSpec{Preset: "llama3-8b"}, Method: "serve", Engine: "vllm", Context: 2048, OutputTokens: 512,
		PeakTokensPerSecond: 3000, SLO: &rank.SLO{TPOTms: 5}, Modes: []string{"ondemand"}, IncludeUnfit: true}
	o := optionOf(t, planOf(t, snap, spec), "h100")
	if o.Fits || !strings.Contains(o.Reason, "cannot meet the service level") {
		t.Errorf("TPOT 5 ms: fits %v, %q", o.Fits, o.Reason)
	}
}

func TestSLO_CachedPromptSkipsPrefill(t *testing.T) {
	// Half of each 1,536-token prompt cached: the prompt's GEMMs halve,
	// 84.576 → 42.288 µs per output token; its 768 fresh tokens attend to
	// the 768 cached and half of their own, 1,152 on average: 16,384 × 32
	// × 1152 × 768/512 / (0.576 × 989e12) = 1.590 µs. So TPOT(B) = B ×
	// (43.878 + 100.162) µs + 9.24861 ms and a 20 ms target holds
	// floor(10.75139 / 0.144040) = 74 sequences (57 without the cache).
	req := rank.EstimateRequest{Model: &rank.ModelSpec{Preset: "llama3-8b"}, Card: "H100-80GB-SXM", Engine: "vllm",
		InputTokens: 1536, OutputTokens: 512, SLO: &rank.SLO{TPOTms: 20}, CachedPromptShare: 0.5}
	res, err := rank.EstimateFor(req, normalize.DefaultCatalog().Card)
	if err != nil || res.Sequences != 74 {
		t.Errorf("cached half: %v %.0f sequences, want 74", err, res.Sequences)
	}
	for _, bad := range []rank.JobSpec{
		{Workload: "serve-7b", CachedPromptShare: 1},
		{Workload: "serve-7b", SLO: &rank.SLO{TPOTms: -1}},
		{Workload: "serve-7b", SLO: &rank.SLO{Percentile: 90}},
		{Workload: "lora-7b", Tokens: 1e6, SLO: &rank.SLO{TPOTms: 20}},
	} {
		if _, err := bad.Resolve(rank.WorkloadByName, normalize.KnownCurrency, "USD"); err == nil ||
			!strings.HasPrefix(err.Error(), "slo") && !strings.HasPrefix(err.Error(), "cached_prompt_share") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}
