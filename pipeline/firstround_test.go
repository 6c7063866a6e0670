package pipeline_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
)

// freshInstall serves the fixtures with RunPod's prices ×f and builds a
// pipeline over a new database; restore puts RunPod's true prices back.
func freshInstall(t *testing.T, f float64) (env *pipelinetest.Env, restore func()) {
	t.Helper()
	dir := fixtureDir(t)
	file := filepath.Join(dir, "runpod", "graphql.json")
	orig, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, scaledPrices(orig, f), 0o644); err != nil {
		t.Fatal(err)
	}
	env = pipelinetest.New(t, fixtures.Handler(os.DirFS(dir)), func(c *config.Config) { c.Ingest = config.DefaultIngest() })
	return env, func() {
		if err := os.WriteFile(file, orig, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkFirstRound wants RunPod held with a reason naming by (the market or
// the reference ranges) and every other source of the round applied.
func checkFirstRound(t *testing.T, sums []pipeline.Summary, by string) {
	t.Helper()
	for _, s := range sums {
		switch {
		case s.Source == "runpod" && (s.Held == "" || !strings.Contains(s.Reason, by)):
			t.Errorf("runpod: held %q (%s), want held by %q", s.Held, s.Reason, by)
		case s.Source != "runpod" && (s.Err != nil || s.Held != ""):
			t.Errorf("%s: %v %q %s", s.Source, s.Err, s.Held, s.Reason)
		}
	}
}

// trueLevelApplied brings RunPod's true prices back: applied without an
// accept (it was never anchored at the wrong level).
func trueLevelApplied(t *testing.T, env *pipelinetest.Env, restore func()) {
	t.Helper()
	restore()
	for _, s := range env.Round(t, "runpod") {
		if s.Err != nil || s.Held != "" {
			t.Errorf("runpod's true prices: %v %q %s, want applied without an accept", s.Err, s.Held, s.Reason)
		}
	}
	if h, _ := env.Store.Health(); h["runpod"].Accepted != nil || h["runpod"].Offers == 0 || h["runpod"].Anchor == nil {
		t.Errorf("runpod health %+v", h["runpod"])
	}
}

// A new install: five sources' first round, run together, RunPod's at ×10
// on every card. The round's first runs are judged against each other
// before any is recorded (pipeline/round.go): against Vast, Lambda and
// Verda, RunPod's three cards they all sell lie at ×7.85 of them (×3.95,
// ×7.85, ×8.25), beyond the band learned from their levels (3×, the
// floor): held, the others applied. Its true prices come back and are
// applied without an accept. Before (issue 31): the first run of each
// source was anchored as it came, RunPod at ×10, and its true prices
// later held as ×0.1.
func TestGate_FreshInstallFirstRound(t *testing.T) {
	env, restore := freshInstall(t, 10)
	checkFirstRound(t, env.Round(t, "runpod", "vast", "lambda", "verda", "ecb"), "of the market")
	trueLevelApplied(t, env, restore)
}

// RunPod at ×5 is inside what the reference ranges allow: judged by them
// alone (a new install where it runs first, alone), its on-demand cards
// lie at ×2.08 of their ranges (the median of 10 cards), under the band
// (3×): applied. In a round with Vast, Lambda and Verda only their
// corroboration catches it: ×3.93 of them (×1.97, ×4.12, ×3.93), beyond
// the 3× band their levels allow.
func TestGate_FreshInstallPeersCatchWhatRangesAllow(t *testing.T) {
	alone, _ := freshInstall(t, 5)
	for _, s := range alone.Round(t, "runpod", "ecb") {
		if s.Err != nil || s.Held != "" {
			t.Fatalf("runpod ×5 judged by the reference ranges alone: %v %q %s; the test needs a level the ranges allow", s.Err, s.Held, s.Reason)
		}
	}
	env, restore := freshInstall(t, 5)
	checkFirstRound(t, env.Round(t, "runpod", "vast", "lambda", "verda", "ecb"), "of the market")
	trueLevelApplied(t, env, restore)
}

// RunPod alone in the catalog for its cards (Vast, the one other seller of
// the round, is fewer than three): the market cannot judge them and the
// reference ranges stand in. At ×10 its 10 on-demand cards lie at ×4.16 of
// their ranges: held; Vast applied.
func TestGate_FreshInstallAloneOnACard(t *testing.T) {
	env, restore := freshInstall(t, 10)
	checkFirstRound(t, env.Round(t, "runpod", "vast", "ecb"), "reference ranges")
	trueLevelApplied(t, env, restore)
}

// The daemon's first round on a new install runs every enabled source
// together: pristine, every source is applied whole (no run held, no
// offer held back); judged against each other, no true first run is held.
// (×10 against the whole catalog's medians: TestGate_LearnedBandLeaveOneSourceOut.)
func TestGate_FreshInstallWholeCatalog(t *testing.T) {
	env, _ := freshInstall(t, 1)
	sums := env.Round(t)
	if len(sums) < 15 {
		t.Fatalf("only %d sources ran", len(sums))
	}
	for _, s := range sums {
		if s.Err != nil || s.Held != "" || s.HeldOffers != 0 {
			t.Errorf("pristine %s: %v %q %s, %d offers held back", s.Source, s.Err, s.Held, s.Reason, s.HeldOffers)
		}
	}
}
