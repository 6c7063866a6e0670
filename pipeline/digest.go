package pipeline

import (
	"context"
	"time"

	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// DigestData gathers today's digest from the current view and the store.
func (p *Pipeline) DigestData() (alerts.DigestData, error) {
	v := p.View()
	if v == nil {
		if err := p.Rebuild(); err != nil {
			return alerts.DigestData{}, err
		}
		v = p.View()
	}
	now := p.now()
	changes, err := p.store.Changes(now.Add(-24 * time.Hour))
	if err != nil {
		return alerts.DigestData{}, err
	}
	var lines []alerts.SourceLine
	for _, s := range p.Statuses() {
		note := s.LastError
		if s.Reason != "" {
			note = s.Reason
		}
		lines = append(lines, alerts.SourceLine{Name: s.Name, Status: s.Status, Note: note, Offers: s.Offers})
	}
	runners := p.cfg.Digest.RunnersUp
	if runners < 0 {
		runners = 0
	}
	// The digest looks back 8 days (7 and the one before them).
	// The digest is built by the scheduler and the CLI, neither of which
	// cancels it: a background context.
	series, err := p.digestSeries(context.Background(), v.Snapshot, now.Add(-8*24*time.Hour))
	if err != nil {
		return alerts.DigestData{}, err
	}
	d, err := alerts.CollectDigest(v.Snapshot, p.alerts.Watches, series, changes, lines, runners, now)
	d.Data = p.dataDates(v.Snapshot)
	return d, err
}

// dataDates dates the digest's data: the newest and oldest last success of
// the sources holding offers, the ECB rates' date and, in a demo, the
// bundled fixtures' capture dates.
func (p *Pipeline) dataDates(snap *rank.Snapshot) alerts.DataDates {
	var dd alerts.DataDates
	if snap != nil && snap.Rates != nil {
		dd.FXDate = snap.Rates.Date
	}
	for _, s := range p.Statuses() {
		if s.Offers == 0 || s.LastSuccess == nil || s.Status == StatusDisabled {
			continue
		}
		t := *s.LastSuccess
		if dd.OffersTo.IsZero() || t.After(dd.OffersTo) {
			dd.OffersTo = t
		}
		if dd.OffersFrom.IsZero() || t.Before(dd.OffersFrom) {
			dd.OffersFrom = t
		}
	}
	if p.demo {
		dd.Demo = true
		for _, src := range fixtures.Sources() {
			c := fixtures.Captured(src)
			if c == "" {
				continue
			}
			if dd.CapturedFrom == "" || c < dd.CapturedFrom {
				dd.CapturedFrom = c
			}
			if c > dd.CapturedTo {
				dd.CapturedTo = c
			}
		}
	}
	return dd
}

// Digest renders today's digest as Slack messages.
func (p *Pipeline) Digest() ([]alerts.Message, error) {
	d, err := p.DigestData()
	if err != nil {
		return nil, err
	}
	return alerts.DigestMessages(d), nil
}

// Messages lists the outbox, newest first.
func (p *Pipeline) Messages(limit int) ([]store.Message, error) { return p.store.Messages(limit) }

// MarkDemo says the pipeline reads the demo's database (a command run
// with --demo): the digest says so. Call it before the pipeline is used.
func (p *Pipeline) MarkDemo() { p.demo = true }

// SendDigest queues today's digest.
func (p *Pipeline) SendDigest() error {
	msgs, err := p.Digest()
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if err := p.Enqueue("digest", m); err != nil {
			return err
		}
	}
	p.log.Info("digest queued", "messages", len(msgs))
	return nil
}

// Silences lists the stored silences.
func (p *Pipeline) Silences() ([]store.Silence, error) { return p.store.Silences() }

// AddSilence stores a silence.
func (p *Pipeline) AddSilence(s store.Silence) (uint64, error) { return p.store.AddSilence(s) }

// RemoveSilence deletes a silence.
func (p *Pipeline) RemoveSilence(id uint64) error { return p.store.RemoveSilence(id) }

// WatchNames lists the watches.
func (p *Pipeline) WatchNames() []string {
	names := make([]string, len(p.alerts.Watches))
	for i, w := range p.alerts.Watches {
		names[i] = w.Name
	}
	return names
}
