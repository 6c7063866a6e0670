package pipeline

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/store"
)

// Source statuses.
const (
	StatusOK       = "ok"
	StatusFailing  = "failing"
	StatusDisabled = "disabled"
	StatusStale    = "stale"
	StatusPending  = "pending"
	// StatusSuspect: the last run was fetched but kept out of the offers
	// (implausible prices, a drifted layout); Reason has the numbers.
	StatusSuspect = "suspect"
	// StatusDisputed: the source's applied level lies beyond the band
	// against the market that formed since it was anchored; its offers
	// stay ranked, Reason has the numbers and the accept.
	StatusDisputed = "disputed"
)

// SourceStatus is one source in /v1/sources.
type SourceStatus struct {
	Name                string         `json:"name"`
	Description         string         `json:"description,omitempty"`
	Status              string         `json:"status"`
	Reason              string         `json:"reason,omitempty"`
	Schedule            string         `json:"schedule,omitempty"`
	LastRun             *time.Time     `json:"last_run"`
	LastSuccess         *time.Time     `json:"last_success"`
	LastDurationSeconds float64        `json:"last_duration_seconds"`
	LastError           string         `json:"last_error,omitempty"`
	ConsecutiveFailures int            `json:"consecutive_failures"`
	Offers              int            `json:"offers"`
	UnknownGPUs         map[string]int `json:"unknown_gpus,omitempty"`
	// NewGPUs are the unknown GPU names the source reported after its
	// baseline (its first applied run) that its last applied run still
	// reports: when each was first seen and its offers. Each was posted
	// once; an alias or a card in the catalog gets it ranked.
	NewGPUs []alerts.NewName `json:"new_gpus,omitempty"`
	// Held is the last run's hold (quarantined, suspect); HeldOffers lists
	// the outlier offers held back from applied runs: the price they came
	// with and how many runs in a row brought it.
	Held       string            `json:"held,omitempty"`
	HeldOffers []HeldOfferStatus `json:"held_offers,omitempty"`
	// Pending is the level the held runs show; with needs_accept it waits
	// for the market to move with it or for `pricewatch sources accept`.
	// Accepted is such a level an operator accepted (the next run showing
	// it is applied); AnchoredAt/AnchoredBy say when and how the level the
	// source is judged against was set.
	Pending *store.Level `json:"pending,omitempty"`
	// PendingLabel names the pending level for an accept (--level, ?level=).
	PendingLabel string       `json:"pending_label,omitempty"`
	Accepted     *store.Level `json:"accepted,omitempty"`
	AnchoredAt   *time.Time   `json:"anchored_at,omitempty"`
	AnchoredBy   string       `json:"anchored_by,omitempty"`
	// Disputed is the source's applied level against the market that
	// formed since its anchor, while beyond the band (accepted_by set:
	// an operator accepted it); DisputedLabel names it for an accept.
	Disputed      *store.Dispute `json:"disputed,omitempty"`
	DisputedLabel string         `json:"disputed_label,omitempty"`
	NextRun       *time.Time     `json:"next_run,omitempty"`
	// BelowNorm lists the measurements taken on this provider's machines
	// that fall more than 20% under their card's norm: a sign of throttled,
	// shared or refurbished cards. The offers stay ranked, at the measured
	// figure.
	BelowNorm []rank.NormCheck `json:"below_norm,omitempty"`
}

// HeldOfferStatus is one outlier offer held back.
type HeldOfferStatus struct {
	Key             string  `json:"key"`
	PricePerGPUHour float64 `json:"price_per_gpu_hour"`
	Runs            int     `json:"runs"`
}

// SourceStatuses describes every configured source's health at now.
// disabled maps sources that are enabled but cannot run to the reason.
func SourceStatuses(cfg *config.Config, health map[string]store.Health, disabled map[string]string, now time.Time, next func(string) time.Time) []SourceStatus {
	var out []SourceStatus
	for _, name := range cfg.SourceNames() {
		src := cfg.Sources[name]
		reg, _ := scrapers.Get(name)
		st := SourceStatus{Name: name, Description: reg.Description, Schedule: src.Settings.Schedule}
		h, ran := health[name]
		if ran {
			st.LastRun = timePtr(h.LastRun)
			st.LastSuccess = timePtr(h.LastSuccess)
			st.LastDurationSeconds = h.LastDuration.Seconds()
			st.LastError = h.LastError
			st.ConsecutiveFailures = h.ConsecutiveFailures
			st.Offers = h.Offers
			st.UnknownGPUs = h.Unknown
			st.Held = string(h.Hold)
			for k, hs := range h.HeldOffers {
				st.HeldOffers = append(st.HeldOffers, HeldOfferStatus{Key: k, PricePerGPUHour: hs.PricePerGPUHour, Runs: hs.Runs})
			}
			sort.Slice(st.HeldOffers, func(i, j int) bool { return st.HeldOffers[i].Key < st.HeldOffers[j].Key })
			if h.Hold != "" {
				st.Pending = h.Pending
				if h.Pending != nil {
					st.PendingLabel = h.Pending.Label()
				}
			}
			st.Accepted = h.Accepted
			if h.Anchor != nil {
				st.AnchoredAt, st.AnchoredBy = timePtr(h.Anchor.At), h.Anchor.By
			}
			if d := h.Disputed; d != nil {
				st.Disputed = d
				if d.Open() {
					st.DisputedLabel = d.Level().Label()
				}
			}
		}
		reason, off := disabled[name]
		switch {
		case !src.Settings.Enabled:
			st.Status, st.Reason = StatusDisabled, "disabled in config"
		case off:
			st.Status, st.Reason = StatusDisabled, reason
		case !ran:
			st.Status = StatusPending
		case !h.LastOK:
			st.Status = StatusFailing
		case h.Hold != "":
			st.Status, st.Reason = StatusSuspect, h.HoldReason
		case src.Settings.StaleAfter > 0 && now.Sub(h.LastSuccess) > src.Settings.StaleAfter:
			st.Status = StatusStale
		case h.Disputed.Open():
			st.Status, st.Reason = StatusDisputed, h.Disputed.Reason(name)
		default:
			st.Status = StatusOK
		}
		if st.Status != StatusDisabled && next != nil {
			st.NextRun = timePtr(next(name))
		}
		out = append(out, st)
	}
	return out
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// Statuses describes every configured source's health now.
func (p *Pipeline) Statuses() []SourceStatus {
	var health map[string]store.Health
	if v := p.View(); v != nil {
		health = v.Health
	}
	out := SourceStatuses(p.cfg, health, p.disabled, p.now(), p.NextRun)
	checks := p.NormChecks()
	for i := range out {
		if h, ok := health[out[i].Name]; ok {
			names, err := alerts.NewNames(p.store, out[i].Name, h)
			if err != nil {
				p.log.Warn("read new gpu names", "source", out[i].Name, "err", err)
			}
			out[i].NewGPUs = names
		}
		for _, c := range checks {
			if c.BelowNorm && c.Provider == out[i].Name {
				out[i].BelowNorm = append(out[i].BelowNorm, c)
			}
		}
	}
	return out
}

// Accept records an operator's acceptance of the level a held source
// shows (by names who: "cli", "api") and runs the source at once, so a
// run showing that level is applied and anchors the source. The run's
// summary says whether it was.
func (p *Pipeline) Accept(ctx context.Context, name, by, level string) (store.Level, Summary, error) {
	if _, ok := p.cfg.Sources[name]; !ok {
		return store.Level{}, Summary{}, fmt.Errorf("unknown source %q", name)
	}
	lv, err := p.store.AcceptSource(name, by, level, p.now())
	if err != nil {
		return lv, Summary{}, err
	}
	p.log.Warn("held level accepted by an operator", "source", name, "by", by, "kind", lv.Kind, "factor", lv.Factor, "mode", lv.Mode)
	sum := p.RunSource(ctx, name)
	if err := p.Refresh(ctx); err != nil {
		return lv, sum, err
	}
	return lv, sum, nil
}
