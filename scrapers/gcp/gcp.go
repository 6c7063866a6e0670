// Package gcp scrapes the Google Cloud Billing Catalog API for the prices of
// Compute Engine GPU machine types. The catalog prices resources, not
// machines: one SKU per GPU model, per family's vCPU and per GiB of its
// memory, per GiB-month of Local SSD, each per usage type and location. A
// machine type is priced from the SKUs of one region and one usage type by
// the machine table (data/machines.csv, machines.go):
//
//   - A2, A3, G2, G4 (fixed shapes): GPUs × GPU SKU + vCPUs × the series'
//     core SKU + GiB × its RAM SKU (+ bundled Local SSD GiB × the Local SSD
//     SKU's GiB-month price ÷ 730), one rental of all its GPUs;
//   - A4, A4X: GPUs × the "(1 gpu slice)" SKU, which already holds one
//     GPU's share of the vCPUs, memory and Local SSD;
//   - GPUs attached to N1 (T4, V100, P100, P4): per GPU, the GPU SKU + an
//     n1-standard-4 share (4 vCPUs, 15 GiB), in the GPU counts an N1 VM may
//     take.
//
// The per-GPU price is the machine's price ÷ its GPUs (normalize does the
// division). Usage types map to modes: OnDemand → ondemand, Preemptible →
// spot, Commit1Yr / Commit3Yr → reserved-1y / reserved-3y (hourly rates). A
// mode Google does not sell a shape in (A3 High under 8 GPUs on demand,
// A3 Ultra, A4, A4X on demand) is kept with available "no".
//
// Nothing is dropped silently: a whole-GPU or slice SKU that no machine type
// uses is kept under the name "unmapped GCP GPU SKU …", and one whose machine
// types lack a vCPU, RAM or Local SSD SKU in its region and mode under
// "unpriced GCP GPU SKU … (missing …)", both at the SKU's own price and
// without a rent unit, so that normalize reports them as unknown names and
// they are never ranked.
//
// The API needs an API key (PRICEWATCH_GCP_API_KEY). The key travels in the
// query string, so every error this package returns is redacted of it.
package gcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

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

// RentURL is where a Compute Engine VM is created (the console's
// create-instance page, where the machine type and GPUs are picked).
const RentURL = "https://console.cloud.google.com/compute/instancesAdd"

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        Name,
		Description: "Google Cloud Billing Catalog API, Compute Engine GPU machine types priced as GPUs + vCPUs + memory (+ bundled Local SSD)",
		Auth:        "API key in " + APIKeyEnv + " (Cloud Billing API enabled)",
		Yields:      "ondemand, spot, reserved-1y, reserved-3y; USD per machine (fixed A2/A3/A4/A4X/G2/G4 shapes) or per GPU with an N1 share (T4, V100, P100, P4)",
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
		rates    []Rate
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
		rates = append(rates, p.Rates...)
		if p.NextPageToken == "" {
			break
		}
		if visited[p.NextPageToken] {
			return scrapers.Result{}, fmt.Errorf("page %d: nextPageToken repeats an earlier page", page)
		}
		visited[p.NextPageToken] = true
		token = p.NextPageToken
	}
	// Machines are priced from SKUs of every page: a GPU SKU and the vCPU
	// SKU of its family may sit on different pages.
	out := Build(rates)
	env.AddOffers(len(out))
	if len(out) == 0 {
		why := fmt.Sprintf("%d SKUs read, none a priced GPU SKU with a service region", skus)
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
