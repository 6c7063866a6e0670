// Package verda scrapes Verda (formerly DataCrunch): GET /v1/instance-types
// of the Verda cloud API at https://api.verda.com (the host moved from
// api.datacrunch.io), which needs an OAuth2 client-credentials token
// (POST /v1/oauth2/token). Prices are strings in the currency asked for
// (?currency=usd; the API also prices in eur) per instance-hour:
// price_per_hour on demand, spot_price for spot instances.
//
// Availability comes from GET /v1/instance-availability (?is_spot=false
// for on demand, ?is_spot=true for spot): per location, the instance types
// that can be deployed there now. An instance type listed in some location
// is available (stock: the locations); one listed nowhere is not.
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
	"slices"
	"sort"
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

// Endpoints of the real API; the SDK (verda-cloud/sdk-python, VerdaClient
// base_url https://api.verda.com/v1) uses <base>/oauth2/token,
// <base>/instance-types?currency=<usd|eur> and, in SkyPilot's fetcher,
// <base>/instance-availability?is_spot=<bool>.
const (
	DefaultURL       = "https://api.verda.com/v1/instance-types?currency=usd"
	DefaultCurrency  = "usd"
	TokenPath        = "/v1/oauth2/token"
	AvailabilityPath = "/v1/instance-availability"
)

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "verda",
		Description: "Verda (formerly DataCrunch) cloud API instance types and their availability",
		Auth:        "OAuth2 client credentials in " + ClientIDEnv + " and " + ClientSecretEnv,
		Yields:      "ondemand, spot; USD per instance-hour; availability per mode from the instance-availability endpoint",
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
	// AvailabilityURL is the instance-availability endpoint. Empty: the
	// API base of url + /instance-availability.
	AvailabilityURL string `yaml:"availability_url"`
	// SkipAvailability leaves availability unknown instead of asking the
	// instance-availability endpoint.
	SkipAvailability bool `yaml:"skip_availability"`
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
			" (a Verda (formerly DataCrunch) cloud API client id and secret, for its OAuth2 client-credentials token)"}
	}
	return nil
}

// Rebase points the token and availability endpoints at base, as config's
// url points the instance-types endpoint.
func (s *Scraper) Rebase(base string) {
	s.TokenURL = strings.TrimRight(base, "/") + TokenPath
	s.AvailabilityURL = strings.TrimRight(base, "/") + AvailabilityPath
}

// beside is the endpoint path under the API base of the instance-types URL
// (https://api.verda.com/v1/instance-types → https://api.verda.com/v1/<path>).
func beside(endpoint, path string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "https://api.verda.com/v1/" + path
	}
	base := strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/instance-types")
	if base == strings.TrimRight(u.Path, "/") {
		base = "/v1" // not an …/instance-types URL: the default layout
	}
	u.Path, u.RawPath, u.RawQuery = base+"/"+path, "", ""
	return u.String()
}

// tokenURL is the configured token endpoint or the one beside endpoint.
func (s *Scraper) tokenURL(endpoint string) string {
	if s.TokenURL != "" {
		return s.TokenURL
	}
	return beside(endpoint, "oauth2/token")
}

// availabilityURL is the configured availability endpoint or the one beside
// endpoint, asking for spot or on-demand availability.
func (s *Scraper) availabilityURL(endpoint string, spot bool) string {
	u := s.AvailabilityURL
	if u == "" {
		u = beside(endpoint, "instance-availability")
	}
	return withQuery(u, "is_spot", strconv.FormatBool(spot), true)
}

// InstanceTypesURL is the configured instance-types URL with
// currency=usd added when it names no currency: without it the API
// answers in the account's default currency.
func InstanceTypesURL(endpoint string) string {
	return withQuery(endpoint, "currency", DefaultCurrency, false)
}

// withQuery sets key=value on u (only when u has no key unless replace).
func withQuery(raw, key, value string, replace bool) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	if q.Get(key) != "" && !replace {
		return raw
	}
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// Scrape gets a token, the instance types and, unless skipped, their
// availability on demand and as spot.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	if err := s.Check(env); err != nil {
		return scrapers.Result{}, err
	}
	tok := s.tokenURL(env.URL())
	c, err := env.NewCollector(ctx, tok, s.availabilityURL(env.URL(), false))
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
	itURL := InstanceTypesURL(env.URL())
	resp, err = env.Fetch(ctx, c, scrapers.Request{URL: itURL, Header: hdr})
	if err != nil {
		return scrapers.Result{}, err
	}
	obs, err := Parse(resp.Body, itURL)
	if err != nil || s.SkipAvailability {
		return scrapers.Result{Observations: obs}, err
	}
	var avail [2]Availability
	for i, spot := range []bool{false, true} {
		u := s.availabilityURL(env.URL(), spot)
		resp, err := env.Fetch(ctx, c, scrapers.Request{URL: u, Header: hdr})
		if err == nil {
			avail[i], err = ParseAvailability(resp.Body)
		}
		if err != nil {
			// The prices are read; the run fails by name so that a moved
			// endpoint is seen, not silently left unknown.
			return scrapers.Result{Observations: obs}, fmt.Errorf("verda instance-availability (%s): %w", u, err)
		}
	}
	SetAvailability(obs, avail[0], avail[1])
	return scrapers.Result{Observations: obs}, nil
}

// Availability maps an instance type to the locations that can deploy it
// now, sorted.
type Availability map[string][]string

// ParseAvailability reads an instance-availability answer:
// [{"location_code": "FIN-01", "availabilities": ["1H100.80S.32V", …]}, …].
func ParseAvailability(body []byte) (Availability, error) {
	if err := wantArray(body, "locations"); err != nil {
		return nil, err
	}
	var list []struct {
		LocationCode   *string  `json:"location_code"`
		Availabilities []string `json:"availabilities"`
	}
	if err := scrapers.UnmarshalJSON(body, "", &list); err != nil {
		return nil, err
	}
	out := Availability{}
	for _, l := range list {
		if l.LocationCode == nil {
			return nil, errors.New("layout change: a location without location_code")
		}
		loc := strings.TrimSpace(*l.LocationCode)
		for _, t := range l.Availabilities {
			if t = strings.TrimSpace(t); t != "" && loc != "" {
				out[t] = append(out[t], loc)
			}
		}
	}
	for t, locs := range out {
		sort.Strings(locs)
		out[t] = slices.Compact(locs)
	}
	return out, nil
}

// SetAvailability marks each observation available where its instance
// type is listed for its mode (ondemand: onDemand, spot: spot), with the
// locations as its stock, and unavailable where it is listed nowhere.
func SetAvailability(obs []pricewatch.Observation, onDemand, spot Availability) {
	for i := range obs {
		a := onDemand
		if obs[i].Mode == pricewatch.ModeSpot {
			a = spot
		}
		if locs := a[obs[i].OfferID]; len(locs) > 0 {
			obs[i].Available, obs[i].Stock = pricewatch.AvailableYes, "deployable in "+strings.Join(locs, ", ")
		} else {
			obs[i].Available, obs[i].Stock = pricewatch.AvailableNo, "deployable nowhere now"
		}
	}
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
	CPU          struct {
		NumberOfCores float64 `json:"number_of_cores"`
	} `json:"cpu"`
	Memory struct {
		SizeInGigabytes float64 `json:"size_in_gigabytes"`
	} `json:"memory"`
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
// gpu.number_of_gpus GPUs. CPU-only instances (no GPUs) are skipped. The
// GPU name is gpu.description without its count and memory (else model);
// the memory per GPU is the one the description states, else
// gpu_memory.size_in_gigabytes divided by the GPU count (the SDK, gpuhunt
// and SkyPilot's current fetcher all read that field as the total of all
// GPUs). A GPU instance whose count is not a whole number or that names no
// GPU is kept under its instance type with one GPU and no rent terms, on
// demand only, so that normalize reports it: never dropped.
func Parse(body []byte, url string) ([]pricewatch.Observation, error) {
	if err := wantArray(body, "instance types"); err != nil {
		return nil, err
	}
	var list []instanceType
	if err := scrapers.UnmarshalJSON(body, "", &list); err != nil {
		return nil, err
	}
	var out []pricewatch.Observation
	for _, it := range list {
		id := strings.TrimSpace(it.InstanceType)
		n := it.GPU.NumberOfGPUs
		if id == "" || !(n > 0) {
			continue // CPU instance (or no instance type to name an offer by)
		}
		cur := strings.ToUpper(strings.TrimSpace(it.Currency))
		if cur == "" {
			cur = "USD"
		}
		name, mem := GPUName(it.GPU.Description)
		if name == "" {
			name = strings.TrimSpace(it.Model)
		}
		base := pricewatch.Observation{
			Source: "verda", OfferID: id, Currency: cur, Unit: pricewatch.PerHour, URL: url,
		}
		if n != math.Trunc(n) || n > 1024 || name == "" {
			// Not a whole count of a named GPU: reported under its type.
			if it.PricePerHour.ok {
				o := base
				o.GPUName, o.GPUCount, o.Price, o.Mode = id, 1, it.PricePerHour.v, pricewatch.ModeOnDemand
				out = append(out, o)
			}
			continue
		}
		count := int(n)
		if mem <= 0 && it.GPUMemory.SizeInGigabytes > 0 && !math.IsInf(it.GPUMemory.SizeInGigabytes, 0) {
			mem = it.GPUMemory.SizeInGigabytes / float64(count)
		}
		for _, p := range []struct {
			mode  pricewatch.Mode
			price flexPrice
		}{{pricewatch.ModeOnDemand, it.PricePerHour}, {pricewatch.ModeSpot, it.SpotPrice}} {
			if !p.price.ok {
				continue
			}
			o := base
			o.GPUName, o.GPUCount, o.GPUMemoryGB, o.Price, o.Mode = name, count, mem, p.price.v, p.mode
			// An instance type is rented whole, with its number_of_gpus.
			o.RentUnit = pricewatch.RentFixed
			o.VCPUs, o.RAMGB, o.Interconnect = details(it)
			o.RentURL = RentURL
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}

// wantArray fails an answer that is an object instead of the JSON array
// of what it should list: the API's error body where it is one, else a
// layout change.
func wantArray(body []byte, what string) error {
	b := bytes.TrimSpace(body)
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	var e apiError
	if json.Unmarshal(b, &e) == nil {
		if err := e.err(); err != nil {
			return err
		}
	}
	return fmt.Errorf("layout change: expected a JSON array of %s, got an object: %s", what, snippet(b))
}

func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	return s
}

// RentURL is where a Verda instance is deployed (its cloud console).
const RentURL = "https://console.verda.com/"

// details is what comes with an instance type (all its GPUs): cpu.number_of_cores
// as vCPUs (the instance type's name ends in the same count, "…30V"), and
// memory.size_in_gigabytes as GiB: the API labels it "GB" ("120GB RAM"),
// which for memory is the binary unit (JEDEC), and gpuhunt and SkyPilot read
// the number as the instance's memory unchanged. Storage is "dynamic" (a
// volume chosen at deploy time), so no disk is stated. A GPU description
// naming SXM ("1x H100 SXM5 80GB") states the board's NVLink.
func details(it instanceType) (vcpus, ramGiB float64, link string) {
	if v := it.CPU.NumberOfCores; v > 0 && v < 1e5 {
		vcpus = v
	}
	if v := it.Memory.SizeInGigabytes; v > 0 && v < 1e7 {
		ramGiB = v
	}
	if strings.Contains(strings.ToUpper(it.GPU.Description), "SXM") {
		link = "sxm"
	}
	return vcpus, ramGiB, link
}
