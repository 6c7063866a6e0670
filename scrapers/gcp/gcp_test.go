package gcp_test

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/scrapers/gcp"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

const skusPath = "/v1/services/6F81-5844-456A/skus"

func fixtureBody(t testing.TB, name string) []byte {
	t.Helper()
	b, err := fs.ReadFile(fixtures.FS(), "gcp/"+name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// run scrapes h with the given key (and retries off, a short timeout).
func run(t *testing.T, h http.Handler, key string, mutate func(*scrapers.Env)) (scrapers.Result, error) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	env := scrapertest.Env(t, gcp.Name, srv.URL)
	env.Getenv = func(name string) string {
		if name == gcp.APIKeyEnv {
			return key
		}
		return ""
	}
	env.Settings.Retries = -1
	if mutate != nil {
		mutate(env)
	}
	reg, _ := scrapers.Get(gcp.Name)
	return reg.New().Scrape(t.Context(), env)
}

func key(machine, region string, mode pricewatch.Mode) string {
	return pricewatch.OfferKey(gcp.Name, machine, region, mode)
}

// The golden machine prices, from the fixture's SKUs of one region and one
// usage type (fixtures/gcp/PROVENANCE.md says which SKUs are real and which
// are built). Per-GPU price = machine price ÷ GPUs.
func TestScraper_GoldenMachines(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, gcp.Name)
	nr, _ := scrapertest.Normalize(gcp.Name, res)
	const ssdHour = 0.08 / 730 // Local SSD 0.08 USD per GiB-month (built SKU)
	for _, c := range []struct {
		name, key, card string
		mode            pricewatch.Mode
		machine         float64 // USD per machine-hour
		gpus            int
	}{
		// a2-highgpu-1g on demand, us-central1 (all real SKUs):
		// A100 40GB 2.933908 + 12 vCPU × A2 core 0.031611 + 85 GiB × A2 RAM
		// 0.004237 = 2.933908 + 0.379332 + 0.360145 = 3.673385 USD/h.
		{"A2", key("a2-highgpu-1g", "us-central1", pricewatch.ModeOnDemand), "A100-40GB-SXM", pricewatch.ModeOnDemand,
			2.933908 + 12*0.031611 + 85*0.004237, 1},
		// a3-highgpu-8g on demand, us-central1: 8 × H100 9.796550569 (real)
		// + 208 vCPU × A3 core 0.025498 + 1872 GiB × A3 RAM 0.00222034
		// (built) + 6000 GiB Local SSD × 0.08 / 730 (built)
		// = 78.372404552 + 5.303584 + 4.15647648 + 0.657534247
		// = 88.489999279 USD/h, 11.061249910 per GPU.
		{"A3", key("a3-highgpu-8g", "us-central1", pricewatch.ModeOnDemand), "H100-80GB-SXM", pricewatch.ModeOnDemand,
			8*9.796550569 + 208*0.025498 + 1872*0.00222034 + 6000*ssdHour, 8},
		// g2-standard-8 on demand, us-central1: L4 0.560040239 (real)
		// + 8 vCPU × G2 core 0.024988 + 32 GiB × G2 RAM 0.0029275 (built)
		// = 0.560040239 + 0.199904 + 0.09368 = 0.853624239 USD/h.
		{"G2", key("g2-standard-8", "us-central1", pricewatch.ModeOnDemand), "L4", pricewatch.ModeOnDemand,
			0.560040239 + 8*0.024988 + 32*0.0029275, 1},
		// g2-standard-24 on demand: 2 × 0.560040239 + 24 × 0.024988 + 96 ×
		// 0.0029275 = 1.120080478 + 0.599712 + 0.28104 = 2.000832478 USD/h,
		// 1.000416239 per GPU.
		{"G2x2", key("g2-standard-24", "us-central1", pricewatch.ModeOnDemand), "L4", pricewatch.ModeOnDemand,
			2*0.560040239 + 24*0.024988 + 96*0.0029275, 2},
		// a2-ultragpu-1g on demand bundles 375 GiB Local SSD: 3.92808 +
		// 0.379332 + 170 × 0.004237 + 375 × 0.08 / 730 = 5.068797890.
		{"A2Ultra", key("a2-ultragpu-1g", "us-central1", pricewatch.ModeOnDemand), "A100-80GB-SXM", pricewatch.ModeOnDemand,
			3.92808 + 12*0.031611 + 170*0.004237 + 375*ssdHour, 1},
		// a2-highgpu-1g spot: A100 spot 1.1472 (real, 2025) + 12 × 0.01264
		// + 85 × 0.001695 (built) = 1.442955.
		{"A2Spot", key("a2-highgpu-1g", "us-central1", pricewatch.ModeSpot), "A100-40GB-SXM", pricewatch.ModeSpot,
			1.1472 + 12*0.01264 + 85*0.001695, 1},
		// a2-highgpu-8g 1-year commitment: 8 × 1.84836204 + 96 × 0.019915 +
		// 680 × 0.002669 = 18.51365632, 2.31420704 per GPU.
		{"A2Commit1Y", key("a2-highgpu-8g", "us-west1", pricewatch.ModeReserved1Y), "A100-40GB-SXM", pricewatch.ModeReserved1Y,
			8*1.84836204 + 96*0.019915 + 680*0.002669, 8},
		// a3-edgegpu-8g-nolssd spot (no bundled SSD): 8 × 2.253 + 208 ×
		// 0.00778 + 1872 × 0.000679 = 20.913328, 2.614166 per GPU.
		{"A3Spot", key("a3-edgegpu-8g-nolssd", "us-central1", pricewatch.ModeSpot), "H100-80GB-SXM", pricewatch.ModeSpot,
			8*2.253 + 208*0.00778 + 1872*0.000679, 8},
		// g2-standard-8 3-year commitment: 0.252018107 + 8 × 0.011244695 +
		// 32 × 0.001317351 = 0.252018107 + 0.08995756 + 0.042155232 = 0.384130899.
		{"G2Commit3Y", key("g2-standard-8", "us-east1", pricewatch.ModeReserved3Y), "L4", pricewatch.ModeReserved3Y,
			0.252018107 + 8*0.011244695 + 32*0.001317351, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := scrapertest.Find(t, nr, c.key)
			per := c.machine / float64(c.gpus)
			if math.Abs(o.PricePerGPUHour-per) > 1e-9 || o.Card != c.card || o.Mode != c.mode || o.GPUs != c.gpus {
				t.Errorf("%s: %s %s %d GPUs %.9f/GPU-h, want %s %s %d GPUs %.9f", c.key, o.Card, o.Mode, o.GPUs, o.PricePerGPUHour, c.card, c.mode, c.gpus, per)
			}
			if o.RentUnit != pricewatch.RentFixed || !slices.Equal(o.GPUCounts, []int{c.gpus}) ||
				math.Abs(o.UnitPricePerHour-c.machine) > 1e-9 {
				t.Errorf("%s: rent %q %v unit price %.9f, want fixed [%d] at %.9f", c.key, o.RentUnit, o.GPUCounts, o.UnitPricePerHour, c.gpus, c.machine)
			}
		})
	}
	// The figure, to the tenth of a cent.
	if o := scrapertest.Find(t, nr, key("a2-highgpu-1g", "us-central1", pricewatch.ModeOnDemand)); math.Round(o.PricePerGPUHour*1000)/1000 != 3.673 {
		t.Errorf("a2-highgpu-1g = %.6f, want 3.673 USD/h", o.PricePerGPUHour)
	}
}

func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, gcp.Name)
	nr, _ := scrapertest.CheckFixture(t, gcp.Name, res)
	keys := map[string]pricewatch.Offer{}
	for _, o := range nr.Offers {
		keys[o.Key] = o
		if o.Currency != "USD" || o.Provider != "gcp" || strings.Contains(o.URL, "secret") {
			t.Errorf("%s: currency %s provider %s url %s", o.Key, o.Currency, o.Provider, o.URL)
		}
		switch {
		case strings.HasPrefix(o.GPUName, "unmapped GCP") || strings.HasPrefix(o.GPUName, "unpriced GCP"):
			// The SKU's own price, never ranked.
			if o.RentUnit != "" || o.Card != "" {
				t.Errorf("%s: %q has rent unit %q card %q, want none", o.Key, o.GPUName, o.RentUnit, o.Card)
			}
		case strings.HasPrefix(o.OfferID, "n1+"):
			if o.RentUnit != pricewatch.RentPerGPU || o.GPUs != o.GPUCounts[len(o.GPUCounts)-1] {
				t.Errorf("%s: rent %q counts %v gpus %d, want per_gpu up to gpus", o.Key, o.RentUnit, o.GPUCounts, o.GPUs)
			}
		default:
			if o.RentUnit != pricewatch.RentFixed || !slices.Equal(o.GPUCounts, []int{o.GPUs}) {
				t.Errorf("%s: rent %q counts %v, want fixed [%d]", o.Key, o.RentUnit, o.GPUCounts, o.GPUs)
			}
		}
	}
	// GPUs attached to N1: per GPU, GPU SKU + an n1-standard-4 share.
	// T4 on demand: 0.35 + 4 × 0.031611 + 15 × 0.004237 = 0.539999;
	// spot (us-central1): 0.1654 + 4 × 0.00882 + 15 × 0.00113 = 0.21763.
	scrapertest.Price(t, nr, key("n1+nvidia-tesla-t4", "us-east1", pricewatch.ModeOnDemand), "T4", pricewatch.ModeOnDemand, 0.35+4*0.031611+15*0.004237)
	scrapertest.Rent(t, nr, key("n1+nvidia-tesla-t4", "us-east1", pricewatch.ModeOnDemand), pricewatch.RentPerGPU, 1, 2, 4)
	scrapertest.Price(t, nr, key("n1+nvidia-tesla-t4", "us-central1", pricewatch.ModeSpot), "T4", pricewatch.ModeSpot, 0.1654+4*0.00882+15*0.00113)
	scrapertest.Price(t, nr, key("n1+nvidia-tesla-v100", "us-west1", pricewatch.ModeOnDemand), "V100-16GB-SXM2", pricewatch.ModeOnDemand, 2.48+4*0.031611+15*0.004237)
	scrapertest.Rent(t, nr, key("n1+nvidia-tesla-v100", "us-west1", pricewatch.ModeOnDemand), pricewatch.RentPerGPU, 1, 2, 4, 8)
	// Every A3 High shape is priced from the same H100 SKU; the 1-, 2- and
	// 4-GPU types are not sold on demand, so they are kept unavailable.
	for _, m := range []string{"a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g"} {
		o, ok := keys[key(m, "us-central1", pricewatch.ModeOnDemand)]
		if !ok || o.Available != pricewatch.AvailableNo || o.Card != "H100-80GB-SXM" {
			t.Errorf("%s on demand: %+v, want an unavailable H100 offer", m, o)
		}
	}
	if o := keys[key("a3-highgpu-8g", "us-central1", pricewatch.ModeOnDemand)]; o.Available != pricewatch.AvailableUnknown {
		t.Errorf("a3-highgpu-8g on demand: available %q, want unknown", o.Available)
	}
	// A multi-regional SKU prices its machines in every service region that
	// has the components: A3 vCPU/RAM are built for us-central1 and
	// us-west1 only, Local SSD for us-central1 only.
	for k, want := range map[string]bool{
		key("a3-highgpu-8g", "us-central1", pricewatch.ModeOnDemand):        true,
		key("a3-edgegpu-8g-nolssd", "us-west1", pricewatch.ModeOnDemand):    true,
		key("a3-highgpu-8g", "us-west1", pricewatch.ModeOnDemand):           false, // no Local SSD SKU there
		key("a3-edgegpu-8g-nolssd", "us-east1", pricewatch.ModeOnDemand):    false, // no A3 SKUs there
		key("a2-highgpu-1g", "us-east1", pricewatch.ModeOnDemand):           true,
		key("a3-megagpu-8g", "us-east4", pricewatch.ModeOnDemand):           false, // no A3Plus SKUs
		key("n1+nvidia-tesla-p100", "us-central1", pricewatch.ModeOnDemand): true,  // no card: reported
	} {
		if _, ok := keys[k]; ok != want {
			t.Errorf("offer %s present = %v, want %v", k, ok, want)
		}
	}
	skus := map[string]bool{}
	for _, o := range res.Observations {
		skus[o.OfferID] = true
	}
	for sku, why := range map[string]string{
		"2013-37B4-22EA": "Reserved … in Americas (price 0)",
		"49C6-9328-AC0B": "DWS Defined Duration",
		"D5C5-C5F4-086C": "1/8 vGPU",
		"4197-CA3F-6919": "Reserved … in Calendar Mode",
		"97E4-7726-3B70": "DWS Defined Duration",
		"0008-F633-76AA": "no serviceRegions",
		"55CD-B842-ABA8": "no category (2025 shape)",
		"2922-40C5-B19F": "CPU SKU",
		"4756-01E4-0F32": "RAM SKU in IDR",
	} {
		if skus[sku] {
			t.Errorf("SKU %s (%s) must be skipped", sku, why)
		}
	}
	// Nothing dropped silently: every GPU SKU that priced no machine, and
	// every GPU without a card, is in the unknown report.
	unknown := unknownNames(nr)
	for name, n := range map[string]int{
		"Nvidia Tesla P100": 3, // n1+nvidia-tesla-p100 on demand in us-central1, us-east1, us-west1: no card
		// Components built only for some regions and modes:
		"unpriced GCP GPU SKU Nvidia H100 80GB (missing Local SSD)":                               2, // on demand us-west1, spot us-central1
		"unpriced GCP GPU SKU Nvidia H100 80GB (missing A3 core, A3 RAM, Local SSD)":              7, // us-east1, spot outside Iowa, 1-year, Virginia
		"unpriced GCP GPU SKU Nvidia H100 80GB Plus (missing A3Plus core, A3Plus RAM)":            1, // no A3Plus SKUs at all
		"unpriced GCP GPU SKU Nvidia H100 80GB Plus (missing A3Plus core, A3Plus RAM, Local SSD)": 2,
		"unpriced GCP GPU SKU Nvidia H100 80GB Mega (missing A3Plus core, A3Plus RAM, Local SSD)": 3,
		"unpriced GCP GPU SKU H200 141GB (missing A3Ultra core, A3Ultra RAM)":                     1,
		"unpriced GCP GPU SKU H200 141GB (missing A3Ultra core, A3Ultra RAM, Local SSD)":          5,
		"unpriced GCP GPU SKU Nvidia Tesla A100 (missing A2 core, A2 RAM)":                        2, // spot outside Iowa
		"unpriced GCP GPU SKU Nvidia Tesla A100 80GB (missing Local SSD)":                         6, // no spot or committed Local SSD
		"unpriced GCP GPU SKU Nvidia Tesla A100 80GB (missing A2 core, A2 RAM, Local SSD)":        2,
		"unpriced GCP GPU SKU Nvidia L4 (missing G2 core, G2 RAM)":                                2,
		"unpriced GCP GPU SKU Nvidia Tesla T4 (missing N1 Predefined core, N1 Predefined RAM)":    6, // no N1 commitments; spot outside Iowa
		"unpriced GCP GPU SKU Nvidia Tesla V100 (missing N1 Predefined core, N1 Predefined RAM)":  2,
		"unpriced GCP GPU SKU Nvidia Tesla P4 (missing N1 Predefined core, N1 Predefined RAM)":    1, // Virginia
	} {
		if got := unknown[name]; got != n {
			t.Errorf("unknown[%q] = %d, want %d", name, got, n)
		}
		delete(unknown, name)
	}
	if len(unknown) > 0 {
		t.Errorf("unexpected unknown names %v", unknown)
	}
}

// unknownNames is the unknown report without the memory normalize may add
// to a name (" (80 GB)").
func unknownNames(nr normalize.Result) map[string]int {
	out := map[string]int{}
	for name, n := range nr.Unknown {
		out[memorySuffix.ReplaceAllString(name, "")] += n
	}
	return out
}

var memorySuffix = regexp.MustCompile(` \([0-9]+(\.[0-9]+)? GB\)$`)

// The request carries the key, page size and currency, and follows
// nextPageToken to the end.
func TestScraper_FollowsPages(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []string
	)
	good := fixtures.Handler(fixtures.FS())
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/"+gcp.Name+skusPath {
			q := r.URL.Query()
			mu.Lock()
			seen = append(seen, fmt.Sprintf("key=%s size=%s cur=%s token=%s", q.Get("key"), q.Get("pageSize"), q.Get("currencyCode"), q.Get("pageToken")))
			mu.Unlock()
		}
		good.ServeHTTP(w, r)
	})
	res, err := run(t, h, "k-123", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "key=k-123 size=5000 cur=USD token=|key=k-123 size=5000 cur=USD token=2|key=k-123 size=5000 cur=USD token=3|" +
		"key=k-123 size=5000 cur=USD token=4|key=k-123 size=5000 cur=USD token=5"
	if got := strings.Join(seen, "|"); got != want {
		t.Errorf("requests\n%s\nwant\n%s", got, want)
	}
	if len(res.Observations) == 0 {
		t.Error("no observations")
	}
}

func TestScraper_Check(t *testing.T) {
	s := &gcp.Scraper{}
	env := &scrapers.Env{Name: gcp.Name, Getenv: func(string) string { return "" }}
	var d *scrapers.Disabled
	if err := s.Check(env); !errors.As(err, &d) ||
		d.Reason != "needs PRICEWATCH_GCP_API_KEY (a Google Cloud API key with the Cloud Billing API enabled)" {
		t.Errorf("Check without key = %v, want Disabled with the reason", err)
	}
	if _, err := s.Scrape(t.Context(), env); !errors.As(err, &d) {
		t.Errorf("Scrape without key = %v, want Disabled", err)
	}
	env.Getenv = func(name string) string {
		if name == gcp.APIKeyEnv {
			return " AIza-key "
		}
		return ""
	}
	if err := s.Check(env); err != nil {
		t.Errorf("Check with key = %v", err)
	}
}

const secretKey = "AIzaSyD-very_secret~key"

func checkRedacted(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	for _, v := range []string{secretKey, "AIzaSyD-very_secret%7Ekey", "very_secret"} {
		if strings.Contains(err.Error(), v) {
			t.Fatalf("error leaks the key: %v", err)
		}
	}
}

func TestScraper_InvalidKey(t *testing.T) {
	body := fixtureBody(t, "error-api-key-invalid.json")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(body)
	})
	_, err := run(t, h, secretKey, nil)
	checkRedacted(t, err)
	if !strings.Contains(err.Error(), "API key in PRICEWATCH_GCP_API_KEY is invalid") || !strings.Contains(err.Error(), "HTTP 400") {
		t.Errorf("err = %v, want it to say the key is invalid", err)
	}
}

func TestScraper_KeyNeverInErrors(t *testing.T) {
	t.Run("StatusEchoesURL", func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "bad request for "+r.URL.String(), http.StatusInternalServerError)
		})
		_, err := run(t, h, secretKey, nil)
		checkRedacted(t, err)
		if !strings.Contains(err.Error(), "HTTP 500") || !strings.Contains(err.Error(), "key=REDACTED") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("Timeout", func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(w, r)
				return
			}
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
		})
		_, err := run(t, h, secretKey, func(env *scrapers.Env) { env.Settings.Timeout = 100 * time.Millisecond })
		checkRedacted(t, err)
		if !strings.Contains(err.Error(), "timed out") {
			t.Errorf("err = %v, want a timeout", err)
		}
	})
	t.Run("ConnectionRefused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		env := scrapertest.Env(t, gcp.Name, srv.URL)
		env.Getenv = func(string) string { return secretKey }
		env.Settings.Retries = -1
		_, err := (&gcp.Scraper{}).Scrape(t.Context(), env)
		checkRedacted(t, err)
	})
}

func TestScrape_BadAnswers(t *testing.T) {
	page := func(skus, next string) string {
		s := `{"skus":[` + skus + `]`
		if next != "" {
			s += `,"nextPageToken":"` + next + `"`
		}
		return s + "}"
	}
	ram := `{"skuId":"2390-DCAF-DA38","description":"A2 Instance Ram running in Americas","category":{"resourceGroup":"RAM","usageType":"OnDemand"},"serviceRegions":["us-central1"],"pricingInfo":[{"pricingExpression":{"usageUnit":"GiBy.h","tieredRates":[{"startUsageAmount":0,"unitPrice":{"currencyCode":"USD","units":"0","nanos":4237000}}]}}]}`
	t4 := `{"skuId":"88B8-C3ED-03F0","description":"Nvidia Tesla T4 GPU running in Americas","category":{"resourceGroup":"GPU","usageType":"OnDemand"},"serviceRegions":["us-central1"],"pricingInfo":[{"pricingExpression":{"usageUnit":"h","tieredRates":[{"startUsageAmount":0,"unitPrice":{"currencyCode":"USD","units":"0","nanos":350000000}}]}}]}`
	for _, c := range []struct {
		name  string
		pages map[string]string // pageToken → body
		want  string
	}{
		{"HTML", map[string]string{"": `<!doctype html><html><body>Sorry...</body></html>`}, "expected JSON, got markup"},
		{"Truncated", map[string]string{"": page(t4, "")[:90]}, "decode JSON"},
		{"EmptyObject", map[string]string{"": `{}`}, "no offers parsed"},
		{"RenamedSkus", map[string]string{"": `{"items":[` + t4 + `]}`}, "no skus in the response"},
		{"EmptyList", map[string]string{"": page("", "")}, "0 SKUs read"},
		{"OnlyNonGPU", map[string]string{"": page(ram, "")}, "1 SKUs read, none a priced GPU SKU"},
		{"ZeroPrice", map[string]string{"": page(strings.Replace(t4, "350000000", "0", 1), "")}, "no offers parsed"},
		{"NoRegion", map[string]string{"": page(strings.Replace(t4, `"serviceRegions":["us-central1"],`, "", 1), "")}, "1 GPU SKUs without serviceRegions"},
		{"Page2Truncated", map[string]string{"": page(t4, "2"), "2": page(t4, "")[:40]}, "page 2: decode JSON"},
		{"Page2Missing", map[string]string{"": page(t4, "2")}, "page 2: HTTP 404"},
		{"TokenLoop", map[string]string{"": page(t4, "2"), "2": page(t4, "2")}, "nextPageToken repeats"},
		{"APIErrorIn200", map[string]string{"": `{"error":{"code":403,"message":"Billing API disabled","status":"PERMISSION_DENIED","details":[{"reason":"SERVICE_DISABLED"}]}}`}, "API error 403 SERVICE_DISABLED"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, ok := c.pages[r.URL.Query().Get("pageToken")]
				if !ok {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(b))
			})
			_, err := run(t, h, secretKey, nil)
			checkRedacted(t, err)
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestScraper_MaxPages(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := r.URL.Query().Get("pageToken")
		fmt.Fprintf(w, `{"skus":[],"nextPageToken":"%sx"}`, n)
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	env := scrapertest.Env(t, gcp.Name, srv.URL)
	_, err := (&gcp.Scraper{MaxPages: 3}).Scrape(t.Context(), env)
	if err == nil || !strings.Contains(err.Error(), "more than 3 pages") {
		t.Errorf("err = %v, want the page cap", err)
	}
}

func TestParseDescription(t *testing.T) {
	for _, c := range []struct {
		desc, gpu, vms string
		mem            float64
		years          int
		spot, slice    bool
		ok             bool
	}{
		{"Nvidia Tesla A100 GPU running in Americas", "Nvidia Tesla A100", "", 0, 0, false, false, true},
		{"Nvidia H100 80GB Plus GPU running in Americas", "Nvidia H100 80GB Plus", "", 80, 0, false, false, true},
		{"H200 141GB GPU running in Americas", "H200 141GB", "", 141, 0, false, false, true},
		{"Nvidia Tesla T4 GPU attached to Spot Preemptible VMs running in Americas", "Nvidia Tesla T4", "Spot Preemptible", 0, 0, true, false, true},
		{"Nvidia Tesla T4 GPU attached to DWS Defined Duration VMs running in Americas", "Nvidia Tesla T4", "DWS Defined Duration", 0, 0, false, false, true},
		{"Commitment v1: Nvidia H100 80GB GPU running in Americas for 1 Year", "Nvidia H100 80GB", "", 80, 1, false, false, true},
		{"Commitment v1: Nvidia Tesla T4 GPU running in Virginia for 3 Year", "Nvidia Tesla T4", "", 0, 3, false, false, true},
		{"Commitment v1: Nvidia L4 GPU running in Americas for 3 Years", "Nvidia L4", "", 0, 3, false, false, true},
		{"Nvidia L4 GPU running in Hong Kong", "Nvidia L4", "", 0, 0, false, false, true},
		// G4: the GPU SKU says no "GPU" (gpuhunt).
		{"RTX 6000 96GB running in Oregon", "RTX 6000 96GB", "", 96, 0, false, false, true},
		{"RTX 6000 96GB attached to Spot Preemptible VMs running in Belgium", "RTX 6000 96GB", "Spot Preemptible", 96, 0, true, false, true},
		// A4: one GPU's slice of the machine (gpuhunt, SkyPilot).
		{"A4 Nvidia B200 (1 gpu slice) running in Americas", "A4 Nvidia B200 (1 gpu slice)", "", 0, 0, false, true, true},
		{"Spot Preemptible A4 Nvidia B200 (1 gpu slice) running in Americas", "A4 Nvidia B200 (1 gpu slice)", "", 0, 0, true, true, true},
		{"Commitment v1: A4 Nvidia B200 (1 gpu slice) in Americas for 1 Year", "A4 Nvidia B200 (1 gpu slice)", "", 0, 1, false, true, true},
		{"DWS Calendar Mode A4 Nvidia B200 (1 gpu slice) running in Americas", "", "", 0, 0, false, false, false},
		{"Reserved Nvidia Tesla A100 GPU in Americas", "", "", 0, 0, false, false, false},
		{"Reserved Nvidia H100 80GB GPU in Virginia in Calendar Mode", "", "", 0, 0, false, false, false},
		{"1/8 vGPU no lssd running in Iowa", "", "", 0, 0, false, false, false},
		{"A2 Instance Core running in Americas", "", "", 0, 0, false, false, false},
		{"Licensing Fee for Ubuntu Pro 22.04 LTS (Jammy Jellyfish) on VM with up to 1 GPU (GPU cost)", "", "", 0, 0, false, false, false},
		{"Nvidia Tesla T4 Virtual Workstation GPU running in Americas", "", "", 0, 0, false, false, false},
	} {
		d, ok := gcp.ParseDescription(c.desc)
		if ok != c.ok || d.GPU != c.gpu || d.VMs != c.vms || d.MemoryGB != c.mem || d.TermYears != c.years || d.Spot != c.spot || d.Slice != c.slice {
			t.Errorf("ParseDescription(%q) = %+v, %v", c.desc, d, ok)
		}
	}
}

// skuJSON is one catalog SKU with a single hourly (or other unit) tier.
func skuJSON(id, desc, group, usage, unit string, price float64, regions ...string) string {
	units := int64(price)
	nanos := int64(math.Round((price - float64(units)) * 1e9))
	r := `"` + strings.Join(regions, `","`) + `"`
	if len(regions) == 0 {
		r = ""
	}
	return fmt.Sprintf(`{"skuId":%q,"description":%q,"category":{"resourceFamily":"Compute","resourceGroup":%q,"usageType":%q},"serviceRegions":[%s],`+
		`"pricingInfo":[{"pricingExpression":{"usageUnit":%q,"tieredRates":[{"startUsageAmount":0,"unitPrice":{"currencyCode":"USD","units":"%d","nanos":%d}}]}}]}`,
		id, desc, group, usage, r, unit, units, nanos)
}

func page(skus ...string) []byte { return []byte(`{"skus":[` + strings.Join(skus, ",") + `]}`) }

func build(t *testing.T, skus ...string) []pricewatch.Observation {
	t.Helper()
	p, err := gcp.Parse(page(skus...))
	if err != nil {
		t.Fatal(err)
	}
	return gcp.Build(p.Rates)
}

func find(t *testing.T, obs []pricewatch.Observation, offer string, mode pricewatch.Mode) pricewatch.Observation {
	t.Helper()
	for _, o := range obs {
		if o.OfferID == offer && o.Mode == mode {
			return o
		}
	}
	t.Fatalf("no observation %s %s in %+v", offer, mode, obs)
	return pricewatch.Observation{}
}

// The shapes no real or documented SKU price was found for (A4 B200, A4X
// GB200, G4 RTX PRO 6000), priced from test SKUs by the same rules.
func TestBuild_SlicesAndG4(t *testing.T) {
	obs := build(t,
		// A4: 8 × the slice; the slice holds the vCPUs, memory and SSD.
		skuJSON("S1", "Spot Preemptible A4 Nvidia B200 (1 gpu slice) running in Americas", "GPU", "Preemptible", "h", 4.5, "us-central1"),
		skuJSON("S2", "A4 Nvidia B200 (1 gpu slice) running in Americas", "GPU", "OnDemand", "h", 16, "us-central1"),
		skuJSON("S3", "Commitment v1: A4 Nvidia B200 (1 gpu slice) in Americas for 3 Years", "GPU", "Commit3Yr", "h", 8, "us-central1"),
		// A4X: 4 × the slice.
		skuJSON("S4", "A4X Nvidia GB200 (1 gpu slice) attached to Spot Preemptible VMs running in Americas", "GPU", "Preemptible", "h", 5, "us-central1"),
		// A4X Max: no machine type in the table.
		skuJSON("S5", "A4X Max Nvidia GB300 (1 gpu slice) running in Americas", "GPU", "OnDemand", "h", 20, "us-central1"),
		// G4: GPU + G4 vCPU + G4 RAM.
		skuJSON("G", "RTX 6000 96GB running in Americas", "GPU", "OnDemand", "h", 4, "us-central1"),
		skuJSON("GC", "G4 Instance Core running in Americas", "CPU", "OnDemand", "h", 0.02, "us-central1"),
		skuJSON("GR", "G4 Instance Ram running in Americas", "RAM", "OnDemand", "GiBy.h", 0.003, "us-central1"),
	)
	for _, c := range []struct {
		offer, card string
		mode        pricewatch.Mode
		price       float64
		gpus        int
		available   pricewatch.Availability
	}{
		{"a4-highgpu-8g", "B200-180GB-SXM", pricewatch.ModeSpot, 8 * 4.5, 8, ""},
		{"a4-highgpu-8g", "B200-180GB-SXM", pricewatch.ModeOnDemand, 8 * 16, 8, pricewatch.AvailableNo}, // A4 is not sold on demand
		{"a4-highgpu-8g", "B200-180GB-SXM", pricewatch.ModeReserved3Y, 8 * 8, 8, ""},
		{"a4x-highgpu-4g", "B200-186GB-GB200", pricewatch.ModeSpot, 4 * 5, 4, ""},
		{"g4-standard-48", "RTX-PRO-6000-SERVER", pricewatch.ModeOnDemand, 4 + 48*0.02 + 180*0.003, 1, ""},
		{"g4-standard-384", "RTX-PRO-6000-SERVER", pricewatch.ModeOnDemand, 8*4 + 384*0.02 + 1440*0.003, 8, ""},
	} {
		o := find(t, obs, c.offer, c.mode)
		if math.Abs(o.Price-c.price) > 1e-9 || o.GPUName != c.card || o.GPUCount != c.gpus || o.PerGPU ||
			o.RentUnit != pricewatch.RentFixed || o.Available != c.available {
			t.Errorf("%s %s: %+v, want %s %d GPUs at %v available %q", c.offer, c.mode, o, c.card, c.gpus, c.price, c.available)
		}
	}
	if o := find(t, obs, "S5", pricewatch.ModeOnDemand); o.GPUName != "unmapped GCP GPU SKU A4X Max Nvidia GB300 (1 gpu slice)" || o.RentUnit != "" || o.Price != 20 {
		t.Errorf("A4X Max: %+v, want it kept as unmapped", o)
	}
}

// A machine type is priced only from components of its GPU SKU's region,
// mode and currency; what is missing is named.
func TestBuild_Unpriced(t *testing.T) {
	a100 := skuJSON("A", "Nvidia Tesla A100 GPU running in Americas", "GPU", "OnDemand", "h", 3, "us-central1", "us-east1")
	core := skuJSON("C", "A2 Instance Core running in Americas", "CPU", "OnDemand", "h", 0.03, "us-central1")
	ram := skuJSON("R", "A2 Instance Ram running in Americas", "RAM", "OnDemand", "GiBy.h", 0.004, "us-central1")
	spotRAM := skuJSON("SR", "Spot Preemptible A2 Instance Ram running in Americas", "RAM", "Preemptible", "GiBy.h", 0.001, "us-east1")
	obs := build(t, a100, core, ram, spotRAM)
	o := find(t, obs, "a2-megagpu-16g", pricewatch.ModeOnDemand)
	if o.Region != "us-central1" || math.Abs(o.Price-(16*3+96*0.03+1360*0.004)) > 1e-9 {
		t.Errorf("a2-megagpu-16g: %+v", o)
	}
	u := find(t, obs, "A", pricewatch.ModeOnDemand)
	if u.Region != "us-east1" || u.GPUName != "unpriced GCP GPU SKU Nvidia Tesla A100 (missing A2 core, A2 RAM)" || u.Price != 3 || u.RentUnit != "" {
		t.Errorf("A100 in us-east1: %+v, want it unpriced at its own price", u)
	}
	var n int
	for _, o := range obs {
		if strings.HasPrefix(o.OfferID, "a2-") {
			n++
		}
	}
	if n != 5 { // a2-highgpu-1g/2g/4g/8g, a2-megagpu-16g in us-central1
		t.Errorf("%d A2 offers, want 5: %+v", n, obs)
	}
	// A component in another currency is missing, not converted.
	idr := strings.Replace(core, `"currencyCode":"USD"`, `"currencyCode":"IDR"`, 1)
	obs = build(t, a100, idr, ram)
	if o := find(t, obs, "A", pricewatch.ModeOnDemand); !strings.Contains(o.GPUName, "missing A2 core") {
		t.Errorf("IDR core: %+v", o)
	}
}

// GPUs attached to N1 are priced per GPU with an n1-standard-4 share, in the
// counts an N1 VM may take.
func TestBuild_N1(t *testing.T) {
	obs := build(t,
		skuJSON("T", "Nvidia Tesla T4 GPU running in Americas", "GPU", "OnDemand", "h", 0.35, "us-central1"),
		skuJSON("C", "N1 Predefined Instance Core running in Americas", "N1Standard", "OnDemand", "h", 0.031611, "us-central1"),
		skuJSON("R", "N1 Predefined Instance Ram running in Americas", "N1Standard", "OnDemand", "GiBy.h", 0.004237, "us-central1"),
		skuJSON("K", "Nvidia Tesla K80 GPU running in Americas", "GPU", "OnDemand", "h", 0.45, "us-central1"),
	)
	o := find(t, obs, "n1+nvidia-tesla-t4", pricewatch.ModeOnDemand)
	if !o.PerGPU || o.RentUnit != pricewatch.RentPerGPU || !slices.Equal(o.GPUCounts, []int{1, 2, 4}) || o.GPUCount != 4 ||
		math.Abs(o.Price-(0.35+4*0.031611+15*0.004237)) > 1e-12 || o.GPUName != "T4" {
		t.Errorf("T4: %+v", o)
	}
	if k := find(t, obs, "K", pricewatch.ModeOnDemand); k.GPUName != "unmapped GCP GPU SKU Nvidia Tesla K80" {
		t.Errorf("K80: %+v, want it unmapped", k)
	}
}

// Usage type and description must agree; prices are the current pricing
// info's first tier in the resource's unit.
func TestParse_Rules(t *testing.T) {
	sku := func(desc, usage, unit, tiers, extra string) string {
		return `{"skus":[{"skuId":"X","description":"` + desc + `","category":{"resourceGroup":"GPU","usageType":"` + usage + `"}` + extra +
			`,"pricingInfo":[{"pricingExpression":{"usageUnit":"h","tieredRates":[{"startUsageAmount":0,"unitPrice":{"currencyCode":"USD","units":"9","nanos":0}}]}},` +
			`{"pricingExpression":{"usageUnit":"` + unit + `","tieredRates":[` + tiers + `]}}]}]}`
	}
	tier := func(start float64, units string, nanos int64) string {
		return fmt.Sprintf(`{"startUsageAmount":%g,"unitPrice":{"currencyCode":"USD","units":%s,"nanos":%d}}`, start, units, nanos)
	}
	regions := `,"serviceRegions":["us-central1","us-central1","europe-west4"]`
	const h100 = "Nvidia H100 80GB GPU running in Americas"
	for _, c := range []struct {
		name  string
		body  string
		price float64 // 0: no rate
		n     int
		mode  pricewatch.Mode
	}{
		{"LastPricingInfo", sku(h100, "OnDemand", "h", tier(0, `"2"`, 500000000), regions), 2.5, 2, pricewatch.ModeOnDemand},
		{"UnitsAsNumber", sku(h100, "OnDemand", "h", tier(0, `3`, 0), regions), 3, 2, pricewatch.ModeOnDemand},
		{"LastTierAtZero", sku(h100, "OnDemand", "h", tier(0, `"0"`, 0)+","+tier(0, `"1"`, 0)+","+tier(100, `"0"`, 900000000), regions), 1, 2, pricewatch.ModeOnDemand},
		{"NoTierAtZero", sku(h100, "OnDemand", "h", tier(720, `"1"`, 0), regions), 0, 0, ""},
		{"NotHourly", sku(h100, "OnDemand", "mo", tier(0, `"700"`, 0), regions), 0, 0, ""},
		{"MixedSign", sku(h100, "OnDemand", "h", tier(0, `"1"`, -5), regions), 0, 0, ""},
		{"Negative", sku(h100, "OnDemand", "h", tier(0, `"-1"`, 0), regions), 0, 0, ""},
		{"GeoTaxonomy", sku(h100, "OnDemand", "h", tier(0, `"2"`, 0), `,"geoTaxonomy":{"type":"REGIONAL","regions":["us-east4"]}`), 2, 1, pricewatch.ModeOnDemand},
		{"Spot", sku("Nvidia H100 80GB GPU attached to Spot Preemptible VMs running in Americas", "Preemptible", "h", tier(0, `"2"`, 0), regions), 2, 2, pricewatch.ModeSpot},
		// A Spot description under the OnDemand usage type is a spot price
		// (independent parsers report Google tags some Spot SKUs OnDemand).
		{"SpotTextOnDemandUsage", sku("Nvidia H100 80GB GPU attached to Spot Preemptible VMs running in Americas", "OnDemand", "h", tier(0, `"2"`, 0), regions), 2, 2, pricewatch.ModeSpot},
		{"PreemptibleUsagePlainText", sku(h100, "Preemptible", "h", tier(0, `"2"`, 0), regions), 0, 0, ""},
		{"DWS", sku("Nvidia H100 80GB GPU attached to DWS Defined Duration VMs running in Americas", "OnDemand", "h", tier(0, `"2"`, 0), regions), 0, 0, ""},
		{"Commit3", sku("Commitment v1: Nvidia H100 80GB GPU running in Americas for 3 Years", "Commit3Yr", "h", tier(0, `"4"`, 0), regions), 4, 2, pricewatch.ModeReserved3Y},
		{"CommitTermMismatch", sku("Commitment v1: Nvidia H100 80GB GPU running in Americas for 3 Years", "Commit1Yr", "h", tier(0, `"4"`, 0), regions), 0, 0, ""},
		{"CommitWithoutTerm", sku(h100, "Commit1Yr", "h", tier(0, `"4"`, 0), regions), 0, 0, ""},
		{"CommitTextOnDemand", sku("Commitment v1: Nvidia H100 80GB GPU running in Americas for 1 Year", "OnDemand", "h", tier(0, `"4"`, 0), regions), 0, 0, ""},
		{"UnknownUsage", sku(h100, "Commit1Mo", "h", tier(0, `"4"`, 0), regions), 0, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := gcp.Parse([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Rates) != c.n {
				t.Fatalf("%d rates %+v, want %d", len(p.Rates), p.Rates, c.n)
			}
			for _, r := range p.Rates {
				if math.Abs(r.Price-c.price) > 1e-12 || r.Mode != c.mode || r.Resource != gcp.ResourceGPU || r.Name != "Nvidia H100 80GB" {
					t.Errorf("%+v, want %v %s per GPU-hour", r, c.price, c.mode)
				}
			}
		})
	}
}

// vCPU, RAM and Local SSD SKUs: the series from the description, the unit
// of the resource, Local SSD per GiB-month ÷ 730.
func TestParse_Components(t *testing.T) {
	for _, c := range []struct {
		desc, group, usage, unit string
		price                    float64
		res                      gcp.Resource
		series                   string
		mode                     pricewatch.Mode
	}{
		{"A2 Instance Core running in Americas", "CPU", "OnDemand", "h", 0.031611, gcp.ResourceCore, "A2", pricewatch.ModeOnDemand},
		{"Spot Preemptible A3 Instance Ram running in Iowa", "RAM", "Preemptible", "GiBy.h", 0.0007, gcp.ResourceRAM, "A3", pricewatch.ModeSpot},
		{"N1 Predefined Instance Core running in Americas", "N1Standard", "OnDemand", "h", 0.031611, gcp.ResourceCore, "N1 Predefined", pricewatch.ModeOnDemand},
		{"A3Plus Instance Core running in Virginia", "CPU", "OnDemand", "h", 0.03, gcp.ResourceCore, "A3Plus", pricewatch.ModeOnDemand},
		{"Commitment v1: A2 Cpu in Americas for 1 Year", "CPU", "Commit1Yr", "h", 0.02, gcp.ResourceCore, "A2", pricewatch.ModeReserved1Y},
		{"Commitment v1: G2 Ram in Americas for 3 Years", "RAM", "Commit3Yr", "GiBy.h", 0.0013, gcp.ResourceRAM, "G2", pricewatch.ModeReserved3Y},
		{"SSD backed Local Storage", "LocalSSD", "OnDemand", "GiBy.mo", 0.08 / 730, gcp.ResourceLocalSSD, "", pricewatch.ModeOnDemand},
		{"SSD backed Local Storage attached to Spot Preemptible VMs", "LocalSSD", "Preemptible", "GiBy.mo", 0.04 / 730, gcp.ResourceLocalSSD, "", pricewatch.ModeSpot},
		{"A2 Instance Core running in Americas", "CPU", "OnDemand", "GiBy.h", 0, "", "", ""}, // wrong unit
		{"A2 Instance Ram running in Americas", "RAM", "OnDemand", "h", 0, "", "", ""},       // wrong unit
		{"E2 Custom Instance Core running in Americas", "CPU", "OnDemand", "h", 0, "", "", ""},
		{"Sole Tenancy Instance Ram running in Turin", "RAM", "OnDemand", "GiBy.h", 0, "", "", ""},
		{"Licensing Fee for CentOS 7 running on Instance Core", "CPU", "OnDemand", "h", 0, "", "", ""},
		{"Spot Preemptible A2 Instance Core running in Americas", "CPU", "OnDemand", "h", 0.01, gcp.ResourceCore, "A2", pricewatch.ModeSpot},
		{"A2 Instance Core running in Americas", "CPU", "Preemptible", "h", 0, "", "", ""},
	} {
		unitPrice := c.price
		if c.unit == "GiBy.mo" {
			unitPrice *= 730
		}
		if unitPrice == 0 {
			unitPrice = 0.5
		}
		p, err := gcp.Parse(page(skuJSON("X", c.desc, c.group, c.usage, c.unit, unitPrice, "us-central1")))
		if err != nil {
			t.Fatal(err)
		}
		if c.res == "" {
			if len(p.Rates) != 0 {
				t.Errorf("%q (%s): %+v, want no rate", c.desc, c.unit, p.Rates)
			}
			continue
		}
		if len(p.Rates) != 1 {
			t.Fatalf("%q: %+v", c.desc, p.Rates)
		}
		r := p.Rates[0]
		if r.Resource != c.res || r.Name != c.series || r.Mode != c.mode || math.Abs(r.Price-c.price) > 1e-12 {
			t.Errorf("%q: %+v, want %s %q %s %v", c.desc, r, c.res, c.series, c.mode, c.price)
		}
	}
}

// The machine table: every shape's card is a catalog card (the RTX PRO
// 6000 Server row is being added to cards.csv by another change), GPU
// counts follow the shapes, and the SKU names are unique to one pricing.
func TestMachines(t *testing.T) {
	cat := normalize.DefaultCatalog()
	ms := gcp.Machines()
	if len(ms) < 30 {
		t.Fatalf("%d machine types", len(ms))
	}
	byType := map[string]gcp.Machine{}
	for _, m := range ms {
		byType[m.Type] = m
		if m.Card == "" {
			continue
		}
		if _, ok := cat.Card(m.Card); !ok && m.Card != "RTX-PRO-6000-SERVER" {
			t.Errorf("%s: card %q is not in cards.csv", m.Type, m.Card)
		}
		if c, ok := cat.Card(m.Card); ok && math.Abs(c.MemoryGB-m.GPUMemoryGB) > 0.15*c.MemoryGB {
			t.Errorf("%s: %v GB per GPU, card %s has %v", m.Type, m.GPUMemoryGB, m.Card, c.MemoryGB)
		}
	}
	for typ, want := range map[string]struct {
		gpus           int
		vcpus, mem, ss float64
		pricing        gcp.Pricing
	}{
		"a2-highgpu-1g":        {1, 12, 85, 0, gcp.PricingParts},
		"a2-megagpu-16g":       {16, 96, 1360, 0, gcp.PricingParts},
		"a2-ultragpu-8g":       {8, 96, 1360, 3000, gcp.PricingParts},
		"a3-highgpu-1g":        {1, 26, 234, 750, gcp.PricingParts},
		"a3-highgpu-8g":        {8, 208, 1872, 6000, gcp.PricingParts},
		"a3-megagpu-8g":        {8, 208, 1872, 6000, gcp.PricingParts},
		"a3-ultragpu-8g":       {8, 224, 2952, 12000, gcp.PricingParts},
		"a4-highgpu-8g":        {8, 224, 3968, 12000, gcp.PricingSlice},
		"a4x-highgpu-4g":       {4, 140, 884, 12000, gcp.PricingSlice},
		"g2-standard-24":       {2, 24, 96, 0, gcp.PricingParts},
		"g2-standard-32":       {1, 32, 128, 0, gcp.PricingParts},
		"g2-standard-96":       {8, 96, 384, 0, gcp.PricingParts},
		"g4-standard-48":       {1, 48, 180, 0, gcp.PricingParts},
		"g4-standard-384":      {8, 384, 1440, 0, gcp.PricingParts},
		"n1+nvidia-tesla-v100": {8, 4, 15, 0, gcp.PricingPerGPU},
	} {
		m, ok := byType[typ]
		if !ok || m.GPUs != want.gpus || m.VCPUs != want.vcpus || m.MemoryGB != want.mem || m.LocalSSDGB != want.ss || m.Pricing != want.pricing {
			t.Errorf("%s: %+v, want %+v", typ, m, want)
		}
	}
	// On-demand A3 High below 8 GPUs, A3 Ultra, A4 and A4X are not sold.
	for typ, onDemand := range map[string]bool{"a3-highgpu-4g": false, "a3-highgpu-8g": true, "a3-ultragpu-8g": false,
		"a4-highgpu-8g": false, "a4x-highgpu-4g": false, "a2-highgpu-1g": true, "g2-standard-4": true} {
		if got := byType[typ].SoldIn(pricewatch.ModeOnDemand); got != onDemand {
			t.Errorf("%s sold on demand = %v, want %v", typ, got, onDemand)
		}
		if !byType[typ].SoldIn(pricewatch.ModeSpot) {
			t.Errorf("%s not sold as spot", typ)
		}
	}
	if got := gcp.MachinesFor("Nvidia  H100 80GB plus"); len(got) != 1 || got[0].Type != "a3-megagpu-8g" {
		t.Errorf("MachinesFor(H100 Plus) = %+v", got)
	}
	if got := gcp.MachinesFor("Nvidia Tesla K80"); got != nil {
		t.Errorf("MachinesFor(K80) = %+v, want none", got)
	}
	// The copies do not alias the table.
	ms[0].Sold[0] = "x"
	if gcp.Machines()[0].Sold[0] == "x" {
		t.Error("Machines returns the table's own slices")
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"skus-1.json", "skus-2.json", "skus-3.json", "skus-4.json", "skus-5.json", "error-api-key-invalid.json"} {
		f.Add(fixtureBody(f, name))
	}
	f.Add([]byte(`{"skus":[{"skuId":"X","description":"Nvidia L4 GPU running in Americas","category":{"resourceGroup":"GPU","usageType":"OnDemand"},"serviceRegions":["r"],"pricingInfo":[{"pricingExpression":{"usageUnit":"h","tieredRates":[{"startUsageAmount":0,"unitPrice":{"units":"9223372036854775807","nanos":999999999}}]}}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := gcp.Parse(body)
		if err != nil {
			return
		}
		for _, o := range gcp.Build(p.Rates) {
			if !(o.Price > 0) || math.IsInf(o.Price, 0) || o.Region == "" || o.OfferID == "" || o.GPUName == "" || o.GPUCount <= 0 {
				t.Fatalf("bad observation accepted: %+v", o)
			}
		}
	})
}

// What comes with the GPUs, from machines.csv (vCPUs, GiB of memory, GiB
// of bundled Local SSD): a2-highgpu-1g 12 vCPUs, 85 GiB; a3-highgpu-8g
// 208, 1872 and 6000 GiB SSD; a2-ultragpu-1g 12, 170 and 375 GiB SSD; the
// N1 share of a T4 is n1-standard-4 (4 vCPUs, 15 GiB) per GPU, and the
// offer of up to 4 T4s states 16 vCPUs and 60 GiB. Every offer links the
// console page where the VM is created.
func TestScraper_MachineDetails(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, gcp.Name)
	nr, _ := scrapertest.Normalize(gcp.Name, res)
	od := pricewatch.ModeOnDemand
	for _, c := range []struct {
		key             string
		vcpus, ram, ssd float64
	}{
		{key("a2-highgpu-1g", "us-central1", od), 12, 85, 0},
		{key("a3-highgpu-8g", "us-central1", od), 208, 1872, 6000},
		{key("a2-ultragpu-1g", "us-central1", od), 12, 170, 375},
		{key("n1+nvidia-tesla-t4", "us-east1", od), 16, 60, 0},
	} {
		o := scrapertest.Find(t, nr, c.key)
		if o.VCPUs != c.vcpus || o.RAMGB != c.ram || o.DiskGB != c.ssd || o.RentURL != gcp.RentURL {
			t.Errorf("%s: %v vCPUs, %v GiB, %v GiB SSD, rent %q; want %v, %v, %v", c.key, o.VCPUs, o.RAMGB, o.DiskGB, o.RentURL, c.vcpus, c.ram, c.ssd)
		}
	}
}
