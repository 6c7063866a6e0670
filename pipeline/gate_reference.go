package pipeline

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/store"
)

//go:embed data/plausible.csv
var plausibleCSV string

// plausible is a card's range of on-demand prices per GPU-hour, USD, in
// the real catalogs data/plausible.csv was built from.
type plausible struct{ lo, hi float64 }

var plausibleRanges = sync.OnceValue(func() map[string]plausible {
	r := csv.NewReader(strings.NewReader(plausibleCSV))
	r.Comment = '#'
	rows, err := r.ReadAll()
	if err != nil || len(rows) < 1 {
		panic(fmt.Sprintf("pipeline: data/plausible.csv: %v", err))
	}
	m := map[string]plausible{}
	for _, row := range rows[1:] {
		lo, err1 := strconv.ParseFloat(row[1], 64)
		hi, err2 := strconv.ParseFloat(row[2], 64)
		if err1 != nil || err2 != nil || !(lo > 0) || hi < lo {
			panic(fmt.Sprintf("pipeline: data/plausible.csv: row %v", row))
		}
		m[row[0]] = plausible{lo, hi}
	}
	return m
})

// minReferenceCells is how many of a first run's on-demand cards the
// reference ranges must cover to judge it.
const minReferenceCells = 3

// outsideReference judges a first run by the reference ranges where the
// market cannot (fewer than three sellers of a card, as on a new
// install): its on-demand USD cards the market does not judge, each
// priced against its card's range (1 inside it, else the median over the
// nearer end); held as a level when the median of those ratios and more
// than half of them lie beyond the band, the same way. Nothing is judged
// with fewer than minReferenceCells cards covered.
func outsideReference(in gateIn, cells map[string]*cell) (*store.Level, string) {
	ranges := plausibleRanges()
	band := in.cfg.Band
	var rs []float64
	for _, c := range cells {
		if c.mode != pricewatch.ModeOnDemand || c.cur != "USD" {
			continue
		}
		if in.market != nil {
			if _, ok := in.market.ratio(c.marketCell(), c.median(), c.cur, band); ok {
				continue // the market judges it
			}
		}
		pr, ok := ranges[c.card]
		m := c.median()
		if !ok || !(m > 0) {
			continue
		}
		r := 1.0
		switch {
		case m > pr.hi:
			r = m / pr.hi
		case m < pr.lo:
			r = m / pr.lo
		}
		rs = append(rs, r)
	}
	if len(rs) < minReferenceCells {
		return nil, ""
	}
	f, away, held := beyondBand(rs, band)
	if !held {
		return nil, ""
	}
	return &store.Level{Kind: levelBand, Factor: f, Mode: pricewatch.ModeOnDemand},
		fmt.Sprintf("a first run whose on-demand cards lie at ×%.3g of the reference ranges (pipeline/data/plausible.csv; %d of %d cards beyond %.3g× their range), no market to corroborate it",
			f, away, len(rs), band)
}
