package alerts_test

import (
	"context"
	"log/slog"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// engineEnv is an engine over a real store with an injected clock that
// evaluates one lora-7b on-demand watch every 10 minutes.
type engineEnv struct {
	st     *store.Store
	clock  *clock
	engine *alerts.Engine
	wakes  int
	// lastRun is each source's last run, as evaluate advances it.
	lastRun map[string]time.Time
}

func newEngine(t *testing.T) *engineEnv {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "pw.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := &engineEnv{st: st, clock: &clock{t: t0}}
	e.engine = &alerts.Engine{Store: st, Log: slog.New(slog.DiscardHandler), Now: e.clock.Now,
		Watches: []alerts.Watch{{Name: "lora", Workload: "lora-7b", Modes: []pricewatch.Mode{pricewatch.ModeOnDemand},
			Currency: "USD", Rules: alerts.DefaultRules()}},
		Wake: func() { e.wakes++ }}
	return e
}

func offerAt(source, id string, price float64, at time.Time) pricewatch.Offer {
	return pricewatch.Offer{Key: pricewatch.OfferKey(source, id, "", pricewatch.ModeOnDemand), Source: source, Provider: source, OfferID: id,
		Kind: pricewatch.KindOffer, Card: "A100-80GB-SXM", GPUs: 1, RentUnit: pricewatch.RentFixed, GPUCounts: []int{1}, RentUnitGPUs: 1,
		Mode: pricewatch.ModeOnDemand, PricePerGPUHour: price, UnitPricePerHour: price, Currency: "USD", ObservedAt: at}
}

// snapshot ranks a runpod offer at price beside a dearer lambda one.
func snapshot(price float64, at time.Time) *rank.Snapshot {
	cat := normalize.DefaultCatalog()
	ws := rank.BuiltinWorkloads()
	return rank.Build([]pricewatch.Offer{offerAt("runpod", "a100", price, at), offerAt("lambda", "a100", 10, at)},
		rank.SeedProfiles(cat, ws), ws, cat, rank.Options{Now: at, ReliabilityFloor: 0.95, Base: "USD",
			Rates: &pricewatch.Rates{Base: "EUR", Rates: map[string]float64{"USD": 1.0163, "CNY": 6.8095}}})
}

// priceFor is the runpod price per GPU-hour whose lora-7b cost per
// million tokens is cost (cost is proportional to price).
func priceFor(t *testing.T, cost float64) float64 {
	t.Helper()
	for _, en := range snapshot(1, t0).Entries("lora-7b") {
		if en.Source == "runpod" && en.Mode == pricewatch.ModeOnDemand {
			return cost / en.CostPerMillionTokens
		}
	}
	t.Fatal("no runpod entry for lora-7b")
	return 0
}

var allOK = map[string]store.Health{"runpod": {Source: "runpod", LastOK: true}, "lambda": {Source: "lambda", LastOK: true}}

// evaluate runs n evaluations 10 minutes apart at the clock's time,
// advancing it; each follows a run of every source in health.
func (e *engineEnv) evaluate(t *testing.T, n int, price float64, health map[string]store.Health) {
	t.Helper()
	e.evaluateAfter(t, n, price, health, nil)
}

// evaluateAfter is evaluate with only the sources in ran (nil: all) run
// before each evaluation; the others' last runs stay where they were.
func (e *engineEnv) evaluateAfter(t *testing.T, n int, price float64, health map[string]store.Health, ran []string) {
	t.Helper()
	if e.lastRun == nil {
		e.lastRun = map[string]time.Time{}
	}
	for range n {
		hs := map[string]store.Health{}
		for name, h := range health {
			if ran == nil || slices.Contains(ran, name) {
				e.lastRun[name] = e.clock.Now()
			}
			h.LastRun = e.lastRun[name]
			hs[name] = h
		}
		snap := snapshot(price, e.clock.Now())
		if err := e.engine.Evaluate(context.Background(), snap, hs, []string{"lambda", "runpod"}); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(10 * time.Minute)
	}
}

// Issue 19 item 4: a one-scrape glitch of runpod is not confirmed by the
// evaluations other sources' runs bring (lambda ran three times); the
// same drop confirmed by runpod's own runs posts once.
func TestEngine_ConfirmationsCountRunsOfTheSource(t *testing.T) {
	e := newEngine(t)
	real, drop := priceFor(t, 0.0264), priceFor(t, 0.0185)
	e.evaluate(t, 3, real, allOK)
	e.evaluate(t, 1, drop, allOK)                          // runpod's run brings the drop: one win
	e.evaluateAfter(t, 3, drop, allOK, []string{"lambda"}) // lambda's runs: no more wins
	if c := e.changes(t); len(c) != 0 {
		t.Fatalf("confirmed by other sources' runs: %v", c)
	}
	e.evaluate(t, 1, drop, allOK) // runpod's second run with it: confirmed (ConfirmRuns 2)
	if c := e.changes(t); len(c) != 1 || !strings.Contains(c[0].Text, "at 0.0185 USD") {
		t.Fatalf("after runpod's second run: %v", c)
	}
}

func (e *engineEnv) changes(t *testing.T) []store.Message {
	t.Helper()
	ms, err := e.st.Messages(0)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Message
	for i := len(ms) - 1; i >= 0; i-- { // oldest first
		if ms[i].Kind == "change" {
			out = append(out, ms[i])
		}
	}
	return out
}

// Issue 10 item 4, through the engine and the store: with the default
// rules a ×0.1 glitch for 4 runs posts once, its recovery posts nothing,
// and the real 30% drop afterwards (0.0264 → 0.0185 per million tokens)
// is posted, from the real level.
func TestEngine_GlitchThenRealDropPostsTheDrop(t *testing.T) {
	e := newEngine(t)
	real, drop := priceFor(t, 0.0264), priceFor(t, 0.0185)
	e.evaluate(t, 3, real, allOK)
	e.evaluate(t, 4, real*0.1, allOK)
	if c := e.changes(t); len(c) != 1 || !strings.Contains(c[0].Text, "unusual") {
		t.Fatalf("the glitch: %d change posts, want one unusual: %v", len(c), c)
	}
	e.evaluate(t, 6, real, allOK)
	if c := e.changes(t); len(c) != 1 {
		t.Fatalf("the recovery posted: %v", c[1:])
	}
	e.evaluate(t, 3, drop, allOK)
	c := e.changes(t)
	if len(c) != 2 {
		t.Fatalf("%d change posts, want the glitch and the real drop", len(c))
	}
	if txt := c[1].Text; !strings.Contains(txt, "0.0185 USD") || !strings.Contains(txt, "was 0.0264 USD") || strings.Contains(txt, "unusual") {
		t.Errorf("the real drop: %q, want 0.0264 → 0.0185", txt)
	}
	var st alerts.State
	if ok, err := e.st.NotifyState("watch:lora", &st); !ok || err != nil || math.Abs(st.Notified.CostPerMillionTokens-0.0185) > 1e-9 {
		t.Errorf("reference after the drop: %+v (%v)", st.Notified, err)
	}
}

// A ×10 glitch posts nothing under worse: digest, neither does its end,
// and the real drop afterwards is posted.
func TestEngine_UpwardGlitchThenRealDrop(t *testing.T) {
	e := newEngine(t)
	real, drop := priceFor(t, 0.0264), priceFor(t, 0.0185)
	e.evaluate(t, 3, real, allOK)
	e.evaluate(t, 4, real*10, allOK)
	e.evaluate(t, 6, real, allOK)
	if c := e.changes(t); len(c) != 0 {
		t.Fatalf("the glitch and its end posted: %v", c)
	}
	e.evaluate(t, 3, drop, allOK)
	if c := e.changes(t); len(c) != 1 || !strings.Contains(c[0].Text, "was 0.0264 USD") {
		t.Fatalf("after the glitch: %v, want the real drop posted once", c)
	}
}

// Issue 10 item 5: a health post wakes the sender even when no watch posts.
func TestEngine_HealthPostWakesSender(t *testing.T) {
	e := newEngine(t)
	e.evaluate(t, 1, 1, allOK) // the watch's silent baseline
	failing := map[string]store.Health{"runpod": allOK["runpod"],
		"lambda": {Source: "lambda", LastOK: false, ConsecutiveFailures: alerts.FailingRuns}}
	e.evaluate(t, 1, 1, failing)
	ms, _ := e.st.Messages(0)
	if len(ms) != 1 || ms[0].Kind != "health" {
		t.Fatalf("outbox %v, want one health message", ms)
	}
	if e.wakes != 1 {
		t.Errorf("the sender was woken %d times for a queued health message, want 1", e.wakes)
	}
}

// Issue 10 item 5, end to end: with the sender running, a health message
// is delivered to (fake, loopback) Slack without any watch posting, within
// seconds: woken by the engine, or at the latest by its own timer.
func TestSender_DeliversHealthWithoutAWatchPost(t *testing.T) {
	for _, c := range []struct {
		name string
		wake bool
		poll time.Duration
	}{
		{"WokenByTheEngine", true, time.Hour},
		{"OwnTimer", false, 20 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := newOutbox(t)
			o.sender.Poll = c.poll
			wake := make(chan struct{}, 1)
			e := &alerts.Engine{Store: o.st, Log: slog.New(slog.DiscardHandler), Now: o.clock.Now,
				Watches: []alerts.Watch{{Name: "lora", Workload: "lora-7b", Modes: []pricewatch.Mode{pricewatch.ModeOnDemand},
					Currency: "USD", Rules: alerts.DefaultRules()}}}
			if c.wake {
				e.Wake = func() {
					select {
					case wake <- struct{}{}:
					default:
					}
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { o.sender.Run(ctx, wake); close(done) }()
			t.Cleanup(func() { cancel(); <-done })
			snap := snapshot(1, o.clock.Now())
			if err := e.Evaluate(ctx, snap, allOK, []string{"lambda", "runpod"}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond) // the sender goes to sleep on an empty outbox
			failing := map[string]store.Health{"runpod": allOK["runpod"],
				"lambda": {Source: "lambda", LastOK: false, ConsecutiveFailures: alerts.FailingRuns, LastError: "HTTP 500"}}
			if err := e.Evaluate(ctx, snap, failing, []string{"lambda", "runpod"}); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(3 * time.Second)
			for len(o.slack.Texts()) == 0 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			got := o.slack.Texts()
			if len(got) != 1 || !strings.Contains(got[0], "lambda") {
				t.Fatalf("delivered %v, want the health message within seconds", got)
			}
		})
	}
}

// Issue 10 item 6: the sender prunes sent and failed messages older than
// the retention, and keeps newer and pending ones.
func TestSender_PrunesAfterRetention(t *testing.T) {
	o := newOutbox(t)
	o.sender.Retention = 30 * 24 * time.Hour
	o.enqueue(t, "old-sent")
	o.drain(t, time.Minute)
	o.slack.Script("channel_not_found")
	o.enqueue(t, "old-failed")
	o.drain(t, time.Minute)
	o.clock.Advance(20 * 24 * time.Hour)
	o.enqueue(t, "newer-sent")
	o.drain(t, time.Minute)
	o.clock.Advance(11 * 24 * time.Hour)
	o.slack.SetDown(true)
	o.enqueue(t, "pending")
	if n, err := o.sender.Prune(); err != nil || n != 2 {
		t.Fatalf("pruned %d (%v), want the two old ones", n, err)
	}
	page, err := o.st.Outbox("", 0)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range page.Messages {
		texts = append(texts, m.Text)
	}
	if strings.Join(texts, ",") != "pending,newer-sent" || page.Pending != 1 || page.Failed != 0 {
		t.Errorf("left %v (pending %d, failed %d)", texts, page.Pending, page.Failed)
	}
	if n, _ := o.sender.Prune(); n != 0 {
		t.Errorf("pruned again within %s: %d", alerts.PruneEvery, n)
	}
}
