// Package ecb fetches the European Central Bank's euro foreign exchange
// reference rates (eurofxref-daily.xml): units of each currency per 1 EUR,
// used to compare prices across USD, CNY and EUR. It yields rates, never
// offers.
package ecb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/antchfx/xmlquery"
	"github.com/gocolly/colly/v2"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// XPath of the file's parts: Cube[@time] holds one day's rates, each as a
// child Cube[@currency][@rate]. The file's default namespace does not
// matter: an unprefixed name test matches the local name.
const (
	DayXPath  = "//Cube[@time]"
	RateXPath = "Cube[@currency][@rate]"
)

// Required are the currencies pricewatch cannot work without.
var Required = []string{"USD", "CNY"}

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "ecb",
		Description: "ECB euro foreign exchange reference rates (eurofxref-daily.xml)",
		Auth:        "none",
		Yields:      "exchange rates per 1 EUR (USD, CNY, …); no offers",
		Defaults: scrapers.Settings{
			Enabled: true,
			URL:     "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml",
			// The ECB publishes around 16:00 CET on TARGET working days,
			// i.e. 15:00 UTC in winter and 14:00 UTC in summer. 16:15 is
			// after publication whether the scheduler reads it as UTC or as
			// Central European time, so no time zone is assumed. It runs
			// every day: on weekends and holidays the file keeps the last
			// working day's rates, and a successful fetch of unchanged rates
			// still keeps the source fresh.
			Schedule: "15 16 * * *",
			// Rates of a Friday are still the current ones on Monday; 96h
			// also covers a long weekend with a failed run or two.
			StaleAfter: 96 * time.Hour,
			Timeout:    30 * time.Second,
			Delay:      0,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the ECB source. It has no options beyond the common ones.
type Scraper struct{}

// Scrape fetches the daily file; the day's Cube is parsed by the
// collector's XML callback while the file is fetched.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	c, err := env.NewCollector(ctx)
	if err != nil {
		return scrapers.Result{}, err
	}
	p := &parser{}
	c.OnXML(DayXPath, func(e *colly.XMLElement) {
		n, ok := e.DOM.(*xmlquery.Node)
		if !ok {
			// colly parses a text/html answer as HTML (an error page).
			p.errs = append(p.errs, errors.New("expected XML, got an HTML page"))
			return
		}
		p.day(n)
	})
	if _, err := env.Fetch(ctx, c, scrapers.Request{URL: env.URL()}); err != nil {
		return scrapers.Result{}, err
	}
	r, err := p.result()
	if err != nil {
		return scrapers.Result{}, err
	}
	r.FetchedAt = time.Now().UTC()
	return scrapers.Result{Rates: r}, nil
}

// Parse parses a reference rates file already in hand, with the same day
// parser the collector's callback uses.
func Parse(body []byte) (*pricewatch.Rates, error) {
	doc, err := xmlquery.Parse(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("parse XML: %w", err)
	}
	nodes, err := xmlquery.QueryAll(doc, DayXPath)
	if err != nil {
		return nil, fmt.Errorf("query days: %w", err)
	}
	p := &parser{}
	for _, n := range nodes {
		p.day(n)
	}
	return p.result()
}

var (
	dateRe     = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	currencyRe = regexp.MustCompile(`^[A-Z]{3}$`)
)

// parser keeps the most recent day seen (the daily file has one; the
// history files, newest first, have many) and the errors of that day.
type parser struct {
	date  string
	rates map[string]float64
	errs  []error
	other []error // errors not tied to a day
}

// day parses one Cube[@time] element and its rate children.
func (p *parser) day(n *xmlquery.Node) {
	date := n.SelectAttr("time")
	if _, err := time.Parse(time.DateOnly, date); err != nil || !dateRe.MatchString(date) {
		p.other = append(p.other, fmt.Errorf("bad date %q", date))
		return
	}
	if p.date != "" && date <= p.date {
		return // an older (or repeated) day
	}
	rates := map[string]float64{}
	var errs []error
	for _, c := range xmlquery.Find(n, RateXPath) {
		cur, s := c.SelectAttr("currency"), c.SelectAttr("rate")
		if !currencyRe.MatchString(cur) {
			errs = append(errs, fmt.Errorf("%s: bad currency code %q", date, cur))
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0) || v > 1e12 {
			errs = append(errs, fmt.Errorf("%s: rate %q for %s is not a positive number", date, s, cur))
			continue
		}
		if _, dup := rates[cur]; dup {
			errs = append(errs, fmt.Errorf("%s: %s listed twice", date, cur))
			continue
		}
		rates[cur] = v
	}
	p.date, p.rates, p.errs = date, rates, errs
}

func (p *parser) result() (*pricewatch.Rates, error) {
	if errs := append(p.other, p.errs...); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, cur := range Required {
		if _, ok := p.rates[cur]; !ok {
			return nil, errors.New("rates for USD/CNY missing")
		}
	}
	return &pricewatch.Rates{Base: "EUR", Date: p.date, Rates: p.rates}, nil
}
