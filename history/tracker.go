package history

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"iter"
	"slices"
	"time"
	"unsafe"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// Tracker keeps, for the stored best series, every current offer priced
// once per workload as its row is applied (as Series' book does) and, per
// sub-series (card, mode, currency, source), its cheapest offer by price
// and by cost per workload. It implements store.SeriesTracker; the store
// calls it under its own lock.
//
// It holds every stored offer, so its layout is what a million offers
// cost in memory (issue 20): offers are the store's ids, not their keys
// (read from the store on equal prices only), in slots of flat slices (no
// pointer per offer, no heap items), each workload's rental is an index
// into a table of the few distinct (GPUs, tokens/s) pairs, and a sub-series
// keeps only its members and the slots of its minimums. A row that makes
// a minimum worse marks the sub-series dirty; its minimums are found again
// by one scan of its members when its points are asked for, once a run.
type Tracker struct {
	workloads []rank.Workload
	catalog   *normalize.Catalog
	fp        string
	// fpOf are the profiles fp was computed from: a run whose profiles
	// are the same needs no new fingerprint (hashing every profile in
	// JSON at every run was most of Apply).
	fpOf    []rank.Profile
	ins     []Input          // per workload: what costOf reads
	slot    map[uint32]int32 // offer id -> slot
	ids     []uint32         // per slot: the offer's id (0: a free slot)
	keyOf   store.KeyOf      // the keys of ids, in the store's current transaction
	subOf   []int32          // per slot: its sub-series (-1: none)
	pos     []int32          // per slot: its index in its sub-series' members (-1: not counted)
	price   []float64        // per slot: the price per GPU-hour of a counted offer
	rent    []uint32         // per slot: its rental set, an index into sets (0: none)
	free    []int32
	rentals []tRental
	// sets are the distinct lists of rentals per workload (an index into
	// rentals each, 0: cannot run it), len(ins) entries a set: offers of
	// one card and GPU count share one.
	sets    []uint32
	setIx   map[string]uint32
	scratch []uint32
	// rentMemo is each rental found per workload, card, rent unit and GPU
	// counts (what a rental depends on; the profiles are fixed between
	// Resets): finding it was most of a Reset (240 of 430 ms at 100k).
	rentMemo map[string]tRental
	memoKey  []byte
	rentalIx map[tRental]uint32
	subs     []*tSub
	subIx    map[subKey]int32
	touched  []int32 // sub-series touched since the last Points (each once)
}

type subKey struct {
	card, cur, source string
	mode              pricewatch.Mode
}

type tSub struct {
	key     subKey
	members []int32 // slots of the counted offers
	// minPrice and minCost (per workload) are the slots of the cheapest
	// members (-1: none); dirty says a member that may have been one got
	// worse or left, so they are found again before they are read.
	minPrice int32
	minCost  []int32
	dirty    bool
	touched  bool
	// last are the values written last per workload (At zero); wrote says
	// there are any.
	last  []store.SeriesPoint
	wrote bool
}

// tRental is what a reader needs to recompute an offer's cost for one
// workload from a converted price: the rental's GPUs and tokens/s.
type tRental struct {
	tps  float64
	gpus int32
}

// NewTracker tracks the series of the workloads.
func NewTracker(workloads []rank.Workload, catalog *normalize.Catalog) *Tracker {
	return &Tracker{workloads: slices.Clone(workloads), catalog: catalog}
}

// Fingerprint names what the stored series prices with: the workloads and
// each card's preferred profile for them. A series stored under another
// fingerprint does not answer.
func Fingerprint(workloads []rank.Workload, profiles []rank.Profile) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, w := range workloads {
		_ = enc.Encode(w)
		best := BestProfiles(profiles, w.Name)
		cards := make([]string, 0, len(best))
		for c := range best {
			cards = append(cards, c)
		}
		slices.Sort(cards)
		for _, c := range cards {
			_ = enc.Encode(best[c])
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// Fingerprint implements store.SeriesTracker.
func (t *Tracker) Fingerprint() string { return t.fp }

// Reset implements store.SeriesTracker.
func (t *Tracker) Reset(offers iter.Seq2[uint32, *pricewatch.Offer], profiles []rank.Profile, keys store.KeyOf) {
	t.keyOf = keys
	defer func() { t.keyOf = nil }() // it reads a transaction that ends
	t.fp, t.fpOf = Fingerprint(t.workloads, profiles), slices.Clone(profiles)
	t.ins = make([]Input, len(t.workloads))
	for i := range t.workloads {
		w := &t.workloads[i]
		tps := BestProfiles(profiles, w.Name)
		t.ins[i] = Input{Workload: w, Catalog: t.catalog,
			Profile: func(card string) (rank.Profile, bool) { v, ok := tps[card]; return v, ok }}
	}
	t.slot = map[uint32]int32{}
	t.ids, t.subOf, t.pos, t.price, t.rent, t.free = nil, nil, nil, nil, nil, nil
	t.rentals, t.rentalIx = []tRental{{}}, map[tRental]uint32{}
	t.sets, t.setIx, t.scratch = make([]uint32, len(t.ins)), map[string]uint32{}, make([]uint32, len(t.ins))
	t.rentMemo = map[string]tRental{}
	t.subs, t.subIx, t.touched = nil, map[subKey]int32{}, nil
	for id, o := range offers {
		t.set(id, o, store.Appeared)
	}
	for _, s := range t.touched {
		t.subs[s].touched = false
	}
	t.touched = t.touched[:0]
}

// Apply implements store.SeriesTracker.
func (t *Tracker) Apply(written []store.Written, profiles []rank.Profile, keys store.KeyOf) (string, bool) {
	t.keyOf = keys
	defer func() { t.keyOf = nil }() // it reads a transaction that ends
	if !slices.Equal(profiles, t.fpOf) {
		if fp := Fingerprint(t.workloads, profiles); fp != t.fp {
			return fp, true
		}
		t.fpOf = slices.Clone(profiles)
	}
	for _, w := range written {
		t.set(w.ID, w.Offer, w.Event)
	}
	return t.fp, false
}

func (t *Tracker) touch(s int32) {
	if sub := t.subs[s]; !sub.touched {
		sub.touched = true
		t.touched = append(t.touched, s)
	}
}

// set applies one row: the offer leaves its old sub-series and joins the
// one its row names (both are touched, as a row of a key makes a point in
// a series computed from the rows).
func (t *Tracker) set(id uint32, o *pricewatch.Offer, ev store.Event) {
	i, ok := t.slot[id]
	if ok {
		t.leave(i)
	}
	if o.Card == "" || ev == store.Vanished {
		// Gone (or of no card): it left its sub-series, touched above.
		if ok {
			delete(t.slot, id)
			t.ids[i] = 0
			t.free = append(t.free, i)
		}
		return
	}
	if !ok {
		i = t.alloc(id)
	}
	sk := subKey{card: o.Card, cur: o.Currency, source: o.Source, mode: o.Mode}
	s, ok := t.subIx[sk]
	if !ok {
		s = int32(len(t.subs))
		sub := &tSub{key: sk, minPrice: -1, minCost: make([]int32, len(t.workloads)), last: make([]store.SeriesPoint, len(t.workloads))}
		for w := range sub.minCost {
			sub.minCost[w] = -1
		}
		t.subs = append(t.subs, sub)
		t.subIx[sk] = s
	}
	t.subOf[i] = s
	t.touch(s)
	if o.Reference() || o.Shared || o.Available == pricewatch.AvailableNo {
		return
	}
	sub := t.subs[s]
	t.price[i] = o.PricePerGPUHour
	t.pos[i] = int32(len(sub.members))
	sub.members = append(sub.members, i)
	r := store.HistoryRow{Card: o.Card, GPUs: o.GPUs, PricePerGPUHour: o.PricePerGPUHour, Currency: o.Currency, Available: o.Available}
	rents := t.scratch
	clear(rents)
	for w := range t.ins {
		// The rental's GPUs and tokens/s are kept, so a reader recomputes
		// the cost exactly from a converted price.
		k, ok := t.rental(w, o, r)
		if !ok {
			continue
		}
		ix, ok := t.rentalIx[k]
		if !ok {
			ix = uint32(len(t.rentals))
			t.rentals = append(t.rentals, k)
			t.rentalIx[k] = ix
		}
		rents[w] = ix
	}
	t.rent[i] = t.setOf(rents)
	rents = t.rentsOf(i)
	if sub.dirty {
		return // found again at Points
	}
	if sub.minPrice < 0 || t.lessPrice(i, sub.minPrice) {
		sub.minPrice = i
	}
	for w := range sub.minCost {
		if rents[w] != 0 && (sub.minCost[w] < 0 || t.lessCost(i, sub.minCost[w], w)) {
			sub.minCost[w] = i
		}
	}
}

// rental is rentalOf, found once per workload, card, rent unit and GPU
// counts (gpus 0: it cannot run the workload).
func (t *Tracker) rental(w int, o *pricewatch.Offer, r store.HistoryRow) (tRental, bool) {
	counts := o.GPUCounts
	if len(counts) == 0 {
		counts = countsOf(o.RentUnit, r.GPUs) // as rentalOf does
	}
	k := append(t.memoKey[:0], byte(w), byte(w>>8))
	k = append(append(append(append(k, o.Card...), 0), o.RentUnit...), 0)
	for _, c := range counts {
		k = binary.LittleEndian.AppendUint32(k, uint32(c))
	}
	t.memoKey = k
	if v, ok := t.rentMemo[string(k)]; ok {
		return v, v.gpus > 0
	}
	var v tRental
	if gpus, tps, ok := rentalOf(t.ins[w], *o, r); ok {
		v = tRental{tps: tps, gpus: int32(gpus)}
	}
	t.rentMemo[string(k)] = v
	return v, v.gpus > 0
}

// setOf interns a list of rentals per workload.
func (t *Tracker) setOf(rents []uint32) uint32 {
	if len(rents) == 0 {
		return 0
	}
	key := unsafe.Slice((*byte)(unsafe.Pointer(&rents[0])), 4*len(rents))
	if ix, ok := t.setIx[string(key)]; ok {
		return ix
	}
	ix := uint32(len(t.sets) / len(rents))
	t.sets = append(t.sets, rents...)
	t.setIx[string(key)] = ix
	return ix
}

// rentsOf is slot i's rentals per workload.
func (t *Tracker) rentsOf(i int32) []uint32 {
	n := len(t.ins)
	return t.sets[int(t.rent[i])*n:][:n]
}

// alloc gives an offer id a slot (a free one if any) with no sub-series.
func (t *Tracker) alloc(id uint32) int32 {
	var i int32
	if n := len(t.free); n > 0 {
		i, t.free = t.free[n-1], t.free[:n-1]
		t.ids[i] = id
	} else {
		i = int32(len(t.ids))
		t.ids = append(t.ids, id)
		t.subOf = append(t.subOf, -1)
		t.pos = append(t.pos, -1)
		t.price = append(t.price, 0)
		t.rent = append(t.rent, 0)
	}
	t.slot[id] = i
	return i
}

// leave takes slot i out of its sub-series (touched), which goes dirty
// when i was one of its minimums.
func (t *Tracker) leave(i int32) {
	s := t.subOf[i]
	if s < 0 {
		return
	}
	sub := t.subs[s]
	t.touch(s)
	if p := t.pos[i]; p >= 0 {
		last := sub.members[len(sub.members)-1]
		sub.members[p] = last
		t.pos[last] = p
		sub.members = sub.members[:len(sub.members)-1]
		if sub.minPrice == i || slices.Contains(sub.minCost, i) {
			sub.dirty = true
		}
	}
	t.subOf[i], t.pos[i] = -1, -1
	t.rent[i] = 0
}

// lessPrice orders slots by price, then key (as the computed series'
// heaps do).
func (t *Tracker) lessPrice(a, b int32) bool {
	pa, pb := t.price[a], t.price[b]
	return pa < pb || (pa == pb && t.keyLess(a, b))
}

func (t *Tracker) cost(i int32, w int) float64 {
	r := t.rentals[t.rentsOf(i)[w]]
	return rank.CostPerMillionTokens(t.price[i]*float64(r.gpus), r.tps)
}

func (t *Tracker) lessCost(a, b int32, w int) bool {
	ca, cb := t.cost(a, w), t.cost(b, w)
	return ca < cb || (ca == cb && t.keyLess(a, b))
}

// keyLess orders two slots of equal values by their offers' keys (the
// computed series' tie-break).
func (t *Tracker) keyLess(a, b int32) bool {
	return t.keyOf(t.ids[a]) < t.keyOf(t.ids[b])
}

// refresh finds a dirty sub-series' minimums again.
func (t *Tracker) refresh(sub *tSub) {
	if !sub.dirty {
		return
	}
	sub.dirty = false
	sub.minPrice = -1
	for w := range sub.minCost {
		sub.minCost[w] = -1
	}
	for _, i := range sub.members {
		if sub.minPrice < 0 || t.lessPrice(i, sub.minPrice) {
			sub.minPrice = i
		}
		rents := t.rentsOf(i)
		for w, m := range sub.minCost {
			if rents[w] != 0 && (m < 0 || t.lessCost(i, m, w)) {
				sub.minCost[w] = i
			}
		}
	}
}

// Points implements store.SeriesTracker: a touch for every sub-series
// touched, and its points of the workloads whose values changed (all of
// them with all).
func (t *Tracker) Points(at time.Time, all bool, keys store.KeyOf) []store.SeriesPoint {
	t.keyOf = keys
	defer func() { t.keyOf = nil }() // it reads a transaction that ends
	subs := t.touched
	if all {
		subs = make([]int32, len(t.subs))
		for i := range subs {
			subs[i] = int32(i)
		}
	}
	out := make([]store.SeriesPoint, 0, len(subs)*2)
	for _, si := range subs {
		s := t.subs[si]
		t.refresh(s)
		base := store.SeriesPoint{At: at, Card: s.key.card, Mode: s.key.mode, Currency: s.key.cur, Source: s.key.source}
		touch := base
		touch.Touch = true
		out = append(out, touch)
		base.Offers = len(s.members)
		if m := s.minPrice; m >= 0 {
			base.PriceID, base.Price = t.ids[m], t.price[m]
		}
		for w, wl := range t.workloads {
			p := base
			p.Workload = wl.Name
			if m := s.minCost[w]; m >= 0 {
				r := t.rentals[t.rentsOf(m)[w]]
				p.CostID, p.CostPrice, p.GPUs, p.TokensPerSecond = t.ids[m], t.price[m], int(r.gpus), r.tps
			}
			v := p
			v.At = time.Time{}
			if !all && s.wrote && v == s.last[w] {
				continue // unchanged: the touch says the time
			}
			s.last[w] = v
			out = append(out, p)
		}
		s.wrote = true
	}
	for _, si := range t.touched {
		t.subs[si].touched = false
	}
	t.touched = t.touched[:0]
	return out
}

var _ store.SeriesTracker = (*Tracker)(nil)
