package alerts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"time"

	"github.com/slack-go/slack"

	"github.com/pricewatch/pricewatch/store"
)

// Outbox is the store side the sender needs.
type Outbox interface {
	NextPending() (*store.Message, error)
	UpdateMessage(store.Message) error
}

// Pruner is an outbox that drops sent and failed messages created before a
// time and says how many it dropped (the store is one).
type Pruner interface {
	PruneMessages(before time.Time) (int, error)
}

// The sender's own timing: it never sleeps longer than DefaultPoll, so a
// message queued without a wake still goes out within seconds; it prunes
// at most every PruneEvery, keeping sent and failed messages for
// DefaultOutboxRetention unless told otherwise.
const (
	DefaultPoll            = 5 * time.Second
	DefaultOutboxRetention = 30 * 24 * time.Hour
	PruneEvery             = time.Hour
)

// Delivery bounds: backoff doubles from BackoffBase to BackoffMax on 5xx
// and network errors; a message undelivered for MaxAge is given up.
const (
	BackoffBase = 5 * time.Second
	BackoffMax  = 5 * time.Minute
	MaxAge      = 24 * time.Hour
)

// Sender drains the outbox in order: a message waiting for a retry holds
// back the ones after it, so Slack sees them in the order decided.
type Sender struct {
	Outbox   Outbox
	Notifier Notifier // nil: messages are logged and marked logged
	Log      *slog.Logger
	Now      func() time.Time
	// Result, if set, counts delivery results (sent, logged, retry, failed).
	Result func(string)
	// Poll is the longest Run sleeps between looks at the outbox (0:
	// DefaultPoll); a wake ends the sleep at once.
	Poll time.Duration
	// Retention is how long sent and failed messages are kept (0:
	// DefaultOutboxRetention).
	Retention time.Duration

	pruned time.Time // last prune (Run's goroutine only)
}

func (s *Sender) count(r string) {
	if s.Result != nil {
		s.Result(r)
	}
}

// DeliverDue delivers every due message in order and returns how long to
// wait before the next attempt (0: the outbox is empty).
func (s *Sender) DeliverDue(ctx context.Context) (time.Duration, error) {
	for {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		m, err := s.Outbox.NextPending()
		if err != nil || m == nil {
			return 0, err
		}
		now := s.Now()
		if now.Sub(m.Created) > MaxAge {
			m.Status, m.LastError = store.Failed, fmt.Sprintf("undelivered for %s: %s", MaxAge, m.LastError)
			s.count("failed")
			if err := s.Outbox.UpdateMessage(*m); err != nil {
				return 0, err
			}
			continue
		}
		if m.NextAttempt.After(now) {
			return m.NextAttempt.Sub(now), nil
		}
		msg, err := decode(m.Payload)
		if err == nil {
			err = s.send(ctx, msg)
		}
		m.Attempts++
		if err == nil {
			// With no Slack the message is only logged: say so, not sent.
			m.Status, m.SentAt, m.LastError = store.Sent, now, ""
			if s.Notifier == nil {
				m.Status, m.SentAt = store.Logged, time.Time{}
			}
			s.count(m.Status)
			if err := s.Outbox.UpdateMessage(*m); err != nil {
				return 0, err
			}
			continue
		}
		wait, permanent := Classify(err)
		m.LastError = err.Error()
		if permanent {
			m.Status = store.Failed
			s.count("failed")
			s.Log.Error("slack message failed for good", "id", m.ID, "kind", m.Kind, "err", err)
			if err := s.Outbox.UpdateMessage(*m); err != nil {
				return 0, err
			}
			continue
		}
		if wait == 0 {
			wait = min(BackoffBase<<min(m.Attempts-1, 16), BackoffMax)
		}
		m.NextAttempt = now.Add(wait)
		s.count("retry")
		s.Log.Warn("slack delivery failed; will retry", "id", m.ID, "attempt", m.Attempts, "in", wait, "err", err)
		if err := s.Outbox.UpdateMessage(*m); err != nil {
			return 0, err
		}
		return wait, nil
	}
}

func (s *Sender) send(ctx context.Context, m Message) error {
	if s.Notifier == nil {
		s.Log.Info("alert (no Slack configured)", "text", m.Text)
		return nil
	}
	return s.Notifier.Notify(ctx, m)
}

func decode(raw json.RawMessage) (Message, error) {
	var p struct {
		Text   string       `json:"text"`
		Blocks slack.Blocks `json:"blocks"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return Message{}, permanentError{fmt.Errorf("decode stored message: %w", err)}
	}
	return Message{Text: p.Text, Blocks: p.Blocks.BlockSet}, nil
}

// Run delivers until ctx ends, waking on wake (new messages), when the
// next retry is due, or after Poll at the latest (a message queued without
// a wake); it prunes the outbox every PruneEvery.
func (s *Sender) Run(ctx context.Context, wake <-chan struct{}) {
	poll := s.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	for {
		if _, err := s.Prune(); err != nil && ctx.Err() == nil {
			s.Log.Error("prune outbox", "err", err)
		}
		wait, err := s.DeliverDue(ctx)
		if err != nil && ctx.Err() == nil {
			s.Log.Error("outbox", "err", err)
			wait = BackoffBase
		}
		if wait <= 0 || wait > poll {
			wait = poll
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// Prune drops sent and failed messages older than the retention, unless
// it pruned less than PruneEvery ago, and returns how many it dropped.
// Pending messages are never pruned.
func (s *Sender) Prune() (int, error) {
	p, ok := s.Outbox.(Pruner)
	if !ok {
		return 0, nil
	}
	now := s.Now()
	if !s.pruned.IsZero() && now.Sub(s.pruned) < PruneEvery {
		return 0, nil
	}
	s.pruned = now
	keep := s.Retention
	if keep <= 0 {
		keep = DefaultOutboxRetention
	}
	n, err := p.PruneMessages(now.Add(-keep))
	if n > 0 {
		s.Log.Info("outbox pruned", "messages", n, "older_than", keep)
	}
	return n, err
}

// permanentSlackErrors are Slack error codes no retry can fix.
var permanentSlackErrors = map[string]bool{
	"channel_not_found": true, "not_in_channel": true, "is_archived": true, "invalid_auth": true,
	"not_authed": true, "account_inactive": true, "token_revoked": true, "token_expired": true,
	"missing_scope": true, "invalid_blocks": true, "invalid_blocks_format": true, "msg_too_long": true,
	"no_text": true, "too_many_attachments": true, "restricted_action": true, "invalid_payload": true,
	"action_prohibited": true, "no_service": true, "channel_is_archived": true, "invalid_arguments": true,
}

type permanentError struct{ error }

func (p permanentError) Unwrap() error { return p.error }

// Classify says how to treat a delivery error: wait is Slack's Retry-After
// on 429 (0 otherwise: back off), permanent means retrying cannot help.
func Classify(err error) (wait time.Duration, permanent bool) {
	var rl *slack.RateLimitedError
	var sc slack.StatusCodeError
	var se slack.SlackErrorResponse
	var pe permanentError
	var ne net.Error
	var ue *url.Error
	switch {
	case errors.As(err, &pe):
		return 0, true
	case errors.As(err, &rl):
		return max(rl.RetryAfter, time.Second), false
	case errors.As(err, &se):
		return 0, permanentSlackErrors[se.Err]
	case errors.As(err, &sc):
		return 0, sc.Code < 500 && sc.Code != 429 && sc.Code != 408
	case errors.As(err, &ne), errors.As(err, &ue):
		return 0, false
	}
	return 0, false
}
