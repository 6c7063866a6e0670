package rank

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/pricewatch/pricewatch"
)

// Pack is one source's current offers in a compact form: one fixed-size
// row per offer with no pointers in it (the garbage collector never scans
// them), the unique strings (keys, offer ids) in one byte arena and the
// repeated ones (providers, regions, cards, modes, URLs…) once each. A
// snapshot ranks packs; the daemon keeps one per source and replaces only
// the pack of the source that ran. A Pack is immutable and safe for
// concurrent use.
type Pack struct {
	source string
	rows   []packRow // sorted by key
	arena  []byte
	dict   []string
	counts [][]int
	// shapes are the rows' provider, machine and terms, times their first
	// and last sightings: few per source, so rows share them instead of
	// each carrying them (72 bytes a row instead of 208).
	shapes []packShape
	times  []packTimes
	// direct are the provider\x00mode pairs the source scrapes itself.
	direct []string
	// ix orders the offers for listings by price (built on first use);
	// sorted by the other sort keys, each built when first asked for.
	ixOnce   sync.Once
	ix       *packIndex
	sortedMu sync.Mutex
	sorted   map[OfferSort]*packIndex
	// providers are the providers of the pack's offers, sorted (on first
	// use).
	provOnce  sync.Once
	providers []string
}

type sref struct{ off, n uint32 }

// packRow is one offer: what ranking and listing read on every row that
// differs from offer to offer. Strings other than the key and the offer
// id are indexes into the pack's dict; the rest is in its shapes and
// times, which rows share (72 bytes a row; 208 before issue 20).
type packRow struct {
	key, offerID                    sref // offerID is a part of key when the key holds it
	card, mode, avail, shape, times uint32
	gpus                            int32
	flags                           uint32
	price, unitPrice, rel           float64
}

// packShape is what offers of a source share with their neighbours: the
// provider, the machine (vCPUs, RAM, disk, link, place) and the terms.
// GPU count lists are indexes into the pack's counts.
type packShape struct {
	provider, currency, kind, rentUnit, counts uint32
	region, gpuName, stock, reclaim, url       uint32
	interconnect, country, rentURL             uint32
	rentUnitGPUs                               int32
	fraction, commitment, storage, egress      float64
	capHours, freeEgress                       float64
	vcpus, ramGB, diskGB                       float64
}

// packTimes are an offer's first and last sightings (Unix nanoseconds): a
// run's offers share them, so rows hold an index.
type packTimes struct{ firstSeen, observedAt int64 }

const (
	rowShared = 1 << iota
	rowHasRel
	rowBid
)

// PackBuilder collects one source's offers into a Pack.
type PackBuilder struct {
	p      *Pack
	dict   map[string]uint32
	counts map[string]uint32
	sorted bool
	last   string
	// keys are the rows' keys in the order added, and common the length of
	// the prefix they share (for sortRows).
	keys   []sref
	common int
	direct map[uint64]bool
	shapes map[packShape]uint32
	times  map[packTimes]uint32
	// cache is the last string interned per field: offers of one source
	// repeat their neighbours' providers, modes, currencies and URLs.
	cache [15]struct {
		s string
		i uint32
	}
}

// NewPackBuilder starts a pack of a source's offers; n is how many are
// expected (0 if not known).
func NewPackBuilder(source string, n int) *PackBuilder {
	b := &PackBuilder{p: &Pack{source: source, rows: make([]packRow, 0, n), arena: make([]byte, 0, 24*n)},
		dict: map[string]uint32{"": 0}, counts: map[string]uint32{}, sorted: true, direct: map[uint64]bool{},
		shapes: map[packShape]uint32{}, times: map[packTimes]uint32{},
		keys: make([]sref, 0, n)}
	b.p.dict = append(b.p.dict, "") // index 0, which the field caches start at
	return b
}

func (b *PackBuilder) intern(field int, s string) uint32 {
	c := &b.cache[field]
	if c.s == s && (s != "" || c.i == 0) {
		return c.i
	}
	i, ok := b.dict[s]
	if !ok {
		s = strings.Clone(s)
		i = uint32(len(b.p.dict))
		b.p.dict = append(b.p.dict, s)
		b.dict[s] = i
	}
	c.s, c.i = b.p.dict[i], i
	return i
}

func (b *PackBuilder) arena(s string) sref {
	r := sref{uint32(len(b.p.arena)), uint32(len(s))}
	b.p.arena = append(b.p.arena, s...)
	return r
}

func (b *PackBuilder) countsOf(c []int) uint32 {
	var buf [64]byte
	kb := buf[:0]
	for _, n := range c {
		kb = append(kb, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	}
	if i, ok := b.counts[string(kb)]; ok {
		return i
	}
	i := uint32(len(b.p.counts))
	if len(c) > 0 {
		b.p.counts = append(b.p.counts, slices.Clone(c))
	} else {
		b.p.counts = append(b.p.counts, nil)
	}
	b.counts[string(kb)] = i
	return i
}

func (b *PackBuilder) shapeOf(sh *packShape) uint32 {
	if n := len(b.p.shapes); n > 0 && b.p.shapes[n-1] == *sh {
		return uint32(n - 1) // the neighbour's, as a source lists its machines together
	}
	i, ok := b.shapes[*sh]
	if !ok {
		i = uint32(len(b.p.shapes))
		b.p.shapes = append(b.p.shapes, *sh)
		b.shapes[*sh] = i
	}
	return i
}

func (b *PackBuilder) timesOf(t packTimes) uint32 {
	if n := len(b.p.times); n > 0 && b.p.times[n-1] == t {
		return uint32(n - 1)
	}
	i, ok := b.times[t]
	if !ok {
		i = uint32(len(b.p.times))
		b.p.times = append(b.p.times, t)
		b.times[t] = i
	}
	return i
}

// within is the arena string of sub: a part of key (at key's arena
// reference) when key holds it, as an offer key holds its offer id, else
// a copy of its own.
func (b *PackBuilder) within(ref sref, key, sub string) sref {
	if sub == "" {
		return sref{}
	}
	if i := strings.Index(key, sub); i >= 0 {
		return sref{ref.off + uint32(i), uint32(len(sub))}
	}
	return b.arena(sub)
}

// Add copies an offer into the pack (nothing of o is kept).
func (b *PackBuilder) Add(o *pricewatch.Offer) {
	sh := packShape{
		provider: b.intern(0, o.Provider), currency: b.intern(9, o.Currency), kind: b.intern(2, string(o.Kind)),
		rentUnit: b.intern(5, string(o.RentUnit)), counts: b.countsOf(o.GPUCounts),
		region: b.intern(1, o.Region), gpuName: b.intern(4, o.GPUName), stock: b.intern(7, o.Stock),
		reclaim: b.intern(10, o.ReclaimRisk), url: b.intern(11, o.URL),
		interconnect: b.intern(12, o.Interconnect), country: b.intern(13, o.Country), rentURL: b.intern(14, o.RentURL),
		rentUnitGPUs: int32(o.RentUnitGPUs), fraction: o.GPUFraction, commitment: o.CommitmentHours,
		storage: o.StoragePerGBMonth, egress: o.EgressPerGB, capHours: o.MonthlyCapHours, freeEgress: o.FreeEgressGBMonth,
		vcpus: o.VCPUs, ramGB: o.RAMGB, diskGB: o.DiskGB,
	}
	key := b.arena(o.Key)
	r := packRow{
		key: key, offerID: b.within(key, o.Key, o.OfferID),
		card: b.intern(3, o.Card), avail: b.intern(6, string(o.Available)), mode: b.intern(8, string(o.Mode)),
		shape: b.shapeOf(&sh), times: b.timesOf(packTimes{unixNanos(o.FirstSeen), unixNanos(o.ObservedAt)}),
		gpus: int32(o.GPUs), unitPrice: o.UnitPricePerHour, price: o.PricePerGPUHour,
	}
	if o.Bid {
		r.flags |= rowBid
	}
	if o.Shared {
		r.flags |= rowShared
	}
	if o.Reliability != nil {
		r.flags |= rowHasRel
		r.rel = *o.Reliability
	}
	if b.sorted && len(b.p.rows) > 0 && o.Key < b.last {
		b.sorted = false
	}
	if len(b.keys) == 0 {
		b.common = len(o.Key)
	} else {
		n := min(b.common, len(o.Key))
		j := 0
		for j < n && o.Key[j] == b.last[j] {
			j++
		}
		b.common = j
	}
	b.keys = append(b.keys, r.key)
	b.last = b.p.str(r.key)
	b.p.rows = append(b.p.rows, r)
	if o.Source == o.Provider {
		b.direct[uint64(sh.provider)<<32|uint64(r.mode)] = true
	}
}

// Pack returns the pack; the builder is done.
func (b *PackBuilder) Pack() *Pack {
	p := b.p
	if !b.sorted {
		b.sortRows()
	}
	for d := range b.direct {
		p.direct = append(p.direct, p.dict[d>>32]+"\x00"+p.dict[d&0xffffffff])
	}
	slices.Sort(p.direct)
	p.rows = slices.Clip(p.rows)
	p.arena = slices.Clip(p.arena)
	p.shapes = slices.Clip(p.shapes)
	p.times = slices.Clip(p.times)
	b.p, b.keys, b.shapes, b.times = nil, nil, nil, nil
	return p
}

// sortRows puts the rows in key order (equal keys in the order they were
// added). It sorts small (head, index) items rather than the rows
// (hundreds of bytes each), then moves each row once, in place; a head is
// the eight bytes of the key after the prefix every key shares, as one
// integer: a source's keys differ in their tails, so whole keys are
// compared only on equal heads.
func (b *PackBuilder) sortRows() {
	p := b.p
	type item struct {
		head uint64 // big-endian, zero-padded
		i    int32
	}
	items := make([]item, len(b.keys))
	for i, r := range b.keys {
		k := p.str(r)[b.common:]
		var h uint64
		for j := range 8 {
			h <<= 8
			if j < len(k) {
				h |= uint64(k[j])
			}
		}
		items[i] = item{h, int32(i)}
	}
	// By head: a least-significant-byte-first radix sort (stable, eight
	// counting passes, a pass whose byte is the same in every item
	// skipped), where a comparison sort was a sixth of a re-rank.
	tmp := make([]item, len(items))
	for shift := 0; shift < 64 && len(items) > 1; shift += 8 {
		var count [256]int
		for _, it := range items {
			count[byte(it.head>>shift)]++
		}
		if count[byte(items[0].head>>shift)] == len(items) {
			continue
		}
		pos := 0
		for c := range count {
			count[c], pos = pos, pos+count[c]
		}
		for _, it := range items {
			c := byte(it.head >> shift)
			tmp[count[c]] = it
			count[c]++
		}
		items, tmp = tmp, items
	}
	// Zero padding puts a key before the longer keys it starts, so equal
	// heads are decided by the whole keys (then the order added).
	for i := 0; i < len(items); {
		j := i + 1
		for j < len(items) && items[j].head == items[i].head {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(items[i:j], func(x, y item) int {
				return cmp.Or(strings.Compare(p.str(b.keys[x.i]), p.str(b.keys[y.i])), cmp.Compare(x.i, y.i))
			})
		}
		i = j
	}
	// Row j is to be the row items[j].i: follow each cycle of the
	// permutation, marking the items done.
	rows := p.rows
	for j := range items {
		if items[j].i < 0 {
			continue
		}
		tmp := rows[j]
		k := j
		for {
			src := int(items[k].i)
			items[k].i = -1
			if src == j {
				rows[k] = tmp
				break
			}
			rows[k] = rows[src]
			k = src
		}
	}
}

// NewPack packs one source's offers.
func NewPack(source string, offers []pricewatch.Offer) *Pack {
	b := NewPackBuilder(source, len(offers))
	for i := range offers {
		b.Add(&offers[i])
	}
	return b.Pack()
}

// PackOffers groups offers by source into packs, in source order.
func PackOffers(offers []pricewatch.Offer) []*Pack {
	by := map[string]*PackBuilder{}
	var names []string
	n := map[string]int{}
	for i := range offers {
		n[offers[i].Source]++
	}
	for i := range offers {
		o := &offers[i]
		b, ok := by[o.Source]
		if !ok {
			b = NewPackBuilder(o.Source, n[o.Source])
			by[o.Source] = b
			names = append(names, o.Source)
		}
		b.Add(o)
	}
	slices.Sort(names)
	out := make([]*Pack, len(names))
	for i, n := range names {
		out[i] = by[n].Pack()
	}
	return out
}

func unixNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// str is an arena string (it shares the arena's memory).
func (p *Pack) str(r sref) string {
	if r.n == 0 {
		return ""
	}
	return unsafe.String(&p.arena[r.off], int(r.n))
}

// Source is the source the pack's offers come from.
func (p *Pack) Source() string { return p.source }

// Len is the number of offers.
func (p *Pack) Len() int { return len(p.rows) }

// Key is the key of offer i.
func (p *Pack) Key(i int) string { return p.str(p.rows[i].key) }

// Offer returns offer i. Its strings and GPU counts are shared with the
// pack: callers must not modify the GPUCounts slice.
func (p *Pack) Offer(i int) pricewatch.Offer {
	r := &p.rows[i]
	sh, tm := &p.shapes[r.shape], &p.times[r.times]
	o := pricewatch.Offer{
		Key: p.str(r.key), Source: p.source, Provider: p.dict[sh.provider], OfferID: p.str(r.offerID),
		Region: p.dict[sh.region], Kind: pricewatch.Kind(p.dict[sh.kind]), Card: p.dict[r.card], GPUName: p.dict[sh.gpuName],
		GPUs: int(r.gpus), RentUnit: pricewatch.RentUnit(p.dict[sh.rentUnit]), GPUCounts: p.counts[sh.counts],
		RentUnitGPUs: int(sh.rentUnitGPUs), UnitPricePerHour: r.unitPrice, GPUFraction: sh.fraction, Shared: r.flags&rowShared != 0,
		Available: pricewatch.Availability(p.dict[r.avail]), Stock: p.dict[sh.stock], Mode: pricewatch.Mode(p.dict[r.mode]),
		CommitmentHours: sh.commitment, PricePerGPUHour: r.price, Currency: p.dict[sh.currency],
		ReclaimRisk: p.dict[sh.reclaim], URL: p.dict[sh.url], Bid: r.flags&rowBid != 0,
		StoragePerGBMonth: sh.storage, EgressPerGB: sh.egress,
		MonthlyCapHours: sh.capHours, FreeEgressGBMonth: sh.freeEgress,
		Machine: pricewatch.Machine{VCPUs: sh.vcpus, RAMGB: sh.ramGB, DiskGB: sh.diskGB,
			Interconnect: p.dict[sh.interconnect], Country: p.dict[sh.country], RentURL: p.dict[sh.rentURL]},
		FirstSeen: fromUnixNanos(tm.firstSeen), ObservedAt: fromUnixNanos(tm.observedAt),
	}
	if r.flags&rowHasRel != 0 {
		o.Reliability = &r.rel
	}
	return o
}

// Find returns the index of the offer with the key.
func (p *Pack) Find(key string) (int, bool) {
	return slices.BinarySearchFunc(p.rows, key, func(r packRow, k string) int { return cmp.Compare(p.str(r.key), k) })
}

// Offers iterates over the pack's offers in key order.
func (p *Pack) Offers(yield func(pricewatch.Offer) bool) {
	for i := range p.rows {
		if !yield(p.Offer(i)) {
			return
		}
	}
}

// Replace returns a pack of the same source with the offers of p whose
// keys keep lists and the offers next (which win over p's for the same
// key): the pack of a run that held some offers back.
func (p *Pack) Replace(next []pricewatch.Offer, keep []string) *Pack {
	b := NewPackBuilder(p.source, len(next)+len(keep))
	have := make(map[string]bool, len(next))
	for i := range next {
		have[next[i].Key] = true
	}
	for _, k := range keep {
		if i, ok := p.Find(k); ok && !have[k] {
			o := p.Offer(i)
			b.Add(&o)
		}
	}
	for i := range next {
		b.Add(&next[i])
	}
	return b.Pack()
}

// Bytes is an estimate of the pack's memory.
func (p *Pack) Bytes() int {
	n := len(p.rows)*int(unsafe.Sizeof(packRow{})) + len(p.shapes)*int(unsafe.Sizeof(packShape{})) + len(p.times)*16 + len(p.arena)
	for _, s := range p.dict {
		n += len(s) + 16
	}
	return n
}
