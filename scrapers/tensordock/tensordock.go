// Package tensordock scrapes TensorDock's legacy marketplace
// (GET https://marketplace.tensordock.com/api/v0/client/deploy/hostnodes,
// no key): per host node, its location and the price of each resource per
// unit-hour in USD — each GPU model, a vCPU, a GB of RAM, a GB of disk.
//
// A TensorDock machine is priced as the sum of the parts one chooses, so
// there is no instance price to read. pricewatch prices a typical machine
// per GPU: one GPU with VCPUsPerGPU vCPUs, RAMGBPerGPU GB of RAM and
// StorageGBPerGPU GB of disk (defaults 8, 32, 100), i.e.
//
//	per GPU-hour = gpu.price + vcpus × cpu.price + ram × ram.price + storage × storage.price
//
// offered only where the host has that much of each for at least one GPU.
// The endpoint is the one dstackai/gpuhunt read until it dropped TensorDock
// (2026-02); it may be retired, in which case the source fails, named.
package tensordock

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// The typical resources priced with each GPU.
const (
	DefaultVCPUsPerGPU     = 8
	DefaultRAMGBPerGPU     = 32
	DefaultStorageGBPerGPU = 100
)

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "tensordock",
		Description: "TensorDock legacy marketplace host nodes (per-resource prices)",
		Auth:        "none",
		Yields:      "ondemand; USD per GPU-hour of a typical machine (GPU + 8 vCPU + 32 GB RAM + 100 GB disk per GPU, configurable)",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://marketplace.tensordock.com/api/v0/client/deploy/hostnodes",
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

// Scrape fetches the host nodes and prices them.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	if err := s.Typical().validate(); err != nil {
		return scrapers.Result{}, err
	}
	c, err := env.NewCollector(ctx)
	if err != nil {
		return scrapers.Result{}, err
	}
	resp, err := env.Fetch(ctx, c, scrapers.Request{URL: env.URL(), Header: http.Header{"Accept": {"application/json"}}})
	if err != nil {
		return scrapers.Result{}, err
	}
	obs, err := Parse(resp.Body, env.URL(), s.Typical())
	return scrapers.Result{Observations: obs}, err
}

type resource struct {
	Amount scrapers.Number `json:"amount"`
	Price  scrapers.Number `json:"price"`
}

type hostnode struct {
	Location struct {
		Country string `json:"country"`
		Region  string `json:"region"`
		City    string `json:"city"`
	} `json:"location"`
	Specs struct {
		CPU     *resource `json:"cpu"`
		RAM     *resource `json:"ram"`
		Storage *resource `json:"storage"`
		GPU     map[string]struct {
			Amount scrapers.Number `json:"amount"`
			Price  scrapers.Number `json:"price"`
			VRAM   scrapers.Number `json:"vram"`
		} `json:"gpu"`
	} `json:"specs"`
}

type response struct {
	Hostnodes *map[string]hostnode `json:"hostnodes"`
	Success   *bool                `json:"success"`
	Error     string               `json:"error"`
}

var memoryKey = regexp.MustCompile(`^(.+?)-(\d+(?:\.\d+)?)gb$`)

// GPUName splits a marketplace GPU key ("l40-pcie-48gb") into the name
// aliases are kept under ("l40-pcie") and the memory it states (48).
func GPUName(key string) (name string, memoryGB float64) {
	k := strings.ToLower(strings.TrimSpace(key))
	if m := memoryKey.FindStringSubmatch(k); m != nil {
		memoryGB, _ = strconv.ParseFloat(m[2], 64)
		return m[1], memoryGB
	}
	return k, 0
}

// Parse prices every GPU model of every host node for the typical machine
// (see the package comment). GPUCount is how many such GPU slices the host
// can still give out: the GPUs available and enough vCPUs, RAM and disk for
// each. Hosts and GPU models are visited in sorted order.
func Parse(body []byte, url string, typ Typical) ([]pricewatch.Observation, error) {
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		return nil, fmt.Errorf("layout change: expected an object with hostnodes, got an array: %s", snippet(b))
	}
	var r response
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, err
	}
	if r.Hostnodes == nil {
		if r.Error != "" || r.Success != nil && !*r.Success {
			return nil, fmt.Errorf("tensordock API error: %s", r.Error)
		}
		return nil, fmt.Errorf("%w: no hostnodes", scrapers.ErrNothingParsed)
	}
	hosts := *r.Hostnodes
	ids := make([]string, 0, len(hosts))
	for id := range hosts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []pricewatch.Observation
	for _, id := range ids {
		h := hosts[id]
		sp := h.Specs
		base, slots, ok := extras(sp.CPU, sp.RAM, sp.Storage, typ)
		if !ok || strings.TrimSpace(id) == "" {
			continue
		}
		region := location(h.Location.Country, h.Location.Region, h.Location.City)
		keys := make([]string, 0, len(sp.GPU))
		for k := range sp.GPU {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			g := sp.GPU[k]
			if !g.Price.Valid || !(g.Price.Value > 0) || !g.Amount.Valid || g.Amount.Value < 1 {
				continue // priced at nothing, or every GPU of the model rented
			}
			n := math.Min(math.Floor(g.Amount.Value), slots)
			if n < 1 || n > 1e6 {
				continue
			}
			price := g.Price.Value + base
			if !(price > 0) || math.IsInf(price, 0) {
				continue
			}
			name, mem := GPUName(k)
			if g.VRAM.Valid && g.VRAM.Value > 0 {
				mem = g.VRAM.Value
			}
			out = append(out, pricewatch.Observation{
				Source: "tensordock", OfferID: id + "/" + k, Region: region,
				GPUName: name, GPUCount: int(n), GPUMemoryGB: mem,
				Price: price, Currency: "USD", Unit: pricewatch.PerHour, PerGPU: true,
				Mode: pricewatch.ModeOnDemand, URL: url,
				// A machine takes any count of the GPUs up to GPUCount,
				// each with its typical share (no GPUCounts: 1..GPUCount).
				RentUnit: pricewatch.RentPerGPU,
			})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no host node with a priced GPU and room for the typical machine", scrapers.ErrNothingParsed)
	}
	return out, nil
}

// extras is the price of the typical vCPUs, RAM and disk that go with one
// GPU, and how many GPUs' worth of them the host has (+Inf when the typical
// machine asks for none of anything). ok is false when a resource block or
// its price is missing or the host has not enough for one GPU.
func extras(cpu, ram, storage *resource, typ Typical) (price, slots float64, ok bool) {
	slots = math.Inf(1)
	for _, p := range []struct {
		r    *resource
		need float64
	}{{cpu, typ.VCPUsPerGPU}, {ram, typ.RAMGBPerGPU}, {storage, typ.StorageGBPerGPU}} {
		if p.r == nil || !p.r.Price.Valid || p.r.Price.Value < 0 || !p.r.Amount.Valid {
			return 0, 0, false
		}
		if p.need <= 0 {
			continue
		}
		fit := math.Floor(p.r.Amount.Value / p.need)
		if fit < 1 {
			return 0, 0, false
		}
		slots = math.Min(slots, fit)
		price += p.need * p.r.Price.Value
	}
	return price, slots, true
}

// location joins country, region and city ("United States/Texas/Dallas").
func location(parts ...string) string {
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
