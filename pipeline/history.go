package pipeline

import (
	"context"
	"time"

	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/history"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// digestSeries gives the digest each watch's best cost over time from the
// stored price changes (package history: one point per change, none for a
// day without data), read once for all watches. A watch the history cannot
// price — a job watch, or one scoped by region or provider — keeps the
// series the alert engine records at each evaluation.
func (p *Pipeline) digestSeries(ctx context.Context, snap *rank.Snapshot, since time.Time) (func(string, time.Time) ([]store.Sample, error), error) {
	rows, terms, err := history.Load(ctx, p.store, history.Current{Offers: snap.Offers()}, history.Filter{}, since)
	if err != nil {
		return nil, err
	}
	profiles, err := p.store.Profiles()
	if err != nil {
		return nil, err
	}
	byName := map[string]alerts.Watch{}
	for _, w := range p.alerts.Watches {
		byName[w.Name] = w
	}
	now := p.now()
	return func(name string, from time.Time) ([]store.Sample, error) {
		w, ok := byName[name]
		wl, known := snap.Workload(w.Workload)
		if !ok || !known || w.Job != nil || len(w.Regions) > 0 || len(w.Providers) > 0 {
			return p.store.Series(name, from)
		}
		tps := history.BestProfiles(profiles, w.Workload)
		pts := history.Series(history.Input{
			Filter: history.Filter{Card: w.Card, Modes: w.Modes, MaxGPUs: w.MaxGPUs, AnyAvailability: w.AnyAvailability},
			Rows:   rows, Terms: terms, Workload: &wl, Catalog: p.catalog,
			Profile: func(card string) (rank.Profile, bool) { v, ok := tps[card]; return v, ok },
			Convert: func(v float64, cur string) (float64, bool) {
				x, err := snap.Rates.Convert(v, cur, w.Currency)
				return x, err == nil
			},
			Since: from, Until: now, Before: true,
		})
		return history.ToSamples(pts), nil
	}, nil
}
