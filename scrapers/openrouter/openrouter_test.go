package openrouter_test

import (
	"encoding/json"
	"io/fs"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/scrapers/openrouter"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// The fixture is a real capture (fixtures/openrouter/PROVENANCE.md): 414
// models, of which 89 are :free, :batch or ~ alias entries and 8 have no
// paid completion price or a -1 (routers), leaving 317 prices; 25 name a
// Hugging Face repository that is a preset's (expected.json lists them
// with the capture's strings).
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "openrouter")
	if len(res.Observations) != 0 || res.Rates != nil {
		t.Fatalf("a token source yields token prices only: %d observations", len(res.Observations))
	}
	b, err := fs.ReadFile(fixtures.FS(), "openrouter/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		TokenPrices int `json:"token_prices"`
		Mapped      map[string]struct {
			Preset, Prompt, Completion string
		} `json:"mapped"`
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(res.TokenPrices) != want.TokenPrices {
		t.Errorf("%d token prices, want %d", len(res.TokenPrices), want.TokenPrices)
	}
	by := map[string]int{}
	mapped := 0
	for i, p := range res.TokenPrices {
		by[p.Model] = i
		if strings.HasSuffix(p.Model, ":free") || strings.HasSuffix(p.Model, ":batch") || strings.HasPrefix(p.Model, "~") {
			t.Errorf("%s: a variant or alias was kept", p.Model)
		}
		if p.Provider != "openrouter" || p.Currency != "USD" || p.OutputPerMillion <= 0 || p.InputPerMillion < 0 {
			t.Errorf("%s: %+v", p.Model, p)
		}
		if rank.APIPreset(p.HFID, p.Model) != "" {
			mapped++
		}
	}
	if mapped != len(want.Mapped) {
		t.Errorf("%d prices map to a preset, want %d", mapped, len(want.Mapped))
	}
	for model, w := range want.Mapped {
		i, ok := by[model]
		if !ok {
			t.Errorf("%s missing", model)
			continue
		}
		if got := rank.APIPreset(res.TokenPrices[i].HFID, model); got != w.Preset {
			t.Errorf("%s: preset %q, want %q", model, got, w.Preset)
		}
	}
	// By hand from the capture's strings (USD per token × 10^6):
	for _, c := range []struct {
		model            string
		in, out, cacheRd float64
		hf               string
	}{
		// "0.00000003", "0.00000017", input_cache_read "0.00000003"
		{"openai/gpt-oss-120b", 0.03, 0.17, 0.03, "openai/gpt-oss-120b"},
		// "0.00000013", "0.00000052", no cache price
		{"qwen/qwen3-30b-a3b", 0.13, 0.52, 0, "Qwen/Qwen3-30B-A3B"},
		// "0.0000002574", "0.0000010287": long decimals read exactly
		{"deepseek/deepseek-chat", 0.2574, 1.0287, 0, "deepseek-ai/DeepSeek-V3"},
		// "0.00000005", "0.00000008", input_cache_read "0.000000025";
		// the repository under its first name
		{"meta-llama/llama-3.1-8b-instruct", 0.05, 0.08, 0.025, "meta-llama/Meta-Llama-3.1-8B-Instruct"},
	} {
		p := res.TokenPrices[by[c.model]]
		if p.InputPerMillion != c.in || p.OutputPerMillion != c.out || p.CachedInputPerMillion != c.cacheRd || p.HFID != c.hf {
			t.Errorf("%s: %v / %v (cache %v, %q), want %v / %v (cache %v, %q)", c.model, p.InputPerMillion, p.OutputPerMillion,
				p.CachedInputPerMillion, p.HFID, c.in, c.out, c.cacheRd, c.hf)
		}
	}
	if _, ok := by["openai/gpt-oss-20b:free"]; ok {
		t.Error("the :free variant was kept")
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"not JSON", `<html>`, "decode JSON"},
		{"no data", `{"models": []}`, `no "data" list`},
		{"nothing priced", `{"data": [{"id": "openrouter/auto", "pricing": {"prompt": "-1", "completion": "-1"}},
			{"id": "x/y:free", "pricing": {"prompt": "0", "completion": "0"}}, {"id": "a/b"}]}`, "no priced model among 3"},
	} {
		if _, err := openrouter.Parse([]byte(c.body), "u"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// A -1 (dynamic) or negative price is no price; an exponent form reads.
	got, err := openrouter.Parse([]byte(`{"data": [{"id": "r/auto", "pricing": {"prompt": "-1", "completion": "-1"}},
		{"id": "m/e", "hugging_face_id": null, "pricing": {"prompt": "1.5e-7", "completion": "6e-7"}}]}`), "u")
	if err != nil || len(got) != 1 || got[0].Model != "m/e" || got[0].InputPerMillion != 0.15 || got[0].OutputPerMillion != 0.6 || got[0].HFID != "" {
		t.Errorf("%v %+v", err, got)
	}
}
