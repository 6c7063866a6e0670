// Package hyperstack scrapes Hyperstack's (NexGen Cloud's) Infrahub API:
// the flavors, GET https://infrahub-api.nexgencloud.com/v1/core/flavors,
// and the pricebook, GET …/v1/pricebook, both with an API key in the
// api_key header (PRICEWATCH_HYPERSTACK_API_KEY), in USD.
//
// Units: the pricebook prices a GPU per hour by its name ("H100-80G-PCIe":
// "1.90", a decimal string), the flavor's vCPUs and RAM included; a flavor
// of gpu_count GPUs costs gpu_count × that price (SkyPilot's Hyperstack
// fetcher computes its catalog the same way). One offer per flavor and
// region (flavors come grouped by GPU and region), rented whole (fixed
// unit), available when stock_available says so. Pricebook entries ending
// "-spot" are not read (no flavor names them); a flavor whose GPU has no
// pricebook entry is skipped, as Hyperstack lists GPUs it does not sell yet.
//
// Billing: Hyperstack states per-minute billing for VMs (not checked: the
// default, per started minute, applies).
package hyperstack

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

// KeyEnv holds the Hyperstack API key (sent in the api_key header).
const KeyEnv = "PRICEWATCH_HYPERSTACK_API_KEY"

// PricebookPath is the pricebook endpoint beside /v1/core/flavors.
const PricebookPath = "/v1/pricebook"

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "hyperstack",
		Description: "Hyperstack Infrahub API, flavors × pricebook",
		Auth:        "api_key header from " + KeyEnv,
		Yields:      "ondemand; USD per flavor-hour (gpu_count × the GPU's pricebook price), per region; availability from stock_available",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://infrahub-api.nexgencloud.com/v1/core/flavors",
			Schedule:   "15 */3 * * *",
			StaleAfter: 450 * time.Minute,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the Hyperstack source.
type Scraper struct {
	// PricebookURL is the pricebook endpoint. Empty: /v1/pricebook on the
	// host of url.
	PricebookURL string `yaml:"pricebook_url"`
}

// Rebase points the pricebook at base, as config's url points the flavors.
func (s *Scraper) Rebase(base string) {
	s.PricebookURL = strings.TrimRight(base, "/") + PricebookPath
}

// Check disables the source until the key is set.
func (s *Scraper) Check(env *scrapers.Env) error {
	return scrapers.NeedSecrets(env, "a Hyperstack API key", KeyEnv)
}

func (s *Scraper) pricebookURL(flavors string) (string, error) {
	if s.PricebookURL != "" {
		return s.PricebookURL, nil
	}
	u, err := url.Parse(flavors)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("hyperstack: bad url %q", flavors)
	}
	u.Path, u.RawPath, u.RawQuery = PricebookPath, "", ""
	return u.String(), nil
}

// Scrape reads the pricebook, then the flavors.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	if err := s.Check(env); err != nil {
		return scrapers.Result{}, err
	}
	pb, err := s.pricebookURL(env.URL())
	if err != nil {
		return scrapers.Result{}, err
	}
	c, err := env.NewCollector(ctx, pb)
	if err != nil {
		return scrapers.Result{}, err
	}
	hdr := http.Header{"Accept": {"application/json"}, "api_key": {env.Secret(KeyEnv)}}
	presp, err := env.Fetch(ctx, c, scrapers.Request{URL: pb, Header: hdr})
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("hyperstack pricebook: %w", err)
	}
	prices, err := ParsePricebook(presp.Body)
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("hyperstack pricebook: %w", err)
	}
	fresp, err := env.Fetch(ctx, c, scrapers.Request{URL: env.URL(), Header: hdr})
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("hyperstack flavors: %w", err)
	}
	obs, err := ParseFlavors(fresp.Body, prices, env.URL())
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("hyperstack flavors: %w", err)
	}
	env.AddOffers(len(obs))
	return scrapers.Result{Observations: obs}, nil
}

type priceEntry struct {
	Name  string          `json:"name"`
	Value scrapers.Number `json:"value"`
}

// ParsePricebook reads the pricebook (a JSON array) into price per GPU
// name; an entry without a positive price is left out.
func ParsePricebook(body []byte) (map[string]float64, error) {
	var list *[]priceEntry
	if err := scrapers.UnmarshalJSON(body, "", &list); err != nil {
		var e struct {
			Status  *bool  `json:"status"`
			Message string `json:"message"`
		}
		if scrapers.UnmarshalJSON(body, "", &e) == nil && e.Message != "" {
			return nil, fmt.Errorf("API error: %s", e.Message)
		}
		return nil, err
	}
	if list == nil || len(*list) == 0 {
		return nil, fmt.Errorf("%w: empty pricebook", scrapers.ErrNothingParsed)
	}
	out := map[string]float64{}
	for _, p := range *list {
		v, ok := p.Value.Get()
		if n := strings.TrimSpace(p.Name); n != "" && ok && v > 0 && !math.IsInf(v, 0) {
			out[n] = v
		}
	}
	return out, nil
}

// memRe reads the memory from a Hyperstack GPU name.
var memRe = regexp.MustCompile(`-([0-9]+)G(?:-|$)`)

type flavorGroup struct {
	GPU     string `json:"gpu"`
	Region  string `json:"region_name"`
	Flavors []struct {
		Name     string `json:"name"`
		GPU      string `json:"gpu"`
		GPUCount int    `json:"gpu_count"`
		Region   string `json:"region_name"`
		// CPU and RAM (GB) are the flavor's vCPUs and memory, as
		// Hyperstack's flavor reference lists them.
		CPU       float64 `json:"cpu"`
		RAM       float64 `json:"ram"`
		Available *bool   `json:"stock_available"`
	} `json:"flavors"`
}

type flavorsResponse struct {
	Status  *bool          `json:"status"`
	Message string         `json:"message"`
	Data    *[]flavorGroup `json:"data"`
}

// ParseFlavors prices every GPU flavor from the pricebook.
func ParseFlavors(body []byte, prices map[string]float64, src string) ([]pricewatch.Observation, error) {
	var r flavorsResponse
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, err
	}
	if r.Status != nil && !*r.Status {
		return nil, fmt.Errorf("API error: %s", r.Message)
	}
	if r.Data == nil {
		return nil, fmt.Errorf("%w: no data array in the flavors answer", scrapers.ErrNothingParsed)
	}
	var out []pricewatch.Observation
	for _, g := range *r.Data {
		for _, f := range g.Flavors {
			gpu := strings.TrimSpace(f.GPU)
			if gpu == "" {
				gpu = strings.TrimSpace(g.GPU)
			}
			region := strings.TrimSpace(f.Region)
			if region == "" {
				region = strings.TrimSpace(g.Region)
			}
			price, ok := prices[gpu]
			name := strings.TrimSpace(f.Name)
			if name == "" || gpu == "" || f.GPUCount <= 0 || !ok {
				continue
			}
			o := pricewatch.Observation{
				Source: "hyperstack", Provider: "hyperstack", OfferID: name, Region: region,
				GPUName: gpu, GPUCount: f.GPUCount, Price: price, PerGPU: true,
				Currency: "USD", Unit: pricewatch.PerHour, Mode: pricewatch.ModeOnDemand, URL: src,
				RentUnit: pricewatch.RentFixed,
				Machine:  pricewatch.Machine{VCPUs: max(f.CPU, 0), RAMGB: max(f.RAM, 0), RentURL: RentURL},
			}
			// A flavor group named for its NVLink ("A100-80G-PCIe-NVLink")
			// says how its GPUs are joined; the others state nothing.
			if strings.Contains(strings.ToLower(gpu), "nvlink") {
				o.Interconnect = "nvlink"
			}
			// The memory the name states ("H100-80G-PCIe": 80 GB); none
			// for "L40", "RTX-A6000".
			if m := memRe.FindStringSubmatch(gpu); m != nil {
				o.GPUMemoryGB, _ = strconv.ParseFloat(m[1], 64)
			}
			if f.Available != nil {
				o.Available, o.Stock = pricewatch.AvailableNo, "out of stock"
				if *f.Available {
					o.Available, o.Stock = pricewatch.AvailableYes, "in stock"
				}
			}
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}

// RentURL is where a Hyperstack VM is deployed (its console).
const RentURL = "https://console.hyperstack.cloud/"
