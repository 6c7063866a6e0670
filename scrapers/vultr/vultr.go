// Package vultr scrapes Vultr's public plans API
// (GET https://api.vultr.com/v2/plans?type=vcg, no key needed for the
// list): the Cloud GPU plans, whole and fractional, in USD per instance.
//
// Billing: Vultr bills plans by the hour, capped at the monthly price
// (730 hours). hourly_cost is therefore the on-demand price and
// monthly_cost/730 the same price in monthly units: there is no commitment
// behind the monthly figure, so the source yields ondemand only (from
// hourly_cost, or from monthly_cost with Unit PerMonth when a plan has no
// hourly_cost). A plan with a preemptible price (hourly_cost_preemptible or
// monthly_cost_preemptible, seen on bare-metal plans) also yields spot.
//
// GPU model and count: gpu_type ("NVIDIA_A100") names the card;
// gpu_count ("1", "2", or a fraction "1/4" for a shared GPU) gives the
// count; plans without gpu_count take it from gpu_vram_gb and the card's
// memory (Vultr's A16 16 GB, A40 48 GB, A100 80 GB, L40S 48 GB); plans
// without gpu_type (the dedicated "vdm" shape) take model and VRAM from
// the plan id ("vcg-a40-24c-120g-48vram"). A plan whose count cannot be
// told is kept under its plan id with one GPU, so that normalize reports
// it as unknown; it is never guessed.
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

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "vultr",
		Description: "Vultr plans API, Cloud GPU plans (type vcg)",
		Auth:        "none",
		Yields:      "ondemand (spot where a plan has a preemptible price); USD per instance-hour, or per month ÷ 730; fractional GPUs marked shared",
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

// Scraper is the Vultr source. It has no options beyond the common ones.
type Scraper struct{}

// PageURL is the URL of one page: the configured URL with type=vcg and
// per_page added where it names none, and the cursor of the page ("" for
// the first).
func PageURL(base, cursor string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("vultr: bad url %q", base)
	}
	q := u.Query()
	if q.Get("type") == "" {
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

// Scrape walks the plan pages and parses each.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	c, err := env.NewCollector(ctx)
	if err != nil {
		return scrapers.Result{}, err
	}
	hdr := http.Header{"Accept": {"application/json"}}
	var out []pricewatch.Observation
	seen := map[string]bool{}
	cursors := map[string]bool{}
	cursor := ""
	for page := 1; ; page++ {
		if page > MaxPages {
			return scrapers.Result{}, fmt.Errorf("vultr: more than %d pages of plans", MaxPages)
		}
		u, err := PageURL(env.URL(), cursor)
		if err != nil {
			return scrapers.Result{}, err
		}
		resp, err := env.Fetch(ctx, c, scrapers.Request{URL: u, Header: hdr})
		if err != nil {
			return scrapers.Result{}, fmt.Errorf("vultr page %d: %w", page, err)
		}
		obs, next, err := ParsePage(resp.Body, env.URL())
		if err != nil {
			return scrapers.Result{}, fmt.Errorf("vultr page %d: %w", page, err)
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
			break
		}
		if cursors[next] {
			return scrapers.Result{}, fmt.Errorf("vultr page %d: cursor %q repeats an earlier page", page, next)
		}
		cursors[next] = true
		cursor = next
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
	Plans *[]plan `json:"plans"`
	Meta  *struct {
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
	DeployOnDemand     *bool     `json:"deploy_ondemand"`
	DeployPreemptible  *bool     `json:"deploy_preemptible"`
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

// ParsePage turns one page into observations and returns its next cursor
// ("" on the last page).
func ParsePage(body []byte, url string) (obs []pricewatch.Observation, next string, err error) {
	var r response
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, "", err
	}
	if r.Error != "" {
		return nil, "", fmt.Errorf("API error (status %d): %s", r.Status, r.Error)
	}
	if r.Plans == nil {
		return nil, "", fmt.Errorf("%w: no plans array in the response", scrapers.ErrNothingParsed)
	}
	if r.Meta != nil {
		next = strings.TrimSpace(r.Meta.Links.Next)
	}
	for _, p := range *r.Plans {
		obs = append(obs, observations(p, url)...)
	}
	return obs, next, nil
}

// isGPU tells a GPU plan from the CPU plans a type=all answer also holds.
func isGPU(p plan) bool {
	b := strings.ToLower(strings.TrimSpace(p.GPUBrand))
	return p.GPUType != "" || strings.HasPrefix(p.ID, "vcg-") || (b != "" && b != "none")
}

func observations(p plan, url string) []pricewatch.Observation {
	id := strings.TrimSpace(p.ID)
	if id == "" || !isGPU(p) {
		return nil
	}
	// No location: not deployable anywhere now (the API lists such plans).
	deployable := false
	for _, l := range p.Locations {
		if strings.TrimSpace(l) != "" {
			deployable = true
		}
	}
	if !deployable {
		return nil
	}
	o := pricewatch.Observation{
		Source: "vultr", Provider: "vultr", OfferID: id,
		Currency: "USD", PerGPU: false, URL: url,
	}
	name, count, frac, memGB, known := gpus(p)
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
		out = append(out, o)
	}
	add(pricewatch.ModeOnDemand, p.HourlyCost, p.MonthlyCost, p.DeployOnDemand)
	if known { // an unknown plan is reported once, not once per mode
		add(pricewatch.ModeSpot, p.HourlyPreemptible, p.MonthlyPreemptible, p.DeployPreemptible)
	}
	return out
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
