package alerts_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/alerts"
)

func TestSlackNotifier_BotToken(t *testing.T) {
	var got url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got, _ = url.ParseQuery(string(b))
		io.WriteString(w, `{"ok":true,"channel":"C1","ts":"1.2"}`)
	}))
	defer srv.Close()
	n := alerts.NewSlack(alerts.SlackConfig{Token: "xoxb-test", Channel: "#gpu", APIURL: srv.URL})
	m := alerts.DigestMessages(digestData(2))[0]
	if err := n.Notify(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if got.Get("channel") != "#gpu" || got.Get("token") != "xoxb-test" || got.Get("text") != m.Text ||
		!strings.Contains(got.Get("blocks"), `"type":"table"`) || !strings.Contains(got.Get("blocks"), `"type":"data_visualization"`) {
		t.Errorf("chat.postMessage form: %v", got)
	}
}

func TestSlackNotifier_Webhook(t *testing.T) {
	var body map[string]json.RawMessage
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&body)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	n := alerts.NewSlack(alerts.SlackConfig{WebhookURL: srv.URL + "/services/T/B/x"})
	m := alerts.DigestMessages(digestData(2))[0]
	if err := n.Notify(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	var blocks []map[string]any
	json.Unmarshal(body["blocks"], &blocks)
	if len(blocks) != len(m.Blocks) || !strings.Contains(string(body["text"]), "daily digest") {
		t.Errorf("webhook body: %d blocks, text %s", len(blocks), body["text"])
	}
}

func TestSlackNotifier_WebhookErrorHidesURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
	}))
	secret := srv.URL + "/services/T000/B000/XXXXSECRET"
	n := alerts.NewSlack(alerts.SlackConfig{WebhookURL: secret})
	err := n.Notify(context.Background(), alerts.Message{Text: "hi"})
	if err == nil || strings.Contains(err.Error(), "XXXXSECRET") {
		t.Fatalf("err = %v", err)
	}
	if _, permanent := alerts.Classify(err); !permanent {
		t.Errorf("a 403 from a webhook is permanent: %v", err)
	}
	srv.Close() // a net/url error would quote the URL
	err = n.Notify(context.Background(), alerts.Message{Text: "hi"})
	if err == nil || strings.Contains(err.Error(), "XXXXSECRET") {
		t.Errorf("err = %v", err)
	}
	if _, permanent := alerts.Classify(err); permanent {
		t.Errorf("a refused connection is worth a retry: %v", err)
	}
}

func TestNewSlack_NothingConfigured(t *testing.T) {
	if n := alerts.NewSlack(alerts.SlackConfig{}); n != nil {
		t.Errorf("want nil notifier, got %T", n)
	}
}
