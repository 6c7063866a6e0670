// Package oracle scrapes Oracle Cloud's public price list,
// GET https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD
// (the cost estimator's product catalog; no key), for its GPU shapes.
//
// Units: OCI prices a GPU shape per GPU-hour — one part number per GPU
// model ("Compute - GPU - H100", metricName "GPU Per Hour"), the host's
// CPU, memory and local NVMe bundled in — so a shape of n GPUs costs n ×
// the part's PAY_AS_YOU_GO price. The price list names no shape: the
// table shapes (shapes.go) maps each part number to the shapes that bill
// it and their GPU counts, from Oracle's shape reference. Each shape is
// one offer, PerGPU with its count, rented whole (fixed unit). A GPU part
// the table does not know is kept under its part number with one GPU, so
// that normalize reports it; it is never guessed.
//
// A price with a model other than PAY_AS_YOU_GO (none is expected for GPU
// parts) is not read; a part without a USD price is skipped.
package oracle

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "oracle",
		Description: "Oracle Cloud price list (cetools products API), GPU shapes priced per GPU-hour",
		Auth:        "none",
		Yields:      "ondemand; USD per GPU-hour of the shape's part number, shapes rented whole",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD",
			Schedule:   "25 4 * * *",
			StaleAfter: 60 * time.Hour,
			Timeout:    60 * time.Second,
			Delay:      time.Second,
			MaxBodyMB:  32,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the Oracle source.
type Scraper struct{}

// ListURL is base with currencyCode=USD set where it names none.
func ListURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("oracle: bad url %q", base)
	}
	q := u.Query()
	if q.Get("currencyCode") == "" {
		q.Set("currencyCode", "USD")
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Scrape reads the price list once (the whole catalog is one answer).
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	u, err := ListURL(env.URL())
	if err != nil {
		return scrapers.Result{}, err
	}
	return scrapers.FetchOne(ctx, env, "oracle", scrapers.Request{URL: u, Header: http.Header{"Accept": {"application/json"}}},
		func(b []byte) ([]pricewatch.Observation, error) { return Parse(b, env.URL()) })
}

type product struct {
	PartNumber      string `json:"partNumber"`
	DisplayName     string `json:"displayName"`
	MetricName      string `json:"metricName"`
	ServiceCategory string `json:"serviceCategory"`
	Localizations   []struct {
		CurrencyCode string `json:"currencyCode"`
		Prices       []struct {
			Model string          `json:"model"`
			Value scrapers.Number `json:"value"`
		} `json:"prices"`
	} `json:"currencyCodeLocalizations"`
}

type response struct {
	Items *[]product `json:"items"`
}

// isGPUPart tells a GPU-hour rental part from the rest of the catalog.
// The real list (fixtures/oracle) bills more than rentals per GPU-hour:
// NVIDIA AI Enterprise licences ("OCI - NVIDIA AI Enterprise - H100",
// category "Compute - GPU", billed on top of the GPU) and Compute
// Cloud@Customer parts (an on-premises appliance, category "Compute
// Cloud@Customer"); neither is an offer.
func isGPUPart(p product) bool {
	if _, ok := shapes[strings.TrimSpace(p.PartNumber)]; ok {
		return true
	}
	if !strings.Contains(strings.ToLower(p.MetricName), "gpu per hour") ||
		strings.Contains(strings.ToLower(p.DisplayName), "ai enterprise") {
		return false
	}
	cat := strings.ToLower(strings.TrimSpace(p.ServiceCategory))
	return cat == "" || strings.HasPrefix(cat, "compute - gpu")
}

// usd is the part's PAY_AS_YOU_GO price in USD.
func usd(p product) (float64, bool) {
	for _, l := range p.Localizations {
		if !strings.EqualFold(strings.TrimSpace(l.CurrencyCode), "USD") {
			continue
		}
		for _, pr := range l.Prices {
			v, ok := pr.Value.Get()
			if strings.EqualFold(strings.TrimSpace(pr.Model), "PAY_AS_YOU_GO") && ok && v > 0 && !math.IsInf(v, 0) {
				return v, true
			}
		}
	}
	return 0, false
}

// Parse turns the price list into one observation per GPU shape; a list
// without a priced GPU part is ErrNothingParsed.
func Parse(body []byte, src string) ([]pricewatch.Observation, error) {
	var r response
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, err
	}
	if r.Items == nil {
		return nil, fmt.Errorf("%w: no items array in the response", scrapers.ErrNothingParsed)
	}
	var out []pricewatch.Observation
	for _, p := range *r.Items {
		part := strings.TrimSpace(p.PartNumber)
		if part == "" || !isGPUPart(p) {
			continue
		}
		price, ok := usd(p)
		if !ok {
			continue
		}
		o := pricewatch.Observation{
			Source: "oracle", Provider: "oracle", Price: price, Currency: "USD",
			Unit: pricewatch.PerHour, PerGPU: true, Mode: pricewatch.ModeOnDemand, URL: src,
		}
		known, ok := shapes[part]
		if !ok {
			// A GPU part no shape of the table bills: reported under its
			// part number, never ranked.
			o.OfferID, o.GPUName, o.GPUCount = part, part+" "+strings.TrimSpace(p.DisplayName), 1
			out = append(out, o)
			continue
		}
		for _, sh := range known.Shapes {
			o.OfferID, o.GPUName, o.GPUCount, o.GPUMemoryGB = sh.Name, known.Card, sh.GPUs, known.MemoryGB
			o.RentUnit, o.RentURL = pricewatch.RentFixed, RentURL
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}

// RentURL is the OCI console's Compute instances page, where a GPU shape
// is launched. The shapes' OCPUs and memory are not stated: the table has
// no per-shape figures read from Oracle's own shape reference yet.
const RentURL = "https://cloud.oracle.com/compute/instances"
