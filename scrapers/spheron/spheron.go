// Package spheron scrapes Spheron's GPU offers, GET
// https://app.spheron.ai/api/gpu-offers?page=N&limit=100, in USD. The list
// answers without credentials (several independent clients read it so); a
// Bearer key (PRICEWATCH_SPHERON_API_KEY, as SkyPilot's fetch_spheron sends
// one) is sent where set. Spheron is an aggregator: each offer names the
// provider whose datacenter runs it ("data-crunch", "massed-compute",
// "voltage-park", or Spheron's own "spheron-ai", "spheron-es").
//
// Pages: data (GPU groups, each with its offers), totalPages; read until
// totalPages, MaxPages at most.
//
// Units: an offer's price is the whole offer's price an hour for its
// gpuCount GPUs (fixed unit): SkyPilot's fetcher writes it as the instance
// price beside AcceleratorCount, Spheron's own pricing service
// (spheron-core's landing-site blog agent) divides it by gpuCount for a
// per-GPU figure, and a third party's parser labels it
// "spheron_instance_hour". gpu_memory is one GPU's memory (SkyPilot:
// "ram_per_gpu_gb"), memory and storage the offer's RAM and disk (GB).
//
// Modes: an offer whose instanceType is SPOT, or whose offerId ends
// "::spot", is spot, at spot_price where it is set, else at price; any
// other offer is on-demand at price. A spot_price on a non-SPOT offer is
// not read: SkyPilot takes it for a second, spot price of the same offer,
// Spheron's own service takes the whole offer for spot; unverified which.
//
// One offer per cluster it lists (clusters), else per its region; available
// when available is true and maintenance is not. The Provider is the
// provider behind the offer (scrapers.Seller: "data-crunch" is verda;
// "spheron-ai" and "spheron-es" are spheron), the Source "spheron".
//
// GPU names: the group's gpuType ("h100", "rtx-4090") with the offer's
// interconnectType added for a family sold in both forms ("h100 SXM5").
package spheron

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// Name is the registered source name.
const Name = "spheron"

// KeyEnv holds an optional Spheron API key (sent as a Bearer token).
const KeyEnv = "PRICEWATCH_SPHERON_API_KEY"

// PageSize is the page size asked for.
const PageSize = 100

// MaxPages bounds the pages read in one run.
const MaxPages = 20

// RentURL is where a Spheron instance is deployed (its console).
const RentURL = "https://app.spheron.ai/"

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        Name,
		Description: "Spheron gpu-offers (aggregator: the provider behind each offer is its provider)",
		Auth:        "none (optional Bearer key from " + KeyEnv + ")",
		Yields:      "ondemand, spot; USD per offer-hour, per provider and cluster; availability",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://app.spheron.ai/api/gpu-offers",
			Schedule:   "55 * * * *",
			StaleAfter: 150 * time.Minute,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the Spheron source.
type Scraper struct{}

// Scrape reads the pages of GPU groups.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	hdr := http.Header{"Accept": {"application/json"}}
	if key := env.Secret(KeyEnv); key != "" {
		hdr.Set("Authorization", "Bearer "+key)
	}
	groups, err := scrapers.FetchPages(ctx, env, Name, hdr, scrapers.Pages[group]{
		PageParam: "page", SizeParam: "limit", Size: PageSize, Max: MaxPages,
		Parse: func(body []byte, page, _ int) ([]group, bool, error) {
			p, err := ParsePage(body)
			if err != nil {
				return nil, false, err
			}
			return p.Data, page >= p.TotalPages, nil
		},
	})
	if err != nil {
		return scrapers.Result{}, err
	}
	obs, err := Observations(groups, env.URL())
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("%s: %w", Name, err)
	}
	env.AddOffers(len(obs))
	return scrapers.Result{Observations: obs}, nil
}

type offer struct {
	Provider         string          `json:"provider"`
	OfferID          string          `json:"offerId"`
	VCPUs            scrapers.Number `json:"vcpus"`
	Memory           scrapers.Number `json:"memory"`
	Storage          scrapers.Number `json:"storage"`
	GPUCount         int             `json:"gpuCount"`
	Price            scrapers.Number `json:"price"`
	SpotPrice        scrapers.Number `json:"spot_price"`
	Available        *bool           `json:"available"`
	Clusters         []string        `json:"clusters"`
	Region           string          `json:"region"`
	GPUMemory        scrapers.Number `json:"gpu_memory"`
	Maintenance      bool            `json:"maintenance"`
	InterconnectType string          `json:"interconnectType"`
	InstanceType     string          `json:"instanceType"`
}

type group struct {
	GPUType     string  `json:"gpuType"`
	GPUModel    string  `json:"gpuModel"`
	BaseGPUType string  `json:"baseGpuType"`
	Offers      []offer `json:"offers"`
}

// Page is one page of the answer.
type Page struct {
	Data       []group `json:"data"`
	TotalPages int     `json:"totalPages"`
}

// ParsePage reads one page; an answer without a data list is an error.
func ParsePage(body []byte) (Page, error) {
	var r struct {
		Data       *[]group `json:"data"`
		TotalPages int      `json:"totalPages"`
		Error      string   `json:"error"`
		Message    string   `json:"message"`
	}
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return Page{}, err
	}
	if r.Data == nil {
		if msg := strings.TrimSpace(r.Error + " " + r.Message); msg != "" {
			return Page{}, fmt.Errorf("API error: %s", msg)
		}
		return Page{}, fmt.Errorf("%w: no data in the response", scrapers.ErrNothingParsed)
	}
	return Page{Data: *r.Data, TotalPages: r.TotalPages}, nil
}

// Seller is the seller behind a Spheron provider name: Spheron's own
// datacenters ("spheron-ai", "spheron-es") are Spheron's.
func Seller(provider string) string {
	p := strings.ToLower(strings.TrimSpace(provider))
	if p == "" || strings.HasPrefix(p, "spheron") {
		return Name
	}
	return scrapers.Seller(p)
}

// Observations turns the groups' offers into observations; none priced is
// ErrNothingParsed.
func Observations(groups []group, src string) ([]pricewatch.Observation, error) {
	var out []pricewatch.Observation
	for _, g := range groups {
		gpu := strings.TrimSpace(g.GPUType)
		if gpu == "" {
			gpu = strings.TrimSpace(g.GPUModel)
		}
		for _, f := range g.Offers {
			id := strings.TrimSpace(f.OfferID)
			spot := strings.EqualFold(strings.TrimSpace(f.InstanceType), "spot") || strings.HasSuffix(id, "::spot")
			price, ok := f.Price.Get()
			if sp, sok := f.SpotPrice.Get(); spot && sok && sp > 0 {
				price, ok = sp, true
			}
			if gpu == "" || id == "" || f.GPUCount <= 0 || !ok || !(price > 0) || math.IsInf(price, 0) {
				continue
			}
			mode := pricewatch.ModeOnDemand
			if spot {
				mode = pricewatch.ModeSpot
			}
			o := pricewatch.Observation{
				Source: Name, Provider: Seller(f.Provider), OfferID: id,
				GPUName: scrapers.WithForm(gpu, f.InterconnectType), GPUCount: f.GPUCount,
				Price: price, Currency: "USD", Unit: pricewatch.PerHour, Mode: mode, URL: src,
				RentUnit: pricewatch.RentFixed, Machine: pricewatch.Machine{RentURL: RentURL},
			}
			if v, ok := f.GPUMemory.Get(); ok && v > 0 {
				o.GPUMemoryGB = v
			}
			if v, ok := f.VCPUs.Get(); ok && v > 0 {
				o.VCPUs = v
			}
			if v, ok := f.Memory.Get(); ok && v > 0 {
				o.RAMGB = v
			}
			if v, ok := f.Storage.Get(); ok && v > 0 {
				o.DiskGB = v
			}
			if ic := strings.ToLower(strings.TrimSpace(f.InterconnectType)); strings.HasPrefix(ic, "sxm") || ic == "pcie" || ic == "nvlink" {
				o.Interconnect = ic
			}
			if f.Available != nil {
				o.Available, o.Stock = pricewatch.AvailableNo, "not available"
				if *f.Available && !f.Maintenance {
					o.Available, o.Stock = pricewatch.AvailableYes, "available"
				} else if f.Maintenance {
					o.Stock = "maintenance"
				}
			}
			regions := places(f)
			if len(regions) == 0 {
				out = append(out, o) // no cluster or region named
				continue
			}
			for _, pl := range regions {
				o.Region = pl
				out = append(out, o)
			}
		}
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}

// places are the clusters an offer lists, else its region; none when it
// names neither.
func places(f offer) []string {
	var out []string
	for _, c := range f.Clusters {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	if r := strings.TrimSpace(f.Region); len(out) == 0 && r != "" {
		out = append(out, r)
	}
	return out
}
