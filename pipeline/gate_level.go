package pipeline

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/store"
)

// A source's level: its prices per card, mode and currency (a cell), and
// the anchor they are judged against. A run whose prices moved as a whole
// beyond the band from the anchor is held until the market moved with it
// or an operator accepts it; repetition alone never applies it, and since
// the anchor stays where it was accepted, a slow drift adds up against it
// rather than restarting from each step.

// cell is a source's mapped offers of one card, mode and currency.
type cell struct {
	card   string
	mode   pricewatch.Mode
	cur    string
	prices []float64 // sorted
}

func (c *cell) median() float64 { return median(c.prices) }

// marketCell is the key the market knows a cell by (no currency).
func (c *cell) marketCell() string { return bandKey(c.card, c.mode) }

func cellKey(card string, m pricewatch.Mode, cur string) string {
	return card + "\x00" + string(m) + "\x00" + cur
}

// cellsOf groups a run's mapped, priced offers (reference prices aside).
func cellsOf(offers []pricewatch.Offer) map[string]*cell {
	out := map[string]*cell{}
	for _, o := range offers {
		if o.Card == "" || o.Reference() || !(o.PricePerGPUHour > 0) {
			continue
		}
		k := cellKey(o.Card, o.Mode, o.Currency)
		c := out[k]
		if c == nil {
			c = &cell{card: o.Card, mode: o.Mode, cur: o.Currency}
			out[k] = c
		}
		c.prices = append(c.prices, o.PricePerGPUHour)
	}
	for _, c := range out {
		slices.Sort(c.prices)
	}
	return out
}

// anchorOf records cells as an anchor, with the market's median of each.
func anchorOf(cells map[string]*cell, mk *market, at time.Time, by string) *store.Anchor {
	a := &store.Anchor{At: at, By: by, Cells: make(map[string]store.AnchorCell, len(cells))}
	for k, c := range cells {
		a.Cells[k] = anchorCell(c, mk)
	}
	return a
}

func anchorCell(c *cell, mk *market) store.AnchorCell {
	ac := store.AnchorCell{Price: c.median(), Low: c.prices[0], High: c.prices[len(c.prices)-1]}
	if mk != nil {
		ac.Market = mk.median(c.marketCell())
	}
	return ac
}

// levelMove is a whole-source move of one mode against the anchor.
type levelMove struct {
	mode        pricewatch.Mode
	factor      float64 // median of the cells' ratios to the anchor
	cells, away int     // cells compared, cells beyond the band the same way
	// corroborated: the market moved with the source (the cells' ratios
	// relative to the market's move are inside the band).
	corroborated bool
	relative     float64
}

// anchorMoves compares a run's cells with the anchor, per mode.
func anchorMoves(a *store.Anchor, cells map[string]*cell, mk *market, band float64) []levelMove {
	type acc struct{ own, rel []float64 }
	byMode := map[pricewatch.Mode]*acc{}
	for k, c := range cells {
		ac, ok := a.Cells[k]
		if !ok || !(ac.Price > 0) {
			continue
		}
		x := byMode[c.mode]
		if x == nil {
			x = &acc{}
			byMode[c.mode] = x
		}
		r := c.median() / ac.Price
		x.own = append(x.own, r)
		if mk != nil && ac.Market > 0 {
			if now := mk.median(c.marketCell()); now > 0 {
				x.rel = append(x.rel, r/(now/ac.Market))
			}
		}
	}
	var out []levelMove
	for m, x := range byMode {
		f := median(x.own)
		mv := levelMove{mode: m, factor: f, cells: len(x.own)}
		for _, r := range x.own {
			if implausible(r, band) && (r > 1) == (f > 1) {
				mv.away++
			}
		}
		if 2*len(x.rel) >= len(x.own) && len(x.rel) > 0 {
			mv.relative = median(x.rel)
			mv.corroborated = !implausible(mv.relative, band)
		}
		out = append(out, mv)
	}
	slices.SortFunc(out, func(a, b levelMove) int { return strings.Compare(string(a.mode), string(b.mode)) })
	return out
}

// held reports whether a move holds the run: its level is beyond the band,
// more than half its cards moved that far the same way, and the market did
// not move with it.
func (mv levelMove) held(band float64) bool {
	return implausible(mv.factor, band) && 2*mv.away > mv.cells && !mv.corroborated
}

func (mv levelMove) String() string {
	s := fmt.Sprintf("%s prices ×%.3g against the accepted level (%d of %d cards beyond the band)", mv.mode, mv.factor, mv.away, mv.cells)
	if mv.relative > 0 {
		s += fmt.Sprintf(", ×%.3g against the market's move", mv.relative)
	} else {
		s += ", no market to corroborate it"
	}
	return s
}

// followMarket moves the anchor's cells of corroborated moves to the run's
// level (the market moved with the source), and adds the run's new cells.
func followMarket(a *store.Anchor, cells map[string]*cell, mk *market, moves []levelMove, band float64) *store.Anchor {
	out := &store.Anchor{At: a.At, By: a.By, Cells: make(map[string]store.AnchorCell, len(a.Cells))}
	for k, v := range a.Cells {
		out.Cells[k] = v
	}
	follow := map[pricewatch.Mode]bool{}
	for _, mv := range moves {
		follow[mv.mode] = mv.corroborated && implausible(mv.factor, band)
	}
	for k, c := range cells {
		if _, ok := out.Cells[k]; !ok || follow[c.mode] {
			out.Cells[k] = anchorCell(c, mk)
		}
	}
	return out
}

// outsideOwnRange reports whether a new offer's price lies beyond the band
// around the range its source's accepted level has for the card.
func outsideOwnRange(a *store.Anchor, o pricewatch.Offer, band float64) (string, bool) {
	if a == nil {
		return "", false
	}
	ac, ok := a.Cells[cellKey(o.Card, o.Mode, o.Currency)]
	if !ok || !(ac.Low > 0) {
		return "", false
	}
	p := o.PricePerGPUHour
	switch {
	case p > ac.High*band:
		return fmt.Sprintf("new offer at ×%.3g of the highest accepted %s %s price (%.4g %s)", p/ac.High, o.Card, o.Mode, ac.High, o.Currency), true
	case p < ac.Low/band:
		return fmt.Sprintf("new offer at ×%.3g of the lowest accepted %s %s price (%.4g %s)", p/ac.Low, o.Card, o.Mode, ac.Low, o.Currency), true
	}
	return "", false
}

// anchorFromStored builds an anchor from the stored offers of a source
// that has none yet (a database from before anchors).
func anchorFromStored(prev map[string]prevPrice, mk *market, at time.Time) *store.Anchor {
	offers := make([]pricewatch.Offer, 0, len(prev))
	for _, p := range prev {
		offers = append(offers, pricewatch.Offer{Card: p.Card, Mode: p.Mode, Currency: p.Currency, PricePerGPUHour: p.PricePerGPUHour})
	}
	cells := cellsOf(offers)
	if len(cells) == 0 {
		return nil
	}
	return anchorOf(cells, mk, at, "stored offers")
}
