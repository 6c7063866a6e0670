package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
)

// BestQuery is a validated /v1/best request.
type BestQuery struct {
	Workload string
	Card     string
	Modes    []pricewatch.Mode
	Currency string
	// MaxGPUs keeps offers rentable with at most this many GPUs (0: any).
	MaxGPUs int
	// Utilization prices committed modes per used hour (0: full use).
	Utilization float64
	// AnyAvailability includes offers their source says are out of stock.
	AnyAvailability bool
	// IncludeUnfit lists the cards whose offers cannot hold the job, with
	// the reason in GiB.
	IncludeUnfit bool
	// Narrowing keeps offers by provider, region, country, link, GPU
	// memory and the vCPUs and RAM per GPU.
	Narrowing rank.Narrowing
}

// BestResponse is the /v1/best answer (and `pricewatch best --json`).
type BestResponse struct {
	Workload    string            `json:"workload"`
	Currency    string            `json:"currency"`
	Modes       []pricewatch.Mode `json:"modes"`
	MaxGPUs     int               `json:"max_gpus,omitempty"`
	Utilization float64           `json:"utilization,omitempty"`
	Available   string            `json:"available"`
	GeneratedAt time.Time         `json:"generated_at"`
	// Cards holds each card's best entry, prices and costs in Currency,
	// with the card's reference prices beside it.
	Cards []BestCard `json:"cards"`
	// Unfit (include_unfit=true) are the cards with offers in the modes
	// that cannot hold the job: weights + KV cache + reserve (serving) or
	// weights + gradients + optimizer + activations (training) against the
	// memory usable, in GiB.
	Unfit []rank.Unfit `json:"unfit,omitempty"`
	// Filters echoes the narrowing the answer was ranked with (absent:
	// none).
	Filters *rank.Narrowing `json:"filters,omitempty"`
	// API is, for a serving workload whose model an inference API sells,
	// the cheapest API's price at the workload's mix: cost per million
	// output tokens comparable with the cards' (absent otherwise). Cheaper
	// says which is cheapest: "api" or "self-hosted".
	API     *rank.APIOption `json:"api,omitempty"`
	Cheaper string          `json:"cheaper,omitempty"`
	// Demo is true when the prices come from bundled fixtures (a daemon
	// started with --demo or --fixtures), not from the providers.
	Demo bool `json:"demo"`
	// Data dates the data: the exchange rates and, in demo mode, each
	// source's fixture.
	Data DataInfo `json:"data"`
}

// BestCard is a card's best entry and the card's reference prices.
type BestCard struct {
	rank.Entry
	// Reference lists the card's reference prices (price indexes, catalog
	// medians): shown for comparison, never ranked.
	Reference []ReferencePrice `json:"reference,omitempty"`
}

// ReferencePrice is one reference row of a card, per GPU-hour in the
// answer's currency.
type ReferencePrice struct {
	Key             string          `json:"key"`
	Source          string          `json:"source"`
	Provider        string          `json:"provider"`
	OfferID         string          `json:"offer"`
	Region          string          `json:"region,omitempty"`
	Mode            pricewatch.Mode `json:"mode"`
	PricePerGPUHour float64         `json:"price_per_gpu_hour"`
	OfferCurrency   string          `json:"offer_currency"`
	OfferPrice      float64         `json:"offer_price_per_gpu_hour"`
	ObservedAt      time.Time       `json:"observed_at"`
}

// References converts a card's reference rows to cur.
func References(snap *rank.Snapshot, card, cur string) ([]ReferencePrice, error) {
	var out []ReferencePrice
	for _, o := range snap.References(card) {
		p, err := snap.Rates.Convert(o.PricePerGPUHour, o.Currency, cur)
		if err != nil {
			continue // a reference in a currency without a rate is left out, not an error
		}
		out = append(out, ReferencePrice{Key: o.Key, Source: o.Source, Provider: o.Provider, OfferID: o.OfferID,
			Region: o.Region, Mode: o.Mode, PricePerGPUHour: p, OfferCurrency: o.Currency, OfferPrice: o.PricePerGPUHour,
			ObservedAt: o.ObservedAt})
	}
	return out, nil
}

func checkParams(q url.Values, allowed ...string) error {
	return checkParamsRepeat(q, nil, allowed...)
}

// checkParamsRepeat is checkParams for an endpoint whose parameters in
// repeatable may be given more than once (region=a&region=b).
func checkParamsRepeat(q url.Values, repeatable []string, allowed ...string) error {
	for k, v := range q {
		if !slices.Contains(allowed, k) {
			return pricewatch.Errorf(pricewatch.EInvalid, "unknown parameter %q (allowed: %s)", k, strings.Join(allowed, ", "))
		}
		if len(v) > 1 && !slices.Contains(repeatable, k) {
			return pricewatch.Errorf(pricewatch.EInvalid, "parameter %q given %d times", k, len(v))
		}
	}
	return nil
}

// ParseBestQuery validates /v1/best parameters against the snapshot.
func ParseBestQuery(q url.Values, snap *rank.Snapshot, cat *normalize.Catalog) (BestQuery, error) {
	if err := checkParamsRepeat(q, []string{"region"}, append([]string{"workload", "card", "mode", "currency", "max_gpus", "utilization", "available", "include_unfit"},
		narrowingParams...)...); err != nil {
		return BestQuery{}, err
	}
	bq := BestQuery{Workload: q.Get("workload"), Card: q.Get("card"), Currency: strings.ToUpper(q.Get("currency"))}
	if bq.Workload == "" {
		return bq, pricewatch.Errorf(pricewatch.EInvalid, "parameter workload is required (one of %s)", workloadNames(snap))
	}
	if _, ok := snap.Workload(bq.Workload); !ok {
		return bq, pricewatch.Errorf(pricewatch.EInvalid, "unknown workload %q (one of %s)", bq.Workload, workloadNames(snap))
	}
	if bq.Card != "" {
		if _, ok := cat.Card(bq.Card); !ok {
			return bq, pricewatch.Errorf(pricewatch.EInvalid, "unknown card %q (canonical ids such as A100-80GB-SXM, RTX-4090)", bq.Card)
		}
	}
	modes, err := pricewatch.ParseModes(q.Get("mode"))
	if err != nil {
		return bq, err
	}
	bq.Modes = modes
	if bq.Currency == "" {
		bq.Currency = snap.Base
	}
	if !normalize.KnownCurrency(bq.Currency) {
		return bq, pricewatch.Errorf(pricewatch.EInvalid, "unknown currency %q (USD, CNY or EUR)", q.Get("currency"))
	}
	if v := q.Get("max_gpus"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > rank.MaxMaxGPUs {
			return bq, pricewatch.Errorf(pricewatch.EInvalid, "max_gpus must be an integer within 1..%d, got %q", rank.MaxMaxGPUs, v)
		}
		bq.MaxGPUs = n
	}
	if v := q.Get("utilization"); v != "" {
		u, err := strconv.ParseFloat(v, 64)
		if err != nil || !(u > 0 && u <= 1) {
			return bq, pricewatch.Errorf(pricewatch.EInvalid, "utilization must be a number within (0, 1], got %q", v)
		}
		bq.Utilization = u
	}
	switch v := q.Get("available"); v {
	case "", "yes":
	case "any":
		bq.AnyAvailability = true
	default:
		return bq, pricewatch.Errorf(pricewatch.EInvalid, "available must be yes (the default: offers not known to be out of stock) or any, got %q", v)
	}
	switch v := q.Get("include_unfit"); v {
	case "", "false":
	case "true":
		bq.IncludeUnfit = true
	default:
		return bq, pricewatch.Errorf(pricewatch.EInvalid, "include_unfit must be true or false, got %q", v)
	}
	bq.Narrowing, err = narrowingOf(q, snap)
	return bq, err
}

func workloadNames(snap *rank.Snapshot) string {
	var names []string
	for _, w := range snap.WorkloadNames() {
		names = append(names, w)
	}
	return strings.Join(names, ", ")
}

// Best answers a validated query from the snapshot.
func Best(snap *rank.Snapshot, q BestQuery) (*BestResponse, error) {
	resp := &BestResponse{Workload: q.Workload, Currency: q.Currency, Modes: q.Modes, MaxGPUs: q.MaxGPUs,
		Utilization: q.Utilization, Available: "yes", GeneratedAt: snap.GeneratedAt, Cards: []BestCard{},
		Data: dataInfo(snap, nil)}
	if q.AnyAvailability {
		resp.Available = "any"
	}
	f := rank.Filter{Modes: q.Modes, Card: q.Card, MaxGPUs: q.MaxGPUs, Utilization: q.Utilization, AnyAvailability: q.AnyAvailability,
		Narrowing: q.Narrowing}
	if q.Narrowing.Active() {
		resp.Filters = &q.Narrowing
	}
	for _, e := range snap.Best(q.Workload, f) {
		// e is a copy: the snapshot's entries stay in the base currency.
		e, err := e.In(snap, q.Currency)
		if err != nil {
			return nil, pricewatch.Errorf(pricewatch.EUnavailable, "cannot price in %s: %v", q.Currency, err)
		}
		refs, err := References(snap, e.Card, q.Currency)
		if err != nil {
			return nil, err
		}
		resp.Cards = append(resp.Cards, BestCard{Entry: e, Reference: refs})
	}
	if q.IncludeUnfit {
		resp.Unfit = snap.Unfit(q.Workload, f)
	}
	if w, ok := snap.Workload(q.Workload); ok {
		if api, ok := snap.CheapestAPI(w, q.Currency); ok {
			resp.API, resp.Cheaper = &api, "api"
			if len(resp.Cards) > 0 && resp.Cards[0].CostPerMillionTokens < api.CostPerMillionTokens {
				resp.Cheaper = "self-hosted"
			}
		}
	}
	return resp, nil
}

func (s *Server) best(w http.ResponseWriter, r *http.Request) error {
	v, err := s.view()
	if err != nil {
		return err
	}
	snap := v.Snapshot
	q, err := ParseBestQuery(r.URL.Query(), snap, normalize.DefaultCatalog())
	if err != nil {
		return err
	}
	q = q.canonical()
	body, err := snap.Memo(q.cacheKey(), func() ([]byte, error) {
		resp, err := Best(snap, q)
		if err != nil {
			return nil, err
		}
		resp.MarkDemo(s.demo.Load())
		b, err := json.Marshal(resp)
		return append(b, '\n'), err
	})
	if err != nil {
		return err
	}
	writeBytes(w, http.StatusOK, body)
	return nil
}

// canonical is the query with its modes in the one order of
// pricewatch.Modes, once each: "spot,ondemand" and "ondemand,spot,spot"
// ask the same question and get the same (cached) answer.
func (q BestQuery) canonical() BestQuery {
	order := pricewatch.Modes()
	ms := slices.Clone(q.Modes)
	slices.SortFunc(ms, func(a, b pricewatch.Mode) int { return slices.Index(order, a) - slices.Index(order, b) })
	q.Modes = slices.Compact(ms)
	q.Currency = strings.ToUpper(q.Currency)
	return q
}

// cacheKey is a canonical query's key in the snapshot's answer cache:
// every field that changes the answer, each in one spelling (validated
// names, sorted modes, upper-case currency, the shortest float form).
func (q BestQuery) cacheKey() string {
	modes := make([]string, len(q.Modes))
	for i, m := range q.Modes {
		modes[i] = string(m)
	}
	return fmt.Sprintf("best|%s|%s|%s|%s|%d|%s|%t|%t|%s", q.Workload, q.Card, q.Currency, strings.Join(modes, ","), q.MaxGPUs,
		strconv.FormatFloat(q.Utilization, 'g', -1, 64), q.AnyAvailability, q.IncludeUnfit, narrowingKey(q.Narrowing))
}

// OffersResponse is the /v1/offers answer: a page of offers, cheapest
// first by price converted to Currency, with Next the cursor of the
// following page (absent on the last).
type OffersResponse struct {
	Total int `json:"total"`
	Count int `json:"count"`
	// Currency is the currency each offer's converted prices are in, and
	// the price order's.
	Currency string `json:"currency"`
	// Cards are the canonical cards the card parameter denotes (absent
	// without one): "H100" lists the H100 PCIe and SXM cards.
	Cards  []string      `json:"cards,omitempty"`
	Offers []OfferStatus `json:"offers"`
	Next   string        `json:"next,omitempty"`
}

// OfferStatus is a current offer, whether it is past its source's stale
// limit (such offers stay listed but leave rankings), and the share of the
// last 7 days it was available, where its source says (from the history).
type OfferStatus struct {
	pricewatch.Offer
	Stale       bool     `json:"stale"`
	Available7d *float64 `json:"available_7d,omitempty"`
	// PriceBasis says what price_per_gpu_hour is for: "gpu" (one whole
	// GPU) or "share" (the fraction gpu_fraction of one, whose whole-GPU
	// equivalent is whole_gpu_price_per_hour).
	PriceBasis           string   `json:"price_basis"`
	WholeGPUPricePerHour *float64 `json:"whole_gpu_price_per_hour,omitempty"`
	// Converted is the offer's prices in the answer's currency, beside its
	// own (price_per_gpu_hour, currency); absent when no exchange rate
	// converts its currency (such offers list last).
	Converted *ConvertedPrice `json:"converted,omitempty"`
}

// ConvertedPrice is an offer's prices in one currency, and the rental
// unit they are for.
type ConvertedPrice struct {
	Currency        string  `json:"currency"`
	PricePerGPUHour float64 `json:"price_per_gpu_hour"`
	// WholeGPUPricePerHour is a fractional offer's price scaled to one
	// whole GPU (what max_price compares).
	WholeGPUPricePerHour *float64 `json:"whole_gpu_price_per_hour,omitempty"`
	// UnitGPUs is the GPUs of the rental UnitPricePerHour is for: a fixed
	// unit's; of a per-GPU offer the gpus asked for, else the smallest
	// rental reaching min_total_gpu_memory, else its smallest rental.
	// OfferUnitPricePerHour is that price in the offer's currency.
	UnitGPUs              int     `json:"unit_gpus"`
	UnitPricePerHour      float64 `json:"unit_price_per_hour"`
	OfferUnitPricePerHour float64 `json:"offer_unit_price_per_hour"`
}

// offerStatus is an offer's listing entry.
func offerStatus(o pricewatch.Offer, stale bool) OfferStatus {
	st := OfferStatus{Offer: o, Stale: stale, PriceBasis: "gpu"}
	if w, ok := o.WholeGPUPricePerHour(); ok {
		st.PriceBasis, st.WholeGPUPricePerHour = "share", &w
	}
	return st
}

// unitGPUs is the GPUs of the rental an offer's listing prices: a fixed
// unit's; of a per-GPU offer, gpus when asked, else the smallest rental
// with minMemGB of GPU memory in all (card memory memGB each), else its
// smallest rental.
func unitGPUs(o pricewatch.Offer, gpus int, memGB, minMemGB float64) int {
	perGPU := o.RentUnit == pricewatch.RentPerGPU
	switch {
	case perGPU && gpus > 0:
		return gpus
	case perGPU && minMemGB > 0 && memGB > 0:
		for _, n := range o.GPUCounts {
			if memGB*float64(n) >= minMemGB*(1-1e-9) {
				return n
			}
		}
	}
	switch {
	case o.RentUnitGPUs > 0:
		return o.RentUnitGPUs
	case o.GPUs > 0 && o.RentUnit != pricewatch.RentPerGPU:
		return o.GPUs
	}
	return 1
}

// convert fills the entry's Converted prices (left nil without a rate).
func (st *OfferStatus) convert(rates *pricewatch.Rates, q *OffersQuery) {
	cur := q.Currency
	f, err := rates.Convert(1, st.Currency, cur)
	if err != nil {
		return
	}
	var mem float64
	if q.MinTotalGPUMemoryGB > 0 && q.cat != nil {
		card, _ := q.cat.Card(st.Card)
		mem = card.MemoryGB
	}
	n := unitGPUs(st.Offer, q.GPUs, mem, q.MinTotalGPUMemoryGB)
	own := st.PricePerGPUHour * float64(n)
	c := &ConvertedPrice{Currency: cur, PricePerGPUHour: st.PricePerGPUHour * f, UnitGPUs: n, UnitPricePerHour: own * f,
		OfferUnitPricePerHour: own}
	if st.WholeGPUPricePerHour != nil {
		w := *st.WholeGPUPricePerHour * f
		c.WholeGPUPricePerHour = &w
	}
	st.Converted = c
}

// AvailabilityReader is the optional part of a Backend that reads how
// much of a time window offers were available.
type AvailabilityReader interface {
	Availability(keys []string, since, now time.Time) (map[string]float64, error)
}

// offersParams are the /v1/offers parameters besides the narrowing.
var offersParams = []string{"card", "source", "mode", "kind", "available", "limit", "cursor", "sort", "currency",
	"max_price", "gpus", "vendor", "min_total_gpu_memory"}

// OffersQuery is a validated /v1/offers request.
type OffersQuery struct {
	rank.OfferQuery
	// CardName is the card parameter as given; OfferQuery.Cards the cards
	// it denotes.
	CardName string
	// Cursor is the cursor parameter as given.
	Cursor string
	cat    *normalize.Catalog
}

// Bounds of the listing filters.
const (
	maxListPrice  = 1e6
	maxListMemory = 1e6
)

// ParseOffersQuery validates /v1/offers parameters against the snapshot.
// knownSource reports whether a source parameter names a configured
// source (nil: any name).
func ParseOffersQuery(q url.Values, snap *rank.Snapshot, cat *normalize.Catalog, knownSource func(string) bool) (OffersQuery, error) {
	oq := OffersQuery{cat: cat}
	if err := checkParamsRepeat(q, []string{"region"}, append(slices.Clone(offersParams), narrowingParams...)...); err != nil {
		return oq, err
	}
	oq.Source, oq.Limit, oq.CardName = q.Get("source"), 100, strings.TrimSpace(q.Get("card"))
	var err error
	if a := q.Get("available"); a != "" {
		if oq.Available, err = pricewatch.ParseAvailability(a); err != nil {
			return oq, err
		}
	}
	if k := q.Get("kind"); k != "" {
		if oq.Kind, err = pricewatch.ParseKind(k); err != nil {
			return oq, err
		}
	}
	if m := q.Get("mode"); m != "" {
		if oq.Mode, err = pricewatch.ParseMode(m); err != nil {
			return oq, err
		}
	}
	if oq.CardName != "" {
		if oq.Cards = rank.CardsNamed(cat, oq.CardName); len(oq.Cards) == 0 {
			return oq, pricewatch.Errorf(pricewatch.EInvalid, "unknown card %q (a canonical id such as H100-80GB-SXM, a model such as H100 or A100, or an alias)", oq.CardName)
		}
	}
	if oq.Source != "" && knownSource != nil && !knownSource(oq.Source) {
		return oq, pricewatch.Errorf(pricewatch.EInvalid, "unknown source %q", oq.Source)
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 10000 {
			return oq, pricewatch.Errorf(pricewatch.EInvalid, "limit must be an integer within 1..10000, got %q", l)
		}
		oq.Limit = n
	}
	if oq.Sort, err = rank.ParseOfferSort(q.Get("sort")); err != nil {
		return oq, pricewatch.Errorf(pricewatch.EInvalid, "sort: %v", err)
	}
	oq.Currency = strings.ToUpper(q.Get("currency"))
	if oq.Currency == "" {
		oq.Currency = snap.Base
	}
	if !normalize.KnownCurrency(oq.Currency) {
		return oq, pricewatch.Errorf(pricewatch.EInvalid, "unknown currency %q (USD, CNY or EUR)", q.Get("currency"))
	}
	if v := q.Get("gpus"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > rank.MaxMaxGPUs {
			return oq, pricewatch.Errorf(pricewatch.EInvalid, "gpus must be an integer within 1..%d (the exact GPUs of a rental), got %q", rank.MaxMaxGPUs, v)
		}
		oq.GPUs = n
	}
	if v := q.Get("vendor"); v != "" {
		known := rank.Vendors(cat)
		if !slices.Contains(known, strings.ToLower(v)) {
			return oq, pricewatch.Errorf(pricewatch.EInvalid, "vendor: unknown vendor %q (one of %s)", v, strings.Join(known, ", "))
		}
		oq.Vendor = strings.ToLower(v)
	}
	for _, m := range []struct {
		name  string
		bound float64
		to    *float64
	}{{"max_price", maxListPrice, &oq.MaxPrice}, {"min_total_gpu_memory", maxListMemory, &oq.MinTotalGPUMemoryGB}} {
		v := q.Get(m.name)
		if v == "" {
			continue
		}
		f, perr := strconv.ParseFloat(v, 64)
		if perr != nil || !(f > 0 && f <= m.bound) {
			return oq, pricewatch.Errorf(pricewatch.EInvalid, "%s must be a number above 0, at most %s, got %q", m.name, strconv.FormatFloat(m.bound, 'f', -1, 64), v)
		}
		*m.to = f
	}
	if oq.Cursor = q.Get("cursor"); oq.Cursor != "" {
		if oq.After, err = rank.ParseOfferCursor(oq.Cursor); err != nil {
			return oq, pricewatch.Errorf(pricewatch.EInvalid, "cursor: %v (pass the next value of the previous page)", err)
		}
		if oq.After.Sort != oq.Sort {
			return oq, pricewatch.Errorf(pricewatch.EInvalid, "cursor: it pages a listing sorted by %s, not %s (pass the same sort as the first page)", oq.After.Sort, oq.Sort)
		}
		if oq.After.Currency != oq.Currency {
			return oq, pricewatch.Errorf(pricewatch.EInvalid, "cursor: it pages a listing in %s, not %s (pass the same currency as the first page)", cursorCurrencyName(oq.After.Currency), oq.Currency)
		}
	}
	oq.Narrowing, err = narrowingOf(q, snap)
	return oq, err
}

func cursorCurrencyName(c string) string {
	if c == "" {
		return "the offers' own currencies"
	}
	return c
}

// cacheKey is the query's key in the snapshot's answer cache.
func (q OffersQuery) cacheKey() string {
	return fmt.Sprintf("offers|%s|%s|%s|%s|%s|%d|%s|%s|%s|%s|%g|%d|%s|%g", strings.Join(q.Cards, ","), q.Source, q.Mode, q.Kind,
		q.Available, q.Limit, q.Cursor, q.Sort, narrowingKey(q.Narrowing), q.Currency, q.MaxPrice, q.GPUs, q.Vendor, q.MinTotalGPUMemoryGB)
}

// Offers answers a validated offer query from the snapshot; avail, when
// not nil, adds each offer's share of the last 7 days available.
func Offers(snap *rank.Snapshot, q OffersQuery, avail AvailabilityReader) (*OffersResponse, error) {
	page, total, next := snap.QueryOffers(q.OfferQuery)
	resp := &OffersResponse{Total: total, Count: len(page), Currency: q.Currency, Cards: q.Cards, Offers: make([]OfferStatus, len(page))}
	if next != nil {
		resp.Next = next.String()
	}
	var shares map[string]float64
	if avail != nil && len(page) > 0 {
		keys := make([]string, len(page))
		for i, o := range page {
			keys[i] = o.Key
		}
		now := snap.GeneratedAt
		var err error
		if shares, err = avail.Availability(keys, now.Add(-7*24*time.Hour), now); err != nil {
			return nil, err
		}
	}
	for i, o := range page {
		resp.Offers[i] = offerStatus(o, rank.Stale(o, snap.GeneratedAt, snap.StaleAfter))
		resp.Offers[i].convert(snap.Rates, &q)
		if sh, ok := shares[o.Key]; ok {
			resp.Offers[i].Available7d = &sh
		}
	}
	return resp, nil
}

func (s *Server) offers(w http.ResponseWriter, r *http.Request) error {
	v, err := s.view()
	if err != nil {
		return err
	}
	snap := v.Snapshot
	sources := s.backend.Config().Sources
	oq, err := ParseOffersQuery(r.URL.Query(), snap, normalize.DefaultCatalog(), func(name string) bool { _, ok := sources[name]; return ok })
	if err != nil {
		return err
	}
	body, err := snap.Memo(oq.cacheKey(), func() ([]byte, error) {
		ar, _ := s.backend.(AvailabilityReader)
		resp, err := Offers(snap, oq, ar)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(resp)
		return append(b, '\n'), err
	})
	if err != nil {
		return err
	}
	writeBytes(w, http.StatusOK, body)
	return nil
}
