// Package runpod scrapes RunPod's public GraphQL gpuTypes query: per GPU
// type, Secure and Community Cloud on-demand and spot prices and the
// 1-week/1/3/6-month commitment prices, all in USD per GPU-hour.
package runpod

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// Query asks, besides the prices, for each type's stock in each cloud:
// lowestPrice(input: {gpuCount: 1, secureCloud: …}).stockStatus is "High",
// "Medium" or "Low", or null when no GPU of the type can be rented there
// now (how gpuhunt's RunPod provider tells available types; aliased once
// per cloud).
const Query = `query GpuTypes { gpuTypes { id displayName memoryInGb maxGpuCount secureCloud communityCloud ` +
	`securePrice communityPrice secureSpotPrice communitySpotPrice oneWeekPrice oneMonthPrice threeMonthPrice sixMonthPrice ` +
	`secureStock: lowestPrice(input: {gpuCount: 1, secureCloud: true}) { stockStatus } ` +
	`communityStock: lowestPrice(input: {gpuCount: 1, secureCloud: false}) { stockStatus } } }`

// APIKeyEnv optionally carries a RunPod API key; the query works without one.
const APIKeyEnv = "PRICEWATCH_RUNPOD_API_KEY"

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "runpod",
		Description: "RunPod GraphQL gpuTypes",
		Auth:        "none (optional key in " + APIKeyEnv + ")",
		Yields:      "ondemand, spot (Secure and Community Cloud), weekly, monthly, reserved-3m, reserved-6m; USD per GPU-hour",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://api.runpod.io/graphql",
			Schedule:   "*/15 * * * *",
			StaleAfter: 45 * time.Minute,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the RunPod source. It has no options beyond the common ones.
type Scraper struct{}

type gpuType struct {
	ID                 string   `json:"id"`
	DisplayName        string   `json:"displayName"`
	MemoryInGb         float64  `json:"memoryInGb"`
	MaxGpuCount        int      `json:"maxGpuCount"`
	SecureCloud        bool     `json:"secureCloud"`
	CommunityCloud     bool     `json:"communityCloud"`
	SecurePrice        *float64 `json:"securePrice"`
	CommunityPrice     *float64 `json:"communityPrice"`
	SecureSpotPrice    *float64 `json:"secureSpotPrice"`
	CommunitySpotPrice *float64 `json:"communitySpotPrice"`
	OneWeekPrice       *float64 `json:"oneWeekPrice"`
	OneMonthPrice      *float64 `json:"oneMonthPrice"`
	ThreeMonthPrice    *float64 `json:"threeMonthPrice"`
	SixMonthPrice      *float64 `json:"sixMonthPrice"`
	// SecureStock and CommunityStock are the aliased lowestPrice answers;
	// nil when the answer has none (the 2025 capture predates the field).
	SecureStock    *stock `json:"secureStock"`
	CommunityStock *stock `json:"communityStock"`
}

// stock is a lowestPrice answer: StockStatus null means out of stock.
type stock struct {
	StockStatus *string `json:"stockStatus"`
}

// availability reads a tier's stock: unknown without an answer, no for a
// null status, yes with the level otherwise.
func (s *stock) availability() (pricewatch.Availability, string) {
	switch {
	case s == nil:
		return "", ""
	case s.StockStatus == nil || *s.StockStatus == "":
		return pricewatch.AvailableNo, "out of stock"
	}
	return pricewatch.AvailableYes, *s.StockStatus
}

type response struct {
	Data *struct {
		GPUTypes []gpuType `json:"gpuTypes"`
	} `json:"data"`
	Errors []struct {
		Message string `json:"message"`
	} `json:"errors"`
}

// Scrape posts the gpuTypes query and parses the answer.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	c, err := env.NewCollector(ctx)
	if err != nil {
		return scrapers.Result{}, err
	}
	body, _ := json.Marshal(map[string]any{"query": Query})
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	if key := env.Secret(APIKeyEnv); key != "" {
		hdr.Set("Authorization", "Bearer "+key)
	}
	resp, err := env.Fetch(ctx, c, scrapers.Request{Method: http.MethodPost, URL: env.URL(), Body: body, Header: hdr})
	if err != nil {
		return scrapers.Result{}, err
	}
	obs, err := Parse(resp.Body, env.URL())
	return scrapers.Result{Observations: obs}, err
}

// Parse turns a gpuTypes answer into observations. Every price is per GPU
// and a pod of the type takes any GPU count from 1 to maxGpuCount (the
// counts gpuhunt and SkyPilot's catalog fetcher enumerate), so each offer is
// rented per GPU with GPUCount maxGpuCount.
func Parse(body []byte, url string) ([]pricewatch.Observation, error) {
	var r response
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, err
	}
	if len(r.Errors) > 0 {
		return nil, fmt.Errorf("graphql error: %s", r.Errors[0].Message)
	}
	if r.Data == nil {
		return nil, fmt.Errorf("%w: no data.gpuTypes", scrapers.ErrNothingParsed)
	}
	var out []pricewatch.Observation
	for _, g := range r.Data.GPUTypes {
		// A query that does not ask for the id (a real capture of another
		// query has none) still names the GPU: displayName with the memory
		// decides the card where the display name does (the aliases'
		// guards keep "Tesla V100" 16 GB, PCIe or SXM2, unknown).
		name := strings.TrimSpace(g.ID)
		if name == "" {
			name = strings.TrimSpace(g.DisplayName)
		}
		// The capture's "unknown" row is a placeholder, not a card.
		if name == "" || strings.EqualFold(name, "unknown") || g.MemoryInGb <= 0 {
			continue
		}
		add := func(tier string, mode pricewatch.Mode, offered bool, price *float64) {
			// null means "not offered in that tier"; so does any price on a
			// tier the flags say the card is not in (the capture has
			// placeholder 0.5 community prices and 0 secure prices there).
			// A zero price on an offered tier goes on to normalization,
			// which skips it and counts it invalid.
			if !offered || price == nil {
				return
			}
			st := g.SecureStock
			if tier == "community" {
				st = g.CommunityStock
			}
			avail, level := st.availability()
			out = append(out, pricewatch.Observation{
				Source: "runpod", OfferID: name + "/" + tier, GPUName: name,
				GPUCount: g.MaxGpuCount, GPUMemoryGB: g.MemoryInGb,
				Price: *price, Currency: "USD", Unit: pricewatch.PerHour, PerGPU: true,
				Mode: mode, URL: url, Machine: pricewatch.Machine{RentURL: RentURL},
				// A pod takes any count from 1 to maxGpuCount of the type
				// at the per-GPU price (no GPUCounts: 1..GPUCount).
				RentUnit:  pricewatch.RentPerGPU,
				Available: avail, Stock: level,
			})
		}
		add("secure", pricewatch.ModeOnDemand, g.SecureCloud, g.SecurePrice)
		add("community", pricewatch.ModeOnDemand, g.CommunityCloud, g.CommunityPrice)
		add("secure", pricewatch.ModeSpot, g.SecureCloud, g.SecureSpotPrice)
		add("community", pricewatch.ModeSpot, g.CommunityCloud, g.CommunitySpotPrice)
		// Commitment (savings plan) prices are Secure Cloud prices, still per GPU-hour.
		add("secure", pricewatch.ModeWeekly, g.SecureCloud, g.OneWeekPrice)
		add("secure", pricewatch.ModeMonthly, g.SecureCloud, g.OneMonthPrice)
		add("secure", pricewatch.ModeReserved3M, g.SecureCloud, g.ThreeMonthPrice)
		add("secure", pricewatch.ModeReserved6M, g.SecureCloud, g.SixMonthPrice)
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}

// RentURL is where a pod is deployed (the console's deploy page). The
// gpuTypes answer states no vCPUs, RAM or disk per GPU type: those are
// left unstated.
const RentURL = "https://console.runpod.io/deploy"
