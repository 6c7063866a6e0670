package gcp_test

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
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

func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, gcp.Name)
	nr, _ := scrapertest.CheckFixture(t, gcp.Name, res)
	// unitPrice.units + nanos/1e9 of each SKU, per GPU-hour as stated.
	for _, c := range []struct {
		sku, region, card string
		mode              pricewatch.Mode
		price             float64
	}{
		{"D4E2-451A-15B9", "us-central1", "H100-80GB-SXM", pricewatch.ModeOnDemand, 9.796550569}, // 9 + 796550569e-9
		{"7CFD-81D6-E49C", "us-east1", "H100-80GB-SXM", pricewatch.ModeOnDemand, 10.344275712},   // "H100 80GB Plus"
		{"302A-B1A1-06DD", "us-west1", "H100-80GB-SXM", pricewatch.ModeReserved1Y, 6.79880857},   // Commit1Yr
		{"039F-D0DA-4055", "us-west1", "A100-40GB-SXM", pricewatch.ModeOnDemand, 2.933908},       // "Nvidia Tesla A100"
		{"EDA0-3A70-3138", "us-central1", "A100-80GB-SXM", pricewatch.ModeOnDemand, 3.92808},     // "Nvidia Tesla A100 80GB"
		{"7F71-B589-3331", "us-central1", "A100-80GB-SXM", pricewatch.ModeReserved3Y, 3.09659},   // Commit3Yr
		{"455B-5067-C961", "us-central1", "H200-141GB-SXM", pricewatch.ModeOnDemand, 9.31174},    // "H200 141GB"
		{"1A25-07A3-AB6D", "us-east1", "T4", pricewatch.ModeSpot, 0.1654},                        // Preemptible
		{"88B8-C3ED-03F0", "us-east1", "T4", pricewatch.ModeOnDemand, 0.35},                      //
		{"75EB-68C0-259C", "us-east1", "T4", pricewatch.ModeReserved1Y, 0.22},                    //
		{"A88A-5A60-E821", "us-west1", "L4", pricewatch.ModeOnDemand, 0.560040239},               //
		{"60B2-2A10-9A50", "us-west1", "L4", pricewatch.ModeReserved3Y, 0.252018107},             //
		{"DC0B-9926-40C5", "us-central1", "V100-16GB-SXM2", pricewatch.ModeOnDemand, 2.48},       //
		{"466C-1797-4CE1", "us-east4", "H100-80GB-SXM", pricewatch.ModeOnDemand, 10.34428},       // "H100 80GB Mega", 2025
		{"46CF-72FB-88FD", "us-east4", "H100-80GB-SXM", pricewatch.ModeSpot, 1.8619},             //
		{"CF2B-5A58-0C9B", "us-east4", "H100-80GB-SXM", pricewatch.ModeReserved3Y, 4.498984},     //
		{"0B85-B65B-0812", "us-east4", "H100-80GB-SXM", pricewatch.ModeOnDemand, 9.796551},       //
		{"BF7B-A0B2-0105", "us-east4", "T4", pricewatch.ModeReserved3Y, 0.17},                    // "for 3 Year"
	} {
		key := pricewatch.OfferKey(gcp.Name, c.sku, c.region, c.mode)
		scrapertest.Price(t, nr, key, c.card, c.mode, c.price)
	}
	keys := map[string]bool{}
	skus := map[string]bool{}
	for _, o := range nr.Offers {
		keys[o.Key] = true
		skus[o.OfferID] = true
		if o.Currency != "USD" || o.Provider != "gcp" || strings.Contains(o.URL, "secret") {
			t.Errorf("%s: currency %s provider %s url %s", o.Key, o.Currency, o.Provider, o.URL)
		}
		// Per GPU in the counts a VM may have; GPUs is the largest.
		if o.RentUnit != pricewatch.RentPerGPU || len(o.GPUCounts) == 0 || o.GPUs != o.GPUCounts[len(o.GPUCounts)-1] {
			t.Errorf("%s: rent unit %q counts %v gpus %d, want per_gpu up to gpus", o.Key, o.RentUnit, o.GPUCounts, o.GPUs)
		}
	}
	for _, c := range []struct {
		sku, region string
		mode        pricewatch.Mode
		counts      []int
	}{
		{"88B8-C3ED-03F0", "us-east1", pricewatch.ModeOnDemand, []int{1, 2, 4}},         // T4 on N1
		{"1A25-07A3-AB6D", "us-east1", pricewatch.ModeSpot, []int{1, 2, 4}},             // T4 spot
		{"7929-334B-6348", "us-central1", pricewatch.ModeOnDemand, []int{1, 2, 4}},      // P100 (no card)
		{"DC0B-9926-40C5", "us-central1", pricewatch.ModeOnDemand, []int{1, 2, 4, 8}},   // V100 on N1
		{"039F-D0DA-4055", "us-west1", pricewatch.ModeOnDemand, []int{1, 2, 4, 8, 16}},  // A2 Standard
		{"7F71-B589-3331", "us-central1", pricewatch.ModeReserved3Y, []int{1, 2, 4, 8}}, // A2 Ultra
		{"A88A-5A60-E821", "us-west1", pricewatch.ModeOnDemand, []int{1, 2, 4, 8}},      // G2
		{"D4E2-451A-15B9", "us-central1", pricewatch.ModeOnDemand, []int{8}},            // A3 High on demand: 8 only
		{"302A-B1A1-06DD", "us-west1", pricewatch.ModeReserved1Y, []int{8}},             // A3 High committed: 8 only
		{"7CFD-81D6-E49C", "us-east1", pricewatch.ModeOnDemand, []int{8}},               // A3 Mega ("Plus")
		{"46CF-72FB-88FD", "us-east4", pricewatch.ModeSpot, []int{8}},                   // A3 Mega spot
		{"455B-5067-C961", "us-central1", pricewatch.ModeOnDemand, []int{8}},            // A3 Ultra (H200)
	} {
		scrapertest.Rent(t, nr, pricewatch.OfferKey(gcp.Name, c.sku, c.region, c.mode), pricewatch.RentPerGPU, c.counts...)
	}
	// A multi-regional SKU gives one offer per service region.
	for _, r := range []string{"us-central1", "us-east1", "us-west1"} {
		if !keys["gcp/D4E2-451A-15B9/"+r+"/ondemand"] {
			t.Errorf("H100 on-demand missing in %s", r)
		}
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
	if nr.Unknown["Nvidia Tesla P100"] != 3 || nr.Unknown["Nvidia Tesla P4"] != 4 || len(nr.Unknown) != 2 {
		t.Errorf("unknown = %v, want P100 ×3 and P4 ×4", nr.Unknown)
	}
}

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
	want := "key=k-123 size=5000 cur=USD token=|key=k-123 size=5000 cur=USD token=2|key=k-123 size=5000 cur=USD token=3"
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
		{"OnlyNonGPU", map[string]string{"": page(ram, "")}, "1 SKUs read, none a priced whole-GPU SKU"},
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
		ok             bool
	}{
		{"Nvidia Tesla A100 GPU running in Americas", "Nvidia Tesla A100", "", 0, 0, true},
		{"Nvidia H100 80GB Plus GPU running in Americas", "Nvidia H100 80GB Plus", "", 80, 0, true},
		{"H200 141GB GPU running in Americas", "H200 141GB", "", 141, 0, true},
		{"Nvidia Tesla T4 GPU attached to Spot Preemptible VMs running in Americas", "Nvidia Tesla T4", "Spot Preemptible", 0, 0, true},
		{"Nvidia Tesla T4 GPU attached to DWS Defined Duration VMs running in Americas", "Nvidia Tesla T4", "DWS Defined Duration", 0, 0, true},
		{"Commitment v1: Nvidia H100 80GB GPU running in Americas for 1 Year", "Nvidia H100 80GB", "", 80, 1, true},
		{"Commitment v1: Nvidia Tesla T4 GPU running in Virginia for 3 Year", "Nvidia Tesla T4", "", 0, 3, true},
		{"Commitment v1: Nvidia L4 GPU running in Americas for 3 Years", "Nvidia L4", "", 0, 3, true},
		{"Nvidia L4 GPU running in Hong Kong", "Nvidia L4", "", 0, 0, true},
		{"Reserved Nvidia Tesla A100 GPU in Americas", "", "", 0, 0, false},
		{"Reserved Nvidia H100 80GB GPU in Virginia in Calendar Mode", "", "", 0, 0, false},
		{"1/8 vGPU no lssd running in Iowa", "", "", 0, 0, false},
		{"A2 Instance Core running in Americas", "", "", 0, 0, false},
		{"Licensing Fee for Ubuntu Pro 22.04 LTS (Jammy Jellyfish) on VM with up to 1 GPU (GPU cost)", "", "", 0, 0, false},
		{"Nvidia Tesla T4 Virtual Workstation GPU running in Americas", "", "", 0, 0, false},
	} {
		d, ok := gcp.ParseDescription(c.desc)
		if ok != c.ok || d.GPU != c.gpu || d.VMs != c.vms || d.MemoryGB != c.mem || d.TermYears != c.years {
			t.Errorf("ParseDescription(%q) = %+v, %v", c.desc, d, ok)
		}
	}
}

// Price rules on single SKUs.
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
		price float64 // 0: no observation
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
		{"SpotTextOnDemandUsage", sku("Nvidia H100 80GB GPU attached to Spot Preemptible VMs running in Americas", "OnDemand", "h", tier(0, `"2"`, 0), regions), 0, 0, ""},
		{"PreemptibleUsagePlainText", sku(h100, "Preemptible", "h", tier(0, `"2"`, 0), regions), 2 * 0, 0, ""},
		{"Commit3", sku("Commitment v1: Nvidia H100 80GB GPU running in Americas for 3 Years", "Commit3Yr", "h", tier(0, `"4"`, 0), regions), 4, 2, pricewatch.ModeReserved3Y},
		{"CommitTermMismatch", sku("Commitment v1: Nvidia H100 80GB GPU running in Americas for 3 Years", "Commit1Yr", "h", tier(0, `"4"`, 0), regions), 0, 0, ""},
		{"CommitWithoutTerm", sku(h100, "Commit1Yr", "h", tier(0, `"4"`, 0), regions), 0, 0, ""},
		{"UnknownUsage", sku(h100, "Commit1Mo", "h", tier(0, `"4"`, 0), regions), 0, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := gcp.Parse([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Observations) != c.n {
				t.Fatalf("%d observations %+v, want %d", len(p.Observations), p.Observations, c.n)
			}
			for _, o := range p.Observations {
				if math.Abs(o.Price-c.price) > 1e-12 || o.Mode != c.mode || !o.PerGPU || o.Unit != pricewatch.PerHour {
					t.Errorf("%+v, want %v %s per GPU-hour", o, c.price, c.mode)
				}
			}
		})
	}
}

func TestAliases_Resolve(t *testing.T) {
	cat := normalize.DefaultCatalog()
	for name, want := range map[string]string{
		"Nvidia Tesla A100":      "A100-40GB-SXM",
		"Nvidia Tesla A100 80GB": "A100-80GB-SXM",
		"Nvidia H100 80GB":       "H100-80GB-SXM",
		"Nvidia H100 80GB Plus":  "H100-80GB-SXM",
		"Nvidia H100 80GB Mega":  "H100-80GB-SXM",
		"Nvidia H100 Mega 80GB":  "H100-80GB-SXM",
		"H200 141GB":             "H200-141GB-SXM",
		"Nvidia L4":              "L4",
		"Nvidia Tesla T4":        "T4",
		"Nvidia Tesla V100":      "V100-16GB-SXM2",
		"Nvidia Tesla P100":      "",
		"Nvidia Tesla P4":        "",
		"Nvidia Tesla K80":       "",
	} {
		if got, _ := cat.Resolve(gcp.Name, name, 0); got != want {
			t.Errorf("Resolve(gcp, %q) = %q, want %q", name, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"skus-1.json", "skus-2.json", "skus-3.json", "error-api-key-invalid.json"} {
		f.Add(fixtureBody(f, name))
	}
	f.Add([]byte(`{"skus":[{"skuId":"X","description":"Nvidia L4 GPU running in Americas","category":{"resourceGroup":"GPU","usageType":"OnDemand"},"serviceRegions":["r"],"pricingInfo":[{"pricingExpression":{"usageUnit":"h","tieredRates":[{"startUsageAmount":0,"unitPrice":{"units":"9223372036854775807","nanos":999999999}}]}}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := gcp.Parse(body)
		if err != nil {
			return
		}
		for _, o := range p.Observations {
			if !(o.Price > 0) || math.IsInf(o.Price, 0) || o.Region == "" || o.OfferID == "" || o.GPUName == "" {
				t.Fatalf("bad observation accepted: %+v", o)
			}
		}
	})
}

// A3 High's 1-, 2- and 4-GPU machine types are Spot (or Flex-start) only:
// the H100 80GB SKU's counts depend on the usage type. A GPU the table does
// not know has none.
func TestGPUCounts(t *testing.T) {
	for _, c := range []struct {
		gpu  string
		mode pricewatch.Mode
		want []int
	}{
		{"Nvidia H100 80GB", pricewatch.ModeSpot, []int{1, 2, 4, 8}},
		{"Nvidia H100 80GB", pricewatch.ModeOnDemand, []int{8}},
		{"Nvidia H100 80GB", pricewatch.ModeReserved3Y, []int{8}},
		{"Nvidia  Tesla  V100", pricewatch.ModeSpot, []int{1, 2, 4, 8}},
		{"H100 Mega 80GB", pricewatch.ModeOnDemand, []int{8}},
		{"Nvidia Tesla A100", pricewatch.ModeSpot, []int{1, 2, 4, 8, 16}},
		{"Nvidia RTX PRO 6000", pricewatch.ModeOnDemand, nil},
	} {
		got, ok := gcp.GPUCounts(c.gpu, c.mode)
		if !slices.Equal(got, c.want) || ok != (c.want != nil) {
			t.Errorf("GPUCounts(%q, %s) = %v, %v; want %v", c.gpu, c.mode, got, ok, c.want)
		}
	}
}
