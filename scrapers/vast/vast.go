// Package vast scrapes the Vast.ai marketplace offer search
// (POST /api/v0/bundles/): one on-demand and, where the host accepts bids,
// one interruptible (spot) observation per offer, in USD per hour for the
// whole offer (all of its num_gpus GPUs).
package vast

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// DefaultLimit is how many offers one search asks for. The real CLI capture
// asked for 65535 and got 1396; 1000 keeps the best-scored ones and the
// response to a few MB.
const DefaultLimit = 1000

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "vast",
		Description: "Vast.ai marketplace offer search (api/v0/bundles)",
		Auth:        "none",
		Yields:      "ondemand (dph_total), spot (min_bid, the interruptible floor); USD per hour for the whole offer",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://console.vast.ai/api/v0/bundles/",
			Schedule:   "*/10 * * * *",
			StaleAfter: 30 * time.Minute,
			Timeout:    60 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{Limit: DefaultLimit} },
	})
}

// Scraper is the Vast.ai source.
type Scraper struct {
	// Limit is the number of offers the search asks for (default 1000).
	Limit int `yaml:"limit"`
}

// Query is the search body: the one the vastai CLI sends for
// `search offers verified=any` (see fixtures/vast/PROVENANCE.md), i.e. any
// verification state, not external, rentable and not rented, best score
// first, on-demand pricing, 5 GB of allocated storage priced into dph_total.
func Query(limit int) map[string]any {
	if limit <= 0 {
		limit = DefaultLimit
	}
	return map[string]any{
		"verified":          map[string]any{},
		"external":          map[string]any{"eq": false},
		"rentable":          map[string]any{"eq": true},
		"rented":            map[string]any{"eq": false},
		"order":             [][]string{{"score", "desc"}},
		"type":              "on-demand",
		"limit":             limit,
		"allocated_storage": 5.0,
	}
}

// Scrape posts the offer search and parses the answer.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	c, err := env.NewCollector(ctx)
	if err != nil {
		return scrapers.Result{}, err
	}
	body, err := json.Marshal(Query(s.Limit))
	if err != nil {
		return scrapers.Result{}, err
	}
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	resp, err := env.Fetch(ctx, c, scrapers.Request{Method: http.MethodPost, URL: env.URL(), Body: body, Header: hdr})
	if err != nil {
		return scrapers.Result{}, err
	}
	obs, err := Parse(resp.Body, env.URL())
	return scrapers.Result{Observations: obs}, err
}

type offer struct {
	ID          int64    `json:"id"`
	NumGPUs     int      `json:"num_gpus"`
	GPUName     string   `json:"gpu_name"`
	GPURAM      float64  `json:"gpu_ram"` // MB per GPU
	Geolocation string   `json:"geolocation"`
	Reliability *float64 `json:"reliability2"`
	DPHTotal    float64  `json:"dph_total"` // USD/hour for all num_gpus GPUs, storage included
	MinBid      float64  `json:"min_bid"`   // USD/hour for all num_gpus GPUs
}

type response struct {
	Offers *[]offer `json:"offers"`
	// Error envelope: {"success": false, "error": "...", "msg": "..."}.
	Success *bool  `json:"success"`
	Error   string `json:"error"`
	Msg     string `json:"msg"`
}

// Parse turns an offer search answer into observations.
func Parse(body []byte, url string) ([]pricewatch.Observation, error) {
	var r response
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, err
	}
	if r.Success != nil && !*r.Success || r.Offers == nil && (r.Error != "" || r.Msg != "") {
		return nil, fmt.Errorf("vast error: %s: %s", r.Error, r.Msg)
	}
	if r.Offers == nil {
		return nil, fmt.Errorf("%w: no offers list", scrapers.ErrNothingParsed)
	}
	var out []pricewatch.Observation
	for _, o := range *r.Offers {
		// An offer without GPUs, identity or a positive on-demand price is
		// not an offer; its min_bid would be meaningless too.
		if o.ID == 0 || o.NumGPUs <= 0 || o.GPUName == "" || !(o.DPHTotal > 0) {
			continue
		}
		add := func(mode pricewatch.Mode, price float64) {
			if !(price > 0) {
				return
			}
			out = append(out, pricewatch.Observation{
				Source: "vast", OfferID: strconv.FormatInt(o.ID, 10), Region: o.Geolocation,
				GPUName: o.GPUName, GPUCount: o.NumGPUs, GPUMemoryGB: o.GPURAM / 1024,
				Price: price, Currency: "USD", Unit: pricewatch.PerHour, PerGPU: false,
				Mode: mode, Reliability: o.Reliability, URL: url,
				// An offer is rented whole: all num_gpus GPUs (gpu_frac is
				// the offer's share of the host, not a fraction of a GPU).
				RentUnit: pricewatch.RentFixed,
			})
		}
		add(pricewatch.ModeOnDemand, o.DPHTotal)
		// min_bid is the interruptible floor, for the whole offer like dph_total.
		add(pricewatch.ModeSpot, o.MinBid)
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}
