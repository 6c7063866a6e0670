package alerts_test

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/alerts"
)

var update = flag.Bool("update", false, "rewrite golden files")

func choice(key string, cost float64) *alerts.Choice {
	return &alerts.Choice{Key: key, Card: "A100-80GB-SXM", Source: "runpod", OfferID: key, Mode: pricewatch.ModeOnDemand,
		PricePerGPUHour: cost * 3, CostPerMillionTokens: cost, Currency: "USD"}
}

func TestDecide(t *testing.T) {
	all := func(string) bool { return true }
	none := func(string) bool { return false }
	for _, c := range []struct {
		name      string
		last, cur *alerts.Choice
		present   func(string) bool
		want      alerts.Kind
	}{
		{"NothingAtAll", nil, nil, all, alerts.Nothing},
		{"FirstBestIsBaseline", nil, choice("a", 1), all, alerts.Baseline},
		{"SameOffer", choice("a", 1), choice("a", 0.5), all, alerts.Nothing},
		{"OtherOfferCheaperByThreshold", choice("a", 1), choice("b", 0.97), all, alerts.Cheaper},
		{"OtherOfferCheaperBelowThreshold", choice("a", 1), choice("b", 0.971), all, alerts.Nothing},
		{"OtherOfferDearer", choice("a", 1), choice("b", 1.2), all, alerts.Nothing},
		{"OldBestVanished", choice("a", 1), choice("b", 1.2), none, alerts.Vanished},
		{"OldBestVanishedNothingLeft", choice("a", 1), nil, none, alerts.Vanished},
		{"NoCurrentButOldPresent", choice("a", 1), nil, all, alerts.Nothing},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := alerts.Decide(c.last, c.cur, c.present, 3)
			if d.Kind != c.want {
				t.Errorf("kind = %s, want %s", d.Kind, c.want)
			}
		})
	}
}

func TestChangeMessage_Golden(t *testing.T) {
	old := &alerts.Choice{Key: "runpod/NVIDIA A100-SXM4-80GB/secure/-/ondemand", Card: "A100-80GB-SXM", Source: "runpod",
		OfferID: "NVIDIA A100-SXM4-80GB/secure", Mode: pricewatch.ModeOnDemand, PricePerGPUHour: 1.74, CostPerMillionTokens: 0.1183, Currency: "USD"}
	cur := &alerts.Choice{Key: "vast/123/Texas, US/ondemand", Card: "RTX-4090", Source: "vast", OfferID: "123", Region: "Texas, US <&>",
		Mode: pricewatch.ModeOnDemand, PricePerGPUHour: 0.29, CostPerMillionTokens: 0.0455, Currency: "USD"}
	for _, c := range []struct {
		name string
		d    alerts.Decision
	}{
		{"cheaper", alerts.Decision{Kind: alerts.Cheaper, Old: old, New: cur, ChangePct: -61.54}},
		{"vanished", alerts.Decision{Kind: alerts.Vanished, Old: old, New: nil}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := alerts.ChangeMessage("lora-7b/ondemand", c.d)
			if m.Text == "" || len(m.Blocks) == 0 {
				t.Fatal("empty message")
			}
			for _, b := range m.Blocks {
				if sec, ok := b.(*slack.SectionBlock); ok {
					for _, f := range sec.Fields {
						if err := f.Validate(); err != nil {
							t.Errorf("field %q: %v", f.Text, err)
						}
					}
				}
			}
			texts := []string{m.Text}
			for _, b := range m.Blocks {
				if sec, ok := b.(*slack.SectionBlock); ok {
					for _, f := range sec.Fields {
						texts = append(texts, f.Text)
					}
				}
			}
			for _, s := range texts {
				if strings.ContainsAny(s, "<>") {
					t.Errorf("dynamic text is not escaped: %q", s)
				}
			}
			golden(t, filepath.Join("testdata", c.name+".json"), mustJSON(t, m))
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func golden(t *testing.T, file string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read golden (go test -update creates it): %v", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs:\n%s", file, got)
	}
}

// fakeSlack is a loopback Slack Web API: chat.postMessage answers ok, or
// fails while failing is set.
type fakeSlack struct {
	mu      sync.Mutex
	posts   []url.Values
	failing bool
}

func (f *fakeSlack) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path != "/chat.postMessage" {
		http.NotFound(w, r)
		return
	}
	if f.failing {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	body, _ := io.ReadAll(r.Body)
	v, _ := url.ParseQuery(string(body))
	f.posts = append(f.posts, v)
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"ok":true,"channel":"C1","ts":"1700000000.000100"}`)
}

func TestSlackNotifier_BotToken(t *testing.T) {
	fake := &fakeSlack{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	n := alerts.NewSlack(alerts.SlackConfig{Token: "xoxb-test", Channel: "#gpu", APIURL: srv.URL})
	m := alerts.ChangeMessage("w", alerts.Decision{Kind: alerts.Cheaper, Old: choice("a", 1), New: choice("b", 0.5), ChangePct: -50})
	if err := n.Notify(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if len(fake.posts) != 1 {
		t.Fatalf("posts = %d", len(fake.posts))
	}
	p := fake.posts[0]
	if p.Get("channel") != "#gpu" || p.Get("text") != m.Text || !strings.Contains(p.Get("blocks"), `"type":"header"`) {
		t.Errorf("post = %v", p)
	}
	fake.failing = true
	if err := n.Notify(context.Background(), m); err == nil {
		t.Error("want an error when Slack answers 500")
	}
}

func TestSlackNotifier_WebhookErrorHidesURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
	}))
	defer srv.Close()
	secret := srv.URL + "/services/T000/B000/XXXXSECRET"
	n := alerts.NewSlack(alerts.SlackConfig{WebhookURL: secret})
	err := n.Notify(context.Background(), alerts.Message{Text: "hi"})
	if err == nil {
		t.Fatal("want an error")
	}
	if strings.Contains(err.Error(), "XXXXSECRET") {
		t.Errorf("error leaks the webhook URL: %v", err)
	}
	// A closed server yields a net/url error that would quote the URL.
	srv.Close()
	err = n.Notify(context.Background(), alerts.Message{Text: "hi"})
	if err == nil || strings.Contains(err.Error(), "XXXXSECRET") {
		t.Errorf("error = %v", err)
	}
}

func TestNewSlack_NothingConfigured(t *testing.T) {
	if n := alerts.NewSlack(alerts.SlackConfig{}); n != nil {
		t.Errorf("want nil notifier, got %T", n)
	}
}

var _ = time.Second
