// Package mithril scrapes Mithril's (formerly ML Foundry's) spot market:
// GET https://api.mithril.ai/v2/spot/availability (one auction per instance
// type and region) joined to GET …/v2/instance-types (what each type is),
// both with a Bearer key (PRICEWATCH_MITHRIL_API_KEY, "fkey_…"), in USD.
//
// Units: an auction's last_instance_price is a dollar string ("$25.60")
// for one instance of the type an hour (Mithril's Python SDK documents the
// format; SkyPilot's fetch_mithril reads it as the instance's spot price;
// Mithril's pricing history calls the same figure spot_instance_price):
// the spot price the last allocated instance cleared at, for the type's
// num_gpus GPUs (fixed unit). capacity is how many instances are free
// there now (> 0 available).
//
// Mithril rents capacity it sources from several datacenters, but neither
// answer names the company behind a machine: the offers' Provider is
// "mithril". Reserved prices (/v2/pricing/current, one request per type)
// are not read.
//
// GPU names: the type's gpu_type with its gpu_socket where the family is
// sold in both forms ("H100" on "SXM": "H100 SXM"), gpu_memory_gb as one
// GPU's memory.
package mithril

import (
	"context"
	"encoding/json"
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

// Name is the registered source name.
const Name = "mithril"

// KeyEnv holds the Mithril API key (sent as a Bearer token).
const KeyEnv = "PRICEWATCH_MITHRIL_API_KEY"

// TypesPath is the instance-types endpoint beside /v2/spot/availability.
const TypesPath = "/v2/instance-types"

// RentURL is where a Mithril spot bid is placed (its console).
const RentURL = "https://app.mithril.ai/"

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        Name,
		Description: "Mithril spot/availability × instance-types (spot auctions per region)",
		Auth:        "Bearer key from " + KeyEnv,
		Yields:      "spot; USD per instance-hour (last_instance_price, the last clearing price), per region; availability from capacity",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://api.mithril.ai/v2/spot/availability",
			Schedule:   "45 * * * *",
			StaleAfter: 150 * time.Minute,
			Timeout:    60 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the Mithril source.
type Scraper struct {
	// TypesURL is the instance-types endpoint. Empty: /v2/instance-types on
	// the host of url.
	TypesURL string `yaml:"types_url"`
}

// Rebase points the instance types at base, as config's url points the
// availability.
func (s *Scraper) Rebase(base string) { s.TypesURL = strings.TrimRight(base, "/") + TypesPath }

// Check disables the source until the key is set.
func (s *Scraper) Check(env *scrapers.Env) error {
	return scrapers.NeedSecrets(env, "a Mithril API key", KeyEnv)
}

func (s *Scraper) typesURL(avail string) (string, error) {
	if s.TypesURL != "" {
		return s.TypesURL, nil
	}
	u, err := url.Parse(avail)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%s: bad url %q", Name, avail)
	}
	u.Path, u.RawPath, u.RawQuery = TypesPath, "", ""
	return u.String(), nil
}

// Scrape reads the instance types, then the spot availability.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	if err := s.Check(env); err != nil {
		return scrapers.Result{}, err
	}
	tu, err := s.typesURL(env.URL())
	if err != nil {
		return scrapers.Result{}, err
	}
	c, err := env.NewCollector(ctx, tu)
	if err != nil {
		return scrapers.Result{}, err
	}
	hdr := http.Header{"Accept": {"application/json"}, "Authorization": {"Bearer " + env.Secret(KeyEnv)}}
	tr, err := env.Fetch(ctx, c, scrapers.Request{URL: tu, Header: hdr})
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("%s instance types: %w", Name, err)
	}
	types, err := ParseTypes(tr.Body)
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("%s instance types: %w", Name, err)
	}
	ar, err := env.Fetch(ctx, c, scrapers.Request{URL: env.URL(), Header: hdr})
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("%s spot availability: %w", Name, err)
	}
	obs, err := ParseAvailability(ar.Body, types, env.URL())
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("%s spot availability: %w", Name, err)
	}
	env.AddOffers(len(obs))
	return scrapers.Result{Observations: obs}, nil
}

// InstanceType is one entry of /v2/instance-types (Mithril's generated
// client's InstanceTypeModel).
type InstanceType struct {
	FID            string          `json:"fid"`
	Name           string          `json:"name"`
	NumCPUs        scrapers.Number `json:"num_cpus"`
	RAMGB          scrapers.Number `json:"ram_gb"`
	NumGPUs        int             `json:"num_gpus"`
	GPUType        string          `json:"gpu_type"`
	GPUMemoryGB    scrapers.Number `json:"gpu_memory_gb"`
	GPUSocket      string          `json:"gpu_socket"`
	LocalStorageGB scrapers.Number `json:"local_storage_gb"`
}

// list decodes a JSON array, or an object carrying it under "data"; an
// object with "detail" is the API's error.
func list[T any](body []byte, what string) ([]T, error) {
	var arr []T
	if err := json.Unmarshal(body, &arr); err == nil {
		return arr, nil
	}
	var obj struct {
		Data   *[]T `json:"data"`
		Detail any  `json:"detail"`
	}
	if err := scrapers.UnmarshalJSON(body, "", &obj); err != nil {
		return nil, err
	}
	if obj.Data == nil {
		if obj.Detail != nil {
			return nil, fmt.Errorf("API error: %v", obj.Detail)
		}
		return nil, fmt.Errorf("%w: no %s in the response", scrapers.ErrNothingParsed, what)
	}
	return *obj.Data, nil
}

// ParseTypes reads the instance types by fid.
func ParseTypes(body []byte) (map[string]InstanceType, error) {
	l, err := list[InstanceType](body, "instance types")
	if err != nil {
		return nil, err
	}
	out := make(map[string]InstanceType, len(l))
	for _, t := range l {
		if f := strings.TrimSpace(t.FID); f != "" {
			out[f] = t
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no instance types", scrapers.ErrNothingParsed)
	}
	return out, nil
}

type auction struct {
	FID               string `json:"fid"`
	InstanceType      string `json:"instance_type"`
	Region            string `json:"region"`
	Capacity          *int   `json:"capacity"`
	LastInstancePrice string `json:"last_instance_price"`
}

// Dollars reads a dollar string ("$25.60", "25.6").
func Dollars(s string) (float64, error) {
	t := strings.TrimSpace(strings.ReplaceAll(strings.TrimPrefix(strings.TrimSpace(s), "$"), ",", ""))
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, fmt.Errorf("price %q: %w", s, err)
	}
	return v, nil
}

// ParseAvailability prices each auction whose instance type is known and
// has GPUs; none is ErrNothingParsed.
func ParseAvailability(body []byte, types map[string]InstanceType, src string) ([]pricewatch.Observation, error) {
	auctions, err := list[auction](body, "auctions")
	if err != nil {
		return nil, err
	}
	var out []pricewatch.Observation
	for _, a := range auctions {
		t, ok := types[strings.TrimSpace(a.InstanceType)]
		region := strings.TrimSpace(a.Region)
		if !ok || t.NumGPUs <= 0 || strings.TrimSpace(t.GPUType) == "" || region == "" {
			continue
		}
		price, err := Dollars(a.LastInstancePrice)
		if err != nil || !(price > 0) || math.IsInf(price, 0) {
			continue // no clearing price yet: nothing to rent at
		}
		id := strings.TrimSpace(t.Name)
		if id == "" {
			id = strings.TrimSpace(t.FID)
		}
		o := pricewatch.Observation{
			Source: Name, Provider: Name, OfferID: id, Region: region,
			GPUName: scrapers.WithForm(t.GPUType, t.GPUSocket), GPUCount: t.NumGPUs,
			Price: price, Currency: "USD", Unit: pricewatch.PerHour, Mode: pricewatch.ModeSpot, URL: src,
			RentUnit: pricewatch.RentFixed, Machine: pricewatch.Machine{RentURL: RentURL},
		}
		if v, ok := t.GPUMemoryGB.Get(); ok && v > 0 {
			o.GPUMemoryGB = v
		}
		if v, ok := t.NumCPUs.Get(); ok && v > 0 {
			o.VCPUs = v
		}
		if v, ok := t.RAMGB.Get(); ok && v > 0 {
			o.RAMGB = v
		}
		if v, ok := t.LocalStorageGB.Get(); ok && v > 0 {
			o.DiskGB = v
		}
		if s := strings.ToLower(strings.TrimSpace(t.GPUSocket)); strings.HasPrefix(s, "sxm") || s == "pcie" {
			o.Interconnect = s
		}
		if a.Capacity != nil {
			o.Available, o.Stock = pricewatch.AvailableNo, "0 instances free"
			if *a.Capacity > 0 {
				o.Available, o.Stock = pricewatch.AvailableYes, fmt.Sprintf("%d instances free", *a.Capacity)
			}
		}
		out = append(out, o)
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}
