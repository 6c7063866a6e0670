package verda_test

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
	"github.com/pricewatch/pricewatch/scrapers/verda"
)

func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "verda")
	nr, _ := scrapertest.CheckFixture(t, "verda", res)
	// An instance type is rented whole, with its number_of_gpus.
	scrapertest.FixedUnits(t, nr)
	scrapertest.Rent(t, nr, "verda/4B300.120V/-/spot", pricewatch.RentFixed, 4)
	scrapertest.Rent(t, nr, "verda/1V100.6V/-/ondemand", pricewatch.RentFixed, 1)
	for _, c := range []struct {
		key, card string
		mode      pricewatch.Mode
		price     float64
	}{
		{"verda/1H100.80S.30V/-/ondemand", "H100-80GB-SXM", pricewatch.ModeOnDemand, 3.95}, // shape object
		{"verda/1H100.80S.30V/-/spot", "H100-80GB-SXM", pricewatch.ModeSpot, 1.70},
		{"verda/2A6000.20V/-/ondemand", "RTX-A6000", pricewatch.ModeOnDemand, 0.99},      // "1.98" for 2 GPUs
		{"verda/2A6000.20V/-/spot", "RTX-A6000", pricewatch.ModeSpot, 0.35},              // "0.70" / 2
		{"verda/4B300.120V/-/ondemand", "B300-288GB-SXM", pricewatch.ModeOnDemand, 6.99}, // "27.96" / 4
		{"verda/4B300.120V/-/spot", "B300-288GB-SXM", pricewatch.ModeSpot, 2.4465},       // "9.786" / 4
		{"verda/2H200.141S.88V/-/spot", "H200-141GB-SXM", pricewatch.ModeSpot, 1.1865},   // "2.373" / 2
		{"verda/4A100.88V/-/ondemand", "A100-80GB-SXM", pricewatch.ModeOnDemand, 1.29},   // "5.16" / 4
		{"verda/2RTX6000ADA.20V/-/ondemand", "RTX-6000-ADA", pricewatch.ModeOnDemand, 0.826},
		// No form factor ("Tesla V100", 16 GB) or edition ("RTX PRO 6000",
		// 96 GB) stated: the lower-bound cards (unknown before).
		{"verda/1V100.6V/-/ondemand", "V100-16GB", pricewatch.ModeOnDemand, 0.1381},
		{"verda/2RTXPRO6000.60V/-/ondemand", "RTX-PRO-6000-96GB", pricewatch.ModeOnDemand, 1.69},
		{"verda/4RTXPRO6000.120V/-/spot", "RTX-PRO-6000-96GB", pricewatch.ModeSpot, 0.5915},
	} {
		scrapertest.Price(t, nr, c.key, c.card, c.mode, c.price)
	}
	keys := map[string]bool{}
	for _, o := range nr.Offers {
		keys[o.Key] = true
		if o.Currency != "USD" || o.Provider != "verda" {
			t.Errorf("%s: %s from %s", o.Key, o.Currency, o.Provider)
		}
	}
	for _, absent := range []string{
		"verda/CPU.4V.16G/-/ondemand",  // CPU instance
		"verda/1H200.141S.44V/-/spot",  // spot_price null
		"verda/1RTX6000ADA.10V/-/spot", // spot_price null
	} {
		if keys[absent] {
			t.Errorf("offer %s must not exist", absent)
		}
	}
	if len(nr.Unknown) != 0 {
		t.Errorf("unknown = %v, want none", nr.Unknown)
	}
	// Availability per mode from instance-availability: listed in a
	// location for that mode, or not at all.
	for _, c := range []struct {
		key   string
		avail pricewatch.Availability
		stock string
	}{
		{"verda/1A100.22V/-/ondemand", pricewatch.AvailableYes, "deployable in FIN-01, FIN-03"},
		{"verda/1H100.80S.32V/-/spot", pricewatch.AvailableYes, "deployable in FIN-02"},
		{"verda/4A100.88V/-/ondemand", pricewatch.AvailableYes, "deployable in FIN-03"},
		{"verda/1V100.6V/-/ondemand", pricewatch.AvailableYes, "deployable in FIN-01"},
		// The two shape objects are listed in no location.
		{"verda/1H100.80S.30V/-/ondemand", pricewatch.AvailableNo, "deployable nowhere now"},
		{"verda/2A6000.20V/-/spot", pricewatch.AvailableNo, "deployable nowhere now"},
	} {
		if o := scrapertest.Find(t, nr, c.key); o.Available != c.avail || o.Stock != c.stock {
			t.Errorf("%s: available %q stock %q, want %q %q", c.key, o.Available, o.Stock, c.avail, c.stock)
		}
	}
}

func TestInstanceTypesURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{verda.DefaultURL, "https://api.verda.com/v1/instance-types?currency=usd"},
		{"https://api.verda.com/v1/instance-types", "https://api.verda.com/v1/instance-types?currency=usd"},
		{"https://api.verda.com/v1/instance-types?currency=eur", "https://api.verda.com/v1/instance-types?currency=eur"},
	} {
		if got := verda.InstanceTypesURL(c.in); got != c.want {
			t.Errorf("InstanceTypesURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseAvailability(t *testing.T) {
	a, err := verda.ParseAvailability([]byte(`[{"location_code":"FIN-03","availabilities":["1A100.22V","1A100.22V"]},` +
		`{"location_code":"FIN-01","availabilities":["1A100.22V"]},{"location_code":"FIN-02","availabilities":[]}]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := a["1A100.22V"]; len(got) != 2 || got[0] != "FIN-01" || got[1] != "FIN-03" {
		t.Errorf("1A100.22V in %v", got)
	}
	for _, c := range []struct{ name, body, want string }{
		{"Object", `{"locations":[]}`, "expected a JSON array of locations"},
		{"APIError", `{"code":"unauthorized_request","message":"expired"}`, "verda API error unauthorized_request"},
		{"Renamed", `[{"code":"FIN-01","availabilities":["x"]}]`, "without location_code"},
		{"HTML", `<html>502</html>`, "expected JSON, got markup"},
	} {
		if _, err := verda.ParseAvailability([]byte(c.body)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

// A failed availability request fails the run by name, with the prices
// read; skip_availability leaves availability unknown.
func TestScraper_AvailabilityErrors(t *testing.T) {
	good := fixtures.Handler(fixtures.FS())
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/v1/instance-availability") {
			http.Error(w, "gone", http.StatusNotFound)
			return
		}
		good.ServeHTTP(w, r)
	})
	res, err := scrapertest.Scrape(t, "verda", h)
	if err == nil || !strings.Contains(err.Error(), "verda instance-availability") || len(res.Observations) == 0 {
		t.Fatalf("err = %v with %d observations, want the availability step named and the prices kept", err, len(res.Observations))
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	s, env := scrapertest.Scraper(t, "verda", srv.URL)
	s.(*verda.Scraper).SkipAvailability = true
	res, err = s.Scrape(t.Context(), env)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range res.Observations {
		if o.Available != "" {
			t.Fatalf("%s: available %q without asking", o.OfferID, o.Available)
		}
	}
}

// The token request carries the client credentials as JSON and the
// instance-types request the token it returned.
func TestScraper_Auth(t *testing.T) {
	good := fixtures.Handler(fixtures.FS())
	var mu sync.Mutex
	var tokenBody map[string]string
	var auth, currency string
	var availAuth []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.HasSuffix(r.URL.Path, "/v1/oauth2/token"):
			b, _ := io.ReadAll(r.Body)
			json.Unmarshal(b, &tokenBody)
		case strings.HasSuffix(r.URL.Path, "/v1/instance-types"):
			auth = r.Header.Get("Authorization")
			currency = r.URL.Query().Get("currency")
		case strings.HasSuffix(r.URL.Path, "/v1/instance-availability"):
			availAuth = append(availAuth, r.URL.Query().Get("is_spot")+" "+r.Header.Get("Authorization"))
		}
		good.ServeHTTP(w, r)
	})
	if _, err := scrapertest.Scrape(t, "verda", h); err != nil {
		t.Fatal(err)
	}
	if tokenBody["grant_type"] != "client_credentials" || tokenBody["client_id"] != "test-secret" || tokenBody["client_secret"] != "test-secret" {
		t.Errorf("token request body %v", tokenBody)
	}
	if auth != "Bearer fixture-access-token" || currency != "usd" {
		t.Errorf("Authorization %q, currency %q", auth, currency)
	}
	if len(availAuth) != 2 || availAuth[0] != "false Bearer fixture-access-token" || availAuth[1] != "true Bearer fixture-access-token" {
		t.Errorf("availability requests %q", availAuth)
	}
}

func TestScraper_Check(t *testing.T) {
	s := &verda.Scraper{}
	for _, c := range []struct {
		name     string
		env      map[string]string
		disabled bool
	}{
		{"None", map[string]string{}, true},
		{"OnlyID", map[string]string{verda.ClientIDEnv: "id"}, true},
		{"OnlySecret", map[string]string{verda.ClientSecretEnv: "secret"}, true},
		{"Blank", map[string]string{verda.ClientIDEnv: " ", verda.ClientSecretEnv: " "}, true},
		{"Both", map[string]string{verda.ClientIDEnv: "id", verda.ClientSecretEnv: "secret"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := &scrapers.Env{Getenv: func(k string) string { return c.env[k] }}
			err := s.Check(env)
			var d *scrapers.Disabled
			if c.disabled {
				if !errors.As(err, &d) || !strings.Contains(d.Reason, "PRICEWATCH_VERDA_CLIENT") {
					t.Fatalf("Check = %v, want *Disabled naming the variables", err)
				}
				if _, err := s.Scrape(t.Context(), env); !errors.As(err, &d) {
					t.Errorf("Scrape without credentials = %v, want *Disabled", err)
				}
			} else if err != nil {
				t.Fatalf("Check = %v, want nil", err)
			}
		})
	}
}

// Token failures name the token endpoint.
func TestScraper_TokenErrors(t *testing.T) {
	good := fixtures.Handler(fixtures.FS())
	for _, c := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"Unauthorized", 401, `{"code":"unauthorized_request","message":"Invalid client credentials"}`, "HTTP 401"},
		{"NoToken", 200, `{"token_type":"Bearer"}`, "no access_token"},
		{"ErrorBody", 200, `{"code":"invalid_request","message":"bad grant"}`, "verda API error invalid_request: bad grant"},
		{"HTML", 200, `<html>login</html>`, "expected JSON, got markup"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/v1/oauth2/token") {
					w.WriteHeader(c.status)
					io.WriteString(w, c.body)
					return
				}
				good.ServeHTTP(w, r)
			})
			_, err := scrapertest.Scrape(t, "verda", h)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "verda token") {
				t.Fatalf("err = %v, want it to name the token step and %q", err, c.want)
			}
		})
	}
}

func TestScraper_Rebase(t *testing.T) {
	s := &verda.Scraper{}
	var _ scrapers.Rebaser = s
	s.Rebase("http://127.0.0.1:9/")
	if s.TokenURL != "http://127.0.0.1:9/v1/oauth2/token" || s.AvailabilityURL != "http://127.0.0.1:9/v1/instance-availability" {
		t.Errorf("TokenURL = %q, AvailabilityURL = %q", s.TokenURL, s.AvailabilityURL)
	}
	// Without Rebase the token and availability endpoints sit beside the
	// configured instance-types URL, as in the SDK (<base>/oauth2/token).
	srv := httptest.NewServer(fixtures.Handler(fixtures.FS()))
	defer srv.Close()
	if _, err := (&verda.Scraper{}).Scrape(t.Context(), scrapertest.Env(t, "verda", srv.URL)); err != nil {
		t.Errorf("derived token URL: %v", err)
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"HTML", `<html><body>Just a moment...</body></html>`, "expected JSON, got markup"},
		{"Truncated", `[{"instance_type":"1H100.80S.30V","price_per_hour":"3.9`, "decode JSON"},
		{"Empty", ``, "empty response body"},
		{"EmptyList", `[]`, "no offers parsed"},
		{"APIError", `{"code":"unauthorized_request","message":"Access token is expired"}`, "verda API error unauthorized_request"},
		{"Object", `{"instance_types":[]}`, "expected a JSON array"},
		{"OnlyCPU", `[{"instance_type":"CPU.4V.16G","gpu":{"number_of_gpus":0},"price_per_hour":"0.0279"}]`, "no offers parsed"},
		{"RenamedPrice", `[{"instance_type":"1H100","gpu":{"description":"1x H100 SXM5 80GB","number_of_gpus":1},"hourly_price":"3.95"}]`, "no offers parsed"},
		{"BadPrice", `[{"instance_type":"1H100","gpu":{"description":"1x H100 SXM5 80GB","number_of_gpus":1},"price_per_hour":"n/a","spot_price":"-1"}]`, "no offers parsed"},
		{"UnmappedNoPrice", `[{"instance_type":"1H100","gpu":{"number_of_gpus":0.5},"price_per_hour":null}]`, "no offers parsed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := verda.Parse([]byte(c.body), "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestParse_Fields(t *testing.T) {
	// Numbers instead of strings, a missing description (model is used),
	// memory from gpu_memory divided by the count, currency upper-cased.
	body := `[{"instance_type":"8V100.48V","model":"Tesla V100","currency":"eur","gpu":{"number_of_gpus":8},` +
		`"gpu_memory":{"size_in_gigabytes":128},"price_per_hour":6.32,"spot_price":null}]`
	obs, err := verda.Parse([]byte(body), "u")
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 1 {
		t.Fatalf("%+v", obs)
	}
	o := obs[0]
	if o.GPUName != "Tesla V100" || o.GPUCount != 8 || o.GPUMemoryGB != 16 || o.Price != 6.32 || o.Currency != "EUR" ||
		o.PerGPU || o.Mode != pricewatch.ModeOnDemand || o.URL != "u" {
		t.Errorf("%+v", o)
	}
	for _, c := range []struct {
		in, name string
		mem      float64
	}{
		{"1x H100 SXM5 80GB", "H100 SXM5", 80},
		{"8x B200 SXM6 180GB", "B200 SXM6", 180},
		{"2x RTX A6000 48GB", "RTX A6000", 48},
		{"1x AMD 7900XTX", "AMD 7900XTX", 0},
		{"RTX 6000 Ada 48GB", "RTX 6000 Ada", 48},
	} {
		if n, m := verda.GPUName(c.in); n != c.name || m != c.mem {
			t.Errorf("GPUName(%q) = %q, %v; want %q, %v", c.in, n, m, c.name, c.mem)
		}
	}
}

// A GPU instance that cannot be mapped (no whole GPU count, no GPU name) is
// kept under its instance type, on demand only, with no rent terms, so
// that normalize reports it.
func TestParse_Unmapped(t *testing.T) {
	body := `[{"instance_type":"HALF.H100","gpu":{"description":"1/2x H100 SXM5 80GB","number_of_gpus":0.5},"price_per_hour":"1.10","spot_price":"0.50"},` +
		`{"instance_type":"1X.NEW","gpu":{"description":"","number_of_gpus":1},"model":"","price_per_hour":"2.00"}]`
	obs, err := verda.Parse([]byte(body), "u")
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 2 {
		t.Fatalf("%d observations, want one per unmapped type: %+v", len(obs), obs)
	}
	for _, o := range obs {
		if o.GPUName != o.OfferID || o.GPUCount != 1 || o.RentUnit != "" || o.Mode != pricewatch.ModeOnDemand {
			t.Errorf("%+v", o)
		}
	}
}

func FuzzParse(f *testing.F) {
	seed, err := fs.ReadFile(fixtures.FS(), "verda/instance-types.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`[{"instance_type":"x","gpu":{"description":"1x H100 80GB","number_of_gpus":1e308},"price_per_hour":"1e400"}]`))
	f.Add([]byte(`[{"instance_type":"x","gpu":{"number_of_gpus":0.5},"gpu_memory":{"size_in_gigabytes":-1},"price_per_hour":"NaN"}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		obs, err := verda.Parse(body, "")
		if err != nil {
			return
		}
		for _, o := range obs {
			if !(o.Price > 0) || math.IsInf(o.Price, 0) || o.GPUCount < 1 || math.IsNaN(o.GPUMemoryGB) {
				t.Fatalf("bad observation accepted: %+v", o)
			}
		}
	})
}

// What comes with an instance type, from fixtures/verda/instance-types.json:
// 4B300.120V "number_of_cores": 120, "memory": {"size_in_gigabytes": 1100}
// (GiB as stated), "gpu": "4x B300 SXM6 268GB" → sxm; 2A6000.20V 20 cores,
// 120 GiB, "2x RTX A6000 48GB" names no link. "storage": "dynamic" → no disk.
func TestScraper_InstanceDetails(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "verda")
	nr, _ := scrapertest.Normalize("verda", res)
	b300 := scrapertest.Find(t, nr, "verda/4B300.120V/-/spot")
	if b300.VCPUs != 120 || b300.RAMGB != 1100 || b300.DiskGB != 0 || b300.Interconnect != "sxm" || b300.RentURL != verda.RentURL {
		t.Errorf("4B300: %v vCPUs, %v GiB, %v GiB disk, link %q, rent %q", b300.VCPUs, b300.RAMGB, b300.DiskGB, b300.Interconnect, b300.RentURL)
	}
	a6000 := scrapertest.Find(t, nr, "verda/2A6000.20V/-/ondemand")
	if a6000.VCPUs != 20 || a6000.RAMGB != 120 || a6000.Interconnect != "" {
		t.Errorf("2A6000: %v vCPUs, %v GiB, link %q", a6000.VCPUs, a6000.RAMGB, a6000.Interconnect)
	}
}
