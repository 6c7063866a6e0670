// Package novita scrapes Novita AI's GPU instance products, GET
// https://api.novita.ai/gpu-instance/openapi/v1/products with a Bearer API
// key (PRICEWATCH_NOVITA_API_KEY), in USD.
//
// The answer is {"data": [product]} (Novita's API reference, "List GPU
// Products"): id, name (the GPU and its memory, "RTX 4090 24GB"),
// cpuPerGpu, memoryPerGpu (GB), diskPerGpu, availableDeploy, regions,
// price, spotPrice, billingMethods ("onDemand", "spot", "monthly").
//
// Units: price and spotPrice are in 1/100000 USD per GPU-hour (35000 is
// 0.35 USD): Novita's Python SDK converts them so ("API returns prices in
// units of 1/100000 USD"), and SkyPilot's Novita fetcher divides by 100000
// likewise. Novita bills "Instance Unit Price × Billing Duration × Number
// of Cards" (its GPU instance pricing guide), so a product is priced per
// GPU; its CPU, memory and disk come per GPU.
//
// One offer per product and region (none listed: one without a region),
// rented one GPU at a time (the count SkyPilot's fetcher catalogs; more per
// instance is not stated per product), available when availableDeploy.
// A spot price, where billingMethods has "spot", is a second offer.
package novita

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// KeyEnv holds the Novita API key (or KeyEnv+"_FILE" a file with it).
const KeyEnv = "PRICEWATCH_NOVITA_API_KEY"

// PriceDivisor turns price and spotPrice into USD: they count 1/100000 USD.
const PriceDivisor = 100000

// memRe is the memory a product name ends with ("RTX 4090 24GB").
var memRe = regexp.MustCompile(`^(.*?)\s*([0-9]+(?:\.[0-9]+)?)\s*GB$`)

// splitMemory reads a product name as the GPU and its memory in GB: "RTX
// 4090 24GB" is the RTX 4090 with 24 GB. A name without a memory is kept
// whole, memory 0 (not stated).
func splitMemory(name string) (string, float64) {
	m := memRe.FindStringSubmatch(name)
	if m == nil || m[1] == "" {
		return name, 0
	}
	mem, err := strconv.ParseFloat(m[2], 64)
	if err != nil {
		return name, 0
	}
	return m[1], mem
}

// RentURL is where a Novita GPU instance is deployed (its console).
const RentURL = "https://novita.ai/gpu-instance/console"

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "novita",
		Description: "Novita AI GPU instance products (key): per-GPU prices per region",
		Auth:        "Bearer API key from " + KeyEnv,
		Yields:      "ondemand, spot; USD per GPU-hour (price ÷ 100000), per region; availability from availableDeploy",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://api.novita.ai/gpu-instance/openapi/v1/products",
			Schedule:   "45 */3 * * *",
			StaleAfter: 450 * time.Minute,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return New() },
	})
}

// Scraper is the Novita source: one keyed GET of its JSON (scrapers.KeyedJSON).
type Scraper struct{ scrapers.KeyedJSON }

// New returns the source.
func New() *Scraper {
	return &Scraper{scrapers.KeyedJSON{What: "a Novita AI API key", KeyEnv: KeyEnv, Fetch: "products",
		Header: func(key string) http.Header {
			return http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + key}}
		}, Parse: Parse}}
}

type product struct {
	ID              string          `json:"id"`
	Name            string          `json:"name"`
	CPUPerGPU       float64         `json:"cpuPerGpu"`
	MemoryPerGPU    float64         `json:"memoryPerGpu"`
	DiskPerGPU      float64         `json:"diskPerGpu"`
	AvailableDeploy *bool           `json:"availableDeploy"`
	Regions         json.RawMessage `json:"regions"`
	Price           scrapers.Number `json:"price"`
	SpotPrice       scrapers.Number `json:"spotPrice"`
	BillingMethods  []string        `json:"billingMethods"`
}

// regionsOf reads regions as the fetchers do (a list of names); the API
// reference shows an object, whose keys are taken then.
func regionsOf(raw json.RawMessage) []string {
	var list []string
	if json.Unmarshal(raw, &list) != nil {
		var m map[string]any
		if json.Unmarshal(raw, &m) == nil {
			for k := range m {
				list = append(list, k)
			}
			sort.Strings(list)
		}
	}
	var out []string
	for _, r := range list {
		if r = strings.TrimSpace(r); r != "" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// Parse turns the product list into observations; an answer without a
// priced product is ErrNothingParsed.
func Parse(body []byte, src string) ([]pricewatch.Observation, error) {
	var r struct {
		Data    *[]product `json:"data"`
		Code    any        `json:"code"`
		Reason  string     `json:"reason"`
		Message string     `json:"message"`
	}
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, err
	}
	if r.Data == nil {
		if msg := strings.TrimSpace(r.Reason + " " + r.Message); msg != "" {
			return nil, fmt.Errorf("API error %v: %s", r.Code, msg)
		}
		return nil, fmt.Errorf("%w: no data array in the products answer", scrapers.ErrNothingParsed)
	}
	var out []pricewatch.Observation
	for _, p := range *r.Data {
		id, name := strings.TrimSpace(p.ID), strings.TrimSpace(p.Name)
		units, ok := p.Price.Get()
		if id == "" || name == "" || !ok || !(units > 0) || math.IsInf(units, 0) {
			continue
		}
		gpu, mem := splitMemory(name)
		o := pricewatch.Observation{
			Source: "novita", Provider: "novita", OfferID: id, GPUName: gpu, GPUMemoryGB: mem, GPUCount: 1,
			Price: units / PriceDivisor, PerGPU: true, Currency: "USD", Unit: pricewatch.PerHour,
			Mode: pricewatch.ModeOnDemand, URL: src, RentUnit: pricewatch.RentPerGPU, GPUCounts: []int{1},
			Machine: pricewatch.Machine{RentURL: RentURL},
		}
		if p.CPUPerGPU > 0 && p.CPUPerGPU < 1e4 {
			o.VCPUs = p.CPUPerGPU
		}
		if p.MemoryPerGPU > 0 && p.MemoryPerGPU < 1e6 {
			o.RAMGB = p.MemoryPerGPU
		}
		if p.DiskPerGPU > 0 && p.DiskPerGPU < 1e7 {
			o.DiskGB = p.DiskPerGPU
		}
		if p.AvailableDeploy != nil {
			o.Available, o.Stock = pricewatch.AvailableNo, "not deployable now"
			if *p.AvailableDeploy {
				o.Available, o.Stock = pricewatch.AvailableYes, "deployable"
			}
		}
		spot, hasSpot := p.SpotPrice.Get()
		hasSpot = hasSpot && spot > 0 && !math.IsInf(spot, 0) && slices.Contains(p.BillingMethods, "spot")
		regions := regionsOf(p.Regions)
		if len(regions) == 0 {
			regions = []string{""}
		}
		for _, reg := range regions {
			ro := o
			ro.Region = reg
			out = append(out, ro)
			if hasSpot {
				so := ro
				so.Price, so.Mode = spot/PriceDivisor, pricewatch.ModeSpot
				out = append(out, so)
			}
		}
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}
