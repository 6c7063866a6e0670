package rank

import (
	"container/list"
	"sort"
	"sync"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
)

// Options decide which offers a snapshot ranks.
type Options struct {
	// Now is the time freshness is judged at.
	Now time.Time
	// StaleAfter is each source's freshness limit; an offer whose source has
	// not confirmed it within the limit leaves the ranking. A source
	// without a limit never goes stale.
	StaleAfter map[string]time.Duration
	// ReliabilityFloor keeps marketplace offers with a lower score out.
	ReliabilityFloor float64
	// Base is the currency entries are compared in; Rates convert to it.
	Base  string
	Rates *pricewatch.Rates
	// TokenPrices are the inference APIs' per-token prices (token sources),
	// compared with self-hosting in serving plans and rankings.
	TokenPrices []pricewatch.TokenPrice
}

// Entry is one ranked option: an offer rented at its own unit (a fixed
// instance or bundle whole; a per-GPU offer at the fewest GPUs that hold
// the workload), the throughput of the GPUs rented and the resulting cost
// per million tokens, in the base currency.
type Entry struct {
	Key      string          `json:"key"`
	Card     string          `json:"card"`
	Source   string          `json:"source"`
	Provider string          `json:"provider"`
	OfferID  string          `json:"offer"`
	Region   string          `json:"region"`
	Mode     pricewatch.Mode `json:"mode"`
	// Bid marks a spot price that is a bid (Vast's minimum, disk
	// included): kept only until outbid.
	Bid             bool    `json:"bid,omitempty"`
	CommitmentHours float64 `json:"commitment_hours,omitempty"`
	// RentUnit and GPUCounts say how the offer is rented; GPUs is the GPUs
	// this entry rents and pays for, GPUsUsed those the job runs on (a
	// serving replica layout may leave some idle).
	RentUnit  pricewatch.RentUnit `json:"rent_unit"`
	GPUCounts []int               `json:"gpu_counts"`
	GPUs      int                 `json:"gpus"`
	GPUsUsed  int                 `json:"gpus_used"`
	Fits      bool                `json:"fits"`
	// PricePerGPUHour is per GPU at full use (per used hour at Utilization
	// for committed modes); UnitPricePerHour is what the GPUs rented cost
	// per hour.
	PricePerGPUHour      float64 `json:"price_per_gpu_hour"`
	UnitPricePerHour     float64 `json:"unit_price_per_hour"`
	Utilization          float64 `json:"utilization,omitempty"`
	OfferCurrency        string  `json:"offer_currency"`
	OfferPricePerGPUHour float64 `json:"offer_price_per_gpu_hour"`
	// TokensPerSecond is the whole rental's: GPUsUsed × TokensPerSecondPerGPU
	// × ScalingEfficiency.
	TokensPerSecond       float64 `json:"tokens_per_second"`
	TokensPerSecondPerGPU float64 `json:"tokens_per_second_per_gpu"`
	ScalingEfficiency     float64 `json:"scaling_efficiency"`
	Precision             string  `json:"precision"`
	PrecisionNote         string  `json:"precision_note,omitempty"`
	ThroughputOrigin      Origin  `json:"throughput_origin"`
	// ThroughputNote explains a measured figure far below the card's norm
	// (it is still the figure used: it is what the provider delivered).
	ThroughputNote string `json:"throughput_note,omitempty"`
	// CostPerMillionTokens = UnitPricePerHour × 1e6 / (TokensPerSecond × 3600).
	CostPerMillionTokens float64  `json:"cost_per_million_tokens"`
	Reliability          *float64 `json:"reliability,omitempty"`
	ReclaimRisk          string   `json:"reclaim_risk,omitempty"`
	// Available and Stock are the offer's: an entry the source says is out
	// of stock is ranked but left out of answers unless they ask for it.
	Available  pricewatch.Availability `json:"available"`
	Stock      string                  `json:"stock,omitempty"`
	ObservedAt time.Time               `json:"observed_at"`
	// Machine is what comes with the GPUs rented: the offer's, its vCPUs,
	// RAM and disk scaled by GPUs over the offer's GPUs for a per-GPU
	// rental, and Interconnect the link family between them (LinkFamily:
	// the offer's stated link, else the card's).
	pricewatch.Machine
}

// In returns the entry with its money in currency cur (from the base the
// snapshot ranks in); costs scale with prices, so nothing else changes.
func (e Entry) In(snap *Snapshot, cur string) (Entry, error) {
	f, err := snap.Rates.Convert(1, snap.Base, cur)
	if err != nil {
		return e, err
	}
	e.PricePerGPUHour *= f
	e.UnitPricePerHour *= f
	e.CostPerMillionTokens *= f
	return e, nil
}

// TokenPrices are the per-token API prices the snapshot was built with.
func (s *Snapshot) TokenPrices() []pricewatch.TokenPrice { return s.opt.TokenPrices }

// CheapestAPI is the cheapest API price of a workload's model (its preset)
// in the snapshot, at the workload's mix of input and output tokens, in
// currency.
func (s *Snapshot) CheapestAPI(w Workload, currency string) (APIOption, bool) {
	if w.Method != MethodServe {
		return APIOption{}, false
	}
	return CheapestAPI(s.opt.TokenPrices, w.Model.Name, w.InputTokens, w.OutputTokens, w.CachedPromptShare, s.Rates, currency)
}

// ModeLabel writes the entry's mode, a marketplace bid as "bid".
func (e Entry) ModeLabel() string { return modeLabel(e.Mode, e.Bid) }

// Exclusions count offers left out of a workload's ranking, by reason.
type Exclusions map[string]int

// Reasons an offer stays out of a ranking.
const (
	WhyUnknownCard = "unknown card"
	WhyShared      = "shared or fractional GPU"
	WhyReliability = "below reliability floor"
	WhyStale       = "stale"
	WhyNoRate      = "no exchange rate"
	WhyNoProfile   = "no throughput profile"
	WhyNoFit       = "does not fit the GPUs allowed"
	WhyUnitSmall   = "rentable unit too small to hold it"
	WhyUnitLarge   = "rentable unit larger than max GPUs"
	WhyNoUnit      = "rentable unit not stated"
	WhyReference   = "reference price, not an offer"
	WhyDuplicate   = "seen directly from the provider"
	WhyNoBF16      = "no bf16 (the job requires bf16)"
	WhyNoFP8       = "fp8 weights not run on this card by the engine"
	WhyNoFP4       = "fp4 weights not run on this card by the engine"
	// WhyUnavailable counts offers the source says cannot be rented now;
	// they stay in the snapshot for answers that ask for them.
	WhyUnavailable = "not available now"
)

// Stale reports whether an offer is past its source's freshness limit.
func Stale(o pricewatch.Offer, now time.Time, staleAfter map[string]time.Duration) bool {
	lim, ok := staleAfter[o.Source]
	return ok && lim > 0 && now.Sub(o.ObservedAt) > lim
}

// eligible applies the rules every ranking and plan share: a rentable
// offer (not a reference price) with a stated unit, a known card, whole
// GPUs, reliable enough, fresh, not a feed's copy of a direct source.
func (s *Snapshot) eligible(o pricewatch.Offer, cat *normalize.Catalog) (pricewatch.Card, string) {
	card, ok := cat.Card(o.Card)
	switch {
	case o.Reference():
		return card, WhyReference
	case o.Card == "" || !ok:
		return card, WhyUnknownCard
	case o.Shared:
		return card, WhyShared
	case o.Reliability != nil && *o.Reliability < s.opt.ReliabilityFloor:
		return card, WhyReliability
	case Stale(o, s.opt.Now, s.opt.StaleAfter):
		return card, WhyStale
	case o.Source != o.Provider && s.direct[o.Provider+"\x00"+string(o.Mode)]:
		return card, WhyDuplicate
	case o.RentUnit == "" || len(o.GPUCounts) == 0:
		return card, WhyNoUnit
	}
	return card, ""
}

func (s *Snapshot) entry(o pricewatch.Offer, w Workload, profiles profileSet, cat *normalize.Catalog, opt Options) (Entry, string) {
	card, why := s.eligible(o, cat)
	if why != "" {
		return Entry{}, why
	}
	price, err := opt.Rates.Convert(o.PricePerGPUHour, o.Currency, s.Base)
	if err != nil {
		return Entry{}, WhyNoRate
	}
	prec, ok := PrecisionOn(w, card)
	if !ok {
		return Entry{}, prec.Code
	}
	p, ok := profiles.lookup(o.Card, w.Name, o.Provider, o.OfferID)
	if !ok || p.TokensPerSecond <= 0 {
		return Entry{}, WhyNoProfile
	}
	r, p, why := RentalFor(w, card, o, MaxMaxGPUs, p)
	if why != "" {
		return Entry{}, why
	}
	e := Entry{
		Key: o.Key, Card: o.Card, Source: o.Source, Provider: o.Provider, OfferID: o.OfferID,
		Region: o.Region, Mode: o.Mode, Bid: o.Bid, CommitmentHours: o.CommitmentHours,
		RentUnit: o.RentUnit, GPUCounts: o.GPUCounts, GPUs: r.GPUs, GPUsUsed: r.Used, Fits: true,
		PricePerGPUHour: price, UnitPricePerHour: price * float64(r.GPUs),
		OfferCurrency: o.Currency, OfferPricePerGPUHour: o.PricePerGPUHour,
		TokensPerSecondPerGPU: p.TokensPerSecond, ScalingEfficiency: r.Efficiency,
		TokensPerSecond: r.TokensPerSecond(p.TokensPerSecond),
		Precision:       prec.Name, PrecisionNote: prec.Note, ThroughputOrigin: p.Label(),
		ThroughputNote: s.throughputNote(p), Reliability: o.Reliability, ReclaimRisk: o.ReclaimRisk, ObservedAt: o.ObservedAt,
		Available: o.Available, Stock: o.Stock,
	}
	if e.Available == "" {
		e.Available = pricewatch.AvailableUnknown
	}
	e.Machine = o.Machine
	if o.GPUs > 0 && r.GPUs != o.GPUs {
		k := float64(r.GPUs) / float64(o.GPUs)
		e.VCPUs, e.RAMGB, e.DiskGB = o.VCPUs*k, o.RAMGB*k, o.DiskGB*k
	}
	if e.Interconnect = LinkFamily(o.Interconnect); e.Interconnect == "" {
		e.Interconnect = LinkFamily(card.Link.Name)
	}
	e.CostPerMillionTokens = CostPerMillionTokens(e.UnitPricePerHour, e.TokensPerSecond)
	return e, ""
}

// throughputNote is the below-norm note of a measured profile, if flagged.
func (s *Snapshot) throughputNote(p Profile) string {
	if c, ok := s.norms[p.Key()]; ok && c.BelowNorm {
		return c.Note
	}
	return ""
}

// less orders by cost, then price, then source, then offer key, so the same
// data always gives the same answer.
func less(a, b Entry) bool {
	if a.CostPerMillionTokens != b.CostPerMillionTokens {
		return a.CostPerMillionTokens < b.CostPerMillionTokens
	}
	if a.PricePerGPUHour != b.PricePerGPUHour {
		return a.PricePerGPUHour < b.PricePerGPUHour
	}
	if a.Source != b.Source {
		return a.Source < b.Source
	}
	return a.Key < b.Key
}

// Workload returns a workload the snapshot ranks.
func (s *Snapshot) Workload(name string) (Workload, bool) {
	w, ok := s.workloads[name]
	return w, ok
}

// WorkloadNames lists the workloads the snapshot ranks, sorted.
func (s *Snapshot) WorkloadNames() []string {
	names := make([]string, 0, len(s.workloads))
	for n := range s.workloads {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Filter selects the entries a best-per-card answer considers.
type Filter struct {
	// Modes are the billing modes considered (DefaultModes when empty).
	Modes []pricewatch.Mode
	// Card keeps one card ("" for all).
	Card string
	// MaxGPUs keeps offers rentable with at most this many GPUs (0: any).
	MaxGPUs int
	// Utilization prices committed modes per used hour: price / u
	// (0 means 1, full use).
	Utilization float64
	// AnyAvailability includes offers the source says are out of stock
	// (by default only offers available or of unknown availability).
	AnyAvailability bool
	// Narrowing keeps offers by provider, region, country, link and the
	// machine that comes with the GPUs (empty: any).
	Narrowing
}

// MemoMaxEntries and MemoMaxBytes bound a snapshot's answer cache (see
// Memo): past either, the least recently used answers are dropped, so no
// stream of distinct queries can grow it. An answer above MemoMaxBytes/16
// is not cached at all.
const (
	MemoMaxEntries = 2048
	MemoMaxBytes   = 16 << 20
)

// memoOverhead is what one cached answer costs beyond its key and value
// bytes (map slot, list element, headers), counted against MemoMaxBytes.
const memoOverhead = 160

// memo is a snapshot's bounded LRU cache of rendered answers.
type memo struct {
	mu    sync.Mutex
	items map[string]*list.Element // of *memoItem
	order list.List                // most recently used first
	bytes int64
}

type memoItem struct {
	key  string
	val  []byte
	size int64
}

// Memo returns the answer cached under key, or computes it with f and
// caches it (an error is returned, not cached). The cache is bounded by
// MemoMaxEntries and MemoMaxBytes; f may run again for a key whose answer
// was dropped, or when two requests miss at once. Callers give one answer
// one key (canonical: sorted lists, folded case) and must not modify the
// bytes returned.
func (s *Snapshot) Memo(key string, f func() ([]byte, error)) ([]byte, error) {
	if v, ok := s.memo.get(key); ok {
		return v, nil
	}
	v, err := f()
	if err != nil {
		return nil, err
	}
	s.memo.put(key, v)
	return v, nil
}

// MemoStats reports how many answers the cache holds and the bytes they
// are counted at (keys, values and per-entry overhead).
func (s *Snapshot) MemoStats() (entries int, bytes int64) {
	s.memo.mu.Lock()
	defer s.memo.mu.Unlock()
	return len(s.memo.items), s.memo.bytes
}

func (m *memo) get(key string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.items[key]
	if !ok {
		return nil, false
	}
	m.order.MoveToFront(e)
	return e.Value.(*memoItem).val, true
}

func (m *memo) put(key string, val []byte) {
	size := int64(len(key)+len(val)) + memoOverhead
	if size > MemoMaxBytes/16 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.items == nil {
		m.items = map[string]*list.Element{}
	}
	if e, ok := m.items[key]; ok {
		m.order.MoveToFront(e) // a concurrent miss cached it first
		return
	}
	m.items[key] = m.order.PushFront(&memoItem{key: key, val: val, size: size})
	m.bytes += size
	for len(m.items) > MemoMaxEntries || m.bytes > MemoMaxBytes {
		old := m.order.Back()
		it := old.Value.(*memoItem)
		m.order.Remove(old)
		delete(m.items, it.key)
		m.bytes -= it.size
	}
}
