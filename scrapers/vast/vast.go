// Package vast scrapes the Vast.ai marketplace offer search
// (POST /api/v0/bundles/): one on-demand and, where the host accepts bids
// at no more than the on-demand price, one interruptible (spot) observation
// per offer, in USD per hour for the whole offer (all of its num_gpus GPUs).
package vast

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
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
		Yields:      "ondemand (dph_total), spot (min_bid + storage, the interruptible floor, only where not above dph_total); USD per hour for the whole offer",
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
	// last is the observations of the last run: the next one's capacity.
	last atomic.Int64
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
	// The answer is decoded as it arrives, one offer at a time: a search
	// of 50k offers answers over 100 MB, which is never held whole. The
	// observations go into a slice of the last run's size.
	var obs []pricewatch.Observation
	err = env.Stream(ctx, c, scrapers.Request{Method: http.MethodPost, URL: env.URL(), Body: body, Header: hdr},
		func(r io.Reader) error {
			obs = make([]pricewatch.Observation, 0, s.last.Load())
			return ParseReader(r, env.URL(), func(o pricewatch.Observation) {
				obs = append(obs, o)
				if o.Mode == pricewatch.ModeOnDemand {
					env.AddOffers(1)
				}
			})
		})
	if err != nil {
		return scrapers.Result{}, err
	}
	s.last.Store(int64(len(obs)))
	return scrapers.Result{Observations: obs}, nil
}

type offer struct {
	ID          int64    `json:"id"`
	NumGPUs     int      `json:"num_gpus"`
	GPUName     string   `json:"gpu_name"`
	GPURAM      float64  `json:"gpu_ram"`       // MB per GPU
	BWNVLink    float64  `json:"bw_nvlink"`     // measured GPU-to-GPU NVLink bandwidth, GB/s; 0 without
	MaxPowerW   float64  `json:"gpu_max_power"` // the GPU's power limit, W
	TotalFLOPS  float64  `json:"total_flops"`   // TFLOPS of all num_gpus GPUs (Vast's FP32 figure)
	GPUMemBW    float64  `json:"gpu_mem_bw"`    // GB/s Vast measured on one GPU
	Geolocation string   `json:"geolocation"`
	Reliability *float64 `json:"reliability2"`
	DPHTotal    float64  `json:"dph_total"` // USD/hour for all num_gpus GPUs, storage included
	MinBid      float64  `json:"min_bid"`   // USD/hour for all num_gpus GPUs, compute only
	// StorageCost is the disk's price, USD per GB-month; StorageTotal what
	// the query's allocated_storage costs an hour (dph_total = dph_base +
	// storage_total_cost); InetUpCost the internet egress price, USD per
	// GB (internet_up_cost_per_tb / 1024).
	StorageCost  float64 `json:"storage_cost"`
	StorageTotal float64 `json:"storage_total_cost"`
	InetUpCost   float64 `json:"inet_up_cost"`
	// CPUCores are the host's cores and CPUCoresEff the offer's share of
	// them (cpu_cores × gpu_frac); CPURAM is the host's RAM in MB and
	// DiskSpace the disk the offer can have, GB. gpuhunt's vastai
	// provider reads them the same way (memory = cpu_ram ×
	// cpu_cores_effective / cpu_cores / 1000).
	CPUCores    float64 `json:"cpu_cores"`
	CPUCoresEff float64 `json:"cpu_cores_effective"`
	CPURAM      float64 `json:"cpu_ram"`
	DiskSpace   float64 `json:"disk_space"`
	// Rentable is false for an offer that cannot be rented now (the query
	// asks for rentable ones; an answer may still list others).
	Rentable *bool `json:"rentable"`
}

// Parse turns an offer search answer into observations.
func Parse(body []byte, url string) ([]pricewatch.Observation, error) {
	b := bytes.TrimSpace(body)
	if len(b) == 0 || b[0] == '<' {
		// The shared decoder says what an empty or markup body is.
		return nil, scrapers.UnmarshalJSON(b, "", new(any))
	}
	var out []pricewatch.Observation
	err := ParseReader(bytes.NewReader(b), url, func(o pricewatch.Observation) { out = append(out, o) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// observe emits an offer's observations (on-demand, and spot where it
// takes bids) and returns how many.
func observe(o offer, url string, emit func(pricewatch.Observation)) int {
	// An offer without GPUs, identity or a positive on-demand price is
	// not an offer; its min_bid would be meaningless too.
	if o.ID == 0 || o.NumGPUs <= 0 || o.GPUName == "" || !(o.DPHTotal > 0) {
		return 0
	}
	var avail pricewatch.Availability
	if o.Rentable != nil {
		avail = pricewatch.AvailableNo
		if *o.Rentable {
			avail = pricewatch.AvailableYes
		}
	}
	n := 0
	name := MemoryVariant(GPUName(o.GPUName, o.NumGPUs, o.TotalFLOPS, o.BWNVLink, o.MaxPowerW), o.GPUMemBW)
	id := strconv.FormatInt(o.ID, 10)
	machine := machineOf(o)
	add := func(mode pricewatch.Mode, price float64) {
		if !(price > 0) {
			return
		}
		n++
		emit(pricewatch.Observation{
			Source: "vast", OfferID: id, Region: o.Geolocation,
			GPUName: name, GPUCount: o.NumGPUs, GPUMemoryGB: o.GPURAM / 1024,
			Price: price, Currency: "USD", Unit: pricewatch.PerHour, PerGPU: false,
			Mode: mode, Reliability: o.Reliability, URL: url,
			// An offer is rented whole: all num_gpus GPUs (gpu_frac is
			// the offer's share of the host, not a fraction of a GPU).
			RentUnit: pricewatch.RentFixed, Available: avail,
			Bid: mode == pricewatch.ModeSpot, StoragePerGBMonth: max(o.StorageCost, 0), EgressPerGB: max(o.InetUpCost, 0),
			Machine: machine,
		})
	}
	add(pricewatch.ModeOnDemand, o.DPHTotal)
	// An interruptible instance pays its bid for the GPUs and the disk on
	// top, as the on-demand dph_total includes it: the minimum bid plus
	// the allocated storage's hourly cost. It is a bid, kept only while
	// no higher one arrives. A bid floor above the same offer's on-demand
	// price is no spot offer (nobody rents interruptibly for more than the
	// uninterruptible price) and is not emitted; see BidAboveOnDemand.
	if spot := o.MinBid + max(o.StorageTotal, 0); o.MinBid > 0 && !BidAboveOnDemand(spot, o.DPHTotal) {
		add(pricewatch.ModeSpot, spot)
	}
	return n
}

// bidRounding is how far, as a share, a bid may exceed the on-demand price
// and still be that price: Vast states min_bid to about seven significant
// digits (0.06666667 for a dph_base of 0.0666…; 0.2 + storage against
// 0.19999999999999998 + storage in floating point), so a floor set at the
// on-demand price can read a few parts in 10^8 above it.
const bidRounding = 1e-6

// BidAboveOnDemand reports whether an interruptible price (min_bid plus
// the storage's hourly cost) is above the same offer's on-demand
// dph_total by more than min_bid's rounding. In the 2024-11-05 answer
// (1396 offers) 229 bids exceed dph_total in floating point: 16 only by
// float error, 63 by min_bid's rounding (a floor at the on-demand price),
// 150 really (104 of the fixture's 659 offers, 46 of the other 737).
func BidAboveOnDemand(spot, onDemand float64) bool {
	return spot > onDemand*(1+bidRounding)
}

// clockForms are the Vast gpu_names that leave the form factor unsaid, with
// their CUDA cores and the form of each maximum SM clock (NVIDIA product
// briefs; Wikipedia's GPU list): V100 SXM2 1530 MHz, PCIe 1380, the 150 W
// FHHL card 1290; P100 SXM2 1480, PCIe 1303. A V100S or HGX-2 SXM3 (1597)
// matches none and keeps the bare name.
var clockForms = map[string]struct {
	cores int
	forms map[int]string
}{
	"Tesla V100": {5120, map[int]string{1530: "SXM2", 1380: "PCIE", 1290: "FHHL"}},
	"Tesla P100": {3584, map[int]string{1480: "SXM2", 1303: "PCIE"}},
}

// memoryForms are the Vast gpu_names of boards told apart by their memory
// alone: the slower board's peak bandwidth and the name of the faster one.
// A bandwidth Vast measured above the slower board's peak (5% allowed)
// can only be the faster board; at or below it the name stays as written
// (the faster board measures low too), and unknown.
var memoryForms = map[string]struct {
	slowerPeakGBs float64
	faster        string
}{
	"GTX 1650": {128, "GTX 1650 GDDR6"}, // GDDR5 128 GB/s, GDDR6 192 GB/s
}

// MemoryVariant names the board by Vast's measured memory bandwidth where
// memoryForms decides it.
func MemoryVariant(name string, measuredGBs float64) string {
	if mf, ok := memoryForms[name]; ok && measuredGBs > 1.05*mf.slowerPeakGBs {
		return mf.faster
	}
	return name
}

// pcieMaxPowerW is the highest power limit of a V100 or P100 PCIe card, and
// fhhlMaxPowerW the V100 FHHL's; neither card has an NVLink connector.
const (
	pcieMaxPowerW = 250
	fhhlMaxPowerW = 150
)

// GPUName is the offer's gpu_name with its form factor appended where
// Vast's own fields decide it (clockForms): total_flops is 0.8 × cores × 2 ×
// the GPU's maximum SM clock (so in the capture: A100 1410 MHz, H100 1980,
// T4 1590, V100 1290/1380/1530, P100 1480), a property of the board, not
// of the power limit the host sets. The clock names the form, and the
// NVLink bandwidth and power limit must not contradict it (a PCIe card has
// no NVLink and at most 250 W, the FHHL card 150 W). Otherwise the name
// stays as written: a bare "Tesla V100" is then its memory's lower-bound
// card (V100-16GB, V100-32GB: the slowest form's figures), a bare "Tesla
// P100" stays unknown (normalize/data/aliases.csv).
func GPUName(name string, gpus int, totalFLOPS, nvlinkGBs, maxPowerW float64) string {
	cf, ok := clockForms[name]
	if !ok || gpus <= 0 || !(totalFLOPS > 0) {
		return name
	}
	mhz := int(math.Round(totalFLOPS * 1e6 / (float64(gpus) * float64(cf.cores) * 2 * 0.8)))
	var form string
	for clock, f := range cf.forms {
		if mhz >= clock-5 && mhz <= clock+5 {
			form = f
		}
	}
	switch {
	case form == "":
		return name
	case form == "PCIE" && (nvlinkGBs > 0 || maxPowerW > pcieMaxPowerW),
		form == "FHHL" && (nvlinkGBs > 0 || maxPowerW > fhhlMaxPowerW):
		return name // the fields disagree: leave it unknown
	}
	return name + " " + form
}

// machineOf is what comes with an offer's GPUs: its share of the host's
// cores, RAM in GB (the host's MB × the share of the cores, / 1000) and
// disk, the country its geolocation ends with ("Texas, US"), and Vast's
// create page (the console lists offers by search, not by a link per
// offer). A field Vast leaves null or zero is not stated.
func machineOf(o offer) pricewatch.Machine {
	m := pricewatch.Machine{RentURL: RentURL}
	if o.CPUCoresEff > 0 && o.CPUCoresEff < 1e5 {
		m.VCPUs = o.CPUCoresEff
		if o.CPUCores > 0 && o.CPURAM > 0 {
			m.RAMGB = math.Round(o.CPURAM*o.CPUCoresEff/o.CPUCores) / 1000
		}
	}
	if o.DiskSpace > 0 && o.DiskSpace < 1e7 {
		m.DiskGB = o.DiskSpace
	}
	if i := strings.LastIndex(o.Geolocation, ","); i >= 0 {
		if c := strings.TrimSpace(o.Geolocation[i+1:]); len(c) == 2 {
			m.Country = c
		}
	} else if c := strings.TrimSpace(o.Geolocation); len(c) == 2 {
		m.Country = c
	}
	return m
}

// RentURL is where a Vast instance is created from the offers found.
const RentURL = "https://cloud.vast.ai/create/"
