package httpapi_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pricewatch/pricewatch/httpapi"
)

// slackRequest is one request as Slack sends it: a form body, its
// timestamp and the hex HMAC of both.
type slackRequest struct {
	body, ts, hexSig string
}

func signForm(form url.Values, secret string, at time.Time) slackRequest {
	body := form.Encode()
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + ts + ":" + body))
	return slackRequest{body: body, ts: ts, hexSig: hex.EncodeToString(mac.Sum(nil))}
}

// request builds the HTTP request with the signature spelled as given.
func (s slackRequest) request(sig string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/slack/command", strings.NewReader(s.body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", s.ts)
	req.Header.Set("X-Slack-Signature", "v0="+sig)
	return req
}

func silenceForm(trigger string) url.Values {
	return url.Values{"command": {"/pricewatch"}, "text": {"silence * 2h deploying"}, "user_name": {"ana"}, "team_id": {"T1"},
		"channel_id": {"C1"}, "trigger_id": {trigger}, "response_url": {"https://hooks.slack.com/commands/x"}}
}

// restart serves the same pipeline and store with a new server: what a
// restarted daemon has (nothing held in memory).
func (h *harness) restart(t *testing.T) *harness {
	t.Helper()
	srv, err := httpapi.New(h.env.Pipeline, prometheus.NewRegistry(), h.env.Registry, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return &harness{env: h.env, srv: srv}
}

func (h *harness) silences(t *testing.T) int {
	t.Helper()
	ss, err := h.env.Store.Silences()
	if err != nil {
		t.Fatal(err)
	}
	return len(ss)
}

// One signed `/pricewatch silence` played again (hex upper-cased, after a
// restart) is refused with 401 and never makes a second silence.
func TestSlash_ReplaysRefused(t *testing.T) {
	h := slashHarness(t, signingSecret)
	req := signForm(silenceForm("13345224609.738474920.8088930838d88f008e0"), signingSecret, time.Now())
	rec := h.serve(req.request(req.hexSig))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "Silenced *") {
		t.Fatalf("first: %d %s", rec.Code, rec.Body)
	}
	for _, c := range []struct {
		name string
		h    *harness
		sig  string
	}{
		{"Same", h, req.hexSig},
		{"UpperCaseHex", h, strings.ToUpper(req.hexSig)},
		{"MixedCaseHex", h, strings.ToUpper(req.hexSig[:32]) + req.hexSig[32:]},
		{"AfterRestart", h.restart(t), req.hexSig},
		{"AfterRestartUpperCase", h.restart(t), strings.ToUpper(req.hexSig)},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := c.h.serve(req.request(c.sig))
			if rec.Code != 401 || !strings.Contains(rec.Body.String(), "replayed") {
				t.Errorf("%d %s, want 401 replayed", rec.Code, rec.Body)
			}
		})
	}
	if n := h.silences(t); n != 1 {
		t.Errorf("%d silences after the replays, want 1", n)
	}
}

// The same Slack request signed again (a retry at another timestamp)
// answers with the silence it already made, even after a restart; a new
// invocation (another trigger_id) makes a new one.
func TestSlash_SilenceIdempotentOnRequest(t *testing.T) {
	h := slashHarness(t, signingSecret)
	form := silenceForm("13345224609.738474920.8088930838d88f008e0")
	reply := func(h *harness, form url.Values, at time.Time) string {
		t.Helper()
		req := signForm(form, signingSecret, at)
		rec := h.serve(req.request(req.hexSig))
		if rec.Code != 200 {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		var r slashReply
		json.Unmarshal(rec.Body.Bytes(), &r)
		return r.Text
	}
	first := reply(h, form, time.Now().Add(-2*time.Second))
	if !strings.Contains(first, "(silence 1)") {
		t.Fatalf("first: %s", first)
	}
	if again := reply(h, form, time.Now().Add(-time.Second)); again != first {
		t.Errorf("retry: %q, want the first answer %q", again, first)
	}
	if again := reply(h.restart(t), form, time.Now()); again != first {
		t.Errorf("retry after a restart: %q, want %q", again, first)
	}
	if n := h.silences(t); n != 1 {
		t.Errorf("%d silences from one request, want 1", n)
	}
	if other := reply(h, silenceForm("13345224609.738474920.other"), time.Now()); !strings.Contains(other, "(silence 2)") {
		t.Errorf("a new invocation: %s", other)
	}
}
