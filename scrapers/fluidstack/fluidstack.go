// Package fluidstack scrapes Fluidstack's available configurations, GET
// https://platform.fluidstack.io/list_available_configurations with the
// API key in the api-key header (PRICEWATCH_FLUIDSTACK_API_KEY), in USD.
//
// The answer is a JSON array of plans, one per GPU type (SkyPilot's
// Fluidstack fetcher, sky/catalog/data_fetchers/fetch_fluidstack.py, reads
// these fields): gpu_type ("H100_PCIE_80GB", the model, form factor and
// memory in one token), gpu_counts (the GPU counts a VM of that type may
// have), price_per_gpu_hr (USD per GPU-hour; SkyPilot prices a VM of n
// GPUs at n × it) and regions.
//
// One offer per plan and region, priced per GPU, rented in the plan's GPU
// counts (per-GPU unit with those counts). The memory is the type's
// "_<n>GB" suffix. Availability is not stated beyond the plan being listed.
//
// Billing: no increment found on Fluidstack's pages: the default applies.
package fluidstack

import (
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// KeyEnv holds the Fluidstack API key (or KeyEnv+"_FILE" a file with it).
const KeyEnv = "PRICEWATCH_FLUIDSTACK_API_KEY"

// RentURL is where a Fluidstack VM is deployed (its console).
const RentURL = "https://platform.fluidstack.io/"

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "fluidstack",
		Description: "Fluidstack list_available_configurations (key): GPU types with their per-GPU price, counts and regions",
		Auth:        "api-key header from " + KeyEnv,
		Yields:      "ondemand; USD per GPU-hour (price_per_gpu_hr), per region, rented in the plan's GPU counts",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://platform.fluidstack.io/list_available_configurations",
			Schedule:   "40 */3 * * *",
			StaleAfter: 450 * time.Minute,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return New() },
	})
}

// Scraper is the Fluidstack source: one keyed GET of its JSON (scrapers.KeyedJSON).
type Scraper struct{ scrapers.KeyedJSON }

// New returns the source.
func New() *Scraper {
	return &Scraper{scrapers.KeyedJSON{What: "a Fluidstack API key", KeyEnv: KeyEnv, Fetch: "configurations",
		Header: func(key string) http.Header { return http.Header{"api-key": {key}} }, Parse: Parse}}
}

type plan struct {
	GPUType   string          `json:"gpu_type"`
	GPUCounts []int           `json:"gpu_counts"`
	Price     scrapers.Number `json:"price_per_gpu_hr"`
	Regions   []string        `json:"regions"`
}

// memRe reads the memory from a gpu_type ("…_80GB").
var memRe = regexp.MustCompile(`_([0-9]+)GB$`)

// Parse turns the plans into observations; an answer without a priced plan
// is ErrNothingParsed. An object instead of the array is the API's error.
func Parse(body []byte, src string) ([]pricewatch.Observation, error) {
	var plans *[]plan
	if err := scrapers.UnmarshalJSON(body, "", &plans); err != nil {
		var e struct {
			Detail  any    `json:"detail"`
			Message string `json:"message"`
			Error   string `json:"error"`
		}
		if scrapers.UnmarshalJSON(body, "", &e) == nil && (e.Detail != nil || e.Message != "" || e.Error != "") {
			return nil, fmt.Errorf("API error: %v", strings.TrimSpace(fmt.Sprint(e.Message, " ", e.Error, " ", detail(e.Detail))))
		}
		return nil, err
	}
	if plans == nil {
		return nil, fmt.Errorf("%w: null instead of the plan list", scrapers.ErrNothingParsed)
	}
	var out []pricewatch.Observation
	for _, p := range *plans {
		gpu := strings.TrimSpace(p.GPUType)
		price, ok := p.Price.Get()
		if gpu == "" || !ok || !(price > 0) || math.IsInf(price, 0) {
			continue
		}
		var counts []int
		for _, n := range p.GPUCounts {
			if n > 0 && !slices.Contains(counts, n) {
				counts = append(counts, n)
			}
		}
		slices.Sort(counts)
		if len(counts) == 0 {
			continue // no VM size to rent
		}
		o := pricewatch.Observation{
			Source: "fluidstack", Provider: "fluidstack", OfferID: gpu,
			GPUName: gpu, GPUCount: counts[len(counts)-1], Price: price, PerGPU: true,
			Currency: "USD", Unit: pricewatch.PerHour, Mode: pricewatch.ModeOnDemand, URL: src,
			RentUnit: pricewatch.RentPerGPU, GPUCounts: counts, Machine: pricewatch.Machine{RentURL: RentURL},
		}
		if m := memRe.FindStringSubmatch(gpu); m != nil {
			o.GPUMemoryGB, _ = strconv.ParseFloat(m[1], 64)
		}
		// NVLINK in the type name is how the GPUs are joined.
		if strings.Contains(strings.ToUpper(gpu), "NVLINK") {
			o.Interconnect = "nvlink"
		}
		regions := 0
		for _, r := range p.Regions {
			if r = strings.TrimSpace(r); r == "" {
				continue
			}
			ro := o
			ro.Region = r
			out = append(out, ro)
			regions++
		}
		if regions == 0 {
			out = append(out, o) // listed without a region: kept, none stated
		}
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}

func detail(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}
