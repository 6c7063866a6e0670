// Package shadeform scrapes Shadeform's instance types, GET
// https://api.shadeform.ai/v1/instances/types with the key in the X-API-KEY
// header (PRICEWATCH_SHADEFORM_API_KEY), in USD. Shadeform is an aggregator:
// each instance type is a machine of another cloud ("cloud": lambdalabs,
// datacrunch, massedcompute, hyperstack, …) that Shadeform rents out under
// its own account and bills.
//
// Units: hourly_price is the instance's price in US cents an hour
// (Shadeform's API reference: "The hourly price of the instance in
// cents"; SkyPilot's fetch_shadeform divides by 100 likewise), for
// configuration.num_gpus GPUs rented together (fixed unit).
// vram_per_gpu_in_gb is one GPU's memory, memory_in_gb and storage_in_gb
// the instance's RAM and disk.
//
// One offer per instance type and region of its availability list
// (available: yes or no); a type with an empty list is kept once, with no
// region, not available. The offer's Provider is the cloud behind it,
// spelt as pricewatch's own sources spell it (scrapers.Seller:
// "lambdalabs" is lambda, "datacrunch" verda), and its Source "shadeform":
// the market counts a machine once however many aggregators resell it.
// The offer id is cloud/shade_instance_type, unique across clouds.
//
// GPU names: gpu_type as written ("H100", "A100_80G", "A6000"); where the
// family is sold in both SXM and PCIe forms (A100, H100, V100, A800, H800)
// the form Shadeform's configuration.interconnect states is added ("H100
// SXM5", "A100_80G PCIE"), for normalize's aliases to decide the part.
//
// Not read: availability entries whose rental_type is not on-demand (a
// "spot" entry with its own hourly_price in dollars appears in a third
// party's test of the answer, not in Shadeform's reference: unverified,
// so spot prices are not emitted); the clusters endpoint.
package shadeform

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// Name is the registered source name.
const Name = "shadeform"

// KeyEnv holds the Shadeform API key (sent in the X-API-KEY header).
const KeyEnv = "PRICEWATCH_SHADEFORM_API_KEY"

// RentURL is where a Shadeform instance is launched (its console).
const RentURL = "https://platform.shadeform.ai/"

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        Name,
		Description: "Shadeform instances/types (aggregator: the cloud behind each type is its provider)",
		Auth:        "X-API-KEY header from " + KeyEnv,
		Yields:      "ondemand; USD per instance-hour (hourly_price in cents ÷ 100), per cloud and region; availability per region",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://api.shadeform.ai/v1/instances/types",
			Schedule:   "25 * * * *",
			StaleAfter: 150 * time.Minute,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return New() },
	})
}

// Scraper is the Shadeform source: one keyed GET of every instance type
// (no filter: unavailable types are kept, not available; scrapers.KeyedJSON).
type Scraper struct{ scrapers.KeyedJSON }

// New returns the source.
func New() *Scraper {
	return &Scraper{scrapers.KeyedJSON{What: "a Shadeform API key", KeyEnv: KeyEnv, Fetch: Name,
		Header: func(key string) http.Header { return http.Header{"X-API-KEY": {key}} }, Parse: Parse}}
}

type config struct {
	MemoryGB     float64 `json:"memory_in_gb"`
	StorageGB    float64 `json:"storage_in_gb"`
	VCPUs        float64 `json:"vcpus"`
	NumGPUs      int     `json:"num_gpus"`
	GPUType      string  `json:"gpu_type"`
	Interconnect string  `json:"interconnect"`
	NVLink       *bool   `json:"nvlink"`
	VRAMPerGPU   float64 `json:"vram_per_gpu_in_gb"`
}

type availability struct {
	Region     string `json:"region"`
	Available  bool   `json:"available"`
	RentalType string `json:"rental_type"`
}

type instanceType struct {
	Cloud             string          `json:"cloud"`
	ShadeInstanceType string          `json:"shade_instance_type"`
	CloudInstanceType string          `json:"cloud_instance_type"`
	Configuration     *config         `json:"configuration"`
	HourlyPrice       scrapers.Number `json:"hourly_price"`
	DeploymentType    string          `json:"deployment_type"`
	Availability      []availability  `json:"availability"`
	// The quickstart's answer repeats the configuration at the top level
	// too; it is read where configuration lacks a field.
	config
}

type response struct {
	InstanceTypes *[]instanceType `json:"instance_types"`
	Error         string          `json:"error"`
	Message       string          `json:"message"`
}

// GPUName is the name an instance type's GPU is resolved by: gpu_type, with
// the interconnect's form ("SXM5", "PCIE") added for a family sold in both
// forms (scrapers.WithForm).
func GPUName(gpuType, interconnect string) string { return scrapers.WithForm(gpuType, interconnect) }

// Parse turns the answer into observations; an answer without a priced GPU
// type is ErrNothingParsed.
func Parse(body []byte, src string) ([]pricewatch.Observation, error) {
	var r response
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, err
	}
	if r.InstanceTypes == nil {
		if msg := strings.TrimSpace(r.Error + " " + r.Message); msg != "" {
			return nil, fmt.Errorf("API error: %s", msg)
		}
		return nil, fmt.Errorf("%w: no instance_types in the response", scrapers.ErrNothingParsed)
	}
	var out []pricewatch.Observation
	for _, t := range *r.InstanceTypes {
		c := t.config
		if t.Configuration != nil {
			c = merge(*t.Configuration, t.config)
		}
		cents, ok := t.HourlyPrice.Get()
		cloud, shade := strings.TrimSpace(t.Cloud), strings.TrimSpace(t.ShadeInstanceType)
		if cloud == "" || shade == "" || c.NumGPUs <= 0 || strings.TrimSpace(c.GPUType) == "" ||
			!ok || !(cents > 0) || math.IsInf(cents, 0) {
			continue
		}
		o := pricewatch.Observation{
			Source: Name, Provider: scrapers.Seller(cloud), OfferID: cloud + "/" + shade,
			GPUName: GPUName(c.GPUType, c.Interconnect), GPUCount: c.NumGPUs, GPUMemoryGB: max(c.VRAMPerGPU, 0),
			Price: cents / 100, Currency: "USD", Unit: pricewatch.PerHour, Mode: pricewatch.ModeOnDemand, URL: src,
			RentUnit: pricewatch.RentFixed,
			Machine:  pricewatch.Machine{VCPUs: max(c.VCPUs, 0), RAMGB: max(c.MemoryGB, 0), DiskGB: max(c.StorageGB, 0), RentURL: RentURL},
		}
		o.Interconnect = link(c)
		regions := 0
		for _, a := range t.Availability {
			region := strings.TrimSpace(a.Region)
			if region == "" || !onDemand(a.RentalType) {
				continue
			}
			regions++
			o.Region, o.Available, o.Stock = region, pricewatch.AvailableNo, "not available"
			if a.Available {
				o.Available, o.Stock = pricewatch.AvailableYes, "available"
			}
			out = append(out, o)
		}
		if regions == 0 {
			// Listed in no region (an empty availability list): kept, not
			// rentable now.
			o.Available, o.Stock = pricewatch.AvailableNo, "no region listed"
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}

// merge fills a's empty fields from b.
func merge(a, b config) config {
	if a.MemoryGB == 0 {
		a.MemoryGB = b.MemoryGB
	}
	if a.StorageGB == 0 {
		a.StorageGB = b.StorageGB
	}
	if a.VCPUs == 0 {
		a.VCPUs = b.VCPUs
	}
	if a.NumGPUs == 0 {
		a.NumGPUs = b.NumGPUs
	}
	if a.GPUType == "" {
		a.GPUType = b.GPUType
	}
	if a.Interconnect == "" {
		a.Interconnect = b.Interconnect
	}
	if a.NVLink == nil {
		a.NVLink = b.NVLink
	}
	if a.VRAMPerGPU == 0 {
		a.VRAMPerGPU = b.VRAMPerGPU
	}
	return a
}

// link is the GPU-to-GPU link the type states: NVLink where nvlink is
// true, else its interconnect ("sxm5", "pcie").
func link(c config) string {
	if c.NVLink != nil && *c.NVLink {
		return "nvlink"
	}
	return strings.ToLower(strings.TrimSpace(c.Interconnect))
}

// onDemand reports whether an availability entry is for on-demand rental
// (entries without a rental_type, as Shadeform's reference shows them).
func onDemand(rentalType string) bool {
	t := strings.ToLower(strings.TrimSpace(rentalType))
	return t == "" || t == "on_demand" || t == "ondemand" || t == "on-demand"
}
