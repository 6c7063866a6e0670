// Package seeweb scrapes Seeweb's Cloud Server GPU plans,
// GET https://api.seeweb.it/ecs/v2/plans (an API token in the X-APITOKEN
// header, PRICEWATCH_SEEWEB_API_TOKEN), in EUR per plan.
//
// Units: hourly_price is the plan's price per hour, whole (Seeweb prices
// in euros, excluding VAT; the answer states no currency); gpu is the GPU
// count as a string ("2"), gpu_label the model with its memory ("L40s
// 48GB", "RTX A6000 48GB", "H200 141GB", "MI300X"): the GPU is named by the
// label without its memory word, and that memory is the GPU's ("L4 24GB"
// is an L4 of 24 GB), so that normalize's generic names decide the card.
// A plan rents whole (fixed unit). One offer per plan and region of
// available_regions (location). Plans with gpu "0" are skipped; a GPU plan
// without a label is kept under its name with one GPU, so that normalize
// reports it.
//
// Availability: available says whether the plan is active, not whether a
// region has capacity (gpuhunt's seeweb provider: "It does not indicate
// current capacity in any particular region"; capacity would need
// /plans/availables). An active plan is left unknown, not in stock; an
// inactive one (available false) cannot be ordered and is not available.
//
// Billing: Seeweb publishes hourly billing for Cloud Server GPU (not
// checked: the default, per started minute, applies).
package seeweb

import (
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
		Yields:      "ondemand; EUR per plan-hour, per region; availability unknown (available means the plan is active, not stock)",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://api.seeweb.it/ecs/v2/plans",
			Schedule:   "25 */6 * * *",
			StaleAfter: 15 * time.Hour,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return New() },
	})
}

// Scraper is the Seeweb source: one keyed GET of the plan list (scrapers.KeyedJSON).
type Scraper struct{ scrapers.KeyedJSON }

// New returns the source.
func New() *Scraper {
	return &Scraper{scrapers.KeyedJSON{What: "a Seeweb API token", KeyEnv: TokenEnv, Fetch: "seeweb",
		Header: func(token string) http.Header { return http.Header{"X-APITOKEN": {token}} }, Parse: Parse}}
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
		if m := memRe.FindStringSubmatchIndex(label); m != nil {
			o.GPUMemoryGB, _ = strconv.ParseFloat(label[m[2]:m[3]], 64)
			// The model without its memory word ("L4 24GB" is "L4"); a
			// label that is only a memory keeps its whole text.
			if model := strings.Join(strings.Fields(label[:m[0]]+" "+label[m[1]:]), " "); model != "" {
				o.GPUName = model
			}
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
	if p.Available != nil && !*p.Available {
		// An inactive plan; an active one says nothing of stock (see
		// the package comment) and is left unknown.
		o.Available, o.Stock = pricewatch.AvailableNo, PlanInactive
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

// PlanInactive is the stock note of a plan whose available is false.
const PlanInactive = "plan not active"

// RentURL is Seeweb's Cloud Server GPU page, where a plan is ordered.
const RentURL = "https://www.seeweb.it/en/products/cloud-server-gpu"
