package httpapi_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
	"github.com/pricewatch/pricewatch/store"
)

const signingSecret = "8f742231b10e8888abcd99yyyzzz85a5"

func slashHarness(t *testing.T, secret string) *harness {
	t.Helper()
	env := pipelinetest.New(t, nil, func(c *config.Config) { c.Slack.SigningSecret = secret; c.Server.APIToken = "tok" })
	env.Round(t)
	srv, err := httpapi.New(env.Pipeline, env.Registry, env.Registry, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return &harness{env: env, srv: srv}
}

// signed builds a slash-command request signed the way Slack signs it:
// HMAC-SHA256 over "v0:<timestamp>:<body>".
func signed(text, secret string, at time.Time) *http.Request {
	form := url.Values{"command": {"/pricewatch"}, "text": {text}, "user_name": {"ana"}, "team_id": {"T1"},
		"channel_id": {"C1"}, "response_url": {"https://hooks.slack.com/commands/x"}}
	req := signForm(form, secret, at)
	return req.request(req.hexSig)
}

func (h *harness) serve(req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, req)
	return rec
}

type slashReply struct {
	ResponseType string `json:"response_type"`
	Text         string `json:"text"`
}

func TestSlash_Commands(t *testing.T) {
	h := slashHarness(t, signingSecret)
	for _, c := range []struct{ text, want string }{
		{"best", "Best lora-7b per card"},
		{"best serve-7b RTX-4090", "RTX-4090"},
		{"best nope", "unknown workload"},
		{"plan full-ft-7b 15e6 CNY", "Plan: full-ft-7b, 15e6"},
		{"plan serve-7b 300", "GPUs needed"},
		// strconv reads NaN and Inf: refused naming the field, like 1e300.
		{"plan serve-7b 1e300", "Cannot plan: peak_tokens_per_second"},
		{"plan serve-7b NaN", "Cannot plan: peak_tokens_per_second"},
		{"plan serve-7b -Inf", "Cannot plan: peak_tokens_per_second"},
		{"plan lora-7b Inf", "Cannot plan: tokens"},
		{"plan lora-7b NaN", "Cannot plan: tokens"},
		{"status", "Sources"},
		{"silence lora-7b/spot 2h migrating the cluster", "Silenced lora-7b/spot"},
		{"silence list", "migrating the cluster"},
		{"silence nosuch 2h x", "unknown watch"},
		{"", "Usage"},
		{"dance", "Unknown command"},
	} {
		t.Run(c.text, func(t *testing.T) {
			start := time.Now()
			rec := h.serve(signed(c.text, signingSecret, time.Now()))
			if rec.Code != 200 {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			var r slashReply
			json.Unmarshal(rec.Body.Bytes(), &r)
			if r.ResponseType != "ephemeral" || !strings.Contains(r.Text, c.want) {
				t.Errorf("reply %+v, want it to contain %q", r, c.want)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("answered in %s; Slack waits 3 s", d)
			}
		})
	}
	// The silence made through Slack is stored.
	ss, _ := h.env.Store.Silences()
	if len(ss) != 1 || ss[0].CreatedBy != "slack:ana" {
		t.Errorf("silences %+v", ss)
	}
}

func TestSlash_RefusesForgedUnsignedStaleAndReplayed(t *testing.T) {
	h := slashHarness(t, signingSecret)
	unsigned := signed("best", signingSecret, time.Now())
	unsigned.Header.Del("X-Slack-Signature")
	unsigned.Header.Del("X-Slack-Request-Timestamp")
	tampered := signed("best", signingSecret, time.Now())
	tampered.Body = http.NoBody
	valid := func() *http.Request { return signed("status", signingSecret, time.Now().Add(-time.Second)) }
	first := valid()
	again := valid() // same second, same body: the same signature
	for _, c := range []struct {
		name string
		req  *http.Request
		code int
	}{
		{"Unsigned", unsigned, 401},
		{"WrongSecret", signed("best", "not-the-secret", time.Now()), 401},
		{"Stale", signed("best", signingSecret, time.Now().Add(-10*time.Minute)), 401},
		{"TamperedBody", tampered, 401},
		{"First", first, 200},
		{"Replayed", again, 401},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := h.serve(c.req)
			if rec.Code != c.code {
				t.Errorf("%d %s, want %d", rec.Code, rec.Body, c.code)
			}
			if c.code == 401 && !strings.Contains(rec.Body.String(), `"error"`) {
				t.Errorf("not a JSON error: %s", rec.Body)
			}
		})
	}
	big := signed("best "+strings.Repeat("x", 20<<10), signingSecret, time.Now())
	if rec := h.serve(big); rec.Code != 413 {
		t.Errorf("oversized body: %d", rec.Code)
	}
	off := slashHarness(t, "")
	if rec := off.serve(signed("best", signingSecret, time.Now())); rec.Code != 403 {
		t.Errorf("without a signing secret: %d", rec.Code)
	}
}

func TestAlertsAndSilencesEndpoints(t *testing.T) {
	h := slashHarness(t, signingSecret)
	code, body := h.do(t, http.MethodPost, "/v1/digest", "", "")
	if code != 401 {
		t.Errorf("digest without the token: %d %s", code, body)
	}
	code, body = h.do(t, http.MethodPost, "/v1/digest", "", "tok")
	if code != 200 || !strings.Contains(string(body), `"queued"`) {
		t.Fatalf("digest: %d %s", code, body)
	}
	code, body = h.do(t, http.MethodGet, "/v1/alerts?status=pending", "", "")
	var a httpapi.AlertsResponse
	json.Unmarshal(body, &a)
	if code != 200 || a.Pending < 1 || len(a.Messages) < 1 || a.Messages[0].Kind != "digest" {
		t.Errorf("alerts: %d %+v", code, a)
	}
	if code, _ := h.do(t, http.MethodGet, "/v1/alerts?status=lost", "", ""); code != 400 {
		t.Errorf("bad status: %d", code)
	}
	// A message only logged (no Slack configured) is listed under its own
	// status, not under sent, and the dashboard shows it as such. Before
	// the logged status, ?status=logged was a 400.
	ms, err := h.env.Store.Messages(0)
	if err != nil || len(ms) == 0 {
		t.Fatalf("outbox: %v %v", ms, err)
	}
	ms[0].Status = store.Logged
	if err := h.env.Store.UpdateMessage(ms[0]); err != nil {
		t.Fatal(err)
	}
	code, body = h.do(t, http.MethodGet, "/v1/alerts?status=logged", "", "")
	a = httpapi.AlertsResponse{}
	json.Unmarshal(body, &a)
	if code != 200 || len(a.Messages) != 1 || a.Messages[0].ID != ms[0].ID || a.Messages[0].Status != "logged" {
		t.Errorf("alerts?status=logged: %d %s", code, body)
	}
	code, body = h.do(t, http.MethodGet, "/v1/alerts?status=sent", "", "")
	if code != 200 || strings.Contains(string(body), `"logged"`) {
		t.Errorf("alerts?status=sent lists a logged message: %d %s", code, body)
	}
	if code, page := h.page(t, "/alerts"); code != 200 || !strings.Contains(page, `<tr class="status-logged">`) || !strings.Contains(page, "no Slack is configured") {
		t.Errorf("/alerts does not show the logged message: %d", code)
	}
	code, body = h.do(t, http.MethodPost, "/v1/silences", `{"watch":"*","for":"1h","reason":"deploy"}`, "tok")
	if code != 200 {
		t.Fatalf("add silence: %d %s", code, body)
	}
	if code, _ := h.do(t, http.MethodPost, "/v1/silences", `{"watch":"*","for":"1h","reason":"deploy"}`, ""); code != 401 {
		t.Errorf("add silence without the token: %d", code)
	}
	if code, body := h.do(t, http.MethodPost, "/v1/silences", `{"watch":"*","for":"1h","reason":"x"}]`, "tok"); code != 400 || !strings.Contains(string(body), "trailing data") {
		t.Errorf("trailing JSON after a silence: %d %s", code, body)
	}
	if code, body := h.do(t, http.MethodPost, "/v1/silences", `{"watch":"*","for":"forever","reason":"x"}`, "tok"); code != 400 || !strings.Contains(string(body), "for:") {
		t.Errorf("bad duration: %d %s", code, body)
	}
	code, body = h.do(t, http.MethodGet, "/v1/silences", "", "")
	if code != 200 || !strings.Contains(string(body), "deploy") {
		t.Errorf("list: %d %s", code, body)
	}
	if code, _ := h.do(t, http.MethodDelete, "/v1/silences/1", "", "tok"); code != 200 {
		t.Errorf("remove: %d", code)
	}
	if code, _ := h.do(t, http.MethodDelete, "/v1/silences/1", "", "tok"); code != 404 {
		t.Errorf("remove twice: %d", code)
	}
	if code, _ := h.do(t, http.MethodPut, "/v1/silences", "", "tok"); code != 405 {
		t.Errorf("PUT: %d", code)
	}
}
