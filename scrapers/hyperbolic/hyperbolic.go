// Package hyperbolic scrapes Hyperbolic's GPU catalog, GET
// https://api.hyperbolic.xyz/v2/skypilot/catalog with a Bearer API key
// (PRICEWATCH_HYPERBOLIC_API_KEY), in USD.
//
// The answer is {"vms": [...]}, each entry an instance in the columns of a
// SkyPilot catalog row (SkyPilot's Hyperbolic fetcher,
// sky/catalog/data_fetchers/fetch_hyperbolic.py, requires exactly these
// fields and writes them out unchanged): InstanceType, AcceleratorName,
// AcceleratorCount, vCPUs, MemoryGiB, StorageGiB, Price (USD per hour for
// the whole instance, AcceleratorCount GPUs), Region, GpuInfo (an object:
// Gpus[].Name, the GPU's nvidia-smi name such as "NVIDIA-H100-80GB-HBM3",
// and MemoryInfo.SizeInMiB) and SpotPrice (empty when none).
//
// One offer per entry, rented whole (fixed unit). The card is GpuInfo's
// GPU name, which states the memory and, for the H100, the HBM3 of the SXM
// part; AcceleratorName ("H100") is the fallback. A SpotPrice, when set,
// is a second offer in spot mode.
//
// Billing: no increment found on Hyperbolic's pages: the default applies.
package hyperbolic

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// KeyEnv holds the Hyperbolic API key (or KeyEnv+"_FILE" a file with it).
const KeyEnv = "PRICEWATCH_HYPERBOLIC_API_KEY"

// RentURL is where a Hyperbolic instance is rented.
const RentURL = "https://app.hyperbolic.xyz/compute"

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "hyperbolic",
		Description: "Hyperbolic GPU catalog (v2/skypilot/catalog, key): instances with their hourly price",
		Auth:        "Bearer API key from " + KeyEnv,
		Yields:      "ondemand (spot where SpotPrice is set); USD per instance-hour, rented whole",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://api.hyperbolic.xyz/v2/skypilot/catalog",
			Schedule:   "35 */3 * * *",
			StaleAfter: 450 * time.Minute,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return New() },
	})
}

// Scraper is the Hyperbolic source: one keyed GET of its JSON (scrapers.KeyedJSON).
type Scraper struct{ scrapers.KeyedJSON }

// New returns the source.
func New() *Scraper {
	return &Scraper{scrapers.KeyedJSON{What: "a Hyperbolic API key", KeyEnv: KeyEnv, Fetch: "catalog",
		Header: scrapers.Bearer, Parse: Parse}}
}

type vm struct {
	InstanceType     string          `json:"InstanceType"`
	AcceleratorName  string          `json:"AcceleratorName"`
	AcceleratorCount scrapers.Number `json:"AcceleratorCount"`
	VCPUs            scrapers.Number `json:"vCPUs"`
	MemoryGiB        scrapers.Number `json:"MemoryGiB"`
	StorageGiB       scrapers.Number `json:"StorageGiB"`
	Price            scrapers.Number `json:"Price"`
	Region           string          `json:"Region"`
	SpotPrice        scrapers.Number `json:"SpotPrice"`
	GpuInfo          *struct {
		Gpus []struct {
			Name       string `json:"Name"`
			MemoryInfo struct {
				SizeInMiB float64 `json:"SizeInMiB"`
			} `json:"MemoryInfo"`
		} `json:"Gpus"`
	} `json:"GpuInfo"`
}

// Parse turns the catalog into observations; an answer without a priced
// GPU instance is ErrNothingParsed.
func Parse(body []byte, src string) ([]pricewatch.Observation, error) {
	var r struct {
		VMs     *[]vm  `json:"vms"`
		Detail  string `json:"detail"`
		Message string `json:"message"`
	}
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, err
	}
	if r.VMs == nil {
		if msg := strings.TrimSpace(r.Detail + " " + r.Message); msg != "" {
			return nil, fmt.Errorf("API error: %s", msg)
		}
		return nil, fmt.Errorf("%w: no vms array in the catalog", scrapers.ErrNothingParsed)
	}
	var out []pricewatch.Observation
	for _, v := range *r.VMs {
		id := strings.TrimSpace(v.InstanceType)
		n, _ := v.AcceleratorCount.Get()
		price, ok := v.Price.Get()
		gpus := int(math.Round(n))
		if id == "" || gpus <= 0 || float64(gpus) != n || !ok || !(price > 0) || math.IsInf(price, 0) {
			continue
		}
		o := pricewatch.Observation{
			Source: "hyperbolic", Provider: "hyperbolic", OfferID: id, Region: strings.TrimSpace(v.Region),
			GPUName: strings.TrimSpace(v.AcceleratorName), GPUCount: gpus, Price: price,
			Currency: "USD", Unit: pricewatch.PerHour, Mode: pricewatch.ModeOnDemand, URL: src,
			RentUnit: pricewatch.RentFixed, Machine: pricewatch.Machine{RentURL: RentURL},
		}
		if o.Region == "default" {
			o.Region = "" // the catalog's placeholder, not a place
		}
		if v.GpuInfo != nil && len(v.GpuInfo.Gpus) > 0 {
			g := v.GpuInfo.Gpus[0]
			if name := strings.TrimSpace(g.Name); name != "" {
				o.GPUName = name
			}
			if mib := g.MemoryInfo.SizeInMiB; mib > 0 && mib < 1e7 {
				o.GPUMemoryGB = mib / 1024
			}
		}
		if o.GPUName == "" {
			o.GPUName, o.GPUCount, o.RentUnit = id, 1, "" // model unknown: reported, never ranked
		}
		if x, ok := v.VCPUs.Get(); ok && x > 0 && x < 1e5 {
			o.VCPUs = x
		}
		if x, ok := v.MemoryGiB.Get(); ok && x > 0 && x < 1e7 {
			o.RAMGB = x
		}
		if x, ok := v.StorageGiB.Get(); ok && x > 0 && x < 1e8 {
			o.DiskGB = x
		}
		out = append(out, o)
		if sp, ok := v.SpotPrice.Get(); ok && sp > 0 && !math.IsInf(sp, 0) {
			s := o
			s.Price, s.Mode = sp, pricewatch.ModeSpot
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}
