// Package digitalocean scrapes DigitalOcean's Droplet sizes,
// GET https://api.digitalocean.com/v2/sizes (a personal access token with
// read scope, PRICEWATCH_DIGITALOCEAN_TOKEN; the API answers nothing
// without one), for its GPU Droplets, in USD per Droplet.
//
// Billing: price_hourly is the on-demand price of the whole Droplet
// ("Droplets are billed hourly with a minimum charge of one hour",
// docs.digitalocean.com/products/droplets/details/pricing); price_monthly
// is 744 × price_hourly on the GPU sizes seen (17,796.48 / 23.92 = 744 h, a
// 31-day month), no cap the page states, and is not read.
//
// GPU model and count: gpu_info.model ("nvidia_h100", "amd_mi300x", as written) and
// gpu_info.count; gpu_info.vram is the size's total (amount in unit, GiB).
// A size rents whole (fixed unit). available and regions say where it can
// be created now: one offer per size (region ""), available when
// available is true and regions is not empty, with the regions as stock.
//
// Pagination: links.pages.next is the next page's URL (per_page=200).
package digitalocean

import (
	"context"
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

// TokenEnv holds the DigitalOcean API token (sent as a Bearer token).
const TokenEnv = "PRICEWATCH_DIGITALOCEAN_TOKEN"

// PerPage is the page size asked for (the API's maximum is 200).
const PerPage = 200

// MaxPages caps the pages followed in one run.
const MaxPages = 20

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "digitalocean",
		Description: "DigitalOcean Droplet sizes API (v2/sizes), GPU Droplets",
		Auth:        "Bearer token in " + TokenEnv,
		Yields:      "ondemand; USD per Droplet-hour; availability from available and regions",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://api.digitalocean.com/v2/sizes",
			Schedule:   "45 */6 * * *",
			StaleAfter: 15 * time.Hour,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the DigitalOcean source.
type Scraper struct{}

// Check disables the source until the token is set.
func (s *Scraper) Check(env *scrapers.Env) error {
	return scrapers.NeedSecrets(env, "a DigitalOcean API token with read scope", TokenEnv)
}

// FirstPageURL is base with per_page set where it names none.
func FirstPageURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("digitalocean: bad url %q", base)
	}
	q := u.Query()
	if q.Get("per_page") == "" {
		q.Set("per_page", strconv.Itoa(PerPage))
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Scrape follows links.pages.next from the first page. A next link is
// followed only on the configured host, so that a token is never sent
// elsewhere.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	if err := s.Check(env); err != nil {
		return scrapers.Result{}, err
	}
	c, err := env.NewCollector(ctx)
	if err != nil {
		return scrapers.Result{}, err
	}
	next, err := FirstPageURL(env.URL())
	if err != nil {
		return scrapers.Result{}, err
	}
	base, _ := url.Parse(next)
	hdr := http.Header{"Accept": {"application/json"}, "Authorization": {"Bearer " + env.Secret(TokenEnv)}}
	var out []pricewatch.Observation
	seen := map[string]bool{}
	for page := 1; next != ""; page++ {
		if page > MaxPages {
			return scrapers.Result{}, fmt.Errorf("digitalocean: more than %d pages of sizes", MaxPages)
		}
		if seen[next] {
			return scrapers.Result{}, fmt.Errorf("digitalocean page %d: next link %q repeats an earlier page", page, next)
		}
		seen[next] = true
		resp, err := env.Fetch(ctx, c, scrapers.Request{URL: next, Header: hdr})
		if err != nil {
			return scrapers.Result{}, fmt.Errorf("digitalocean page %d: %w", page, err)
		}
		obs, link, err := ParsePage(resp.Body, env.URL())
		if err != nil {
			return scrapers.Result{}, fmt.Errorf("digitalocean page %d: %w", page, err)
		}
		out = append(out, obs...)
		env.AddOffers(len(obs))
		next = ""
		if link != "" {
			u, err := base.Parse(link)
			if err != nil || u.Host != base.Host {
				return scrapers.Result{}, fmt.Errorf("digitalocean page %d: next link %q is not on %s", page, link, base.Host)
			}
			next = u.String()
		}
	}
	if len(out) == 0 {
		return scrapers.Result{}, scrapers.ErrNothingParsed
	}
	return scrapers.Result{Observations: out}, nil
}

type size struct {
	Slug        string          `json:"slug"`
	PriceHourly scrapers.Number `json:"price_hourly"`
	Regions     []string        `json:"regions"`
	Available   bool            `json:"available"`
	// VCPUs and Memory (MB, binary: /1024 is GiB, as gpuhunt's
	// digitalocean provider reads it) are the Droplet's; DiskInfo its
	// disks (the local ones are its own, scratch is extra).
	VCPUs    float64 `json:"vcpus"`
	Memory   float64 `json:"memory"`
	DiskInfo []struct {
		Type string `json:"type"`
		Size struct {
			Amount float64 `json:"amount"`
			Unit   string  `json:"unit"`
		} `json:"size"`
	} `json:"disk_info"`
	GPUInfo *struct {
		Count int    `json:"count"`
		Model string `json:"model"`
		VRAM  struct {
			Amount float64 `json:"amount"`
			Unit   string  `json:"unit"`
		} `json:"vram"`
	} `json:"gpu_info"`
}

type response struct {
	Sizes *[]size `json:"sizes"`
	Links struct {
		Pages struct {
			Next string `json:"next"`
		} `json:"pages"`
	} `json:"links"`
	ID      string `json:"id"`
	Message string `json:"message"`
}

// ParsePage turns one page of sizes into observations and returns the
// next page's link ("" on the last).
func ParsePage(body []byte, src string) ([]pricewatch.Observation, string, error) {
	var r response
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, "", err
	}
	if r.Sizes == nil {
		if r.Message != "" {
			return nil, "", fmt.Errorf("API error (%s): %s", r.ID, r.Message)
		}
		return nil, "", fmt.Errorf("%w: no sizes array in the response", scrapers.ErrNothingParsed)
	}
	var out []pricewatch.Observation
	for _, s := range *r.Sizes {
		if o, ok := observation(s, src); ok {
			out = append(out, o)
		}
	}
	return out, strings.TrimSpace(r.Links.Pages.Next), nil
}

// Parse is ParsePage for one page; a page without a priced GPU size is
// ErrNothingParsed.
func Parse(body []byte, src string) ([]pricewatch.Observation, error) {
	obs, _, err := ParsePage(body, src)
	if err == nil && len(obs) == 0 {
		err = scrapers.ErrNothingParsed
	}
	return obs, err
}

func observation(s size, src string) (pricewatch.Observation, bool) {
	slug := strings.TrimSpace(s.Slug)
	price, ok := s.PriceHourly.Get()
	if slug == "" || s.GPUInfo == nil || s.GPUInfo.Count <= 0 || !ok || !(price > 0) || math.IsInf(price, 0) {
		return pricewatch.Observation{}, false
	}
	o := pricewatch.Observation{
		Source: "digitalocean", Provider: "digitalocean", OfferID: slug,
		Price: price, Currency: "USD", Unit: pricewatch.PerHour, Mode: pricewatch.ModeOnDemand, URL: src,
		GPUCount: s.GPUInfo.Count, RentUnit: pricewatch.RentFixed,
		Machine: pricewatch.Machine{VCPUs: max(s.VCPUs, 0), RAMGB: max(s.Memory, 0) / 1024, DiskGB: localDiskGiB(s), RentURL: RentURL},
	}
	// gpu_info.model is written as the API spells it ("nvidia_h100",
	// "amd_mi300x"): normalize folds "_" to spaces and drops the vendor
	// word. "nvidia_h100" states no form factor (SXM or PCIe) and stays
	// unknown rather than guessed.
	if model := strings.TrimSpace(s.GPUInfo.Model); model != "" {
		o.GPUName = model
	} else {
		o.GPUName, o.GPUCount, o.RentUnit = slug, 1, "" // model unknown: reported, never ranked
	}
	if strings.EqualFold(s.GPUInfo.VRAM.Unit, "gib") && s.GPUInfo.VRAM.Amount > 0 && o.GPUCount > 0 {
		o.GPUMemoryGB = s.GPUInfo.VRAM.Amount / float64(o.GPUCount)
	}
	var regions []string
	for _, r := range s.Regions {
		if r = strings.TrimSpace(r); r != "" {
			regions = append(regions, r)
		}
	}
	if s.Available && len(regions) > 0 {
		o.Available, o.Stock = pricewatch.AvailableYes, "in "+strings.Join(regions, ", ")
	} else {
		o.Available, o.Stock = pricewatch.AvailableNo, "in no region now"
	}
	return o, true
}

// RentURL is where a GPU Droplet is created (the control panel).
const RentURL = "https://cloud.digitalocean.com/gpus/new"

// localDiskGiB is the Droplet's own (local) disk in GiB, as disk_info
// states it; scratch disks are left out (gpuhunt counts local ones only).
func localDiskGiB(s size) float64 {
	var gib float64
	for _, d := range s.DiskInfo {
		if d.Type == "local" && strings.EqualFold(d.Size.Unit, "gib") && d.Size.Amount > 0 {
			gib += d.Size.Amount
		}
	}
	return gib
}
