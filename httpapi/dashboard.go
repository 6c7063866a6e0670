package httpapi

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// The dashboard is server-rendered HTML (html/template) from embedded
// assets: no build step, no CDN, charts drawn as SVG on the server. Every
// table works without JavaScript; every page's state is its query string,
// so a link is the view. app.js only submits selectors on change and
// renders the plan form's answer from POST /v1/plan in place.

//go:embed web
var webFS embed.FS

var pages = map[string]*template.Template{}

func init() {
	funcs := template.FuncMap{
		"money":     money,
		"options":   optionsHTML,
		"filters":   filtersHTML,
		"sortHeads": sortHeadsHTML,
		"num":       wholeNumber,
		"gb":        func(v float64) string { return fmt.Sprintf("%.1f", v) },
		"ago":       ago,
		"when":      func(t *time.Time) string { return whenText(t) },
		"unit":      unitText,
		"billed":    billedText,
		"months":    monthsText,
		"service":   serviceText,
		"lower":     strings.ToLower,
		"place":     place,
		"pct":       func(v float64) string { return fmt.Sprintf("%.0f%%", v*100) },
		"join":      strings.Join,
		"inc":       func(i int) int { return i + 1 },
		// opt prints a detail an offer may not state (0: not stated).
		"opt": quantityText,
		"hidden": func(m map[string]float64) float64 {
			t := 0.0
			for _, v := range m {
				t += v
			}
			return t
		},
	}
	for _, name := range []string{"best", "sources", "plan", "alerts", "error", "api", "offers"} {
		pages[name] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(webFS, "web/layout.html", "web/"+name+".html"))
	}
}

// quantityText writes an offer's stated vCPUs, RAM or disk for people:
// whole from 10 up, else one decimal at most; "—" when not stated (0). A
// per-GPU share of a machine (56.888888888888886 vCPUs, 2975.19046… GB)
// reads 57 and 2975, as the CLI's offers table writes it.
func quantityText(v float64) string {
	switch {
	case v <= 0 || math.IsNaN(v) || math.IsInf(v, 0):
		return "—"
	case v >= 10:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// page is what every page's layout shows.
type page struct {
	Title       string
	Nav         string
	GeneratedAt time.Time
	Base        string
	Error       string
	// Query is the page's state, the links of the navigation keep it.
	Query url.Values
	// Data dates the data (a banner in demo mode, the rates' date).
	Data dataNote
}

func (p page) NavLink(to string) string {
	q := url.Values{}
	keys := []string{"workload", "currency", "mode", "max_gpus"}
	// The ranking and the offer browser take the same filters: going from
	// one to the other keeps them.
	if to == "/" || to == "/offers" {
		keys = append(keys, filterParams...)
	}
	for _, k := range keys {
		if v := p.Query.Get(k); v != "" {
			q.Set(k, v)
		}
	}
	if len(q) == 0 {
		return to
	}
	return to + "?" + q.Encode()
}

func render(w http.ResponseWriter, name string, code int, data any) error {
	b := renderBufs.Get().(*bytes.Buffer)
	defer func() {
		if b.Cap() <= 4<<20 {
			b.Reset()
			renderBufs.Put(b)
		}
	}()
	if err := pages[name].ExecuteTemplate(b, "layout.html", data); err != nil {
		return err
	}
	return writePage(w, code, b.Bytes())
}

// renderBufs are the buffers pages render into before they are written
// (a page is ~100 KB: grown anew for every page, it was a quarter of what
// the dashboard allocated).
var renderBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writePage writes a rendered page with the headers every page has.
func writePage(w http.ResponseWriter, code int, body []byte) error {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	w.Write(body)
	return nil
}

// renderError shows a page's error (a bad parameter, no ranking yet) as
// HTML with the status the API would give.
func renderError(w http.ResponseWriter, nav string, q url.Values, err error) error {
	var pe *pricewatch.Error
	msg := "internal error"
	if e, ok := err.(*pricewatch.Error); ok {
		pe = e
	}
	if pe != nil {
		msg = pe.Message
	}
	return render(w, "error", statusOf(err), page{Title: "pricewatch", Nav: nav, Error: msg, Query: q})
}

func (s *Server) dashboardRoutes() {
	s.handle("/sources", http.MethodGet, s.dashboardSources)
	s.handle("/plan", http.MethodGet, s.dashboardPlan)
	s.handle("/alerts", http.MethodGet, s.dashboardAlerts)
	s.handle("/offers", http.MethodGet, s.dashboardOffers)
	s.handle("/api", http.MethodGet, s.apiReference)
	static, _ := fs.Sub(webFS, "web/static")
	s.handle("/static/{file}", http.MethodGet, func(w http.ResponseWriter, r *http.Request) error {
		name := path.Base(r.PathValue("file"))
		b, err := fs.ReadFile(static, name)
		if err != nil {
			return pricewatch.Errorf(pricewatch.ENotFound, "no such file %s", name)
		}
		switch path.Ext(name) {
		case ".css":
			w.Header().Set("Content-Type", "text/css; charset=utf-8")
		case ".js":
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		}
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Write(b)
		return nil
	})
}

// chartView is the history of one card.
type chartView struct {
	Card, Range, Note string
	Points            int
	Cost, Price       template.HTML
	Ranges            []option
	RangeLinks        map[string]string
}

type bestPage struct {
	page
	Workload, Mode, Currency, MaxGPUs, Sort, Order, Range, Card, Available string
	Workloads, Modes, Currencies, GPUs, Avail                              []option
	Columns                                                                []sortColumn
	// RowsHTML is the table's body, made by bestRowsHTML.
	RowsHTML template.HTML
	Chart    *chartView
	Stale    int
	Filters  []filterField
}

var dashboardParams = slices.Concat([]string{"workload", "mode", "currency", "max_gpus", "available", "sort", "order", "card", "range"}, filterParams)

// dashboardBest serves the ranking page from the snapshot's answer cache
// when the same page was rendered this minute: the page is a function of
// the snapshot, the query, the stale sources and the clock ("1m ago", the
// chart's range), so a minute-old copy is what a reload would show. Only
// a 200 page is kept; a page for a bad parameter is rendered every time.
func (s *Server) dashboardBest(w http.ResponseWriter, r *http.Request) error {
	v, err := s.view()
	if err != nil {
		return renderError(w, "best", r.URL.Query(), err)
	}
	stale := 0
	for _, src := range s.backend.Statuses() {
		if src.Status == StatusStale {
			stale++
		}
	}
	key := fmt.Sprintf("dashboard|%s|%d|%d", r.URL.RawQuery, stale, now().Unix()/60)
	var uncached *pageBuffer
	body, err := v.Snapshot.Memo(key, func() ([]byte, error) {
		pb := &pageBuffer{header: http.Header{}, code: http.StatusOK}
		if err := s.renderBest(pb, r, v.Snapshot, stale); err != nil {
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

// errUncached marks a page the cache must not keep (it was written aside).
var errUncached = errors.New("page not cached")

// pageBuffer is a page rendered aside, to be cached or written.
type pageBuffer struct {
	header http.Header
	code   int
	buf    bytes.Buffer
}

func (p *pageBuffer) Header() http.Header { return p.header }
func (p *pageBuffer) Write(b []byte) (int, error) {
	if p.buf.Len() == 0 {
		p.buf.Grow(len(b)) // a page comes in one write: one allocation of its size
	}
	return p.buf.Write(b)
}
func (p *pageBuffer) WriteHeader(code int) { p.code = code }

func (p *pageBuffer) writeTo(w http.ResponseWriter) error {
	for k, v := range p.header {
		w.Header()[k] = v
	}
	w.WriteHeader(p.code)
	_, err := w.Write(p.buf.Bytes())
	return err
}

func (s *Server) renderBest(w http.ResponseWriter, r *http.Request, snap *rank.Snapshot, stale int) error {
	q := r.URL.Query()
	var err error
	if err := checkParams(q, dashboardParams...); err != nil {
		return renderError(w, "best", q, err)
	}
	st := bestPage{page: page{Title: "Best option per card", Nav: "best", GeneratedAt: snap.GeneratedAt, Base: snap.Base, Query: q, Data: s.dataNote()},
		Workload: q.Get("workload"), Mode: q.Get("mode"), Currency: strings.ToUpper(q.Get("currency")), MaxGPUs: q.Get("max_gpus"),
		Sort: q.Get("sort"), Order: q.Get("order"), Range: q.Get("range"), Card: q.Get("card"), Available: q.Get("available")}
	if st.Workload == "" {
		st.Workload = "lora-7b"
		if _, ok := snap.Workload(st.Workload); !ok && len(snap.WorkloadNames()) > 0 {
			st.Workload = snap.WorkloadNames()[0]
		}
	}
	if st.Currency == "" {
		st.Currency = snap.Base
	}
	bq := url.Values{"workload": {st.Workload}, "currency": {st.Currency}}
	for k, val := range map[string]string{"mode": st.Mode, "max_gpus": st.MaxGPUs, "available": st.Available} {
		if val != "" {
			bq.Set(k, val)
		}
	}
	// The filters go to /v1/best's parser as given; an empty input is none.
	offersQ := url.Values{}
	for _, k := range filterParams {
		if val := strings.TrimSpace(q.Get(k)); val != "" {
			bq.Set(k, val)
			offersQ.Set(k, val)
		}
	}
	st.Filters = filterFields(q)
	for _, n := range snap.WorkloadNames() {
		st.Workloads = append(st.Workloads, option{Value: n, Label: n, Selected: n == st.Workload})
	}
	st.Modes = options(st.Mode, modeChoices()...)
	st.Currencies = options(st.Currency, "USD", "USD", "CNY", "CNY", "EUR", "EUR")
	st.GPUs = options(st.MaxGPUs, "", "any", "1", "1", "2", "2", "4", "4", "8", "8")
	st.Avail = options(st.Available, "", "not out of stock", "any", "any, out of stock included")
	query, err := ParseBestQuery(bq, snap, normalize.DefaultCatalog())
	if pe, ok := err.(*pricewatch.Error); ok && pe.Code == pricewatch.EInvalid {
		// A bad selection or filter is shown above the form that set it.
		st.Error = pe.Message
		return render(w, "best", statusOf(err), st)
	}
	if err != nil {
		return renderError(w, "best", q, err)
	}
	if !slices.Contains([]string{"", "cost", "price", "unit", "tps", "card", "source"}, st.Sort) {
		return renderError(w, "best", q, pricewatch.Errorf(pricewatch.EInvalid, "sort must be cost, price, unit, tps, card or source, got %q", st.Sort))
	}
	if st.Sort == "" {
		st.Sort = "cost"
	}
	if st.Order != "" && st.Order != "asc" && st.Order != "desc" {
		return renderError(w, "best", q, pricewatch.Errorf(pricewatch.EInvalid, "order must be asc or desc, got %q", st.Order))
	}
	if st.Order == "" {
		st.Order = "asc"
	}
	if st.Range == "" {
		st.Range = "7d"
	}
	spans := map[string]time.Duration{"24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour}
	span, ok := spans[st.Range]
	if !ok {
		return renderError(w, "best", q, pricewatch.Errorf(pricewatch.EInvalid, "range must be 24h, 7d or 30d, got %q", st.Range))
	}
	// The ranking's rows are a function of the snapshot and the query,
	// not of the clock: made once per snapshot and query, they are read
	// again by the first load of each later minute (the page around them
	// shows the time and the chart's window, so it is made each minute).
	// The cached value is the first card, a NUL, then the rows' HTML.
	var rowsErr error
	cached, _ := snap.Memo("dashboard-rows|"+r.URL.RawQuery, func() ([]byte, error) {
		resp, err := Best(snap, query.canonical())
		if err != nil {
			rowsErr = err
			return nil, err
		}
		var rows []bestRow
		cards := resp.Cards
		key := func(c BestCard) (float64, string) {
			switch st.Sort {
			case "price":
				return c.PricePerGPUHour, ""
			case "unit":
				return c.UnitPricePerHour, ""
			case "tps":
				return c.TokensPerSecond, ""
			case "card":
				return 0, c.Card
			case "source":
				return 0, c.Source + "\x00" + c.Card
			}
			return c.CostPerMillionTokens, ""
		}
		slices.SortStableFunc(cards, func(a, b BestCard) int {
			na, sa := key(a)
			nb, sb := key(b)
			c := strings.Compare(sa, sb)
			if na < nb {
				c = -1
			} else if na > nb {
				c = 1
			}
			if st.Order == "desc" {
				c = -c
			}
			return c
		})
		chartLink, offersLink := cardLinks("/", q), cardLinks("/offers", offersQ)
		for i, c := range cards {
			rows = append(rows, bestRow{Rank: i + 1, Card: c.Card, ChartLink: chartLink(c.Card) + "#history",
				OffersLink: offersLink(c.Card), Unit: unitText(c.RentUnit, c.GPUs, c.GPUsUsed, c.GPUCounts),
				Cost: money(c.CostPerMillionTokens, st.Currency), UnitPrice: money(c.UnitPricePerHour, st.Currency),
				Price: money(c.PricePerGPUHour, st.Currency), TokensPerSecond: wholeNumber(c.TokensPerSecond),
				PerGPU: wholeNumber(c.TokensPerSecondPerGPU), Source: c.Source, Provider: c.Provider,
				Origin: string(c.ThroughputOrigin), Precision: c.Precision, Mode: c.Mode, Bid: c.Bid,
				Region: place(c.Region), OfferID: c.OfferID, Available: c.Available, Stock: c.Stock})
		}
		first := ""
		if len(rows) > 0 {
			first = rows[0].Card
		}
		return []byte(first + "\x00" + string(bestRowsHTML(rows))), nil
	})
	if rowsErr != nil {
		return renderError(w, "best", q, rowsErr)
	}
	var firstCard, rowsHTML string
	if len(cached) > 0 {
		// The memo's bytes are never modified: a view, not a 50 KB copy.
		firstCard, rowsHTML, _ = strings.Cut(unsafe.String(&cached[0], len(cached)), "\x00")
	}
	st.RowsHTML = template.HTML(rowsHTML)
	link := func(kv ...string) string { return pageLink("/", q, kv...) }
	for _, col := range []struct {
		key, label string
		numeric    bool
	}{{"card", "Card", false}, {"cost", "Cost / M tokens", true}, {"unit", "Unit price / h", true}, {"price", "Price / GPU-h", true},
		{"tps", "Tokens/s", true}, {"source", "Source", false}} {
		// A first click sorts throughput highest first, the rest lowest
		// (cheapest, A to Z) first; a second click reverses.
		first, second := "asc", "desc"
		if col.key == "tps" {
			first, second = second, first
		}
		order, arrow := first, ""
		if st.Sort == col.key {
			if st.Order == "asc" {
				arrow = "▲"
			} else {
				arrow = "▼"
			}
			if st.Order == first {
				order = second
			}
		}
		st.Columns = append(st.Columns, sortColumn{Key: col.key, Label: col.label, Link: link("sort", col.key, "order", order), Arrow: arrow, Numeric: col.numeric})
	}

	// The history chart of one card (the first row's unless asked).
	if st.Card == "" && firstCard != "" {
		st.Card = firstCard
	}
	if st.Card != "" {
		st.Chart, err = s.chart(r.Context(), snap, query.canonical(), st.Card, st.Range, span, link)
		if err != nil {
			return renderError(w, "best", q, err)
		}
	}
	st.Stale = stale
	return render(w, "best", http.StatusOK, st)
}

// chart draws a card's best cost per million tokens and lowest price per
// GPU-hour over the range from the stored changes.
func (s *Server) chart(ctx context.Context, snap *rank.Snapshot, bq BestQuery, card, rng string, span time.Duration, link func(...string) string) (*chartView, error) {
	cv := &chartView{Card: card, Range: rng, RangeLinks: map[string]string{}}
	for _, r := range []string{"24h", "7d", "30d"} {
		cv.Ranges = append(cv.Ranges, option{Value: r, Label: r, Selected: r == rng})
		cv.RangeLinks[r] = link("range", r, "card", card) + "#history"
	}
	hb, ok := s.backend.(HistoryBackend)
	if !ok {
		cv.Note = "history is not available"
		return cv, nil
	}
	at := now()
	bq.Card = card
	hq := HistoryQuery{BestQuery: bq, Since: at.Add(-span), Until: at, Before: true}
	if span > 24*time.Hour {
		hq.Step = time.Hour
	}
	resp, err := History(ctx, snap, hb, hq)
	if err != nil {
		return nil, err
	}
	var cost, price []chartPoint
	for _, p := range resp.Points {
		carried := p.At.Before(hq.Since)
		if !carried {
			cv.Points++
		}
		if p.CostPerMillionTokens != nil {
			cost = append(cost, chartPoint{At: p.At, Value: *p.CostPerMillionTokens, Carried: carried,
				Label: alerts.Money(*p.CostPerMillionTokens, bq.Currency) + " per M tokens (" + p.Key + ")"})
		}
		if p.PricePerGPUHour != nil {
			price = append(price, chartPoint{At: p.At, Value: *p.PricePerGPUHour, Carried: carried,
				Label: alerts.Money(*p.PricePerGPUHour, bq.Currency) + " per GPU-hour (" + p.PriceKey + ")"})
		}
	}
	cv.Cost = svgStepChart("Best cost per million tokens, "+card+" ("+bq.Workload+")", bq.Currency+"/Mtok", cost, hq.Since, hq.Until)
	cv.Price = svgStepChart("Lowest price per GPU-hour, "+card, bq.Currency+"/GPU-h", price, hq.Since, hq.Until)
	if hq.Step > 0 {
		cv.Note = "one point per hour with a stored change (the lowest in that hour)"
	} else {
		cv.Note = "one point per stored change"
	}
	return cv, nil
}

type sourcesPage struct {
	page
	Sources []pipeline.SourceStatus
	Stale   int
	Failing int
	// Norms are the provider- and offer-level measurements checked
	// against their card's norm, flagged ones first.
	Norms []rank.NormCheck
	// Fixtures (demo mode) is each source's fixture: capture kind and date.
	Fixtures map[string]SourceData
	// NewGPUs are the sources' new GPU names (alerts.NewName), oldest first.
	NewGPUs []newGPURow
}

// newGPURow is a GPU name a source reported after its first run that no
// alias maps: posted once, listed until the catalog maps it.
type newGPURow struct {
	Source    string
	Name      string
	Offers    int
	FirstSeen *time.Time
}

func (s *Server) dashboardSources(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if err := checkParams(q, "workload", "currency", "mode", "max_gpus"); err != nil {
		return renderError(w, "sources", q, err)
	}
	st := sourcesPage{page: page{Title: "Source health", Nav: "sources", Query: q}, Sources: s.backend.Statuses()}
	if v := s.backend.View(); v != nil && v.Snapshot != nil {
		st.GeneratedAt = v.Snapshot.GeneratedAt
	}
	st.Data = s.dataNote()
	if d := s.demo.Load(); d != nil {
		st.Fixtures = d.Sources
	}
	if wr, err := s.writer(); err == nil {
		st.Norms = slices.Clone(wr.NormChecks())
		slices.SortStableFunc(st.Norms, func(a, b rank.NormCheck) int {
			switch {
			case a.BelowNorm == b.BelowNorm:
				return 0
			case a.BelowNorm:
				return -1
			}
			return 1
		})
	}
	for _, src := range st.Sources {
		switch src.Status {
		case StatusStale:
			st.Stale++
		case StatusFailing:
			st.Failing++
		}
		for _, n := range src.NewGPUs {
			st.NewGPUs = append(st.NewGPUs, newGPURow{Source: src.Name, Name: n.Name, Offers: n.Offers, FirstSeen: &n.FirstSeen})
		}
	}
	slices.SortStableFunc(st.NewGPUs, func(a, b newGPURow) int { return a.FirstSeen.Compare(*b.FirstSeen) })
	return render(w, "sources", http.StatusOK, st)
}

type alertsPage struct {
	page
	Outbox      store.OutboxPage
	Silences    []store.Silence
	HasSilences bool
	WritesOn    bool
}

func (s *Server) dashboardAlerts(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if err := checkParams(q, "workload", "currency", "mode", "max_gpus"); err != nil {
		return renderError(w, "alerts", q, err)
	}
	st := alertsPage{page: page{Title: "Alerts", Nav: "alerts", Query: q, Data: s.dataNote()}, WritesOn: s.backend.Config().Server.APIToken != ""}
	if v := s.backend.View(); v != nil && v.Snapshot != nil {
		st.GeneratedAt = v.Snapshot.GeneratedAt
	}
	var err error
	if st.Outbox, err = s.backend.Outbox("", 50); err != nil {
		return err
	}
	if sl, ok := s.backend.(Silencer); ok {
		st.HasSilences = true
		if st.Silences, err = sl.Silences(); err != nil {
			return err
		}
	}
	return render(w, "alerts", http.StatusOK, st)
}
