// Package lambda reads Lambda's on-demand prices in one of two modes,
// chosen per run:
//
//   - API mode, when PRICEWATCH_LAMBDA_API_KEY (or its _FILE) is set: the
//     documented instance-types API (api.go), GET
//     https://cloud.lambda.ai/api/v1/instance-types with a Bearer key, priced
//     in US cents per instance-hour, with the regions that have capacity.
//     OfferID is the instance type ("gpu_8x_h100_sxm5").
//   - Page mode, the keyless fallback: the public pricing page, an HTML
//     table with one <tr data-plan="…"> per instance shape, priced in USD
//     per GPU-hour. The page states no GPU count; each shape is sold whole,
//     with the count of the shape table (shapes.go). OfferID is
//     "<plan>/<vCPUs>vcpu". Its layout is a third party's description,
//     never seen here (fixtures/lambda/PROVENANCE.md).
//
// A key that is set but refused fails the run: there is no silent fallback
// to the page (as AutoDL's token mode).
//
// Only real <tr> elements of the page are read. The page also carries an
// escaped copy of the table inside a <script> string, which an HTML parser
// sees as script text, never as rows; a regex over the raw page would find
// every row twice.
package lambda

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gocolly/colly/v2"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// RowSelector selects the price table's rows.
const RowSelector = "tr[data-plan]"

// DefaultPageURL is the pricing page read in page mode.
const DefaultPageURL = "https://lambda.ai/pricing"

func init() {
	scrapers.Add(scrapers.Registration{
		Name: "lambda",
		Description: "Lambda instance-types API with a key (" + APIKeyEnv + "); without one, the pricing page " +
			"(keyless fallback: an HTML table whose layout is described by third parties, unverified)",
		Auth:   "optional Bearer API key in " + APIKeyEnv + " (API mode); none for the pricing page",
		Yields: "ondemand; API: USD per instance-hour (price_cents_per_hour ÷ 100) per region with capacity; page: USD per GPU-hour, same in every region",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://cloud.lambda.ai/api/v1/instance-types",
			Schedule:   "0 */6 * * *",
			StaleAfter: 15 * time.Hour,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{PageURL: DefaultPageURL} },
	})
}

// Scraper is the Lambda source.
type Scraper struct {
	// PageURL is the pricing page read without a key.
	PageURL string `yaml:"page_url"`
}

// Rebase points the pricing page at base, as config's url points the API.
func (s *Scraper) Rebase(base string) { s.PageURL = strings.TrimRight(base, "/") + "/pricing" }

// Scrape reads the API when a key is set, else the pricing page.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	if key := env.Secret(APIKeyEnv); key != "" {
		return scrapers.FetchOne(ctx, env, "instance-types API", scrapers.Request{URL: env.URL(),
			Header: http.Header{"Accept": {"application/json"}, "Authorization": {"Bearer " + key}}},
			func(b []byte) ([]pricewatch.Observation, error) { return ParseAPI(b, env.URL()) })
	}
	page := s.PageURL
	if page == "" {
		page = DefaultPageURL
	}
	c, err := env.NewCollector(ctx, page)
	if err != nil {
		return scrapers.Result{}, err
	}
	p := &parser{url: page}
	c.OnHTML(RowSelector, func(e *colly.HTMLElement) { p.row(e.DOM) })
	resp, err := env.Fetch(ctx, c, scrapers.Request{URL: page})
	if err != nil {
		return scrapers.Result{}, err
	}
	if err := scrapers.CompleteHTML(resp.Body); err != nil {
		return scrapers.Result{}, err
	}
	obs, err := p.result()
	return scrapers.Result{Observations: obs}, err
}

// Parse parses a pricing page already in hand, with the same row parser
// the collector's callback uses.
func Parse(body []byte, url string) ([]pricewatch.Observation, error) {
	if err := scrapers.CompleteHTML(body); err != nil {
		return nil, err
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("parse HTML: %w", err)
	}
	p := &parser{url: url}
	doc.Find(RowSelector).Each(func(_ int, tr *goquery.Selection) { p.row(tr) })
	return p.result()
}

// parser accumulates the observations and errors of one page's rows.
type parser struct {
	url  string
	obs  []pricewatch.Observation
	errs []error
}

var (
	priceRe = regexp.MustCompile(`^\$\s*([0-9][0-9,]*(?:\.[0-9]+)?)$`)
	vramRe  = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*(?:GB|GiB)$`)
)

// notOffered are the cell texts that mean "no price": em dash (U+2014),
// en dash, hyphen, or nothing.
func notOffered(s string) bool {
	switch s {
	case "", "\u2014", "\u2013", "-":
		return true
	}
	return false
}

func clean(s string) string { return strings.Join(strings.Fields(s), " ") }

// row parses one <tr data-plan> element.
func (p *parser) row(tr *goquery.Selection) {
	cells := map[string]string{}
	var price string
	hasPrice := false
	tr.ChildrenFiltered("[data-label]").Each(func(_ int, c *goquery.Selection) {
		label := clean(c.AttrOr("data-label", ""))
		text := clean(c.Text())
		if strings.HasPrefix(strings.ToUpper(label), "PRICE/GPU/HR") {
			if !hasPrice {
				price, hasPrice = text, true
			}
			return
		}
		if _, dup := cells[label]; !dup {
			cells[label] = text
		}
	})
	plan := cells["Plan"]
	if plan == "" {
		plan = clean(tr.AttrOr("data-plan", ""))
	}
	if plan == "" {
		p.errs = append(p.errs, errors.New("a row without a plan name"))
		return
	}
	if !hasPrice {
		p.errs = append(p.errs, fmt.Errorf("plan %q: no PRICE/GPU/HR cell", plan))
		return
	}
	if notOffered(price) {
		return
	}
	m := priceRe.FindStringSubmatch(price)
	if m == nil {
		p.errs = append(p.errs, fmt.Errorf("plan %q: price cell %q is neither a dash nor a $ amount", plan, price))
		return
	}
	usd, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
	if err != nil || !(usd > 0) {
		p.errs = append(p.errs, fmt.Errorf("plan %q: price %q is not a positive amount", plan, price))
		return
	}
	vcpus, err := strconv.Atoi(cells["vCPUs"])
	if err != nil || vcpus <= 0 {
		p.errs = append(p.errs, fmt.Errorf("plan %q: vCPUs cell %q is not a positive count", plan, cells["vCPUs"]))
		return
	}
	// VRAM is informative (it tells A100 40GB from 80GB); a cell that does
	// not parse leaves it unknown rather than failing the row.
	var memGB float64
	if v := vramRe.FindStringSubmatch(cells["VRAM/GPU"]); v != nil {
		memGB, _ = strconv.ParseFloat(v[1], 64)
	}
	o := pricewatch.Observation{
		Source: "lambda", OfferID: plan + "/" + strconv.Itoa(vcpus) + "vcpu",
		GPUName: plan, GPUCount: 0, GPUMemoryGB: memGB,
		Price: usd, Currency: "USD", Unit: pricewatch.PerHour, PerGPU: true,
		Mode: pricewatch.ModeOnDemand, URL: p.url,
	}
	// The shape is rented whole; its GPU count comes from the shape table
	// (shapes.go). An unknown shape states no count and no rent unit.
	if n, ok := GPUs(plan, vcpus); ok {
		o.GPUCount, o.RentUnit = n, pricewatch.RentFixed
		// The row's vCPUs, RAM and Storage are the shape's (all its GPUs).
		// RAM and Storage are labels of the page's described layout, not
		// of a capture (fixtures/lambda/PROVENANCE.md): an unparsed cell
		// is not stated.
		o.VCPUs, o.RAMGB, o.DiskGB = float64(vcpus), sizeGiB(cells["RAM"]), sizeGiB(cells["Storage"])
	}
	o.RentURL = RentURL
	p.obs = append(p.obs, o)
}

func (p *parser) result() ([]pricewatch.Observation, error) {
	if len(p.errs) > 0 {
		return p.obs, errors.Join(p.errs...)
	}
	if len(p.obs) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return p.obs, nil
}

// RentURL is where a Lambda instance is launched (its cloud dashboard).
const RentURL = "https://cloud.lambda.ai/instances"

var sizeRe = regexp.MustCompile(`^\s*([\d.,]+)\s*(GiB|GB|TiB|TB)\b`)

// sizeGiB reads a size cell ("225 GiB", "2.75 TiB SSD") in GiB; 0 when it
// does not parse.
func sizeGiB(s string) float64 {
	m := sizeRe.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
	if err != nil || v <= 0 {
		return 0
	}
	// A decimal unit is 10^9 bytes, GiB 2^30.
	return v * map[string]float64{"GiB": 1, "TiB": 1024, "GB": 1e9 / (1 << 30), "TB": 1e12 / (1 << 30)}[m[2]]
}
