package alerts

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// Notifier delivers a message. An error means it was not delivered.
type Notifier interface {
	Notify(ctx context.Context, m Message) error
}

// Receipt is where Slack put a posted message.
type Receipt struct{ Channel, TS string }

// MetadataEventType names pricewatch's message metadata; its payload's
// "id" is the outbox message's client id.
const MetadataEventType = "pricewatch_alert"

// Finder is a notifier that can tell whether a post reached the channel:
// Post carries clientID with the message, Find looks for it among the
// messages posted between from and to. Delivery through a Finder is
// exactly once across crashes; through any other notifier (incoming
// webhooks, whose posts cannot be read back) at least once.
type Finder interface {
	Notifier
	Post(ctx context.Context, m Message, clientID string) (Receipt, error)
	Find(ctx context.Context, clientID string, from, to time.Time) (r Receipt, found bool, err error)
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

	mu sync.Mutex
	id string // the channel's id, once known (conversations.history wants it)
}

func (n *botNotifier) Notify(ctx context.Context, m Message) error {
	_, err := n.Post(ctx, m, "")
	return err
}

// Post implements Finder: the client id goes into the message's metadata.
func (n *botNotifier) Post(ctx context.Context, m Message, clientID string) (Receipt, error) {
	opts := []slack.MsgOption{slack.MsgOptionText(m.Text, false), slack.MsgOptionBlocks(m.Blocks...)}
	if clientID != "" {
		opts = append(opts, slack.MsgOptionMetadata(slack.SlackMetadata{
			EventType: MetadataEventType, EventPayload: map[string]any{"id": clientID}}))
	}
	ch, ts, err := n.api.PostMessageContext(ctx, n.channel, opts...)
	if err != nil {
		return Receipt{}, fmt.Errorf("slack chat.postMessage: %w", err)
	}
	n.mu.Lock()
	n.id = ch
	n.mu.Unlock()
	return Receipt{Channel: ch, TS: ts}, nil
}

// Lookup bounds: a page of history, and the pages one lookup reads.
const (
	historyPage  = 200
	historyPages = 10
	channelPages = 20
)

// Find implements Finder: it reads the channel's history between from and
// to, metadata included, for the message carrying clientID.
func (n *botNotifier) Find(ctx context.Context, clientID string, from, to time.Time) (Receipt, bool, error) {
	ch, err := n.channelID(ctx)
	if err != nil {
		return Receipt{}, false, err
	}
	p := &slack.GetConversationHistoryParameters{ChannelID: ch, Oldest: slackTS(from), Latest: slackTS(to),
		Inclusive: true, Limit: historyPage, IncludeAllMetadata: true}
	for range historyPages {
		h, err := n.api.GetConversationHistoryContext(ctx, p)
		if err != nil {
			return Receipt{}, false, fmt.Errorf("slack conversations.history: %w", err)
		}
		for _, m := range h.Messages {
			if m.Metadata.EventType == MetadataEventType && m.Metadata.EventPayload["id"] == clientID {
				return Receipt{Channel: ch, TS: m.Timestamp}, true, nil
			}
		}
		if !h.HasMore || h.ResponseMetaData.NextCursor == "" {
			return Receipt{}, false, nil
		}
		p.Cursor = h.ResponseMetaData.NextCursor
	}
	return Receipt{}, false, permanentError{fmt.Errorf("slack conversations.history: more than %d messages between %s and %s",
		historyPage*historyPages, from.Format(time.RFC3339), to.Format(time.RFC3339))}
}

// channelIDPattern is the spelling of a channel id (public C…, private G…,
// direct D…); anything else is a name.
var channelIDPattern = regexp.MustCompile(`^[CGD][A-Z0-9]{6,}$`)

// channelID is the configured channel's id: the one the last post
// returned, the configured channel if it is one, else the channel of that
// name found by conversations.list (which needs channels:read, and
// groups:read for a private channel).
func (n *botNotifier) channelID(ctx context.Context) (string, error) {
	n.mu.Lock()
	id := n.id
	n.mu.Unlock()
	if id != "" {
		return id, nil
	}
	if channelIDPattern.MatchString(n.channel) {
		return n.channel, nil
	}
	name := strings.TrimPrefix(n.channel, "#")
	p := &slack.GetConversationsParameters{ExcludeArchived: true, Limit: 999, Types: []string{"public_channel", "private_channel"}}
	for range channelPages {
		chs, next, err := n.api.GetConversationsContext(ctx, p)
		if err != nil {
			return "", fmt.Errorf("slack conversations.list: %w", err)
		}
		for _, c := range chs {
			if c.Name == name {
				n.mu.Lock()
				n.id = c.ID
				n.mu.Unlock()
				return c.ID, nil
			}
		}
		if next == "" {
			break
		}
		p.Cursor = next
	}
	return "", permanentError{fmt.Errorf("slack conversations.list: no channel named %q", name)}
}

// slackTS spells a time as a Slack ts (seconds, six decimals).
func slackTS(t time.Time) string {
	us := t.UnixMicro()
	return fmt.Sprintf("%d.%06d", us/1e6, us%1e6)
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
