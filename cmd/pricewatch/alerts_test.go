package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/store"
)

// TestDigestSend_SaysWhetherSent: digest --send without Slack settings says
// the messages were not sent and are kept as logged, and pricewatch alerts
// lists them so (offline and through the daemon); with Slack it says they
// were sent. Before the fix it printed "queued and delivered (see
// pricewatch alerts)" with no Slack, the messages were "sent" and there was
// no alerts command ("unknown command").
func TestDigestSend_SaysWhetherSent(t *testing.T) {
	t.Setenv(config.EnvSlackToken, "")
	t.Setenv(config.EnvSlackWebhook, "")
	db := filepath.Join(t.TempDir(), "pw.db")
	cfg := writeConfig(t, db, "http://127.0.0.1:1", "@every 1h")
	run := func(args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		err := Run(t.Context(), args, &out, &errOut)
		return out.String(), errOut.String(), err
	}
	if _, stderr, err := run("scrape", "--config", cfg, "--demo"); err != nil {
		t.Fatalf("scrape: %v\n%s", err, stderr)
	}
	_, stderr, err := run("digest", "--config", cfg, "--send")
	if err != nil {
		t.Fatalf("digest --send: %v\n%s", err, stderr)
	}
	m := regexp.MustCompile(`digest: (\d+) messages? not sent: no Slack configured \(messages kept in the outbox as logged; see GET /v1/alerts or pricewatch alerts\)`).FindStringSubmatch(stderr)
	if m == nil || strings.Contains(stderr, "delivered") {
		t.Fatalf("digest --send without Slack said:\n%s", stderr)
	}
	n, _ := strconv.Atoi(m[1])

	out, stderr, err := run("alerts", "--config", cfg, "--status", "logged", "--json")
	if err != nil {
		t.Fatalf("alerts: %v\n%s", err, stderr)
	}
	var logged httpapi.AlertsResponse
	if err := json.Unmarshal([]byte(out), &logged); err != nil {
		t.Fatalf("alerts --json: %v\n%s", err, out)
	}
	var digestIDs []uint64
	for _, msg := range logged.Messages {
		if msg.Status != store.Logged {
			t.Errorf("alerts --status logged lists %+v", msg)
		}
		if msg.Kind == "digest" {
			digestIDs = append(digestIDs, msg.ID)
		}
	}
	if n < 1 || len(digestIDs) != n {
		t.Errorf("digest said %d messages, alerts lists %d logged digest messages: %s", n, len(digestIDs), out)
	}
	out, _, err = run("alerts", "--config", cfg, "--limit", "3")
	if err != nil || !strings.Contains(out, "STATUS") || !strings.Contains(out, " logged ") ||
		!strings.Contains(out, "logged: not sent, no Slack configured") || strings.Count(strings.TrimSpace(out), "\n") > 5 {
		t.Errorf("alerts table (%v):\n%s", err, out)
	}
	_, _, offlineErr := run("alerts", "--config", cfg, "--status", "lost")
	if offlineErr == nil || exitCode(offlineErr) != 2 || !strings.Contains(offlineErr.Error(), "status must be pending, sent, logged or failed") {
		t.Errorf("alerts --status lost: %v", offlineErr)
	}

	// Through the daemon: the same messages (it may have logged more of
	// its own since), and the same usage error.
	d := startServe(t, "--config", cfg, "--demo")
	waitFor(t, 15*time.Second, "the first scrape", func() bool { return d.sourcesOK(t) })
	out, stderr, err = run("alerts", "--config", cfg, "--status", "logged", "--json", "--limit", "1000")
	if err != nil {
		t.Fatalf("alerts via the daemon: %v\n%s", err, stderr)
	}
	var viaDaemon httpapi.AlertsResponse
	json.Unmarshal([]byte(out), &viaDaemon)
	for _, id := range digestIDs {
		if !slices.ContainsFunc(viaDaemon.Messages, func(m store.Message) bool { return m.ID == id && m.Status == store.Logged }) {
			t.Errorf("the daemon's alerts lack logged digest message %d: %s", id, out)
		}
	}
	_, _, err = run("alerts", "--config", cfg, "--status", "lost")
	if err == nil || err.Error() != offlineErr.Error() || exitCode(err) != 2 {
		t.Errorf("alerts --status lost via the daemon: %v (offline: %v)", err, offlineErr)
	}
	d.stop(t)

	// With Slack configured the digest is sent, and says so.
	slack := &fakeSlack{}
	srv := httptest.NewServer(slack)
	defer srv.Close()
	t.Setenv(config.EnvSlackToken, "xoxb-e2e")
	db2 := filepath.Join(t.TempDir(), "pw.db")
	cfg2 := writeConfig(t, db2, srv.URL, "@every 1h")
	if _, stderr, err := run("scrape", "--config", cfg2, "--demo"); err != nil {
		t.Fatalf("scrape: %v\n%s", err, stderr)
	}
	_, stderr, err = run("digest", "--config", cfg2, "--send")
	if err != nil || !regexp.MustCompile(`digest: \d+ messages? sent to Slack\n`).MatchString(stderr) || slack.count() < 1 {
		t.Errorf("digest --send with Slack (%v, %d posts):\n%s", err, slack.count(), stderr)
	}
}
