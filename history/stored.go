package history

import (
	"slices"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// StoredInput is what FromStored merges: one card's (or every card's) and
// one workload's stored points (store.BestSeries), the filter and the
// answer's bounds.
type StoredInput struct {
	Meta   store.SeriesMeta
	Points []store.SeriesPoint
	// Modes (pricewatch.DefaultModes when empty) and Source ("" for all)
	// select the sub-series.
	Modes  []pricewatch.Mode
	Source string
	// Convert converts an amount of a currency into the answer's currency.
	Convert      func(amount float64, currency string) (float64, bool)
	Since, Until time.Time
	Step         time.Duration
	Before       bool
}

// Serves reports whether the stored series answers a filter exactly as
// Series computes it from the rows: priced with today's workloads and
// profiles (no profile written since a run checked them); the stored series holds any source and
// mode, not a GPU limit or out-of-stock offers, and only from its start
// (or from the history's start when none is missing).
func (in StoredInput) Serves(f Filter) bool {
	m := in.Meta
	return m.Live && m.Current && f.MaxGPUs == 0 && !f.AnyAvailability &&
		(m.Real || in.Since.After(m.Start))
}

// FromStored merges the sub-series into the points Series gives for the
// same filter from the rows: at each stored time that has a point of a
// selected sub-series, the best over every selected sub-series' latest
// point. ok is false when the answer needs the state before the series'
// start (a carried first point at a start that is not the history's).
func FromStored(in StoredInput) (pts []Point, ok bool) {
	modes := in.Modes
	if len(modes) == 0 {
		modes = pricewatch.DefaultModes()
	}
	type sub struct{ card, mode, cur, source string }
	state := map[sub]store.SeriesPoint{}
	pick := func(p store.SeriesPoint) bool {
		return (in.Source == "" || p.Source == in.Source) && slices.Contains(modes, p.Mode)
	}
	out := []Point{}
	var prior *Point
	ps := in.Points
	for i := 0; i < len(ps); {
		at := ps[i].At
		hit := false
		for ; i < len(ps) && ps[i].At.Equal(at); i++ {
			switch p := ps[i]; {
			case !pick(p):
			case p.Touch:
				hit = true // a row of a selected sub-series: a point
			default:
				state[sub{p.Card, string(p.Mode), p.Currency, p.Source}] = p
			}
		}
		if !hit {
			continue
		}
		switch {
		case at.Before(in.Since):
			if in.Before {
				// The last picked time before since carries its state
				// (points of other sub-series may follow it).
				p := merge(state, in.Convert, at)
				prior = &p
			}
		case !at.After(in.Until):
			out = append(out, merge(state, in.Convert, at))
		}
	}
	if in.Before && !in.Meta.Real && (prior == nil || !prior.At.After(in.Meta.Start)) {
		return nil, false
	}
	if in.Step > 0 {
		out = bucket(out, in.Step)
	}
	if prior != nil {
		out = append([]Point{*prior}, out...)
	}
	return out, true
}

// merge is the best over the sub-series' latest points at time at, ties
// to the lower key as the book's heaps break them.
func merge[K comparable](state map[K]store.SeriesPoint, convert func(float64, string) (float64, bool), at time.Time) Point {
	p := Point{At: at}
	for _, s := range state {
		if s.PriceKey == "" {
			continue // no offer counted
		}
		price, ok := convert(s.Price, s.Currency)
		if !ok {
			continue
		}
		p.Offers += s.Offers
		if p.PricePerGPUHour == nil || price < *p.PricePerGPUHour || (price == *p.PricePerGPUHour && s.PriceKey < p.PriceKey) {
			v := price
			p.PricePerGPUHour, p.PriceKey = &v, s.PriceKey
		}
		if s.CostKey == "" {
			continue
		}
		cp, _ := convert(s.CostPrice, s.Currency)
		cost := rank.CostPerMillionTokens(cp*float64(s.GPUs), s.TokensPerSecond)
		if p.CostPerMillionTokens == nil || cost < *p.CostPerMillionTokens || (cost == *p.CostPerMillionTokens && s.CostKey < p.Key) {
			p.CostPerMillionTokens, p.Key, p.Card, p.GPUs, p.UnitPricePerHour = &cost, s.CostKey, s.Card, s.GPUs, cp*float64(s.GPUs)
		}
	}
	return p
}
