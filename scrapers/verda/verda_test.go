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
	if nr.Unknown["Tesla V100 (16 GB)"] != 1 || nr.Unknown["RTX PRO 6000 (96 GB)"] != 6 {
		t.Errorf("unknown = %v, want Tesla V100 (no form factor) and RTX PRO 6000 (no card)", nr.Unknown)
	}
}

// The token request carries the client credentials as JSON and the
// instance-types request the token it returned.
func TestScraper_Auth(t *testing.T) {
	good := fixtures.Handler(fixtures.FS())
	var mu sync.Mutex
	var tokenBody map[string]string
	var auth string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.HasSuffix(r.URL.Path, "/v1/oauth2/token"):
			b, _ := io.ReadAll(r.Body)
			json.Unmarshal(b, &tokenBody)
		case strings.HasSuffix(r.URL.Path, "/v1/instance-types"):
			auth = r.Header.Get("Authorization")
		}
		good.ServeHTTP(w, r)
	})
	if _, err := scrapertest.Scrape(t, "verda", h); err != nil {
		t.Fatal(err)
	}
	if tokenBody["grant_type"] != "client_credentials" || tokenBody["client_id"] != "test-secret" || tokenBody["client_secret"] != "test-secret" {
		t.Errorf("token request body %v", tokenBody)
	}
	if auth != "Bearer fixture-access-token" {
		t.Errorf("Authorization %q", auth)
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
	if s.TokenURL != "http://127.0.0.1:9/v1/oauth2/token" {
		t.Errorf("TokenURL = %q", s.TokenURL)
	}
	// Without Rebase the token endpoint sits beside the configured
	// instance-types URL, as in the SDKs (<base>/oauth2/token).
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
