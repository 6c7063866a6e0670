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

// OfferQuery selects current offers, as GET /v1/offers does: by card,
// source, mode, kind, availability (empty: any) and the narrowing, in the
// sort's order, then key; a page of at most Limit offers after the cursor
// After (which must come from a page of the same sort).
type OfferQuery struct {
	Card, Source string
	Mode         pricewatch.Mode
	Kind         pricewatch.Kind
	Available    pricewatch.Availability
	Narrowing    Narrowing
	Sort         OfferSort
	Limit        int
	After        *OfferCursor
}

// OfferCursor is the position after the last offer of a page: its sort
// value (as OfferSort.value gives it) and key.
type OfferCursor struct {
	Sort  OfferSort
	Value float64
	Key   string
}

// String encodes the cursor for a URL.
func (c OfferCursor) String() string {
	b := binary.BigEndian.AppendUint64([]byte{byte(c.Sort)}, math.Float64bits(c.Value))
	return base64.RawURLEncoding.EncodeToString(append(b, c.Key...))
}

// ParseOfferCursor decodes a cursor String made.
func ParseOfferCursor(s string) (*OfferCursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 9 || int(b[0]) >= len(offerSortNames) {
		return nil, errors.New("not a cursor of this listing")
	}
	return &OfferCursor{Sort: OfferSort(b[0]), Value: math.Float64frombits(binary.BigEndian.Uint64(b[1:9])), Key: string(b[9:])}, nil
}

// queryPart is one pack's side of a query.
type queryPart struct {
	p    *Pack
	list []int32
	card int64 // dict index or -1
	mode int64
	kind []uint32
	av   []uint32
	nar  *packNarrowing
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
		(q.kind == nil || slices.Contains(q.kind, q.p.shapes[r.shape].kind)) && (q.av == nil || slices.Contains(q.av, r.avail)) &&
		q.nar.keepRow(r)
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
		ix := p.indexBy(q.Sort)
		qp := &queryPart{p: p, list: ix.order, card: -1, mode: -1, nar: q.Narrowing.forPack(p, s.cat)}
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
		if qp.card < 0 && qp.mode < 0 && qp.kind == nil && qp.av == nil && !qp.nar.active {
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
				return cmp.Or(cmp.Compare(q.Sort.value(p, &p.rows[i]), a.Value), strings.Compare(p.Key(int(i)), a.Key))
			})
			if qp.pos < len(qp.list) && q.Sort.value(p, &p.rows[qp.list[qp.pos]]) == a.Value && p.Key(int(qp.list[qp.pos])) == a.Key {
				qp.pos++
			}
		}
		parts = append(parts, qp)
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
			if best < 0 || q.Sort.across(parts[i].p, h, parts[best].p, heads[best]) < 0 {
				best = i
			}
		}
		if best < 0 {
			return page, total, nil
		}
		page = append(page, parts[best].p.Offer(int(heads[best])))
		lastValue = q.Sort.value(parts[best].p, &parts[best].p.rows[heads[best]])
		parts[best].pos++
		heads[best] = parts[best].next()
	}
	if slices.ContainsFunc(heads, func(h int32) bool { return h >= 0 }) {
		return page, total, &OfferCursor{Sort: q.Sort, Value: lastValue, Key: page[len(page)-1].Key}
	}
	return page, total, nil
}

func dictSet(p *Pack, s string) []uint32 {
	if i := dictIndex(p, s); i >= 0 {
		return []uint32{uint32(i)}
	}
	return nil
}

func (k OfferSort) across(a *Pack, i int32, b *Pack, j int32) int {
	return cmp.Or(cmp.Compare(k.value(a, &a.rows[i]), k.value(b, &b.rows[j])), strings.Compare(a.Key(int(i)), b.Key(int(j))))
}
