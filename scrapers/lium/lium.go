// Package lium scrapes Lium's public node feed, GET
// https://lium.io/api/public/v1/nodes (no key: Lium documents it as "one
// unauthenticated JSON call", docs.lium.io/developers/public-nodes-feed),
// in USD. Lium is a marketplace like Vast: providers (Bittensor miners)
// list their nodes and set their prices; a node that is fully rented
// leaves the feed.
//
// Units: price_per_gpu_hour is per GPU (price_per_node_hour is it times
// gpu_count, as the recorded feed shows: 8 × 0.5 = 4.0). A rental takes any
// count from min_rentable_gpu_count (missing: the whole node) up to the
// node's available_gpu_count, with a proportional share of the node's CPUs,
// RAM and disk (dstackai/gpuhunt's lium provider reads the feed so);
// cpu_count, ram_gb and disk_gb are the whole node's. tier "spot" is
// interruptible; "secure" is on-demand.
//
// One offer per node (id; its rent_url is where it is rented), per GPU
// (RentPerGPU) with the counts min..available; a node with fewer free GPUs
// than its smallest order is kept, not available now, with the counts
// min..gpu_count. The region is country_code-region lower-cased ("us-ms",
// gpuhunt's location), the country the country_code.
//
// GPU names: gpu_model as written ("RTX 5090", "H200", "A100-SXM4-80GB",
// nvidia-smi's names), gpu_memory_gb one GPU's memory.
package lium

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
const Name = "lium"

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        Name,
		Description: "Lium public node feed (marketplace: providers set per-GPU prices)",
		Auth:        "none",
		Yields:      "ondemand (secure tier), spot (spot tier); USD per GPU-hour, per node; GPU counts min_rentable..available",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://lium.io/api/public/v1/nodes",
			Schedule:   "20 * * * *",
			StaleAfter: 150 * time.Minute,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the Lium source.
type Scraper struct{}

// Scrape reads the feed once.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	return scrapers.FetchOne(ctx, env, Name, scrapers.Request{
		URL: env.URL(), Header: http.Header{"Accept": {"application/json"}},
	}, func(b []byte) ([]pricewatch.Observation, error) { return Parse(b, env.URL()) })
}

type node struct {
	ID                string          `json:"id"`
	GPUModel          string          `json:"gpu_model"`
	GPUCount          int             `json:"gpu_count"`
	AvailableGPUCount int             `json:"available_gpu_count"`
	PricePerGPUHour   scrapers.Number `json:"price_per_gpu_hour"`
	MinRentable       int             `json:"min_rentable_gpu_count"`
	GPUMemoryGB       scrapers.Number `json:"gpu_memory_gb"`
	CPUCount          scrapers.Number `json:"cpu_count"`
	RAMGB             scrapers.Number `json:"ram_gb"`
	DiskGB            scrapers.Number `json:"disk_gb"`
	Tier              string          `json:"tier"`
	CountryCode       string          `json:"country_code"`
	Region            string          `json:"region"`
	RentURL           string          `json:"rent_url"`
}

// Parse turns the feed into observations; a feed without a priced node is
// ErrNothingParsed.
func Parse(body []byte, src string) ([]pricewatch.Observation, error) {
	var r struct {
		Nodes  *[]node `json:"nodes"`
		Detail any     `json:"detail"`
		Error  string  `json:"error"`
	}
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, err
	}
	if r.Nodes == nil {
		if r.Detail != nil || r.Error != "" {
			return nil, fmt.Errorf("API error: %v%s", r.Detail, r.Error)
		}
		return nil, fmt.Errorf("%w: no nodes in the response", scrapers.ErrNothingParsed)
	}
	var out []pricewatch.Observation
	for _, n := range *r.Nodes {
		price, ok := n.PricePerGPUHour.Get()
		id, model := strings.TrimSpace(n.ID), strings.TrimSpace(n.GPUModel)
		if id == "" || model == "" || n.GPUCount <= 0 || !ok || !(price > 0) || math.IsInf(price, 0) {
			continue
		}
		mode := pricewatch.ModeOnDemand
		if strings.EqualFold(strings.TrimSpace(n.Tier), "spot") {
			mode = pricewatch.ModeSpot
		}
		o := pricewatch.Observation{
			Source: Name, Provider: Name, OfferID: id, Region: Location(n.CountryCode, n.Region),
			GPUName: model, GPUCount: n.GPUCount, Price: price, PerGPU: true,
			Currency: "USD", Unit: pricewatch.PerHour, Mode: mode, URL: src,
			Machine: pricewatch.Machine{Country: strings.ToUpper(strings.TrimSpace(n.CountryCode)), RentURL: strings.TrimSpace(n.RentURL)},
		}
		if v, ok := n.GPUMemoryGB.Get(); ok && v > 0 {
			o.GPUMemoryGB = v
		}
		if v, ok := n.CPUCount.Get(); ok && v > 0 {
			o.VCPUs = v
		}
		if v, ok := n.RAMGB.Get(); ok && v > 0 {
			o.RAMGB = v
		}
		if v, ok := n.DiskGB.Get(); ok && v > 0 {
			o.DiskGB = v
		}
		rentTerms(&o, n)
		out = append(out, o)
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}

// rentTerms sets the counts a rental of the node takes now (smallest order
// up to the free GPUs) and whether it can be rented now.
func rentTerms(o *pricewatch.Observation, n node) {
	least := n.MinRentable
	if least <= 0 || least > n.GPUCount {
		least = n.GPUCount // not stated: only the whole node is a safe order
	}
	free := min(max(n.AvailableGPUCount, 0), n.GPUCount)
	o.RentUnit, o.GPUCounts = pricewatch.RentPerGPU, nil
	most := free
	o.Available, o.Stock = pricewatch.AvailableYes, fmt.Sprintf("%d of %d GPUs free", free, n.GPUCount)
	if free < least {
		most = n.GPUCount
		o.Available = pricewatch.AvailableNo
	}
	for c := least; c <= most; c++ {
		o.GPUCounts = append(o.GPUCounts, c)
	}
}

// Location is the node's region, country and subdivision codes lower-cased
// ("US", "MS": "us-ms"; no subdivision: "us").
func Location(country, region string) string {
	c := strings.ToLower(strings.TrimSpace(country))
	if c == "" {
		return ""
	}
	if r := strings.ToLower(strings.TrimSpace(region)); r != "" {
		c += "-" + r
	}
	return strings.ReplaceAll(c, " ", "")
}
