package pipeline_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
	"github.com/pricewatch/pricewatch/store"
)

// disputedGauge reads pricewatch_source_disputed of a source.
func disputedGauge(t *testing.T, env *pipelinetest.Env, source string) float64 {
	t.Helper()
	fams, err := env.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "pricewatch_source_disputed" {
			continue
		}
		for _, m := range f.GetMetric() {
			if l := m.GetLabel(); len(l) == 1 && l[0].GetValue() == source {
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("/metrics has no pricewatch_source_disputed{source=%q}", source)
	return 0
}

// Issue 31: an anchor the market that forms later disputes is flagged and
// posted once, not silently kept. RunPod at ×5 runs first, alone on its
// cards: the reference ranges allow it (×2.08), it is applied and
// anchored there. Vast, Lambda and Verda come next; against them
// RunPod's next runs lie at ×3.93 of the market, beyond the 3× band their
// levels allow (TestGate_FreshInstallPeersCatchWhatRangesAllow): applied
// (it moved not from its anchor), flagged in /v1/sources and /metrics,
// and posted once over two runs and a restart. A named accept settles
// the flag without a post; RunPod's true prices, ×0.2 of its anchor, are
// applied without an accept because the market that disputed the anchor
// vouches for them; the dispute is gone.
func TestGate_DisputedAnchorPostedOnce(t *testing.T) {
	env, restore := freshInstall(t, 5)
	round := func(names ...string) []pipeline.Summary {
		t.Helper()
		sums := env.Round(t, names...)
		env.Advance(10 * time.Minute)
		for _, s := range sums {
			if s.Err != nil || s.Held != "" {
				t.Fatalf("%s: %v %q %s", s.Source, s.Err, s.Held, s.Reason)
			}
		}
		return sums
	}
	posts := func() int {
		n := 0
		for _, m := range env.Notifier.Messages {
			if strings.HasPrefix(m.Text, "Source runpod disagrees with the market: ") {
				n++
			}
		}
		return n
	}
	round("runpod", "ecb")
	if h, _ := env.Store.Health(); h["runpod"].Anchor == nil || h["runpod"].Disputed != nil {
		t.Fatalf("runpod alone at ×5: %+v", h["runpod"])
	}
	// From here on every round runs the market's sellers too: Vast's
	// offers go stale after 30 minutes.
	all := []string{"runpod", "vast", "lambda", "verda"}
	round(all[1:]...)
	for range 2 {
		round(all...)
	}
	st := status(env, "runpod")
	if st.Status != pipeline.StatusDisputed || st.Disputed == nil || st.DisputedLabel != "market:x3.93" || !strings.Contains(st.Reason, "×3.93 of the market") {
		t.Fatalf("runpod at ×5 against the market: %s %q %+v %s", st.Status, st.DisputedLabel, st.Disputed, st.Reason)
	}
	if g := disputedGauge(t, env, "runpod"); g != 1 {
		t.Errorf("pricewatch_source_disputed{runpod} = %v, want 1", g)
	}
	if g := disputedGauge(t, env, "vast"); g != 0 {
		t.Errorf("pricewatch_source_disputed{vast} = %v, want 0", g)
	}
	if n := posts(); n != 1 {
		t.Fatalf("%d dispute posts over two runs, want 1", n)
	}

	env.Restart(t)
	round(all...)
	if n := posts(); n != 1 {
		t.Errorf("%d dispute posts after a restart, want still 1", n)
	}

	if _, _, err := env.Pipeline.Accept(t.Context(), "runpod", "ops", "market:x10"); !errors.Is(err, store.ErrLevelChanged) {
		t.Errorf("accept of a level not shown: %v", err)
	}
	if _, _, err := env.Pipeline.Accept(t.Context(), "runpod", "ops", "market:x3.93"); err != nil {
		t.Fatalf("accept: %v", err)
	}
	round(all...)
	st = status(env, "runpod")
	if st.Status != pipeline.StatusOK || st.Disputed == nil || st.Disputed.AcceptedBy != "ops" || st.DisputedLabel != "" || disputedGauge(t, env, "runpod") != 0 {
		t.Errorf("after the accept: %s %+v %q", st.Status, st.Disputed, st.DisputedLabel)
	}

	restore()
	if s := runpodOrNamed(round(all...), "runpod"); !strings.Contains(s.Reason, "the market, which disputed the anchor") {
		t.Errorf("runpod's true prices: %s", s.Reason)
	}
	if h, _ := env.Store.Health(); h["runpod"].Disputed != nil || h["runpod"].Anchor.By != "the market (disputed anchor)" {
		t.Errorf("after its true prices: disputed %+v, anchored by %q", h["runpod"].Disputed, h["runpod"].Anchor.By)
	}
	if n := posts(); n != 1 {
		t.Errorf("%d dispute posts in all, want 1", n)
	}
}
