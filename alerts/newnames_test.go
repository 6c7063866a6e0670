package alerts_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/store"
)

// namesEnv evaluates source health (no watch) over a real store.
type namesEnv struct {
	t      *testing.T
	st     *store.Store
	clock  *clock
	engine *alerts.Engine
}

func newNamesEnv(t *testing.T, st *store.Store, c *clock) *namesEnv {
	return &namesEnv{t: t, st: st, clock: c,
		engine: &alerts.Engine{Store: st, Log: slog.New(slog.DiscardHandler), Now: c.Now}}
}

// run evaluates after an applied run of vast at the clock's time that
// reported unknown (nil: a failed run, which changes nothing), and
// advances the clock by 10 minutes.
func (e *namesEnv) run(unknown map[string]int) {
	e.t.Helper()
	h := store.Health{Source: "vast", LastRun: e.clock.Now(), LastOK: unknown != nil, Offers: 100, Unknown: unknown}
	if unknown != nil {
		h.LastSuccess = e.clock.Now()
	} else {
		h.ConsecutiveFailures = 1
	}
	// runpod runs fine beside it (a failing vast alone would be a degraded
	// data quality post).
	ok := store.Health{Source: "runpod", LastRun: e.clock.Now(), LastOK: true, LastSuccess: e.clock.Now(), Offers: 10}
	health := map[string]store.Health{"vast": h, "runpod": ok}
	if err := e.engine.Evaluate(context.Background(), snapshot(1, e.clock.Now()), health, []string{"runpod", "vast"}); err != nil {
		e.t.Fatal(err)
	}
	e.clock.Advance(10 * time.Minute)
}

// posts are the new-name messages in the outbox, oldest first.
func (e *namesEnv) posts() []string {
	e.t.Helper()
	ms, err := e.st.Messages(0)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for i := len(ms) - 1; i >= 0; i-- { // the outbox lists the newest first
		if ms[i].Kind == "names" {
			out = append(out, ms[i].Text)
		}
	}
	return out
}

// Issue 33 item 2, against a fake Slack Web API: the first applied run's
// unknown names are the silent baseline; the names a later run brings are
// delivered once, in one message, through the outbox and the real Slack
// client; neither the next runs nor a restart over the same file post
// them again.
func TestEngine_NewGPUNamesPostedOnceToSlack(t *testing.T) {
	o := newOutbox(t)
	e := newNamesEnv(t, o.st, o.clock)
	baseline := map[string]int{"A100X (80 GB)": 4}
	e.run(nil) // a failed first run sets no baseline
	e.run(baseline)
	o.drain(t, time.Minute)
	if got := o.slack.Texts(); len(got) != 0 {
		t.Fatalf("the baseline posted %v", got)
	}
	e.run(baseline)
	later := map[string]int{"A100X (80 GB)": 4, "RTX 9090 Ultra (32 GB)": 2, "MI999X": 1}
	at := o.clock.Now()
	e.run(later)
	e.run(later)
	o.drain(t, time.Minute)
	got := o.slack.Posted()
	if len(got) != 1 {
		t.Fatalf("delivered %d messages, want 1: %v", len(got), o.slack.Texts())
	}
	want := fmt.Sprintf("New GPU names at vast: MI999X, 1 offer; RTX 9090 Ultra (32 GB), 2 offers, first seen %s; add an alias or a card so they can be ranked",
		at.Format("2006-01-02 15:04 UTC"))
	if got[0].Text != want {
		t.Errorf("posted %q\nwant   %q", got[0].Text, want)
	}
	if strings.Contains(got[0].Text, "A100X") {
		t.Errorf("the post names a baseline name: %s", got[0].Text)
	}

	// A restart: the store opened again, a new engine and sender.
	path := o.path
	if err := o.st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	o.st = st
	o.restart()
	o.sender.Outbox = st
	e = newNamesEnv(t, st, o.clock)
	e.run(later)
	e.run(map[string]int{"RTX 9090 Ultra (32 GB)": 3, "MI999X": 1})
	o.drain(t, time.Minute)
	if got := o.slack.Texts(); len(got) != 1 {
		t.Errorf("after a restart the channel holds %d messages, want the one: %v", len(got), got)
	}
}

// What a source's seen names remember: a name whose offers vanish and
// come back is not news again; a name the catalog maps once it left is
// forgotten, and news again if it comes back unknown; a name no run
// reported for ForgetNamesAfter is forgotten too.
func TestEngine_NewGPUNamesRemembered(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "pw.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := newNamesEnv(t, st, &clock{t: t0})
	e.run(map[string]int{})                                    // baseline: none
	e.run(map[string]int{"Zeta Z1": 1, "RTX 4090 (24 GB)": 2}) // one post for both
	if got := e.posts(); len(got) != 1 || !strings.Contains(got[0], "Zeta Z1") || !strings.Contains(got[0], "RTX 4090 (24 GB)") {
		t.Fatalf("posts %v, want one naming both", got)
	}
	e.run(map[string]int{})                                    // both vanish; the catalog maps "RTX 4090" with 24 GB
	e.run(map[string]int{"Zeta Z1": 1})                        // back: not news
	e.run(map[string]int{"Zeta Z1": 1, "RTX 4090 (24 GB)": 2}) // forgotten, unknown again: news
	got := e.posts()
	if len(got) != 2 || !strings.HasPrefix(got[1], "New GPU name at vast: RTX 4090 (24 GB), 2 offers") {
		t.Fatalf("posts %v, want the mapped name posted again alone", got)
	}
	e.run(map[string]int{})
	e.clock.Advance(alerts.ForgetNamesAfter + time.Hour)
	e.run(map[string]int{})             // Zeta Z1 unreported for longer than ForgetNamesAfter
	e.run(map[string]int{"Zeta Z1": 5}) // news again
	if got := e.posts(); len(got) != 3 || !strings.HasPrefix(got[2], "New GPU name at vast: Zeta Z1, 5 offers") {
		t.Fatalf("posts %v, want Zeta Z1 posted again after it was forgotten", got)
	}
}

// NewNames lists a source's new names that its last run still reports,
// with that run's offer counts, and never the baseline's.
func TestNewNames_Lists(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "pw.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := newNamesEnv(t, st, &clock{t: t0})
	e.run(map[string]int{"A100X (80 GB)": 4})
	at := e.clock.Now()
	e.run(map[string]int{"A100X (80 GB)": 4, "Zeta Z1": 1, "Zeta Z2": 2})
	h := store.Health{Source: "vast", LastOK: true, LastSuccess: e.clock.Now(), Unknown: map[string]int{"A100X (80 GB)": 4, "Zeta Z1": 7}}
	got, err := alerts.NewNames(st, "vast", h)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "Zeta Z1" || got[0].Offers != 7 || !got[0].FirstSeen.Equal(at) {
		t.Errorf("new names %+v, want Zeta Z1 with 7 offers first seen %v", got, at)
	}
	if got, err := alerts.NewNames(st, "runpod", h); err != nil || len(got) != 0 {
		t.Errorf("a source without state lists %+v, %v", got, err)
	}
}

func TestNewNamesMessage(t *testing.T) {
	at := time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)
	var many []alerts.NewName
	for i := range 25 {
		many = append(many, alerts.NewName{Name: fmt.Sprintf("GPU <%02d> & co", i), Offers: 1, FirstSeen: at})
	}
	for _, c := range []struct {
		name  string
		names []alerts.NewName
		want  string
	}{
		{"One", []alerts.NewName{{Name: "B300-SXM", Offers: 3, FirstSeen: at}},
			"New GPU name at vast: B300-SXM, 3 offers, first seen 2026-11-01 09:30 UTC; add an alias or a card so it can be ranked"},
		{"Several", []alerts.NewName{{Name: "A", Offers: 1, FirstSeen: at}, {Name: "B", Offers: 2, FirstSeen: at}},
			"New GPU names at vast: A, 1 offer; B, 2 offers, first seen 2026-11-01 09:30 UTC; add an alias or a card so they can be ranked"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := alerts.NewNamesMessage("vast", c.names)
			if m.Text != c.want {
				t.Errorf("text %q\nwant %q", m.Text, c.want)
			}
			checkBlocks(t, m)
		})
	}
	t.Run("ManyEscaped", func(t *testing.T) {
		m := alerts.NewNamesMessage("vast", many)
		if !strings.Contains(m.Text, "GPU &lt;19&gt; &amp; co, 1 offer; and 5 more") || strings.Contains(m.Text, "&lt;20&gt;") {
			t.Errorf("text %q: want 20 names, escaped, and the count of the rest", m.Text)
		}
		checkBlocks(t, m)
	})
}

func checkBlocks(t *testing.T, m alerts.Message) {
	t.Helper()
	if len(m.Blocks) != 2 {
		t.Fatalf("%d blocks", len(m.Blocks))
	}
	h, ok := m.Blocks[0].(*slack.HeaderBlock)
	if !ok || h.Text.Validate() != nil || len(h.Text.Text) > alerts.MaxHeaderText {
		t.Errorf("header %+v", m.Blocks[0])
	}
	s, ok := m.Blocks[1].(*slack.SectionBlock)
	if !ok || s.Text.Validate() != nil || s.Text.Text != m.Text {
		t.Errorf("section %+v, want the text", m.Blocks[1])
	}
}
