package pipeline

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// A market reuses each cell's kind ratios when it leaves a source out,
// working again only the cells that source sells. That must give what the
// definition gives, kindFactors over every cell without the source, for
// every source left out (and no ratio at all for a pair only the dropped
// source showed, which kfWithout compares as ×1). Sources of all three
// kinds (data/kinds.csv) sell random subsets of 40 cells at random prices.
func TestMarket_KindFactorsWithoutEachSourceAsDefined(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 28))
	sources := []string{"aws", "gcp", "azure", "lambda", "runpod", "vultr", "vast", "tensordock", "primeintellect", "cny-index", "no-row-source"}
	all := map[string]map[string]float64{}
	for c := range 40 {
		cell := fmt.Sprintf("CARD-%d\x00on-demand", c)
		all[cell] = map[string]float64{}
		for _, s := range sources {
			if r.Float64() < 0.45 {
				all[cell][s] = 0.5 + 4*r.Float64()
			}
		}
	}
	m := newMarket("lambda", all, func(p float64, _ string) (float64, bool) { return p, true })
	m.learn(0.5)
	for _, drop := range sources {
		got := m.kfWithout(drop)
		want := kindFactors(m.medians, drop)
		for pair, w := range want {
			if g, ok := got[pair]; !ok || g != w {
				t.Errorf("without %s, %v: %v (present %v), want %v", drop, pair, g, ok, w)
			}
		}
		for pair, g := range got {
			if _, ok := want[pair]; !ok && g != 0 {
				t.Errorf("without %s, %v: %v, want ×1 (0) for a pair only %s showed", drop, pair, g, drop)
			}
		}
	}
}

// kindFactors is the definition factorsWithout must meet: for each pair of kinds, the median over cells of the log
// ratio of the kinds' median prices (skip's prices left out).
func kindFactors(medians map[string]map[string]float64, skip string) map[[2]string]float64 {
	diffs := map[[2]string][]float64{}
	for _, bySrc := range medians {
		for _, d := range cellFactors(bySrc, skip) {
			diffs[d.pair] = append(diffs[d.pair], d.logRatio)
		}
	}
	return medianFactors(diffs)
}
