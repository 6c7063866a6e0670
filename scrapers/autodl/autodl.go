// Package autodl scrapes AutoDL (www.autodl.com), a Chinese GPU rental
// market priced in CNY. It runs in one of two modes, chosen per run:
//
//   - Token mode, when PRICEWATCH_AUTODL_TOKEN is set: the market search
//     POST /api/v1/machine/search, one paged request set per charge type
//     (payg → ondemand, daily, weekly, monthly; yearly → reserved-1y when
//     configured). Every machine's per-GPU list price for the charge type
//     (machine_sku_info[].current_price, integers in li = 1/1000 CNY) becomes
//     one observation; OfferID is "<machine_id>/<charge_type>" and Region the
//     machine's region_sign.
//   - Token-less mode, without a token: the public list-price table that the
//     home page's JavaScript bundle carries (one entry per GPU model with an
//     `originalPrice` in yuan per GPU-hour). Only on-demand prices, no
//     machine or region detail; OfferID is "list/<gpu name>".
//
// The OfferID prefix therefore shows which mode produced an offer. A token
// that is set but refused fails the run: there is no silent fallback to the
// list prices (see Scraper.Scrape).
package autodl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// TokenEnv carries a logged-in AutoDL user token. It is sent bare in
// Authorization (AutoDL answers "登录超时" to a "Bearer " prefix).
const TokenEnv = "PRICEWATCH_AUTODL_TOKEN"

// Defaults of the options.
const (
	DefaultHomeURL  = "https://www.autodl.com/home"
	DefaultPageSize = 100 // the API's cap
	DefaultMaxPages = 50  // per charge type; 2026-era market: ~32 pages of 100
	DefaultMaxFiles = 12  // scripts tried when looking for the list-price table
)

// LiPerYuan: AutoDL's API states money in li, 1/1000 CNY.
const LiPerYuan = 1000

// DefaultChargeTypes are the charge types searched in token mode.
var DefaultChargeTypes = []string{"payg", "daily", "weekly", "monthly"}

// chargeTypes maps AutoDL's charge_type to the billing mode and to the
// span its price covers. payg prices are per GPU-hour (documented); a
// monthly price is per GPU-month (a 2026-10-04 reading of machine_sku_info
// gives 1052 CNY for an RTX 4090 month); daily, weekly and yearly are taken
// to be per day, week and year by the same rule (not seen in any capture).
var chargeTypes = map[string]struct {
	mode pricewatch.Mode
	unit pricewatch.PriceUnit
}{
	"payg":    {pricewatch.ModeOnDemand, pricewatch.PerHour},
	"daily":   {pricewatch.ModeDaily, pricewatch.PerDay},
	"weekly":  {pricewatch.ModeWeekly, pricewatch.PerWeek},
	"monthly": {pricewatch.ModeMonthly, pricewatch.PerMonth},
	// 包年: a prepaid year, billed whether the instance runs or not, i.e.
	// a one-year commitment; the price covers the whole term.
	"yearly": {pricewatch.ModeReserved1Y, pricewatch.PerTerm},
}

// KnownChargeTypes lists the charge types the scraper understands.
func KnownChargeTypes() []string { return []string{"payg", "daily", "weekly", "monthly", "yearly"} }

func init() {
	scrapers.Add(scrapers.Registration{
		Name: "autodl",
		Description: "AutoDL GPU market: machine search with a user token (" + TokenEnv +
			"); without one, the public list-price table of the home page's JavaScript bundle",
		Auth: "optional user token in " + TokenEnv + " (token mode); none for the list prices",
		Yields: "token mode: ondemand (payg), daily, weekly, monthly (reserved-1y for yearly when configured), " +
			"per GPU, per machine and region; token-less: ondemand list price per GPU model; CNY",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://www.autodl.com/api/v1/machine/search",
			Schedule:   "20 * * * *",
			StaleAfter: 150 * time.Minute,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return New() },
	})
}

// New returns a scraper with the default options.
func New() *Scraper {
	return &Scraper{
		ChargeTypes: append([]string(nil), DefaultChargeTypes...),
		PageSize:    DefaultPageSize,
		MaxPages:    DefaultMaxPages,
		PageInQuery: true,
		HomeURL:     DefaultHomeURL,
		MaxFiles:    DefaultMaxFiles,
	}
}

// Scraper is the AutoDL source.
type Scraper struct {
	// ChargeTypes are searched in token mode, one paged request set each
	// (payg, daily, weekly, monthly, yearly).
	ChargeTypes []string `yaml:"charge_types"`
	// PageSize is page_size of the search (at most 100).
	PageSize int `yaml:"page_size"`
	// MaxPages caps the pages walked per charge type; a market with more
	// fails the run rather than silently losing machines.
	MaxPages int `yaml:"max_pages"`
	// PageInQuery mirrors charge_type and page_index of the JSON body in
	// the query string (the fixture server pages by query; the body stays
	// authoritative).
	PageInQuery bool `yaml:"page_in_query"`
	// HomeURL is the home page whose <script src> (and module preload)
	// links are searched for the list-price table in token-less mode.
	HomeURL string `yaml:"home_url"`
	// BundleURL, if set, is fetched directly instead of looking the bundle
	// up from the home page.
	BundleURL string `yaml:"bundle_url"`
	// MaxFiles caps the scripts fetched from the home page.
	MaxFiles int `yaml:"max_files"`

	// root is the site root that root-relative script paths ("/assets/…")
	// resolve against: the base given to Rebase (a fixture server mounts
	// the site under a prefix), else the home page's scheme and host.
	root string
}

// Rebase points the home page (and a configured bundle URL) at base.
func (s *Scraper) Rebase(base string) {
	base = strings.TrimRight(base, "/")
	s.root = base
	s.HomeURL = base + pathOf(s.HomeURL, "/home")
	if s.BundleURL != "" {
		s.BundleURL = base + pathOf(s.BundleURL, "/")
	}
}

func pathOf(raw, def string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Path == "" {
		return def
	}
	p := u.EscapedPath()
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p
}

// Scrape runs token mode when a token is set, else token-less mode.
//
// A token that is set but refused fails the run instead of falling back to
// the list prices: the fallback would replace every per-machine offer with
// a handful of list offers under other keys (every market offer would look
// vanished), and an expired token would go unnoticed. The failing run keeps
// the last good offers until they go stale and names the token as the cause.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	if token := env.Secret(TokenEnv); token != "" {
		obs, err := s.scrapeMarket(ctx, env, token)
		return scrapers.Result{Observations: obs}, err
	}
	obs, err := s.scrapeList(ctx, env)
	return scrapers.Result{Observations: obs}, err
}

// SearchBody is the JSON body of one market search page, with the fields
// the web console sends (no filters).
func SearchBody(chargeType string, page, size int) map[string]any {
	return map[string]any{
		"charge_type":              chargeType,
		"region_sign_list":         []string{},
		"gpu_type_name":            []string{},
		"machine_tag_name":         []string{},
		"gpu_idle_num":             0,
		"mount_net_disk":           false,
		"instance_disk_size_order": "",
		"date_range":               "",
		"date_from":                "",
		"date_to":                  "",
		"page_index":               page,
		"page_size":                size,
		"pay_price_order":          "",
		"gpu_idle_type":            "",
		"default_order":            true,
	}
}

func (s *Scraper) scrapeMarket(ctx context.Context, env *scrapers.Env, token string) ([]pricewatch.Observation, error) {
	cts := s.ChargeTypes
	if len(cts) == 0 {
		cts = DefaultChargeTypes
	}
	for _, ct := range cts {
		if _, ok := chargeTypes[ct]; !ok {
			return nil, fmt.Errorf("autodl: unknown charge type %q (known: %s)", ct, strings.Join(KnownChargeTypes(), ", "))
		}
	}
	size := s.PageSize
	if size <= 0 || size > DefaultPageSize {
		size = DefaultPageSize
	}
	maxPages := s.MaxPages
	if maxPages <= 0 {
		maxPages = DefaultMaxPages
	}
	c, err := env.NewCollector(ctx)
	if err != nil {
		return nil, err
	}
	// A "Bearer " prefix makes AutoDL refuse the token; a user pasting one
	// from another tool gets it stripped.
	token = strings.TrimSpace(strings.TrimPrefix(token, "Bearer "))
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}, "Authorization": {token}}
	var out []pricewatch.Observation
	for _, ct := range cts {
		for page := 1; ; page++ {
			body, err := json.Marshal(SearchBody(ct, page, size))
			if err != nil {
				return nil, err
			}
			u := env.URL()
			if s.PageInQuery {
				u = withQuery(u, url.Values{"charge_type": {ct}, "page_index": {strconv.Itoa(page)}})
			}
			resp, err := env.Fetch(ctx, c, scrapers.Request{Method: http.MethodPost, URL: u, Body: body, Header: hdr})
			if err != nil {
				return nil, fmt.Errorf("autodl %s page %d: %w", ct, page, refused(err))
			}
			p, err := ParseSearch(resp.Body, ct, env.URL())
			if err != nil {
				return nil, fmt.Errorf("autodl %s page %d: %w", ct, page, err)
			}
			out = append(out, p.Observations...)
			env.AddOffers(len(p.Observations))
			if p.MaxPage > maxPages {
				return nil, fmt.Errorf("autodl %s: %d pages of machines, more than max_pages %d", ct, p.MaxPage, maxPages)
			}
			if p.Machines == 0 || page >= p.MaxPage {
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("autodl: %w (no machine in any of %s)", scrapers.ErrNothingParsed, strings.Join(cts, ", "))
	}
	return out, nil
}

// refused names the token as the cause of a 401/403 answer.
func refused(err error) error {
	var he *scrapers.HTTPError
	if errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden) {
		return fmt.Errorf("%w: %w", ErrTokenRefused, err)
	}
	return err
}

func withQuery(raw string, q url.Values) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	v := u.Query()
	for k, vs := range q {
		v[k] = vs
	}
	u.RawQuery = v.Encode()
	return u.String()
}

// ErrTokenRefused is wrapped by the error of an answer whose code says the
// token is not (or no longer) valid.
var ErrTokenRefused = errors.New("AutoDL refused the token in " + TokenEnv)

type machine struct {
	MachineID  scrapers.ID     `json:"machine_id"`
	RegionName string          `json:"region_name"`
	RegionSign string          `json:"region_sign"`
	GPUName    string          `json:"gpu_name"`
	GPUNumber  scrapers.Number `json:"gpu_number"`
	GPUIdle    scrapers.Number `json:"gpu_idle_num"` // GPUs free now
	GPUMemory  scrapers.Number `json:"gpu_memory"`   // bytes per GPU
	Payg       *bool           `json:"payg"`
	PaygPrice  scrapers.Number `json:"payg_price"` // li per GPU-hour (machine list)
	SKUs       []struct {
		Type         string          `json:"type"`
		CurrentPrice scrapers.Number `json:"current_price"` // li per GPU per charge period
	} `json:"machine_sku_info"`
}

type searchResponse struct {
	Code *string `json:"code"`
	Msg  string  `json:"msg"`
	Data *struct {
		List      *[]machine `json:"list"`
		PageIndex int        `json:"page_index"`
		MaxPage   int        `json:"max_page"`
		Total     int        `json:"result_total"`
	} `json:"data"`
}

// Page is one parsed page of the market search.
type Page struct {
	Observations []pricewatch.Observation
	// Machines is how many machines the page listed (priced or not).
	Machines  int
	PageIndex int
	MaxPage   int
	Total     int
}

// ParseSearch parses one page of POST /api/v1/machine/search for a charge
// type. An empty list is a valid page (a charge type nobody offers); a
// page whose machines yield no price at all is a layout change.
func ParseSearch(body []byte, chargeType, url string) (Page, error) {
	ct, ok := chargeTypes[chargeType]
	if !ok {
		return Page{}, fmt.Errorf("unknown charge type %q", chargeType)
	}
	var r searchResponse
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return Page{}, err
	}
	if r.Code == nil {
		return Page{}, fmt.Errorf("%w: no code in the answer", scrapers.ErrNothingParsed)
	}
	if *r.Code != "Success" {
		if tokenProblem(*r.Code, r.Msg) {
			return Page{}, fmt.Errorf("%w (code %s: %s)", ErrTokenRefused, *r.Code, r.Msg)
		}
		return Page{}, fmt.Errorf("autodl error: code %s: %s", *r.Code, r.Msg)
	}
	if r.Data == nil || r.Data.List == nil {
		return Page{}, fmt.Errorf("%w: no data.list", scrapers.ErrNothingParsed)
	}
	p := Page{Machines: len(*r.Data.List), PageIndex: r.Data.PageIndex, MaxPage: r.Data.MaxPage, Total: r.Data.Total}
	for _, m := range *r.Data.List {
		// No name: not a GPU machine (AutoDL's "no-GPU mode" is not a GPU offer).
		name := strings.TrimSpace(m.GPUName)
		if m.MachineID == "" || name == "" {
			continue
		}
		if chargeType == "payg" && m.Payg != nil && !*m.Payg {
			continue
		}
		li, ok := skuPrice(m, chargeType)
		if !ok {
			continue
		}
		region := m.RegionSign
		if region == "" {
			region = m.RegionName
		}
		o := pricewatch.Observation{
			Source: "autodl", OfferID: string(m.MachineID) + "/" + chargeType, Region: region,
			GPUName: name, Price: li / LiPerYuan, Currency: "CNY", Unit: ct.unit, PerGPU: true,
			Mode: ct.mode, URL: url,
		}
		if n, ok := m.GPUNumber.Get(); ok && n > 0 && n == math.Trunc(n) {
			o.GPUCount = int(n)
		}
		if b, ok := m.GPUMemory.Get(); ok && b > 0 {
			o.GPUMemoryGB = b / (1 << 30)
		}
		// An instance rents any number of the machine's free GPUs at the
		// per-GPU price: 1..gpu_idle_num (a machine without the field:
		// 1..gpu_number, availability unknown). A full machine is kept,
		// not available now.
		free := -1
		if n, ok := m.GPUIdle.Get(); ok && n >= 0 && n == math.Trunc(n) && n <= 1e6 {
			free = int(n)
		}
		scrapers.FreeGPUs(&o, o.GPUCount, free)
		p.Observations = append(p.Observations, o)
	}
	if p.Machines > 0 && len(p.Observations) == 0 {
		return p, fmt.Errorf("%w: %d machines listed for charge type %s, none with a price (machine_sku_info changed?)",
			scrapers.ErrNothingParsed, p.Machines, chargeType)
	}
	return p, nil
}

// skuPrice is the machine's per-GPU list price for the charge type in li:
// the machine_sku_info entry of that type (current_price; the
// level_config member prices are discounts, not the list price), or for
// payg the machine's payg_price, which on a market machine is per GPU.
func skuPrice(m machine, chargeType string) (float64, bool) {
	for _, s := range m.SKUs {
		if s.Type == chargeType {
			if v, ok := s.CurrentPrice.Get(); ok && v > 0 {
				return v, true
			}
			return 0, false
		}
	}
	if chargeType == "payg" {
		if v, ok := m.PaygPrice.Get(); ok && v > 0 {
			return v, true
		}
	}
	return 0, false
}

func tokenProblem(code, msg string) bool {
	c := strings.ToLower(code)
	return strings.Contains(c, "auth") || strings.Contains(c, "login") || strings.Contains(c, "token") ||
		strings.Contains(msg, "登录") || strings.Contains(msg, "令牌") || strings.Contains(msg, "token")
}

// Parse parses one payg search page; it is ParseSearch for the fuzz target
// and the error tests, with an empty page reported as ErrNothingParsed.
func Parse(body []byte) ([]pricewatch.Observation, error) {
	p, err := ParseSearch(body, "payg", "")
	if err != nil {
		return nil, err
	}
	if len(p.Observations) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return p.Observations, nil
}

func (s *Scraper) scrapeList(ctx context.Context, env *scrapers.Env) ([]pricewatch.Observation, error) {
	home := s.HomeURL
	if home == "" {
		home = DefaultHomeURL
	}
	extra := []string{home}
	if s.BundleURL != "" {
		extra = append(extra, s.BundleURL)
	}
	c, err := env.NewCollector(ctx, extra...)
	if err != nil {
		return nil, err
	}
	if s.BundleURL != "" {
		resp, err := env.Fetch(ctx, c, scrapers.Request{URL: s.BundleURL})
		if err != nil {
			return nil, fmt.Errorf("autodl bundle %s: %w", s.BundleURL, err)
		}
		obs, err := ParseBundle(resp.Body, s.BundleURL)
		if err != nil {
			return nil, fmt.Errorf("autodl bundle %s: %w", s.BundleURL, err)
		}
		env.AddOffers(len(obs))
		return obs, nil
	}
	resp, err := env.Fetch(ctx, c, scrapers.Request{URL: home})
	if err != nil {
		return nil, fmt.Errorf("autodl home page: %w", err)
	}
	root := s.root
	if root == "" {
		if u, err := url.Parse(home); err == nil {
			root = u.Scheme + "://" + u.Host
		}
	}
	scripts, err := Scripts(resp.Body, home, root)
	if err != nil {
		return nil, fmt.Errorf("autodl home page %s: %w", home, err)
	}
	max := s.MaxFiles
	if max <= 0 {
		max = DefaultMaxFiles
	}
	if len(scripts) > max {
		scripts = scripts[:max]
	}
	// Scripts on another host (a CDN) need a collector that allows it.
	sc := c
	if !sameHosts(scripts, append(extra, env.URL())) {
		if sc, err = env.NewCollector(ctx, append(extra, scripts...)...); err != nil {
			return nil, err
		}
	}
	for _, js := range scripts {
		obs, err := fetchBundle(ctx, env, sc, js)
		if err == nil {
			env.AddOffers(len(obs))
			return obs, nil
		}
		if !errors.Is(err, scrapers.ErrNothingParsed) {
			// A script that cannot be fetched or holds a broken table
			// fails the run: the table may be in it.
			return nil, err
		}
	}
	return nil, fmt.Errorf("autodl: %w: no originalPrice table in the %d scripts of %s", scrapers.ErrNothingParsed, len(scripts), home)
}

func fetchBundle(ctx context.Context, env *scrapers.Env, c *colly.Collector, js string) ([]pricewatch.Observation, error) {
	resp, err := env.Fetch(ctx, c, scrapers.Request{URL: js})
	if err != nil {
		return nil, fmt.Errorf("autodl script %s: %w", js, err)
	}
	obs, err := ParseBundle(resp.Body, js)
	if err != nil {
		return nil, fmt.Errorf("autodl script %s: %w", js, err)
	}
	return obs, nil
}

func sameHosts(urls, allowed []string) bool {
	var hosts []string
	for _, a := range allowed {
		if u, err := url.Parse(a); err == nil {
			hosts = append(hosts, u.Hostname())
		}
	}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || !slices.Contains(hosts, u.Hostname()) {
			return false
		}
	}
	return true
}
