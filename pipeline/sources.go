package pipeline

import (
	"time"

	"github.com/pricewatch/pricewatch/config"
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
	NextRun             *time.Time     `json:"next_run,omitempty"`
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
		case src.Settings.StaleAfter > 0 && now.Sub(h.LastSuccess) > src.Settings.StaleAfter:
			st.Status = StatusStale
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
	return SourceStatuses(p.cfg, health, p.disabled, p.now(), p.NextRun)
}
