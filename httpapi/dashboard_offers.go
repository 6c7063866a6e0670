package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
)

// The offer browser (/offers) lists every offer of one card, a page at a
// time, through the same parser and query as GET /v1/offers: its filters,
// sort and cursor are that endpoint's parameters, so the page's address
// is the query and a filtered view is a link.

// offerAPIParams are the /v1/offers parameters the page passes on as
// given (empty ones are left out).
var offerAPIParams = []string{"card", "source", "mode", "kind", "available", "sort", "limit", "cursor"}

// filterParams are the filters /v1/best and /v1/offers share; the
// ranking table and the offer browser pass them on.
var filterParams = []string{"provider", "exclude_provider", "region", "country", "min_gpu_memory", "min_vcpus_per_gpu", "min_ram_gb_per_gpu", "interconnect"}

// offersPageParams: the API's, the filters, the row number of the page's
// first offer (from) and the navigation's own.
var offersPageParams = slices.Concat(offerAPIParams, filterParams, []string{"from", "workload", "currency", "max_gpus"})

// filterField is one filter input of a form.
type filterField struct {
	Name, Label, Value, Placeholder, Title string
	Number                                 bool
}

func filterFields(q url.Values) []filterField {
	fs := []filterField{
		{Name: "provider", Label: "Providers", Placeholder: "any", Title: "Only these providers, comma-separated"},
		{Name: "exclude_provider", Label: "Not providers", Placeholder: "none", Title: "Leave out these providers, comma-separated"},
		{Name: "region", Label: "Region", Placeholder: "any", Title: "Regions, comma-separated"},
		{Name: "country", Label: "Country", Placeholder: "any", Title: "ISO 3166 alpha-2 codes, comma-separated (US, DE)"},
		{Name: "min_gpu_memory", Label: "Min GPU GB", Number: true, Title: "The card's memory, GB, at least"},
		{Name: "min_vcpus_per_gpu", Label: "Min vCPU/GPU", Number: true, Title: "Offers that do not state vCPUs do not pass"},
		{Name: "min_ram_gb_per_gpu", Label: "Min RAM GB/GPU", Number: true, Title: "Offers that do not state RAM do not pass"},
		{Name: "interconnect", Label: "Interconnect", Placeholder: "any", Title: "Link families, comma-separated: nvlink, pcie, infinity-fabric, roce, network (the offer's stated link, else the card's)"},
	}
	for i := range fs {
		fs[i].Value = q.Get(fs[i].Name)
	}
	return fs
}

// offerRow is one offer as the browser shows it. The fields its row in
// the page reads are copied to the top, where they shadow the embedded
// ones they equal: html/template finds a top-level field by a scan of
// the struct, a promoted one by reflect's breadth-first search of the
// embedded structs (three levels down to the Machine's) with a map per
// lookup, and 28 lookups a row were a third of rendering a page of 50.
// Any other field still resolves through the embedding. Build one with
// newOfferRow (TestOfferRow_ShadowsEqualTheOffer checks it copies every
// shadow).
type offerRow struct {
	OfferStatus
	N                                                       int
	Key, Source, Provider, OfferID, Region, Currency, Stock string
	Country, Interconnect, RentURL, PriceBasis              string
	Kind                                                    pricewatch.Kind
	Mode                                                    pricewatch.Mode
	Available                                               pricewatch.Availability
	RentUnit                                                pricewatch.RentUnit
	Stale, Bid                                              bool
	GPUs                                                    int
	GPUCounts                                               []int
	PricePerGPUHour, UnitPricePerHour, VCPUs, RAMGB, DiskGB float64
}

func newOfferRow(o OfferStatus, n int) offerRow {
	return offerRow{OfferStatus: o, N: n,
		Key: o.Key, Source: o.Source, Provider: o.Provider, OfferID: o.OfferID, Region: o.Region, Currency: o.Currency, Stock: o.Stock,
		Country: o.Country, Interconnect: o.Interconnect, RentURL: o.RentURL, PriceBasis: o.PriceBasis,
		Kind: o.Kind, Mode: o.Mode, Available: o.Available, RentUnit: o.RentUnit, Stale: o.Stale, Bid: o.Bid,
		GPUs: o.GPUs, GPUCounts: o.GPUCounts,
		PricePerGPUHour: o.PricePerGPUHour, UnitPricePerHour: o.UnitPricePerHour, VCPUs: o.VCPUs, RAMGB: o.RAMGB, DiskGB: o.DiskGB}
}

type offersPage struct {
	page
	Card, Mode, Kind, Available, Source, Sort, Limit string
	Cards, Modes, Kinds, Avails, Sources, Limits     []option
	Filters                                          []filterField
	Columns                                          []sortColumn
	Rows                                             []offerRow
	Total, From, To                                  int
	NextLink, FirstLink, APILink                     string
}

// offerSorts are the sortable columns and the order of a first click:
// prices cheapest first, GPUs, vCPUs and RAM most first.
var offerSorts = []struct{ key, label, first string }{
	{"price", "Price / GPU-h", "price"}, {"gpus", "GPUs", "-gpus"}, {"vcpus", "vCPUs", "-vcpus"}, {"ram_gb", "RAM GB", "-ram_gb"},
}

// dashboardOffers serves the offer browser as a heavy request (under the
// limit of heavy.go) that stops when its client leaves (the request's
// context). A page reads at most its page of offers, from the snapshot's
// per-card indexes, and is kept in the snapshot's answer cache for the
// minute as the ranking page is (the page is a function of the snapshot,
// the query and the clock); a page for a bad parameter is not kept.
// Before, every request decoded every offer of the catalog (6 ms at 100k,
// 40x /v1/history) with no bound on how many ran at once.
func (s *Server) dashboardOffers(w http.ResponseWriter, r *http.Request) error {
	return s.heavy(s.offersPageCached)(w, r)
}

func (s *Server) offersPageCached(w http.ResponseWriter, r *http.Request) error {
	if err := r.Context().Err(); err != nil {
		return err // the client left while the request waited for a slot
	}
	v, err := s.view()
	if err != nil {
		return renderError(w, "offers", r.URL.Query(), err)
	}
	key := fmt.Sprintf("offers-page|%s|%d", r.URL.RawQuery, now().Unix()/60)
	var uncached *pageBuffer
	body, err := v.Snapshot.Memo(key, func() ([]byte, error) {
		pb := &pageBuffer{header: http.Header{}, code: http.StatusOK}
		if err := s.offersPage(pb, r, v.Snapshot); err != nil {
			return nil, err
		}
		if pb.code != http.StatusOK {
			uncached = pb
			return nil, errUncached
		}
		return pb.buf.Bytes(), nil
	})
	switch {
	case uncached != nil:
		return uncached.writeTo(w)
	case err != nil:
		return err
	}
	return writePage(w, http.StatusOK, body)
}

// offersPage renders the offer browser of snap.
func (s *Server) offersPage(w http.ResponseWriter, r *http.Request, snap *rank.Snapshot) error {
	q := r.URL.Query()
	if err := checkParams(q, offersPageParams...); err != nil {
		return renderError(w, "offers", q, err)
	}
	st := offersPage{page: page{Title: "Offers", Nav: "offers", GeneratedAt: snap.GeneratedAt, Base: snap.Base, Query: q, Data: s.dataNote()},
		Card: q.Get("card"), Kind: q.Get("kind"), Available: q.Get("available"), Source: q.Get("source"), Sort: q.Get("sort"), Limit: q.Get("limit")}
	// The navigation may carry the ranking's several modes; the API takes one.
	if m := q.Get("mode"); !strings.Contains(m, ",") {
		st.Mode = m
	}
	// The card selector's counts are the lengths of the per-card indexes:
	// decoding every offer to count them cost 6 ms a page at 100k.
	counts := snap.CardCounts()
	cards := make([]string, 0, len(counts))
	for c := range counts {
		cards = append(cards, c)
	}
	slices.Sort(cards)
	if st.Card == "" && len(cards) > 0 {
		st.Card = cards[0]
	}
	if st.Limit == "" {
		st.Limit = "50"
	}
	for _, c := range cards {
		st.Cards = append(st.Cards, option{Value: c, Label: fmt.Sprintf("%s (%d)", c, counts[c]), Selected: c == st.Card})
	}
	st.Modes = options(st.Mode, append([]string{"", "any"}, modeChoices()[2:]...)...)
	st.Kinds = options(st.Kind, "", "offers and references", "offer", "offers", "reference", "reference prices")
	st.Avails = options(st.Available, "", "any", "yes", "in stock", "no", "out of stock", "unknown", "not stated")
	st.Limits = options(st.Limit, "25", "25", "50", "50", "100", "100")
	// The configured sources, as /sources lists them (without reading
	// every source's health and new GPU names for a selector).
	cfg := s.backend.Config()
	srcs := []string{"", "any"}
	for _, name := range cfg.SourceNames() {
		srcs = append(srcs, name, name)
	}
	st.Sources = options(st.Source, srcs...)
	st.Filters = filterFields(q)

	// The API's query: the page's parameters that are the API's, non-empty.
	api := url.Values{}
	for _, k := range slices.Concat(offerAPIParams, filterParams) {
		if val := strings.TrimSpace(q.Get(k)); val != "" {
			api.Set(k, val)
		}
	}
	api.Set("card", st.Card)
	api.Set("limit", st.Limit)
	if st.Mode == "" {
		api.Del("mode")
	}
	st.APILink = "/v1/offers?" + api.Encode()
	if err := r.Context().Err(); err != nil {
		return err // the client left while the page was being built
	}
	// /v1/offers' parser and query, without its JSON: the page renders
	// the answer's structs.
	resp, err := func() (*OffersResponse, error) {
		oq, err := ParseOffersQuery(api, snap, normalize.DefaultCatalog(), func(name string) bool { _, ok := cfg.Sources[name]; return ok })
		if err != nil {
			return nil, err
		}
		ar, _ := s.backend.(AvailabilityReader)
		return Offers(snap, oq, ar)
	}()
	if err != nil {
		// A bad filter is shown above the form that set it.
		pe, ok := err.(*pricewatch.Error)
		if !ok {
			return err
		}
		st.Error = pe.Message
		return render(w, "offers", statusOf(err), st)
	}
	st.From = 1
	if f := q.Get("from"); f != "" {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return renderError(w, "offers", q, pricewatch.Errorf(pricewatch.EInvalid, "from: a row number ≥ 1, got %q", f))
		}
		st.From = n
	}
	st.Total = resp.Total
	st.To = st.From + len(resp.Offers) - 1
	for i, o := range resp.Offers {
		st.Rows = append(st.Rows, newOfferRow(o, st.From+i))
	}
	link := func(kv ...string) string { return pageLink("/offers", q, append([]string{"card", st.Card}, kv...)...) }
	if resp.Next != "" {
		st.NextLink = link("cursor", resp.Next, "from", strconv.Itoa(st.To+1))
	}
	if q.Get("cursor") != "" {
		st.FirstLink = link("cursor", "", "from", "")
	}
	for _, c := range offerSorts {
		next, arrow := c.first, ""
		switch st.Sort {
		case c.key:
			next, arrow = "-"+c.key, "▲"
		case "-" + c.key:
			next, arrow = c.key, "▼"
		}
		if c.key == "price" && st.Sort == "" {
			next, arrow = "-price", "▲"
		}
		st.Columns = append(st.Columns, sortColumn{Key: c.key, Label: c.label, Link: link("sort", next, "cursor", "", "from", ""), Arrow: arrow, Numeric: true})
	}
	return render(w, "offers", http.StatusOK, st)
}
