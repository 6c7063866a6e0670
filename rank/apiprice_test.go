package rank_test

import (
	"io/fs"
	"math"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/scrapers/openrouter"
)

// captureTokens are the real OpenRouter capture's token prices
// (fixtures/openrouter), each with the preset it maps to, as the pipeline
// stores them.
func captureTokens(t *testing.T) []pricewatch.TokenPrice {
	t.Helper()
	b, err := fs.ReadFile(fixtures.FS(), "openrouter/models.json")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := openrouter.Parse(b, "u")
	if err != nil {
		t.Fatal(err)
	}
	for i := range ps {
		ps[i].Key = pricewatch.TokenKey(ps[i].Source, ps[i].Provider, ps[i].Model)
		ps[i].Preset = rank.APIPreset(ps[i].HFID, ps[i].Model)
	}
	return ps
}

func TestAPI_CheapestFromTheCapture(t *testing.T) {
	ps := captureTokens(t)
	for _, c := range []struct {
		preset  string
		in, out int
		cached  float64
		want    float64
		model   string
	}{
		// qwen/qwen3-30b-a3b: prompt "0.00000013", completion "0.00000052"
		// → 0.13 and 0.52 USD per million; 1024 in / 256 out is 4 input
		// tokens per output token: 0.52 + 4 × 0.13 = 1.04 per million
		// output tokens. No cache price: a cached share pays the input price.
		{"qwen3-30b-a3b", 1024, 256, 0, 1.04, "qwen/qwen3-30b-a3b"},
		{"qwen3-30b-a3b", 1024, 256, 0.5, 1.04, "qwen/qwen3-30b-a3b"},
		// openai/gpt-oss-120b: "0.00000003" in, "0.00000017" out, cache read
		// "0.00000003": 0.17 + 8 × 0.03 = 0.41 at 2048 in / 256 out.
		{"gpt-oss-120b", 2048, 256, 0, 0.41, "openai/gpt-oss-120b"},
		// deepseek/deepseek-chat (DeepSeek-V3): "0.0000002574",
		// "0.0000010287": 1.0287 + 1 × 0.2574 = 1.2861 at 1:1.
		{"deepseek-v3", 500, 500, 0, 1.2861, "deepseek/deepseek-chat"},
		// meta-llama/llama-3.1-8b-instruct, under the repository's first
		// name: 0.08 + 4 × ((1 − 0.75) × 0.05 + 0.75 × 0.025 cache read)
		// = 0.08 + 4 × 0.03125 = 0.205.
		{"llama3.1-8b", 1024, 256, 0.75, 0.205, "meta-llama/llama-3.1-8b-instruct"},
	} {
		api, ok := rank.CheapestAPI(ps, c.preset, c.in, c.out, c.cached, nil, "USD")
		if !ok || math.Abs(api.CostPerMillionTokens-c.want) > 1e-12 || api.Model != c.model || api.Provider != "openrouter" || api.Note == "" {
			t.Errorf("%s %d/%d cached %g: %+v, want %s at %v", c.preset, c.in, c.out, c.cached, api, c.model, c.want)
		}
	}
	// A preset no API sells, and an unknown preset: none.
	for _, p := range []string{"mixtral-8x7b", "no-such"} {
		if api, ok := rank.CheapestAPI(ps, p, 1024, 256, 0, nil, "USD"); ok {
			t.Errorf("%s: %+v", p, api)
		}
	}
	// The model id alone never maps: a repository must be named.
	if p := rank.APIPreset("", "qwen/qwen3-30b-a3b"); p != "" {
		t.Errorf("mapped by name: %q", p)
	}
}

// tokenSnap is planSnap's catalog with a measured serve-qwen3-30b-a3b
// profile (1,000 tokens/s on one H100, a round figure for the test) and
// the capture's token prices.
func tokenSnap(t *testing.T, offers ...pricewatch.Offer) *rank.Snapshot {
	return measuredSnap(t, rank.Profile{Card: "H100-80GB-SXM", Workload: "serve-qwen3-30b-a3b", TokensPerSecond: 1000}, captureTokens(t), offers...)
}

func TestPlan_APIBreakEven(t *testing.T) {
	// Qwen3-30B-A3B, 1024 in / 256 out: the API costs 1.04 per million
	// output tokens (above), so a steady load of L tokens/s a 730-hour
	// month costs 1.04e-6 × 3600 × 730 × L = 2.73312 × L.
	// Self-hosted: one H100 at 0.50 USD/h (a round price) on RunPod (per second, so
	// 730 h bill 730 h) serves 1,000 tokens/s: 365 a month, carrying up
	// to 1000 / 1.2 = 833 tokens/s. Break-even 365 / 2.73312 = 133.547
	// tokens/s = 133.547 × 86,400 = 11,538,460 tokens a day.
	snap := tokenSnap(t, off("runpod", "runpod", "rph100", "H100-80GB-SXM", pricewatch.ModeOnDemand, 0.5, "USD"))
	plan := func(peak float64) *rank.PlanResult {
		return planOf(t, snap, rank.JobSpec{Workload: "serve-qwen3-30b-a3b", PeakTokensPerSecond: peak, Modes: []string{"ondemand"}, Hidden: bare()})
	}
	res := plan(120)
	if res.API == nil || res.BreakEvenTokensPerDay == nil || res.BreakEvenOption == "" {
		t.Fatalf("api %+v break-even %v", res.API, res.BreakEvenTokensPerDay)
	}
	if math.Abs(*res.BreakEvenTokensPerDay-365/2.73312*86400) > 1 {
		t.Errorf("break-even %.0f tokens a day, want 11,538,460", *res.BreakEvenTokensPerDay)
	}
	// Below it (120 tokens/s: 2.73312 × 120 = 327.97 a month) the API is
	// cheaper than the GPU's 365; above it (150: 409.97) self-hosting.
	for _, c := range []struct {
		peak     float64
		api      float64
		selfWins bool
	}{{120, 327.9744, false}, {150, 409.968, true}} {
		res := plan(c.peak)
		self := res.Options[0].TotalCost
		if math.Abs(res.API.MonthlyCost-c.api) > 1e-6 || math.Abs(self-365) > 1e-6 || (self < res.API.MonthlyCost) != c.selfWins {
			t.Errorf("peak %g: API %.4f a month, self-hosted %.4f; self-hosting cheaper %v, want %v", c.peak, res.API.MonthlyCost, self, !c.selfWins, c.selfWins)
		}
	}
	// A GPU dearer per token than the API even when full never pays:
	// 10 USD/h = 7,300 a month against 2.73312 × 833 = 2,277.6 at most.
	dear := tokenSnap(t, off("runpod", "runpod", "rph100", "H100-80GB-SXM", pricewatch.ModeOnDemand, 10, "USD"))
	res = planOf(t, dear, rank.JobSpec{Workload: "serve-qwen3-30b-a3b", PeakTokensPerSecond: 120, Modes: []string{"ondemand"}, Hidden: bare()})
	if res.BreakEven != "never" || res.BreakEvenTokensPerDay != nil {
		t.Errorf("dear GPU: break-even %q %v", res.BreakEven, res.BreakEvenTokensPerDay)
	}
}
