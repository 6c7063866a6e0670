// Package cloudrift scrapes CloudRift's instance type list,
// POST https://api.cloudrift.ai/api/v1/instance-types/list with
// {"version", "data": {"selector": "All"}} (answered without credentials),
// in USD per instance.
//
// Units: cost_per_hour is in US cents (a variant's 39 is 0.39 USD an
// hour; dstackai/gpuhunt's CloudRift provider divides by 100 likewise), for
// the whole variant: gpu_count GPUs rented together (fixed unit). vram is
// the bytes of one GPU.
//
// One offer per variant and datacenter listed in nodes_per_dc (the
// datacenters the variant is offered in, as gpuhunt reads them) or in
// available_nodes_per_dc, which gives the free nodes there: > 0 available,
// 0 not, absent unknown. A priced variant in no datacenter is one offer
// with no region, not available (SkyPilot's fetcher keeps it likewise). The card is brand_short ("RTX 4090", "RTX PRO 6000") as
// written, for normalize to resolve; CloudRift states no form factor or
// edition beyond it.
//
// Billing: CloudRift publishes no increment: the default applies.
package cloudrift

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// APIVersion is the request version sent (gpuhunt sends 2025-03-21; the
// answer names its own).
const APIVersion = "2025-03-21"

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "cloudrift",
		Description: "CloudRift instance-types/list (public), GPU variants per datacenter",
		Auth:        "none",
		Yields:      "ondemand; USD per instance-hour (cost_per_hour in cents ÷ 100); availability from the free nodes per datacenter",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://api.cloudrift.ai/api/v1/instance-types/list",
			Schedule:   "5 * * * *",
			StaleAfter: 150 * time.Minute,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the CloudRift source.
type Scraper struct{}

// RequestBody is the body sent: every instance type.
func RequestBody() []byte {
	b, _ := json.Marshal(map[string]any{"version": APIVersion, "data": map[string]any{"selector": "All"}})
	return b
}

// Scrape posts the list request once.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	return scrapers.FetchOne(ctx, env, "cloudrift", scrapers.Request{
		Method: http.MethodPost, URL: env.URL(), Body: RequestBody(),
		Header: http.Header{"Accept": {"application/json"}, "Content-Type": {"application/json"}},
	}, func(b []byte) ([]pricewatch.Observation, error) { return Parse(b, env.URL()) })
}

type variant struct {
	Name           string          `json:"name"`
	GPUCount       int             `json:"gpu_count"`
	VRAM           float64         `json:"vram"`
	LogicalCPUs    float64         `json:"logical_cpu_count"`
	DRAM           float64         `json:"dram"`
	Disk           float64         `json:"disk"`
	CostPerHour    scrapers.Number `json:"cost_per_hour"`
	NodesPerDC     map[string]int  `json:"nodes_per_dc"`
	AvailablePerDC map[string]int  `json:"available_nodes_per_dc"`
}

type instanceType struct {
	Name       string    `json:"name"`
	BrandShort string    `json:"brand_short"`
	Variants   []variant `json:"variants"`
}

type response struct {
	Data *struct {
		InstanceTypes *[]instanceType `json:"instance_types"`
	} `json:"data"`
}

const gib = 1 << 30

// Parse turns the answer into observations; an answer without a priced
// GPU variant is ErrNothingParsed. A bare JSON string is the API's error.
func Parse(body []byte, src string) ([]pricewatch.Observation, error) {
	var msg string
	if json.Unmarshal(body, &msg) == nil {
		return nil, fmt.Errorf("API error: %s", msg)
	}
	var r response
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, err
	}
	if r.Data == nil || r.Data.InstanceTypes == nil {
		return nil, fmt.Errorf("%w: no data.instance_types in the response", scrapers.ErrNothingParsed)
	}
	var out []pricewatch.Observation
	for _, t := range *r.Data.InstanceTypes {
		brand := strings.TrimSpace(t.BrandShort)
		for _, v := range t.Variants {
			cents, ok := v.CostPerHour.Get()
			id := strings.TrimSpace(v.Name)
			if id == "" || v.GPUCount <= 0 || !ok || !(cents > 0) || math.IsInf(cents, 0) {
				continue
			}
			o := pricewatch.Observation{
				Source: "cloudrift", Provider: "cloudrift", OfferID: id,
				Price: cents / 100, Currency: "USD", Unit: pricewatch.PerHour, Mode: pricewatch.ModeOnDemand, URL: src,
				GPUName: brand, GPUCount: v.GPUCount, GPUMemoryGB: v.VRAM / gib, RentUnit: pricewatch.RentFixed,
			}
			if brand == "" {
				o.GPUName, o.GPUCount, o.RentUnit = id, 1, "" // model unknown: reported, never ranked
			}
			details(&o, v, brand)
			// The datacenters of nodes_per_dc and of available_nodes_per_dc.
			seen := map[string]bool{}
			for _, m := range []map[string]int{v.NodesPerDC, v.AvailablePerDC} {
				for dc := range m {
					if dc = strings.TrimSpace(dc); dc != "" {
						seen[dc] = true
					}
				}
			}
			dcs := slices.Sorted(maps.Keys(seen))
			if len(dcs) == 0 {
				// Priced but in no datacenter (most types of the live
				// listing, 2026-10-06): kept, with no region, not rentable now.
				o.Available, o.Stock = pricewatch.AvailableNo, "no datacenter listed"
				out = append(out, o)
				continue
			}
			for _, dc := range dcs {
				o.Region, o.Available, o.Stock = dc, "", ""
				if v.AvailablePerDC != nil {
					free := v.AvailablePerDC[dc]
					o.Available, o.Stock = pricewatch.AvailableNo, "0 nodes free"
					if free > 0 {
						o.Available, o.Stock = pricewatch.AvailableYes, strconv.Itoa(free)+" nodes free"
					}
				}
				out = append(out, o)
			}
		}
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}

// RentURL is where a CloudRift instance is rented (its console).
const RentURL = "https://console.cloudrift.ai/"

// details sets what comes with a variant (its gpu_count GPUs): its
// logical_cpu_count as vCPUs (a vCPU is a hardware thread; cpu_count counts
// cores, half as many on the SMT hosts), dram and disk from bytes to GiB
// (gpuhunt's cloudrift provider divides both by 1024³, as it does vram), and
// NVLink where the brand names an SXM board ("V100 SXM2").
func details(o *pricewatch.Observation, v variant, brand string) {
	if v.LogicalCPUs > 0 && v.LogicalCPUs < 1e5 {
		o.VCPUs = v.LogicalCPUs
	}
	if v.DRAM > 0 && v.DRAM < 1e18 {
		o.RAMGB = v.DRAM / gib
	}
	if v.Disk > 0 && v.Disk < 1e18 {
		o.DiskGB = v.Disk / gib
	}
	if strings.Contains(strings.ToUpper(brand), "SXM") {
		o.Interconnect = "sxm"
	}
	o.RentURL = RentURL
}
