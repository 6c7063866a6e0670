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
// corroboration a move of its whole level needs. Each other seller is one
// vote per card and mode (the median of its sources' medians: the cloud
// behind an aggregator's offer votes once however many sources resell it,
// sellerVotes), so no source's size decides the market; a source is compared with sellers of its own kind first, else
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
	// levelV is levelBand's.
	levelV float64

	// without caches the kind factors learned without each source, as
	// ratio leaves each out in turn.
	withoutMu sync.Mutex
	without   map[string]map[[2]string]float64
	cells     map[string][]kindDiff // each cell's kind ratios, no source left out (learn)
}

func newMarket(self string, all map[string]map[string]float64, base func(float64, string) (float64, bool)) *market {
	m := &market{self: self, kind: kindOf(self), medians: map[string]map[string]float64{}, base: base}
	for cell, bySrc := range sellerVotes(all, self) {
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
		m.cells = make(map[string][]kindDiff, len(m.medians))
		for cell, bySrc := range m.medians {
			m.cells[cell] = cellFactors(bySrc, "")
		}
		m.kf = m.factorsWithout("")
		var devs []float64
		bySource := map[string][]float64{}
		for cell, bySrc := range m.medians {
			for src, v := range bySrc {
				if d, ok := deviation(m.medians[cell], m.kf, kindOf(src), math.Log(v), src, ""); ok {
					devs = append(devs, math.Abs(d))
					bySource[src] = append(bySource[src], d)
				}
			}
		}
		m.bandV = learnedBand(devs, floor)
		levels := make([]float64, 0, len(bySource))
		for _, d := range bySource {
			levels = append(levels, math.Abs(median(d)))
		}
		m.levelV = learnedBand(levels, floor)
	})
}

// learnedBand is bandMargin times the bandQuantile of absolute log
// deviations, at least floor.
func learnedBand(devs []float64, floor float64) float64 {
	if len(devs) == 0 {
		return floor
	}
	slices.Sort(devs)
	q := devs[min(len(devs)-1, int(bandQuantile*float64(len(devs))))]
	return math.Max(floor, bandMargin*math.Exp(q))
}

// levelBand is the band a whole first run's level is judged with: learned
// as band is, from the other sources' levels (the median of each one's
// deviations over its cards) rather than their single cards. A run's
// level is the median of its cards, so its cards' noise, which band must
// allow for one card, mostly cancels in it: judged by band, a level ×10
// passed on a catalog whose odd cards spread 12× (issue 31).
func (m *market) levelBand(floor float64) float64 {
	m.learn(floor)
	return m.levelV
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
		d, ok := deviation(bySrc, m.kfWithout(drop), m.kind, math.Log(p), "", drop)
		if ok && (!found || math.Abs(d) < math.Abs(best)) {
			best, found = d, true
		}
	}
	return math.Exp(best), found
}

// factorsWithout is, for each pair of kinds, the median over cells of the
// log ratio of the kinds' median prices, drop's prices left out; from the
// cells' ratios learn computed: a cell drop does not sell keeps its ratios, only drop's
// cells are worked again. A market judges each of its sources' prices
// leaving each other source out in turn, so this runs for every source of
// a round: redoing every cell was a sixth of a round's time.
func (m *market) factorsWithout(drop string) map[[2]string]float64 {
	diffs := map[[2]string][]float64{}
	for cell, bySrc := range m.medians {
		cf := m.cells[cell]
		if _, sells := bySrc[drop]; sells && drop != "" {
			cf = cellFactors(bySrc, drop)
		}
		for _, d := range cf {
			diffs[d.pair] = append(diffs[d.pair], d.logRatio)
		}
	}
	return medianFactors(diffs)
}

// kfWithout is the kind factors learned without drop: a reference built
// without a source must not lean on it through the kinds' ratio either.
// A ratio that only drop's prices showed (the one seller of its kind:
// on a new install, a ×10 marketplace made every other marketplace look
// ×0.1 of the clouds) is not known without it: the kinds are compared as
// they are (×1) rather than not at all, so the cell is judged as before.
func (m *market) kfWithout(drop string) map[[2]string]float64 {
	m.withoutMu.Lock()
	defer m.withoutMu.Unlock()
	if kf, ok := m.without[drop]; ok {
		return kf
	}
	kf := m.factorsWithout(drop)
	for pair := range m.kf {
		if _, ok := kf[pair]; !ok {
			kf[pair] = 0
		}
	}
	if m.without == nil {
		m.without = map[string]map[[2]string]float64{}
	}
	m.without[drop] = kf
	return kf
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

// kindDiff is one cell's log ratio of kind pair[0]'s median price over
// kind pair[1]'s.
type kindDiff struct {
	pair     [2]string
	logRatio float64
}

// cellFactors are one cell's kind ratios, for each ordered pair of the
// kinds selling it (skip's prices left out).
func cellFactors(bySrc map[string]float64, skip string) []kindDiff {
	byKind := map[string][]float64{}
	for src, v := range bySrc {
		if src != skip {
			k := kindOf(src)
			byKind[k] = append(byKind[k], math.Log(v))
		}
	}
	if len(byKind) < 2 {
		return nil
	}
	med := make(map[string]float64, len(byKind))
	for k, v := range byKind {
		med[k] = median(v)
	}
	out := make([]kindDiff, 0, len(med)*(len(med)-1))
	for a, ma := range med {
		for b, mb := range med {
			if a != b {
				out = append(out, kindDiff{[2]string{a, b}, ma - mb})
			}
		}
	}
	return out
}

// medianFactors is the median of each pair's log ratios.
func medianFactors(diffs map[[2]string][]float64) map[[2]string]float64 {
	out := make(map[[2]string]float64, len(diffs))
	for k, d := range diffs {
		out[k] = median(d)
	}
	return out
}
