// Package gpushare scrapes the machine market of 恒源云 gpushare.com
// (GET https://api.gpushare.com/app/api/market/machine/list, the store
// page's own endpoint), which needs a logged-in Bearer token (answered with
// HTTP 401 once it expires). Each online machine's "payg" SKU is one
// on-demand offer in CNY per GPU-hour.
//
// Per GPU: a machine lists gpuNum cards of which gpuUsed are rented, and
// the store rents single cards of it, so its SKU price is a card's price.
// The rentgpu index agrees: its 恒源云 RTX 3090 point is 0.76 CNY per
// GPU-hour, believable for one card and absurd (0.095) divided by eight.
//
// The scale is yuan: a public monitoring client of this endpoint takes the
// payg SKU's price as is and prints it as yuan per hour (fixtures/gpushare/
// PROVENANCE.md); the option price_scale (units per yuan, default 1) can
// change it should a live response show fen or li.
package gpushare

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

// TokenEnv carries a logged-in gpushare.com Bearer token.
const TokenEnv = "PRICEWATCH_GPUSHARE_TOKEN"

// Site is the store's origin, sent as Origin and Referer like the store page.
const Site = "https://www.gpushare.com"

// Defaults of the options.
const (
	DefaultPageSize   = 50
	DefaultMaxPages   = 20
	DefaultPriceScale = 1
)

// skuModes maps skuName to a billing mode; only "payg" has been seen.
var skuModes = map[string]pricewatch.Mode{"payg": pricewatch.ModeOnDemand}

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "gpushare",
		Description: "恒源云 gpushare.com machine market (app/api/market/machine/list)",
		Auth:        "logged-in Bearer token in " + TokenEnv + " (it expires: HTTP 401)",
		Yields:      "ondemand (skuName payg); CNY per GPU-hour (price as yuan, as a public client reads it; per card assumed)",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://api.gpushare.com/app/api/market/machine/list",
			Schedule:   "40 * * * *",
			StaleAfter: 150 * time.Minute,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return New() },
	})
}

// New returns a scraper with the default options.
func New() *Scraper {
	return &Scraper{PageSize: DefaultPageSize, MaxPages: DefaultMaxPages, PriceScale: DefaultPriceScale}
}

// Scraper is the gpushare source.
type Scraper struct {
	// PageSize is ps of the listing (50 in public use).
	PageSize int `yaml:"page_size"`
	// MaxPages caps the pages walked; a market with more fails the run.
	MaxPages int `yaml:"max_pages"`
	// PriceScale is how many price units make one yuan (1: price is yuan).
	PriceScale float64 `yaml:"price_scale"`
}

// Check disables the source without a token.
func (s *Scraper) Check(env *scrapers.Env) error {
	if env.Secret(TokenEnv) == "" {
		return &scrapers.Disabled{Reason: "needs " + TokenEnv +
			" (a logged-in gpushare.com Bearer token; it expires)"}
	}
	return nil
}

// PageURL is the listing URL of page pn: the store's query (all models,
// cheapest first) on base, keeping any query base has.
func PageURL(base string, pn, ps int) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	q := u.Query()
	for k, v := range map[string]string{"models": "-1", "gpuName": "", "priceOrder": "asc"} {
		if _, ok := q[k]; !ok {
			q.Set(k, v)
		}
	}
	q.Set("pn", strconv.Itoa(pn))
	q.Set("ps", strconv.Itoa(ps))
	u.RawQuery = q.Encode()
	return u.String()
}

// ErrTokenExpired is wrapped when gpushare answers 401/403.
var ErrTokenExpired = errors.New("gpushare token in " + TokenEnv + " expired or refused")

// Scrape walks the listing pages until pn*ps reaches data.total.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	token := env.Secret(TokenEnv)
	if token == "" {
		return scrapers.Result{}, s.Check(env)
	}
	if !(s.PriceScale > 0) || math.IsInf(s.PriceScale, 0) {
		return scrapers.Result{}, fmt.Errorf("gpushare: price_scale must be a positive number of price units per yuan, not %v", s.PriceScale)
	}
	ps := s.PageSize
	if ps <= 0 {
		ps = DefaultPageSize
	}
	maxPages := s.MaxPages
	if maxPages <= 0 {
		maxPages = DefaultMaxPages
	}
	c, err := env.NewCollector(ctx)
	if err != nil {
		return scrapers.Result{}, err
	}
	hdr := http.Header{
		"Accept":        {"application/json"},
		"Authorization": {"Bearer " + strings.TrimPrefix(token, "Bearer ")},
		"Origin":        {Site},
		"Referer":       {Site + "/store"},
	}
	var out []pricewatch.Observation
	for pn := 1; ; pn++ {
		if pn > maxPages {
			return scrapers.Result{}, fmt.Errorf("gpushare: more than max_pages %d pages of machines", maxPages)
		}
		resp, err := env.Fetch(ctx, c, scrapers.Request{URL: PageURL(env.URL(), pn, ps), Header: hdr})
		if err != nil {
			var he *scrapers.HTTPError
			if errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden) {
				err = fmt.Errorf("%w: %w", ErrTokenExpired, err)
			}
			return scrapers.Result{}, fmt.Errorf("gpushare page %d: %w", pn, err)
		}
		p, err := ParsePage(resp.Body, s.PriceScale, env.URL())
		if err != nil {
			return scrapers.Result{}, fmt.Errorf("gpushare page %d: %w", pn, err)
		}
		out = append(out, p.Observations...)
		env.AddOffers(len(p.Observations))
		if p.Machines == 0 || pn*ps >= p.Total {
			break
		}
	}
	if len(out) == 0 {
		return scrapers.Result{}, fmt.Errorf("gpushare: %w", scrapers.ErrNothingParsed)
	}
	return scrapers.Result{Observations: out}, nil
}

type machine struct {
	ID          scrapers.ID     `json:"id"`
	MachineName string          `json:"machineName"`
	IsOnline    *bool           `json:"isOnline"`
	GPUNum      scrapers.Number `json:"gpuNum"`
	GPUUsed     scrapers.Number `json:"gpuUsed"` // of gpuNum, rented now
	BaseInfo    *struct {
		GPUName string `json:"gpuName"`
	} `json:"baseInfo"`
	SKUList []struct {
		SKUName string          `json:"skuName"`
		Price   scrapers.Number `json:"price"`
	} `json:"skuList"`
}

type response struct {
	Code json.RawMessage `json:"code"`
	Msg  string          `json:"msg"`
	Data *struct {
		List  *[]machine `json:"list"`
		Total int        `json:"total"`
	} `json:"data"`
}

// Page is one parsed page of the listing.
type Page struct {
	Observations []pricewatch.Observation
	Machines     int // listed on the page, priced or not
	Total        int
}

// ParsePage parses one page of the machine list; scale is the number of
// price units per yuan. Offline machines are skipped (not rentable); an
// empty page is valid; a page whose machines yield no price is a layout
// change.
func ParsePage(body []byte, scale float64, url string) (Page, error) {
	var r response
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return Page{}, err
	}
	if r.Data == nil {
		if len(r.Code) > 0 || r.Msg != "" {
			return Page{}, fmt.Errorf("gpushare error: code %s: %s", r.Code, r.Msg)
		}
		return Page{}, fmt.Errorf("%w: no data", scrapers.ErrNothingParsed)
	}
	if r.Data.List == nil {
		return Page{}, fmt.Errorf("%w: no data.list", scrapers.ErrNothingParsed)
	}
	p := Page{Machines: len(*r.Data.List), Total: r.Data.Total}
	online := 0
	for _, m := range *r.Data.List {
		if m.IsOnline != nil && !*m.IsOnline {
			continue
		}
		online++
		if m.ID == "" || m.BaseInfo == nil || strings.TrimSpace(m.BaseInfo.GPUName) == "" {
			continue
		}
		for _, sku := range m.SKUList {
			mode, ok := skuModes[sku.SKUName]
			if !ok {
				continue // day/week/month SKUs were never observed: their units are unknown
			}
			v, ok := sku.Price.Get()
			price := v / scale
			if !ok || !(price > 0) || math.IsInf(price, 0) {
				continue
			}
			o := pricewatch.Observation{
				Source: "gpushare", OfferID: string(m.ID) + "/" + sku.SKUName, GPUName: strings.TrimSpace(m.BaseInfo.GPUName),
				Price: price, Currency: "CNY", Unit: pricewatch.PerHour, PerGPU: true, Mode: mode, URL: url,
			}
			if n, ok := m.GPUNum.Get(); ok && n > 0 && n == math.Trunc(n) && n < 1e6 {
				o.GPUCount = int(n)
			}
			// The store rents any number of the machine's free cards
			// (gpuNum − gpuUsed) at the card price; a full machine has
			// nothing to rent now, one without a count at least one card.
			scrapers.FreeGPUs(&o, o.GPUCount, freeGPUs(m, o.GPUCount))
			p.Observations = append(p.Observations, o)
		}
	}
	if online > 0 && len(p.Observations) == 0 {
		return p, fmt.Errorf("%w: %d online machines listed, none with a gpuName and a payg price", scrapers.ErrNothingParsed, online)
	}
	return p, nil
}

// freeGPUs is how many of a machine's gpus cards are free now: gpus −
// gpuUsed; -1 (not stated) when gpuUsed is absent or the machine states
// no count.
func freeGPUs(m machine, gpus int) int {
	if gpus == 0 {
		return -1
	}
	used, ok := m.GPUUsed.Get()
	if !ok || used < 0 || used != math.Trunc(used) {
		return -1
	}
	return max(gpus-int(min(used, float64(gpus))), 0)
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
