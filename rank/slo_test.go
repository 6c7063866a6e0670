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
//	peak 989 TFLOPS, ETA_C (Hopper) 0.46, prefill at min(0.95, 1.2 × 0.46)
//	read 0.64 × 3,350 GB/s = 2,144 GB/s (one sequence: 0.75 × 3,350)
//	prefill per output token: 2 × 8.03e9 × 1536/512 / (0.552 × 989e12) = 88.25 µs
//	decode GEMMs per token:   2 × 8.03e9 / (0.46 × 989e12)             = 35.30 µs
//	KV of a sequence at 1536 + 512/2 tokens: 1792 × 32 × 8 × 128 × 2 × 2 B
//	  = 234.9 MB, read per token in 234.9e6 / 2.144e12                 = 109.55 µs
//	weights per step: 16.06 GB / 2.144e12                              = 7.4907 ms
//
// While a step of B sequences is bound by its weight reads (B up to
// 7.4907 ms / 35.30 µs = 212), every sequence waits a whole step per
// token, prefills of others included:
//
//	TPOT(B) = B × (88.25 + 109.55) µs + 7.4907 ms = B × 0.197806 ms + 7.4907 ms
//
// so the largest B under a target T is floor((T − 7.4907) / 0.197806):
//
//	T = 30 ms → 113 sequences, TPOT 29.843 ms, 113 / 0.029843 = 3,786 tokens/s
//	T = 20 ms →  63 sequences, TPOT 19.952 ms, 63 / 0.019952  = 3,158 tokens/s
//	T = 10 ms →  12 sequences, TPOT  9.864 ms, 12 / 0.009864  = 1,216.5 tokens/s
//	T =  7 ms →   1 sequence, read at 0.75 × 3,350 GB/s:
//	  TPOT = 88.25 µs + (16.06e9 + 234.9e6) / 2.5125e12 = 6.574 ms, 152.1 tokens/s
//	T =  5 ms → none: one sequence already takes 6.6 ms: unfit, with why.
//
// A 3,000 tokens/s peak with 20% headroom (3,600) then needs
// ceil(3600 / tokens/s) GPUs: 1, 2, 3 and 24.
var sloSweep = []struct {
	tpotMS    float64
	seqs      float64
	tps, gpus float64
}{
	{30, 113, 3786, 1},
	{20, 63, 3158, 2},
	{10, 12, 1216.5, 3},
	{7, 1, 152.1, 24},
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
	if err != nil || res.Fits || !strings.Contains(res.Reason, "time per output token 6.6 ms > 5 ms") {
		t.Errorf("TPOT 5 ms: %v fits %v %q", err, res.Fits, res.Reason)
	}
	// At p90 the steady step is taken 1.25 × slower (a default):
	// 25 ms at p90 is 20 ms at the median, so 63 sequences again.
	req.SLO = &rank.SLO{TPOTms: 25, Percentile: 90}
	if res, _ := rank.EstimateFor(req, cat.Card); res.Sequences != 63 {
		t.Errorf("TPOT 25 ms at p90: %.0f sequences, want 63", res.Sequences)
	}
	// 50 tokens/s per user is a 20 ms TPOT: 63 sequences.
	req.SLO = &rank.SLO{UserTokensPerSecond: 50}
	if res, _ := rank.EstimateFor(req, cat.Card); res.Sequences != 63 {
		t.Errorf("50 tokens/s per user: %.0f sequences, want 63", res.Sequences)
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
	// Half of each 1,536-token prompt cached: prefill per output token
	// halves, 88.25 → 44.13 µs, so TPOT(B) = B × (44.13 + 109.55) µs +
	// 7.4907 ms and a 20 ms target holds floor(12.509 / 0.153681) = 81
	// sequences (63 without the cache).
	req := rank.EstimateRequest{Model: &rank.ModelSpec{Preset: "llama3-8b"}, Card: "H100-80GB-SXM", Engine: "vllm",
		InputTokens: 1536, OutputTokens: 512, SLO: &rank.SLO{TPOTms: 20}, CachedPromptShare: 0.5}
	res, err := rank.EstimateFor(req, normalize.DefaultCatalog().Card)
	if err != nil || res.Sequences != 81 {
		t.Errorf("cached half: %v %.0f sequences, want 81", err, res.Sequences)
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
