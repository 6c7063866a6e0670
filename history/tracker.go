package history

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"iter"
	"slices"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// Tracker keeps, for the stored best series, every current offer priced
// once per workload as its row is applied (as Series' book does) and, per
// sub-series (card, mode, currency, source), min-heaps by price and by
// cost per workload. It implements store.SeriesTracker; the store calls it
// under its own lock.
type Tracker struct {
	workloads []rank.Workload
	catalog   *normalize.Catalog
	fp        string
	ver       int     // versions are global: a key that vanishes and comes back never revives a stale item
	ins       []Input // per workload: what costOf reads
	ents      map[string]*tEntry
	subs      map[subKey]*tSub
	touched   map[*tSub]bool
}

type subKey struct {
	card, cur, source string
	mode              pricewatch.Mode
}

type tSub struct {
	key    subKey
	offers int
	prices minHeap
	costs  []minHeap
	// last are the values written last per workload (At zero); wrote says
	// there are any.
	last  []store.SeriesPoint
	wrote bool
}

// tCost is what a reader needs to recompute an offer's cost for one
// workload (the heaps hold the cost itself).
type tCost struct {
	tps  float64
	gpus int32
	ok   bool
}

type tEntry struct {
	sub     *tSub
	ver     int
	counted bool
	price   float64
	costs   []tCost
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
func (t *Tracker) Reset(offers iter.Seq[*pricewatch.Offer], profiles []rank.Profile) {
	t.fp = Fingerprint(t.workloads, profiles)
	t.ins = make([]Input, len(t.workloads))
	for i := range t.workloads {
		w := &t.workloads[i]
		tps := BestProfiles(profiles, w.Name)
		t.ins[i] = Input{Workload: w, Catalog: t.catalog,
			Profile: func(card string) (rank.Profile, bool) { v, ok := tps[card]; return v, ok }}
	}
	t.ents, t.subs, t.touched = map[string]*tEntry{}, map[subKey]*tSub{}, map[*tSub]bool{}
	for o := range offers {
		t.set(o, store.Appeared)
	}
	t.touched = map[*tSub]bool{}
}

// Apply implements store.SeriesTracker.
func (t *Tracker) Apply(written []store.Written, profiles []rank.Profile) (string, bool) {
	if fp := Fingerprint(t.workloads, profiles); fp != t.fp {
		return fp, true
	}
	for _, w := range written {
		t.set(w.Offer, w.Event)
	}
	return t.fp, false
}

// set applies one row: the offer leaves its old sub-series and joins the
// one its row names (both are touched, as a row of a key makes a point in
// a series computed from the rows).
func (t *Tracker) set(o *pricewatch.Offer, ev store.Event) {
	e := t.ents[o.Key]
	if e == nil {
		e = &tEntry{costs: make([]tCost, len(t.workloads))}
		t.ents[o.Key] = e
	}
	if e.sub != nil {
		if e.counted {
			e.sub.offers--
		}
		t.touched[e.sub] = true
	}
	t.ver++
	e.ver = t.ver
	e.counted, e.sub = false, nil
	clear(e.costs)
	if o.Card == "" || ev == store.Vanished {
		// Gone (or of no card): it left its sub-series, touched above.
		delete(t.ents, o.Key)
		return
	}
	sk := subKey{card: o.Card, cur: o.Currency, source: o.Source, mode: o.Mode}
	sub := t.subs[sk]
	if sub == nil {
		sub = &tSub{key: sk, costs: make([]minHeap, len(t.workloads)), last: make([]store.SeriesPoint, len(t.workloads))}
		t.subs[sk] = sub
	}
	e.sub = sub
	t.touched[sub] = true
	if o.Reference() || o.Shared || o.Available == pricewatch.AvailableNo {
		return
	}
	e.counted, e.price = true, o.PricePerGPUHour
	sub.offers++
	sub.prices.push(item{e.price, o.Key, e.ver})
	r := store.HistoryRow{Card: o.Card, GPUs: o.GPUs, PricePerGPUHour: o.PricePerGPUHour, Currency: o.Currency, Available: o.Available}
	for i := range t.ins {
		gpus, tps, ok := rentalOf(t.ins[i], *o, r)
		if !ok {
			continue
		}
		// The rental's GPUs and tokens/s are kept, so a reader recomputes
		// the cost exactly from a converted price.
		cost := rank.CostPerMillionTokens(e.price*float64(gpus), tps)
		e.costs[i] = tCost{ok: true, gpus: int32(gpus), tps: tps}
		sub.costs[i].push(item{cost, o.Key, e.ver})
	}
	t.compact(sub)
}

// live reports whether a heap item is an entry's current one in sub.
func (t *Tracker) live(sub *tSub, it item, w int) bool {
	e := t.ents[it.key]
	return e != nil && e.ver == it.ver && e.sub == sub && e.counted && (w < 0 || e.costs[w].ok)
}

// compact drops a sub-series' stale heap items once they outnumber the
// live ones, so the heaps stay the size of the offers.
func (t *Tracker) compact(sub *tSub) {
	limit := 2*sub.offers + 64
	rebuild := func(h *minHeap, w int) {
		if len(*h) <= limit {
			return
		}
		old := *h
		*h = make(minHeap, 0, sub.offers)
		for _, it := range old {
			if t.live(sub, it, w) {
				h.push(it)
			}
		}
	}
	rebuild(&sub.prices, -1)
	for i := range sub.costs {
		rebuild(&sub.costs[i], i)
	}
}

func (t *Tracker) top(sub *tSub, h *minHeap, w int) (item, bool) {
	for len(*h) > 0 {
		if it := (*h)[0]; t.live(sub, it, w) {
			return it, true
		}
		h.pop()
	}
	return item{}, false
}

// Points implements store.SeriesTracker: a touch for every sub-series
// touched, and its points of the workloads whose values changed (all of
// them with all).
func (t *Tracker) Points(at time.Time, all bool) []store.SeriesPoint {
	subs := make([]*tSub, 0, len(t.touched))
	if all {
		for _, s := range t.subs {
			subs = append(subs, s)
		}
	} else {
		for s := range t.touched {
			subs = append(subs, s)
		}
	}
	clear(t.touched)
	out := make([]store.SeriesPoint, 0, len(subs)*2)
	for _, s := range subs {
		base := store.SeriesPoint{At: at, Card: s.key.card, Mode: s.key.mode, Currency: s.key.cur, Source: s.key.source}
		touch := base
		touch.Touch = true
		out = append(out, touch)
		base.Offers = s.offers
		if it, ok := t.top(s, &s.prices, -1); ok {
			base.PriceKey, base.Price = it.key, it.val
		}
		for i, w := range t.workloads {
			p := base
			p.Workload = w.Name
			if it, ok := t.top(s, &s.costs[i], i); ok {
				e := t.ents[it.key]
				p.CostKey, p.CostPrice, p.GPUs, p.TokensPerSecond = it.key, e.price, int(e.costs[i].gpus), e.costs[i].tps
			}
			v := p
			v.At = time.Time{}
			if !all && s.wrote && v == s.last[i] {
				continue // unchanged: the touch says the time
			}
			s.last[i] = v
			out = append(out, p)
		}
		s.wrote = true
	}
	return out
}

var _ store.SeriesTracker = (*Tracker)(nil)
