package rank

import (
	"cmp"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
)

// Snapshot is an immutable ranking of every current offer for every
// workload, built once per scrape and queried many times.
//
// It is made of one part per source (a Pack and what ranking it gave: a
// cost per offer and workload, the cheapest offer of each card, mode and
// GPU count, the exclusion counts). A snapshot built from the previous one
// re-ranks only the parts whose pack changed, or whose inputs did (rates,
// profiles, freshness, which providers are scraped directly); answers come
// from the per-group minimums (Best) or from a bounded scan (Top), never
// from a full sort.
type Snapshot struct {
	provOnce    sync.Once
	providers   []string
	GeneratedAt time.Time
	Base        string
	Rates       *pricewatch.Rates
	// StaleAfter are the freshness limits the snapshot was judged with.
	StaleAfter map[string]time.Duration
	// Norms are the provider- and offer-level measurements checked against
	// their card's norm (CheckNorms), sorted by key.
	Norms     []NormCheck
	opt       Options
	cat       *normalize.Catalog
	profiles  profileSet
	norms     map[string]NormCheck
	direct    map[string]bool
	workloads map[string]Workload
	wl        []Workload // in build order; parts' per-workload data follow it
	wlIndex   map[string]int
	in        *inputs
	parts     []*part // by source
	count     int
	merged    []mergedWL
	shapes    []map[shapeKey]shapeResult // by workload, while parts are ranked
	memo      memo
	refsOnce  sync.Once
	refs      map[string][]pricewatch.Offer // card → reference rows, cheapest first
	// mediansOnce guards medians: per card and mode, each source's median
	// base price (SourceMedians).
	mediansOnce sync.Once
	medians     map[string]map[string]float64
	// sellersOnce guards sellers: SellerMedians, SourceMedians split by
	// the seller behind each source's offers.
	sellersOnce sync.Once
	sellers     map[string]map[string]float64
}

// inputs are what every part's ranking depends on besides its pack.
type inputs struct {
	profiles []Profile
	ws       []Workload
	cat      *normalize.Catalog
	floor    float64
	base     string
	rates    *pricewatch.Rates
}

func (a *inputs) same(b *inputs) bool {
	if a == b {
		return true
	}
	return a.cat == b.cat && a.floor == b.floor && a.base == b.base &&
		slices.Equal(a.profiles, b.profiles) && reflect.DeepEqual(a.ws, b.ws) && reflect.DeepEqual(a.rates, b.rates)
}

// part is one pack ranked.
type part struct {
	pack       *Pack
	in         *inputs
	staleAfter time.Duration
	// The part holds for snapshots at times in [from, until) (until 0:
	// no offer of it goes stale later).
	from, until int64
	// deps are the direct-provider flags its rows were judged with.
	deps map[string]bool
	base []float64 // price per GPU-hour in the base currency; NaN: no rate
	why  []uint8   // workload-independent exclusion, 0 for none
	wl   []partWL
	refs []int32 // fresh reference rows with a card

	marketOnce sync.Once
	market     map[string][]float64 // card \x00 mode → sorted base prices of fresh rows
	// sellers is market split by seller (card \x00 mode \x01 vote key),
	// kept with the part as market is: a run re-ranks only its own part.
	sellersOnce sync.Once
	sellers     map[string][]float64

	// entries are the entries materialized so far (workload, row): a part
	// reused by the next snapshot answers with the same ones.
	entriesMu sync.Mutex
	entries   map[[2]int32]Entry
}

type partWL struct {
	cost []float64 // per row; NaN: not ranked
	gpus []uint16  // GPUs rented per row
	ex   []int32   // by why code
	best map[uint64]int32
}

// mergedWL is a workload's ranking over every part.
type mergedWL struct {
	ex     Exclusions
	groups []groupBest
	once   sync.Once
	best   []Entry // the entries of groups, materialized on first use
}

// groupBest is the cheapest ranked offer of a card, mode, GPU count and
// availability (out of stock or not).
type groupBest struct {
	card, mode string
	gpus       int
	out        bool
	part, row  int32
}

// lessAt orders rows of two parts as less orders their entries.
func (s *Snapshot) lessAt(wi int, pa, ra, pb, rb int32) bool {
	A, B := s.parts[pa], s.parts[pb]
	ca, cb := A.wl[wi].cost[ra], B.wl[wi].cost[rb]
	if ca != cb {
		return ca < cb
	}
	if A.base[ra] != B.base[rb] {
		return A.base[ra] < B.base[rb]
	}
	if A.pack.source != B.pack.source {
		return A.pack.source < B.pack.source
	}
	return A.pack.Key(int(ra)) < B.pack.Key(int(rb))
}

// entryAt materializes the entry of a ranked row.
func (s *Snapshot) entryAt(wi int, pi, row int32) Entry {
	pt := s.parts[pi]
	k := [2]int32{int32(wi), row}
	pt.entriesMu.Lock()
	e, ok := pt.entries[k]
	pt.entriesMu.Unlock()
	if ok {
		return e
	}
	e, _ = s.entry(pt.pack.Offer(int(row)), s.wl[wi], s.profiles, s.cat, s.opt)
	pt.entriesMu.Lock()
	if pt.entries == nil {
		pt.entries = map[[2]int32]Entry{}
	}
	if len(pt.entries) < maxCachedEntries {
		pt.entries[k] = e
	}
	pt.entriesMu.Unlock()
	return e
}

// maxCachedEntries bounds a part's cache of materialized entries (group
// minimums and the top rows answers ask for).
const maxCachedEntries = 8192

// Excluded returns why offers stayed out of a workload's ranking.
func (s *Snapshot) Excluded(workload string) Exclusions {
	wi, ok := s.wlIndex[workload]
	if !ok {
		return nil
	}
	return s.merged[wi].ex
}

// groupEntries are a workload's group minimums as entries.
func (s *Snapshot) groupEntries(wi int) []Entry {
	m := &s.merged[wi]
	m.once.Do(func() {
		m.best = make([]Entry, len(m.groups))
		for i, g := range m.groups {
			m.best[i] = s.entryAt(wi, g.part, g.row)
		}
	})
	return m.best
}

// Best returns the cheapest entry per card for the workload among the
// filter's offers, sorted by cost; committed modes are priced per used hour
// at the filter's utilization. Without regions or providers in the filter
// it reads the per-group minimums only.
func (s *Snapshot) Best(workload string, f Filter) []Entry {
	wi, ok := s.wlIndex[workload]
	if !ok {
		return nil
	}
	if len(f.Modes) == 0 {
		f.Modes = pricewatch.DefaultModes()
	}
	u := f.Utilization
	if u <= 0 || u > 1 {
		u = 1
	}
	// Candidates are taken one at a time into the best per card: only the
	// winners are kept (copying every group's entry into a list first was
	// most of what the dashboard allocated).
	best := map[string]int{}
	var out []Entry
	take := func(e Entry) {
		if e.Mode.Committed() {
			e.Utilization = u
			e.PricePerGPUHour /= u
			e.UnitPricePerHour /= u
			e.CostPerMillionTokens /= u
		}
		i, seen := best[e.Card]
		switch {
		case !seen:
			best[e.Card] = len(out)
			out = append(out, e)
		case less(e, out[i]):
			out[i] = e
		}
	}
	if !f.Narrowing.Active() {
		ge := s.groupEntries(wi)
		for i := range ge {
			if f.matches(&ge[i]) {
				take(ge[i])
			}
		}
	} else {
		// A narrowing is not a group: the cheapest matching row per card is
		// looked for in every part.
		rows := map[string][2]int32{}
		s.scan(wi, f, func(pi, row int32) {
			card := s.parts[pi].pack.dict[s.parts[pi].pack.rows[row].card]
			if b, ok := rows[card]; !ok || s.lessAt(wi, pi, row, b[0], b[1]) {
				rows[card] = [2]int32{pi, row}
			}
		})
		for _, b := range rows {
			take(s.entryAt(wi, b[0], b[1]))
		}
	}
	sort := func(a, b Entry) int {
		if less(a, b) {
			return -1
		}
		if less(b, a) {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(out, sort)
	return out
}

func (f *Filter) matches(e *Entry) bool {
	return slices.Contains(f.Modes, e.Mode) && (f.Card == "" || e.Card == f.Card) && (f.MaxGPUs <= 0 || e.GPUs <= f.MaxGPUs) &&
		(f.AnyAvailability || e.Available != pricewatch.AvailableNo)
}

// rowFilter is a Filter resolved against one pack's dict.
type rowFilter struct {
	modes  map[uint32]bool
	narrow *packNarrowing
	card   int64 // dict index, -1 any, -2 none in the pack
	out    int64 // dict index of "no", -1 none
}

func (f *Filter) forPack(p *Pack, cat *normalize.Catalog) (rowFilter, bool) {
	rf := rowFilter{card: -1, out: -1, narrow: f.Narrowing.forPack(p, cat)}
	set := func(vals []string) (map[uint32]bool, bool) {
		if len(vals) == 0 {
			return nil, true
		}
		m := map[uint32]bool{}
		for i, d := range p.dict {
			if slices.Contains(vals, d) {
				m[uint32(i)] = true
			}
		}
		return m, len(m) > 0
	}
	ms := make([]string, len(f.Modes))
	for i, m := range f.Modes {
		ms[i] = string(m)
	}
	var ok bool
	if rf.modes, ok = set(ms); !ok || len(ms) == 0 {
		return rf, false
	}
	if f.Card != "" {
		rf.card = -2
		for i, d := range p.dict {
			if d == f.Card {
				rf.card = int64(i)
			}
		}
		if rf.card == -2 {
			return rf, false
		}
	}
	for i, d := range p.dict {
		if d == string(pricewatch.AvailableNo) {
			rf.out = int64(i)
		}
	}
	return rf, true
}

// scan calls fn with every ranked row of the workload the filter keeps.
func (s *Snapshot) scan(wi int, f Filter, fn func(pi, row int32)) {
	for pi, pt := range s.parts {
		rf, ok := f.forPack(pt.pack, s.cat)
		if !ok {
			continue
		}
		wl := &pt.wl[wi]
		for i := range pt.pack.rows {
			if math.IsNaN(wl.cost[i]) {
				continue
			}
			r := &pt.pack.rows[i]
			if !rf.modes[r.mode] || (rf.card >= 0 && int64(r.card) != rf.card) || (f.MaxGPUs > 0 && int(wl.gpus[i]) > f.MaxGPUs) ||
				(!f.AnyAvailability && int64(r.avail) == rf.out) || !rf.narrow.keepRow(r) {
				continue
			}
			fn(int32(pi), int32(i))
		}
	}
}

// Top returns the k cheapest ranked entries of the workload that the
// filter keeps (every one for k ≤ 0), in ranking order. Empty Modes in the
// filter means every mode here; Utilization is not applied.
func (s *Snapshot) Top(workload string, f Filter, k int) []Entry {
	wi, ok := s.wlIndex[workload]
	if !ok {
		return nil
	}
	if len(f.Modes) == 0 {
		f.Modes = pricewatch.Modes()
	}
	type ref struct{ p, r int32 }
	var refs []ref
	lessRef := func(a, b ref) int {
		if s.lessAt(wi, a.p, a.r, b.p, b.r) {
			return -1
		}
		if s.lessAt(wi, b.p, b.r, a.p, a.r) {
			return 1
		}
		return 0
	}
	s.scan(wi, f, func(pi, row int32) {
		refs = append(refs, ref{pi, row})
		if k > 0 && len(refs) >= 4*k+64 {
			slices.SortFunc(refs, lessRef)
			refs = refs[:k]
		}
	})
	slices.SortFunc(refs, lessRef)
	if k > 0 && len(refs) > k {
		refs = refs[:k]
	}
	out := make([]Entry, len(refs))
	for i, r := range refs {
		out[i] = s.entryAt(wi, r.p, r.r)
	}
	return out
}

// Entries returns every ranked entry of a workload, sorted by cost then
// the tie-breaks. It materializes and sorts them all: for small data and
// tests; answers use Best and Top.
func (s *Snapshot) Entries(workload string) []Entry {
	return s.Top(workload, Filter{Modes: pricewatch.Modes(), AnyAvailability: true}, 0)
}

// Ranked reports whether the offer with the key is ranked for the workload
// and kept by the filter (empty Modes: any mode).
func (s *Snapshot) Ranked(workload, key string, f Filter) bool {
	wi, ok := s.wlIndex[workload]
	if !ok {
		return false
	}
	if len(f.Modes) == 0 {
		f.Modes = pricewatch.Modes()
	}
	pi, row, ok := s.find(key)
	if !ok || math.IsNaN(s.parts[pi].wl[wi].cost[row]) {
		return false
	}
	e := s.entryAt(wi, pi, row)
	pt := s.parts[pi].pack
	return f.matches(&e) && f.Narrowing.forPack(pt, s.cat).keepRow(&pt.rows[row])
}

// find locates an offer by key: in the part of the source the key names
// first, then in every part.
func (s *Snapshot) find(key string) (int32, int32, bool) {
	src, _, _ := strings.Cut(key, "/")
	i, ok := slices.BinarySearchFunc(s.parts, src, func(p *part, src string) int { return cmp.Compare(p.pack.source, src) })
	if ok {
		if row, ok := s.parts[i].pack.Find(key); ok {
			return int32(i), int32(row), true
		}
	}
	for pi, pt := range s.parts {
		if row, ok := pt.pack.Find(key); ok {
			return int32(pi), int32(row), true
		}
	}
	return 0, 0, false
}

// Offer returns the current offer with the key.
func (s *Snapshot) Offer(key string) (pricewatch.Offer, bool) {
	pi, row, ok := s.find(key)
	if !ok {
		return pricewatch.Offer{}, false
	}
	return s.parts[pi].pack.Offer(int(row)), true
}

// Offers iterates over every offer of the snapshot, by source and key.
// An offer's strings and GPU counts are shared: do not modify them.
func (s *Snapshot) Offers() func(yield func(pricewatch.Offer) bool) {
	return func(yield func(pricewatch.Offer) bool) {
		for _, pt := range s.parts {
			for i := range pt.pack.rows {
				if !yield(pt.pack.Offer(i)) {
					return
				}
			}
		}
	}
}

// OfferCount is the number of offers in the snapshot.
func (s *Snapshot) OfferCount() int { return s.count }

// Packs are the snapshot's packs, by source.
func (s *Snapshot) Packs() []*Pack {
	out := make([]*Pack, len(s.parts))
	for i, pt := range s.parts {
		out[i] = pt.pack
	}
	return out
}

// References are the fresh reference prices (indexes, medians) of a card,
// cheapest first; they are shown beside rankings, never ranked.
func (s *Snapshot) References(card string) []pricewatch.Offer {
	s.refsOnce.Do(func() {
		// Indexed once per snapshot: /v1/best asks for every card's.
		s.refs = map[string][]pricewatch.Offer{}
		for _, pt := range s.parts {
			for _, i := range pt.refs {
				o := pt.pack.Offer(int(i))
				s.refs[o.Card] = append(s.refs[o.Card], o)
			}
		}
		for _, out := range s.refs {
			slices.SortStableFunc(out, func(a, b pricewatch.Offer) int {
				return cmp.Or(cmp.Compare(a.PricePerGPUHour, b.PricePerGPUHour), strings.Compare(a.Key, b.Key))
			})
		}
	})
	return s.refs[card]
}

// NormOf is the norm check of the profile with the key (Profile.Key).
func (s *Snapshot) NormOf(key string) (NormCheck, bool) {
	c, ok := s.norms[key]
	return c, ok
}

// HasProvider reports whether some current offer is the provider's (and,
// when offerID is given, has that offer ID): a measurement names where it
// was taken, and a name no offer has is a typo that would never apply.
func (s *Snapshot) HasProvider(provider, offerID string) bool {
	for _, pt := range s.parts {
		p := pt.pack
		for i := range p.rows {
			r := &p.rows[i]
			if p.dict[p.shapes[r.shape].provider] == provider && (offerID == "" || p.str(r.offerID) == offerID) {
				return true
			}
		}
	}
	return false
}
