// Package tensordock scrapes TensorDock's marketplace through its current
// API, v2: GET https://dashboard.tensordock.com/api/v2/locations with a
// Bearer API key (TensorDock's dashboard → Developer Settings → API key).
// The legacy v0 host-node API (marketplace.tensordock.com/api/v0/…) that
// public parsers read until 2026 is not used any more.
//
// The answer lists, per location, each GPU model on offer there: the GPU
// price per GPU-hour (price_per_hr), the most GPUs one deployment can take
// now (max_count), the most vCPUs, GB of RAM and GB of disk that go with
// them (resources.max_*), and the price of each of those per unit-hour
// (pricing.per_*), all in USD:
//
//	{"data": {"locations": [{"id", "city", "stateprovince", "country", "tier",
//	  "gpus": [{"v0Name", "displayName", "max_count", "price_per_hr",
//	            "resources": {"max_vcpus", "max_ram_gb", "max_storage_gb"},
//	            "pricing": {"per_vcpu_hr", "per_gb_ram_hr", "per_gb_storage_hr"}}]}]}}
//
// A TensorDock machine is priced as the sum of the parts one chooses, so
// there is no instance price to read. pricewatch prices a typical machine
// per GPU: one GPU with VCPUsPerGPU vCPUs, RAMGBPerGPU GB of RAM and
// StorageGBPerGPU GB of disk (defaults 8, 32, 100; TensorDock's minimum
// disk is 100 GB), i.e.
//
//	per GPU-hour = price_per_hr + vcpus × per_vcpu_hr + ram × per_gb_ram_hr + storage × per_gb_storage_hr
//
// Availability is what the answer states: a GPU model with max_count free
// GPUs and room for at least one typical machine is available (yes, stock
// "N GPUs free"); one with none free, or without room for one typical
// machine, is kept with its price, available no, and no rent terms (it is
// never ranked).
package tensordock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// APIKeyEnv holds the TensorDock API key (v2, sent as a Bearer token).
const APIKeyEnv = "PRICEWATCH_TENSORDOCK_API_KEY"

// DefaultURL is the v2 locations endpoint.
const DefaultURL = "https://dashboard.tensordock.com/api/v2/locations"

// RentURL is where a TensorDock machine is deployed (its dashboard).
const RentURL = "https://dashboard.tensordock.com/deploy"

// The typical resources priced with each GPU.
const (
	DefaultVCPUsPerGPU     = 8
	DefaultRAMGBPerGPU     = 32
	DefaultStorageGBPerGPU = 100
)

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "tensordock",
		Description: "TensorDock marketplace, API v2 locations (per-resource prices and free GPUs per location)",
		Auth:        "Bearer API key in " + APIKeyEnv,
		Yields:      "ondemand; USD per GPU-hour of a typical machine (GPU + 8 vCPU + 32 GB RAM + 100 GB disk per GPU, configurable); availability from the free GPUs",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        DefaultURL,
			Schedule:   "*/30 * * * *",
			StaleAfter: 75 * time.Minute,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return New() },
	})
}

// New returns a scraper with the default typical machine.
func New() *Scraper {
	return &Scraper{VCPUsPerGPU: DefaultVCPUsPerGPU, RAMGBPerGPU: DefaultRAMGBPerGPU, StorageGBPerGPU: DefaultStorageGBPerGPU}
}

// Typical is the machine priced per GPU: the vCPUs, GB of RAM and GB of
// disk rented with each GPU.
type Typical struct {
	VCPUsPerGPU, RAMGBPerGPU, StorageGBPerGPU float64
}

func (t Typical) validate() error {
	for _, v := range []struct {
		name string
		v    float64
	}{{"vcpus_per_gpu", t.VCPUsPerGPU}, {"ram_gb_per_gpu", t.RAMGBPerGPU}, {"storage_gb_per_gpu", t.StorageGBPerGPU}} {
		if v.v < 0 || math.IsNaN(v.v) || math.IsInf(v.v, 0) {
			return fmt.Errorf("tensordock: %s must be a non-negative number, got %v", v.name, v.v)
		}
	}
	return nil
}

// Scraper is the TensorDock source; its options are the typical machine
// priced with each GPU.
type Scraper struct {
	VCPUsPerGPU     float64 `yaml:"vcpus_per_gpu"`
	RAMGBPerGPU     float64 `yaml:"ram_gb_per_gpu"`
	StorageGBPerGPU float64 `yaml:"storage_gb_per_gpu"`
}

// Typical is the configured typical machine.
func (s *Scraper) Typical() Typical {
	return Typical{VCPUsPerGPU: s.VCPUsPerGPU, RAMGBPerGPU: s.RAMGBPerGPU, StorageGBPerGPU: s.StorageGBPerGPU}
}

// Check disables the source until the API key is set.
func (s *Scraper) Check(env *scrapers.Env) error {
	if env.Secret(APIKeyEnv) == "" {
		return &scrapers.Disabled{Reason: "needs " + APIKeyEnv +
			" (a TensorDock API v2 key, created in the TensorDock dashboard's Developer Settings; the legacy keyless v0 API is retired)"}
	}
	return nil
}

// Scrape fetches the locations and prices them.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	if err := s.Check(env); err != nil {
		return scrapers.Result{}, err
	}
	if err := s.Typical().validate(); err != nil {
		return scrapers.Result{}, err
	}
	c, err := env.NewCollector(ctx)
	if err != nil {
		return scrapers.Result{}, err
	}
	hdr := http.Header{"Accept": {"application/json"}, "Authorization": {"Bearer " + env.Secret(APIKeyEnv)}}
	resp, err := env.Fetch(ctx, c, scrapers.Request{URL: env.URL(), Header: hdr})
	if err != nil {
		return scrapers.Result{}, err
	}
	obs, err := Parse(resp.Body, env.URL(), s.Typical())
	return scrapers.Result{Observations: obs}, err
}

type resources struct {
	MaxVCPUs     scrapers.Number `json:"max_vcpus"`
	MaxRAMGB     scrapers.Number `json:"max_ram_gb"`
	MaxStorageGB scrapers.Number `json:"max_storage_gb"`
}

type pricing struct {
	PerVCPU    scrapers.Number `json:"per_vcpu_hr"`
	PerGBRAM   scrapers.Number `json:"per_gb_ram_hr"`
	PerGBStore scrapers.Number `json:"per_gb_storage_hr"`
}

type gpu struct {
	V0Name      string          `json:"v0Name"`
	DisplayName string          `json:"displayName"`
	MaxCount    scrapers.Number `json:"max_count"`
	PricePerHr  scrapers.Number `json:"price_per_hr"`
	Resources   *resources      `json:"resources"`
	Pricing     *pricing        `json:"pricing"`
}

type location struct {
	ID            string `json:"id"`
	City          string `json:"city"`
	StateProvince string `json:"stateprovince"`
	Country       string `json:"country"`
	GPUs          []gpu  `json:"gpus"`
}

type response struct {
	Data *struct {
		Locations *[]location `json:"locations"`
	} `json:"data"`
	// Error shapes: {"error": "…"} or {"message": "…"}.
	Error   string `json:"error"`
	Message string `json:"message"`
}

// maxGPUs bounds the GPU counts one deployment is said to take (normalize
// rejects more than 1024).
const maxGPUs = 1024

var memoryKey = regexp.MustCompile(`^(.+?)-(\d+(?:\.\d+)?)gb$`)

// GPUName splits a TensorDock GPU model key (v0Name, "l40-pcie-48gb") into
// the name aliases are kept under ("l40-pcie") and the memory it states
// (48).
func GPUName(key string) (name string, memoryGB float64) {
	k := strings.ToLower(strings.TrimSpace(key))
	if m := memoryKey.FindStringSubmatch(k); m != nil {
		memoryGB, _ = strconv.ParseFloat(m[2], 64)
		return m[1], memoryGB
	}
	return k, 0
}

// Parse prices every GPU model of every location for the typical machine
// (see the package comment). GPUCount is how many typical machines' worth
// of GPUs one deployment can take now: the free GPUs (max_count), and
// enough vCPUs, RAM and disk for each. A GPU model whose price or
// per-resource prices are missing or not numbers is an error, joined into
// the returned one (the rest still parses): the answer's layout changed.
func Parse(body []byte, url string, typ Typical) ([]pricewatch.Observation, error) {
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		return nil, fmt.Errorf("layout change: expected an object with data.locations, got an array: %s", snippet(b))
	}
	var r response
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, err
	}
	if r.Data == nil || r.Data.Locations == nil {
		if msg := strings.TrimSpace(r.Error + " " + r.Message); msg != "" {
			return nil, fmt.Errorf("tensordock API error: %s", msg)
		}
		return nil, fmt.Errorf("%w: no data.locations", scrapers.ErrNothingParsed)
	}
	var (
		out  []pricewatch.Observation
		errs []error
	)
	for _, loc := range *r.Data.Locations {
		id := strings.TrimSpace(loc.ID)
		if id == "" {
			if len(loc.GPUs) > 0 {
				errs = append(errs, fmt.Errorf("tensordock: a location without id offers %d GPU models", len(loc.GPUs)))
			}
			continue
		}
		region := join(loc.Country, loc.StateProvince, loc.City)
		for _, g := range loc.GPUs {
			o, err := observation(id, region, g, typ, url)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			o.Country = scrapers.CountryCode(loc.Country)
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		if len(errs) > 0 {
			return nil, errors.Join(append([]error{scrapers.ErrNothingParsed}, errs...)...)
		}
		return nil, fmt.Errorf("%w: no location offers a GPU", scrapers.ErrNothingParsed)
	}
	return out, errors.Join(errs...)
}

func observation(locID, region string, g gpu, typ Typical, url string) (pricewatch.Observation, error) {
	key := strings.TrimSpace(g.V0Name)
	where := locID + "/" + key
	if key == "" {
		return pricewatch.Observation{}, fmt.Errorf("tensordock location %s: a GPU without v0Name (%q)", locID, g.DisplayName)
	}
	if !g.PricePerHr.Valid || !(g.PricePerHr.Value > 0) || math.IsInf(g.PricePerHr.Value, 0) {
		return pricewatch.Observation{}, fmt.Errorf("tensordock %s: price_per_hr %q is not a price", where, g.PricePerHr.Raw())
	}
	extra, slots, err := extras(g, typ)
	if err != nil {
		return pricewatch.Observation{}, fmt.Errorf("tensordock %s: %w", where, err)
	}
	price := g.PricePerHr.Value + extra
	if !(price > 0) || math.IsInf(price, 0) {
		return pricewatch.Observation{}, fmt.Errorf("tensordock %s: price %v is not a price", where, price)
	}
	free := 0.0
	if g.MaxCount.Valid && g.MaxCount.Value > 0 && !math.IsInf(g.MaxCount.Value, 0) {
		free = math.Min(math.Floor(g.MaxCount.Value), maxGPUs)
	}
	n := int(math.Min(free, math.Min(slots, maxGPUs)))
	name, mem := GPUName(key)
	o := pricewatch.Observation{
		Source: "tensordock", OfferID: where, Region: region,
		GPUName: name, GPUCount: max(n, 1), GPUMemoryGB: mem,
		Price: price, Currency: "USD", Unit: pricewatch.PerHour, PerGPU: true,
		Mode: pricewatch.ModeOnDemand, URL: url,
		Stock: fmt.Sprintf("%d GPUs free", int(free)),
	}
	// The price pays for the typical machine of each GPU: what comes with
	// the GPUCount GPUs is that many typical shares (RAM and disk in GB,
	// as TensorDock prices them).
	k := float64(o.GPUCount)
	o.VCPUs, o.RAMGB, o.DiskGB = typ.VCPUsPerGPU*k, typ.RAMGBPerGPU*k, typ.StorageGBPerGPU*k
	o.RentURL = RentURL
	// One deployment takes any count of the GPUs up to the typical
	// machines that fit now; none: kept, not rentable now, no rent terms.
	scrapers.PerGPUUpTo(&o, 1, n)
	o.Available = pricewatch.AvailableNo
	if n >= 1 {
		o.Available = pricewatch.AvailableYes
	}
	return o, nil
}

// extras is the price of the typical vCPUs, RAM and disk that go with one
// GPU, and how many GPUs' worth of them one deployment can have (+Inf when
// the typical machine asks for none of anything). A resource the machine
// needs whose limit or price is missing is an error.
func extras(g gpu, typ Typical) (price, slots float64, err error) {
	slots = math.Inf(1)
	if g.Resources == nil || g.Pricing == nil {
		if typ.VCPUsPerGPU == 0 && typ.RAMGBPerGPU == 0 && typ.StorageGBPerGPU == 0 {
			return 0, slots, nil
		}
		return 0, 0, errors.New("no resources or pricing block")
	}
	for _, p := range []struct {
		name         string
		limit, price scrapers.Number
		need         float64
	}{
		{"vcpu", g.Resources.MaxVCPUs, g.Pricing.PerVCPU, typ.VCPUsPerGPU},
		{"ram_gb", g.Resources.MaxRAMGB, g.Pricing.PerGBRAM, typ.RAMGBPerGPU},
		{"storage_gb", g.Resources.MaxStorageGB, g.Pricing.PerGBStore, typ.StorageGBPerGPU},
	} {
		if p.need <= 0 {
			continue
		}
		if !p.price.Valid || p.price.Value < 0 || math.IsInf(p.price.Value, 0) {
			return 0, 0, fmt.Errorf("price per %s %q is not a price", p.name, p.price.Raw())
		}
		if !p.limit.Valid || p.limit.Value < 0 || math.IsInf(p.limit.Value, 0) {
			return 0, 0, fmt.Errorf("max %s %q is not a number", p.name, p.limit.Raw())
		}
		slots = math.Min(slots, math.Floor(p.limit.Value/p.need))
		price += p.need * p.price.Value
	}
	return price, slots, nil
}

// join joins country, state or province and city ("United States/Texas/Austin").
func join(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "/")
}

func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	return s
}
