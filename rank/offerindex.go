package rank

import (
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/pricewatch/pricewatch"
)

// packIndex orders a pack's offers by price per GPU-hour (in their own
// currency), then key, and lists them per card and per mode in that order.
// It is built once per pack, on the first query, and shared by every
// snapshot the pack is part of.
type packIndex struct {
	order  []int32
	byCard map[uint32][]int32
	byMode map[uint32][]int32
}

func (p *Pack) index() *packIndex {
	p.ixOnce.Do(func() {
		ix := &packIndex{order: make([]int32, len(p.rows)), byCard: map[uint32][]int32{}, byMode: map[uint32][]int32{}}
		for i := range ix.order {
			ix.order[i] = int32(i)
		}
		slices.SortFunc(ix.order, func(a, b int32) int { return p.cmpRow(a, b) })
		for _, i := range ix.order {
			r := &p.rows[i]
			ix.byCard[r.card] = append(ix.byCard[r.card], i)
			ix.byMode[r.mode] = append(ix.byMode[r.mode], i)
		}
		p.ix = ix
	})
	return p.ix
}

func (p *Pack) cmpRow(a, b int32) int {
	return cmp.Or(cmp.Compare(p.rows[a].price, p.rows[b].price), strings.Compare(p.Key(int(a)), p.Key(int(b))))
}

// OfferQuery selects current offers, as GET /v1/offers does: by card,
// source, mode, kind and availability (empty: any), ordered by price per
// GPU-hour in the offer's currency, then key; a page of at most Limit
// offers after the cursor After.
type OfferQuery struct {
	Card, Source string
	Mode         pricewatch.Mode
	Kind         pricewatch.Kind
	Available    pricewatch.Availability
	Limit        int
	After        *OfferCursor
}

// OfferCursor is the position after the last offer of a page.
type OfferCursor struct {
	Price float64
	Key   string
}

// String encodes the cursor for a URL.
func (c OfferCursor) String() string {
	b := binary.BigEndian.AppendUint64(nil, math.Float64bits(c.Price))
	return base64.RawURLEncoding.EncodeToString(append(b, c.Key...))
}

// ParseOfferCursor decodes a cursor String made.
func ParseOfferCursor(s string) (*OfferCursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 8 {
		return nil, errors.New("not a cursor of this listing")
	}
	return &OfferCursor{Price: math.Float64frombits(binary.BigEndian.Uint64(b)), Key: string(b[8:])}, nil
}

// queryPart is one pack's side of a query.
type queryPart struct {
	p    *Pack
	list []int32
	card int64 // dict index or -1
	mode int64
	kind []uint32
	av   []uint32
	pos  int
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
	return (q.card < 0 || int64(r.card) == q.card) && (q.mode < 0 || int64(r.mode) == q.mode) &&
		(q.kind == nil || slices.Contains(q.kind, r.kind)) && (q.av == nil || slices.Contains(q.av, r.avail))
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

// QueryOffers answers an offer query from the packs' indexes: the page,
// how many offers match in all, and the cursor of the next page (nil on
// the last). Total counts the matches of the lists the filters pick (one
// card's or one mode's offers), not every offer.
func (s *Snapshot) QueryOffers(q OfferQuery) (page []pricewatch.Offer, total int, next *OfferCursor) {
	var parts []*queryPart
	for _, pt := range s.parts {
		p := pt.pack
		if q.Source != "" && p.source != q.Source {
			continue
		}
		ix := p.index()
		qp := &queryPart{p: p, list: ix.order, card: -1, mode: -1}
		if q.Card != "" {
			if qp.card = dictIndex(p, q.Card); qp.card < 0 {
				continue
			}
			qp.list = ix.byCard[uint32(qp.card)]
		}
		if q.Mode != "" {
			if qp.mode = dictIndex(p, string(q.Mode)); qp.mode < 0 {
				continue
			}
			if l := ix.byMode[uint32(qp.mode)]; q.Card == "" || len(l) < len(qp.list) {
				qp.list = l
			}
		}
		if q.Kind != "" {
			qp.kind = dictSet(p, string(q.Kind))
			if q.Kind == pricewatch.KindOffer {
				qp.kind = append(qp.kind, dictSet(p, "")...)
			}
			if len(qp.kind) == 0 {
				continue
			}
		}
		if q.Available != "" {
			qp.av = dictSet(p, string(q.Available))
			if q.Available == pricewatch.AvailableUnknown {
				qp.av = append(qp.av, dictSet(p, "")...)
			}
			if len(qp.av) == 0 {
				continue
			}
		}
		if qp.card < 0 && qp.mode < 0 && qp.kind == nil && qp.av == nil {
			total += len(qp.list)
		} else {
			for _, i := range qp.list {
				if qp.match(i) {
					total++
				}
			}
		}
		if q.After != nil {
			a := q.After
			qp.pos, _ = slices.BinarySearchFunc(qp.list, a, func(i int32, a *OfferCursor) int {
				return cmp.Or(cmp.Compare(p.rows[i].price, a.Price), strings.Compare(p.Key(int(i)), a.Key))
			})
			if qp.pos < len(qp.list) && p.rows[qp.list[qp.pos]].price == a.Price && p.Key(int(qp.list[qp.pos])) == a.Key {
				qp.pos++
			}
		}
		parts = append(parts, qp)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
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
			if best < 0 || cmpAcross(parts[i].p, h, parts[best].p, heads[best]) < 0 {
				best = i
			}
		}
		if best < 0 {
			return page, total, nil
		}
		page = append(page, parts[best].p.Offer(int(heads[best])))
		parts[best].pos++
		heads[best] = parts[best].next()
	}
	for _, h := range heads {
		if h >= 0 {
			last := page[len(page)-1]
			return page, total, &OfferCursor{Price: last.PricePerGPUHour, Key: last.Key}
		}
	}
	return page, total, nil
}

func dictSet(p *Pack, s string) []uint32 {
	if i := dictIndex(p, s); i >= 0 {
		return []uint32{uint32(i)}
	}
	return nil
}

func cmpAcross(a *Pack, i int32, b *Pack, j int32) int {
	return cmp.Or(cmp.Compare(a.rows[i].price, b.rows[j].price), strings.Compare(a.Key(int(i)), b.Key(int(j))))
}
