package pipeline

import (
	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/rank"
)

// sellerVotes turns the medians the market is built from into one vote per
// seller, seen from source self. The medians come keyed by source, or by
// rank.VoteKey (source and the seller behind its offers: the cloud an
// aggregator or a catalog resells); a seller's vote is the median of the
// medians the sources other than self show for it, so that two aggregators
// reselling one cloud, or an aggregator and the cloud's own source, count
// once. Self's own seller (everything resold of it) and everything self
// lists are left out: the market judges a source by the others.
func sellerVotes(all map[string]map[string]float64, self string) map[string]map[string]float64 {
	out := make(map[string]map[string]float64, len(all))
	for cell, byKey := range all {
		by := map[string][]float64{}
		for k, v := range byKey {
			src, seller := rank.SplitVoteKey(k)
			if src == self || seller == self || !(v > 0) {
				continue
			}
			by[seller] = append(by[seller], v)
		}
		if len(by) == 0 {
			continue
		}
		out[cell] = make(map[string]float64, len(by))
		for seller, l := range by {
			out[cell][seller] = median(l)
		}
	}
	return out
}

// runSellerMedians is a run's median price per GPU-hour in the base
// currency, per card and mode and per rank.VoteKey of the run's source and
// each offer's provider, over its mapped offers (reference prices too, as
// the view's market counts a source's stored offers), so that a first run
// of an aggregator votes as the clouds behind it.
func runSellerMedians(source string, offers []pricewatch.Offer, base func(float64, string) (float64, bool)) map[string]map[string]float64 {
	by := map[string]map[string][]float64{}
	for i := range offers {
		o := &offers[i]
		if o.Card == "" || !(o.PricePerGPUHour > 0) {
			continue
		}
		x, ok := base(o.PricePerGPUHour, o.Currency)
		if !ok || !(x > 0) {
			continue
		}
		cell, vote := bandKey(o.Card, o.Mode), rank.VoteKey(source, o.Provider)
		if by[cell] == nil {
			by[cell] = map[string][]float64{}
		}
		by[cell][vote] = append(by[cell][vote], x)
	}
	out := make(map[string]map[string]float64, len(by))
	for cell, votes := range by {
		out[cell] = make(map[string]float64, len(votes))
		for v, l := range votes {
			out[cell][v] = median(l)
		}
	}
	return out
}
