// Package cnyindex scrapes the rentgpu CNY GPU price index, published as
// the public Hugging Face dataset brian8808/gpu-price-index: per GPU model,
// the cheapest price in CNY per GPU-hour and the platform offering it
// (about 26 Chinese and foreign platforms; foreign prices already converted
// to CNY by the publisher), with 30-day statistics.
//
// Every row is a price index entry, so every observation is a reference
// (pricewatch.KindReference): shown beside the offers, never ranked.
//
// Table (reference SOURCES.md, Chinese platforms, "rentgpu index", and
// samples/rentgpu-cny-price-index-excerpt.csv): gpu, price_cny_per_hour,
// platform, min_30d, max_30d, avg_30d, change_30d_pct, sellers_today. Each
// row is one on-demand observation, per GPU, CNY, with the platform as the
// Provider (a lower-case romanized id, table below). The 30-day statistics
// are not prices one can rent at and stay out of the offers. A row with an
// empty or zero price is skipped.
//
// The file is CSV; lines starting with '#' are comments. A body whose last
// line has no newline is refused as truncated (a cut inside the last row's
// statistics would otherwise parse), and every row must have the header's
// number of fields.
package cnyindex

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// Name is the registered source name.
const Name = "cny-index"

// DefaultURL is the dataset's CSV file. The file name is NOT verified: the
// dataset viewer shows the table, not its path; set sources.cny-index.url
// to the dataset's real CSV file if this one answers 404.
const DefaultURL = "https://huggingface.co/datasets/brian8808/gpu-price-index/resolve/main/gpu_price_index.csv"

// cdnHosts are the hosts huggingface.co/…/resolve/… may redirect a file
// download to (LFS and Xet storage); the collector must be allowed to
// follow.
var cdnHosts = []string{
	"https://cdn-lfs.huggingface.co/", "https://cdn-lfs-us-1.hf.co/", "https://cdn-lfs.hf.co/",
	"https://cas-bridge.xethub.hf.co/",
}

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        Name,
		Description: "rentgpu CNY GPU price index (Hugging Face dataset brian8808/gpu-price-index)",
		Auth:        "none",
		Yields:      "ondemand; CNY per GPU-hour, cheapest platform per GPU model (provider = platform)",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        DefaultURL,
			Schedule:   "50 */6 * * *",
			StaleAfter: 15 * time.Hour,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the CNY index source. It has no options beyond the common ones.
type Scraper struct{}

// Scrape downloads the CSV and parses it.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	c, err := env.NewCollector(ctx, cdnHosts...)
	if err != nil {
		return scrapers.Result{}, err
	}
	hdr := http.Header{"Accept": {"text/csv, text/plain;q=0.9, */*;q=0.5"}}
	resp, err := env.Fetch(ctx, c, scrapers.Request{URL: env.URL(), Header: hdr})
	if err != nil {
		return scrapers.Result{}, err
	}
	obs, err := Parse(resp.Body, env.URL())
	env.AddOffers(len(obs))
	return scrapers.Result{Observations: obs}, err
}

// platforms maps the index's platform names to provider ids. Chinese
// names are romanized the way the platforms write themselves (domain or
// brand); other names are lower-cased with runs of other characters as
// "-" (Provider below), so only Chinese names need a row.
var platforms = map[string]string{
	"恒源云":  "gpushare",    // gpushare.com
	"矩池云":  "matpool",     // matpool.com
	"优云智算": "compshare",   // compshare.cn (UCloud)
	"共绩算力": "gongjiyun",   // gongjiyun.com
	"智星云":  "ai-galaxy",   // ai-galaxy.cn
	"算家云":  "suanjiayun",  // pinyin
	"晨涧云":  "chenjianyun", // pinyin
	"潞晨云":  "luchenyun",   // pinyin
}

var nonAlnum = regexp.MustCompile(`[^a-z0-9]+`)

// Provider returns the provider id of a platform name as the index writes
// it: the table above, else lower case with separators as "-" for names
// in Latin script ("Akamai / Linode" → "akamai-linode"), else the name as
// written (an unmapped Chinese name stays recognisable, never guessed).
func Provider(platform string) string {
	p := strings.TrimSpace(platform)
	if id, ok := platforms[p]; ok {
		return id
	}
	for _, r := range p {
		if r > unicode.MaxLatin1 {
			return p
		}
	}
	return strings.Trim(nonAlnum.ReplaceAllString(strings.ToLower(p), "-"), "-")
}

// memRe reads the memory a GPU name ends with ("A800 80GB").
var memRe = regexp.MustCompile(`(?i)\b([0-9]+(?:\.[0-9]+)?)\s*GB?$`)

// columns the parser needs; the others are read if present.
var required = []string{"gpu", "price_cny_per_hour", "platform"}

// Parse turns the index CSV into observations.
func Parse(body []byte, url string) ([]pricewatch.Observation, error) {
	b := bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New("empty response body")
	}
	if t := bytes.TrimLeft(b, " \t\r\n"); t[0] == '<' {
		return nil, fmt.Errorf("expected CSV, got markup: %s", snippet(t))
	}
	if t := bytes.TrimLeft(b, " \t\r\n"); t[0] == '{' || t[0] == '[' {
		return nil, fmt.Errorf("expected CSV, got JSON: %s", snippet(t))
	}
	if b[len(b)-1] != '\n' {
		return nil, errors.New("cny-index: body truncated (last line has no newline)")
	}
	r := csv.NewReader(bytes.NewReader(b))
	r.Comment = '#'
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("cny-index: read header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(h))] = i
	}
	for _, h := range required {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("cny-index: no %q column in the header %q (layout change)", h, strings.Join(header, ","))
		}
	}
	r.FieldsPerRecord = len(header)
	var out []pricewatch.Observation
	var errs []error
	seen := map[string]bool{}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("cny-index: %w", err)
		}
		line, _ := r.FieldPos(0)
		gpu := strings.Join(strings.Fields(rec[col["gpu"]]), " ")
		platform := strings.TrimSpace(rec[col["platform"]])
		ps := strings.TrimSpace(rec[col["price_cny_per_hour"]])
		if gpu == "" || platform == "" {
			errs = append(errs, fmt.Errorf("cny-index line %d: empty gpu or platform", line))
			continue
		}
		if ps == "" {
			continue // no price today
		}
		price, err := strconv.ParseFloat(ps, 64)
		if err != nil || math.IsNaN(price) || math.IsInf(price, 0) || price < 0 {
			errs = append(errs, fmt.Errorf("cny-index line %d: %s on %s: price %q is not a number", line, gpu, platform, ps))
			continue
		}
		if price == 0 {
			continue
		}
		provider := Provider(platform)
		id := gpu + "@" + provider
		if seen[id] {
			continue // one index row per GPU and platform; the first wins
		}
		seen[id] = true
		// An index row is the cheapest price some platform quotes for the
		// card today: a reference price, not a machine one can rent.
		o := pricewatch.Observation{
			Source: Name, Provider: provider, OfferID: id,
			GPUName: gpu, Price: price, Currency: "CNY", Unit: pricewatch.PerHour,
			PerGPU: true, Mode: pricewatch.ModeOnDemand, URL: url, Kind: pricewatch.KindReference,
		}
		if m := memRe.FindStringSubmatch(gpu); m != nil {
			o.GPUMemoryGB, _ = strconv.ParseFloat(m[1], 64)
		}
		out = append(out, o)
	}
	if len(errs) > 0 {
		return out, errors.Join(errs...)
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}

func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
