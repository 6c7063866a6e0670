// Package skypilot scrapes the SkyPilot catalog feed: the vms.csv files
// SkyPilot publishes per cloud in github.com/skypilot-org/skypilot-catalog
// (catalogs/<version>/<cloud>/vms.csv), which its fetchers derive from the
// providers' own APIs. It covers clouds without a public price API (Lambda,
// Verda, Hyperstack, Nebius, CUDO, Paperspace, …).
//
// Each offer carries the cloud as its Provider ("runpod", "vast", "lambda",
// "verda", …, spelt as the direct sources spell their names) and "skypilot"
// as its Source, so that a ranking drops a feed offer when the same provider
// is scraped directly (rank.directProviders).
//
// Prices are per instance-hour (PerGPU false, GPUCount from
// AcceleratorCount), in USD except Scaleway (EUR, see Currencies).
package skypilot

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// DefaultURL is the catalog base: the folder of the default catalog version.
const DefaultURL = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/"

// DefaultClouds are the clouds fetched when config names none: those without
// a public price API of their own for which the fixtures hold a real
// catalog. Fluidstack has a (v6) catalog upstream but no fixture, so it is
// left out; AWS, GCP, Scaleway and OVHcloud are supported (fixtures exist)
// but opt-in: AWS and GCP publish their own price APIs, and the Scaleway and
// OVHcloud files are old v6 snapshots committed once.
var DefaultClouds = []string{"hyperstack", "nebius", "cudo", "paperspace", "lambda", "runpod", "vast", "verda"}

// DefaultVersions are the clouds whose catalog lives in another version
// folder than the base's (v8): these were never ported to v8 upstream and
// exist only under catalogs/v6.
var DefaultVersions = map[string]string{
	"paperspace": "v6",
	"scaleway":   "v6",
	"ovhcloud":   "v6",
	"fluidstack": "v6",
}

// DefaultCurrencies are the clouds whose catalog prices are not USD. The
// catalogs carry no currency column: Scaleway's fetcher stores the EUR
// prices of Scaleway's API as they are. OVHcloud's currency is not stated
// either; its values match OVH's USD site, so it stays USD.
var DefaultCurrencies = map[string]string{
	"scaleway": "EUR",
}

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "skypilot",
		Description: "SkyPilot catalog feed (skypilot-catalog vms.csv per cloud)",
		Auth:        "none",
		Yields:      "ondemand, spot (where the catalog has SpotPrice); per instance-hour, USD (Scaleway EUR)",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        DefaultURL,
			Schedule:   "20 */6 * * *",
			StaleAfter: 15 * time.Hour,
			Timeout:    60 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return New() },
	})
}

// New returns a scraper with the default clouds, versions and currencies.
func New() *Scraper {
	return &Scraper{
		Clouds:     slices.Clone(DefaultClouds),
		Versions:   clone(DefaultVersions),
		Currencies: clone(DefaultCurrencies),
	}
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Scraper is the SkyPilot catalog source.
type Scraper struct {
	// Clouds are the catalog folder names to fetch (lambda, runpod, …).
	// Every one must answer: a cloud that fails fails the run, so that its
	// offers never look as if they had all vanished.
	Clouds []string `yaml:"clouds"`
	// Versions maps a cloud to the catalog version folder it lives in when
	// that is not the base's (paperspace: v6); config entries are added to
	// the built-in table.
	Versions map[string]string `yaml:"versions"`
	// Currencies maps a cloud to the currency of its prices when not USD.
	Currencies map[string]string `yaml:"currencies"`
}

var (
	cloudName   = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	versionName = regexp.MustCompile(`^v[0-9]+$`)
)

// CatalogURL is the vms.csv URL of a cloud under the base folder: base is
// the folder of one catalog version (…/catalogs/v8/); a cloud mapped to
// another version is read from the sibling folder (…/catalogs/v6/).
func (s *Scraper) CatalogURL(base, cloud string) (string, error) {
	if !cloudName.MatchString(cloud) {
		return "", fmt.Errorf("skypilot: bad cloud name %q (want a catalog folder name such as lambda)", cloud)
	}
	b, err := url.Parse(base)
	if err != nil || b.Host == "" {
		return "", fmt.Errorf("skypilot: bad base url %q", base)
	}
	if len(b.Path) == 0 || b.Path[len(b.Path)-1] != '/' {
		b.Path += "/"
		b.RawPath = ""
	}
	ref := cloud + "/vms.csv"
	if v := s.Versions[cloud]; v != "" {
		if !versionName.MatchString(v) {
			return "", fmt.Errorf("skypilot: bad catalog version %q for %s (want v6, v8, …)", v, cloud)
		}
		if v != path.Base(b.Path) {
			ref = "../" + v + "/" + ref
		}
	}
	return b.ResolveReference(&url.URL{Path: ref}).String(), nil
}

// Currency is the currency of a cloud's catalog prices.
func (s *Scraper) Currency(cloud string) string {
	if c := s.Currencies[cloud]; c != "" {
		return c
	}
	return "USD"
}

// Scrape fetches every configured cloud's catalog with one collector.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	clouds := s.Clouds
	if len(clouds) == 0 {
		clouds = DefaultClouds
	}
	urls := make([]string, 0, len(clouds))
	var todo []string
	for _, cloud := range clouds {
		if slices.Contains(todo, cloud) {
			continue
		}
		u, err := s.CatalogURL(env.URL(), cloud)
		if err != nil {
			return scrapers.Result{}, err
		}
		todo = append(todo, cloud)
		urls = append(urls, u)
	}
	c, err := env.NewCollector(ctx)
	if err != nil {
		return scrapers.Result{}, err
	}
	hdr := http.Header{"Accept": {"text/csv, text/plain;q=0.9, */*;q=0.5"}}
	var out []pricewatch.Observation
	for i, cloud := range todo {
		if err := ctx.Err(); err != nil {
			return scrapers.Result{}, err
		}
		resp, err := env.Fetch(ctx, c, scrapers.Request{URL: urls[i], Header: hdr})
		if err != nil {
			return scrapers.Result{}, fmt.Errorf("skypilot cloud %s (%s): %w", cloud, urls[i], err)
		}
		obs, err := Parse(resp.Body, cloud, s.Currency(cloud), urls[i])
		if err != nil {
			return scrapers.Result{}, fmt.Errorf("skypilot cloud %s (%s): %w", cloud, urls[i], err)
		}
		env.AddOffers(len(obs))
		out = append(out, obs...)
	}
	return scrapers.Result{Observations: out}, nil
}
