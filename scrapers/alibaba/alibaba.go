// Package alibaba scrapes the static ECS price file of Alibaba Cloud's China
// site (阿里云, CNY): https://g.alicdn.com/aliyun/ecs-price-info/<version>/
// price/download/instancePrice.json. The file is tens of MB; it is streamed
// and decoded entry by entry, never held whole.
//
// Layout (reference SOURCES.md, Chinese platforms, and
// samples/alibaba-ecs-instance-price.shape.json): a top-level object with
// "currency", "version", … and "pricingInfo", an object keyed
// "region::instanceType::network::os::io" whose values hold "hours",
// "months" and "years" lists of {"price": "<string>", "period": "<n>"}.
// Prices are per instance. hours[0] is pay-as-you-go (ondemand, per hour),
// the period-1 month is the monthly subscription (monthly, per month) and
// the period-1 year the yearly one (reserved-1y, the whole year's total).
//
// The file's version changes as Alibaba republishes prices, so it is not
// pinned: each run first reads the ECS pricing page
// (https://www.aliyun.com/price/ecs/ecs-pricing/zh) and takes the version
// of the price-file folder it links (g.alicdn.com/aliyun/ecs-price-info/
// <version>), as public parsers do (cloudpilot-ai/priceserver
// pkg/client/alibabacloud.go, getECSPrice). Config's version pins one
// instead. A page that names no version fails the run by name.
//
// Only Linux, VPC rows of GPU families (ecs.gn*, ecs.ebmgn*, ecs.sgn*,
// ecs.vgn*) are read. The file has no GPU model or count: both come from
// the instance type through the static table below; a GPU type the table
// does not know is kept (on-demand, or its first period price when it has
// no hourly one) under its own name with one GPU, so that normalize
// reports it as unknown. Nothing is guessed and no GPU type is dropped.
package alibaba

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// TemplateVersion is the version segment of the default URL, one seen in
// public code (SOURCES.md lists 2.0.6, 2.0.8, 2.0.11, 2.0.28, 2.0.211).
// It is only a template: each run replaces it with the version the
// pricing page links, unless config pins one.
const TemplateVersion = "2.0.211"

// DefaultPricePage is the page whose links name the current price-file
// version.
const DefaultPricePage = "https://www.aliyun.com/price/ecs/ecs-pricing/zh"

// PricePagePath is the path of DefaultPricePage (Rebase serves it there).
const PricePagePath = "/price/ecs/ecs-pricing/zh"

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "alibaba",
		Description: "Alibaba Cloud ECS China-site price file (GPU instance types)",
		Auth:        "none",
		Yields:      "ondemand (per hour), monthly (per month), reserved-1y (per year); CNY per instance",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://g.alicdn.com/aliyun/ecs-price-info/" + TemplateVersion + "/price/download/instancePrice.json",
			Schedule:   "10 3 * * *",
			StaleAfter: 60 * time.Hour,
			Timeout:    120 * time.Second,
			Delay:      time.Second,
			// The file is streamed, never held: the cap only bounds a
			// runaway download.
			MaxBodyMB: 256,
		},
		New: func() scrapers.Scraper { return &Scraper{PricePage: DefaultPricePage} },
	})
}

// Scraper is the Alibaba source.
type Scraper struct {
	// Version pins the version segment of the configured URL
	// (…/ecs-price-info/<version>/…). Empty: the version the pricing page
	// links, read on every run. A URL without that segment is used as it
	// is (nothing to discover).
	Version string `yaml:"version"`
	// PricePage is the page read for the current version (default
	// DefaultPricePage).
	PricePage string `yaml:"price_page"`
}

// Rebase points the pricing page at base, as config's url points the
// price file.
func (s *Scraper) Rebase(base string) {
	s.PricePage = strings.TrimRight(base, "/") + PricePagePath
}

var (
	versionRe = regexp.MustCompile(`^[0-9]+(\.[0-9]+)*$`)
	segmentRe = regexp.MustCompile(`/ecs-price-info(-intl)?/[0-9]+(\.[0-9]+)*/`)
)

// FileURL is the configured URL with its version segment set to version.
func FileURL(base, version string) (string, error) {
	version = strings.TrimSpace(version)
	if version == "" {
		return base, nil
	}
	if !versionRe.MatchString(version) {
		return "", fmt.Errorf("alibaba: bad version %q (want digits and dots, e.g. %s)", version, TemplateVersion)
	}
	return segmentRe.ReplaceAllString(base, "/ecs-price-info${1}/"+version+"/"), nil
}

// versionLink matches a link to a price-file folder of the China site
// (group 1 empty) or the international one (group 1 "-intl") and captures
// its version.
var versionLink = regexp.MustCompile(`(?:https?:)?//g\.alicdn\.com/aliyun/ecs-price-info(-intl)?/([0-9]+(?:\.[0-9]+)+)`)

// PageVersion returns the highest price-file version the pricing page
// links for the site of the configured file (intl: the international
// site's ecs-price-info-intl folder), "" when it links none.
func PageVersion(page []byte, intl bool) string {
	best := ""
	for _, m := range versionLink.FindAllSubmatch(page, -1) {
		if (len(m[1]) > 0) != intl {
			continue
		}
		if v := string(m[2]); best == "" || versionLess(best, v) {
			best = v
		}
	}
	return best
}

// versionLess compares dotted versions numerically ("2.0.28" < "2.0.211").
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// Scrape finds the current version (unless pinned), then streams the
// price file through the parser.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	page := s.PricePage
	if page == "" {
		page = DefaultPricePage
	}
	c, err := env.NewCollector(ctx, page)
	if err != nil {
		return scrapers.Result{}, err
	}
	version := strings.TrimSpace(s.Version)
	if m := segmentRe.FindStringSubmatch(env.URL()); version == "" && m != nil {
		resp, err := env.Fetch(ctx, c, scrapers.Request{URL: page, Header: http.Header{"Accept": {"text/html"}}})
		if err != nil {
			return scrapers.Result{}, fmt.Errorf("alibaba pricing page (%s), read for the price-file version: %w", page, err)
		}
		intl := m[1] != ""
		if version = PageVersion(resp.Body, intl); version == "" {
			folder := "ecs-price-info"
			if intl {
				folder += "-intl"
			}
			return scrapers.Result{}, fmt.Errorf("alibaba pricing page (%s) links no g.alicdn.com/aliyun/%s/<version> folder; pin sources.alibaba.version to run", page, folder)
		}
	}
	u, err := FileURL(env.URL(), version)
	if err != nil {
		return scrapers.Result{}, err
	}
	var obs []pricewatch.Observation
	hdr := http.Header{"Accept": {"application/json"}}
	err = env.Stream(ctx, c, scrapers.Request{URL: u, Header: hdr}, func(r io.Reader) error {
		var err error
		obs, err = ParseReader(r, u, env.AddOffers)
		return err
	})
	if err != nil {
		return scrapers.Result{Observations: obs}, err
	}
	return scrapers.Result{Observations: obs}, nil
}

// Parse parses a price file already in hand.
func Parse(body []byte, url string) ([]pricewatch.Observation, error) {
	return ParseReader(bytes.NewReader(body), url, nil)
}

// Size is what an instance type carries: the canonical card id (cards.csv)
// and the number of GPUs.
type Size struct {
	Card string
	GPUs int
}

// sizes maps instance types to their GPUs, from Alibaba Cloud's GPU
// instance family documentation (GPU-accelerated compute-optimized
// families). Only families whose GPU model and memory are certain are
// listed: gn7i (A10 24 GB), gn6i (T4 16 GB), gn6v (V100 SXM2 16 GB), gn6e
// (V100 SXM2 32 GB). gn7 and gn7e (A100, form factor and memory per size
// not certain), ebmgn7ex, gn8is, gn8v, sgn*/vgn* (vGPU slices) and others
// are reported as unknown.
var sizes = map[string]Size{
	"ecs.gn7i-c8g1.2xlarge":   {"A10", 1},
	"ecs.gn7i-c16g1.4xlarge":  {"A10", 1},
	"ecs.gn7i-c32g1.8xlarge":  {"A10", 1},
	"ecs.gn7i-c48g1.12xlarge": {"A10", 1},
	"ecs.gn7i-c56g1.14xlarge": {"A10", 1},
	"ecs.gn7i-c32g1.16xlarge": {"A10", 2},
	"ecs.gn7i-c32g1.32xlarge": {"A10", 4},

	"ecs.gn6i-c4g1.xlarge":    {"T4", 1},
	"ecs.gn6i-c8g1.2xlarge":   {"T4", 1},
	"ecs.gn6i-c16g1.4xlarge":  {"T4", 1},
	"ecs.gn6i-c24g1.6xlarge":  {"T4", 1},
	"ecs.gn6i-c40g1.10xlarge": {"T4", 1},
	"ecs.gn6i-c24g1.12xlarge": {"T4", 2},
	"ecs.gn6i-c24g1.24xlarge": {"T4", 4},

	"ecs.gn6v-c8g1.2xlarge":   {"V100-16GB-SXM2", 1},
	"ecs.gn6v-c8g1.8xlarge":   {"V100-16GB-SXM2", 4},
	"ecs.gn6v-c8g1.16xlarge":  {"V100-16GB-SXM2", 8},
	"ecs.gn6v-c10g1.20xlarge": {"V100-16GB-SXM2", 8},

	"ecs.gn6e-c12g1.3xlarge":  {"V100-32GB-SXM2", 1},
	"ecs.gn6e-c12g1.12xlarge": {"V100-32GB-SXM2", 4},
	"ecs.gn6e-c12g1.24xlarge": {"V100-32GB-SXM2", 8},
}

// Lookup returns the GPUs of an instance type.
func Lookup(instanceType string) (Size, bool) {
	s, ok := sizes[strings.ToLower(strings.TrimSpace(instanceType))]
	return s, ok
}

// gpuFamily reports an instance type of a GPU family.
func gpuFamily(t string) bool {
	for _, p := range []string{"ecs.gn", "ecs.ebmgn", "ecs.sgn", "ecs.vgn"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

type period struct {
	Price  json.RawMessage `json:"price"`
	Period json.RawMessage `json:"period"`
}

type entry struct {
	Hours  []period `json:"hours"`
	Months []period `json:"months"`
	Years  []period `json:"years"`
}

// text reads a JSON string or number as text ("" for null).
func text(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return strings.TrimSpace(s)
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String()
	}
	return ""
}

// pick returns the price of the period-"1" item (the first item when none
// says its period), "" if there is none.
func pick(ps []period, first bool) string {
	for _, p := range ps {
		if text(p.Period) == "1" {
			return text(p.Price)
		}
	}
	if first && len(ps) > 0 && text(ps[0].Period) == "" {
		return text(ps[0].Price)
	}
	return ""
}

// ParseReader decodes a price file from r, one pricingInfo entry at a time.
// progress, if not nil, is told how many offers each entry added.
func ParseReader(r io.Reader, url string, progress func(int)) ([]pricewatch.Observation, error) {
	br := &peekReader{r: r}
	if err := br.checkJSON(); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(br)
	if err := expectDelim(dec, '{', "the price file"); err != nil {
		return nil, err
	}
	var (
		out        []pricewatch.Observation
		errs       []error
		currency   string
		sawPricing bool
		seen       = map[string]bool{}
	)
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return nil, err
		}
		switch key {
		case "currency":
			if err := dec.Decode(&currency); err != nil {
				return nil, fmt.Errorf("decode JSON: currency: %w", err)
			}
		case "pricingInfo":
			sawPricing = true
			if err := expectDelim(dec, '{', "pricingInfo"); err != nil {
				return nil, err
			}
			for dec.More() {
				k, err := stringToken(dec)
				if err != nil {
					return nil, err
				}
				var e entry
				if err := dec.Decode(&e); err != nil {
					return nil, fmt.Errorf("decode JSON: pricingInfo %q: %w", k, err)
				}
				obs, err := observations(k, e, url)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				n := 0
				for _, o := range obs {
					ok := pricewatch.OfferKey(o.Source, o.OfferID, o.Region, o.Mode)
					if seen[ok] {
						continue // the same type in one region under two I/O keys
					}
					seen[ok] = true
					out = append(out, o)
					n++
				}
				if progress != nil && n > 0 {
					progress(n)
				}
			}
			if _, err := dec.Token(); err != nil { // closing }
				return nil, fmt.Errorf("decode JSON: pricingInfo: %w", err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, fmt.Errorf("decode JSON: %q: %w", key, err)
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("decode JSON: the price file is not closed: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("decode JSON: data after the price file's closing brace")
	}
	switch cur := strings.ToUpper(strings.TrimSpace(currency)); cur {
	case "", "CNY":
		// The China site prices in CNY; its file may not say so.
	case "USD":
		for i := range out {
			out[i].Currency = "USD" // an international-site file configured as the URL
		}
	default:
		return nil, fmt.Errorf("price file currency %q is neither CNY nor USD", currency)
	}
	if !sawPricing {
		return nil, fmt.Errorf("%w: no pricingInfo object in the price file", scrapers.ErrNothingParsed)
	}
	if len(errs) > 0 {
		return out, errors.Join(errs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no Linux VPC row of a GPU instance type", scrapers.ErrNothingParsed)
	}
	return out, nil
}

// observations applies the row rules to one pricingInfo entry.
func observations(key string, e entry, url string) ([]pricewatch.Observation, error) {
	parts := strings.Split(key, "::")
	if len(parts) != 5 {
		return nil, nil // not a region::type::network::os::io key
	}
	region, itype, network, osName := strings.TrimSpace(parts[0]), strings.ToLower(strings.TrimSpace(parts[1])), parts[2], parts[3]
	if !strings.EqualFold(network, "vpc") || !strings.EqualFold(osName, "linux") || !gpuFamily(itype) || region == "" {
		return nil, nil
	}
	base := pricewatch.Observation{
		Source: "alibaba", Provider: "alibaba", OfferID: itype, Region: region,
		Currency: "CNY", PerGPU: false, URL: url,
	}
	size, known := Lookup(itype)
	if known {
		// An instance type is rented whole, with its GPUs, in every
		// billing period.
		base.GPUName, base.GPUCount = size.Card, size.GPUs
		base.RentUnit = pricewatch.RentFixed
	} else {
		// A GPU type the table does not know: named by the type so that
		// normalize reports it; its monthly and yearly rows would repeat
		// the same unknown name, so only pay-as-you-go is kept (the first
		// period price when the type is not sold by the hour). Its GPU
		// count is unknown, so it states no rent unit.
		base.GPUName, base.GPUCount = itype, 1
	}
	var out []pricewatch.Observation
	var errs []error
	add := func(mode pricewatch.Mode, unit pricewatch.PriceUnit, s string) {
		if s == "" {
			return
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			errs = append(errs, fmt.Errorf("alibaba %s %s: %s price %q is not a number", region, itype, mode, s))
			return
		}
		if v == 0 {
			return // not sold in that period
		}
		o := base
		o.Mode, o.Unit, o.Price = mode, unit, v
		out = append(out, o)
	}
	add(pricewatch.ModeOnDemand, pricewatch.PerHour, pick(e.Hours, true))
	if known || len(out) == 0 {
		add(pricewatch.ModeMonthly, pricewatch.PerMonth, pick(e.Months, false))
	}
	if known || len(out) == 0 {
		add(pricewatch.ModeReserved1Y, pricewatch.PerTerm, pick(e.Years, false))
	}
	return out, errors.Join(errs...)
}

func stringToken(dec *json.Decoder) (string, error) {
	t, err := dec.Token()
	if err != nil {
		return "", fmt.Errorf("decode JSON: %w", err)
	}
	s, ok := t.(string)
	if !ok {
		return "", fmt.Errorf("decode JSON: want an object key, got %v", t)
	}
	return s, nil
}

func expectDelim(dec *json.Decoder, want json.Delim, what string) error {
	t, err := dec.Token()
	if err != nil {
		return fmt.Errorf("decode JSON: %s: %w", what, err)
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return fmt.Errorf("decode JSON: %s is not an object (got %v)", what, t)
	}
	return nil
}

// peekReader lets the parser look at the first bytes of the body to say
// plainly when it is not JSON at all (an HTML error page).
type peekReader struct {
	r    io.Reader
	head []byte
}

func (p *peekReader) checkJSON() error {
	buf := make([]byte, 512)
	n, err := io.ReadAtLeast(p.r, buf, 1)
	if n == 0 {
		if err == io.EOF {
			return errors.New("empty response body")
		}
		return err
	}
	// A byte-order mark is not JSON; drop it before the decoder sees it.
	p.head = bytes.TrimPrefix(buf[:n], []byte("\xef\xbb\xbf"))
	b := bytes.TrimLeft(p.head, " \t\r\n")
	if len(b) > 0 && b[0] == '<' {
		s := strings.Join(strings.Fields(string(b)), " ")
		if len(s) > 160 {
			s = s[:160] + "…"
		}
		return fmt.Errorf("expected JSON, got markup: %s", s)
	}
	return nil
}

func (p *peekReader) Read(b []byte) (int, error) {
	if len(p.head) > 0 {
		n := copy(b, p.head)
		p.head = p.head[n:]
		return n, nil
	}
	return p.r.Read(b)
}
