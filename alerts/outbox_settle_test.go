package alerts_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A post Slack answered 500 may have landed: the sender says what comes
// next and when — a lookup in the channel 30 s after the post, not "retry
// in 5s" — and m2 waits for it (one channel: the order is kept). The
// lookup finds nothing (the 500 posted nothing), m1 is posted again, then
// m2: each once, in order.
func TestOutbox_UnansweredPostSaysWhenItIsLookedUp(t *testing.T) {
	e := newOutbox(t)
	var log syncBuf
	e.sender.Log = slog.New(slog.NewTextHandler(&log, nil))
	e.slack.Script("500")
	e.enqueue(t, "m1", "m2")
	wait, err := e.sender.DeliverDue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := t0.Add(30 * time.Second).UTC().Format(time.RFC3339)
	if wait != 30*time.Second || !strings.Contains(log.String(), "looking it up in the channel before posting again") ||
		!strings.Contains(log.String(), "lookup_at="+want) || strings.Contains(log.String(), "will retry") {
		t.Errorf("wait %v; log:\n%s\nwant a lookup at %s", wait, log.String(), want)
	}
	if got := e.slack.Texts(); len(got) != 0 {
		t.Errorf("posted before the lookup: %v", got)
	}
	e.drain(t, time.Hour)
	if got := e.slack.Texts(); strings.Join(got, ",") != "m1,m2" {
		t.Errorf("delivered %v, want m1,m2 once each in order", got)
	}
}
