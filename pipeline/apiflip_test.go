package pipeline_test

import (
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/alerts/slacktest"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
	"github.com/pricewatch/pricewatch/rank"
)

// gpt-oss-120b's prices in the OpenRouter capture: 0.03 in, 0.17 out (and
// 0.03 a cached input token) per million.
const (
	ossPrices = `        "prompt": "0.00000003",
        "completion": "0.00000017",
        "input_cache_read": "0.00000003"`
	ossCheap = `        "prompt": "0.00000001",
        "completion": "0.00000005",
        "input_cache_read": "0.00000001"`
	ossDearer = `        "prompt": "0.00000003",
        "completion": "0.0000002",
        "input_cache_read": "0.00000003"`
)

// TestAPIFlip_PostsOnceWhenSelfHostingBecomesCheaper: serve-gpt-oss-120b
// (1,024 tokens in / 256 out: 4 input tokens per output token) watched on
// demand with APIs, on RunPod, OpenRouter and the ECB's rates. RunPod's
// cheapest option serves it at about 0.15 USD per million output tokens
// (4 × RTX A5000 community, estimated: under 0.29 is what matters).
//
//   - Start: the capture edited to 0.01 in / 0.05 out: the API costs
//     0.05 + 4 × 0.01 = 0.09 per million, cheaper: recorded silently.
//   - The capture's real prices come back: 0.17 + 4 × 0.03 = 0.29, dearer
//     than RunPod's. The output price moved ×3.4 (beyond the gate's 3× band),
//     so it is held until three runs bring it; the flip then holds for the
//     watch's two confirming runs and is posted once, with both figures.
//   - 0.17 → 0.20 out (0.32 a million, inside the band) changes nothing
//     about which is cheaper: no post.
func TestAPIFlip_PostsOnceWhenSelfHostingBecomesCheaper(t *testing.T) {
	dir := fixtureDir(t)
	models := filepath.Join(dir, "openrouter", "models.json")
	edit(t, models, ossPrices, ossCheap)
	env := pipelinetest.New(t, fixtures.Handler(os.DirFS(dir)), func(c *config.Config) {
		c.Alerts.Watches = []config.Watch{{Name: "oss", Workload: "serve-gpt-oss-120b", Modes: []string{"ondemand"}, Currency: "USD", IncludeAPI: true}}
	})
	names := []string{"openrouter", "runpod", "ecb"}
	// The outbox is delivered to a fake Slack Web API (the real client),
	// not the harness's recording notifier.
	fake := &slacktest.Server{Now: env.Now}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	sender := &alerts.Sender{Outbox: env.Store, Notifier: alerts.NewSlack(alerts.SlackConfig{Token: "xoxb-test", Channel: "#gpu", APIURL: srv.URL}),
		Log: slog.New(slog.DiscardHandler), Now: env.Now}
	round := func() {
		t.Helper()
		for _, s := range env.Pipeline.RunAll(t.Context(), names) {
			if s.Err != nil {
				t.Fatalf("%s: %v", s.Source, s.Err)
			}
		}
		if err := env.Pipeline.Refresh(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := sender.DeliverDue(t.Context()); err != nil {
			t.Fatal(err)
		}
		env.Advance(10 * time.Minute)
	}
	flipPosts := func() []string {
		var out []string
		for _, m := range fake.Texts() {
			if strings.Contains(m, "than the cheapest API") || strings.Contains(m, "cheapest API now costs less") {
				out = append(out, m)
			}
		}
		return out
	}
	round()
	round()
	if p := flipPosts(); len(p) != 0 {
		t.Fatalf("the baseline posted: %q", p)
	}
	api, ok := env.Pipeline.View().Snapshot.CheapestAPI(mustWorkload(t, env, "serve-gpt-oss-120b"), "USD")
	if !ok || api.CostPerMillionTokens > 0.0900001 {
		t.Fatalf("precondition: the edited API costs %v, want 0.09", api.CostPerMillionTokens)
	}
	edit(t, models, ossCheap, ossPrices)
	for range 6 { // three runs to pass the gate, two to confirm, one more
		round()
	}
	posts := flipPosts()
	t.Logf("posted: %q", posts)
	if len(posts) != 1 || !strings.Contains(posts[0], "self-hosting now costs less") || !strings.Contains(posts[0], "$0.29") && !strings.Contains(posts[0], "0.29") {
		t.Fatalf("posts %q, want one saying self-hosting is cheaper than the API at 0.29", posts)
	}
	// The digest has the watch's line: both figures, which is cheaper and
	// where renting starts to pay.
	msgs, err := env.Pipeline.Digest()
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, m := range msgs {
		all.WriteString(m.Text)
	}
	if !strings.Contains(all.String(), "oss: self-hosted") || !strings.Contains(all.String(), "API openai/gpt-oss-120b via openrouter at $0.29") && !strings.Contains(all.String(), "openai/gpt-oss-120b via openrouter at 0.290") ||
		!strings.Contains(all.String(), "cheaper: self-hosted; renting pays from") {
		t.Errorf("digest:\n%s", all.String())
	}
	edit(t, models, ossPrices, ossDearer)
	for range 3 {
		round()
	}
	if p := flipPosts(); len(p) != 1 {
		t.Errorf("a change that flips nothing posted: %q", p[1:])
	}
}

func mustWorkload(t *testing.T, env *pipelinetest.Env, name string) rank.Workload {
	t.Helper()
	w, ok := env.Pipeline.Workload(name)
	if !ok {
		t.Fatalf("no workload %s", name)
	}
	return w
}

// A ×10 slip in a token price (0.17 → 1.70 per million out) is held at
// the accepted level as an outlier GPU price is: the run says so, the
// stored price stays until the gate's three runs in a row bring it.
func TestTokenGate_HoldsATenfoldSlip(t *testing.T) {
	dir := fixtureDir(t)
	models := filepath.Join(dir, "openrouter", "models.json")
	env := pipelinetest.New(t, fixtures.Handler(os.DirFS(dir)), nil)
	names := []string{"openrouter", "ecb"}
	env.Round(t, names...)
	key := "openrouter/openrouter/openai/gpt-oss-120b"
	stored := func() (out, held float64) {
		t.Helper()
		ps, err := env.Store.TokenPrices("openrouter")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.Key == key {
				if p.Held != nil {
					held = p.Held.OutputPerMillion
				}
				return p.OutputPerMillion, held
			}
		}
		t.Fatalf("%s not stored", key)
		return 0, 0
	}
	edit(t, models, ossPrices, `        "prompt": "0.00000003",
        "completion": "0.0000017",
        "input_cache_read": "0.00000003"`)
	for i := 1; i <= 3; i++ {
		env.Advance(10 * time.Minute)
		sums := env.Round(t, names...)
		out, held := stored()
		switch {
		case i < 3 && (out != 0.17 || held != 1.7 || !strings.Contains(sums[1].Reason, "held at their accepted level")):
			t.Errorf("run %d: stored %v, held %v, reason %q; want 0.17 kept, 1.7 held", i, out, held, sums[1].Reason)
		case i == 3 && (out != 1.7 || held != 0):
			t.Errorf("run 3: stored %v, held %v; want 1.7 applied after three runs", out, held)
		}
	}
}
