package pipeline

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// The market a source's prices are compared with when its own history
// cannot judge them (its first run, a card new to it), and the
// corroboration a move of its whole level needs. Each other source is one
// vote per card and mode (its median), so no source's size decides the
// market; a source is compared with sellers of its own kind first, else
// across kinds through the ratio the market shows between the kinds; and
// the band is learned from the spread the other sources really show.

// Seller kinds (data/kinds.csv).
const (
	kindHyperscaler = "hyperscaler"
	kindCloud       = "cloud"
	kindMarketplace = "marketplace"
)

//go:embed data/kinds.csv
var kindsCSV string

var (
	kindsOnce sync.Once
	kinds     map[string]string
	kindsErr  error
)

// sourceKinds reads data/kinds.csv.
func sourceKinds() (map[string]string, error) {
	kindsOnce.Do(func() {
		r := csv.NewReader(strings.NewReader(kindsCSV))
		r.Comment = '#'
		rows, err := r.ReadAll()
		if err != nil {
			kindsErr = fmt.Errorf("kinds.csv: %w", err)
			return
		}
		kinds = map[string]string{}
		for i, row := range rows[1:] {
			switch row[1] {
			case kindHyperscaler, kindCloud, kindMarketplace:
			default:
				kindsErr = fmt.Errorf("kinds.csv row %d: unknown kind %q", i+2, row[1])
				return
			}
			kinds[row[0]] = row[1]
		}
	})
	return kinds, kindsErr
}

// kindOf is a source's kind; a source with no row is a cloud (a default).
func kindOf(source string) string {
	k, _ := sourceKinds()
	if v, ok := k[source]; ok {
		return v
	}
	return kindCloud
}

// The learned band: bandQuantile of the deviations the other sources show
// from their own market, times bandMargin, and never narrower than the
// configured band. Chosen before the leave-one-source-out evaluation in
// gate_market_test.go, not tuned on it.
const (
	bandQuantile = 0.99
	bandMargin   = 1.5
)

// minJudges is how many other sources must sell a card before the market
// judges a price of it.
const minJudges = 3

// market is the other sources' medians per cell (card\x00mode) in the base
// currency, seen from one source.
type market struct {
	self    string
	kind    string
	medians map[string]map[string]float64 // cell → source → median (self excluded)
	base    func(price float64, cur string) (float64, bool)

	once  sync.Once
	kf    map[[2]string]float64 // log ratio kind a over kind b
	bandV float64
}

func newMarket(self string, all map[string]map[string]float64, base func(float64, string) (float64, bool)) *market {
	m := &market{self: self, kind: kindOf(self), medians: map[string]map[string]float64{}, base: base}
	for cell, bySrc := range all {
		for src, v := range bySrc {
			if src == self || !(v > 0) {
				continue
			}
			if m.medians[cell] == nil {
				m.medians[cell] = map[string]float64{}
			}
			m.medians[cell][src] = v
		}
	}
	return m
}

// learn computes the kind ratios and the band from the other sources.
func (m *market) learn(floor float64) {
	m.once.Do(func() {
		m.kf = kindFactors(m.medians, "")
		var devs []float64
		for cell, bySrc := range m.medians {
			for src, v := range bySrc {
				if d, ok := deviation(m.medians[cell], m.kf, kindOf(src), math.Log(v), src, ""); ok {
					devs = append(devs, math.Abs(d))
				}
			}
		}
		m.bandV = floor
		if len(devs) > 0 {
			slices.Sort(devs)
			q := devs[min(len(devs)-1, int(bandQuantile*float64(len(devs))))]
			m.bandV = math.Max(floor, bandMargin*math.Exp(q))
		}
	})
}

// band is the learned band (at least floor).
func (m *market) band(floor float64) float64 {
	m.learn(floor)
	return m.bandV
}

// ratio is a price's robust ratio to the market of its cell: the one
// nearest 1 over the references built without each other source in turn,
// so no single source, however wrong, can make a price look implausible
// (without it at least two remain). ok is false when the cell has fewer
// than minJudges other sources.
func (m *market) ratio(cell string, price float64, cur string, floor float64) (float64, bool) {
	m.learn(floor)
	bySrc := m.medians[cell]
	if len(bySrc) < minJudges || m.base == nil {
		return 0, false
	}
	p, ok := m.base(price, cur)
	if !ok || !(p > 0) {
		return 0, false
	}
	best, found := 0.0, false
	for drop := range bySrc {
		d, ok := deviation(bySrc, m.kf, m.kind, math.Log(p), "", drop)
		if ok && (!found || math.Abs(d) < math.Abs(best)) {
			best, found = d, true
		}
	}
	return math.Exp(best), found
}

// median of the other sources' medians of a cell (0: none): what an anchor
// records as the market then.
func (m *market) median(cell string) float64 {
	var v []float64
	for _, x := range m.medians[cell] {
		v = append(v, x)
	}
	if len(v) == 0 {
		return 0
	}
	return median(v)
}

// deviation is logp minus the reference of a cell for a seller of kind,
// from the sources but skip and drop: the median of the same kind's
// medians, else of the other kinds' medians moved by the kinds' ratio.
func deviation(bySrc map[string]float64, kf map[[2]string]float64, kind string, logp float64, skip, drop string) (float64, bool) {
	var same, other []float64
	for src, v := range bySrc {
		if src == skip || src == drop {
			continue
		}
		k := kindOf(src)
		if k == kind {
			same = append(same, math.Log(v))
			continue
		}
		if f, ok := kf[[2]string{kind, k}]; ok {
			other = append(other, math.Log(v)+f)
		}
	}
	switch {
	case len(same) > 0:
		return logp - median(same), true
	case len(other) > 0:
		return logp - median(other), true
	}
	return 0, false
}

// kindFactors is, for each pair of kinds, the median over cells of the log
// ratio of the kinds' median prices (skip's prices left out).
func kindFactors(medians map[string]map[string]float64, skip string) map[[2]string]float64 {
	diffs := map[[2]string][]float64{}
	for _, bySrc := range medians {
		byKind := map[string][]float64{}
		for src, v := range bySrc {
			if src != skip {
				byKind[kindOf(src)] = append(byKind[kindOf(src)], math.Log(v))
			}
		}
		for a, va := range byKind {
			for b, vb := range byKind {
				if a != b {
					diffs[[2]string{a, b}] = append(diffs[[2]string{a, b}], median(va)-median(vb))
				}
			}
		}
	}
	out := make(map[[2]string]float64, len(diffs))
	for k, d := range diffs {
		out[k] = median(d)
	}
	return out
}
