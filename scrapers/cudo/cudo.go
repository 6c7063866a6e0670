// Package cudo scrapes CUDO Compute's VM machine types, GET
// https://rest.compute.cudo.org/v1/vms/machine-types-2, in USD; an API key
// (PRICEWATCH_CUDO_API_KEY), when set, is sent as a Bearer token (gpuhunt's
// former Cudo provider read the machine types without one).
//
// The answer is {"machineTypes": [...]}, one per machine type and data
// center (dataCenterId, machineType, gpuModel, gpuModelId), priced by the
// component, each {"value": "<USD per hour>"}: gpuPriceHr per GPU,
// vcpuPriceHr per vCPU, memoryGibPriceHr per GiB of RAM (and
// minStorageGibPriceHr, ipv4PriceHr per VM). maxGpuFree is the most GPUs
// free on one host now, totalGpuFree those free in the data center.
//
// A VM is priced as its parts (SkyPilot's Cudo fetcher and gpuhunt's
// former provider both add gpu × gpuPriceHr + vCPUs × vcpuPriceHr + GiB ×
// memoryGibPriceHr). The offer is per GPU: one GPU with VCPUsPerGPU vCPUs
// and RAMGiBPerGPU GiB (defaults 2 and 4, the smallest VM SkyPilot's
// catalog prices, so that its 1-GPU rows are this price exactly); disk and
// IPv4, billed per VM, are not included. Rented 1 GPU up to maxGpuFree.
// Machine types without a GPU model are left out.
package cudo

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

// KeyEnv holds the optional CUDO Compute API key (or KeyEnv+"_FILE").
const KeyEnv = "PRICEWATCH_CUDO_API_KEY"

// RentURL is where a CUDO Compute VM is created (its console).
const RentURL = "https://compute.cudo.org/"

// The default per-GPU share of a VM.
const (
	DefaultVCPUsPerGPU  = 2
	DefaultRAMGiBPerGPU = 4
)

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "cudo",
		Description: "CUDO Compute machine types (machine-types-2): per-component prices per data center",
		Auth:        "optional Bearer API key in " + KeyEnv,
		Yields: "ondemand; USD per GPU-hour = gpuPriceHr + vcpus_per_gpu × vcpuPriceHr + ram_gib_per_gpu × memoryGibPriceHr " +
			"(defaults 2 vCPUs, 4 GiB; disk and IPv4 not included), per data center; 1 to maxGpuFree GPUs",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://rest.compute.cudo.org/v1/vms/machine-types-2",
			Schedule:   "50 */3 * * *",
			StaleAfter: 450 * time.Minute,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper {
			return &Scraper{VCPUsPerGPU: DefaultVCPUsPerGPU, RAMGiBPerGPU: DefaultRAMGiBPerGPU}
		},
	})
}

// Scraper is the CUDO Compute source.
type Scraper struct {
	// VCPUsPerGPU and RAMGiBPerGPU are the vCPUs and GiB of RAM priced
	// with each GPU.
	VCPUsPerGPU  float64 `yaml:"vcpus_per_gpu"`
	RAMGiBPerGPU float64 `yaml:"ram_gib_per_gpu"`
}

// Scrape fetches the machine types once.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	hdr := http.Header{"Accept": {"application/json"}}
	if key := env.Secret(KeyEnv); key != "" {
		hdr.Set("Authorization", "Bearer "+key)
	}
	return scrapers.FetchOne(ctx, env, "machine types", scrapers.Request{URL: env.URL(), Header: hdr},
		func(b []byte) ([]pricewatch.Observation, error) { return s.Parse(b, env.URL()) })
}

type price struct {
	Value scrapers.Number `json:"value"`
}

// MachineType is one machine type in one data center, as listed.
type MachineType struct {
	DataCenterID     string `json:"dataCenterId"`
	MachineType      string `json:"machineType"`
	GPUModel         string `json:"gpuModel"`
	GPUModelID       string `json:"gpuModelId"`
	VCPUPriceHr      price  `json:"vcpuPriceHr"`
	MemoryGiBPriceHr price  `json:"memoryGibPriceHr"`
	GPUPriceHr       price  `json:"gpuPriceHr"`
	MaxGPUFree       *int   `json:"maxGpuFree"`
	TotalGPUFree     *int   `json:"totalGpuFree"`
}

// VMPrice is what a VM of gpus GPUs, vcpus vCPUs and ramGiB GiB costs an
// hour (disk and IPv4 aside); ok is false when a component price is
// missing.
func (m MachineType) VMPrice(gpus, vcpus, ramGiB float64) (float64, bool) {
	g, ok1 := m.GPUPriceHr.Value.Get()
	c, ok2 := m.VCPUPriceHr.Value.Get()
	r, ok3 := m.MemoryGiBPriceHr.Value.Get()
	if !ok1 || !ok2 || !ok3 || g < 0 || c < 0 || r < 0 {
		return 0, false
	}
	return gpus*g + vcpus*c + ramGiB*r, true
}

// ParseMachineTypes reads the answer's machine types.
func ParseMachineTypes(body []byte) ([]MachineType, error) {
	var r struct {
		MachineTypes *[]MachineType `json:"machineTypes"`
		Code         any            `json:"code"`
		Message      string         `json:"message"`
	}
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, err
	}
	if r.MachineTypes == nil {
		if r.Message != "" {
			return nil, fmt.Errorf("API error %v: %s", r.Code, r.Message)
		}
		return nil, fmt.Errorf("%w: no machineTypes array in the answer", scrapers.ErrNothingParsed)
	}
	return *r.MachineTypes, nil
}

// Parse turns the machine types into per-GPU observations.
func (s *Scraper) Parse(body []byte, src string) ([]pricewatch.Observation, error) {
	mts, err := ParseMachineTypes(body)
	if err != nil {
		return nil, err
	}
	vcpus, ram := max(s.VCPUsPerGPU, 0), max(s.RAMGiBPerGPU, 0)
	var out []pricewatch.Observation
	for _, m := range mts {
		gpu, dc, mt := strings.TrimSpace(m.GPUModel), strings.TrimSpace(m.DataCenterID), strings.TrimSpace(m.MachineType)
		p, ok := m.VMPrice(1, vcpus, ram)
		if gpu == "" || mt == "" || !ok || !(p > 0) || math.IsInf(p, 0) {
			continue
		}
		o := pricewatch.Observation{
			Source: "cudo", Provider: "cudo", OfferID: mt, Region: dc,
			GPUName: gpu, GPUCount: 1, Price: p, PerGPU: true,
			Currency: "USD", Unit: pricewatch.PerHour, Mode: pricewatch.ModeOnDemand, URL: src,
			Machine: pricewatch.Machine{RentURL: RentURL},
		}
		// The offer is the largest VM free now (GPUCount GPUs with their
		// share), rented 1 GPU up to it.
		free := -1
		if m.MaxGPUFree != nil {
			free = max(*m.MaxGPUFree, 0)
		}
		o.GPUCount = max(free, 1)
		o.VCPUs, o.RAMGB = vcpus*float64(o.GPUCount), ram*float64(o.GPUCount)
		scrapers.FreeGPUs(&o, o.GPUCount, free)
		if free > 0 && m.TotalGPUFree != nil {
			o.Stock = fmt.Sprintf("%d GPUs free on one host, %d in the data center", free, *m.TotalGPUFree)
		}
		out = append(out, o)
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}
