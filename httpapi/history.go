package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/history"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// HistoryBackend is the optional part of a Backend that reads the stored
// price history (the pipeline is one).
type HistoryBackend interface {
	Store() *store.Store
	Profiles() ([]rank.Profile, error)
}

// now is the clock of the history endpoints (tests move it).
var now = func() time.Time { return time.Now().UTC() }

// HistoryQuery is a validated /v1/history request.
type HistoryQuery struct {
	BestQuery
	Source       string
	Since, Until time.Time
	Step         time.Duration
	// Before adds the state in force at Since as a first point, at the
	// time of the change that set it (the dashboard's chart starts there).
	Before bool
	// IncludeAPI adds the series of the cheapest API selling a serving
	// workload's model (include_api=true).
	IncludeAPI bool
}

// HistoryResponse is the /v1/history answer: the best of one card for a
// workload at every stored change time in the range, oldest first.
type HistoryResponse struct {
	Card     string            `json:"card"`
	Workload string            `json:"workload"`
	Currency string            `json:"currency"`
	Modes    []pricewatch.Mode `json:"modes"`
	Source   string            `json:"source,omitempty"`
	Since    time.Time         `json:"since"`
	Until    time.Time         `json:"until"`
	Step     string            `json:"step,omitempty"`
	Points   []history.Point   `json:"points"`
	// API is, with include_api=true for a serving workload an API sells,
	// that API's cost per million output tokens at the workload's mix at
	// each stored change of its price in the range (the first point is
	// the price in force at Since), and APIModel what it is.
	API      []APIPoint `json:"api,omitempty"`
	APIModel string     `json:"api_model,omitempty"`
	// Stored: answered from the stored best series (the header
	// X-Pricewatch-History says so; the body is the same either way).
	Stored bool `json:"-"`
}

// storedHistory answers from the stored best series; ok is false when it
// cannot answer the query exactly.
func storedHistory(ctx context.Context, hb HistoryBackend, q HistoryQuery, f history.Filter,
	convert func(float64, string) (float64, bool)) ([]history.Point, bool, error) {
	if f.MaxGPUs != 0 || f.AnyAvailability {
		return nil, false, nil
	}
	meta, points, err := hb.Store().BestSeries(ctx, q.Card, q.Workload, q.Until)
	if err != nil {
		return nil, false, err
	}
	in := history.StoredInput{Meta: meta, Points: points, Modes: q.Modes, Source: q.Source, Convert: convert,
		Since: q.Since, Until: q.Until, Step: q.Step, Before: q.Before}
	if !in.Serves(f) {
		return nil, false, nil
	}
	pts, ok := history.FromStored(in)
	return pts, ok, nil
}

// historyParams are the parameters of /v1/history.
var historyParams = []string{"card", "workload", "mode", "currency", "max_gpus", "available", "source", "since", "until", "step", "include_api"}

// APIPoint is an API's cost per million output tokens from a time on.
type APIPoint struct {
	At                   time.Time `json:"at"`
	CostPerMillionTokens float64   `json:"cost_per_million_tokens"`
}

// ParseHistoryQuery validates /v1/history parameters: the /v1/best ones
// (card required here) with their errors, plus source, since, until (an
// RFC 3339 time, or a span back from now such as 24h, 7d) and step (1h or
// 1d). The range is at most history.MaxRange and starts at most that far
// back.
func ParseHistoryQuery(q url.Values, snap *rank.Snapshot, sources map[string]bool, at time.Time) (HistoryQuery, error) {
	if err := checkParams(q, historyParams...); err != nil {
		return HistoryQuery{}, err
	}
	best := url.Values{}
	for _, k := range []string{"workload", "card", "mode", "currency", "max_gpus", "available"} {
		if v, ok := q[k]; ok {
			best[k] = v
		}
	}
	bq, err := ParseBestQuery(best, snap, normalize.DefaultCatalog())
	if err != nil {
		return HistoryQuery{}, err
	}
	hq := HistoryQuery{BestQuery: bq.canonical(), Source: q.Get("source")}
	switch v := q.Get("include_api"); v {
	case "", "false":
	case "true":
		hq.IncludeAPI = true
	default:
		return hq, pricewatch.Errorf(pricewatch.EInvalid, "include_api must be true or false, got %q", v)
	}
	if hq.Card == "" {
		return hq, pricewatch.Errorf(pricewatch.EInvalid, "parameter card is required (a canonical id such as A100-80GB-SXM, RTX-4090)")
	}
	if hq.Source != "" && !sources[hq.Source] {
		return hq, pricewatch.Errorf(pricewatch.EInvalid, "unknown source %q", hq.Source)
	}
	if hq.Since, hq.Until, err = parseRange(q, at, 7*24*time.Hour); err != nil {
		return hq, err
	}
	switch v := q.Get("step"); v {
	case "":
	case "1h":
		hq.Step = time.Hour
	case "1d":
		hq.Step = 24 * time.Hour
	default:
		return hq, pricewatch.Errorf(pricewatch.EInvalid, "step must be 1h or 1d, got %q", v)
	}
	return hq, nil
}

// parseRange reads since and until (default: def back from at, and at).
func parseRange(q url.Values, at time.Time, def time.Duration) (since, until time.Time, err error) {
	until = at
	if v := q.Get("until"); v != "" {
		if until, err = parseWhen("until", v, at); err != nil {
			return
		}
	}
	since = until.Add(-def)
	if v := q.Get("since"); v != "" {
		if since, err = parseWhen("since", v, at); err != nil {
			return
		}
	}
	switch {
	case !since.Before(until):
		err = pricewatch.Errorf(pricewatch.EInvalid, "since must be before until (got since %s, until %s)", since.Format(time.RFC3339), until.Format(time.RFC3339))
	case since.Before(at.Add(-history.MaxRange)):
		err = pricewatch.Errorf(pricewatch.EInvalid, "since: at most 31 days back (the change log keeps 30), got %s", since.Format(time.RFC3339))
	case until.Sub(since) > history.MaxRange:
		err = pricewatch.Errorf(pricewatch.EInvalid, "since: the range is at most %s (31 days), got %s", "744h", until.Sub(since).Round(time.Second))
	}
	return
}

// parseWhen reads an RFC 3339 time or a span back from at: 90m, 24h, 7d.
func parseWhen(field, v string, at time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UTC(), nil
	}
	if d, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.Atoi(d); err == nil && n >= 0 && n <= 366 {
			return at.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	} else if d, err := time.ParseDuration(v); err == nil && d >= 0 && d <= 366*24*time.Hour {
		return at.Add(-d), nil
	}
	return time.Time{}, pricewatch.Errorf(pricewatch.EInvalid, "%s must be an RFC 3339 time (2026-11-29T09:00:00Z) or a span back from now (90m, 24h, 7d), got %q", field, v)
}

// History answers a validated query: from the stored best series where
// it answers the query exactly (history.StoredInput.Serves), else from the
// store's rows.
func History(ctx context.Context, snap *rank.Snapshot, hb HistoryBackend, q HistoryQuery) (*HistoryResponse, error) {
	f := history.Filter{Card: q.Card, Modes: q.Modes, Source: q.Source, MaxGPUs: q.MaxGPUs, AnyAvailability: q.AnyAvailability}
	if q.Currency != snap.Base && !snap.Rates.Has(q.Currency) {
		return nil, pricewatch.Errorf(pricewatch.EUnavailable, "no exchange rates yet to price in %s", q.Currency)
	}
	convert := func(v float64, cur string) (float64, bool) {
		x, err := snap.Rates.Convert(v, cur, q.Currency)
		return x, err == nil
	}
	pts, stored, err := storedHistory(ctx, hb, q, f, convert)
	if err != nil {
		return nil, err
	}
	if !stored {
		profiles, err := hb.Profiles()
		if err != nil {
			return nil, err
		}
		w, _ := snap.Workload(q.Workload)
		from, err := hb.Store().HistoryFrom()
		if err != nil {
			return nil, err
		}
		rows, terms, err := history.Load(ctx, hb.Store(), currentOf(snap, q.Card), f, q.Since)
		if err != nil {
			return nil, err
		}
		tps := history.BestProfiles(profiles, q.Workload)
		pts = history.Series(history.Input{
			Filter: f, Rows: rows, Terms: terms, Workload: &w, Catalog: normalize.DefaultCatalog(),
			Profile: func(card string) (rank.Profile, bool) { v, ok := tps[card]; return v, ok },
			Convert: convert,
			Since:   q.Since, Until: q.Until, Step: q.Step, Before: q.Before, From: from,
		})
	}
	if len(pts) > history.MaxPoints {
		return nil, pricewatch.Errorf(pricewatch.EInvalid, "step: %d change points in range, more than %d; ask with step=1h or step=1d, or a shorter range", len(pts), history.MaxPoints)
	}
	resp := &HistoryResponse{Card: q.Card, Workload: q.Workload, Currency: q.Currency, Modes: q.Modes, Source: q.Source,
		Since: q.Since, Until: q.Until, Points: pts, Stored: stored}
	switch q.Step {
	case time.Hour:
		resp.Step = "1h"
	case 24 * time.Hour:
		resp.Step = "1d"
	}
	if q.IncludeAPI {
		if err := apiSeries(hb, snap, q, resp); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// apiSeries fills a history answer's API series: the stored price changes
// of the cheapest API now selling the workload's model, priced at the
// workload's mix as the ranking prices it (rank.CheapestAPI over that one
// price), at most history.MaxPoints of them.
func apiSeries(hb HistoryBackend, snap *rank.Snapshot, q HistoryQuery, resp *HistoryResponse) error {
	w, ok := snap.Workload(q.Workload)
	if !ok {
		return nil
	}
	api, ok := snap.CheapestAPI(w, q.Currency)
	if !ok {
		return nil
	}
	resp.APIModel = api.Model + " via " + api.Provider
	rows, err := hb.Store().TokenHistory(api.Key, time.Unix(0, 0), 0)
	if err != nil {
		return err
	}
	var cur *pricewatch.TokenPrice
	for _, t := range snap.TokenPrices() {
		if t.Key == api.Key {
			cur = &t
			break
		}
	}
	if cur == nil {
		return nil
	}
	price := func(r store.TokenChange) (float64, bool) {
		t := *cur
		t.InputPerMillion, t.OutputPerMillion, t.Currency = r.InputPerMillion, r.OutputPerMillion, r.Currency
		a, ok := rank.CheapestAPI([]pricewatch.TokenPrice{t}, t.Preset, w.InputTokens, w.OutputTokens, w.CachedPromptShare, snap.Rates, q.Currency)
		return a.CostPerMillionTokens, ok
	}
	var before *APIPoint
	for _, r := range rows {
		if r.Event == "vanished" {
			continue
		}
		c, ok := price(r)
		if !ok {
			continue
		}
		p := APIPoint{At: r.At, CostPerMillionTokens: c}
		switch {
		case r.At.Before(q.Since):
			before = &p
		case !r.At.After(q.Until):
			resp.API = append(resp.API, p)
		}
	}
	if before != nil {
		before.At = q.Since
		resp.API = append([]APIPoint{*before}, resp.API...)
	}
	if len(resp.API) > history.MaxPoints {
		resp.API = resp.API[len(resp.API)-history.MaxPoints:]
	}
	return nil
}

// currentOf is what a history of one card reads of the snapshot: that
// card's offers and, for an offer that has vanished, one current offer of
// its source from the per-source indexes — not every offer unpacked.
func currentOf(snap *rank.Snapshot, card string) history.Current {
	all := max(snap.OfferCount(), 1)
	return history.Current{
		Offers: func(yield func(pricewatch.Offer) bool) {
			page, _, _ := snap.QueryOffers(rank.OfferQuery{Card: card, Limit: all})
			for _, o := range page {
				if !yield(o) {
					return
				}
			}
		},
		Sibling: func(source string, mode pricewatch.Mode) (pricewatch.Offer, bool) {
			for _, m := range []pricewatch.Mode{mode, ""} {
				if page, _, _ := snap.QueryOffers(rank.OfferQuery{Source: source, Mode: m, Limit: 1}); len(page) > 0 {
					return page[0], true
				}
			}
			return pricewatch.Offer{}, false
		},
	}
}

func (s *Server) historyBackend() (HistoryBackend, error) {
	hb, ok := s.backend.(HistoryBackend)
	if !ok {
		return nil, pricewatch.Errorf(pricewatch.ENotFound, "history is not available")
	}
	return hb, nil
}

func (s *Server) sourceSet() map[string]bool {
	out := map[string]bool{}
	for name := range s.backend.Config().Sources {
		out[name] = true
	}
	return out
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) error {
	v, err := s.view()
	if err != nil {
		return err
	}
	hb, err := s.historyBackend()
	if err != nil {
		return err
	}
	q, err := ParseHistoryQuery(r.URL.Query(), v.Snapshot, s.sourceSet(), now())
	if err != nil {
		return err
	}
	resp, err := History(r.Context(), v.Snapshot, hb, q)
	if err != nil {
		return err
	}
	w.Header().Set("X-Pricewatch-History", map[bool]string{true: "stored", false: "computed"}[resp.Stored])
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// OfferHistoryResponse is the /v1/offers/{key}/history answer: every
// stored price and availability change of one offer in the range, oldest
// first, and the offer as it stands now (nil when it has vanished).
type OfferHistoryResponse struct {
	Key     string             `json:"key"`
	Current *pricewatch.Offer  `json:"current"`
	Since   time.Time          `json:"since"`
	Until   time.Time          `json:"until"`
	Total   int                `json:"total"`
	Rows    []store.HistoryRow `json:"rows"`
}

// offerHistoryLimit bounds the rows of one answer (the newest are kept).
const offerHistoryLimit = 10000

func (s *Server) offerRoute(w http.ResponseWriter, r *http.Request) error {
	rest := r.PathValue("rest")
	key, ok := strings.CutSuffix(rest, "/history")
	if !ok || key == "" {
		return pricewatch.Errorf(pricewatch.ENotFound, "no such endpoint %s (an offer's changes are at /v1/offers/{key}/history)", r.URL.Path)
	}
	v, err := s.view()
	if err != nil {
		return err
	}
	hb, err := s.historyBackend()
	if err != nil {
		return err
	}
	q := r.URL.Query()
	if err := checkParams(q, "since", "until", "limit"); err != nil {
		return err
	}
	at := now()
	since, until := time.Time{}, at
	if q.Get("since") != "" || q.Get("until") != "" {
		// An explicit range is bounded like /v1/history's.
		if since, until, err = parseRange(q, at, history.MaxRange); err != nil {
			return err
		}
	}
	limit := 1000
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > offerHistoryLimit {
			return pricewatch.Errorf(pricewatch.EInvalid, "limit must be an integer within 1..%d, got %q", offerHistoryLimit, l)
		}
		limit = n
	}
	rows, err := hb.Store().History(key)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return pricewatch.Errorf(pricewatch.ENotFound, "no offer %q in the history (keys are source/offer/region/mode, as /v1/offers lists them; escape the path)", key)
	}
	resp := OfferHistoryResponse{Key: key, Since: since, Until: until, Rows: []store.HistoryRow{}}
	for _, row := range rows {
		if !row.At.Before(since) && !row.At.After(until) {
			resp.Rows = append(resp.Rows, row)
		}
	}
	resp.Total = len(resp.Rows)
	if len(resp.Rows) > limit {
		resp.Rows = resp.Rows[len(resp.Rows)-limit:]
	}
	for o := range v.Snapshot.Offers() {
		if o.Key == key {
			o := o
			resp.Current = &o
			break
		}
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// compile-time check: the pipeline reads history.
var _ HistoryBackend = (*pipeline.Pipeline)(nil)

// HistoryPoint is one point of a /v1/history answer.
type HistoryPoint = history.Point
