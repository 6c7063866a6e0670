package alerts_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/alerts/slacktest"
	"github.com/pricewatch/pricewatch/store"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

type outboxEnv struct {
	st     *store.Store
	slack  *slacktest.Server
	clock  *clock
	sender *alerts.Sender
	path   string
	url    string // the fake Slack
}

func newOutbox(t *testing.T) *outboxEnv {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pw.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := &clock{t: t0}
	f := &slacktest.Server{Now: c.Now}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	n := alerts.NewSlack(alerts.SlackConfig{Token: "xoxb-test", Channel: "#gpu", APIURL: srv.URL})
	return &outboxEnv{st: st, slack: f, clock: c, path: path, url: srv.URL,
		sender: &alerts.Sender{Outbox: st, Notifier: n, Log: slog.New(slog.DiscardHandler), Now: c.Now}}
}

func (e *outboxEnv) enqueue(t *testing.T, texts ...string) {
	t.Helper()
	for _, s := range texts {
		m, err := alerts.EncodeMessage("change", alerts.Message{Text: s, Blocks: []slack.Block{
			slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, s, false, false), nil, nil)}}, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.st.Enqueue(m); err != nil {
			t.Fatal(err)
		}
	}
}

// drain runs the sender like its loop does, advancing the fake clock by
// each wait, until the outbox is empty or the time budget is spent.
func (e *outboxEnv) drain(t *testing.T, budget time.Duration) {
	t.Helper()
	end := e.clock.Now().Add(budget)
	for e.clock.Now().Before(end) {
		wait, err := e.sender.DeliverDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if wait == 0 {
			return
		}
		e.clock.Advance(wait)
	}
}

func statuses(t *testing.T, st *store.Store) map[string]int {
	t.Helper()
	ms, err := st.Messages(0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, m := range ms {
		out[m.Status]++
	}
	return out
}

func TestOutbox_DeliversInOrder(t *testing.T) {
	e := newOutbox(t)
	e.enqueue(t, "one", "two", "three")
	e.drain(t, time.Minute)
	if got := e.slack.Texts(); strings.Join(got, ",") != "one,two,three" {
		t.Errorf("delivered %v", got)
	}
	if s := statuses(t, e.st); s[store.Sent] != 3 {
		t.Errorf("statuses %v", s)
	}
}

// With no Slack configured the sender only logs a message, and marks it
// logged, not sent (before: sent, with a sent_at), counting "logged".
func TestOutbox_NoSlackIsLoggedNotSent(t *testing.T) {
	e := newOutbox(t)
	var results []string
	e.sender.Notifier = nil
	e.sender.Result = func(r string) { results = append(results, r) }
	e.enqueue(t, "one", "two")
	e.drain(t, time.Minute)
	if got := e.slack.Texts(); len(got) != 0 {
		t.Errorf("delivered %v without a notifier", got)
	}
	if s := statuses(t, e.st); s[store.Logged] != 2 || len(s) != 1 {
		t.Errorf("statuses %v, want 2 logged", s)
	}
	ms, _ := e.st.Messages(0)
	for _, m := range ms {
		if !m.SentAt.IsZero() || m.Attempts != 1 {
			t.Errorf("message %d: sent_at %v, attempts %d; want no sent_at, 1 attempt", m.ID, m.SentAt, m.Attempts)
		}
	}
	if strings.Join(results, ",") != "logged,logged" {
		t.Errorf("results %v", results)
	}
}

func TestOutbox_RetryAfterOn429(t *testing.T) {
	e := newOutbox(t)
	e.slack.Script("429:7")
	e.enqueue(t, "a", "b")
	wait, err := e.sender.DeliverDue(context.Background())
	if err != nil || wait != 7*time.Second {
		t.Fatalf("wait %v err %v, want Slack's Retry-After of 7s", wait, err)
	}
	// Nothing goes out of order while the head waits.
	e.clock.Advance(6 * time.Second)
	if wait, _ := e.sender.DeliverDue(context.Background()); wait != time.Second || len(e.slack.Texts()) != 0 {
		t.Fatalf("delivered early: %v, wait %v", e.slack.Texts(), wait)
	}
	e.drain(t, time.Minute)
	if got := e.slack.Texts(); strings.Join(got, ",") != "a,b" {
		t.Errorf("delivered %v", got)
	}
}

// Slack down for an hour of simulated time: every message is delivered
// exactly once after it recovers, in order, and the retries back off.
func TestOutbox_SlackDownForAnHour(t *testing.T) {
	e := newOutbox(t)
	e.slack.SetDown(true)
	e.enqueue(t, "m1", "m2", "m3")
	e.drain(t, time.Hour)
	calls := e.slack.Calls("")
	if len(e.slack.Texts()) != 0 {
		t.Fatal("delivered while Slack was down")
	}
	// Exponential backoff capped at 5 min: about 5s,10s,…,5m, then every 5 min.
	if calls < 10 || calls > 30 {
		t.Errorf("%d attempts in an hour, want a bounded backoff (10..30)", calls)
	}
	e.slack.SetDown(false)
	e.enqueue(t, "m4")
	e.drain(t, time.Hour)
	if got := e.slack.Texts(); strings.Join(got, ",") != "m1,m2,m3,m4" {
		t.Errorf("delivered %v, want each once in order", got)
	}
	ms, _ := e.st.Messages(0)
	for _, m := range ms {
		if m.Status != store.Sent {
			t.Errorf("message %d: %s (%s)", m.ID, m.Status, m.LastError)
		}
	}
}

func TestOutbox_PermanentErrorsAreKept(t *testing.T) {
	for _, code := range []string{"channel_not_found", "invalid_auth", "invalid_blocks"} {
		t.Run(code, func(t *testing.T) {
			e := newOutbox(t)
			e.slack.Script(code)
			e.enqueue(t, "bad", "next")
			e.drain(t, time.Minute)
			ms, _ := e.st.Messages(0)
			var bad, next store.Message
			for _, m := range ms {
				if m.Text == "bad" {
					bad = m
				} else {
					next = m
				}
			}
			if bad.Status != store.Failed || !strings.Contains(bad.LastError, code) || bad.Attempts != 1 {
				t.Errorf("bad message: %+v", bad)
			}
			if next.Status != store.Sent {
				t.Errorf("a permanent failure held back the next message: %+v", next)
			}
		})
	}
}

func TestOutbox_GivesUpAfterMaxAge(t *testing.T) {
	e := newOutbox(t)
	e.slack.SetDown(true)
	e.enqueue(t, "old")
	e.drain(t, alerts.MaxAge+time.Hour)
	ms, _ := e.st.Messages(0)
	if ms[0].Status != store.Failed || !strings.Contains(ms[0].LastError, "undelivered for 24h") {
		t.Errorf("message %+v", ms[0])
	}
}

// failingOutbox lets Slack accept a post and then fails to record it, as a
// crash between the post and the record would.
type failingOutbox struct {
	*store.Store
	fail bool
}

func (f *failingOutbox) UpdateMessage(m store.Message) error {
	if f.fail && m.Status == store.Sent {
		return errors.New("killed before the record")
	}
	return f.Store.UpdateMessage(m)
}

// Issue 19 item 11: a crash between Slack accepting a post and the store
// recording it does not post the message again: the attempt was recorded
// before the post, and the restarted sender finds the message in the
// channel by its metadata. (Before the fix: delivered [a a b].)
func TestOutbox_KillBetweenPostAndRecord(t *testing.T) {
	e := newOutbox(t)
	e.enqueue(t, "a", "b")
	fo := &failingOutbox{Store: e.st, fail: true}
	e.sender.Outbox = fo
	if _, err := e.sender.DeliverDue(context.Background()); err == nil {
		t.Fatal("the simulated crash did not surface")
	}
	e.restart() // a fresh sender and notifier over the same store
	e.drain(t, time.Minute)
	got := e.slack.Texts()
	if strings.Join(got, ",") != "a,b" {
		t.Errorf("delivered %v, want each message once: a,b", got)
	}
	for _, m := range mustMessages(t, e.st) {
		if m.Status != store.Sent || m.TS == "" || m.Channel != slacktest.ChannelID {
			t.Errorf("message %q: %s, ts %q in %q; want sent with its ts", m.Text, m.Status, m.TS, m.Channel)
		}
	}
}

func mustMessages(t *testing.T, st *store.Store) []store.Message {
	t.Helper()
	ms, err := st.Messages(0)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err       error
		wait      time.Duration
		permanent bool
	}{
		{&slack.RateLimitedError{RetryAfter: 3 * time.Second}, 3 * time.Second, false},
		{slack.StatusCodeError{Code: 503, Status: "503"}, 0, false},
		{slack.StatusCodeError{Code: 404, Status: "404"}, 0, true},
		{slack.SlackErrorResponse{Err: "channel_not_found"}, 0, true},
		{slack.SlackErrorResponse{Err: "internal_error"}, 0, false},
		{&url.Error{Op: "Post", URL: "x", Err: errors.New("connection refused")}, 0, false},
	} {
		w, p := alerts.Classify(c.err)
		if w != c.wait || p != c.permanent {
			t.Errorf("%v: wait %v permanent %v, want %v %v", c.err, w, p, c.wait, c.permanent)
		}
	}
}
