package pipeline_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
	"github.com/pricewatch/pricewatch/store"
)

// newName is the GPU name the fixture edit gives one Vast offer: no alias
// maps it, and no run of Vast reported it before.
const newName = "RTX 9090 Ultra"

// newNamePosts are the delivered posts announcing new GPU names.
func newNamePosts(ms []alerts.Message) []alerts.Message {
	var out []alerts.Message
	for _, m := range ms {
		if strings.HasPrefix(m.Text, "New GPU name") {
			out = append(out, m)
		}
	}
	return out
}

// Issue 33 item 2: a GPU name no run of a source reported before is posted
// once, listed in the source's status with its offers and first-seen
// time, and not posted again on the next round nor after the store is
// opened again; the unknown names of a source's first applied run (Vast's
// fixture has several) are its silent baseline.
func TestNewGPUNames_PostedOnceOverTheFixtures(t *testing.T) {
	dir := fixtureDir(t)
	env := pipelinetest.New(t, fixtures.Handler(os.DirFS(dir)), func(c *config.Config) {
		c.Alerts.Watches = []config.Watch{{Name: "lora", Workload: "lora-7b", Modes: []string{"ondemand"}}}
	})
	names := []string{"vast", "ecb"}
	env.Round(t, names...)
	if len(status(env, "vast").UnknownGPUs) == 0 {
		t.Fatal("Vast's fixture has no unknown GPU name: the baseline tests nothing")
	}
	if got := newNamePosts(env.Notifier.Messages); len(got) != 0 {
		t.Fatalf("the baseline posted %d new-name messages: %v", len(got), got)
	}
	if got := status(env, "vast").NewGPUs; len(got) != 0 {
		t.Errorf("baseline names listed as new: %+v", got)
	}
	env.Round(t, names...) // the same names again: nothing
	if got := newNamePosts(env.Notifier.Messages); len(got) != 0 {
		t.Fatalf("a repeated run posted %v", got)
	}

	// One RTX 4090 offer of Vast now names a GPU nobody maps.
	file := filepath.Join(dir, "vast", "bundles.json")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	old := []byte(`"gpu_name": "RTX 4090"`)
	if !bytes.Contains(b, old) {
		t.Fatalf("%s: no %s", file, old)
	}
	if err := os.WriteFile(file, bytes.Replace(b, old, []byte(`"gpu_name": "`+newName+`"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	env.Advance(10 * time.Minute)
	sums := env.Round(t, names...)
	for _, s := range sums {
		if s.Err != nil || s.Held != "" {
			t.Fatalf("%s: %v %s", s.Source, s.Err, s.Reason)
		}
	}
	posts := newNamePosts(env.Notifier.Messages)
	if len(posts) != 1 {
		t.Fatalf("%d new-name posts, want 1: %v", len(posts), posts)
	}
	// The Vast offer is rented on demand and bid for: two offers.
	if txt := posts[0].Text; !strings.HasPrefix(txt, "New GPU name at vast: "+newName+" (24 GB), 2 offers, first seen ") ||
		!strings.HasSuffix(txt, "; add an alias or a card so it can be ranked") {
		t.Errorf("post %q: want the source, the name and its offers", txt)
	}
	for name := range status(env, "vast").UnknownGPUs {
		if !strings.HasPrefix(name, newName) && strings.Contains(posts[0].Text, name) {
			t.Errorf("the post names the baseline name %q: %s", name, posts[0].Text)
		}
	}
	st := status(env, "vast")
	if len(st.NewGPUs) != 1 || st.NewGPUs[0].Name != newName+" (24 GB)" || st.NewGPUs[0].Offers != 2 ||
		st.LastSuccess == nil || !st.NewGPUs[0].FirstSeen.Equal(*st.LastSuccess) {
		t.Errorf("vast lists new names %+v (last success %v), want %s with 2 offers first seen at the run", st.NewGPUs, st.LastSuccess, newName)
	}

	env.Advance(10 * time.Minute)
	env.Round(t, names...)
	if n := len(newNamePosts(env.Notifier.Messages)); n != 1 {
		t.Fatalf("the next round: %d new-name posts, want still 1", n)
	}

	// A restart: a new pipeline over the same file.
	firstSeen := status(env, "vast").NewGPUs
	if len(firstSeen) != 1 {
		t.Fatalf("vast lists %+v", firstSeen)
	}
	if err := env.Store.Close(); err != nil {
		t.Fatal(err)
	}
	st2, err := store.Open(env.Config.DB, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st2.Close() })
	n := &pipelinetest.Notifier{}
	p, err := pipeline.New(env.Config, st2, pipeline.Options{Notifier: n, Registry: prometheus.NewRegistry(),
		Logger: slog.New(slog.DiscardHandler), Now: env.Now, Getenv: func(string) string { return "test-secret" }})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Init(); err != nil {
		t.Fatal(err)
	}
	env.Advance(10 * time.Minute)
	p.RunAll(t.Context(), names)
	if err := p.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := p.Deliver(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := newNamePosts(n.Messages); len(got) != 0 {
		t.Errorf("after a restart: %v", got)
	}
	for _, s := range p.Statuses() {
		if s.Name == "vast" && (len(s.NewGPUs) != 1 || !s.NewGPUs[0].FirstSeen.Equal(firstSeen[0].FirstSeen)) {
			t.Errorf("after a restart vast lists %+v, want %+v", s.NewGPUs, firstSeen)
		}
	}
}
