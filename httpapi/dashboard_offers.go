package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/pricewatch/pricewatch"
)

// The offer browser (/offers) lists every offer of one card, a page at a
// time, through the same handler as GET /v1/offers: its filters, sort and
// cursor are that endpoint's parameters, so the page's address is the
// query and a filtered view is a link.

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

// offerRow is one offer as the browser shows it.
type offerRow struct {
	OfferStatus
	N int
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

func (s *Server) dashboardOffers(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	v, err := s.view()
	if err != nil {
		return renderError(w, "offers", q, err)
	}
	if err := checkParams(q, offersPageParams...); err != nil {
		return renderError(w, "offers", q, err)
	}
	snap := v.Snapshot
	st := offersPage{page: page{Title: "Offers", Nav: "offers", GeneratedAt: snap.GeneratedAt, Base: snap.Base, Query: q, Data: s.dataNote()},
		Card: q.Get("card"), Kind: q.Get("kind"), Available: q.Get("available"), Source: q.Get("source"), Sort: q.Get("sort"), Limit: q.Get("limit")}
	// The navigation may carry the ranking's several modes; the API takes one.
	if m := q.Get("mode"); !strings.Contains(m, ",") {
		st.Mode = m
	}
	counts := map[string]int{}
	for o := range snap.Offers() {
		if o.Card != "" {
			counts[o.Card]++
		}
	}
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
	srcs := []string{"", "any"}
	for _, src := range s.backend.Statuses() {
		srcs = append(srcs, src.Name, src.Name)
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
	rec := &bufferWriter{header: http.Header{}}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, st.APILink, nil)
	if err != nil {
		return fmt.Errorf("offer browser: %w", err)
	}
	if err := s.offers(rec, req); err != nil {
		// A bad filter is shown above the form that set it.
		pe, ok := err.(*pricewatch.Error)
		if !ok {
			return err
		}
		st.Error = pe.Message
		return render(w, "offers", statusOf(err), st)
	}
	var resp OffersResponse
	if err := json.Unmarshal(rec.Bytes(), &resp); err != nil {
		return fmt.Errorf("offer browser: read /v1/offers: %w", err)
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
		st.Rows = append(st.Rows, offerRow{OfferStatus: o, N: st.From + i})
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

// bufferWriter keeps what a handler answers, for a page built on an API
// handler's JSON.
type bufferWriter struct {
	bytes.Buffer
	header http.Header
}

func (b *bufferWriter) Header() http.Header { return b.header }
func (b *bufferWriter) WriteHeader(int)     {}
