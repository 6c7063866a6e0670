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

// Crash safety. A post whose answer was not recorded is looked up in the
// channel DefaultSettle after it was sent — longer than the notifier's
// 15-second HTTP timeout, so a post the old process still had in flight
// has landed or been dropped by then — among the messages Slack stamped
// from LookupSkew before the post to LookupSkew after the settle time
// (Slack's clock and ours may disagree).
const (
	DefaultSettle = 30 * time.Second
	LookupSkew    = 2 * time.Minute
)

// Sender drains the outbox in order: a message waiting for a retry holds
// back the ones after it, so Slack sees them in the order decided. This
// holds for a message that may have been posted (Slack answered 5xx, or
// the process died mid-post) while it settles too: every message goes to
// the one configured channel, and posting a later one before the earlier
// is found there or posted again would show them out of order, so the
// wait (Settle, 30 s) is the price of the order; the log says when the
// lookup comes.
type Sender struct {
	Outbox   Outbox
	Notifier Notifier // nil: messages are logged and marked logged
	Log      *slog.Logger
	Now      func() time.Time
	// Result, if set, counts delivery results (sent; logged: no Slack
	// configured; retry, failed; found: an unanswered post was in the
	// channel; unconfirmed: posted again without being able to look).
	Result func(string)
	// Poll is the longest Run sleeps between looks at the outbox (0:
	// DefaultPoll); a wake ends the sleep at once.
	Poll time.Duration
	// Retention is how long sent and failed messages are kept (0:
	// DefaultOutboxRetention).
	Retention time.Duration
	// Settle is how long after an unanswered post the sender looks for it
	// in the channel (0: DefaultSettle).
	Settle time.Duration

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
		if m.Attempt != nil {
			wait, found, err := s.resolve(ctx, m, now)
			if err != nil || wait > 0 {
				return wait, err
			}
			if found {
				continue
			}
		}
		wait, err := s.deliver(ctx, m, now)
		if err != nil || wait > 0 {
			return wait, err
		}
	}
}

// resolve settles a message whose last post may have reached Slack (the
// process died or the post went unanswered): it looks the message up in
// the channel once any post still in flight must have landed, records it
// delivered if it is there, and otherwise lets it be posted again. A lookup
// that fails for now (Slack down, rate limited) is retried with the
// delivery backoff and nothing is posted meanwhile; one that cannot work
// (a missing channels:history scope, a webhook) posts again with a warning:
// a possible repeat is better than holding every later alert back.
func (s *Sender) resolve(ctx context.Context, m *store.Message, now time.Time) (wait time.Duration, found bool, err error) {
	f, ok := s.Notifier.(Finder)
	if !ok {
		if s.Notifier != nil {
			s.count("unconfirmed")
			s.Log.Warn("slack message may have been posted before; this notifier cannot look it up, posting again",
				"id", m.ID, "attempted", m.Attempt.At)
		}
		return 0, false, nil
	}
	settled := m.Attempt.At.Add(s.settle())
	if now.Before(settled) {
		return settled.Sub(now), false, nil
	}
	r, found, err := f.Find(ctx, m.Attempt.ClientID, m.Attempt.At.Add(-LookupSkew), settled.Add(LookupSkew))
	if err != nil {
		wait, permanent := Classify(err)
		if !permanent {
			m.Attempts++ // a lookup is an attempt: it backs off like a post
			wait, err := s.retry(m, now, wait, fmt.Errorf("look up the earlier post: %w", err))
			return wait, false, err
		}
		s.count("unconfirmed")
		s.Log.Warn("cannot look up an earlier post of a slack message; posting again, it may appear twice",
			"id", m.ID, "attempted", m.Attempt.At, "err", err)
		return 0, false, nil
	}
	if !found {
		return 0, false, nil
	}
	m.Status, m.SentAt, m.LastError = store.Sent, m.Attempt.At, ""
	m.Channel, m.TS, m.Attempt = r.Channel, r.TS, nil
	s.count("found")
	return 0, true, s.Outbox.UpdateMessage(*m)
}

// deliver posts a message, with its attempt committed first, and records
// Slack's answer; it returns how long to wait when the message must wait.
func (s *Sender) deliver(ctx context.Context, m *store.Message, now time.Time) (time.Duration, error) {
	msg, err := decode(m.Payload)
	var r Receipt
	if err == nil {
		m.Attempts++
		m.Attempt = &store.Attempt{ClientID: clientID(m), At: now}
		if err := s.Outbox.UpdateMessage(*m); err != nil {
			return 0, fmt.Errorf("record the attempt before posting: %w", err)
		}
		r, err = s.send(ctx, msg, m.Attempt.ClientID)
	}
	if err == nil {
		m.Status, m.SentAt, m.LastError = store.Sent, now, ""
		m.Channel, m.TS, m.Attempt = r.Channel, r.TS, nil
		if s.Notifier == nil {
			// With no Slack the message is only logged: say so, not sent.
			m.Status, m.SentAt = store.Logged, time.Time{}
		}
		s.count(m.Status)
		return 0, s.Outbox.UpdateMessage(*m)
	}
	if !maybePosted(err) {
		m.Attempt = nil
	}
	wait, permanent := Classify(err)
	if permanent {
		m.Status, m.LastError = store.Failed, err.Error()
		s.count("failed")
		s.Log.Error("slack message failed for good", "id", m.ID, "kind", m.Kind, "err", err)
		return 0, s.Outbox.UpdateMessage(*m)
	}
	if m.Attempt != nil {
		if _, ok := s.Notifier.(Finder); ok {
			return s.settleAfter(m, now, wait, err)
		}
	}
	return s.retry(m, now, wait, err)
}

// settleAfter schedules a message that may have been posted: the next step
// is not a post but a lookup in the channel once the post must have
// landed (Settle after it, or later when Slack asked to wait longer), and
// the log says so, with the time.
func (s *Sender) settleAfter(m *store.Message, now time.Time, wait time.Duration, cause error) (time.Duration, error) {
	at := m.Attempt.At.Add(s.settle())
	if w := now.Add(wait); wait > 0 && w.After(at) {
		at = w
	}
	m.NextAttempt, m.LastError = at, cause.Error()
	s.count("retry")
	s.Log.Warn("slack post unanswered, it may have landed; looking it up in the channel before posting again (later messages wait, to keep their order)",
		"id", m.ID, "attempt", m.Attempts, "lookup_at", at.UTC().Format(time.RFC3339), "in", at.Sub(now), "err", cause)
	return at.Sub(now), s.Outbox.UpdateMessage(*m)
}

// retry schedules the message's next attempt: after Slack's Retry-After
// (wait), else after the exponential backoff.
func (s *Sender) retry(m *store.Message, now time.Time, wait time.Duration, cause error) (time.Duration, error) {
	if wait == 0 {
		wait = min(BackoffBase<<min(max(m.Attempts, 1)-1, 16), BackoffMax)
	}
	m.NextAttempt, m.LastError = now.Add(wait), cause.Error()
	s.count("retry")
	s.Log.Warn("slack delivery failed; will retry", "id", m.ID, "attempt", m.Attempts, "in", wait, "err", cause)
	return wait, s.Outbox.UpdateMessage(*m)
}

func (s *Sender) settle() time.Duration {
	if s.Settle > 0 {
		return s.Settle
	}
	return DefaultSettle
}

// clientID names a message for Slack: stable across attempts, and not
// repeated by a new database (whose ids start again at 1).
func clientID(m *store.Message) string {
	return fmt.Sprintf("pw-%d-%d", m.ID, m.Created.UnixNano())
}

func (s *Sender) send(ctx context.Context, m Message, clientID string) (Receipt, error) {
	switch n := s.Notifier.(type) {
	case nil:
		s.Log.Info("alert (no Slack configured)", "text", m.Text)
		return Receipt{}, nil
	case Finder:
		return n.Post(ctx, m, clientID)
	}
	return Receipt{}, s.Notifier.Notify(ctx, m)
}

// maybePosted says whether a failed post may still have reached the
// channel: Slack's own refusals (an error answer, 429, another 4xx) did
// not post; a network error, a timeout, a cancelled request or a 5xx may
// have.
func maybePosted(err error) bool {
	var rl *slack.RateLimitedError
	var sc slack.StatusCodeError
	var se slack.SlackErrorResponse
	var pe permanentError
	switch {
	case errors.As(err, &pe), errors.As(err, &rl), errors.As(err, &se):
		return false
	case errors.As(err, &sc):
		return sc.Code >= 500
	}
	return true
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
