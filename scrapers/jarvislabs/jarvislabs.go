// Package jarvislabs scrapes JarvisLabs' server_meta endpoint
// (GET https://backendn.jarvislabs.net/misc/server_meta, Bearer API key):
// per GPU type and region, the on-demand price_per_hour and the spot_price,
// both in USD per GPU-hour.
//
// server_meta lists a GPU type and region once per workload type
// ("container" and "vm", older rows null) with the same price: the same
// GPUs rented two ways, not two offers. They are merged into one offer per
// GPU type, region and mode, at the lowest price any workload type asks
// (the price a renter of that GPU pays when free to choose how to run it).
//
// Spot is for containers only: JarvisLabs rents spot capacity as
// containers (templates), not as VMs (dstackai/gpuhunt's jarvislabs
// provider @ 35841515: "JarvisLabs supports spot for containers/templates,
// not VMs", so it publishes no spot offer; JarvisLabs' own SDK asks for
// spot through a template). The spot offers here are the container price
// of the GPU type: whoever needs a VM rents it on demand. pricewatch's
// offers have no field for the workload a price is for, so this is said
// in the source's description (Yields), the fixture's PROVENANCE.md and
// the README's sources table, and the spot offers link the templates page
// where containers are launched (RentURL).
package jarvislabs

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// APIKeyEnv carries the JarvisLabs API key.
const APIKeyEnv = "PRICEWATCH_JARVISLABS_API_KEY"

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "jarvislabs",
		Description: "JarvisLabs server_meta (GPU types, regions, prices)",
		Auth:        "Bearer API key in " + APIKeyEnv,
		Yields:      "ondemand; spot for containers only (not VMs); USD per GPU-hour",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://backendn.jarvislabs.net/misc/server_meta",
			Schedule:   "25 */3 * * *",
			StaleAfter: 450 * time.Minute,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the JarvisLabs source. It has no options beyond the common ones.
type Scraper struct{}

// Check disables the source until the API key is set.
func (s *Scraper) Check(env *scrapers.Env) error {
	if env.Secret(APIKeyEnv) == "" {
		return &scrapers.Disabled{Reason: "needs " + APIKeyEnv + " (a JarvisLabs API key, from the JarvisLabs account's API keys page)"}
	}
	return nil
}

// Scrape fetches server_meta with the key and parses it.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	if err := s.Check(env); err != nil {
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
	obs, err := Parse(resp.Body, env.URL())
	return scrapers.Result{Observations: obs}, err
}

type serverMeta struct {
	GPUType      string          `json:"gpu_type"`
	Region       string          `json:"region"`
	PricePerHour scrapers.Number `json:"price_per_hour"`
	SpotPrice    scrapers.Number `json:"spot_price"`
	VRAM         scrapers.Number `json:"vram"`
	NumGPUs      scrapers.Number `json:"num_gpus"`
	// cpus_per_gpu and ram_per_gpu come with each GPU rented (gpuhunt's
	// jarvislabs provider multiplies both by the GPU count).
	CPUsPerGPU scrapers.Number `json:"cpus_per_gpu"`
	RAMPerGPU  scrapers.Number `json:"ram_per_gpu"`
	// GPUs free now: on demand effective_num_free_devices where given,
	// else num_free_devices; spot num_free_devices. That is how
	// JarvisLabs' own SDK counts them (jarvislabsai/jarvislabs
	// jarvislabs/server_meta.py @ 610357e, _available_devices); it never
	// reads the spot_num_free_devices that gpuhunt's test fixture carries.
	EffectiveFree scrapers.Number `json:"effective_num_free_devices"`
	Free          scrapers.Number `json:"num_free_devices"`
}

// freeCount is the first of the counts that is a whole number ≥ 0, or -1.
func freeCount(counts ...scrapers.Number) int {
	for _, c := range counts {
		if c.Valid && c.Value >= 0 && c.Value == math.Trunc(c.Value) && c.Value <= 1e6 {
			return int(c.Value)
		}
	}
	return -1
}

type response struct {
	ServerMeta *[]serverMeta `json:"server_meta"`
	Detail     any           `json:"detail"`
}

// Parse turns a server_meta answer into observations: per GPU type and
// region, on demand from price_per_hour and spot from spot_price, per
// GPU-hour; GPUCount is num_gpus, the most GPUs one instance takes (1 when
// absent), and one instance takes any count up to it that is free now
// (effective_num_free_devices, else num_free_devices; for spot
// num_free_devices, as JarvisLabs' SDK counts it); GPU memory is vram. Container and VM rows of one GPU type and
// region are one offer (see the package comment).
func Parse(body []byte, url string) ([]pricewatch.Observation, error) {
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		return nil, fmt.Errorf("layout change: expected an object with server_meta, got an array: %s", snippet(b))
	}
	var r response
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, err
	}
	if r.ServerMeta == nil {
		if r.Detail != nil {
			return nil, fmt.Errorf("jarvislabs API error: %v", r.Detail)
		}
		return nil, fmt.Errorf("%w: no server_meta", scrapers.ErrNothingParsed)
	}
	var out []pricewatch.Observation
	at := map[string]int{}
	for _, m := range *r.ServerMeta {
		name := strings.TrimSpace(m.GPUType)
		if name == "" {
			continue
		}
		count := 1
		if m.NumGPUs.Valid && m.NumGPUs.Value >= 1 && m.NumGPUs.Value <= 1024 && m.NumGPUs.Value == math.Trunc(m.NumGPUs.Value) {
			count = int(m.NumGPUs.Value)
		}
		mem := 0.0
		if m.VRAM.Valid && m.VRAM.Value > 0 {
			mem = m.VRAM.Value
		}
		region := strings.TrimSpace(m.Region)
		for _, p := range []struct {
			mode  pricewatch.Mode
			price scrapers.Number
			free  int
		}{
			{pricewatch.ModeOnDemand, m.PricePerHour, freeCount(m.EffectiveFree, m.Free)},
			{pricewatch.ModeSpot, m.SpotPrice, freeCount(m.Free)},
		} {
			if !p.price.Valid || !(p.price.Value > 0) {
				continue
			}
			o := pricewatch.Observation{
				Source: "jarvislabs", OfferID: name, Region: region, GPUName: name,
				GPUCount: count, GPUMemoryGB: mem, Price: p.price.Value, Currency: "USD",
				Unit: pricewatch.PerHour, PerGPU: true, Mode: p.mode, URL: url,
			}
			// An instance takes 1 up to num_gpus GPUs, no more than are
			// free now (gpuhunt's supported counts); none free: kept, not
			// available now. Without a free count, up to num_gpus.
			scrapers.FreeGPUs(&o, count, p.free)
			// What comes with the GPUCount GPUs: the per-GPU shares scaled.
			// ram_per_gpu is a bare number of GB of memory, read as GiB
			// (memory's GB is the binary unit).
			o.VCPUs, o.RAMGB = perGPU(m.CPUsPerGPU, o.GPUCount), perGPU(m.RAMPerGPU, o.GPUCount)
			o.RentURL = RentURL
			k := pricewatch.OfferKey(o.Source, o.OfferID, o.Region, o.Mode)
			if i, dup := at[k]; dup {
				// Another workload type of the same GPUs: keep the cheaper,
				// and the larger instance size where the price ties.
				if o.Price < out[i].Price || o.Price == out[i].Price && o.GPUCount > out[i].GPUCount {
					out[i] = o
				}
				continue
			}
			at[k] = len(out)
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}

func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	return s
}

// RentURL is where a JarvisLabs instance is launched (its cloud dashboard).
const RentURL = "https://jarvislabs.ai/templates"

// perGPU is a per-GPU share times n GPUs; 0 when the share is not stated.
func perGPU(share scrapers.Number, n int) float64 {
	if !share.Valid || !(share.Value > 0) || share.Value > 1e6 {
		return 0
	}
	return share.Value * float64(n)
}
