// Package matpool scrapes the machine market of 矩池云 matpool.com
// (GET https://matpool.com/api/machines, the web console's own endpoint),
// which needs a logged-in session token. Each listed machine is one
// on-demand offer: hardware.priceMillicent per hour for one rental unit
// (hardware.gpu.gpuIds GPUs), in CNY.
//
// priceMillicent is 100000 units per yuan, per hour per rental unit (份):
// a public matpool client divides hardware.(discount)PriceMillicent by
// 100000 for "元/小时/份" and says its tests cross-checked that against the
// web console's quotes (github quziang/matpool-gpu
// scripts/matpool_inventory.py and references/inventory.md @ 9fef9bf,
// 2026-09-07); the one worked example in public writing ("55000 =
// ¥0.55/h") agrees. The option price_scale (units per yuan) stays for a
// console that changes it.
package matpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// TokenEnv carries a logged-in matpool.com session token (sent as Bearer).
const TokenEnv = "PRICEWATCH_MATPOOL_TOKEN"

// UserIDEnv optionally carries the account's user id, which the web
// console sends as x-matpool-user-id beside the token.
const UserIDEnv = "PRICEWATCH_MATPOOL_USER_ID"

// Defaults of the options.
const (
	DefaultPriceScale = 100000 // priceMillicent units per yuan (quziang/matpool-gpu @ 9fef9bf)
	DefaultPerPage    = 50
	DefaultMaxPages   = 20
)

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "matpool",
		Description: "矩池云 matpool.com machine market (api/machines, GPU category)",
		Auth:        "logged-in session token in " + TokenEnv + " (optional " + UserIDEnv + ")",
		Yields:      "ondemand; CNY per hour per rental unit (hardware.priceMillicent / 100000)",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://matpool.com/api/machines",
			Schedule:   "10 * * * *",
			StaleAfter: 150 * time.Minute,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return New() },
	})
}

// New returns a scraper with the default options.
func New() *Scraper {
	return &Scraper{PriceScale: DefaultPriceScale, PerPage: DefaultPerPage, MaxPages: DefaultMaxPages}
}

// Scraper is the matpool source.
type Scraper struct {
	// PriceScale is how many priceMillicent units make one yuan
	// (100000, as matpool's web client data is read by a public client).
	PriceScale float64 `yaml:"price_scale"`
	// PerPage is per_page of the listing.
	PerPage int `yaml:"per_page"`
	// MaxPages caps the pages walked; a market with more fails the run.
	MaxPages int `yaml:"max_pages"`
}

// Check disables the source without a token.
func (s *Scraper) Check(env *scrapers.Env) error {
	if env.Secret(TokenEnv) == "" {
		return &scrapers.Disabled{Reason: "needs " + TokenEnv +
			" (a logged-in matpool.com session token)"}
	}
	return nil
}

// PageURL is the listing URL of a page: base plus page, per_page and
// machine_category=0 (GPU machines), keeping any query base has.
func PageURL(base string, page, perPage int) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	q := u.Query()
	q.Set("page", strconv.Itoa(page))
	q.Set("per_page", strconv.Itoa(perPage))
	if q.Get("machine_category") == "" {
		q.Set("machine_category", "0")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Scrape walks the machine pages.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	token := env.Secret(TokenEnv)
	if token == "" {
		return scrapers.Result{}, s.Check(env)
	}
	if !(s.PriceScale > 0) || math.IsInf(s.PriceScale, 0) {
		return scrapers.Result{}, fmt.Errorf("matpool: price_scale must be a positive number of priceMillicent units per yuan, not %v", s.PriceScale)
	}
	per := s.PerPage
	if per <= 0 {
		per = DefaultPerPage
	}
	maxPages := s.MaxPages
	if maxPages <= 0 {
		maxPages = DefaultMaxPages
	}
	c, err := env.NewCollector(ctx)
	if err != nil {
		return scrapers.Result{}, err
	}
	hdr := http.Header{"Accept": {"application/json"}, "Authorization": {"Bearer " + strings.TrimPrefix(token, "Bearer ")}}
	if id := env.Secret(UserIDEnv); id != "" {
		hdr.Set("x-matpool-user-id", id)
	}
	var out []pricewatch.Observation
	listed := 0
	for page := 1; ; page++ {
		if page > maxPages {
			return scrapers.Result{}, fmt.Errorf("matpool: more than max_pages %d pages of machines", maxPages)
		}
		u := PageURL(env.URL(), page, per)
		resp, err := env.Fetch(ctx, c, scrapers.Request{URL: u, Header: hdr})
		if err != nil {
			return scrapers.Result{}, fmt.Errorf("matpool page %d: %w", page, refused(err))
		}
		p, err := ParsePage(resp.Body, s.PriceScale, env.URL())
		if err != nil {
			return scrapers.Result{}, fmt.Errorf("matpool page %d: %w", page, err)
		}
		out = append(out, p.Observations...)
		env.AddOffers(len(p.Observations))
		listed += p.Machines
		if last(p, page, listed, per) {
			break
		}
	}
	if len(out) == 0 {
		return scrapers.Result{}, fmt.Errorf("matpool: %w", scrapers.ErrNothingParsed)
	}
	return scrapers.Result{Observations: out}, nil
}

// last reports whether page is the listing's last: an empty page, or the
// page count or total of the answer's pagination reached, or without
// pagination a short page.
func last(p Page, page, listed, per int) bool {
	switch {
	case p.Machines == 0:
		return true
	case p.NumPages > 0:
		return page >= p.NumPages
	case p.Total > 0:
		return listed >= p.Total
	default:
		return p.Machines < per
	}
}

// ErrTokenRefused is wrapped when matpool answers 401/403.
var ErrTokenRefused = errors.New("matpool refused the token in " + TokenEnv)

func refused(err error) error {
	var he *scrapers.HTTPError
	if errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden) {
		return fmt.Errorf("%w: %w", ErrTokenRefused, err)
	}
	return err
}

type machine struct {
	AgentID scrapers.ID `json:"agentId"`
	Domain  scrapers.ID `json:"domain"`
	GPU     *struct {
		Total int `json:"total"`
	} `json:"gpu"`
	Unit *struct {
		Total int `json:"total"`
	} `json:"unit"`
	Hardware *struct {
		GPU *struct {
			GPUIds  []json.RawMessage `json:"gpuIds"`
			GPUName string            `json:"gpuName"`
		} `json:"gpu"`
		PriceMillicent scrapers.Number `json:"priceMillicent"`
	} `json:"hardware"`
}

type pagination struct {
	Total    int `json:"total"`
	NumPages int `json:"numPages"`
}

type listing struct {
	Machines   *[]machine  `json:"machines"`
	Pagination *pagination `json:"pagination"`
}

type response struct {
	Code *scrapers.Number `json:"code"`
	Msg  string           `json:"msg"`
	listing
	// Some answers wrap the payload in data.
	Data *listing `json:"data"`
}

// Page is one parsed page of the machine listing.
type Page struct {
	Observations []pricewatch.Observation
	Machines     int // listed on the page, priced or not
	Total        int
	NumPages     int
}

// ParsePage parses one page of GET /api/machines; scale is the number of
// priceMillicent units per yuan. An empty page is valid (the end of the
// listing); a page whose machines yield no price is a layout change.
func ParsePage(body []byte, scale float64, url string) (Page, error) {
	var r response
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return Page{}, err
	}
	if r.Code != nil {
		if code, ok := r.Code.Get(); !ok || code != 0 {
			return Page{}, fmt.Errorf("matpool error: code %v: %s", r.Code.Raw(), r.Msg)
		}
	}
	l := r.listing
	if l.Machines == nil && r.Data != nil {
		l = *r.Data
	}
	if l.Machines == nil {
		return Page{}, fmt.Errorf("%w: no machines list", scrapers.ErrNothingParsed)
	}
	p := Page{Machines: len(*l.Machines)}
	if l.Pagination != nil {
		p.Total, p.NumPages = l.Pagination.Total, l.Pagination.NumPages
	}
	for _, m := range *l.Machines {
		if m.AgentID == "" || m.Hardware == nil || m.Hardware.GPU == nil || strings.TrimSpace(m.Hardware.GPU.GPUName) == "" {
			continue
		}
		units, ok := m.Hardware.PriceMillicent.Get()
		if !ok || !(units > 0) {
			continue
		}
		n := gpusPerUnit(m)
		if n <= 0 {
			continue // the GPU count of a rental unit is unknown: never guessed
		}
		price := units / scale
		if !(price > 0) || math.IsInf(price, 0) {
			continue
		}
		// The price is for one rental unit (the hardware: n GPUs), rented
		// whole. The web console can rent several units at once
		// (hardware_qty), but how many one rental may take is not
		// readable: gpu/unit "available" are often 0 on rentable machines
		// (reference SOURCES.md), so only the single unit is stated.
		o := pricewatch.Observation{
			Source: "matpool", OfferID: string(m.AgentID), GPUName: strings.TrimSpace(m.Hardware.GPU.GPUName),
			GPUCount: n, Price: price, Currency: "CNY", Unit: pricewatch.PerHour, PerGPU: false,
			Mode: pricewatch.ModeOnDemand, URL: url, RentUnit: pricewatch.RentFixed,
		}
		if m.Domain != "" {
			o.Region = "domain-" + string(m.Domain)
		}
		p.Observations = append(p.Observations, o)
	}
	if p.Machines > 0 && len(p.Observations) == 0 {
		return p, fmt.Errorf("%w: %d machines listed, none with a GPU name, GPU count and priceMillicent", scrapers.ErrNothingParsed, p.Machines)
	}
	return p, nil
}

// gpusPerUnit is the number of GPUs one rental unit (the priced hardware)
// has: its gpuIds, else the machine's GPUs over its units.
func gpusPerUnit(m machine) int {
	if n := len(m.Hardware.GPU.GPUIds); n > 0 {
		return n
	}
	if m.GPU != nil && m.Unit != nil && m.GPU.Total > 0 && m.Unit.Total > 0 && m.GPU.Total%m.Unit.Total == 0 {
		return m.GPU.Total / m.Unit.Total
	}
	return 0
}

// Parse parses one page at the default scale; it reports a page without
// offers as ErrNothingParsed (for the fuzz target and the error tests).
func Parse(body []byte) ([]pricewatch.Observation, error) {
	p, err := ParsePage(body, DefaultPriceScale, "")
	if err != nil {
		return nil, err
	}
	if len(p.Observations) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return p.Observations, nil
}
