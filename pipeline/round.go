package pipeline

import (
	"context"
	"math"
	"sort"
	"sync"
)

// A round's first runs are judged against each other. A first run (no
// anchor, no stored offers: every source of a new install, or sources
// added together) has no level of its own to be judged by; judged as it
// came, the first of them would be anchored before any other could
// disagree (issue 31: a source at ×10 on day one was anchored at ×10 and
// its true prices later held as ×0.1). So RunAll scrapes and normalizes
// every source of the round first, then judges each first run against the
// market of the view plus the round's other first runs, one vote per
// source per card and mode (its median, as the view's market counts a
// source), itself excluded; only then are they recorded. Where fewer than
// three other sellers of a card exist, the reference ranges judge it
// (gate_reference.go).

// roundMarket is the sources' medians per cell (card\x00mode) in the base
// currency: the view's and the round's first runs', and the conversion
// they were made with.
type roundMarket struct {
	medians map[string]map[string]float64
	base    func(price float64, cur string) (float64, bool)
}

// firstRun reports whether a run has nothing of its own source to be
// judged by: no anchor and no stored offers.
func firstRun(in *gateIn) bool { return in.health.Anchor == nil && len(in.prev) == 0 }

// RunAll runs the named sources (all enabled ones when names is empty)
// concurrently and returns their summaries in name order. A source's run
// is recorded as soon as it is judged, except first runs: those wait for
// the round's other runs and are judged against each other.
func (p *Pipeline) RunAll(ctx context.Context, names []string) []Summary {
	if len(names) == 0 {
		names = p.Enabled()
	}
	out := make([]Summary, len(names))
	parked := make([]*sourceRun, len(names))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r, sum := p.startRun(ctx, n)
			switch {
			case r == nil:
				out[i] = sum
			case r.err == nil && r.in != nil && firstRun(r.in):
				parked[i] = r // judged with the round's other first runs
			default:
				out[i] = p.finishRun(r, nil)
			}
		}()
	}
	wg.Wait()
	peers := p.roundMarket(parked)
	for i, r := range parked {
		if r != nil {
			out[i] = p.finishRun(r, peers)
			parked[i] = nil // its offers are the store's now
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Source < out[j].Source })
	return out
}

// roundMarket merges the view's source medians with the medians of the
// round's first runs; nil with fewer than two first runs (one has no peer:
// the view's market judges it). Prices are converted with the stored
// rates, which hold a rates source's run of this round (it was recorded
// before the first runs are judged).
func (p *Pipeline) roundMarket(runs []*sourceRun) *roundMarket {
	n := 0
	for _, r := range runs {
		if r != nil {
			n++
		}
	}
	if n < 2 {
		return nil
	}
	rates, err := p.store.Rates()
	if err != nil {
		p.log.Warn("read exchange rates for the round's first runs; judging them in their own currency only", "err", err)
		rates = nil
	}
	baseCur := p.cfg.Ranking.BaseCurrency
	base := func(price float64, cur string) (float64, bool) {
		x, err := rates.Convert(price, cur, baseCur)
		return x, err == nil && !math.IsNaN(x)
	}
	medians := map[string]map[string]float64{}
	add := func(cell, src string, v float64) {
		if medians[cell] == nil {
			medians[cell] = map[string]float64{}
		}
		medians[cell][src] = v
	}
	if v := p.View(); v != nil && v.Snapshot != nil {
		for cell, bySrc := range v.Snapshot.SellerMedians() {
			for src, m := range bySrc {
				add(cell, src, m)
			}
		}
	}
	for _, r := range runs {
		if r == nil {
			continue
		}
		for cell, byVote := range runSellerMedians(r.name, r.in.next, base) {
			for vote, m := range byVote {
				add(cell, vote, m)
			}
		}
	}
	return &roundMarket{medians: medians, base: base}
}
