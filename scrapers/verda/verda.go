// Package verda scrapes Verda (formerly DataCrunch): GET /v1/instance-types
// of the Verda cloud API, which needs an OAuth2 client-credentials token
// (POST /v1/oauth2/token). Prices are strings in USD per instance-hour:
// price_per_hour on demand, spot_price for spot instances.
package verda

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

// Credentials: an API client of the Verda cloud console (Keys → Cloud API
// credentials).
const (
	ClientIDEnv     = "PRICEWATCH_VERDA_CLIENT_ID"
	ClientSecretEnv = "PRICEWATCH_VERDA_CLIENT_SECRET"
)

// Endpoints of the real API; the SDKs use <base>/oauth2/token and
// <base>/instance-types with base https://api.datacrunch.io/v1.
const (
	DefaultURL = "https://api.datacrunch.io/v1/instance-types"
	TokenPath  = "/v1/oauth2/token"
)

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "verda",
		Description: "Verda (DataCrunch) cloud API instance types",
		Auth:        "OAuth2 client credentials in " + ClientIDEnv + " and " + ClientSecretEnv,
		Yields:      "ondemand, spot; USD per instance-hour",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        DefaultURL,
			Schedule:   "10 * * * *",
			StaleAfter: 150 * time.Minute,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the Verda source.
type Scraper struct {
	// TokenURL is the OAuth2 token endpoint. Empty: the API base of url
	// (url without its trailing /instance-types) + /oauth2/token.
	TokenURL string `yaml:"token_url"`
}

// Check disables the source until both credentials are set.
func (s *Scraper) Check(env *scrapers.Env) error {
	var missing []string
	for _, k := range []string{ClientIDEnv, ClientSecretEnv} {
		if env.Secret(k) == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return &scrapers.Disabled{Reason: "needs " + strings.Join(missing, " and ") +
			" (a Verda/DataCrunch cloud API client id and secret, for its OAuth2 client-credentials token)"}
	}
	return nil
}

// Rebase points the token endpoint at base, as config's url points the
// instance-types endpoint.
func (s *Scraper) Rebase(base string) {
	s.TokenURL = strings.TrimRight(base, "/") + TokenPath
}

// tokenURL is the configured token endpoint or the one beside endpoint.
func (s *Scraper) tokenURL(endpoint string) string {
	if s.TokenURL != "" {
		return s.TokenURL
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "https://api.datacrunch.io" + TokenPath
	}
	base := strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/instance-types")
	if base == strings.TrimRight(u.Path, "/") {
		base = "/v1" // not an …/instance-types URL: the default layout
	}
	u.Path, u.RawPath, u.RawQuery = base+"/oauth2/token", "", ""
	return u.String()
}

// Scrape gets a token and the instance types.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	if err := s.Check(env); err != nil {
		return scrapers.Result{}, err
	}
	tok := s.tokenURL(env.URL())
	c, err := env.NewCollector(ctx, tok)
	if err != nil {
		return scrapers.Result{}, err
	}
	body, _ := json.Marshal(map[string]string{
		"grant_type":    "client_credentials",
		"client_id":     env.Secret(ClientIDEnv),
		"client_secret": env.Secret(ClientSecretEnv),
	})
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	resp, err := env.Fetch(ctx, c, scrapers.Request{Method: http.MethodPost, URL: tok, Body: body, Header: hdr})
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("verda token (%s): %w", tok, err)
	}
	access, err := ParseToken(resp.Body)
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("verda token (%s): %w", tok, err)
	}
	hdr = http.Header{"Accept": {"application/json"}, "Authorization": {"Bearer " + access}}
	resp, err = env.Fetch(ctx, c, scrapers.Request{URL: env.URL(), Header: hdr})
	if err != nil {
		return scrapers.Result{}, err
	}
	obs, err := Parse(resp.Body, env.URL())
	return scrapers.Result{Observations: obs}, err
}

// ParseToken reads the access token of an OAuth2 token answer
// ({"access_token", "refresh_token", "scope", "token_type", "expires_in"}).
func ParseToken(body []byte) (string, error) {
	var t struct {
		AccessToken string `json:"access_token"`
		apiError
	}
	if err := scrapers.UnmarshalJSON(body, "", &t); err != nil {
		return "", err
	}
	if t.AccessToken == "" {
		if e := t.apiError.err(); e != nil {
			return "", e
		}
		return "", errors.New("token answer has no access_token")
	}
	return t.AccessToken, nil
}

// apiError is the API's error body: {"code": "…", "message": "…"}.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e apiError) err() error {
	if e.Code == "" && e.Message == "" {
		return nil
	}
	return fmt.Errorf("verda API error %s: %s", e.Code, e.Message)
}

// instanceType is one element of the instance-types answer (the fields
// read; the rest is ignored).
type instanceType struct {
	InstanceType string `json:"instance_type"`
	Model        string `json:"model"`
	Name         string `json:"name"`
	Currency     string `json:"currency"`
	GPU          struct {
		Description  string  `json:"description"`
		NumberOfGPUs float64 `json:"number_of_gpus"`
	} `json:"gpu"`
	GPUMemory struct {
		SizeInGigabytes float64 `json:"size_in_gigabytes"`
	} `json:"gpu_memory"`
	PricePerHour flexPrice `json:"price_per_hour"`
	SpotPrice    flexPrice `json:"spot_price"`
}

// flexPrice is a price written as a string ("3.95"), a number or null.
// A value that is not a number is no price (ok false), not an error: the
// row's other price still counts, and a response with no price at all
// fails as nothing parsed.
type flexPrice struct {
	v  float64
	ok bool
}

func (f *flexPrice) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	f.v, f.ok = v, err == nil && v > 0 && !math.IsInf(v, 0)
	return nil
}

var (
	countPrefix  = regexp.MustCompile(`^\s*\d+\s*[xX]\s+`)
	memorySuffix = regexp.MustCompile(`\s+(\d+(?:\.\d+)?)\s*GB\s*$`)
)

// GPUName splits a gpu.description ("2x RTX A6000 48GB") into the GPU name
// without the count ("RTX A6000") and the memory per GPU it states (48).
func GPUName(description string) (name string, memoryGB float64) {
	name = strings.TrimSpace(countPrefix.ReplaceAllString(description, ""))
	if m := memorySuffix.FindStringSubmatchIndex(name); m != nil {
		memoryGB, _ = strconv.ParseFloat(name[m[2]:m[3]], 64)
		name = strings.TrimSpace(name[:m[0]])
	}
	return name, memoryGB
}

// Parse turns an instance-types answer into observations: per instance,
// on demand from price_per_hour and spot from spot_price, for
// gpu.number_of_gpus GPUs. CPU-only instances are skipped. The GPU name is
// gpu.description without its count and memory (else model); the memory per
// GPU is the one the description states, else gpu_memory.size_in_gigabytes
// divided by the GPU count.
func Parse(body []byte, url string) ([]pricewatch.Observation, error) {
	b := bytes.TrimSpace(body)
	if len(b) > 0 && b[0] == '{' {
		var e apiError
		if json.Unmarshal(b, &e) == nil {
			if err := e.err(); err != nil {
				return nil, err
			}
		}
		return nil, fmt.Errorf("layout change: expected a JSON array of instance types, got an object: %s", snippet(b))
	}
	var list []instanceType
	if err := scrapers.UnmarshalJSON(body, "", &list); err != nil {
		return nil, err
	}
	var out []pricewatch.Observation
	for _, it := range list {
		n := it.GPU.NumberOfGPUs
		if it.InstanceType == "" || !(n >= 1) || n != math.Trunc(n) || n > 1024 {
			continue // CPU instance, or a count that is not a whole number of GPUs
		}
		count := int(n)
		name, mem := GPUName(it.GPU.Description)
		if name == "" {
			name = strings.TrimSpace(it.Model)
		}
		if name == "" {
			continue
		}
		if mem <= 0 && it.GPUMemory.SizeInGigabytes > 0 && !math.IsInf(it.GPUMemory.SizeInGigabytes, 0) {
			mem = it.GPUMemory.SizeInGigabytes / float64(count)
		}
		cur := strings.ToUpper(strings.TrimSpace(it.Currency))
		if cur == "" {
			cur = "USD"
		}
		for _, p := range []struct {
			mode  pricewatch.Mode
			price flexPrice
		}{{pricewatch.ModeOnDemand, it.PricePerHour}, {pricewatch.ModeSpot, it.SpotPrice}} {
			if !p.price.ok {
				continue
			}
			out = append(out, pricewatch.Observation{
				Source: "verda", OfferID: it.InstanceType, GPUName: name,
				GPUCount: count, GPUMemoryGB: mem, Price: p.price.v, Currency: cur,
				Unit: pricewatch.PerHour, Mode: p.mode, URL: url,
				// An instance type is rented whole, with its number_of_gpus.
				RentUnit: pricewatch.RentFixed,
			})
		}
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}

func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	return s
}
