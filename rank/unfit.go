package rank

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/pricewatch/pricewatch"
)

// Unfit is a card whose offers cannot hold a workload, and why in GiB.
type Unfit struct {
	Card string `json:"card"`
	// GPUs is the most GPUs any of its offers rents within the filter's
	// max_gpus (a serving group: the largest power of two of them), the
	// layout the reason is worked for.
	GPUs   int    `json:"gpus"`
	Reason string `json:"reason"`
}

// Unfit lists the cards that have eligible offers in the filter's modes
// but none that can hold the workload, each with NoFitReason on the most
// GPUs an offer of it rents: what `best --include-unfit` shows beside the
// ranking. The work is bounded by the snapshot's offers, once each.
func (s *Snapshot) Unfit(workload string, f Filter) []Unfit {
	w, ok := s.Workload(workload)
	if !ok {
		return nil
	}
	modes := f.Modes
	if len(modes) == 0 {
		modes = pricewatch.DefaultModes()
	}
	limit := f.MaxGPUs
	if limit <= 0 {
		limit = MaxMaxGPUs
	}
	fits := map[string]bool{}
	for _, e := range s.Best(workload, f) {
		fits[e.Card] = true
	}
	most := map[string]int{}
	cards := map[string]pricewatch.Card{}
	for o := range s.Offers() {
		if fits[o.Card] || (f.Card != "" && o.Card != f.Card) || !slices.Contains(modes, o.Mode) ||
			(o.Unavailable() && !f.AnyAvailability) {
			continue
		}
		c, why := s.eligible(o, s.cat)
		if why != "" {
			continue
		}
		n := 0
		for _, k := range o.GPUCounts {
			if k <= limit {
				n = max(n, k)
			}
		}
		if n > most[o.Card] {
			most[o.Card], cards[o.Card] = n, c
		}
	}
	var out []Unfit
	for id, n := range most {
		if w.Method == MethodServe {
			n = 1 << (bits.Len(uint(n)) - 1)
		}
		if r := NoFitReason(w, cards[id], n); r != "" {
			out = append(out, Unfit{Card: id, GPUs: n, Reason: r})
		}
	}
	slices.SortFunc(out, func(a, b Unfit) int { return cmp.Compare(a.Card, b.Card) })
	return out
}
