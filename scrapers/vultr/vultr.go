// Package vultr scrapes Vultr's public plans API (no key needed for the
// plan lists): the Cloud GPU plans (GET https://api.vultr.com/v2/plans?type=vcg),
// whole and fractional, and the bare-metal GPU plans
// (GET https://api.vultr.com/v2/plans-metal: 8× H100, 8× A100, 4× A100,
// 8× L40S, GH200, 8× MI300X, …), in USD per instance.
//
// Billing: Vultr bills plans by the hour, capped at the monthly price
// (docs.vultr.com …/how-am-i-billed-for-my-servers: GPU instances up to
// 730 hours a month, bare metal up to 672). hourly_cost is therefore the
// on-demand price, and monthly_cost ÷ hourly_cost the plan's cap in hours
// (672 on the bare-metal plans captured whole, 730 on Cloud GPU), carried as
// MonthlyCapHours; bandwidth (GB a month) as FreeEgressGBMonth. There is
// no commitment behind the monthly figure, so the source yields ondemand
// only (from hourly_cost, or from monthly_cost with Unit PerMonth when a
// plan has no hourly_cost). A plan with a preemptible price (hourly_cost_preemptible or
// monthly_cost_preemptible, seen on bare-metal plans) also yields spot.
//
// GPU model and count of a Cloud GPU plan: gpu_type ("NVIDIA_A100") names
// the card; gpu_count ("1", "2", or a fraction "1/4" for a shared GPU)
// gives the count; plans without gpu_count take it from gpu_vram_gb and the
// card's memory (Vultr's A16 16 GB, A40 48 GB, A100 80 GB, L40S 48 GB);
// plans without gpu_type (the dedicated "vdm" shape) take model and VRAM
// from the plan id ("vcg-a40-24c-120g-48vram"). A bare-metal plan (id
// "vbm-…-gpu") takes its card and count from the table metalPlans, else
// from gpu_type and gpu_count where the answer states them. A plan whose
// count cannot be told is kept under its plan id with one GPU, so that
// normalize reports it as unknown; it is never guessed, and never dropped.
//
// Availability: locations lists where a plan can be deployed now. A plan
// with locations is available (stock: the locations); one with none is
// kept, not available.
//
// Pagination: meta.links.next is a cursor, sent back as ?cursor=.
package vultr

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// PerPage is the page size asked for (the API's maximum is 500).
const PerPage = 500

// MaxPages caps the pages followed in one run.
const MaxPages = 20

// MetalPath is the bare-metal plans endpoint beside /v2/plans.
const MetalPath = "/v2/plans-metal"

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "vultr",
		Description: "Vultr plans API, Cloud GPU plans (type vcg) and bare-metal GPU plans (plans-metal)",
		Auth:        "none",
		Yields:      "ondemand (spot where a plan has a preemptible price); USD per instance-hour, or per month ÷ 730; fractional GPUs marked shared; availability from the plan's locations",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://api.vultr.com/v2/plans?type=vcg",
			Schedule:   "40 */6 * * *",
			StaleAfter: 15 * time.Hour,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the Vultr source.
type Scraper struct {
	// MetalURL is the bare-metal plans endpoint. Empty: /v2/plans-metal on
	// the host of url.
	MetalURL string `yaml:"metal_url"`
	// SkipMetal leaves the bare-metal plans out.
	SkipMetal bool `yaml:"skip_metal"`
}

// Rebase points the bare-metal endpoint at base, as config's url points
// the Cloud GPU one.
func (s *Scraper) Rebase(base string) {
	s.MetalURL = strings.TrimRight(base, "/") + MetalPath
}

// metalURL is the configured bare-metal endpoint or the one beside plans.
func (s *Scraper) metalURL(plans string) (string, error) {
	if s.MetalURL != "" {
		return s.MetalURL, nil
	}
	u, err := url.Parse(plans)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("vultr: bad url %q", plans)
	}
	u.Path, u.RawPath, u.RawQuery = MetalPath, "", ""
	return u.String(), nil
}

// PageURL is the URL of one page: the configured URL with type=vcg and
// per_page added where it names none, and the cursor of the page ("" for
// the first).
func PageURL(base, cursor string) (string, error) {
	return pageURL(base, cursor, true)
}

// MetalPageURL is the URL of one bare-metal page: base with per_page added
// where it names none, and the cursor of the page ("" for the first).
func MetalPageURL(base, cursor string) (string, error) {
	return pageURL(base, cursor, false)
}

func pageURL(base, cursor string, vcg bool) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("vultr: bad url %q", base)
	}
	q := u.Query()
	if vcg && q.Get("type") == "" {
		q.Set("type", "vcg")
	}
	if q.Get("per_page") == "" {
		q.Set("per_page", strconv.Itoa(PerPage))
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	} else {
		q.Del("cursor")
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Scrape walks the Cloud GPU plan pages, then the bare-metal ones.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	metal := ""
	if !s.SkipMetal {
		var err error
		if metal, err = s.metalURL(env.URL()); err != nil {
			return scrapers.Result{}, err
		}
	}
	var extra []string
	if metal != "" {
		extra = append(extra, metal)
	}
	c, err := env.NewCollector(ctx, extra...)
	if err != nil {
		return scrapers.Result{}, err
	}
	var out []pricewatch.Observation
	seen := map[string]bool{}
	walk := func(what string, pageURL func(cursor string) (string, error), parse func([]byte, string) ([]pricewatch.Observation, string, error), url string) error {
		hdr := http.Header{"Accept": {"application/json"}}
		cursors := map[string]bool{}
		cursor := ""
		for page := 1; ; page++ {
			if page > MaxPages {
				return fmt.Errorf("vultr %s: more than %d pages of plans", what, MaxPages)
			}
			u, err := pageURL(cursor)
			if err != nil {
				return err
			}
			resp, err := env.Fetch(ctx, c, scrapers.Request{URL: u, Header: hdr})
			if err != nil {
				return fmt.Errorf("vultr %s page %d: %w", what, page, err)
			}
			obs, next, err := parse(resp.Body, url)
			if err != nil {
				return fmt.Errorf("vultr %s page %d: %w", what, page, err)
			}
			for _, o := range obs {
				k := pricewatch.OfferKey(o.Source, o.OfferID, o.Region, o.Mode)
				if !seen[k] {
					seen[k] = true
					out = append(out, o)
				}
			}
			env.AddOffers(len(obs))
			if next == "" {
				return nil
			}
			if cursors[next] {
				return fmt.Errorf("vultr %s page %d: cursor %q repeats an earlier page", what, page, next)
			}
			cursors[next] = true
			cursor = next
		}
	}
	if err := walk("plans", func(cur string) (string, error) { return PageURL(env.URL(), cur) }, ParsePage, env.URL()); err != nil {
		return scrapers.Result{}, err
	}
	if metal != "" {
		if err := walk("plans-metal", func(cur string) (string, error) { return MetalPageURL(metal, cur) }, ParseMetalPage, metal); err != nil {
			return scrapers.Result{Observations: out}, err
		}
	}
	if len(out) == 0 {
		return scrapers.Result{}, scrapers.ErrNothingParsed
	}
	return scrapers.Result{Observations: out}, nil
}

// Parse turns one page into observations; a page without a usable GPU plan
// is ErrNothingParsed.
func Parse(body []byte, url string) ([]pricewatch.Observation, error) {
	obs, _, err := ParsePage(body, url)
	if err == nil && len(obs) == 0 {
		err = scrapers.ErrNothingParsed
	}
	return obs, err
}

type response struct {
	Plans      *[]plan `json:"plans"`
	PlansMetal *[]plan `json:"plans_metal"`
	Meta       *struct {
		Total int `json:"total"`
		Links struct {
			Next string `json:"next"`
			Prev string `json:"prev"`
		} `json:"links"`
	} `json:"meta"`
	Error  string `json:"error"`
	Status int    `json:"status"`
}

// plan is one entry of plans[]; only the fields the parser reads.
type plan struct {
	ID                 string    `json:"id"`
	Type               string    `json:"type"`
	MonthlyCost        flexFloat `json:"monthly_cost"`
	HourlyCost         flexFloat `json:"hourly_cost"`
	MonthlyPreemptible flexFloat `json:"monthly_cost_preemptible"`
	HourlyPreemptible  flexFloat `json:"hourly_cost_preemptible"`
	Locations          []string  `json:"locations"`
	GPUType            string    `json:"gpu_type"`
	GPUVRAM            flexFloat `json:"gpu_vram_gb"`
	GPUCount           flexCount `json:"gpu_count"`
	GPUBrand           string    `json:"gpu_brand"`
	// What comes with the plan: vcpu_count (cloud plans) or cpu_threads
	// (bare metal) vCPUs, ram in MB (binary: /1024 is GiB, as gpuhunt's
	// vultr provider reads it), disk_count disks of disk GB each.
	VCPUCount         flexFloat `json:"vcpu_count"`
	CPUThreads        flexFloat `json:"cpu_threads"`
	RAM               flexFloat `json:"ram"`
	Disk              flexFloat `json:"disk"`
	DiskCount         flexFloat `json:"disk_count"`
	Bandwidth         flexFloat `json:"bandwidth"` // GB a month included
	DeployOnDemand    *bool     `json:"deploy_ondemand"`
	DeployPreemptible *bool     `json:"deploy_preemptible"`
}

// flexFloat accepts a JSON number or a numeric string; null or absent is 0.
type flexFloat float64

func (f *flexFloat) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(bytes.TrimSpace(b)), `"`)
	if s == "" || s == "null" {
		*f = 0
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("not a number: %s", b)
	}
	*f = flexFloat(v)
	return nil
}

// flexCount is gpu_count: a JSON number or a string, whole ("2") or a
// fraction of one GPU ("1/4"). Set tells absent from zero.
type flexCount struct {
	Whole    int
	Fraction float64
	Set      bool
}

func (c *flexCount) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(strings.Trim(string(bytes.TrimSpace(b)), `"`))
	if s == "" || s == "null" {
		*c = flexCount{}
		return nil
	}
	if num, den, ok := strings.Cut(s, "/"); ok {
		n, err1 := strconv.Atoi(strings.TrimSpace(num))
		d, err2 := strconv.Atoi(strings.TrimSpace(den))
		if err1 != nil || err2 != nil || n <= 0 || d <= 0 || n > d {
			return fmt.Errorf("gpu_count %q is not a fraction of one GPU", s)
		}
		if n == d {
			*c = flexCount{Whole: 1, Set: true}
		} else {
			*c = flexCount{Whole: 1, Fraction: float64(n) / float64(d), Set: true}
		}
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 || v != math.Trunc(v) || v > 1e4 {
		return fmt.Errorf("gpu_count %q is not a positive count", s)
	}
	*c = flexCount{Whole: int(v), Set: true}
	return nil
}

// cardMemoryGB is the memory of one GPU of the models Vultr sells as Cloud
// GPU, keyed by the model token of gpu_type and plan ids (lower case). It
// is used only to tell a count from gpu_vram_gb when gpu_count is absent.
// Vultr's A100s are the 80 GB PCIe part (pricing page "NVIDIA PCIe A100",
// 1 GPU = 80 GB GPU RAM).
var cardMemoryGB = map[string]float64{"a16": 16, "a40": 48, "a100": 80, "l40s": 48}

// idRe reads model and total VRAM from a Cloud GPU plan id.
var idRe = regexp.MustCompile(`^vcg-([a-z0-9]+)-[0-9]+c-[0-9.]+g-([0-9]+)vram$`)

// ParsePage turns one page of Cloud GPU plans into observations and
// returns its next cursor ("" on the last page).
func ParsePage(body []byte, url string) (obs []pricewatch.Observation, next string, err error) {
	return parsePage(body, url, false)
}

// ParseMetalPage turns one page of bare-metal plans (plans_metal) into
// observations and returns its next cursor ("" on the last page).
func ParseMetalPage(body []byte, url string) (obs []pricewatch.Observation, next string, err error) {
	return parsePage(body, url, true)
}

func parsePage(body []byte, url string, metal bool) (obs []pricewatch.Observation, next string, err error) {
	var r response
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, "", err
	}
	if r.Error != "" {
		return nil, "", fmt.Errorf("API error (status %d): %s", r.Status, r.Error)
	}
	list, key := r.Plans, "plans"
	if metal {
		list, key = r.PlansMetal, "plans_metal"
	}
	if list == nil {
		return nil, "", fmt.Errorf("%w: no %s array in the response", scrapers.ErrNothingParsed, key)
	}
	if r.Meta != nil {
		next = strings.TrimSpace(r.Meta.Links.Next)
	}
	for _, p := range *list {
		obs = append(obs, observations(p, url, metal)...)
	}
	return obs, next, nil
}

// isGPU tells a GPU plan from the CPU plans a type=all answer (or the
// bare-metal list) also holds.
func isGPU(p plan, metal bool) bool {
	b := strings.ToLower(strings.TrimSpace(p.GPUBrand))
	if p.GPUType != "" || (b != "" && b != "none") {
		return true
	}
	if metal {
		return strings.HasSuffix(strings.ToLower(strings.TrimSpace(p.ID)), "-gpu")
	}
	return strings.HasPrefix(p.ID, "vcg-")
}

func observations(p plan, url string, metal bool) []pricewatch.Observation {
	id := strings.TrimSpace(p.ID)
	if id == "" || !isGPU(p, metal) {
		return nil
	}
	o := pricewatch.Observation{
		Source: "vultr", Provider: "vultr", OfferID: id,
		Currency: "USD", PerGPU: false, URL: url,
	}
	// Where the plan can be deployed now; a plan listed with no location
	// is kept, not available (the API lists such plans).
	var locs []string
	for _, l := range p.Locations {
		if l = strings.TrimSpace(l); l != "" {
			locs = append(locs, l)
		}
	}
	if len(locs) > 0 {
		o.Available, o.Stock = pricewatch.AvailableYes, "deployable in "+strings.Join(locs, ", ")
	} else {
		o.Available, o.Stock = pricewatch.AvailableNo, "deployable nowhere now"
	}
	var (
		name        string
		count       int
		frac, memGB float64
		known       bool
	)
	if metal {
		name, count, memGB, known = metalGPUs(p)
	} else {
		name, count, frac, memGB, known = gpus(p)
	}
	if known {
		// A plan is rented whole: its GPUs, or one share of one GPU
		// (count 1 with its fraction) for a fractional plan.
		o.GPUName, o.GPUCount, o.GPUFraction, o.GPUMemoryGB = name, count, frac, memGB
		o.RentUnit = pricewatch.RentFixed
	} else {
		// Model or count unknown: kept under the plan id with one GPU so
		// normalize reports it as unknown; no rent unit; never ranked.
		o.GPUName, o.GPUCount = id, 1
	}
	o.Machine = machineOf(p, metal)
	var out []pricewatch.Observation
	add := func(mode pricewatch.Mode, hourly, monthly flexFloat, allowed *bool) {
		if allowed != nil && !*allowed {
			return
		}
		switch {
		case valid(hourly):
			o.Price, o.Unit = float64(hourly), pricewatch.PerHour
		case valid(monthly):
			o.Price, o.Unit = float64(monthly), pricewatch.PerMonth
		default:
			return
		}
		o.Mode = mode
		// Vultr bills hourly up to the plan's monthly price: that price ÷
		// the hourly one is the plan's monthly cap in hours (672 on most
		// bare-metal plans, 730 on Cloud GPU and some bare metal). A plan
		// also includes its bandwidth (GB a month) beside the account's.
		o.MonthlyCapHours, o.FreeEgressGBMonth = 0, max(float64(p.Bandwidth), 0)
		if valid(hourly) && valid(monthly) {
			o.MonthlyCapHours = float64(monthly) / float64(hourly)
		}
		out = append(out, o)
	}
	add(pricewatch.ModeOnDemand, p.HourlyCost, p.MonthlyCost, p.DeployOnDemand)
	if known { // an unknown plan is reported once, not once per mode
		add(pricewatch.ModeSpot, p.HourlyPreemptible, p.MonthlyPreemptible, p.DeployPreemptible)
	} else if len(out) == 0 {
		// Only a preemptible price: still reported, not dropped.
		add(pricewatch.ModeSpot, p.HourlyPreemptible, p.MonthlyPreemptible, p.DeployPreemptible)
	}
	return out
}

// metalGPU is what a bare-metal GPU plan carries.
type metalGPU struct {
	Card     string // canonical card id (cards.csv)
	GPUs     int
	MemoryGB float64
}

// metalPlans maps bare-metal plan ids to their GPUs. The ids, counts and
// memory are those dstackai/gpuhunt's Vultr provider keeps
// (BARE_METAL_GPU_DETAILS) and that the plans API names in gpu_type
// (NVIDIA_H100, NVIDIA_A100_SXM, NVIDIA_L40S, NVIDIA_GH200, AMD_MI300X);
// the card is the canonical one where the form factor is certain: the
// 8-GPU A100 plan says SXM itself, the 8-GPU H100 plan is an HGX node
// (2 TB of RAM, two Xeon 8480+). The 4-GPU A100 plan ("NVIDIA_A100",
// form factor not stated) and plans not listed here (B200, MI325X, MI355X)
// are named from gpu_type/gpu_count where the answer has them, else
// reported under their id.
var metalPlans = map[string]metalGPU{
	"vbm-112c-2048gb-8-h100-gpu":   {"H100-80GB-SXM", 8, 80},
	"vbm-112c-2048gb-8-a100-gpu":   {"A100-80GB-SXM", 8, 80},
	"vbm-64c-2048gb-8-l40-gpu":     {"L40S", 8, 48},
	"vbm-72c-480gb-gh200-gpu":      {"GH200-96GB", 1, 96},
	"vbm-256c-2048gb-8-mi300x-gpu": {"MI300X-192GB", 8, 192},
}

// metalGPUs works out a bare-metal plan's card, GPU count and memory per
// GPU: from the table, else from gpu_type and a whole gpu_count (memory
// from gpu_vram_gb, the plan's total, divided by the count).
func metalGPUs(p plan) (name string, count int, memGB float64, ok bool) {
	if g, ok := metalPlans[strings.ToLower(strings.TrimSpace(p.ID))]; ok {
		return g.Card, g.GPUs, g.MemoryGB, true
	}
	name = strings.TrimSpace(p.GPUType)
	if name == "" || !p.GPUCount.Set || p.GPUCount.Fraction > 0 || p.GPUCount.Whole < 1 {
		return "", 0, 0, false
	}
	count = p.GPUCount.Whole
	if v := float64(p.GPUVRAM); v > 0 {
		memGB = v / float64(count)
	}
	return name, count, memGB, true
}

func valid(v flexFloat) bool {
	f := float64(v)
	return f > 0 && !math.IsInf(f, 0) && !math.IsNaN(f)
}

// gpus works out the GPU model as written, the whole-GPU count, the share
// of one GPU for fractional plans and the memory of one whole GPU.
func gpus(p plan) (name string, count int, frac, memGB float64, ok bool) {
	name = strings.TrimSpace(p.GPUType)
	vram := float64(p.GPUVRAM)
	token := ""
	if name != "" {
		_, model, found := strings.Cut(name, "_")
		if !found {
			model = name
		}
		token = strings.ToLower(model)
	} else if m := idRe.FindStringSubmatch(strings.TrimSpace(p.ID)); m != nil {
		// The dedicated (vdm) shape carries no GPU fields: model and VRAM
		// from the id. The card is named as Vultr's gpu_type would.
		token = m[1]
		if _, known := cardMemoryGB[token]; !known {
			return "", 0, 0, 0, false
		}
		name = "NVIDIA_" + strings.ToUpper(token)
		if vram <= 0 {
			vram, _ = strconv.ParseFloat(m[2], 64)
		}
	} else {
		return "", 0, 0, 0, false
	}
	card := cardMemoryGB[token]
	switch {
	case p.GPUCount.Set:
		count, frac = p.GPUCount.Whole, p.GPUCount.Fraction
		switch {
		case frac > 0 && vram > 0:
			memGB = vram / frac
		case vram > 0:
			memGB = vram / float64(count)
		default:
			memGB = card
		}
	case card > 0 && vram > 0:
		if vram < card {
			count, frac = 1, vram/card
		} else {
			n := vram / card
			if n != math.Trunc(n) {
				return "", 0, 0, 0, false // VRAM not a multiple of the card's
			}
			count = int(n)
		}
		memGB = card
	default:
		return "", 0, 0, 0, false
	}
	if count <= 0 {
		return "", 0, 0, 0, false
	}
	return name, count, frac, memGB, true
}

// RentURL is where a Vultr instance is deployed (the customer portal).
const RentURL = "https://my.vultr.com/deploy/"

// machineOf is what comes with a plan (0: not stated).
func machineOf(p plan, metal bool) pricewatch.Machine {
	vcpus := float64(p.VCPUCount)
	if metal {
		vcpus = float64(p.CPUThreads)
	}
	disks := float64(max(p.DiskCount, 1))
	return pricewatch.Machine{VCPUs: max(vcpus, 0), RAMGB: max(float64(p.RAM), 0) / 1024, DiskGB: max(float64(p.Disk), 0) * disks,
		RentURL: RentURL}
}
