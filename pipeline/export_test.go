package pipeline

import (
	"context"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/store"
)

// DigestSeries is the digest's series of each watch from since, from the
// stored best series where it answers (stored) or from the rows only.
func DigestSeries(p *Pipeline, since time.Time, stored bool) (func(string, time.Time) ([]store.Sample, error), error) {
	return p.digestSeriesFrom(context.Background(), p.View().Snapshot, since, stored)
}

// FirstRun judges offers as source's first run against the other sources'
// medians (rank.Snapshot.SourceMedians): whether the run is held, how many
// of its offers are held back, the learned level band (what the run as a
// whole is judged with) and how many of its cards
// the market can judge (minJudges other sources or more).
func FirstRun(source string, offers []pricewatch.Offer, medians map[string]map[string]float64,
	base func(float64, string) (float64, bool), cfg config.Ingest) (held bool, heldOffers int, band float64, judged int) {
	mk := newMarket(source, medians, base)
	out := judge(gateIn{cfg: cfg, source: source, next: offers, market: mk})
	for _, c := range cellsOf(offers) {
		if _, ok := mk.ratio(c.marketCell(), c.median(), c.cur, cfg.Band); ok {
			judged++
		}
	}
	return out.hold != "", len(out.held), mk.levelBand(cfg.Band), judged
}
