package rank

import (
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
)

// packIndex orders a pack's offers by a sort key (price per GPU-hour in
// their own currency by default), then key, and lists them per card and
// per mode in that order. It is built once per pack and key, on the first
// query, and shared by every snapshot the pack is part of.
type packIndex struct {
	sort   OfferSort
	order  []int32
	byCard map[uint32][]int32
	byMode map[uint32][]int32
}

func (p *Pack) index() *packIndex {
	p.ixOnce.Do(func() { p.ix = p.buildIndex(SortPrice) })
	return p.ix
}

// indexBy is the pack's order by sort key k.
func (p *Pack) indexBy(k OfferSort) *packIndex {
	if k == SortPrice {
		return p.index()
	}
	p.sortedMu.Lock()
	defer p.sortedMu.Unlock()
	if ix, ok := p.sorted[k]; ok {
		return ix
	}
	if p.sorted == nil {
		p.sorted = map[OfferSort]*packIndex{}
	}
	ix := p.buildIndex(k)
	p.sorted[k] = ix
	return ix
}

func (p *Pack) buildIndex(k OfferSort) *packIndex {
	ix := &packIndex{sort: k, order: make([]int32, len(p.rows)), byCard: map[uint32][]int32{}, byMode: map[uint32][]int32{}}
	for i := range ix.order {
		ix.order[i] = int32(i)
	}
	slices.SortFunc(ix.order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(k.value(p, &p.rows[a]), k.value(p, &p.rows[b])), strings.Compare(p.Key(int(a)), p.Key(int(b))))
	})
	for _, i := range ix.order {
		r := &p.rows[i]
		ix.byCard[r.card] = append(ix.byCard[r.card], i)
		ix.byMode[r.mode] = append(ix.byMode[r.mode], i)
	}
	return ix
}

// OfferSort is the order of an offer listing: by price per GPU-hour (in
// the offer's own currency), GPUs, vCPUs or RAM, ascending or descending,
// then by key. An offer that does not state vCPUs or RAM comes last
// either way.
type OfferSort uint8

const (
	SortPrice OfferSort = iota
	SortPriceDesc
	SortGPUs
	SortGPUsDesc
	SortVCPUs
	SortVCPUsDesc
	SortRAM
	SortRAMDesc
)

var offerSortNames = [...]string{"price", "-price", "gpus", "-gpus", "vcpus", "-vcpus", "ram_gb", "-ram_gb"}

// OfferSortNames lists the sort keys ParseOfferSort takes.
func OfferSortNames() []string { return offerSortNames[:] }

func (k OfferSort) String() string {
	if int(k) < len(offerSortNames) {
		return offerSortNames[k]
	}
	return fmt.Sprintf("sort(%d)", k)
}

// ParseOfferSort reads a sort key ("" is price).
func ParseOfferSort(s string) (OfferSort, error) {
	if s == "" {
		return SortPrice, nil
	}
	if i := slices.Index(offerSortNames[:], s); i >= 0 {
		return OfferSort(i), nil
	}
	return 0, fmt.Errorf("unknown sort %q (one of %s)", s, strings.Join(offerSortNames[:], ", "))
}

// value is the row's sort value, ascending in the listing: a descending
// key negates it, and an unstated detail is +Inf so it lists last.
func (k OfferSort) value(p *Pack, r *packRow) float64 {
	var v float64
	switch k / 2 {
	case 0:
		v = r.price
	case 1:
		v = float64(r.gpus)
	case 2:
		v = p.shapes[r.shape].vcpus
	case 3:
		v = p.shapes[r.shape].ramGB
	}
	if k >= SortVCPUs && v == 0 {
		return math.Inf(1)
	}
	if k%2 == 1 {
		return -v
	}
	return v
}

// OfferQuery selects current offers, as GET /v1/offers does: by card (one,
// or several), source, mode, kind, availability (empty: any), the
// narrowing and the listing filters, in the sort's order, then key; a page
// of at most Limit offers after the cursor After (which must come from a
// page of the same sort and currency).
type OfferQuery struct {
	Card, Source string
	// Cards are more cards to list (Card, when set, is one more): the
	// cards a name such as "H100" denotes (CardsNamed).
	Cards     []string
	Mode      pricewatch.Mode
	Kind      pricewatch.Kind
	Available pricewatch.Availability
	Narrowing Narrowing
	// Currency, when set, prices the listing in one currency: the price
	// sorts and MaxPrice compare prices converted with the snapshot's
	// rates, so CNY 1.98 (USD 0.29) lists before USD 0.69. An offer whose
	// currency has no rate lists after every converted one and fails
	// MaxPrice. Empty compares the offers' own numbers, whatever their
	// currency.
	Currency string
	// MaxPrice keeps offers whose price per whole GPU-hour (a fractional
	// offer's scaled to one GPU), in Currency, is at most this (0: any).
	MaxPrice float64
	// GPUs keeps offers that rent exactly this many GPUs at once: a fixed
	// unit of that size, or a per-GPU offer one of whose rentals has that
	// count (0: any).
	GPUs int
	// Vendor keeps cards of this vendor (the catalog's vendor column, any
	// case: nvidia, amd, intel).
	Vendor string
	// MinTotalGPUMemoryGB keeps offers whose rental has at least this much
	// GPU memory in all: the card's memory times the GPUs (GPUs when set,
	// else the offer's largest rental), times the share of a fractional
	// offer.
	MinTotalGPUMemoryGB float64
	Sort                OfferSort
	Limit               int
	After               *OfferCursor
}

// filters reports whether the query has a listing filter beyond card,
// mode, kind, availability and the narrowing.
func (q *OfferQuery) filters() bool {
	return q.MaxPrice > 0 || q.GPUs > 0 || q.Vendor != "" || q.MinTotalGPUMemoryGB > 0
}

// OfferCursor is the position after the last offer of a page: its sort
// value (as the listing compares it: converted to Currency for a price
// sort in a currency) and key.
type OfferCursor struct {
	Sort     OfferSort
	Currency string
	Value    float64
	Key      string
}

// cursorCurrency flags a cursor byte whose listing has a currency.
const cursorCurrency = 0x80

// String encodes the cursor for a URL.
func (c OfferCursor) String() string {
	b := []byte{byte(c.Sort)}
	if c.Currency != "" {
		b[0] |= cursorCurrency
		b = append(append(b, byte(len(c.Currency))), c.Currency...)
	}
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(c.Value))
	return base64.RawURLEncoding.EncodeToString(append(b, c.Key...))
}

// ParseOfferCursor decodes a cursor String made.
func ParseOfferCursor(s string) (*OfferCursor, error) {
	bad := errors.New("not a cursor of this listing")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 9 || int(b[0]&^cursorCurrency) >= len(offerSortNames) {
		return nil, bad
	}
	c := &OfferCursor{Sort: OfferSort(b[0] &^ cursorCurrency)}
	hasCurrency := b[0]&cursorCurrency != 0
	b = b[1:]
	if hasCurrency {
		n := int(b[0])
		if n == 0 || len(b) < 1+n+8 {
			return nil, bad
		}
		c.Currency, b = string(b[1:1+n]), b[1+n:]
	}
	c.Value, c.Key = math.Float64frombits(binary.BigEndian.Uint64(b[:8])), string(b[8:])
	return c, nil
}

// queryPart is one pack's side of a query: one of its cards (or all) in
// one of its currencies (or all, when the listing is not converted or the
// pack has one).
type queryPart struct {
	p    *Pack
	q    *OfferQuery
	list []int32
	card int64 // dict index or -1
	mode int64
	cur  int64 // currency dict index or -1
	kind []uint32
	av   []uint32
	nar  *packNarrowing
	// factor converts the part's prices to the query's currency (1 when
	// not converted, NaN when its currency has no rate).
	factor  float64
	convert bool
	cards   *cardCache
	pos     int
}

// cardCache looks a pack's card dict entries up in the catalog once each.
type cardCache struct {
	p   *Pack
	cat *normalize.Catalog
	m   map[uint32]pricewatch.Card
}

func (c *cardCache) card(i uint32) pricewatch.Card {
	card, ok := c.m[i]
	if !ok {
		card, _ = c.cat.Card(c.p.dict[i])
		c.m[i] = card
	}
	return card
}

func dictIndex(p *Pack, s string) int64 {
	for i, d := range p.dict {
		if d == s {
			return int64(i)
		}
	}
	return -2
}

func (q *queryPart) match(i int32) bool {
	r := &q.p.rows[i]
	sh := &q.p.shapes[r.shape]
	return (q.card < 0 || int64(r.card) == q.card) && (q.mode < 0 || int64(r.mode) == q.mode) &&
		(q.cur < 0 || int64(sh.currency) == q.cur) &&
		(q.kind == nil || slices.Contains(q.kind, sh.kind)) && (q.av == nil || slices.Contains(q.av, r.avail)) &&
		q.nar.keepRow(r) && (!q.q.filters() || q.keepListed(r, sh))
}

// keepListed applies the listing filters (OfferQuery.filters) to a row.
func (q *queryPart) keepListed(r *packRow, sh *packShape) bool {
	f := q.q
	counts := q.p.counts[sh.counts]
	if f.GPUs > 0 && !slices.Contains(counts, f.GPUs) {
		return false
	}
	if f.MaxPrice > 0 {
		whole := r.price
		if sh.fraction > 0 && sh.fraction < 1 {
			whole /= sh.fraction
		}
		whole *= q.factor // NaN (no rate) fails the comparison
		if !(whole <= f.MaxPrice*(1+1e-9)) {
			return false
		}
	}
	if f.Vendor == "" && f.MinTotalGPUMemoryGB <= 0 {
		return true
	}
	card := q.cards.card(r.card)
	if f.Vendor != "" && !strings.EqualFold(card.Vendor, f.Vendor) {
		return false
	}
	if f.MinTotalGPUMemoryGB > 0 {
		n := f.GPUs
		if n == 0 {
			n = int(r.gpus)
			if len(counts) > 0 {
				n = counts[len(counts)-1]
			}
		}
		total := card.MemoryGB * float64(max(n, 1))
		if sh.fraction > 0 && sh.fraction < 1 {
			total *= sh.fraction
		}
		if total < f.MinTotalGPUMemoryGB*(1-1e-9) {
			return false
		}
	}
	return true
}

// value is row i's sort value in the listing: OfferSort.value, a price
// converted to the query's currency (+Inf when its currency has no rate).
func (q *queryPart) value(i int32) float64 {
	k := q.q.Sort
	v := k.value(q.p, &q.p.rows[i])
	if !q.convert || k > SortPriceDesc {
		return v
	}
	if math.IsNaN(q.factor) {
		return math.Inf(1)
	}
	return v * q.factor
}

// next is the next matching row from pos on (-1 at the end).
func (q *queryPart) next() int32 {
	for ; q.pos < len(q.list); q.pos++ {
		if i := q.list[q.pos]; q.match(i) {
			return i
		}
	}
	return -1
}

// currencies are the dict indexes of the currencies of the pack's offers.
func (p *Pack) currencies() []uint32 {
	var out []uint32
	for i := range p.shapes {
		if c := p.shapes[i].currency; !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// QueryOffers answers an offer query from the packs' indexes: the page,
// how many offers match in all, and the cursor of the next page (nil on
// the last). Total counts the matches of the lists the filters pick (one
// card's or one mode's offers), not every offer.
//
// A pack's index orders its offers by their own numbers; converted to one
// currency they keep that order within each currency, so a listing in a
// currency merges one list per pack, card and currency.
func (s *Snapshot) QueryOffers(q OfferQuery) (page []pricewatch.Offer, total int, next *OfferCursor) {
	cards := slices.Clone(q.Cards)
	if q.Card != "" && !slices.Contains(cards, q.Card) {
		cards = append(cards, q.Card)
	}
	cat := s.cat
	if cat == nil {
		cat = normalize.DefaultCatalog()
	}
	var parts []*queryPart
	for _, pt := range s.parts {
		p := pt.pack
		if q.Source != "" && p.source != q.Source {
			continue
		}
		ix := p.indexBy(q.Sort)
		base := queryPart{p: p, q: &q, list: ix.order, card: -1, mode: -1, cur: -1, factor: 1, nar: q.Narrowing.forPack(p, s.cat),
			cards: &cardCache{p: p, cat: cat, m: map[uint32]pricewatch.Card{}}}
		if q.Mode != "" {
			if base.mode = dictIndex(p, string(q.Mode)); base.mode < 0 {
				continue
			}
		}
		if q.Kind != "" {
			base.kind = dictSet(p, string(q.Kind))
			if q.Kind == pricewatch.KindOffer {
				base.kind = append(base.kind, dictSet(p, "")...)
			}
			if len(base.kind) == 0 {
				continue
			}
		}
		if q.Available != "" {
			base.av = dictSet(p, string(q.Available))
			if q.Available == pricewatch.AvailableUnknown {
				base.av = append(base.av, dictSet(p, "")...)
			}
			if len(base.av) == 0 {
				continue
			}
		}
		// One part per card asked for (or one for all).
		var byCard []queryPart
		if len(cards) == 0 {
			byCard = append(byCard, base)
		}
		for _, c := range cards {
			qp := base
			if qp.card = dictIndex(p, c); qp.card < 0 {
				continue
			}
			qp.list = ix.byCard[uint32(qp.card)]
			byCard = append(byCard, qp)
		}
		for _, qp := range byCard {
			if qp.mode >= 0 {
				if l := ix.byMode[uint32(qp.mode)]; qp.card < 0 || len(l) < len(qp.list) {
					qp.list = l
				}
			}
			for _, cp := range s.byCurrency(qp, q.Currency) {
				s.startPart(cp, &total)
				parts = append(parts, cp)
			}
		}
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	var lastValue float64
	heads := make([]int32, len(parts))
	for i, qp := range parts {
		heads[i] = qp.next()
	}
	for len(page) < limit {
		best := -1
		for i, h := range heads {
			if h < 0 {
				continue
			}
			if best < 0 || across(parts[i], h, parts[best], heads[best]) < 0 {
				best = i
			}
		}
		if best < 0 {
			return page, total, nil
		}
		page = append(page, parts[best].p.Offer(int(heads[best])))
		lastValue = parts[best].value(heads[best])
		parts[best].pos++
		heads[best] = parts[best].next()
	}
	if slices.ContainsFunc(heads, func(h int32) bool { return h >= 0 }) {
		return page, total, &OfferCursor{Sort: q.Sort, Currency: q.Currency, Value: lastValue, Key: page[len(page)-1].Key}
	}
	return page, total, nil
}

// byCurrency splits a part by the currencies of its pack when the listing
// converts prices (cur set): each gets its factor to cur, and a currency
// without a rate its rows in key order (they all sort as +Inf).
func (s *Snapshot) byCurrency(qp queryPart, cur string) []*queryPart {
	if cur == "" {
		return []*queryPart{&qp}
	}
	qp.convert = true
	curs := qp.p.currencies()
	var out []*queryPart
	for _, c := range curs {
		cp := qp
		if len(curs) > 1 {
			cp.cur = int64(c)
		}
		f, err := s.Rates.Convert(1, qp.p.dict[c], cur)
		if err != nil || !(f > 0) {
			cp.factor = math.NaN()
			p := qp.p
			var l []int32
			for _, i := range cp.list {
				if int64(p.shapes[p.rows[i].shape].currency) == int64(c) {
					l = append(l, i)
				}
			}
			slices.SortFunc(l, func(a, b int32) int { return strings.Compare(p.Key(int(a)), p.Key(int(b))) })
			cp.list = l
		} else {
			cp.factor = f
		}
		out = append(out, &cp)
	}
	return out
}

// startPart adds the part's matches to total and moves it past the
// query's cursor.
func (s *Snapshot) startPart(qp *queryPart, total *int) {
	q := qp.q
	if qp.card < 0 && qp.mode < 0 && qp.cur < 0 && qp.kind == nil && qp.av == nil && !qp.nar.active && !q.filters() {
		*total += len(qp.list)
	} else {
		for _, i := range qp.list {
			if qp.match(i) {
				*total++
			}
		}
	}
	if a := q.After; a != nil {
		p := qp.p
		qp.pos, _ = slices.BinarySearchFunc(qp.list, a, func(i int32, a *OfferCursor) int {
			return cmp.Or(cmp.Compare(qp.value(i), a.Value), strings.Compare(p.Key(int(i)), a.Key))
		})
		if qp.pos < len(qp.list) && qp.value(qp.list[qp.pos]) == a.Value && p.Key(int(qp.list[qp.pos])) == a.Key {
			qp.pos++
		}
	}
}

func dictSet(p *Pack, s string) []uint32 {
	if i := dictIndex(p, s); i >= 0 {
		return []uint32{uint32(i)}
	}
	return nil
}

// across orders row i of part a and row j of part b in the listing.
func across(a *queryPart, i int32, b *queryPart, j int32) int {
	return cmp.Or(cmp.Compare(a.value(i), b.value(j)), strings.Compare(a.p.Key(int(i)), b.p.Key(int(j))))
}
