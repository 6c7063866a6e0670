package pipeline_test

import (
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/pipeline"
	_ "github.com/pricewatch/pricewatch/scrapers/all"
	"github.com/pricewatch/pricewatch/store"
)

func TestSourceStatuses(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	cfg := config.Default()
	for name := range cfg.Sources { // the five sources this test knows
		if name != "runpod" && name != "vast" && name != "azure" && name != "lambda" && name != "ecb" {
			delete(cfg.Sources, name)
		}
	}
	lam := cfg.Sources["lambda"]
	lam.Settings.Enabled = false
	cfg.Sources["lambda"] = lam
	health := map[string]store.Health{
		"runpod": {LastRun: now.Add(-time.Minute), LastOK: true, LastSuccess: now.Add(-time.Minute), Offers: 149},
		"vast": {LastRun: now.Add(-time.Minute), LastOK: false, LastSuccess: now.Add(-20 * time.Minute),
			LastError: "vast: HTTP 500", ConsecutiveFailures: 2, Offers: 1318},
		// Succeeded, but longer ago than its 15h stale limit.
		"azure": {LastRun: now.Add(-16 * time.Hour), LastOK: true, LastSuccess: now.Add(-16 * time.Hour)},
	}
	next := func(string) time.Time { return now.Add(time.Hour) }
	want := map[string]string{"runpod": "ok", "vast": "failing", "azure": "stale", "lambda": "disabled", "ecb": "disabled"}
	got := pipeline.SourceStatuses(cfg, health, map[string]string{"ecb": "needs a key (test)"}, now, next)
	if len(got) != len(want) {
		t.Fatalf("got %d sources", len(got))
	}
	for _, s := range got {
		if s.Status != want[s.Name] {
			t.Errorf("%s: status %s, want %s", s.Name, s.Status, want[s.Name])
		}
		switch s.Name {
		case "vast":
			if s.LastError != "vast: HTTP 500" || s.ConsecutiveFailures != 2 || s.Offers != 1318 || !s.LastSuccess.Equal(now.Add(-20*time.Minute)) {
				t.Errorf("vast: %+v", s)
			}
		case "lambda", "ecb":
			if s.NextRun != nil || s.Reason == "" {
				t.Errorf("%s: a disabled source has a reason and no next run: %+v", s.Name, s)
			}
		case "runpod":
			if s.NextRun == nil || !s.NextRun.Equal(now.Add(time.Hour)) {
				t.Errorf("runpod next run %v", s.NextRun)
			}
		}
	}
}
