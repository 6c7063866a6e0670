package rank

import (
	"math"
	"slices"
	"strings"
)

// VoteKey is the key a source's prices of one seller vote under in the
// market (SellerMedians): the source's name for its own offers (provider
// empty or the source itself), else source "\x00" provider, so that the
// market can count a seller once however many sources resell it
// (pipeline's sellerVotes).
func VoteKey(source, provider string) string {
	if provider == "" || provider == source {
		return source
	}
	return source + "\x00" + provider
}

// SplitVoteKey is VoteKey's inverse: the source and the seller of a key
// (the seller is the source for a plain source name).
func SplitVoteKey(k string) (source, seller string) {
	if i := strings.IndexByte(k, 0); i >= 0 {
		return k[:i], k[i+1:]
	}
	return k, k
}

// SellerMedians is SourceMedians split by seller: per card and mode
// ("card\x00mode"), per VoteKey of a source and the provider of its
// offers, the median price per GPU-hour in the base currency of those
// fresh offers (and reference prices). A source that sells only its own
// machines has one key, its name, as in SourceMedians; an aggregator or a
// catalog has one per cloud behind its offers.
func (s *Snapshot) SellerMedians() map[string]map[string]float64 {
	s.sellersOnce.Do(func() {
		out := map[string]map[string]float64{}
		for _, pt := range s.parts {
			for k, l := range pt.sellerPrices() {
				cell, vote, _ := strings.Cut(k, "\x01")
				if out[cell] == nil {
					out[cell] = map[string]float64{}
				}
				out[cell][vote] = sortedMedian(l)
			}
		}
		s.sellers = out
	})
	return s.sellers
}

// sellerPrices are a part's fresh base prices per cell and vote key
// ("card\x00mode\x01vote"), sorted; the rows marketPrices counts.
func (pt *part) sellerPrices() map[string][]float64 {
	pt.sellersOnce.Do(func() { pt.sellers = pt.countSellerPrices() })
	return pt.sellers
}

func (pt *part) countSellerPrices() map[string][]float64 {
	p := pt.pack
	m := map[string][]float64{}
	for i := range p.rows {
		r := &p.rows[i]
		if p.dict[r.card] == "" || math.IsNaN(pt.base[i]) ||
			(pt.staleAfter > 0 && pt.from-p.times[r.times].observedAt > int64(pt.staleAfter)) {
			continue
		}
		k := p.dict[r.card] + "\x00" + p.dict[r.mode] + "\x01" + VoteKey(p.source, p.dict[p.shapes[r.shape].provider])
		m[k] = append(m[k], pt.base[i])
	}
	for _, l := range m {
		slices.Sort(l)
	}
	return m
}
