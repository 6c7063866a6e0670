package pipeline

import (
	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/config"
)

// FirstRun judges offers as source's first run against the other sources'
// medians (rank.Snapshot.SourceMedians): whether the run is held, how many
// of its offers are held back, the learned band and how many of its cards
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
	return out.hold != "", len(out.held), mk.band(cfg.Band), judged
}
