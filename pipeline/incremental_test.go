package pipeline_test

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
	"github.com/pricewatch/pricewatch/rank"
)

// The daemon re-ranks only the source that ran, reusing the rest of the
// last ranking. Whatever happened since start-up — runs of some sources,
// edited and vanished offers, a measured profile, offers going stale as the
// clock moves — the ranking it holds must answer exactly as one built from
// scratch over the same stored data (a fresh pipeline on the same store).
func TestIncrementalRankingMatchesFullRebuild(t *testing.T) {
	dir := fixtureDir(t)
	env := pipelinetest.New(t, fixtures.Handler(os.DirFS(dir)), nil)
	fresh := func() *rank.Snapshot {
		t.Helper()
		p, err := pipeline.New(env.Config, env.Store, pipeline.Options{
			Registry: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler), Now: env.Now,
			Getenv: func(string) string { return "test-secret" },
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Init(); err != nil {
			t.Fatal(err)
		}
		return p.View().Snapshot
	}
	filters := map[string]rank.Filter{
		"default":      {},
		"any":          {AnyAvailability: true, Modes: pricewatch.Modes()},
		"single":       {MaxGPUs: 1},
		"monthly-half": {Modes: []pricewatch.Mode{pricewatch.ModeMonthly, pricewatch.ModeOnDemand}, Utilization: 0.5},
		"runpod":       {Narrowing: rank.Narrowing{Providers: []string{"runpod"}}},
		"narrowed": {Narrowing: rank.Narrowing{ExcludeProviders: []string{"VAST"}, Interconnects: []string{"nvlink"},
			MinGPUMemoryGB: 40}},
	}
	same := func(step string) {
		t.Helper()
		inc, full := env.Pipeline.View().Snapshot, fresh()
		if inc.OfferCount() != full.OfferCount() {
			t.Errorf("%s: %d offers held, %d stored", step, inc.OfferCount(), full.OfferCount())
		}
		for _, w := range full.WorkloadNames() {
			for name, f := range filters {
				a, _ := json.Marshal(inc.Best(w, f))
				b, _ := json.Marshal(full.Best(w, f))
				if string(a) != string(b) {
					t.Errorf("%s: Best(%s, %s) differs from a full rebuild:\n inc  %.600s\n full %.600s", step, w, name, a, b)
				}
				a, _ = json.Marshal(inc.Top(w, f, 7))
				b, _ = json.Marshal(full.Top(w, f, 7))
				if string(a) != string(b) {
					t.Errorf("%s: Top(%s, %s, 7) differs from a full rebuild", step, w, name)
				}
			}
			a, _ := json.Marshal(inc.Excluded(w))
			b, _ := json.Marshal(full.Excluded(w))
			if string(a) != string(b) {
				t.Errorf("%s: Excluded(%s) differs:\n inc  %s\n full %s", step, w, a, b)
			}
		}
	}

	env.Round(t)
	same("first round")

	// A plausible price move on RunPod and one Vast bundle gone; only those
	// two sources run.
	edit(t, filepath.Join(dir, "runpod", "graphql.json"), l40sPrice, `"communityPrice": 0.70,`)
	vast := filepath.Join(dir, "vast", "bundles.json")
	b, err := os.ReadFile(vast)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Offers []json.RawMessage `json:"offers"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	d.Offers = d.Offers[1:]
	out, _ := json.Marshal(d)
	if err := os.WriteFile(vast, out, 0o644); err != nil {
		t.Fatal(err)
	}
	env.Advance(time.Hour)
	env.Round(t, "runpod", "vast")
	same("runpod and vast ran")

	// A measured profile changes every source's figures at once.
	if _, err := env.Pipeline.SetProfile(t.Context(), rank.Profile{Card: "RTX-4090", Workload: "lora-7b", TokensPerSecond: 1500,
		Origin: rank.OriginMeasured, Provider: "vast"}); err != nil {
		t.Fatal(err)
	}
	same("a provider profile")

	// Far enough on that every source but RunPod is stale: their reused
	// parts must leave the ranking too.
	longest := time.Duration(0)
	for _, s := range env.Config.Sources {
		longest = max(longest, s.Settings.StaleAfter)
	}
	env.Advance(longest + time.Hour)
	env.Round(t, "runpod")
	same("all but runpod stale")
	if n := len(env.Pipeline.View().Snapshot.Best("lora-7b", rank.Filter{})); n == 0 {
		t.Fatal("precondition: runpod still ranks")
	}
}
