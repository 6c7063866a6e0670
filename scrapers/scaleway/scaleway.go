// Package scaleway scrapes Scaleway's Instance product list,
// GET https://api.scaleway.com/instance/v1/zones/<zone>/products/servers
// (readable without a key), for its GPU types, in EUR per instance, one
// zone after the other (config zones; the zone in url is replaced).
//
// Billing: hourly_price is EUR per instance-hour (excluding VAT; the
// answer states no currency: Scaleway prices in euros), the on-demand
// price; monthly_price is hourly_price × 730 on every captured type and
// is not read. Scaleway sells no spot or committed terms here.
//
// GPU model and count: gpu is the count and gpu_info.gpu_name the model
// ("L4", "H100-PCIe", "H100-SXM", "P100"), gpu_info.gpu_memory the bytes of
// one GPU; a type rents whole (fixed unit). A type with gpu > 0 but no
// gpu_info is kept under its name with one GPU, so that normalize reports
// it. end_of_service types are kept, marked not available.
//
// Pagination: page=N&per_page=100; X-Total-Count gives the number of types
// (without it, pages are read until an empty one).
package scaleway

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// PerPage is the page size asked for (the API's maximum is 100).
const PerPage = 100

// MaxPages caps the pages followed per zone.
const MaxPages = 20

// DefaultZones are the zones read when config names none: Scaleway's
// Paris, Amsterdam and Warsaw zones, where its GPU Instances are sold.
var DefaultZones = []string{"fr-par-1", "fr-par-2", "nl-ams-1", "pl-waw-2"}

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "scaleway",
		Description: "Scaleway Instance product list (products/servers) per zone, GPU types",
		Auth:        "none",
		Yields:      "ondemand; EUR per instance-hour, per zone",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://api.scaleway.com/instance/v1/zones/fr-par-1/products/servers",
			Schedule:   "35 */6 * * *",
			StaleAfter: 15 * time.Hour,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the Scaleway source.
type Scraper struct {
	// Zones are read in turn (default DefaultZones).
	Zones []string `yaml:"zones"`
}

// ZoneURL is base with its zone path segment replaced by zone, and page
// and per_page set.
func ZoneURL(base, zone string, page int) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("scaleway: bad url %q", base)
	}
	parts := strings.Split(u.Path, "/")
	found := false
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "zones" {
			parts[i+1], found = zone, true
			break
		}
	}
	if !found {
		return "", fmt.Errorf("scaleway: url %q has no /zones/<zone>/ segment", base)
	}
	u.Path = strings.Join(parts, "/")
	q := u.Query()
	q.Set("page", strconv.Itoa(page))
	if q.Get("per_page") == "" {
		q.Set("per_page", strconv.Itoa(PerPage))
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Scrape reads every zone's pages.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	zones := s.Zones
	if len(zones) == 0 {
		zones = DefaultZones
	}
	c, err := env.NewCollector(ctx)
	if err != nil {
		return scrapers.Result{}, err
	}
	var out []pricewatch.Observation
	for _, zone := range zones {
		read := 0
		for page := 1; ; page++ {
			if page > MaxPages {
				return scrapers.Result{}, fmt.Errorf("scaleway %s: more than %d pages of types", zone, MaxPages)
			}
			u, err := ZoneURL(env.URL(), zone, page)
			if err != nil {
				return scrapers.Result{}, err
			}
			resp, err := env.Fetch(ctx, c, scrapers.Request{URL: u, Header: http.Header{"Accept": {"application/json"}}})
			if err != nil {
				return scrapers.Result{}, fmt.Errorf("scaleway %s page %d: %w", zone, page, err)
			}
			obs, n, err := ParsePage(resp.Body, zone, u)
			if err != nil {
				return scrapers.Result{}, fmt.Errorf("scaleway %s page %d: %w", zone, page, err)
			}
			out = append(out, obs...)
			env.AddOffers(len(obs))
			read += n
			total := -1
			if resp.Headers != nil {
				if v, err := strconv.Atoi(resp.Headers.Get("X-Total-Count")); err == nil {
					total = v
				}
			}
			// Without the header (a proxy dropped it) pages are read
			// until one comes back empty.
			if n == 0 || (total >= 0 && read >= total) {
				break
			}
		}
	}
	if len(out) == 0 {
		return scrapers.Result{}, scrapers.ErrNothingParsed
	}
	return scrapers.Result{Observations: out}, nil
}

type serverType struct {
	GPU     int `json:"gpu"`
	GPUInfo *struct {
		Manufacturer string  `json:"gpu_manufacturer"`
		Name         string  `json:"gpu_name"`
		MemoryBytes  float64 `json:"gpu_memory"`
	} `json:"gpu_info"`
	// Ncpus, RAM (bytes) and ScratchStorageMaxSize (bytes, the local
	// scratch disk GPU types carry) are the type's, as Scaleway's Go SDK
	// (instance/v1 ServerType) documents them.
	Ncpus        float64         `json:"ncpus"`
	RAM          float64         `json:"ram"`
	Scratch      float64         `json:"scratch_storage_max_size"`
	HourlyPrice  scrapers.Number `json:"hourly_price"`
	EndOfService bool            `json:"end_of_service"`
}

type response struct {
	Servers *map[string]serverType `json:"servers"`
	Message string                 `json:"message"`
	Type    string                 `json:"type"`
}

// ParsePage turns one page of a zone's types into observations and
// returns how many types the page held (GPU or not).
func ParsePage(body []byte, zone, src string) ([]pricewatch.Observation, int, error) {
	var r response
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, 0, err
	}
	if r.Servers == nil {
		if r.Message != "" {
			return nil, 0, fmt.Errorf("API error (%s): %s", r.Type, r.Message)
		}
		return nil, 0, fmt.Errorf("%w: no servers object in the response", scrapers.ErrNothingParsed)
	}
	names := make([]string, 0, len(*r.Servers))
	for n := range *r.Servers {
		names = append(names, n)
	}
	sort.Strings(names) // a JSON object has no order: keep runs stable
	var out []pricewatch.Observation
	for _, name := range names {
		if o, ok := observation(name, (*r.Servers)[name], zone, src); ok {
			out = append(out, o)
		}
	}
	return out, len(names), nil
}

// Parse is ParsePage for one page; a page without a priced GPU type is
// ErrNothingParsed.
func Parse(body []byte, zone, src string) ([]pricewatch.Observation, error) {
	obs, _, err := ParsePage(body, zone, src)
	if err == nil && len(obs) == 0 {
		err = scrapers.ErrNothingParsed
	}
	return obs, err
}

// gib is the bytes of one GiB: gpu_memory counts bytes of the card's
// marketed GiB (25769803776 = 24 GiB for an L4).
const gib = 1 << 30

func observation(name string, t serverType, zone, src string) (pricewatch.Observation, bool) {
	name = strings.TrimSpace(name)
	price, ok := t.HourlyPrice.Get()
	if name == "" || t.GPU <= 0 || !ok || !(price > 0) || math.IsInf(price, 0) {
		return pricewatch.Observation{}, false
	}
	o := pricewatch.Observation{
		Source: "scaleway", Provider: "scaleway", OfferID: name, Region: zone,
		Price: price, Currency: "EUR", Unit: pricewatch.PerHour, Mode: pricewatch.ModeOnDemand, URL: src,
		Machine: pricewatch.Machine{VCPUs: max(t.Ncpus, 0), RAMGB: max(t.RAM, 0) / gib, DiskGB: max(t.Scratch, 0) / gib, RentURL: RentURL},
	}
	if t.GPUInfo != nil && strings.TrimSpace(t.GPUInfo.Name) != "" {
		o.GPUName, o.GPUCount = strings.TrimSpace(t.GPUInfo.Name), t.GPU
		o.GPUMemoryGB = t.GPUInfo.MemoryBytes / gib
		o.RentUnit = pricewatch.RentFixed
	} else {
		o.GPUName, o.GPUCount = name, 1 // model unknown: reported, never ranked
	}
	if t.EndOfService {
		o.Available, o.Stock = pricewatch.AvailableNo, "end of service"
	}
	return o, true
}

// RentURL is where an Instance is created (the console's create page).
const RentURL = "https://console.scaleway.com/instance/servers/create"
