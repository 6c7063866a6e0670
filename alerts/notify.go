package alerts

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// Notifier delivers a message. An error means it was not delivered.
type Notifier interface {
	Notify(ctx context.Context, m Message) error
}

// SlackConfig selects bot-token or webhook delivery.
type SlackConfig struct {
	Token      string // bot token: chat.postMessage to Channel
	Channel    string
	WebhookURL string // incoming webhook (used when no token)
	APIURL     string // Slack Web API base override (tests)
	HTTPClient *http.Client
}

// NewSlack returns a notifier for the config, or nil when neither a token
// nor a webhook is configured (alerts are then only logged).
func NewSlack(c SlackConfig) Notifier {
	hc := c.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 15 * time.Second}
	}
	switch {
	case c.Token != "":
		opts := []slack.Option{slack.OptionHTTPClient(hc)}
		if c.APIURL != "" {
			opts = append(opts, slack.OptionAPIURL(strings.TrimRight(c.APIURL, "/")+"/"))
		}
		return &botNotifier{api: slack.New(c.Token, opts...), channel: c.Channel}
	case c.WebhookURL != "":
		return &webhookNotifier{url: c.WebhookURL, hc: hc}
	}
	return nil
}

type botNotifier struct {
	api     *slack.Client
	channel string
}

func (n *botNotifier) Notify(ctx context.Context, m Message) error {
	_, _, err := n.api.PostMessageContext(ctx, n.channel,
		slack.MsgOptionText(m.Text, false), slack.MsgOptionBlocks(m.Blocks...))
	if err != nil {
		return fmt.Errorf("slack chat.postMessage: %w", err)
	}
	return nil
}

type webhookNotifier struct {
	url string
	hc  *http.Client
}

func (n *webhookNotifier) Notify(ctx context.Context, m Message) error {
	err := slack.PostWebhookCustomHTTPContext(ctx, n.url, n.hc, &slack.WebhookMessage{
		Text: m.Text, Blocks: &slack.Blocks{BlockSet: m.Blocks},
	})
	if err != nil {
		// The webhook URL is a secret: a net/url error carries it into
		// log lines, so replace it there and keep the error's type for
		// Classify.
		var ue *url.Error
		if errors.As(err, &ue) {
			red := *ue
			red.URL = "<webhook-url>"
			return fmt.Errorf("slack webhook: %w", &red)
		}
		return fmt.Errorf("slack webhook: %w", redactedError{err, n.url})
	}
	return nil
}

// redactedError hides a secret in an error's text and keeps the chain.
type redactedError struct {
	err    error
	secret string
}

func (r redactedError) Error() string { return redact(r.err.Error(), r.secret) }
func (r redactedError) Unwrap() error { return r.err }

func redact(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "<webhook-url>")
}
