// Package hetzner scrapes Hetzner's dedicated server products from the
// Robot web service, GET https://robot-ws.your-server.de/order/server/product
// (HTTP basic auth with a Robot web service user:
// PRICEWATCH_HETZNER_ROBOT_USER, PRICEWATCH_HETZNER_ROBOT_PASSWORD), for its
// GPU servers (GEX44, GEX130, …), in EUR per server, excluding VAT.
//
// Billing: a product's prices[] are per location: price.net is the monthly
// price (mode monthly, per server-month) and, where the answer has it,
// price.hourly_net the hourly price (mode ondemand, capped at the monthly
// price: the cap monthly ÷ hourly is carried as MonthlyCapHours). The
// one-time price_setup is not modelled (pricewatch has no set-up fee); the
// README says so.
//
// GPU model and count: the table gpus (product id → card and count, from
// Hetzner's product pages); a GPU product the table does not know (its
// description names a GPU) is kept under its id with one GPU, so that
// normalize reports it. Products without a GPU are skipped.
package hetzner

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// Credentials of a Robot web service user.
const (
	UserEnv     = "PRICEWATCH_HETZNER_ROBOT_USER"
	PasswordEnv = "PRICEWATCH_HETZNER_ROBOT_PASSWORD"
)

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "hetzner",
		Description: "Hetzner Robot web service, dedicated GPU server products",
		Auth:        "HTTP basic auth from " + UserEnv + ", " + PasswordEnv,
		Yields:      "monthly (price.net) and ondemand (price.hourly_net where stated); EUR per server, per location",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://robot-ws.your-server.de/order/server/product",
			Schedule:   "5 5 * * *",
			StaleAfter: 60 * time.Hour,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the Hetzner source.
type Scraper struct{}

// Check disables the source until both credentials are set.
func (s *Scraper) Check(env *scrapers.Env) error {
	return scrapers.NeedSecrets(env, "a Hetzner Robot web service user", UserEnv, PasswordEnv)
}

// Scrape reads the product list once.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	if err := s.Check(env); err != nil {
		return scrapers.Result{}, err
	}
	auth := base64.StdEncoding.EncodeToString([]byte(env.Secret(UserEnv) + ":" + env.Secret(PasswordEnv)))
	hdr := http.Header{"Accept": {"application/json"}, "Authorization": {"Basic " + auth}}
	return scrapers.FetchOne(ctx, env, "hetzner", scrapers.Request{URL: env.URL(), Header: hdr},
		func(b []byte) ([]pricewatch.Observation, error) { return Parse(b, env.URL()) })
}

type amount struct {
	Net       scrapers.Number `json:"net"`
	HourlyNet scrapers.Number `json:"hourly_net"`
}

type product struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description []string `json:"description"`
	Prices      []struct {
		Location string `json:"location"`
		Price    amount `json:"price"`
	} `json:"prices"`
}

// gpu is what a GPU product carries.
type gpu struct {
	Card     string
	GPUs     int
	MemoryGB float64
}

// gpus maps Hetzner's GPU server products to their GPUs, as Hetzner's
// product pages state them: GEX44 "NVIDIA RTX™ 4000 SFF Ada Generation"
// 20 GB (www.hetzner.com/dedicated-rootserver/gex44), GEX130 "NVIDIA RTX™
// 6000 Ada Generation" 48 GB (…/gex130).
var gpus = map[string]gpu{
	"GEX44":  {"RTX 4000 SFF Ada", 1, 20},
	"GEX130": {"RTX 6000 Ada", 1, 48},
}

// Parse turns the product list (a JSON array of {"product": …}) into
// observations; a list without a priced GPU product is ErrNothingParsed.
func Parse(body []byte, src string) ([]pricewatch.Observation, error) {
	var list *[]struct {
		Product *product `json:"product"`
	}
	if err := scrapers.UnmarshalJSON(body, "", &list); err != nil {
		var e struct {
			Error *struct {
				Status  int    `json:"status"`
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if scrapers.UnmarshalJSON(body, "", &e) == nil && e.Error != nil {
			return nil, fmt.Errorf("API error %d %s: %s", e.Error.Status, e.Error.Code, e.Error.Message)
		}
		return nil, err
	}
	if list == nil {
		return nil, fmt.Errorf("%w: no product list in the response", scrapers.ErrNothingParsed)
	}
	var out []pricewatch.Observation
	for _, it := range *list {
		if it.Product != nil {
			out = append(out, observations(*it.Product, src)...)
		}
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}

// namesGPU tells a GPU product the table does not know from the rest.
func namesGPU(p product) bool {
	for _, d := range p.Description {
		if strings.Contains(strings.ToLower(d), "gpu") {
			return true
		}
	}
	return false
}

func valid(n scrapers.Number) (float64, bool) {
	v, ok := n.Get()
	return v, ok && v > 0 && !math.IsInf(v, 0)
}

func observations(p product, src string) []pricewatch.Observation {
	id := strings.TrimSpace(p.ID)
	g, known := gpus[strings.ToUpper(id)]
	if id == "" || (!known && !namesGPU(p)) {
		return nil
	}
	o := pricewatch.Observation{Source: "hetzner", Provider: "hetzner", OfferID: id, Currency: "EUR", URL: src}
	if known {
		o.GPUName, o.GPUCount, o.GPUMemoryGB, o.RentUnit = g.Card, g.GPUs, g.MemoryGB, pricewatch.RentFixed
	} else {
		o.GPUName, o.GPUCount = id, 1 // a GPU server the table does not know: reported, never ranked
	}
	var out []pricewatch.Observation
	for _, pr := range p.Prices {
		o.Region = strings.TrimSpace(pr.Location)
		monthly, mok := valid(pr.Price.Net)
		if mok {
			m := o
			m.Mode, m.Unit, m.Price = pricewatch.ModeMonthly, pricewatch.PerMonth, monthly
			out = append(out, m)
		}
		if hourly, ok := valid(pr.Price.HourlyNet); ok {
			h := o
			h.Mode, h.Unit, h.Price = pricewatch.ModeOnDemand, pricewatch.PerHour, hourly
			if mok {
				h.MonthlyCapHours = monthly / hourly
			}
			out = append(out, h)
		}
	}
	return out
}
