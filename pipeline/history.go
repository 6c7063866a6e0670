package pipeline

import (
	"context"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/history"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// digestSeries gives the digest each watch's best cost over time: from
// the stored best series where it answers the watch exactly (no GPU
// limit, in-stock offers), else from the stored price changes
// (package history: one point per change, none for a day without data),
// read once, only when a watch needs them. A watch the history cannot
// price — a job watch, or one scoped by region or provider — keeps the
// series the alert engine records at each evaluation.
func (p *Pipeline) digestSeries(ctx context.Context, snap *rank.Snapshot, since time.Time) (func(string, time.Time) ([]store.Sample, error), error) {
	return p.digestSeriesFrom(ctx, snap, since, true)
}

// digestSeriesFrom is digestSeries; stored false reads the rows for every
// watch (a test compares the two).
func (p *Pipeline) digestSeriesFrom(ctx context.Context, snap *rank.Snapshot, since time.Time, stored bool) (func(string, time.Time) ([]store.Sample, error), error) {
	var (
		rows     map[string][]store.HistoryRow
		terms    map[string]pricewatch.Offer
		profiles []rank.Profile
		loaded   bool
	)
	load := func() error {
		if loaded {
			return nil
		}
		var err error
		if rows, terms, err = history.Load(ctx, p.store, history.Current{Offers: snap.Offers()}, history.Filter{}, since); err != nil {
			return err
		}
		if profiles, err = p.rankProfiles(); err != nil {
			return err
		}
		loaded = true
		return nil
	}
	from, err := p.store.HistoryFrom()
	if err != nil {
		return nil, err
	}
	byName := map[string]alerts.Watch{}
	for _, w := range p.alerts.Watches {
		byName[w.Name] = w
	}
	now := p.now()
	return func(name string, start time.Time) ([]store.Sample, error) {
		w, ok := byName[name]
		wl, known := snap.Workload(w.Workload)
		if !ok || !known || w.Job != nil || len(w.Regions) > 0 || len(w.Providers) > 0 {
			return p.store.Series(name, start)
		}
		convert := func(v float64, cur string) (float64, bool) {
			x, err := snap.Rates.Convert(v, cur, w.Currency)
			return x, err == nil
		}
		f := history.Filter{Card: w.Card, Modes: w.Modes, MaxGPUs: w.MaxGPUs, AnyAvailability: w.AnyAvailability}
		if stored {
			meta, pts, err := p.store.BestSeries(ctx, w.Card, w.Workload, now)
			if err != nil {
				return nil, err
			}
			in := history.StoredInput{Meta: meta, Points: pts, Modes: w.Modes, Convert: convert, Since: start, Until: now, Before: true}
			if in.Serves(f) {
				if out, ok := history.FromStored(in); ok {
					return history.ToSamples(out), nil
				}
			}
		}
		if err := load(); err != nil {
			return nil, err
		}
		tps := history.BestProfiles(profiles, w.Workload)
		pts := history.Series(history.Input{
			Filter: f, Rows: rows, Terms: terms, Workload: &wl, Catalog: p.catalog,
			Profile: func(card string) (rank.Profile, bool) { v, ok := tps[card]; return v, ok },
			Convert: convert, Since: start, Until: now, Before: true, From: from,
		})
		return history.ToSamples(pts), nil
	}, nil
}
