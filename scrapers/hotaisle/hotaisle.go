// Package hotaisle scrapes Hot Aisle's available virtual machines, GET
// https://admin.hotaisle.app/api/teams/<team>/virtual_machines/available/
// with "Authorization: Token <key>" (PRICEWATCH_HOTAISLE_API_KEY) for the
// team PRICEWATCH_HOTAISLE_TEAM (or the team option), in USD.
//
// The answer is a JSON array of VM configurations (dstackai/gpuhunt's Hot
// Aisle provider reads these fields): OnDemandPrice in US cents per hour
// for the whole VM, and Specs: cpu_cores, ram_capacity and disk_capacity
// in bytes, cpus (model, …) and gpus [{count, model}].
//
// One offer per configuration, rented whole (fixed unit), in Hot Aisle's
// one location (us-michigan-1, as gpuhunt hard-codes it). The endpoint
// lists the configurations that can be created now: each is available.
// Hot Aisle sells AMD GPUs; the card is gpus[0].model ("MI300X").
//
// Billing: no increment found on Hot Aisle's pages: the default applies.
package hotaisle

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// KeyEnv holds the Hot Aisle API key (or KeyEnv+"_FILE" a file with it);
// TeamEnv the team handle, unless the team option is set.
const (
	KeyEnv  = "PRICEWATCH_HOTAISLE_API_KEY"
	TeamEnv = "PRICEWATCH_HOTAISLE_TEAM"
)

// Location is Hot Aisle's one location (gpuhunt hard-codes it likewise).
const Location = "us-michigan-1"

// RentURL is where a Hot Aisle VM is created (its admin console).
const RentURL = "https://admin.hotaisle.app/"

const gib = 1 << 30

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "hotaisle",
		Description: "Hot Aisle available virtual machines (key and team): AMD GPU VMs with their hourly price",
		Auth:        "Token API key from " + KeyEnv + ", team handle from " + TeamEnv + " or the team option",
		Yields:      "ondemand; USD per VM-hour (OnDemandPrice in cents ÷ 100), rented whole, available when listed",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://admin.hotaisle.app/api/teams/{team}/virtual_machines/available/",
			Schedule:   "55 */3 * * *",
			StaleAfter: 450 * time.Minute,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the Hot Aisle source.
type Scraper struct {
	// Team is the team handle; empty: PRICEWATCH_HOTAISLE_TEAM.
	Team string `yaml:"team"`
}

func (s *Scraper) team(env *scrapers.Env) string {
	if t := strings.TrimSpace(s.Team); t != "" {
		return t
	}
	return env.Secret(TeamEnv)
}

// Check disables the source until the key and the team are set.
func (s *Scraper) Check(env *scrapers.Env) error {
	if err := scrapers.NeedSecrets(env, "a Hot Aisle API key", KeyEnv); err != nil {
		return err
	}
	if s.team(env) == "" {
		return &scrapers.Disabled{Reason: "needs " + TeamEnv + " or the team option (the Hot Aisle team handle)"}
	}
	return nil
}

// Scrape fetches the available VMs of the team once.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	if err := s.Check(env); err != nil {
		return scrapers.Result{}, err
	}
	u := strings.ReplaceAll(env.URL(), "{team}", url.PathEscape(s.team(env)))
	return scrapers.FetchOne(ctx, env, "available VMs", scrapers.Request{URL: u,
		Header: http.Header{"Accept": {"application/json"}, "Authorization": {"Token " + env.Secret(KeyEnv)}}},
		func(b []byte) ([]pricewatch.Observation, error) { return Parse(b, u) })
}

type vmConfig struct {
	OnDemandPrice scrapers.Number `json:"OnDemandPrice"`
	Specs         *struct {
		CPUCores     float64 `json:"cpu_cores"`
		RAMCapacity  float64 `json:"ram_capacity"`
		DiskCapacity float64 `json:"disk_capacity"`
		CPUs         struct {
			Model string `json:"model"`
		} `json:"cpus"`
		GPUs []struct {
			Count int    `json:"count"`
			Model string `json:"model"`
		} `json:"gpus"`
	} `json:"Specs"`
}

// Parse turns the available VMs into observations; an answer without a
// priced GPU VM is ErrNothingParsed. An object is the API's error.
func Parse(body []byte, src string) ([]pricewatch.Observation, error) {
	var list *[]vmConfig
	if err := scrapers.UnmarshalJSON(body, "", &list); err != nil {
		var e struct {
			Detail string `json:"detail"`
		}
		if scrapers.UnmarshalJSON(body, "", &e) == nil && e.Detail != "" {
			return nil, fmt.Errorf("API error: %s", e.Detail)
		}
		return nil, err
	}
	if list == nil {
		return nil, fmt.Errorf("%w: null instead of the VM list", scrapers.ErrNothingParsed)
	}
	var out []pricewatch.Observation
	seen := map[string]int{}
	for _, v := range *list {
		cents, ok := v.OnDemandPrice.Get()
		if v.Specs == nil || len(v.Specs.GPUs) == 0 || !ok || !(cents > 0) || math.IsInf(cents, 0) {
			continue
		}
		g := v.Specs.GPUs[0]
		model := strings.TrimSpace(g.Model)
		if model == "" || g.Count <= 0 {
			continue
		}
		cpu := strings.TrimSpace(v.Specs.CPUs.Model)
		// The configuration's name, as gpuhunt builds it: "1x MI300X 8x
		// Xeon Platinum 8470"; a repeat gets a suffix so keys stay unique.
		id := fmt.Sprintf("%dx %s %sx %s", g.Count, model, strconv.FormatFloat(v.Specs.CPUCores, 'f', -1, 64), cpu)
		n := seen[id]
		seen[id]++
		if n > 0 {
			id += fmt.Sprintf(" #%d", n+1)
		}
		o := pricewatch.Observation{
			Source: "hotaisle", Provider: "hotaisle", OfferID: strings.TrimSpace(id), Region: Location,
			GPUName: model, GPUCount: g.Count, Price: cents / 100,
			Currency: "USD", Unit: pricewatch.PerHour, Mode: pricewatch.ModeOnDemand, URL: src,
			RentUnit: pricewatch.RentFixed, Available: pricewatch.AvailableYes, Stock: "listed as available",
			// us-michigan-1: Michigan, United States.
			Machine: pricewatch.Machine{Country: "US", RentURL: RentURL},
		}
		if c := v.Specs.CPUCores; c > 0 && c < 1e5 {
			o.VCPUs = c
		}
		if r := v.Specs.RAMCapacity; r > 0 && r < 1e18 {
			o.RAMGB = r / gib
		}
		if d := v.Specs.DiskCapacity; d > 0 && d < 1e18 {
			o.DiskGB = d / gib
		}
		out = append(out, o)
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}
