package pipeline_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
)

// A new install: five sources' first round, run together, RunPod's at ×10
// on every card. No market exists yet, so the reference ranges judge each
// first run (data/plausible.csv, where fewer than three sellers of a card
// exist): RunPod is held, the others applied. Its true prices come back
// and are applied without an accept (it was never anchored at ×10).
// Before (issue 31): the first run of each source was anchored as it came,
// RunPod at ×10, and its true prices later held as ×0.1.
func TestGate_FreshInstallFirstRound(t *testing.T) {
	dir := fixtureDir(t)
	file := filepath.Join(dir, "runpod", "graphql.json")
	orig, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, scaledPrices(orig, 10), 0o644); err != nil {
		t.Fatal(err)
	}
	env := pipelinetest.New(t, fixtures.Handler(os.DirFS(dir)), func(c *config.Config) { c.Ingest = config.DefaultIngest() })
	names := []string{"runpod", "vast", "lambda", "verda", "ecb"}
	for _, s := range env.Round(t, names...) {
		switch {
		case s.Source == "runpod" && (s.Held == "" || !strings.Contains(s.Reason, "reference ranges")):
			t.Errorf("runpod ×10 on a new install: held %q, %s", s.Held, s.Reason)
		case s.Source != "runpod" && (s.Err != nil || s.Held != ""):
			t.Errorf("%s: %v %q %s", s.Source, s.Err, s.Held, s.Reason)
		}
	}
	if err := os.WriteFile(file, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, s := range env.Round(t, "runpod") {
		if s.Err != nil || s.Held != "" {
			t.Errorf("runpod's true prices: %v %q %s, want applied without an accept", s.Err, s.Held, s.Reason)
		}
	}
	if h, _ := env.Store.Health(); h["runpod"].Accepted != nil || h["runpod"].Offers == 0 {
		t.Errorf("runpod health %+v", h["runpod"])
	}
}
