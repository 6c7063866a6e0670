package alerts_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/alerts/slacktest"
	"github.com/pricewatch/pricewatch/store"
)

// restart replaces the sender and its notifier by fresh ones over the same
// store, as a new process would (nothing is remembered but the store).
func (e *outboxEnv) restart() {
	n := alerts.NewSlack(alerts.SlackConfig{Token: "xoxb-test", Channel: "#gpu", APIURL: e.url})
	e.sender = &alerts.Sender{Outbox: e.st, Notifier: n, Log: e.sender.Log, Now: e.clock.Now}
}

// deadOutbox is the store as a killed process sees it: once dead, nothing
// more is recorded.
type deadOutbox struct {
	*store.Store
	dead atomic.Bool
}

func (d *deadOutbox) UpdateMessage(m store.Message) error {
	if d.dead.Load() {
		return errors.New("killed")
	}
	return d.Store.UpdateMessage(m)
}

// A slow Slack (answers after 200 ms), the process killed 30 ms into the
// post: Slack still posts the message after the process is gone. The
// restarted sender must not look before that post can have landed, and
// then finds it instead of posting again. (Checked to fail: with the
// settle wait removed the lookup runs at once, finds nothing and the
// message is posted twice: [a a b]; without include_all_metadata in the
// lookup the fake withholds the metadata and it is posted twice too.)
func TestOutbox_SlowSlackKilledMidPost(t *testing.T) {
	e := newOutbox(t)
	e.slack.Delay = 200 * time.Millisecond
	e.enqueue(t, "a", "b")
	do := &deadOutbox{Store: e.st}
	e.sender.Outbox = do
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := e.sender.DeliverDue(ctx); done <- err }()
	time.Sleep(30 * time.Millisecond)
	do.dead.Store(true) // the kill: no write after this instant
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the killed sender reported no error")
	}
	e.restart()
	wait, err := e.sender.DeliverDue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if wait <= 0 || wait > alerts.DefaultSettle || e.slack.Calls("conversations.history") != 0 {
		t.Fatalf("restart: wait %v, %d lookups; want to wait for the post in flight before looking",
			wait, e.slack.Calls("conversations.history"))
	}
	waitFor(t, func() bool { return len(e.slack.Posted()) == 1 }) // Slack posts it after the kill
	e.clock.Advance(wait)
	e.drain(t, time.Minute)
	if got := e.slack.Texts(); strings.Join(got, ",") != "a,b" {
		t.Errorf("channel holds %v, want each message once: a,b", got)
	}
	posted := e.slack.Posted()
	for _, m := range mustMessages(t, e.st) {
		if m.Text == "a" && (m.Status != store.Sent || m.TS != posted[0].TS) {
			t.Errorf("a: %s with ts %q, want sent with the ts Slack gave it (%s)", m.Status, m.TS, posted[0].TS)
		}
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("timed out")
		}
	}
}

// A lookup that fails for now (Slack answers 500, then rate limits) is
// retried; nothing is posted until it succeeds, and the message is then
// found: once in the channel.
func TestOutbox_LookupRetriedWhileSlackFails(t *testing.T) {
	e := newOutbox(t)
	e.enqueue(t, "a", "b")
	e.sender.Outbox = &failingOutbox{Store: e.st, fail: true}
	if _, err := e.sender.DeliverDue(context.Background()); err == nil {
		t.Fatal("the simulated crash did not surface")
	}
	e.restart()
	e.slack.ScriptHistory("500", "429:30", "500")
	e.drain(t, time.Hour)
	if got := e.slack.Texts(); strings.Join(got, ",") != "a,b" {
		t.Errorf("channel holds %v, want a,b", got)
	}
	if n := e.slack.Calls("conversations.history"); n != 4 {
		t.Errorf("%d lookups, want 3 failed and 1 that found the post", n)
	}
}

// A lookup that cannot work (the token lacks channels:history) posts the
// message again, with a warning: at least once, never lost and never
// holding the later messages back.
func TestOutbox_LookupImpossiblePostsAgainWithWarning(t *testing.T) {
	e := newOutbox(t)
	var logs syncBuf
	e.sender.Log = slog.New(slog.NewTextHandler(&logs, nil))
	e.enqueue(t, "a", "b")
	e.sender.Outbox = &failingOutbox{Store: e.st, fail: true}
	if _, err := e.sender.DeliverDue(context.Background()); err == nil {
		t.Fatal("the simulated crash did not surface")
	}
	e.restart()
	e.slack.ScriptHistory("missing_scope")
	e.drain(t, time.Hour)
	if got := e.slack.Texts(); strings.Join(got, ",") != "a,a,b" {
		t.Errorf("channel holds %v, want a posted again and b: a,a,b", got)
	}
	if !strings.Contains(logs.String(), "may appear twice") || !strings.Contains(logs.String(), "missing_scope") {
		t.Errorf("no warning naming the cause:\n%s", logs.String())
	}
}

// Incoming webhooks cannot be read back: a crash between the post and its
// record posts the message again, with a warning (the documented limit).
func TestOutbox_WebhookCannotBeLookedUp(t *testing.T) {
	e := newOutbox(t)
	var mu sync.Mutex
	var got []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p struct{ Text string }
		json.NewDecoder(r.Body).Decode(&p)
		mu.Lock()
		got = append(got, p.Text)
		mu.Unlock()
		w.Write([]byte("ok"))
	}))
	t.Cleanup(hook.Close)
	var logs syncBuf
	e.sender.Log = slog.New(slog.NewTextHandler(&logs, nil))
	e.sender.Notifier = alerts.NewSlack(alerts.SlackConfig{WebhookURL: hook.URL})
	e.enqueue(t, "a")
	e.sender.Outbox = &failingOutbox{Store: e.st, fail: true}
	if _, err := e.sender.DeliverDue(context.Background()); err == nil {
		t.Fatal("the simulated crash did not surface")
	}
	e.sender.Outbox = e.st
	e.drain(t, time.Minute)
	if strings.Join(got, ",") != "a,a" || !strings.Contains(logs.String(), "cannot look it up") {
		t.Errorf("webhook got %v, log:\n%s\nwant a posted again with a warning", got, logs.String())
	}
}

// The post carries the client id in its metadata, and the fake, like
// Slack, returns metadata from conversations.history only when asked with
// include_all_metadata.
func TestSlackPost_CarriesClientIDInMetadata(t *testing.T) {
	e := newOutbox(t)
	e.enqueue(t, "a")
	e.drain(t, time.Minute)
	p := e.slack.Posted()
	ms := mustMessages(t, e.st)
	if len(p) != 1 || p[0].Metadata.EventType != alerts.MetadataEventType || p[0].Metadata.EventPayload["id"] == "" {
		t.Fatalf("posted %+v, want the client id in pricewatch_alert metadata", p)
	}
	if ms[0].Attempt != nil || ms[0].TS != p[0].TS {
		t.Errorf("stored %+v, want the attempt cleared and Slack's ts", ms[0])
	}
	for _, c := range []struct {
		all  string
		want bool
	}{{"1", true}, {"0", false}} {
		resp, err := http.PostForm(e.url+"/conversations.history", url.Values{
			"channel": {slacktest.ChannelID}, "inclusive": {"1"}, "include_all_metadata": {c.all}})
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			Messages []map[string]any `json:"messages"`
		}
		json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if len(h.Messages) != 1 {
			t.Fatalf("include_all_metadata=%s: %v, want the one message", c.all, h.Messages)
		}
		if _, has := h.Messages[0]["metadata"]; has != c.want {
			t.Errorf("include_all_metadata=%s: %v, want metadata %v", c.all, h.Messages, c.want)
		}
	}
}

// syncBuf is a log buffer safe for the sender's goroutines.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// The lookup needs the channel's id: a configured id is used as it is, a
// name is resolved once with conversations.list.
func TestSlackFind_ChannelNameOrID(t *testing.T) {
	for _, c := range []struct {
		channel string
		lists   int
	}{{"#" + slacktest.ChannelName, 1}, {slacktest.ChannelID, 0}} {
		e := newOutbox(t)
		e.enqueue(t, "a")
		e.drain(t, time.Minute)
		id := mustMessages(t, e.st)[0]
		f := alerts.NewSlack(alerts.SlackConfig{Token: "xoxb-test", Channel: c.channel, APIURL: e.url}).(alerts.Finder)
		for range 2 {
			r, found, err := f.Find(context.Background(), e.slack.Posted()[0].Metadata.EventPayload["id"].(string),
				t0.Add(-time.Minute), t0.Add(time.Minute))
			if err != nil || !found || r.TS != id.TS || r.Channel != slacktest.ChannelID {
				t.Fatalf("%s: %+v %v %v, want the message at %s", c.channel, r, found, err, id.TS)
			}
		}
		if n := e.slack.Calls("conversations.list"); n != c.lists {
			t.Errorf("%s: %d conversations.list calls, want %d", c.channel, n, c.lists)
		}
	}
}
