// Package ovhcloud scrapes OVHcloud's public order catalog for Public Cloud,
// GET https://api.ovh.com/1.0/order/catalog/public/cloud?ovhSubsidiary=FR
// (no key), for its GPU instance flavors, in the subsidiary's currency
// (locale.currencyCode: EUR for FR, USD for US), excluding VAT.
//
// Units: a pricing's price is in 1e-8 of the currency (280000000 = 2.80).
// An addon's planCode says its billing: "<flavor>.consumption" is billed
// by the hour (ondemand, per instance-hour), "<flavor>.monthly.postpaid"
// by the month (mode monthly, per instance-month); other suffixes are not
// read. Only addons whose blobs.commercial.brick is "gpu" are GPU
// instances: the catalog also holds AI-serving addons with a GPU blob
// priced per minute, which the brick fence keeps out. Windows flavors
// ("win-…") include a licence and are not read; "-le-" legacy flavors are.
//
// GPU model and count: blobs.technical.gpu.model ("H100", "L40S",
// "Tesla V100") as written, number, memory.size (GB per GPU); a flavor
// rents whole (fixed unit). An addon with several pricings (phases) is
// skipped rather than guessed. A flavor tagged "coming_soon" is priced but
// not rentable yet: available no.
package ovhcloud

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

// Scale is the catalog's price unit: 1e-8 of the currency.
const Scale = 1e8

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "ovhcloud",
		Description: "OVHcloud public order catalog (Public Cloud), GPU flavors",
		Auth:        "none",
		Yields:      "ondemand (.consumption, per hour) and monthly (.monthly.postpaid); EUR (FR subsidiary) per instance",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://api.ovh.com/1.0/order/catalog/public/cloud?ovhSubsidiary=FR",
			Schedule:   "55 4 * * *",
			StaleAfter: 60 * time.Hour,
			Timeout:    60 * time.Second,
			Delay:      time.Second,
			MaxBodyMB:  32,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the OVHcloud source.
type Scraper struct{}

// Scrape reads the catalog once.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	return scrapers.FetchOne(ctx, env, "ovhcloud", scrapers.Request{URL: env.URL(), Header: http.Header{"Accept": {"application/json"}}},
		func(b []byte) ([]pricewatch.Observation, error) { return Parse(b, env.URL()) })
}

type addon struct {
	PlanCode string `json:"planCode"`
	Pricings []struct {
		Price scrapers.Number `json:"price"`
	} `json:"pricings"`
	Blobs *struct {
		Commercial *struct {
			Brick string `json:"brick"`
		} `json:"commercial"`
		Tags      []string `json:"tags"`
		Technical *struct {
			GPU *struct {
				Model  string  `json:"model"`
				Number float64 `json:"number"`
				Memory struct {
					Size float64 `json:"size"`
				} `json:"memory"`
			} `json:"gpu"`
		} `json:"technical"`
	} `json:"blobs"`
}

type catalog struct {
	Locale *struct {
		CurrencyCode string `json:"currencyCode"`
		Subsidiary   string `json:"subsidiary"`
	} `json:"locale"`
	Addons  *[]addon `json:"addons"`
	Message string   `json:"message"`
}

// Parse turns the catalog into observations; a catalog without a priced
// GPU flavor is ErrNothingParsed.
func Parse(body []byte, src string) ([]pricewatch.Observation, error) {
	var c catalog
	if err := scrapers.UnmarshalJSON(body, "", &c); err != nil {
		return nil, err
	}
	if c.Addons == nil {
		if c.Message != "" {
			return nil, fmt.Errorf("API error: %s", c.Message)
		}
		return nil, fmt.Errorf("%w: no addons array in the catalog", scrapers.ErrNothingParsed)
	}
	if c.Locale == nil || len(strings.TrimSpace(c.Locale.CurrencyCode)) != 3 {
		return nil, fmt.Errorf("catalog states no locale.currencyCode: prices cannot be read")
	}
	cur := strings.ToUpper(strings.TrimSpace(c.Locale.CurrencyCode))
	var out []pricewatch.Observation
	for _, a := range *c.Addons {
		if o, ok := observation(a, cur, src); ok {
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}

func observation(a addon, cur, src string) (pricewatch.Observation, bool) {
	if a.Blobs == nil || a.Blobs.Commercial == nil || a.Blobs.Commercial.Brick != "gpu" {
		return pricewatch.Observation{}, false
	}
	code := strings.TrimSpace(a.PlanCode)
	var flavor string
	var mode pricewatch.Mode
	var unit pricewatch.PriceUnit
	switch {
	case strings.HasSuffix(code, ".consumption"):
		flavor, mode, unit = strings.TrimSuffix(code, ".consumption"), pricewatch.ModeOnDemand, pricewatch.PerHour
	case strings.HasSuffix(code, ".monthly.postpaid"):
		flavor, mode, unit = strings.TrimSuffix(code, ".monthly.postpaid"), pricewatch.ModeMonthly, pricewatch.PerMonth
	default:
		return pricewatch.Observation{}, false
	}
	if flavor == "" || strings.HasPrefix(flavor, "win-") || len(a.Pricings) != 1 {
		return pricewatch.Observation{}, false
	}
	raw, ok := a.Pricings[0].Price.Get()
	if !ok || !(raw > 0) || math.IsInf(raw, 0) {
		return pricewatch.Observation{}, false
	}
	o := pricewatch.Observation{
		Source: "ovhcloud", Provider: "ovhcloud", OfferID: flavor, Price: raw / Scale,
		Currency: cur, Unit: unit, Mode: mode, URL: src,
	}
	// The real FR book prices flavors not yet on sale, tagged
	// "coming_soon" (a10-45 on 2026-08-22): kept, not rentable now.
	for _, tag := range a.Blobs.Tags {
		if strings.EqualFold(strings.TrimSpace(tag), "coming_soon") {
			o.Available = pricewatch.AvailableNo
		}
	}
	var gpu = a.Blobs.Technical
	if gpu != nil && gpu.GPU != nil && strings.TrimSpace(gpu.GPU.Model) != "" &&
		gpu.GPU.Number >= 1 && gpu.GPU.Number == math.Trunc(gpu.GPU.Number) {
		o.GPUName, o.GPUCount, o.GPUMemoryGB = strings.TrimSpace(gpu.GPU.Model), int(gpu.GPU.Number), gpu.GPU.Memory.Size
		o.RentUnit = pricewatch.RentFixed
	} else {
		o.GPUName, o.GPUCount = flavor, 1 // model or count unknown: reported, never ranked
	}
	return o, true
}
