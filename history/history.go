// Package history turns the stored price changes into series: the best
// cost per million tokens and the lowest price per GPU-hour of a card (or
// of every card) for a workload over time, one point per stored change
// time, never an invented one.
//
// Invariants: a point exists only at a time some offer of the selection
// appeared, changed or vanished in the store (or, with a step, for a
// bucket that holds such a time); its values are the best over the
// offers as they stood right after that time. Costs are computed as the
// ranking computes them (rank.RentalOn at the offer's rentable unit, the
// card's throughput profile, rank.CostPerMillionTokens) and converted at
// the rates given (today's, not the rates of the day). An offer that is no
// longer current is priced with the terms of a current offer of the same
// source (its kind, rentable unit, sharing); its GPU count and price come
// from its own history rows.
package history

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// Bounds of a history answer.
const (
	// MaxRange is the longest span one answer covers; the store's change
	// log (store.ChangeRetention, 30 days) bounds how far back offers that
	// vanished are found.
	MaxRange = 31 * 24 * time.Hour
	// MaxPoints is the most points one answer holds; more need a step.
	MaxPoints = 2000
)

// Point is the best of a selection right after one stored change time (or
// the lowest within one step bucket).
type Point struct {
	At time.Time `json:"at"`
	// CostPerMillionTokens is the lowest cost per million tokens among the
	// offers that can run the workload (nil when none can); Key, Card and
	// GPUs name that offer and the GPUs it rents.
	CostPerMillionTokens *float64 `json:"cost_per_million_tokens"`
	Key                  string   `json:"key,omitempty"`
	Card                 string   `json:"card,omitempty"`
	GPUs                 int      `json:"gpus,omitempty"`
	// UnitPricePerHour is what the GPUs rented by the best-cost offer cost
	// per hour.
	UnitPricePerHour float64 `json:"unit_price_per_hour,omitempty"`
	// PricePerGPUHour is the lowest price per GPU-hour among the offers of
	// the selection (whether or not they can run the workload), PriceKey
	// that offer.
	PricePerGPUHour *float64 `json:"price_per_gpu_hour"`
	PriceKey        string   `json:"price_key,omitempty"`
	// Offers counts the offers of the selection current at that time.
	Offers int `json:"offers"`
}

// Filter selects the offers of a series.
type Filter struct {
	// Card keeps one card ("" for every card).
	Card string
	// Modes are the billing modes kept (pricewatch.DefaultModes when empty).
	Modes []pricewatch.Mode
	// Source keeps one source ("" for all).
	Source string
	// MaxGPUs keeps rentals of at most this many GPUs (0: any).
	MaxGPUs int
	// AnyAvailability keeps offers their source said were out of stock.
	AnyAvailability bool
}

// Input is what Series computes from.
type Input struct {
	Filter
	// Rows are the history rows of each offer key, oldest first.
	Rows map[string][]store.HistoryRow
	// Terms are each key's terms (current offers; see TermsFor).
	Terms map[string]pricewatch.Offer
	// Workload is the job costed; nil gives prices only.
	Workload *rank.Workload
	// Profile is the throughput profile of a card for the workload (an
	// estimated one is re-estimated on each rental's serving group, as
	// the ranking does).
	Profile func(card string) (rank.Profile, bool)
	// Convert converts an amount of a currency into the answer's currency.
	Convert func(amount float64, currency string) (float64, bool)
	Catalog *normalize.Catalog
	// Since and Until bound the points (inclusive); Step buckets them
	// (0: one point per change time).
	Since, Until time.Time
	Step         time.Duration
	// Before adds the state right before Since as a first point, at the
	// time of the last change before Since (the digest's carried value).
	Before bool
	// From is the start of the history (store.HistoryFrom): a row before
	// it counts as of From, so the first scrape's sources landing one
	// after another make one point, not a fall in arrival order.
	From time.Time
}

// event is one history row: its time (Unix ns), its key's index and its
// index among the key's rows.
type event struct {
	at   int64
	k, r int32
}

// Series computes the points of the input, oldest first; an input with no
// change in range gives an empty (non-nil) slice.
func Series(in Input) []Point {
	modes := in.Modes
	if len(modes) == 0 {
		modes = pricewatch.DefaultModes()
	}
	// Events are sorted as small index triples (time, key, row), keys in
	// order, so ties go the same way every time; the rows stay in place.
	keys := make([]string, 0, len(in.Rows))
	for key := range in.Rows {
		t, ok := in.Terms[key]
		if ok && (in.Source == "" || t.Source == in.Source) && slices.Contains(modes, modeOf(key, t)) {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	var evs []event
	from := in.From.UnixNano()
	if in.From.IsZero() {
		from = 0
	}
	for ki, key := range keys {
		for ri, r := range in.Rows[key] {
			evs = append(evs, event{at: max(r.At.UnixNano(), from), k: int32(ki), r: int32(ri)})
		}
	}
	slices.SortFunc(evs, func(a, b event) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.k, b.k), cmp.Compare(a.r, b.r))
	})
	rowOf := func(e event) store.HistoryRow {
		r := in.Rows[keys[e.k]][e.r]
		if in.Card != "" && r.Card != in.Card {
			// A row of another card (the alias table changed) is the
			// offer leaving this card's series.
			r = store.HistoryRow{At: r.At, Event: store.Vanished}
		}
		return r
	}
	st := newBook(len(in.Rows))
	out := []Point{}
	var prior *Point
	since := in.Since.UnixNano()
	for i := 0; i < len(evs); {
		at, t := evs[i].at, in.Rows[keys[evs[i].k]][evs[i].r].At
		if t.Before(in.From) {
			t = in.From
		}
		for ; i < len(evs) && evs[i].at == at; i++ {
			st.set(in, keys[evs[i].k], rowOf(evs[i]))
		}
		switch {
		case at < since:
			if in.Before && (i == len(evs) || evs[i].at >= since) {
				p := st.point(t)
				prior = &p
			}
		case !t.After(in.Until):
			out = append(out, st.point(t))
		}
	}
	if in.Step > 0 {
		out = bucket(out, in.Step)
	}
	if prior != nil {
		out = append([]Point{*prior}, out...)
	}
	return out
}

// modeOf is an offer's billing mode: its terms', else the last part of
// its key (source/offer-id/region/mode).
func modeOf(key string, t pricewatch.Offer) pricewatch.Mode {
	if t.Mode != "" {
		return t.Mode
	}
	return pricewatch.Mode(key[strings.LastIndexByte(key, '/')+1:])
}

// entry is what one offer's latest row contributes to a point: it is
// priced once, when the row is applied, not again at every later change
// time (which made a series cost changes × offers).
type entry struct {
	ver     int
	counted bool // current, in stock (or any availability asked), priced
	price   float64
	hasCost bool
	cost    float64
	gpus    int
	card    string
}

// book is the state of a selection between change times: each key's
// entry, the count of counted offers, and two min-heaps (by price and by
// cost, ties to the lower key as in rankings) whose stale items — a key's
// superseded entry — are dropped when they reach the top.
type book struct {
	state         map[string]*entry
	offers        int
	prices, costs minHeap
}

func newBook(n int) *book { return &book{state: make(map[string]*entry, n)} }

// set applies one history row of key.
func (b *book) set(in Input, k string, r store.HistoryRow) {
	e := b.state[k]
	if e == nil {
		e = &entry{}
		b.state[k] = e
	}
	if e.counted {
		b.offers--
	}
	*e = entry{ver: e.ver + 1}
	t := in.Terms[k]
	if r.Event == store.Vanished || r.Card == "" || t.Reference() || t.Shared ||
		(!in.AnyAvailability && r.Available == pricewatch.AvailableNo) {
		return
	}
	price, ok := in.Convert(r.PricePerGPUHour, r.Currency)
	if !ok {
		return
	}
	e.counted, e.price, e.card = true, price, r.Card
	b.offers++
	b.prices.push(item{price, k, e.ver})
	if in.Workload == nil {
		return
	}
	if cost, gpus, ok := costOf(in, t, r, price); ok {
		e.hasCost, e.cost, e.gpus = true, cost, gpus
		b.costs.push(item{cost, k, e.ver})
	}
}

// top is the live lowest item of a heap (ok false when none).
func (b *book) top(h *minHeap, cost bool) (item, bool) {
	for len(*h) > 0 {
		it := (*h)[0]
		if e := b.state[it.key]; e.ver == it.ver && e.counted && (!cost || e.hasCost) {
			return it, true
		}
		h.pop()
	}
	return item{}, false
}

// point is the selection's best at time at.
func (b *book) point(at time.Time) Point {
	p := Point{At: at, Offers: b.offers}
	if it, ok := b.top(&b.prices, false); ok {
		v := it.val
		p.PricePerGPUHour, p.PriceKey = &v, it.key
	}
	if it, ok := b.top(&b.costs, true); ok {
		e := b.state[it.key]
		v := it.val
		p.CostPerMillionTokens, p.Key, p.Card, p.GPUs, p.UnitPricePerHour = &v, it.key, e.card, e.gpus, e.price*float64(e.gpus)
	}
	return p
}

type item struct {
	val float64
	key string
	ver int
}

func (a item) less(b item) bool { return a.val < b.val || (a.val == b.val && a.key < b.key) }

// minHeap is a binary heap of items (container/heap's interface boxing
// is not needed for one element type).
type minHeap []item

func (h *minHeap) push(it item) {
	*h = append(*h, it)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *minHeap) pop() {
	s := *h
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && s[l].less(s[m]) {
			m = l
		}
		if r := l + 1; r < n && s[r].less(s[m]) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
}

// costOf is the cost per million tokens of an offer as one history row
// states it, at its rentable unit; ok is false when it cannot run the
// workload.
func costOf(in Input, t pricewatch.Offer, r store.HistoryRow, price float64) (float64, int, bool) {
	gpus, tps, ok := rentalOf(in, t, r)
	if !ok {
		return 0, 0, false
	}
	return rank.CostPerMillionTokens(price*float64(gpus), tps), gpus, true
}

// rentalOf is the GPUs and tokens/s of an offer's rental for the
// workload as one history row states it (ok false when it cannot run it).
func rentalOf(in Input, t pricewatch.Offer, r store.HistoryRow) (int, float64, bool) {
	card, ok := in.Catalog.Card(r.Card)
	if !ok {
		return 0, 0, false
	}
	if _, ok := rank.PrecisionOn(*in.Workload, card); !ok {
		return 0, 0, false
	}
	prof, ok := in.Profile(r.Card)
	if !ok || prof.TokensPerSecond <= 0 {
		return 0, 0, false
	}
	o := t
	o.Card, o.GPUs, o.PricePerGPUHour = r.Card, r.GPUs, r.PricePerGPUHour
	if t.GPUs != r.GPUs || len(t.GPUCounts) == 0 {
		o.GPUCounts = countsOf(t.RentUnit, r.GPUs)
	}
	limit := in.MaxGPUs
	if limit <= 0 {
		limit = rank.MaxMaxGPUs
	}
	rent, prof, why := rank.RentalFor(*in.Workload, card, o, limit, prof)
	if why != "" {
		return 0, 0, false
	}
	return rent.GPUs, rent.TokensPerSecond(prof.TokensPerSecond), true
}

func countsOf(u pricewatch.RentUnit, gpus int) []int {
	switch {
	case gpus <= 0:
		return nil
	case u == pricewatch.RentPerGPU:
		return pricewatch.CountsUpTo(gpus)
	case u == pricewatch.RentFixed:
		return []int{gpus}
	}
	return nil
}

// bucket folds points into one per step (UTC-aligned): the lowest cost
// and the lowest price seen in the bucket, at the bucket's start.
func bucket(ps []Point, step time.Duration) []Point {
	out := []Point{}
	for _, p := range ps {
		start := p.At.UTC().Truncate(step)
		if n := len(out); n > 0 && out[n-1].At.Equal(start) {
			b := &out[n-1]
			if p.CostPerMillionTokens != nil && (b.CostPerMillionTokens == nil || *p.CostPerMillionTokens < *b.CostPerMillionTokens) {
				b.CostPerMillionTokens, b.Key, b.Card, b.GPUs, b.UnitPricePerHour = p.CostPerMillionTokens, p.Key, p.Card, p.GPUs, p.UnitPricePerHour
			}
			if p.PricePerGPUHour != nil && (b.PricePerGPUHour == nil || *p.PricePerGPUHour < *b.PricePerGPUHour) {
				b.PricePerGPUHour, b.PriceKey = p.PricePerGPUHour, p.PriceKey
			}
			b.Offers = max(b.Offers, p.Offers)
			continue
		}
		p.At = start
		out = append(out, p)
	}
	return out
}

// Reader is the part of the store a series is read from.
type Reader interface {
	HistorySince(ctx context.Context, keys map[string]string, since time.Time, card, source string) (map[string][]store.HistoryRow, error)
}

// Load reads the rows of every offer that can be in the filter's series
// from since on (with the row in effect at since): the current offers
// given (of the filter's card and source) and the offers the change log
// names since then. It returns the rows and the terms of each key
// (TermsFor). Only the selection's offers are kept from current, and only
// their rows are read.
func Load(ctx context.Context, r Reader, current Current, f Filter, since time.Time) (map[string][]store.HistoryRow, map[string]pricewatch.Offer, error) {
	keys := map[string]string{} // key → source
	sib := newSiblings()
	sib.lookup = current.Sibling
	for o := range current.Offers {
		if current.Sibling == nil {
			sib.add(o)
		}
		if (f.Card == "" || o.Card == f.Card) && (f.Source == "" || o.Source == f.Source) {
			keys[o.Key] = o.Source
			sib.byKey[o.Key] = o
		}
	}
	rows, err := r.HistorySince(ctx, keys, since, f.Card, f.Source)
	if err != nil {
		return nil, nil, fmt.Errorf("history: %w", err)
	}
	return rows, sib.termsFor(keys), nil
}

// Current is what Load reads of the current offers.
type Current struct {
	// Offers yields the current offers: every one, or at least those of
	// the filter's card when Sibling is set.
	Offers iter.Seq[pricewatch.Offer]
	// Sibling, when set, gives a current offer of a source (of the mode
	// asked where there is one) for the terms of a vanished offer, so
	// Offers need not yield every offer; without it they come from Offers.
	Sibling func(source string, mode pricewatch.Mode) (pricewatch.Offer, bool)
}

// siblings holds what TermsFor needs of the current offers: the offers of
// the keys asked, and one offer per source and per source and mode (not a
// copy of every offer).
type siblings struct {
	byKey     map[string]pricewatch.Offer
	first     map[string]pricewatch.Offer
	firstMode map[[2]string]pricewatch.Offer
	lookup    func(source string, mode pricewatch.Mode) (pricewatch.Offer, bool)
}

func newSiblings() *siblings {
	return &siblings{byKey: map[string]pricewatch.Offer{}, first: map[string]pricewatch.Offer{}, firstMode: map[[2]string]pricewatch.Offer{}}
}

func (s *siblings) add(o pricewatch.Offer) {
	if _, ok := s.first[o.Source]; !ok {
		s.first[o.Source] = o
	}
	if k := [2]string{o.Source, string(o.Mode)}; !hasKey(s.firstMode, k) {
		s.firstMode[k] = o
	}
}

func hasKey[K comparable, V any](m map[K]V, k K) bool { _, ok := m[k]; return ok }

func (s *siblings) termsFor(keys map[string]string) map[string]pricewatch.Offer {
	out := make(map[string]pricewatch.Offer, len(keys))
	for k, src := range keys {
		if o, ok := s.byKey[k]; ok {
			out[k] = o
			continue
		}
		mode := modeOf(k, pricewatch.Offer{})
		t := pricewatch.Offer{Key: k, Source: src, Provider: src, Kind: pricewatch.KindOffer, RentUnit: pricewatch.RentFixed}
		if s.lookup != nil {
			// One lookup per source and mode: many vanished offers share it.
			k := [2]string{src, string(mode)}
			o, ok := s.firstMode[k]
			if !ok {
				if o, ok = s.lookup(src, mode); !ok {
					o = t
				}
				s.firstMode[k] = o
			}
			t = o
		} else if o, ok := s.firstMode[[2]string{src, string(mode)}]; ok {
			t = o
		} else if o, ok := s.first[src]; ok {
			t = o
		}
		t.Key, t.Mode, t.GPUCounts = k, mode, nil
		out[k] = t
	}
	return out
}

// TermsFor gives each key (mapped to its source) its terms: the current
// offer of that key, else those of a current offer of the same source
// (of the same mode where there is one), else a fixed unit.
func TermsFor(keys map[string]string, current []pricewatch.Offer) map[string]pricewatch.Offer {
	sib := newSiblings()
	for _, o := range current {
		sib.add(o)
		if _, ok := keys[o.Key]; ok {
			sib.byKey[o.Key] = o
		}
	}
	return sib.termsFor(keys)
}

// BestProfiles maps each card to its preferred card-wide profile for the
// workload: measured, else published, else estimated (the ranking's
// order).
func BestProfiles(ps []rank.Profile, workload string) map[string]rank.Profile {
	rankOf := map[rank.Origin]int{rank.OriginMeasured: 3, rank.OriginPublished: 2, rank.OriginEstimated: 1}
	best := map[string]rank.Profile{}
	for _, p := range ps {
		if p.Workload != workload || p.Provider != "" {
			continue
		}
		if b, ok := best[p.Card]; !ok || rankOf[p.Origin] > rankOf[b.Origin] {
			best[p.Card] = p
		}
	}
	return best
}

// ToSamples turns points into the store's sample form (cost and best key),
// leaving out points without a cost (the digest's series).
func ToSamples(ps []Point) []store.Sample {
	out := make([]store.Sample, 0, len(ps))
	for _, p := range ps {
		if p.CostPerMillionTokens != nil {
			out = append(out, store.Sample{At: p.At, Cost: *p.CostPerMillionTokens, Key: p.Key})
		}
	}
	return out
}
