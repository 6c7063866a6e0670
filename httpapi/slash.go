package httpapi

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// MaxSlashBody caps a slash-command request (Slack sends a small form).
const MaxSlashBody = 16 << 10

// Slack refuses a request timestamp more than SlackWindow from now, so a
// signature is remembered for SlackWindow past the later of its timestamp
// and now, plus a minute of clock skew; a writing command's outcome is
// remembered for SlackRequestTTL under the request's identity.
const (
	SlackWindow     = 5 * time.Minute
	SlackRequestTTL = 24 * time.Hour
)

// SlackGuard is the optional part of a Backend that remembers verified
// Slack requests in the store, so that neither a replay nor a repeated
// request gets through after a restart (*store.Store implements it; a
// Backend may also hand out its store with a Store method).
type SlackGuard interface {
	FirstSlackSignature(sig []byte, expires, now time.Time) (bool, error)
	AddSilenceOnce(requestID string, sl store.Silence, expires, now time.Time) (store.Silence, bool, error)
}

var _ SlackGuard = (*store.Store)(nil)

func (s *Server) slackGuard() SlackGuard {
	switch b := s.backend.(type) {
	case SlackGuard:
		return b
	case interface{ Store() *store.Store }:
		if st := b.Store(); st != nil {
			return st
		}
	}
	return nil
}

// replays remembers verified signatures in memory, for a backend without
// a SlackGuard: keyed on the decoded signature, until it expires.
type replays struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

func (r *replays) first(sig []byte, expires, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]time.Time{}
	}
	for k, exp := range r.seen {
		if !exp.After(now) {
			delete(r.seen, k)
		}
	}
	if _, ok := r.seen[string(sig)]; ok {
		return false
	}
	r.seen[string(sig)] = expires
	return true
}

// slackSignature decodes a verified X-Slack-Signature ("v0=" and 64 hex
// digits of either case) to its 32 bytes: the one key of a request however
// its hex is spelled.
func slackSignature(h http.Header) ([]byte, error) {
	sig, ok := strings.CutPrefix(h.Get("X-Slack-Signature"), "v0=")
	if !ok {
		return nil, fmt.Errorf("no v0 signature")
	}
	b, err := hex.DecodeString(sig)
	if err != nil || len(b) == 0 {
		return nil, fmt.Errorf("signature is not hex")
	}
	return b, nil
}

// slackExpiry is when a request signed at the header's timestamp can no
// longer be accepted (the verifier has checked the timestamp).
func slackExpiry(h http.Header, now time.Time) time.Time {
	at := now
	if ts, err := strconv.ParseInt(h.Get("X-Slack-Request-Timestamp"), 10, 64); err == nil && time.Unix(ts, 0).After(now) {
		at = time.Unix(ts, 0)
	}
	return at.Add(SlackWindow + time.Minute)
}

// requestID is a slash command's identity: Slack's trigger_id, unique per
// invocation, within its workspace; without one, the signature (unique to
// the timestamp and body).
func requestID(cmd slack.SlashCommand, sig []byte) string {
	if cmd.TriggerID != "" {
		return "trigger:" + cmd.EnterpriseID + "/" + cmd.TeamID + "\x00" + cmd.TriggerID
	}
	return "sig:" + hex.EncodeToString(sig)
}

// slash answers POST /slack/command: requests verified with the signing
// secret (slack-go's SecretsVerifier: missing, wrong or stale signatures are
// refused), answered at once and ephemeral. A replayed request (the same
// signature, however its hex is spelled, before or after a restart) is
// refused, and a writing command (silence) writes once per Slack request.
func (s *Server) slash(w http.ResponseWriter, r *http.Request) error {
	secret := s.backend.Config().Slack.SigningSecret
	if secret == "" {
		return pricewatch.Errorf(EForbidden, "slash commands are off: no signing secret is configured (PRICEWATCH_SLACK_SIGNING_SECRET)")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxSlashBody))
	if err != nil {
		return pricewatch.Errorf(ETooLarge, "body larger than %d bytes", MaxSlashBody)
	}
	v, err := slack.NewSecretsVerifier(r.Header, secret)
	if err != nil {
		return pricewatch.Errorf(EUnauthorized, "request not signed by Slack: %v", err)
	}
	if _, err := v.Write(body); err != nil {
		return err
	}
	if err := v.Ensure(); err != nil {
		return pricewatch.Errorf(EUnauthorized, "bad signature")
	}
	sig, err := slackSignature(r.Header)
	if err != nil {
		return pricewatch.Errorf(EUnauthorized, "bad signature")
	}
	now := time.Now()
	first := false
	if g := s.slackGuard(); g != nil {
		if first, err = g.FirstSlackSignature(sig, slackExpiry(r.Header, now), now); err != nil {
			return fmt.Errorf("record slack signature: %w", err)
		}
	} else {
		first = s.replays.first(sig, slackExpiry(r.Header, now), now)
	}
	if !first {
		return pricewatch.Errorf(EUnauthorized, "replayed request")
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	cmd, err := slack.SlashCommandParse(r)
	if err != nil {
		return pricewatch.Errorf(pricewatch.EInvalid, "not a slash command: %v", err)
	}
	text, blocks := s.command(cmd, requestID(cmd, sig))
	msg := slack.Msg{ResponseType: slack.ResponseTypeEphemeral, Text: text}
	if len(blocks) > 0 {
		msg.Blocks = slack.Blocks{BlockSet: blocks}
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	writeBytes(w, http.StatusOK, b)
	return nil
}

const slashHelp = "Usage: `/pricewatch best [workload] [card]` · `/pricewatch plan <workload> <tokens> [currency] [card]` · " +
	"`/pricewatch status` · `/pricewatch silence <watch|*> <duration> <reason>` · `/pricewatch silence list` · `/pricewatch silence remove <id>`"

// command runs a slash command's text and returns the answer; id is the
// Slack request's identity, on which writing commands are idempotent.
func (s *Server) command(cmd slack.SlashCommand, id string) (string, []slack.Block) {
	args := strings.Fields(cmd.Text)
	if len(args) == 0 {
		return slashHelp, nil
	}
	switch args[0] {
	case "best":
		return s.slashBest(args[1:])
	case "plan":
		return s.slashPlan(args[1:])
	case "status":
		return s.slashStatus()
	case "silence", "mute":
		return s.slashSilence(args[1:], cmd.UserName, id)
	}
	return "Unknown command `" + escape(args[0]) + "`. " + slashHelp, nil
}

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func (s *Server) slashBest(args []string) (string, []slack.Block) {
	v, err := s.view()
	if err != nil {
		return err.Error(), nil
	}
	q := map[string][]string{"workload": {"lora-7b"}}
	if len(args) > 0 {
		q["workload"] = []string{args[0]}
	}
	if len(args) > 1 {
		q["card"] = []string{args[1]}
	}
	bq, err := ParseBestQuery(q, v.Snapshot, normalize.DefaultCatalog())
	if err != nil {
		return "Cannot answer: " + escape(err.Error()), nil
	}
	res, err := Best(v.Snapshot, bq)
	if err != nil {
		return "Cannot answer: " + escape(err.Error()), nil
	}
	if len(res.Cards) == 0 {
		return "No eligible offer for " + bq.Workload + ".", nil
	}
	lines := []string{fmt.Sprintf("*Best %s per card* (cost per million tokens, %s, %s)", escape(bq.Workload), res.Currency, modesText(bq.Modes))}
	for i, e := range res.Cards {
		if i == 8 {
			lines = append(lines, fmt.Sprintf("… %d more cards (GET /v1/best)", len(res.Cards)-8))
			break
		}
		lines = append(lines, fmt.Sprintf("%d. *%s* %s/Mtok · %s/GPU-h · %s %s (%s, %s, %s)", i+1, e.Card,
			alerts.Money(e.CostPerMillionTokens, res.Currency), alerts.Money(e.PricePerGPUHour, res.Currency),
			escape(e.Source), escape(e.OfferID), e.Mode, rentText(e.RentUnit, e.GPUs), e.ThroughputOrigin))
	}
	text := strings.Join(lines, "\n")
	return text, []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, truncateText(text, alerts.MaxSectionText), false, false), nil, nil)}
}

// rentText says what is rented: "1 GPU", "8 GPUs whole".
func rentText(unit pricewatch.RentUnit, n int) string {
	s := fmt.Sprintf("%d GPUs", n)
	if n == 1 {
		s = "1 GPU"
	}
	if unit == pricewatch.RentFixed && n > 1 {
		s += " whole"
	}
	return s
}

func modesText(ms []pricewatch.Mode) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = string(m)
	}
	return strings.Join(s, ", ")
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

func (s *Server) slashPlan(args []string) (string, []slack.Block) {
	v, err := s.view()
	if err != nil {
		return err.Error(), nil
	}
	if len(args) < 2 {
		return "Usage: `/pricewatch plan <workload> <tokens> [currency] [card]`, e.g. `/pricewatch plan full-ft-7b 15e6 CNY`", nil
	}
	tokens, err := strconv.ParseFloat(args[1], 64)
	if err != nil {
		return "tokens: not a number: " + escape(args[1]), nil
	}
	spec := rank.JobSpec{Workload: args[0], Tokens: tokens, Limit: 3}
	if w, ok := v.Snapshot.Workload(args[0]); ok && w.Method == rank.MethodServe {
		spec.Tokens = 0
		spec.PeakTokensPerSecond = tokens
	}
	if len(args) > 2 {
		spec.Currency = args[2]
	}
	if len(args) > 3 {
		spec.Card = args[3]
	}
	res, err := Plan(v.Snapshot, spec, s.backend.Config().Owned)
	if err != nil {
		return "Cannot plan: " + escape(err.Error()), nil
	}
	if len(res.Options) == 0 {
		return "No option can hold this job.", nil
	}
	lines := []string{fmt.Sprintf("*Plan: %s, %s* (%s)", escape(args[0]), args[1], res.Currency)}
	for i, o := range res.Options {
		if o.Serving != nil {
			lines = append(lines, fmt.Sprintf("%d. *%s* on %s (%s, %s): %d GPUs needed, %s a month, %s per million output tokens",
				i+1, o.Card, escape(o.Source), o.Mode, rentText(o.RentUnit, o.GPUs), o.Serving.GPUsNeeded, alerts.Money(o.Serving.MonthlyCost, res.Currency),
				alerts.Money(o.CostPerMillionTokens, res.Currency)))
			continue
		}
		lines = append(lines, fmt.Sprintf("%d. *%s* on %s (%s, %s): %.1f h, total %s (pessimistic %s), %s/Mtok",
			i+1, o.Card, escape(o.Source), o.Mode, rentText(o.RentUnit, o.GPUs), o.Hours, alerts.Money(o.TotalCost, res.Currency),
			alerts.Money(o.PessimisticTotalCost, res.Currency), alerts.Money(o.CostPerMillionTokens, res.Currency)))
	}
	text := strings.Join(lines, "\n")
	return text, []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, truncateText(text, alerts.MaxSectionText), false, false), nil, nil)}
}

func (s *Server) slashStatus() (string, []slack.Block) {
	st := s.backend.Statuses()
	counts := map[string]int{}
	var bad []string
	for _, x := range st {
		counts[x.Status]++
		if x.Status == StatusFailing || x.Status == StatusStale {
			bad = append(bad, fmt.Sprintf("• %s %s: %s", x.Name, x.Status, escape(truncateText(x.LastError, 120))))
		}
	}
	page, _ := s.backend.Outbox("", 1) // the counts; no list needed
	pending, failed := page.Pending, page.Failed
	text := fmt.Sprintf("*Sources*: %d ok, %d failing, %d stale, %d disabled, %d pending · *Slack outbox*: %d pending, %d failed",
		counts[StatusOK], counts[StatusFailing], counts[StatusStale], counts[StatusDisabled], counts[StatusPending], pending, failed)
	if v := s.backend.View(); v != nil && v.Snapshot != nil {
		text += fmt.Sprintf(" · ranking of %s", v.Snapshot.GeneratedAt.Format(time.RFC3339))
	}
	if len(bad) > 0 {
		text += "\n" + strings.Join(bad, "\n")
	}
	return text, nil
}

func (s *Server) slashSilence(args []string, user, id string) (string, []slack.Block) {
	sl, err := s.silencer()
	if err != nil {
		return err.Error(), nil
	}
	switch {
	case len(args) == 1 && args[0] == "list":
		list, err := sl.Silences()
		if err != nil {
			return err.Error(), nil
		}
		now := time.Now()
		var lines []string
		for _, x := range list {
			if now.Before(x.Ends) {
				lines = append(lines, fmt.Sprintf("%d. %s until %s: %s", x.ID, escape(x.Watch), x.Ends.Format(time.RFC3339), escape(x.Reason)))
			}
		}
		if len(lines) == 0 {
			return "No active silence.", nil
		}
		return strings.Join(lines, "\n"), nil
	case len(args) == 2 && args[0] == "remove":
		id, err := strconv.ParseUint(args[1], 10, 64)
		if err != nil {
			return "Not a silence id: " + escape(args[1]), nil
		}
		if err := sl.RemoveSilence(id); err != nil {
			return fmt.Sprintf("Cannot remove silence %d: %s", id, escape(err.Error())), nil
		}
		return fmt.Sprintf("Silence %d removed.", id), nil
	case len(args) >= 3:
		now := time.Now().UTC()
		silence, err := NewSilence(SilenceBody{Watch: args[0], For: args[1], Reason: strings.Join(args[2:], " "), CreatedBy: "slack:" + user},
			sl.WatchNames(), now)
		if err != nil {
			return escape(err.Error()), nil
		}
		// The same Slack request (a retry, a replay that got this far)
		// answers with the silence it made the first time.
		if g := s.slackGuard(); g != nil && id != "" {
			silence, _, err = g.AddSilenceOnce(id, silence, now.Add(SlackRequestTTL), now)
		} else {
			silence.ID, err = sl.AddSilence(silence)
		}
		if err != nil {
			return err.Error(), nil
		}
		return fmt.Sprintf("Silenced %s until %s (silence %d): %s. Decisions still advance, so nothing floods out when it ends.",
			escape(silence.Watch), silence.Ends.Format(time.RFC3339), silence.ID, escape(silence.Reason)), nil
	}
	return "Usage: `/pricewatch silence <watch|*> <duration> <reason>` · `/pricewatch silence list` · `/pricewatch silence remove <id>`", nil
}
