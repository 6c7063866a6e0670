package rank

import (
	"math"
	"slices"

	"github.com/pricewatch/pricewatch"
)

// The market a source is judged against: the fresh offers and reference
// prices of the other sources, per card and mode, in the base currency.

// SourceMedians is, per card and mode ("card\x00mode"), each source's
// median price per GPU-hour in the base currency over its fresh offers:
// one vote per source, so a source's size does not decide the market.
func (s *Snapshot) SourceMedians() map[string]map[string]float64 {
	s.mediansOnce.Do(func() {
		out := map[string]map[string]float64{}
		for _, pt := range s.parts {
			for k, l := range pt.marketPrices() {
				if len(l) == 0 {
					continue
				}
				if out[k] == nil {
					out[k] = map[string]float64{}
				}
				out[k][pt.pack.source] = sortedMedian(l)
			}
		}
		s.medians = out
	})
	return s.medians
}

// BaseCurrency converts price in cur to the snapshot's base currency; ok
// is false without a rate.
func (s *Snapshot) BaseCurrency(price float64, cur string) (float64, bool) {
	x, err := s.Rates.Convert(price, cur, s.Base)
	return x, err == nil && !math.IsNaN(x)
}

// MarketMedian is the median price per GPU-hour, in the base currency, of
// the fresh offers and reference prices of a card and mode from every
// source but exclude; ok is false when there are none.
func (s *Snapshot) MarketMedian(card string, mode pricewatch.Mode, exclude string) (float64, bool) {
	k := card + "\x00" + string(mode)
	var lists [][]float64
	n := 0
	for _, pt := range s.parts {
		if pt.pack.source == exclude {
			continue
		}
		if l := pt.marketPrices()[k]; len(l) > 0 {
			lists = append(lists, l)
			n += len(l)
		}
	}
	switch {
	case n == 0:
		return 0, false
	case len(lists) == 1:
		return sortedMedian(lists[0]), true
	}
	all := make([]float64, 0, n)
	for _, l := range lists {
		all = append(all, l...)
	}
	slices.Sort(all)
	return sortedMedian(all), true
}

func sortedMedian(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func (pt *part) marketPrices() map[string][]float64 {
	pt.marketOnce.Do(func() {
		p := pt.pack
		m := map[string][]float64{}
		for i := range p.rows {
			r := &p.rows[i]
			if p.dict[r.card] == "" || math.IsNaN(pt.base[i]) ||
				(pt.staleAfter > 0 && pt.from-p.times[r.times].observedAt > int64(pt.staleAfter)) {
				continue
			}
			k := p.dict[r.card] + "\x00" + p.dict[r.mode]
			m[k] = append(m[k], pt.base[i])
		}
		for _, l := range m {
			slices.Sort(l)
		}
		pt.market = m
	})
	return pt.market
}
