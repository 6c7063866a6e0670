package pipeline_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
)

// A held level is announced with the label an accept names; a level that
// moves by the band (×4 held, then ×20: ×5 more) is announced again, with
// the new label, and the accept of the old label is refused; the same
// level again (×20 on the next run) is not announced twice, nor is a move
// within the band (×20 → ×25).
func TestHold_MovedLevelAnnouncedAgain(t *testing.T) {
	dir := fixtureDir(t)
	file := filepath.Join(dir, "runpod", "graphql.json")
	orig, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	env := pipelinetest.New(t, fixtures.Handler(os.DirFS(dir)), func(c *config.Config) {
		c.Ingest = config.DefaultIngest()
		c.Alerts.Watches = []config.Watch{{Name: "lora", Workload: "lora-7b", Modes: []string{"ondemand"}}}
	})
	names := []string{"runpod", "vast", "ecb"}
	round := func(f float64) {
		t.Helper()
		if err := os.WriteFile(file, scaledPrices(orig, f), 0o644); err != nil {
			t.Fatal(err)
		}
		env.Round(t, names...)
		env.Advance(10 * time.Minute)
	}
	holds := func() []string {
		var out []string
		for _, m := range env.Notifier.Messages {
			if strings.HasPrefix(m.Text, "Source runpod is held: ") {
				out = append(out, m.Text)
			}
		}
		return out
	}
	round(1)
	round(4)
	if h := holds(); len(h) != 1 || !strings.Contains(h[0], "level=factor%3Ax4%2Fondemand") {
		t.Fatalf("×4: %q", h)
	}
	round(20)
	round(20)
	round(25)
	h := holds()
	if len(h) != 2 || !strings.Contains(h[1], "level=factor%3Ax20%2Fondemand") {
		t.Fatalf("×4, then ×20 twice, then ×25: %q, want a second post naming ×20 and no third", h)
	}
	if _, _, err := env.Pipeline.Accept(t.Context(), "runpod", "ops", "factor:x4/ondemand"); err == nil || !strings.Contains(err.Error(), "now holds factor:x25/ondemand") {
		t.Errorf("accept of the old level: %v", err)
	}
}
