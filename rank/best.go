package rank

import (
	"sort"
	"strings"
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
}

// Entry is one ranked option: an offer, the card's throughput for the
// workload and the resulting cost per million tokens, in the base currency.
type Entry struct {
	Key                  string          `json:"key"`
	Card                 string          `json:"card"`
	Source               string          `json:"source"`
	Provider             string          `json:"provider"`
	OfferID              string          `json:"offer"`
	Region               string          `json:"region"`
	Mode                 pricewatch.Mode `json:"mode"`
	CommitmentHours      float64         `json:"commitment_hours,omitempty"`
	GPUs                 int             `json:"gpus"`
	Fits                 bool            `json:"fits"`
	PricePerGPUHour      float64         `json:"price_per_gpu_hour"`
	OfferCurrency        string          `json:"offer_currency"`
	OfferPricePerGPUHour float64         `json:"offer_price_per_gpu_hour"`
	TokensPerSecond      float64         `json:"tokens_per_second"`
	ThroughputOrigin     Origin          `json:"throughput_origin"`
	CostPerMillionTokens float64         `json:"cost_per_million_tokens"`
	Reliability          *float64        `json:"reliability,omitempty"`
	ReclaimRisk          string          `json:"reclaim_risk,omitempty"`
	ObservedAt           time.Time       `json:"observed_at"`
}

// Exclusions count offers left out of a workload's ranking, by reason.
type Exclusions map[string]int

// Snapshot is an immutable ranking of every current offer for every
// workload, built once per scrape and queried many times.
type Snapshot struct {
	GeneratedAt time.Time
	Base        string
	Rates       *pricewatch.Rates
	Offers      []pricewatch.Offer
	// StaleAfter are the freshness limits the snapshot was judged with.
	StaleAfter map[string]time.Duration
	opt        Options
	profiles   map[string]Profile // card \x00 workload → best profile
	direct     map[string]bool
	workloads  map[string]Workload
	entries    map[string][]Entry // per workload, sorted by cost then tie-breaks
	excluded   map[string]Exclusions
	memo       sync.Map
}

// Build ranks offers for each workload. Profiles give tokens/s per card and
// workload (a measured one wins over published, published over estimated).
func Build(offers []pricewatch.Offer, profiles []Profile, workloads []Workload, cat *normalize.Catalog, opt Options) *Snapshot {
	s := &Snapshot{
		GeneratedAt: opt.Now, Base: strings.ToUpper(opt.Base), Rates: opt.Rates, Offers: offers, StaleAfter: opt.StaleAfter,
		workloads: map[string]Workload{}, entries: map[string][]Entry{}, excluded: map[string]Exclusions{},
	}
	if s.Base == "" {
		s.Base = "USD"
	}
	best := bestProfiles(profiles)
	s.opt, s.profiles, s.direct = opt, best, directProviders(offers)
	for _, w := range workloads {
		s.workloads[w.Name] = w
		ex := Exclusions{}
		list := make([]Entry, 0, len(offers))
		for _, o := range offers {
			e, why := s.entry(o, w, best, cat, opt)
			if why != "" {
				ex[why]++
				continue
			}
			list = append(list, e)
		}
		sort.Slice(list, func(i, j int) bool { return less(list[i], list[j]) })
		s.entries[w.Name] = list
		s.excluded[w.Name] = ex
	}
	return s
}

// Reasons an offer stays out of a ranking.
const (
	WhyUnknownCard = "unknown card"
	WhyShared      = "shared or fractional GPU"
	WhyReliability = "below reliability floor"
	WhyStale       = "stale"
	WhyNoRate      = "no exchange rate"
	WhyNoProfile   = "no throughput profile"
	WhyNoFit       = "does not fit one GPU"
	WhyDuplicate   = "seen directly from the provider"
)

// directProviders are the providers some source scrapes directly: an
// aggregated feed's offers for them (a catalog listing RunPod) would count
// the same machines twice.
func directProviders(offers []pricewatch.Offer) map[string]bool {
	m := map[string]bool{}
	for _, o := range offers {
		if o.Source == o.Provider {
			m[o.Provider] = true
		}
	}
	return m
}

// Stale reports whether an offer is past its source's freshness limit.
func Stale(o pricewatch.Offer, now time.Time, staleAfter map[string]time.Duration) bool {
	lim, ok := staleAfter[o.Source]
	return ok && lim > 0 && now.Sub(o.ObservedAt) > lim
}

// eligible applies the rules every ranking and plan share: a known card,
// whole GPUs, reliable enough, fresh, not a feed's copy of a direct source.
func (s *Snapshot) eligible(o pricewatch.Offer, cat *normalize.Catalog) (pricewatch.Card, string) {
	card, ok := cat.Card(o.Card)
	switch {
	case o.Card == "" || !ok:
		return card, WhyUnknownCard
	case o.Shared:
		return card, WhyShared
	case o.Reliability != nil && *o.Reliability < s.opt.ReliabilityFloor:
		return card, WhyReliability
	case Stale(o, s.opt.Now, s.opt.StaleAfter):
		return card, WhyStale
	case o.Source != o.Provider && s.direct[o.Provider]:
		return card, WhyDuplicate
	}
	return card, ""
}

func (s *Snapshot) entry(o pricewatch.Offer, w Workload, profiles map[string]Profile, cat *normalize.Catalog, opt Options) (Entry, string) {
	card, why := s.eligible(o, cat)
	if why != "" {
		return Entry{}, why
	}
	price, err := opt.Rates.Convert(o.PricePerGPUHour, o.Currency, s.Base)
	if err != nil {
		return Entry{}, WhyNoRate
	}
	p, ok := profiles[o.Card+"\x00"+w.Name]
	if !ok || p.TokensPerSecond <= 0 {
		return Entry{}, WhyNoProfile
	}
	if !Fits(w, card, 1) {
		return Entry{}, WhyNoFit
	}
	return Entry{
		Key: o.Key, Card: o.Card, Source: o.Source, Provider: o.Provider, OfferID: o.OfferID,
		Region: o.Region, Mode: o.Mode, CommitmentHours: o.CommitmentHours, GPUs: o.GPUs, Fits: true,
		PricePerGPUHour: price, OfferCurrency: o.Currency, OfferPricePerGPUHour: o.PricePerGPUHour,
		TokensPerSecond: p.TokensPerSecond, ThroughputOrigin: p.Origin,
		CostPerMillionTokens: CostPerMillionTokens(price, p.TokensPerSecond),
		Reliability:          o.Reliability, ReclaimRisk: o.ReclaimRisk, ObservedAt: o.ObservedAt,
	}, ""
}

var originRank = map[Origin]int{OriginMeasured: 3, OriginPublished: 2, OriginEstimated: 1}

func bestProfiles(ps []Profile) map[string]Profile {
	m := make(map[string]Profile, len(ps))
	for _, p := range ps {
		k := p.Card + "\x00" + p.Workload
		if old, ok := m[k]; !ok || originRank[p.Origin] > originRank[old.Origin] {
			m[k] = p
		}
	}
	return m
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

// Entries returns every ranked entry of a workload (shared; do not modify).
func (s *Snapshot) Entries(workload string) []Entry { return s.entries[workload] }

// Excluded returns why offers stayed out of a workload's ranking.
func (s *Snapshot) Excluded(workload string) Exclusions { return s.excluded[workload] }

// Best returns the cheapest entry per card for the workload among the given
// modes, optionally for one card, sorted by cost.
func (s *Snapshot) Best(workload string, modes []pricewatch.Mode, card string) []Entry {
	allowed := map[pricewatch.Mode]bool{}
	for _, m := range modes {
		allowed[m] = true
	}
	var out []Entry
	seen := map[string]bool{}
	for _, e := range s.entries[workload] {
		if !allowed[e.Mode] || seen[e.Card] || (card != "" && e.Card != card) {
			continue
		}
		seen[e.Card] = true
		out = append(out, e)
	}
	return out
}

// Memo caches a value derived from the snapshot (rendered responses);
// f runs at most once per key and snapshot, give or take a race.
func (s *Snapshot) Memo(key string, f func() (any, error)) (any, error) {
	if v, ok := s.memo.Load(key); ok {
		return v, nil
	}
	v, err := f()
	if err != nil {
		return nil, err
	}
	s.memo.Store(key, v)
	return v, nil
}
