// Package primeintellect scrapes Prime Intellect's GPU availability, GET
// https://api.primeintellect.ai/api/v1/availability/gpus?page=N&page_size=100
// with a Bearer key (PRICEWATCH_PRIMEINTELLECT_API_KEY; the key needs the
// "Availability: Read" permission), in the currency each offer names
// (USD). Prime Intellect is an aggregator: each offer is a machine of the
// provider it names ("runpod", "hyperstack", "datacrunch", …, or Prime's
// own datacenters) rented out and billed by Prime Intellect.
//
// Pages: items and totalCount; page_size at most 100 (Prime's availability
// docs); pages are read until totalCount items are in, MaxPages at most.
//
// Units: prices.onDemand is the whole offer's price an hour for its
// gpuCount GPUs (fixed unit): SkyPilot's fetch_primeintellect reads it so,
// with an observed 2-GPU box at 2.70 = 2 × 1.35 per GPU; Prime's docs show
// only 1-GPU offers. Where communityPrice is set it is the price the offer
// rents at (Prime's CLI, prime_cli/api/availability.py, prefers it). isSpot
// marks an interruptible offer (spot). stockStatus ("Available", "Low",
// "High", "Medium", "Unavailable") is the stock level; "Unavailable" and
// "Out of stock" are not available.
//
// The offer's Provider is the provider behind it (scrapers.Seller spells it
// as pricewatch's own sources: "datacrunch" is verda, "lambdalabs" lambda;
// Prime's own datacenters "primecompute" and "dc_…" are primeintellect),
// its Source "primeintellect". The offer id is
// provider/cloudId/gpuCount×/security: one cloudId ("NVIDIA H100 PCIe" on
// runpod) is offered in several counts and both security tiers. Two items
// with the same id and data center keep the cheaper (as SkyPilot's fetcher
// does).
//
// GPU names: gpuType without its memory suffix, which states one GPU's
// memory, and with the socket added for a family sold in both forms
// ("H100_80GB" on "SXM5": "H100 SXM5", 80 GB), for normalize's aliases to
// decide the part; gpuMemory is not read (SkyPilot
// observed it as the box's total on a 2-GPU offer, Prime's docs as one
// GPU's on 1-GPU offers: ambiguous). Multi-node offers
// (/availability/multi-node) are not read.
package primeintellect

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

// Name is the registered source name.
const Name = "primeintellect"

// KeyEnv holds the Prime Intellect API key (sent as a Bearer token).
const KeyEnv = "PRICEWATCH_PRIMEINTELLECT_API_KEY"

// PageSize is the page size asked for (the API's maximum).
const PageSize = 100

// MaxPages bounds the pages read in one run.
const MaxPages = 50

// RentURL is where a Prime Intellect pod is deployed (its console).
const RentURL = "https://app.primeintellect.ai/"

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        Name,
		Description: "Prime Intellect availability/gpus (aggregator: the provider behind each offer is its provider)",
		Auth:        "Bearer key from " + KeyEnv,
		Yields:      "ondemand, spot; USD per offer-hour (prices.onDemand, or communityPrice where set), per provider and data center; stock level",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://api.primeintellect.ai/api/v1/availability/gpus",
			Schedule:   "35 * * * *",
			StaleAfter: 150 * time.Minute,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the Prime Intellect source.
type Scraper struct{}

// Check disables the source until the key is set.
func (s *Scraper) Check(env *scrapers.Env) error {
	return scrapers.NeedSecrets(env, "a Prime Intellect API key with Availability: Read", KeyEnv)
}

// Scrape reads the pages of GPU offers.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	if err := s.Check(env); err != nil {
		return scrapers.Result{}, err
	}
	hdr := http.Header{"Accept": {"application/json"}, "Authorization": {"Bearer " + env.Secret(KeyEnv)}}
	items, err := scrapers.FetchPages(ctx, env, Name, hdr, scrapers.Pages[item]{
		PageParam: "page", SizeParam: "page_size", Size: PageSize, Max: MaxPages,
		Parse: func(body []byte, _, before int) ([]item, bool, error) {
			p, err := ParsePage(body)
			if err != nil {
				return nil, false, err
			}
			return p.Items, before+len(p.Items) >= p.TotalCount, nil
		},
	})
	if err != nil {
		return scrapers.Result{}, err
	}
	obs, err := Observations(items, env.URL())
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("%s: %w", Name, err)
	}
	env.AddOffers(len(obs))
	return scrapers.Result{Observations: obs}, nil
}

type resource struct {
	DefaultCount scrapers.Number `json:"defaultCount"`
}

type prices struct {
	OnDemand       scrapers.Number `json:"onDemand"`
	CommunityPrice scrapers.Number `json:"communityPrice"`
	Currency       string          `json:"currency"`
}

type item struct {
	CloudID     string   `json:"cloudId"`
	GPUType     string   `json:"gpuType"`
	Socket      string   `json:"socket"`
	Provider    string   `json:"provider"`
	DataCenter  string   `json:"dataCenter"`
	Country     string   `json:"country"`
	GPUCount    int      `json:"gpuCount"`
	Disk        resource `json:"disk"`
	VCPU        resource `json:"vcpu"`
	Memory      resource `json:"memory"`
	StockStatus string   `json:"stockStatus"`
	Security    string   `json:"security"`
	Prices      prices   `json:"prices"`
	IsSpot      *bool    `json:"isSpot"`
}

// Page is one page of the answer.
type Page struct {
	Items      []item `json:"items"`
	TotalCount int    `json:"totalCount"`
}

// ParsePage reads one page; an answer without an items list is an error
// (FastAPI's {"detail": …} names the cause).
func ParsePage(body []byte) (Page, error) {
	var r struct {
		Items      *[]item `json:"items"`
		TotalCount int     `json:"totalCount"`
		Detail     any     `json:"detail"`
	}
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return Page{}, err
	}
	if r.Items == nil {
		if r.Detail != nil {
			return Page{}, fmt.Errorf("API error: %v", r.Detail)
		}
		return Page{}, fmt.Errorf("%w: no items in the response", scrapers.ErrNothingParsed)
	}
	return Page{Items: *r.Items, TotalCount: r.TotalCount}, nil
}

// Parse reads a single page's offers (tests and the one-page case).
func Parse(body []byte, src string) ([]pricewatch.Observation, error) {
	p, err := ParsePage(body)
	if err != nil {
		return nil, err
	}
	return Observations(p.Items, src)
}

// Seller is the seller behind a Prime Intellect provider name: Prime's own
// datacenters ("primecompute", "dc_<name>") are Prime Intellect's own.
func Seller(provider string) string {
	p := strings.ToLower(strings.TrimSpace(provider))
	if p == "primecompute" || strings.HasPrefix(p, "dc_") || p == "primeintellect" {
		return Name
	}
	return scrapers.Seller(p)
}

// Observations turns offers into observations; none priced is
// ErrNothingParsed.
func Observations(items []item, src string) ([]pricewatch.Observation, error) {
	var out []pricewatch.Observation
	at := map[string]int{} // id and data center → index in out
	for _, it := range items {
		price, ok := it.Prices.CommunityPrice.Get()
		if !ok || !(price > 0) {
			price, ok = it.Prices.OnDemand.Get()
		}
		cur := strings.ToUpper(strings.TrimSpace(it.Prices.Currency))
		if cur == "" {
			cur = "USD" // every offer Prime documents is in USD
		}
		provider, cloudID, gpu := strings.TrimSpace(it.Provider), strings.TrimSpace(it.CloudID), strings.TrimSpace(it.GPUType)
		if provider == "" || cloudID == "" || gpu == "" || it.GPUCount <= 0 || !ok || !(price > 0) || math.IsInf(price, 0) {
			continue
		}
		mode := pricewatch.ModeOnDemand
		if it.IsSpot != nil && *it.IsSpot {
			mode = pricewatch.ModeSpot
		}
		security := strings.TrimSpace(it.Security)
		if security == "" {
			security = "-"
		}
		o := pricewatch.Observation{
			Source: Name, Provider: Seller(provider),
			OfferID: fmt.Sprintf("%s/%s/%dx/%s", provider, cloudID, it.GPUCount, security),
			Region:  strings.TrimSpace(it.DataCenter), GPUCount: it.GPUCount,
			Price: price, Currency: cur, Unit: pricewatch.PerHour, Mode: mode, URL: src, RentUnit: pricewatch.RentFixed,
			Machine: pricewatch.Machine{Country: strings.ToUpper(strings.TrimSpace(it.Country)), RentURL: RentURL},
		}
		o.GPUName, o.GPUMemoryGB = GPUName(gpu, it.Socket)
		if v, ok := it.VCPU.DefaultCount.Get(); ok && v > 0 {
			o.VCPUs = v
		}
		if v, ok := it.Memory.DefaultCount.Get(); ok && v > 0 {
			o.RAMGB = v
		}
		if v, ok := it.Disk.DefaultCount.Get(); ok && v > 0 {
			o.DiskGB = v
		}
		if s := strings.ToLower(strings.TrimSpace(it.Socket)); strings.HasPrefix(s, "sxm") || s == "pcie" {
			o.Interconnect = s
		}
		o.Available, o.Stock = stock(it.StockStatus)
		key := o.OfferID + "\x00" + o.Region + "\x00" + string(mode)
		if i, dup := at[key]; dup {
			if o.Price < out[i].Price {
				out[i] = o
			}
			continue
		}
		at[key] = len(out)
		out = append(out, o)
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}

// memSuffix is the memory gpuType ends with ("H100_80GB", "A6000_48GB").
var memSuffix = regexp.MustCompile(`(?i)^(.+?)[_ -]?([0-9]+)GB$`)

// GPUName is the name gpuType is resolved by and the memory of one GPU it
// states: the memory suffix taken off ("H100_80GB": "H100", 80) and, for
// a family sold in both forms, the socket added ("H100 SXM5"; gpuType
// "RTX6000Ada_48GB" stays "RTX6000Ada", 48).
func GPUName(gpuType, socket string) (string, float64) {
	name, mem := strings.TrimSpace(gpuType), 0.0
	if m := memSuffix.FindStringSubmatch(name); m != nil {
		name = m[1]
		mem, _ = strconv.ParseFloat(m[2], 64)
	}
	return scrapers.WithForm(name, socket), mem
}

// stock reads stockStatus: empty says nothing; "Unavailable" and "Out of
// stock" are not available; any other level is.
func stock(status string) (pricewatch.Availability, string) {
	s := strings.TrimSpace(status)
	switch strings.ToLower(s) {
	case "":
		return "", ""
	case "unavailable", "out of stock", "out_of_stock":
		return pricewatch.AvailableNo, s
	}
	return pricewatch.AvailableYes, s
}
