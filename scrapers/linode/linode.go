// Package linode scrapes Akamai's (Linode's) public instance types API,
// GET https://api.linode.com/v4/linode/types (no key needed), for its GPU
// plans, in USD per instance.
//
// Billing: a type states price.hourly and price.monthly; Linode bills by
// the hour up to the monthly price, so price.hourly is the on-demand price
// and monthly ÷ hourly the plan's monthly cap in hours (1000 / 1.5 =
// 666.7 h on the RTX 6000 plans), carried as MonthlyCapHours; transfer
// (GB a month) is the egress the plan adds to the account's pool. A type
// may state region_prices (the same hourly/monthly pair for a region whose
// price differs, e.g. id-cgk, br-gru): each yields its own offer in that
// region beside the default one (region "").
//
// GPU model and count: gpus is the count; the model is read from the type
// id ("g1-gpu-rtx6000-2": NVIDIA Quadro RTX 6000, "g2-gpu-rtx4000a2-s":
// RTX 4000 Ada) through the table models. A GPU type whose model the
// table does not know is kept under its id with one GPU, so that normalize
// reports it; it is never guessed.
//
// Pagination: page and pages in the envelope; ?page=N&page_size=500.
package linode

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// PageSize is the page size asked for (the API's maximum is 500).
const PageSize = 500

// MaxPages caps the pages followed in one run.
const MaxPages = 20

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "linode",
		Description: "Akamai (Linode) instance types API, GPU plans (class gpu)",
		Auth:        "none",
		Yields:      "ondemand; USD per instance-hour (region_prices as their own regions); monthly cap = monthly ÷ hourly",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://api.linode.com/v4/linode/types",
			Schedule:   "50 */6 * * *",
			StaleAfter: 15 * time.Hour,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the Linode source.
type Scraper struct{}

// PageURL is the URL of page n of the types list.
func PageURL(base string, n int) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("linode: bad url %q", base)
	}
	q := u.Query()
	q.Set("page", strconv.Itoa(n))
	if q.Get("page_size") == "" {
		q.Set("page_size", strconv.Itoa(PageSize))
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Scrape walks the pages of types.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	c, err := env.NewCollector(ctx)
	if err != nil {
		return scrapers.Result{}, err
	}
	var out []pricewatch.Observation
	for page := 1; ; page++ {
		if page > MaxPages {
			return scrapers.Result{}, fmt.Errorf("linode: more than %d pages of types", MaxPages)
		}
		u, err := PageURL(env.URL(), page)
		if err != nil {
			return scrapers.Result{}, err
		}
		resp, err := env.Fetch(ctx, c, scrapers.Request{URL: u, Header: http.Header{"Accept": {"application/json"}}})
		if err != nil {
			return scrapers.Result{}, fmt.Errorf("linode page %d: %w", page, err)
		}
		obs, pages, err := ParsePage(resp.Body, env.URL())
		if err != nil {
			return scrapers.Result{}, fmt.Errorf("linode page %d: %w", page, err)
		}
		out = append(out, obs...)
		env.AddOffers(len(obs))
		if page >= pages {
			break
		}
	}
	if len(out) == 0 {
		return scrapers.Result{}, scrapers.ErrNothingParsed
	}
	return scrapers.Result{Observations: out}, nil
}

type price struct {
	Hourly  scrapers.Number `json:"hourly"`
	Monthly scrapers.Number `json:"monthly"`
}

type regionPrice struct {
	ID string `json:"id"`
	price
}

type linodeType struct {
	ID       string  `json:"id"`
	Label    string  `json:"label"`
	Class    string  `json:"class"`
	GPUs     int     `json:"gpus"`
	Transfer float64 `json:"transfer"`
	// VCPUs, Memory and Disk are the plan's: vCPUs, RAM and disk in MB as
	// Linode's API reference states them (binary: 32768 is the 32 GB
	// plan), converted to GiB.
	VCPUs        float64       `json:"vcpus"`
	Memory       float64       `json:"memory"`
	Disk         float64       `json:"disk"`
	Price        price         `json:"price"`
	RegionPrices []regionPrice `json:"region_prices"`
}

type response struct {
	Data   *[]linodeType `json:"data"`
	Page   int           `json:"page"`
	Pages  int           `json:"pages"`
	Errors []struct {
		Reason string `json:"reason"`
	} `json:"errors"`
}

// model is one GPU model of the type table: the name written for
// normalize and its memory per GPU (GB).
type model struct {
	Name     string
	MemoryGB float64
}

// models maps the GPU token of a type id to the card. Linode's GPU pages
// name them: "NVIDIA Quadro RTX 6000" (24 GB GDDR6) and "NVIDIA RTX 4000
// Ada" (20 GB) — techdocs.akamai.com/cloud-computing/docs/gpu-compute-instances.
var models = map[string]model{
	"rtx6000":  {"Quadro RTX 6000", 24},
	"rtx4000a": {"RTX 4000 Ada", 20},
}

// idRe reads the GPU token and the count from a GPU type id:
// g1-gpu-rtx6000-2, g2-gpu-rtx4000a4-m.
var idRe = regexp.MustCompile(`^g[0-9]+-gpu-([a-z]+[0-9]+a?)[0-9]*(?:-[a-z0-9]+)?$`)

// ParsePage turns one page of types into observations and returns the
// number of pages.
func ParsePage(body []byte, src string) ([]pricewatch.Observation, int, error) {
	var r response
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, 0, err
	}
	if len(r.Errors) > 0 {
		return nil, 0, fmt.Errorf("API error: %s", r.Errors[0].Reason)
	}
	if r.Data == nil {
		return nil, 0, fmt.Errorf("%w: no data array in the response", scrapers.ErrNothingParsed)
	}
	var out []pricewatch.Observation
	for _, t := range *r.Data {
		out = append(out, observations(t, src)...)
	}
	return out, r.Pages, nil
}

// Parse is ParsePage for one page; a page without a GPU type is
// ErrNothingParsed.
func Parse(body []byte, src string) ([]pricewatch.Observation, error) {
	obs, _, err := ParsePage(body, src)
	if err == nil && len(obs) == 0 {
		err = scrapers.ErrNothingParsed
	}
	return obs, err
}

func observations(t linodeType, src string) []pricewatch.Observation {
	id := strings.TrimSpace(t.ID)
	if id == "" || (t.GPUs <= 0 && t.Class != "gpu") {
		return nil
	}
	o := pricewatch.Observation{
		Source: "linode", Provider: "linode", OfferID: id,
		Currency: "USD", Unit: pricewatch.PerHour, Mode: pricewatch.ModeOnDemand, URL: src,
		FreeEgressGBMonth: max(t.Transfer, 0),
		Machine: pricewatch.Machine{VCPUs: max(t.VCPUs, 0), RAMGB: max(t.Memory, 0) / 1024, DiskGB: max(t.Disk, 0) / 1024,
			RentURL: RentURL},
	}
	if m, ok := gpuModel(id); ok && t.GPUs > 0 {
		o.GPUName, o.GPUCount, o.GPUMemoryGB = m.Name, t.GPUs, m.MemoryGB
		o.RentUnit = pricewatch.RentFixed
	} else {
		o.GPUName, o.GPUCount = id, 1 // unknown model or count: reported, never ranked
	}
	var out []pricewatch.Observation
	add := func(region string, p price) {
		h, ok := p.Hourly.Get()
		if !ok || !(h > 0) || math.IsInf(h, 0) {
			return
		}
		o.Region, o.Price, o.MonthlyCapHours = region, h, 0
		if m, ok := p.Monthly.Get(); ok && m > 0 && !math.IsInf(m, 0) {
			o.MonthlyCapHours = m / h
		}
		out = append(out, o)
	}
	add("", t.Price)
	for _, rp := range t.RegionPrices {
		if r := strings.TrimSpace(rp.ID); r != "" {
			add(r, rp.price)
		}
	}
	return out
}

// gpuModel reads the model from a GPU type id.
func gpuModel(id string) (model, bool) {
	m := idRe.FindStringSubmatch(id)
	if m == nil {
		return model{}, false
	}
	g, ok := models[m[1]]
	return g, ok
}

// RentURL is where a Linode is created (Cloud Manager's create page).
const RentURL = "https://cloud.linode.com/linodes/create"
