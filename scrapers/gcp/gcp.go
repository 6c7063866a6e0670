// Package gcp scrapes the Google Cloud Billing Catalog API for Compute
// Engine GPU prices: one SKU per GPU model, usage type and location, priced
// per GPU-hour (the VM's vCPUs and memory are billed separately and are not
// included). Usage types map to modes: OnDemand → ondemand, Preemptible →
// spot, Commit1Yr / Commit3Yr → reserved-1y / reserved-3y (hourly rates).
//
// The API needs an API key (PRICEWATCH_GCP_API_KEY). The key travels in the
// query string, so every error this package returns is redacted of it.
package gcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// Name is the source name.
const Name = "gcp"

// APIKeyEnv names the environment variable holding the API key.
const APIKeyEnv = "PRICEWATCH_GCP_API_KEY"

// PageSize is the number of SKUs asked for per page (Google's maximum).
const PageSize = 5000

// DefaultMaxPages caps the pages followed per run; the Compute Engine
// catalog is a few pages of 5000 SKUs.
const DefaultMaxPages = 40

// PageURL is the public GPU pricing page, given as the offers' URL (never
// the API URL, which carries the key).
const PageURL = "https://cloud.google.com/compute/gpus-pricing"

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        Name,
		Description: "Google Cloud Billing Catalog API, Compute Engine GPU SKUs (GPU only; vCPU and RAM billed extra)",
		Auth:        "API key in " + APIKeyEnv + " (Cloud Billing API enabled)",
		Yields:      "ondemand, spot, reserved-1y, reserved-3y; USD per GPU-hour",
		Defaults: scrapers.Settings{
			Enabled: true,
			// Compute Engine's service id.
			URL:        "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus",
			Schedule:   "23 */6 * * *",
			StaleAfter: 15 * time.Hour,
			Timeout:    2 * time.Minute,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{MaxPages: DefaultMaxPages} },
	})
}

// Scraper is the Google Cloud source.
type Scraper struct {
	// MaxPages caps the pages followed; a catalog with more fails the run
	// rather than silently losing SKUs.
	MaxPages int `yaml:"max_pages"`
}

// Check disables the source when no API key is set.
func (s *Scraper) Check(env *scrapers.Env) error {
	if env.Secret(APIKeyEnv) == "" {
		return &scrapers.Disabled{Reason: "needs " + APIKeyEnv + " (a Google Cloud API key with the Cloud Billing API enabled)"}
	}
	return nil
}

// Scrape walks the SKU pages by nextPageToken.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	if err := s.Check(env); err != nil {
		return scrapers.Result{}, err
	}
	key := env.Secret(APIKeyEnv)
	res, err := s.scrape(ctx, env, key)
	return res, redact(err, key)
}

func (s *Scraper) scrape(ctx context.Context, env *scrapers.Env, key string) (scrapers.Result, error) {
	maxPages := s.MaxPages
	if maxPages <= 0 {
		maxPages = DefaultMaxPages
	}
	base, err := url.Parse(env.URL())
	if err != nil || base.Host == "" {
		return scrapers.Result{}, fmt.Errorf("bad url %q", env.URL())
	}
	c, err := env.NewCollector(ctx)
	if err != nil {
		return scrapers.Result{}, err
	}
	hdr := http.Header{"Accept": {"application/json"}}
	var (
		out      []pricewatch.Observation
		seen     = map[string]bool{}
		visited  = map[string]bool{}
		token    string
		skus     int
		noRegion int
	)
	for page := 1; ; page++ {
		if err := ctx.Err(); err != nil {
			return scrapers.Result{}, err
		}
		if page > maxPages {
			return scrapers.Result{}, fmt.Errorf("more than %d pages of SKUs (raise max_pages)", maxPages)
		}
		resp, err := env.Fetch(ctx, c, scrapers.Request{URL: PageRequestURL(base, key, token), Header: hdr})
		if err != nil {
			return scrapers.Result{}, fmt.Errorf("page %d: %w", page, explain(err))
		}
		p, err := Parse(resp.Body)
		if err != nil && !(errors.Is(err, scrapers.ErrNothingParsed) && page > 1) {
			return scrapers.Result{}, fmt.Errorf("page %d: %w", page, err)
		}
		skus += p.SKUs
		noRegion += p.NoRegion
		for _, o := range p.Observations {
			k := pricewatch.OfferKey(o.Source, o.OfferID, o.Region, o.Mode)
			if !seen[k] {
				seen[k] = true
				out = append(out, o)
			}
		}
		env.AddOffers(len(p.Observations))
		if p.NextPageToken == "" {
			break
		}
		if visited[p.NextPageToken] {
			return scrapers.Result{}, fmt.Errorf("page %d: nextPageToken repeats an earlier page", page)
		}
		visited[p.NextPageToken] = true
		token = p.NextPageToken
	}
	if len(out) == 0 {
		why := fmt.Sprintf("%d SKUs read, none a priced whole-GPU SKU with a service region", skus)
		if noRegion > 0 {
			why += fmt.Sprintf(" (%d GPU SKUs without serviceRegions)", noRegion)
		}
		return scrapers.Result{}, fmt.Errorf("%w: %s", scrapers.ErrNothingParsed, why)
	}
	return scrapers.Result{Observations: out}, nil
}

// PageRequestURL is the request for one page: the endpoint with the key,
// the page size, USD and the page token (none for the first page).
func PageRequestURL(base *url.URL, key, token string) string {
	u := *base
	q := u.Query()
	q.Set("key", key)
	q.Set("pageSize", strconv.Itoa(PageSize))
	q.Set("currencyCode", "USD")
	if token != "" {
		q.Set("pageToken", token)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// explain turns the API's documented refusals into plain causes.
func explain(err error) error {
	var he *scrapers.HTTPError
	if !errors.As(err, &he) {
		return err
	}
	switch {
	case he.Status == http.StatusBadRequest &&
		(strings.Contains(he.Snippet, "API_KEY_INVALID") || strings.Contains(he.Snippet, "API key not valid")):
		return fmt.Errorf("the API key in %s is invalid (Google answered API_KEY_INVALID): %w", APIKeyEnv, err)
	case he.Status == http.StatusForbidden &&
		(strings.Contains(he.Snippet, "SERVICE_DISABLED") || strings.Contains(he.Snippet, "has not been used")):
		return fmt.Errorf("the Cloud Billing API is not enabled for the API key's project: %w", err)
	case he.Status == http.StatusForbidden:
		return fmt.Errorf("the API key in %s was refused: %w", APIKeyEnv, err)
	}
	return err
}

// redactedError carries a message scrubbed of the key. It answers errors.Is
// for its cause (ErrNothingParsed, Disabled) but does not unwrap, so that
// no caller can print the unredacted chain (a URL in a net/http error).
type redactedError struct {
	msg   string
	cause error
}

func (e *redactedError) Error() string        { return e.msg }
func (e *redactedError) Is(target error) bool { return errors.Is(e.cause, target) }

func redact(err error, key string) error {
	if err == nil || key == "" {
		return err
	}
	msg := err.Error()
	for _, v := range []string{key, url.QueryEscape(key), url.PathEscape(key)} {
		if v != "" {
			msg = strings.ReplaceAll(msg, v, "REDACTED")
		}
	}
	if msg == err.Error() {
		return err // nothing to hide: keep the chain
	}
	return &redactedError{msg: msg, cause: err}
}

// Page is one answer of the skus endpoint.
type Page struct {
	Observations  []pricewatch.Observation
	NextPageToken string
	// SKUs counts the SKU objects on the page; NoRegion the GPU SKUs
	// skipped because they name no service region.
	SKUs     int
	NoRegion int
}

type response struct {
	SKUs          *[]sku `json:"skus"`
	NextPageToken string `json:"nextPageToken"`
	Error         *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Details []struct {
			Reason string `json:"reason"`
		} `json:"details"`
	} `json:"error"`
}

type sku struct {
	SkuID       string `json:"skuId"`
	Description string `json:"description"`
	Category    *struct {
		ResourceFamily string `json:"resourceFamily"`
		ResourceGroup  string `json:"resourceGroup"`
		UsageType      string `json:"usageType"`
	} `json:"category"`
	ServiceRegions []string `json:"serviceRegions"`
	PricingInfo    []struct {
		PricingExpression struct {
			UsageUnit   string `json:"usageUnit"`
			TieredRates []struct {
				StartUsageAmount float64 `json:"startUsageAmount"`
				UnitPrice        money   `json:"unitPrice"`
			} `json:"tieredRates"`
		} `json:"pricingExpression"`
	} `json:"pricingInfo"`
	GeoTaxonomy *struct {
		Type    string   `json:"type"`
		Regions []string `json:"regions"`
	} `json:"geoTaxonomy"`
}

// money is google.type.Money: units is an int64, which JSON carries as a
// string (a number is accepted too).
type money struct {
	CurrencyCode string          `json:"currencyCode"`
	Units        json.RawMessage `json:"units"`
	Nanos        int64           `json:"nanos"`
}

// Amount is units + nanos/1e9; ok is false for malformed or mixed-sign values.
func (m money) Amount() (float64, bool) {
	u := strings.Trim(strings.TrimSpace(string(m.Units)), `"`)
	var units int64
	if u != "" && u != "null" {
		var err error
		if units, err = strconv.ParseInt(u, 10, 64); err != nil {
			return 0, false
		}
	}
	if m.Nanos <= -1e9 || m.Nanos >= 1e9 || (units > 0 && m.Nanos < 0) || (units < 0 && m.Nanos > 0) {
		return 0, false
	}
	return float64(units) + float64(m.Nanos)/1e9, true
}

// Parse reads one page of SKUs. A page without GPU SKUs is not an error
// (the catalog pages through every Compute Engine SKU); a body with neither
// SKUs nor a next page is ErrNothingParsed.
func Parse(body []byte) (Page, error) {
	var r response
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return Page{}, err
	}
	if r.Error != nil {
		reason := r.Error.Status
		for _, d := range r.Error.Details {
			if d.Reason != "" {
				reason = d.Reason
			}
		}
		return Page{}, fmt.Errorf("API error %d %s: %s", r.Error.Code, reason, r.Error.Message)
	}
	p := Page{NextPageToken: strings.TrimSpace(r.NextPageToken)}
	if r.SKUs == nil && p.NextPageToken == "" {
		return p, fmt.Errorf("%w: no skus in the response", scrapers.ErrNothingParsed)
	}
	if r.SKUs == nil {
		return p, nil
	}
	p.SKUs = len(*r.SKUs)
	for _, s := range *r.SKUs {
		obs, noRegion := observations(s)
		if noRegion {
			p.NoRegion++
		}
		p.Observations = append(p.Observations, obs...)
	}
	return p, nil
}

var usageModes = map[string]pricewatch.Mode{
	"ondemand":    pricewatch.ModeOnDemand,
	"preemptible": pricewatch.ModeSpot,
	"commit1yr":   pricewatch.ModeReserved1Y,
	"commit3yr":   pricewatch.ModeReserved3Y,
}

// observations applies the SKU rules: a GPU-group SKU whose description
// names a whole GPU (GPUName), a usage type that is a mode, an hourly
// positive price, and one observation per service region.
func observations(s sku) (obs []pricewatch.Observation, noRegion bool) {
	if s.Category == nil || !strings.EqualFold(s.Category.ResourceGroup, "GPU") || s.SkuID == "" {
		return nil, false
	}
	mode, ok := usageModes[strings.ToLower(s.Category.UsageType)]
	if !ok {
		return nil, false
	}
	d, ok := ParseDescription(s.Description)
	if !ok {
		return nil, false
	}
	switch {
	case d.VMs == "" && mode == pricewatch.ModeSpot:
		return nil, false // a Preemptible usage type for a plain GPU: inconsistent
	case d.VMs != "" && !(mode == pricewatch.ModeSpot && strings.Contains(d.VMs, "Preemptible")):
		return nil, false // DWS Defined Duration and any other VM kind
	case d.TermYears != 0 && mode.CommitmentHours() != float64(d.TermYears)*8760:
		return nil, false // "for N Years" that is not the usage type's term
	case d.TermYears == 0 && mode.Committed():
		return nil, false // a commitment usage type without its term in the text
	}
	price, cur, ok := hourlyPrice(s)
	if !ok {
		return nil, false
	}
	regions := s.ServiceRegions
	if len(regions) == 0 && s.GeoTaxonomy != nil {
		regions = s.GeoTaxonomy.Regions
	}
	if len(regions) == 0 {
		return nil, true
	}
	base := pricewatch.Observation{
		Source: Name, Provider: "gcp", OfferID: s.SkuID,
		GPUName: d.GPU, GPUCount: 1, GPUMemoryGB: d.MemoryGB,
		Price: price, Currency: cur, Unit: pricewatch.PerHour, PerGPU: true,
		Mode: mode, URL: PageURL,
	}
	// Per GPU, in the counts a VM may have of the model (counts.go); a GPU
	// the table does not know keeps one GPU and no rent unit.
	if counts, ok := GPUCounts(d.GPU, mode); ok {
		base.RentUnit, base.GPUCounts, base.GPUCount = pricewatch.RentPerGPU, counts, counts[len(counts)-1]
	}
	seen := map[string]bool{}
	for _, r := range regions {
		r = strings.TrimSpace(r)
		if r == "" || seen[r] {
			continue
		}
		seen[r] = true
		o := base
		o.Region, o.GPUCounts = r, slices.Clone(base.GPUCounts) // never the table's own slice
		obs = append(obs, o)
	}
	return obs, len(obs) == 0
}

// hourlyPrice is the current (last) pricing info's rate for the first
// hours of use: the last tiered rate whose startUsageAmount is 0. Tiers
// are in ascending order of startUsageAmount; later tiers are volume
// prices that apply only past their threshold, so they would understate
// what a renter pays. GPU SKUs have a single tier; a SKU with no tier at 0
// has no price for the first hour and is skipped, as are zero prices and
// units other than hours.
func hourlyPrice(s sku) (float64, string, bool) {
	if len(s.PricingInfo) == 0 {
		return 0, "", false
	}
	pe := s.PricingInfo[len(s.PricingInfo)-1].PricingExpression
	if pe.UsageUnit != "h" {
		return 0, "", false
	}
	var (
		price float64
		cur   string
		found bool
	)
	for _, t := range pe.TieredRates {
		if t.StartUsageAmount != 0 {
			continue
		}
		v, ok := t.UnitPrice.Amount()
		if !ok {
			return 0, "", false
		}
		price, cur, found = v, t.UnitPrice.CurrencyCode, true
	}
	if !found || !(price > 0) || math.IsInf(price, 0) {
		return 0, "", false
	}
	if cur == "" {
		cur = "USD"
	}
	return price, strings.ToUpper(cur), true
}

// Description is what a GPU SKU's description says.
type Description struct {
	// GPU is the GPU as named: "Nvidia Tesla A100", "Nvidia H100 80GB
	// Plus", "H200 141GB".
	GPU      string
	MemoryGB float64
	// VMs is the "attached to … VMs" qualifier ("Spot Preemptible", "DWS
	// Defined Duration"), empty for plain SKUs.
	VMs string
	// Location is the text after "running in" ("Americas", "Virginia").
	Location string
	// TermYears is the commitment term of "… for 1 Year" / "for 3 Years".
	TermYears int
}

// descriptionRE is the rule for extracting the GPU name:
//
//	[Commitment vN: ]<GPU> GPU [attached to <kind> VMs ]running in <location>[ for <n> Year(s)]
//
// where <GPU> is letters, digits and spaces only and names a model (a word
// with a letter and a digit). "Reserved … GPU in <location>[ in Calendar
// Mode]" (DWS calendar reservations, zero-priced reservation SKUs),
// fractional "1/8 vGPU …" group SKUs, licence fees and anything else do not
// match and are skipped.
var (
	descriptionRE = regexp.MustCompile(`^(?:Commitment v[0-9]+:\s*)?([A-Za-z0-9][A-Za-z0-9 ]*?) GPU(?: attached to ([A-Za-z0-9 ]+?) VMs)? running in (.+?)(?: for ([0-9]+) Years?)?$`)
	modelWord     = regexp.MustCompile(`\b[A-Za-z]+[0-9]+[A-Za-z0-9]*\b`)
	memoryWord    = regexp.MustCompile(`\b([0-9]+)GB\b`)
)

// ParseDescription applies the GPU-name rule to a SKU description.
func ParseDescription(desc string) (Description, bool) {
	desc = strings.Join(strings.Fields(desc), " ")
	if strings.HasPrefix(desc, "Reserved ") {
		return Description{}, false
	}
	m := descriptionRE.FindStringSubmatch(desc)
	if m == nil {
		return Description{}, false
	}
	name := strings.TrimSpace(m[1])
	lower := strings.ToLower(name)
	if !modelWord.MatchString(name) || strings.Contains(lower, "vgpu") || strings.Contains(lower, "workstation") ||
		strings.HasPrefix(lower, "licens") {
		return Description{}, false
	}
	d := Description{GPU: name, VMs: m[2], Location: m[3]}
	if g := memoryWord.FindStringSubmatch(name); g != nil {
		d.MemoryGB, _ = strconv.ParseFloat(g[1], 64)
	}
	if m[4] != "" {
		d.TermYears, _ = strconv.Atoi(m[4])
	}
	return d, true
}
