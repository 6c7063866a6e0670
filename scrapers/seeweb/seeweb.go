// Package seeweb scrapes Seeweb's Cloud Server GPU plans,
// GET https://api.seeweb.it/ecs/v2/plans (an API token in the X-APITOKEN
// header, PRICEWATCH_SEEWEB_API_TOKEN), in EUR per plan.
//
// Units: hourly_price is the plan's price per hour, whole (Seeweb prices
// in euros, excluding VAT; the answer states no currency); gpu is the GPU
// count as a string ("2"), gpu_label the model with its memory ("L40s
// 48GB", "A100 80GB", "MI300X"). A plan rents whole (fixed unit). One offer
// per plan and region of available_regions (location), available when
// available is true. Plans with gpu "0" are skipped; a GPU plan without a
// label is kept under its name with one GPU, so that normalize reports it.
//
// Billing: Seeweb publishes hourly billing for Cloud Server GPU (not
// checked: the default, per started minute, applies).
package seeweb

import (
	"context"
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

// TokenEnv holds the Seeweb API token.
const TokenEnv = "PRICEWATCH_SEEWEB_API_TOKEN"

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "seeweb",
		Description: "Seeweb Cloud Server GPU plans (ecs/v2/plans)",
		Auth:        "X-APITOKEN header from " + TokenEnv,
		Yields:      "ondemand; EUR per plan-hour, per region; availability from available",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://api.seeweb.it/ecs/v2/plans",
			Schedule:   "25 */6 * * *",
			StaleAfter: 15 * time.Hour,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the Seeweb source.
type Scraper struct{}

// Check disables the source until the token is set.
func (s *Scraper) Check(env *scrapers.Env) error {
	return scrapers.NeedSecrets(env, "a Seeweb API token", TokenEnv)
}

// Scrape reads the plan list once.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	if err := s.Check(env); err != nil {
		return scrapers.Result{}, err
	}
	hdr := http.Header{"Accept": {"application/json"}, "X-APITOKEN": {env.Secret(TokenEnv)}}
	return scrapers.FetchOne(ctx, env, "seeweb", scrapers.Request{URL: env.URL(), Header: hdr},
		func(b []byte) ([]pricewatch.Observation, error) { return Parse(b, env.URL()) })
}

type plan struct {
	Name        string          `json:"name"`
	CPU         scrapers.Number `json:"cpu"`
	RAM         scrapers.Number `json:"ram"`
	GPU         scrapers.Number `json:"gpu"`
	GPULabel    *string         `json:"gpu_label"`
	HourlyPrice scrapers.Number `json:"hourly_price"`
	Available   *bool           `json:"available"`
	Regions     []struct {
		Location string `json:"location"`
	} `json:"available_regions"`
}

type response struct {
	Status  string  `json:"status"`
	Message string  `json:"message"`
	Plans   *[]plan `json:"plans"`
}

// memRe reads the memory a label states ("A100 80GB").
var memRe = regexp.MustCompile(`(?i)\b([0-9]+)\s*GB\b`)

// Parse turns the plan list into observations; a list without a priced
// GPU plan is ErrNothingParsed.
func Parse(body []byte, src string) ([]pricewatch.Observation, error) {
	var r response
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, err
	}
	if r.Plans == nil {
		if r.Message != "" || (r.Status != "" && r.Status != "ok") {
			return nil, fmt.Errorf("API error (%s): %s", r.Status, r.Message)
		}
		return nil, fmt.Errorf("%w: no plans array in the response", scrapers.ErrNothingParsed)
	}
	var out []pricewatch.Observation
	for _, p := range *r.Plans {
		out = append(out, observations(p, src)...)
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}

func observations(p plan, src string) []pricewatch.Observation {
	name := strings.TrimSpace(p.Name)
	n, nok := p.GPU.Get()
	price, pok := p.HourlyPrice.Get()
	if name == "" || !nok || n < 1 || n != math.Trunc(n) || !pok || !(price > 0) || math.IsInf(price, 0) {
		return nil
	}
	o := pricewatch.Observation{
		Source: "seeweb", Provider: "seeweb", OfferID: name, Price: price,
		Currency: "EUR", Unit: pricewatch.PerHour, Mode: pricewatch.ModeOnDemand, URL: src,
	}
	label := ""
	if p.GPULabel != nil {
		label = strings.Join(strings.Fields(*p.GPULabel), " ")
	}
	if label != "" {
		o.GPUName, o.GPUCount, o.RentUnit = label, int(n), pricewatch.RentFixed
		if m := memRe.FindStringSubmatch(label); m != nil {
			o.GPUMemoryGB, _ = strconv.ParseFloat(m[1], 64)
		}
	} else {
		o.GPUName, o.GPUCount = name, 1 // model unknown: reported, never ranked
	}
	// The plan's cores and memory. ram is MiB (gpuhunt's seeweb provider
	// divides it by 1024 for GiB; "32768" for a 32 GB plan). disk ("500")
	// is left unstated: no Seeweb page we found gives the plans' disk unit
	// (the Terraform provider's docs say MB for a server's plan_size, which
	// 500 cannot be), and GB against GiB is not ours to guess.
	if v, ok := p.CPU.Get(); ok && v > 0 && v < 1e5 {
		o.VCPUs = v
	}
	if v, ok := p.RAM.Get(); ok && v > 0 && v < 1e10 {
		o.RAMGB = v / 1024
	}
	o.RentURL = RentURL
	if p.Available != nil {
		o.Available = pricewatch.AvailableNo
		if *p.Available {
			o.Available = pricewatch.AvailableYes
		}
	}
	var out []pricewatch.Observation
	for _, r := range p.Regions {
		if loc := strings.TrimSpace(r.Location); loc != "" {
			o.Region = loc
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		o.Region = "" // no region listed: one offer, where is not said
		out = append(out, o)
	}
	return out
}

// RentURL is Seeweb's Cloud Server GPU page, where a plan is ordered.
const RentURL = "https://www.seeweb.it/en/products/cloud-server-gpu"
