// Package coreweave scrapes CoreWeave's public pricing page
// (https://www.coreweave.com/pricing). Unverified: CoreWeave publishes no
// documented price listing (its API reference has capacity and inference
// APIs without prices; its billing docs link to this page), and the layout
// below was described by a third party, never seen here. One product
// block per GPU instance,
// headed by <h3 data-product="slug">, with the on-demand and spot prices of
// the WHOLE instance in USD per hour, its GPU count and its VRAM per GPU.
//
// Layout (reference SOURCES.md 8f, samples/coreweave-pricing.shape.html):
// each <h3 data-product> is followed by sibling blocks up to the next such
// heading; the prices sit in <span class="instance-price|spot-price|
// inference-price"><span class="item-value">$X</span>, the counts in
// .table-meta-text-right cells ("8" + "GPU Count", "80" + "VRAM"). An empty
// on-demand value means "Contact sales" (skipped), "N/A" means no spot
// price. Some rows add a per-GPU figure (oddly labelled "Inference Single CPU
// Price"), which is checked against instance price / GPU count.
//
// The page repeats every product block (desktop and mobile layouts). Copies
// are merged by slug: on-demand figures must agree (a disagreement fails the
// run, since then nobody knows the price); spot figures were seen to differ
// between copies within one fetch, and the highest is kept so that a ranking
// never shows a spot price lower than some copy of the page states.
package coreweave

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gocolly/colly/v2"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// ProductSelector selects the heading of each product block.
const ProductSelector = "h3[data-product]"

func init() {
	scrapers.Add(scrapers.Registration{
		Name: "coreweave",
		Description: "CoreWeave pricing page (GPU instances). UNVERIFIED: CoreWeave documents no price listing " +
			"(its docs point to this page), and the page's HTML layout is a third party's description never seen here: " +
			"a layout change fails the run (no offers parsed) rather than mislead",
		Auth:   "none",
		Yields: "ondemand, spot; USD per instance-hour (divided by the row's GPU count)",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://www.coreweave.com/pricing",
			Schedule:   "20 */6 * * *",
			StaleAfter: 15 * time.Hour,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the CoreWeave source. It has no options beyond the common ones.
type Scraper struct{}

// Scrape fetches the pricing page; the product blocks are parsed by the
// collector's HTML callback while the page is fetched.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	c, err := env.NewCollector(ctx)
	if err != nil {
		return scrapers.Result{}, err
	}
	p := newParser(env.URL())
	c.OnHTML(ProductSelector, func(e *colly.HTMLElement) { p.product(e.DOM) })
	resp, err := env.Fetch(ctx, c, scrapers.Request{URL: env.URL()})
	if err != nil {
		return scrapers.Result{}, err
	}
	if err := completePage(resp.Body); err != nil {
		return scrapers.Result{}, err
	}
	obs, err := p.result()
	env.AddOffers(len(obs))
	return scrapers.Result{Observations: obs}, err
}

// Parse parses a pricing page already in hand, with the same product parser
// the collector's callback uses.
func Parse(body []byte, url string) ([]pricewatch.Observation, error) {
	if err := completePage(body); err != nil {
		return nil, err
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("coreweave: parse HTML: %w", err)
	}
	p := newParser(url)
	doc.Find(ProductSelector).Each(func(_ int, h *goquery.Selection) { p.product(h) })
	return p.result()
}

// row is one product block as read from the page.
type row struct {
	slug, name string
	gpus       int
	vramGB     float64
	ondemand   float64 // 0: contact sales
	spot       float64 // 0: none
}

// parser accumulates the products of one page, merging duplicate blocks.
type parser struct {
	url    string
	rows   []*row
	bySlug map[string]*row
	errs   []error
}

func newParser(url string) *parser { return &parser{url: url, bySlug: map[string]*row{}} }

var priceRe = regexp.MustCompile(`^\$\s*([0-9][0-9,]*(?:\.[0-9]+)?)$`)

func clean(s string) string { return strings.Join(strings.Fields(s), " ") }

// money reads a price cell: ok false with no error for "no price" (empty,
// N/A, dashes), an error for anything that is not a $ amount.
func money(s string) (v float64, ok bool, err error) {
	switch strings.ToUpper(s) {
	case "", "N/A", "NA", "-", "\u2013", "\u2014":
		return 0, false, nil
	}
	m := priceRe.FindStringSubmatch(s)
	if m == nil {
		return 0, false, fmt.Errorf("%q is neither empty, N/A nor a $ amount", s)
	}
	v, err = strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, false, fmt.Errorf("%q is not a positive amount", s)
	}
	return v, true, nil
}

// product parses one <h3 data-product> and the blocks after it.
func (p *parser) product(h *goquery.Selection) {
	slug := clean(h.AttrOr("data-product", ""))
	name := clean(h.Text())
	if slug == "" {
		p.errs = append(p.errs, fmt.Errorf("coreweave: product %q without a data-product slug", name))
		return
	}
	if name == "" {
		name = slug
	}
	scope := h.NextUntil(ProductSelector)
	cell := func(class string) (string, bool) {
		s := scope.Find("." + class + " .item-value").First()
		if s.Length() == 0 {
			return "", false
		}
		return clean(s.Text()), true
	}
	odText, hasOD := cell("instance-price")
	if !hasOD {
		p.errs = append(p.errs, fmt.Errorf("coreweave: product %q: no On-Demand Price value", slug))
		return
	}
	od, odOK, err := money(odText)
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("coreweave: product %q: on-demand price %w", slug, err))
		return
	}
	r := &row{slug: slug, name: name}
	if odOK {
		r.ondemand = od
	}
	meta := map[string]string{}
	scope.Find(".table-meta-text-right").Each(func(_ int, c *goquery.Selection) {
		v := clean(c.Find(".table-meta-value").First().Text())
		label := strings.ToUpper(clean(c.Children().Not(".table-meta-value").Text()))
		if _, dup := meta[label]; !dup && label != "" {
			meta[label] = v
		}
	})
	if r.ondemand == 0 {
		// "Contact sales" (empty), N/A or a dash: nothing to price,
		// whatever the other cells say.
		p.merge(r)
		return
	}
	n, err := strconv.Atoi(meta["GPU COUNT"])
	if err != nil || n <= 0 {
		p.errs = append(p.errs, fmt.Errorf("coreweave: product %q: GPU Count %q is not a positive count", slug, meta["GPU COUNT"]))
		return
	}
	r.gpus = n
	// VRAM is per GPU and informative (it tells cards apart); a cell that
	// does not parse leaves it unknown rather than failing the product.
	if v, err := strconv.ParseFloat(strings.TrimSuffix(strings.ToUpper(meta["VRAM"]), "GB"), 64); err == nil && v > 0 {
		r.vramGB = v
	}
	if spText, ok := cell("spot-price"); ok {
		sp, spOK, err := money(spText)
		if err != nil {
			p.errs = append(p.errs, fmt.Errorf("coreweave: product %q: spot price %w", slug, err))
			return
		}
		if spOK {
			r.spot = sp
		}
	}
	if pgText, ok := cell("inference-price"); ok {
		pg, pgOK, err := money(pgText)
		if err != nil {
			p.errs = append(p.errs, fmt.Errorf("coreweave: product %q: per-GPU figure %w", slug, err))
			return
		}
		// The page rounds the per-GPU figure to the cent.
		if per := r.ondemand / float64(n); pgOK && math.Abs(per-pg) > math.Max(0.01, 0.01*pg) {
			p.errs = append(p.errs, fmt.Errorf("coreweave: product %q: per-GPU figure $%.2f disagrees with $%.2f / %d GPUs "+
				"(is the on-demand price still per instance?)", slug, pg, r.ondemand, n))
			return
		}
	}
	p.merge(r)
}

// merge adds a product or folds a duplicate block into the first copy.
func (p *parser) merge(r *row) {
	first, dup := p.bySlug[r.slug]
	if !dup {
		p.bySlug[r.slug] = r
		p.rows = append(p.rows, r)
		return
	}
	if first.ondemand != r.ondemand || first.gpus != r.gpus {
		p.errs = append(p.errs, fmt.Errorf("coreweave: product %q: page copies disagree (on-demand $%.2f × %d GPUs vs $%.2f × %d GPUs)",
			r.slug, first.ondemand, first.gpus, r.ondemand, r.gpus))
		return
	}
	if r.spot > first.spot {
		first.spot = r.spot
	}
	if first.vramGB == 0 {
		first.vramGB = r.vramGB
	}
}

func (p *parser) result() ([]pricewatch.Observation, error) {
	var out []pricewatch.Observation
	for _, r := range p.rows {
		if r.ondemand == 0 {
			continue
		}
		add := func(mode pricewatch.Mode, price float64) {
			out = append(out, pricewatch.Observation{
				Source: "coreweave", Provider: "coreweave", OfferID: r.slug,
				GPUName: r.name, GPUCount: r.gpus, GPUMemoryGB: r.vramGB,
				Price: price, Currency: "USD", Unit: pricewatch.PerHour, PerGPU: false,
				Mode: mode, URL: p.url,
				// An instance is rented whole, with its GPU Count cell.
				RentUnit: pricewatch.RentFixed,
			})
		}
		add(pricewatch.ModeOnDemand, r.ondemand)
		if r.spot > 0 {
			add(pricewatch.ModeSpot, r.spot)
		}
	}
	if len(p.errs) > 0 {
		return out, errors.Join(p.errs...)
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}

// completePage names the source in the shared truncation check.
func completePage(body []byte) error {
	if err := scrapers.CompleteHTML(body); err != nil {
		return fmt.Errorf("coreweave: %w", err)
	}
	return nil
}
