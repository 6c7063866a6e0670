package awsspot_test

import (
	"errors"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/scrapers/awsspot"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// scrape runs the source against h, its advisor rebased onto the same
// server; path, if set, replaces the feed's path under the source's base
// (e.g. "/spot.js").
func scrape(t *testing.T, h http.Handler, path string, mutate func(*awsspot.Scraper)) (scrapers.Result, error) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	sc, env := scrapertest.Scraper(t, awsspot.Name, srv.URL)
	s := sc.(*awsspot.Scraper)
	if mutate != nil {
		mutate(s)
	}
	if path != "" {
		env.Settings.URL = fixtures.Base(srv.URL, awsspot.Name) + path
	}
	return s.Scrape(t.Context(), env)
}

func fixtureBody(t testing.TB, name string) []byte {
	t.Helper()
	b, err := fs.ReadFile(fixtures.FS(), "aws-spot/"+name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, awsspot.Name)
	nr, _ := scrapertest.CheckFixture(t, awsspot.Name, res)
	// Hand-computed from fixtures/aws-spot/spot.json (Linux column) divided
	// by the GPUs of the size; bands from spot-advisor-data.json
	// (us-east-1, Linux, r → ranges[r].label).
	for _, c := range []struct {
		typ, card string
		price     float64
		risk      string
	}{
		{"g5.xlarge", "A10G", 0.5089, ">20%"},                  // 0.5089 / 1, r 4
		{"g5.12xlarge", "A10G", 0.872925, ">20%"},              // 3.4917 / 4
		{"g5.48xlarge", "A10G", 1.13785, ">20%"},               // 9.1028 / 8
		{"p5.48xlarge", "H100-80GB-SXM", 2.4366625, ">20%"},    // 19.4933 / 8, r 4
		{"p5.4xlarge", "H100-80GB-SXM", 2.6295, ""},            // 2.6295 / 1, no advisor entry
		{"p4d.24xlarge", "A100-40GB-SXM", 1.7789125, "10-15%"}, // 14.2313 / 8, r 2
		{"p4de.24xlarge", "A100-80GB-SXM", 2.7282375, "<5%"},   // 21.8259 / 8 (listed twice), r 0
		{"p5en.48xlarge", "H200-141GB-SXM", 3.3843625, "<5%"},  // 27.0749 / 8, r 0
		{"p6-b200.48xlarge", "B200-180GB-SXM", 5.2816125, ""},  // 42.2529 / 8
		{"p6-b300.48xlarge", "B300-288GB-SXM", 5.5676, ""},     // 44.5408 / 8
		{"p3.2xlarge", "V100-16GB-SXM2", 0.5509, ">20%"},       // r 4
		{"p3.16xlarge", "V100-16GB-SXM2", 0.823225, ">20%"},    // 6.5858 / 8
		{"p3dn.24xlarge", "V100-32GB-SXM2", 0.64285, ">20%"},   // 5.1428 / 8
		{"g4dn.xlarge", "T4", 0.3196, "15-20%"},                // r 3
		{"g4dn.12xlarge", "T4", 0.388425, "10-15%"},            // 1.5537 / 4
		{"g4dn.metal", "T4", 0.5184375, ">20%"},                // 4.1475 / 8
		{"g6.12xlarge", "L4", 0.7115, ">20%"},                  // 2.846 / 4 (listed twice)
		{"g6.48xlarge", "L4", 0.596, ">20%"},                   // 4.768 / 8 (listed twice)
		{"gr6.4xlarge", "L4", 0.7354, ">20%"},                  // (listed twice)
		{"g6e.xlarge", "L40S", 1.6119, "5-10%"},                // r 1
		{"g6e.48xlarge", "L40S", 1.44635, ">20%"},              // 11.5708 / 8
	} {
		key := pricewatch.OfferKey(awsspot.Name, c.typ, "us-east-1", pricewatch.ModeSpot)
		scrapertest.Price(t, nr, key, c.card, pricewatch.ModeSpot, c.price)
		o := scrapertest.Find(t, nr, key)
		if o.ReclaimRisk != c.risk {
			t.Errorf("%s: reclaim risk %q, want %q", key, o.ReclaimRisk, c.risk)
		}
		if o.Provider != "aws" || o.Currency != "USD" || o.Region != "us-east-1" {
			t.Errorf("%s: provider %q currency %q region %q", key, o.Provider, o.Currency, o.Region)
		}
	}

	// De-duplication: g6.12xlarge, g6.16xlarge, g6.24xlarge, g6.48xlarge,
	// g6.8xlarge, gr6.4xlarge, gr6.8xlarge and p4de.24xlarge are listed
	// twice; each yields one observation.
	count := map[string]int{}
	for _, o := range res.Observations {
		count[o.OfferID]++
	}
	for typ, n := range count {
		if n != 1 {
			t.Errorf("%s: %d observations, want 1", typ, n)
		}
	}
	if len(res.Observations) != len(nr.Offers) {
		t.Errorf("%d observations but %d offers: the parser let a duplicate through", len(res.Observations), len(nr.Offers))
	}

	// Non-GPU accelerators are left out entirely.
	for typ := range count {
		if awsspot.NonGPU(typ) {
			t.Errorf("non-GPU accelerator %s kept", typ)
		}
	}
	// Every GPU size of the capture is in the table (T4G, the Radeon Pro
	// V520 and the RTX PRO 4500 of G7 map to cards of their own).
	if len(nr.Unknown) != 0 {
		t.Errorf("unknown report %v, want none", nr.Unknown)
	}
	// G7: RTX PRO 4500 Blackwell Server Edition, rented whole.
	scrapertest.Rent(t, nr, "aws-spot/g7.8xlarge/us-east-1/spot", pricewatch.RentFixed, 2)
	if o := scrapertest.Find(t, nr, "aws-spot/g7.2xlarge/us-east-1/spot"); o.Card != "RTX-PRO-4500-SERVER" {
		t.Errorf("g7.2xlarge: card %q", o.Card)
	}
	scrapertest.Rent(t, nr, "aws-spot/p5.48xlarge/us-east-1/spot", pricewatch.RentFixed, 8)
	scrapertest.Rent(t, nr, "aws-spot/g4ad.16xlarge/us-east-1/spot", pricewatch.RentFixed, 4)
	// Added for issue 9: fractions of an L4 (G6f, Gr6f), RTX PRO 6000
	// Server Edition (G7e).
	scrapertest.Rent(t, nr, "aws-spot/g6f.large/us-east-1/spot", pricewatch.RentFixed, 1)
	scrapertest.Rent(t, nr, "aws-spot/gr6f.4xlarge/us-east-1/spot", pricewatch.RentFixed, 1)
	scrapertest.Rent(t, nr, "aws-spot/g7e.48xlarge/us-east-1/spot", pricewatch.RentFixed, 8)
	if o := scrapertest.Find(t, nr, "aws-spot/g6f.2xlarge/us-east-1/spot"); o.Card != "L4" || !o.Shared || o.GPUFraction != 0.25 {
		t.Errorf("g6f.2xlarge: card %q shared %v fraction %v, want a quarter of an L4", o.Card, o.Shared, o.GPUFraction)
	}
	if o := scrapertest.Find(t, nr, "aws-spot/g7e.12xlarge/us-east-1/spot"); o.GPUs != 2 || o.GPUName != "RTX-PRO-6000-SERVER" {
		t.Errorf("g7e.12xlarge: %d × %s", o.GPUs, o.GPUName)
	}
	// g5g.xlarge: T4G, 1 GPU; g4ad.16xlarge: 4 Radeon Pro V520.
	if o := scrapertest.Find(t, nr, "aws-spot/g4ad.16xlarge/us-east-1/spot"); o.GPUs != 4 || math.Abs(o.PricePerGPUHour-0.35845) > 1e-9 {
		t.Errorf("g4ad.16xlarge: %d GPUs at %v, want 4 at 0.35845", o.GPUs, o.PricePerGPUHour)
	}
}

// The old feed: JSONP wrapper and legacy region names (us-east, us-west,
// eu-ireland, apac-syd) mapped to codes; "N/A*" skipped.
func TestParse_LegacyJSONP(t *testing.T) {
	obs, err := awsspot.Parse(fixtureBody(t, "spot.js"))
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]pricewatch.Observation{}
	regions := map[string]bool{}
	for _, o := range obs {
		by[o.Region+"/"+o.OfferID] = o
		regions[o.Region] = true
	}
	var got []string
	for r := range regions {
		got = append(got, r)
	}
	sort.Strings(got)
	if want := "ap-southeast-2 eu-west-1 us-east-1 us-east-2 us-west-1"; strings.Join(got, " ") != want {
		t.Errorf("regions %v, want %s", got, want)
	}
	for _, c := range []struct {
		key   string
		price float64
		gpu   string
		n     int
	}{
		{"us-east-1/p4d.24xlarge", 9.8318, "A100-40GB-SXM", 8},   // region "us-east"
		{"us-east-1/p3.16xlarge", 7.344, "V100-16GB-SXM2", 8},    // region "us-east"
		{"us-west-1/g4dn.xlarge", 0.2626, "T4", 1},               // region "us-west"
		{"eu-west-1/p3dn.24xlarge", 32.266, "V100-32GB-SXM2", 8}, // region "eu-ireland"
		{"ap-southeast-2/g4dn.12xlarge", 1.5261, "T4", 4},        // region "apac-syd"
		{"us-east-2/p2.16xlarge", 4.32, "Tesla K80", 16},         // a code already
		{"us-east-1/g3s.xlarge", 0.225, "Tesla M60", 1},
	} {
		o, ok := by[c.key]
		if !ok {
			t.Errorf("no observation %s", c.key)
			continue
		}
		if o.Price != c.price || o.GPUName != c.gpu || o.GPUCount != c.n || o.PerGPU || o.Mode != pricewatch.ModeSpot {
			t.Errorf("%s: %+v, want %v for %d × %s", c.key, o, c.price, c.n, c.gpu)
		}
	}
	for _, absent := range []string{
		"us-west-1/p3.2xlarge",        // N/A*
		"ap-southeast-2/p4d.24xlarge", // N/A*
		"us-east-1/f1.2xlarge",        // FPGA
		"us-east-1/inf1.xlarge",       // Inferentia
	} {
		if _, ok := by[absent]; ok {
			t.Errorf("%s must not be parsed", absent)
		}
	}
}

func TestScraper_JSONPWithAdvisor(t *testing.T) {
	res, err := scrape(t, fixtures.Handler(fixtures.FS()), "/spot.js", nil)
	if err != nil {
		t.Fatal(err)
	}
	risk := map[string]string{}
	for _, o := range res.Observations {
		risk[o.Region+"/"+o.OfferID] = o.ReclaimRisk
	}
	// Legacy names resolve to the codes the advisor is keyed by.
	for key, want := range map[string]string{
		"us-east-2/g4dn.xlarge":      "5-10%",  // r 1
		"us-west-1/g4dn.xlarge":      "5-10%",  // "us-west", r 1
		"eu-west-1/p4d.24xlarge":     ">20%",   // "eu-ireland", r 4
		"ap-southeast-2/g4dn.xlarge": "15-20%", // "apac-syd", r 3
		"us-east-1/p3.2xlarge":       ">20%",   // "us-east", r 4
	} {
		if got, ok := risk[key]; !ok || got != want {
			t.Errorf("%s: reclaim risk %q (present %v), want %q", key, got, ok, want)
		}
	}
}

func TestScraper_Regions(t *testing.T) {
	res, err := scrape(t, fixtures.Handler(fixtures.FS()), "/spot.js", func(s *awsspot.Scraper) {
		s.Regions = []string{"EU-West-1"}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range res.Observations {
		if o.Region != "eu-west-1" {
			t.Fatalf("region %s kept", o.Region)
		}
	}
	if len(res.Observations) == 0 {
		t.Fatal("nothing kept for eu-west-1")
	}
	_, err = scrape(t, fixtures.Handler(fixtures.FS()), "", func(s *awsspot.Scraper) { s.Regions = []string{"eu-west-1"} })
	if !errors.Is(err, scrapers.ErrNothingParsed) || !strings.Contains(err.Error(), "none of the regions eu-west-1") {
		t.Errorf("err = %v, want nothing parsed naming the region", err)
	}
}

// The advisor adds the band; when it fails the prices still come through.
func TestScraper_AdvisorFailureKeepsPrices(t *testing.T) {
	good := fixtures.Handler(fixtures.FS())
	for _, c := range []struct {
		name   string
		advice http.HandlerFunc
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) }},
		{"404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }},
		{"HTML", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>Access Denied</html>"))
		}},
		{"Renamed", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"bands":[],"advice":{}}`))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.Handle("/"+awsspot.Name+"/spot-advisor-data.json", c.advice)
			mux.Handle("/", good)
			res, err := scrape(t, mux, "", nil)
			if err != nil {
				t.Fatalf("the advisor's failure failed the run: %v", err)
			}
			if len(res.Observations) < 50 {
				t.Fatalf("only %d observations", len(res.Observations))
			}
			for _, o := range res.Observations {
				if o.ReclaimRisk != "" {
					t.Fatalf("%s: reclaim risk %q without an advisor", o.OfferID, o.ReclaimRisk)
				}
			}
		})
	}
	// No advisor configured: no request for it, prices as usual.
	res, err := scrape(t, good, "", func(s *awsspot.Scraper) { s.AdvisorURL = "" })
	if err != nil || len(res.Observations) == 0 {
		t.Fatalf("without advisor: %d observations, err %v", len(res.Observations), err)
	}
}

func TestScraper_FeedFailureNamesCause(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/"+awsspot.Name+"/spot.json", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "slow down", http.StatusForbidden)
	})
	_, err := scrape(t, mux, "", nil)
	if err == nil || !strings.Contains(err.Error(), "spot prices: HTTP 403") {
		t.Errorf("err = %v, want the feed's HTTP 403", err)
	}
}

func TestParse_Errors(t *testing.T) {
	size := func(typ, linux string) string {
		return `{"size":"` + typ + `","valueColumns":[{"name":"linux","prices":{"USD":"` + linux + `"}},{"name":"mswin","prices":{"USD":"9.9"}}]}`
	}
	region := func(name string, sizes ...string) string {
		return `{"region":"` + name + `","instanceTypes":[{"type":"gpuCurrentGen","sizes":[` + strings.Join(sizes, ",") + `]}]}`
	}
	feed := func(regions ...string) string {
		return `{"vers":0.01,"config":{"rate":"perhr","valueColumns":["linux","mswin"],"currencies":["USD"],"regions":[` + strings.Join(regions, ",") + `]}}`
	}
	for _, c := range []struct{ name, body, want string }{
		{"HTML", `<!doctype html><html><body>Access Denied</body></html>`, "expected JSON, got markup"},
		{"Empty", ``, "empty response body"},
		{"TruncatedJSON", feed(region("us-east-1", size("g5.xlarge", "0.5")))[:60], "decode JSON"},
		{"TruncatedJSONP", "callback(" + feed(region("us-east-1", size("g5.xlarge", "0.5")))[:80], "closing parenthesis"},
		{"EmptyObject", `{}`, "no offers parsed"},
		{"RenamedRegions", `{"config":{"regionList":[]}}`, "no config.regions"},
		{"NoRegions", feed(), "no config.regions"},
		{"OnlyNA", feed(region("us-east-1", size("g5.xlarge", "N/A*"), size("p5.48xlarge", "N/A*"))), "no Linux spot price"},
		{"OnlyNonGPU", feed(region("us-east-1", size("inf2.xlarge", "0.12"), size("trn1.2xlarge", "0.25"), size("vt1.3xlarge", "0.16"))), "no Linux spot price"},
		{"ZeroAndNegative", feed(region("us-east-1", size("g5.xlarge", "0"), size("g6.xlarge", "-1"), size("g4dn.xlarge", "NaN"))), "no Linux spot price"},
		{"UnknownLegacyRegion", feed(region("mars-north", size("g5.xlarge", "0.5"))), `unknown region names skipped: "mars-north"`},
		{"RenamedColumn", strings.ReplaceAll(feed(region("us-east-1", size("g5.xlarge", "0.5"))), `"linux"`, `"Linux/UNIX"`), "no Linux spot price"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := awsspot.Parse([]byte(c.body))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// An unknown legacy name is skipped quietly when other regions parse.
func TestParse_UnknownRegionSkipped(t *testing.T) {
	body := `callback({"config":{"regions":[
	 {"region":"mars-north","instanceTypes":[{"type":"gpuCurrentGen","sizes":[{"size":"g5.xlarge","valueColumns":[{"name":"linux","prices":{"USD":"0.4"}}]}]}]},
	 {"region":"apac-tokyo","instanceTypes":[{"type":"gpuCurrentGen","sizes":[{"size":"g5.xlarge","valueColumns":[{"name":"linux","prices":{"USD":"0.6"}}]}]}]}]}});`
	obs, err := awsspot.Parse([]byte(body))
	if err != nil || len(obs) != 1 || obs[0].Region != "ap-northeast-1" || obs[0].Price != 0.6 {
		t.Fatalf("obs %+v err %v, want one ap-northeast-1 at 0.6", obs, err)
	}
}

func TestRegionCode(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"us-east", "us-east-1", true},
		{"us-west", "us-west-1", true},
		{"us-west-2", "us-west-2", true},
		{"eu-ireland", "eu-west-1", true},
		{"apac-sin", "ap-southeast-1", true},
		{"apac-syd", "ap-southeast-2", true},
		{"apac-tokyo", "ap-northeast-1", true},
		{"sa-east-1", "sa-east-1", true},
		{"us-gov-west-1", "us-gov-west-1", true},
		{"us-east-1-iah-1", "us-east-1-iah-1", true},
		{"mars-north", "", false},
		{"", "", false},
	} {
		got, ok := awsspot.RegionCode(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("RegionCode(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, c := range []struct {
		typ  string
		name string
		n    int
	}{
		{"p5.48xlarge", "H100-80GB-SXM", 8},
		{"p5.4xlarge", "H100-80GB-SXM", 1},
		{"p4d.24xlarge", "A100-40GB-SXM", 8},
		{"p4de.24xlarge", "A100-80GB-SXM", 8},
		{"p5e.48xlarge", "H200-141GB-SXM", 8},
		{"p3dn.24xlarge", "V100-32GB-SXM2", 8},
		{"g5.12xlarge", "A10G", 4},
		{"g6e.xlarge", "L40S", 1},
		{"g4dn.metal", "T4", 8},
		{"g5g.16xlarge", "T4G", 2},
		{"g6.96xlarge", "", 0}, // not a documented size
		{"g6f.large", "L4", 1}, // 1/8 of an L4
		{"gr6f.4xlarge", "L4", 1},
		{"g6f.12xlarge", "", 0}, // not a documented size
		{"g7e.24xlarge", "RTX-PRO-6000-SERVER", 4},
		{"p6e-gb200.36xlarge", "B200-186GB-GB200", 4},
		{"inf2.xlarge", "", 0}, // not a GPU
		{"p5", "", 0},          // no size
	} {
		g, ok := awsspot.Lookup(c.typ)
		if g.Name != c.name || g.Count != c.n || ok != (c.n > 0) {
			t.Errorf("Lookup(%q) = %+v, %v; want %s × %d", c.typ, g, ok, c.name, c.n)
		}
	}
	if g, _ := awsspot.Lookup("g6f.xlarge"); g.Fraction != 0.125 {
		t.Errorf("g6f.xlarge fraction %v, want 1/8", g.Fraction)
	}
	for typ, want := range map[string]bool{"inf1.xlarge": true, "inf2.48xlarge": true, "trn1n.32xlarge": true,
		"vt1.3xlarge": true, "f1.2xlarge": true, "dl1.24xlarge": true, "g6f.large": false, "p5.48xlarge": false} {
		if awsspot.NonGPU(typ) != want {
			t.Errorf("NonGPU(%q) = %v", typ, !want)
		}
	}
}

func TestParseAdvisor(t *testing.T) {
	adv, err := awsspot.ParseAdvisor(fixtureBody(t, "spot-advisor-data.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ region, typ, want string }{
		{"us-east-1", "g5.xlarge", ">20%"},
		{"us-east-1", "p4de.24xlarge", "<5%"},
		{"us-east-1", "g6e.xlarge", "5-10%"},
		{"us-east-1", "p4d.24xlarge", "10-15%"},
		{"us-east-1", "g4dn.xlarge", "15-20%"},
		{"us-east-1", "p6-b200.48xlarge", ""}, // no entry
		{"eu-north-1", "g5.xlarge", ""},       // region trimmed from the fixture
	} {
		if got := adv.Risk(c.region, c.typ); got != c.want {
			t.Errorf("Risk(%s, %s) = %q, want %q", c.region, c.typ, got, c.want)
		}
	}
	// Windows bands are not used: g6e.xlarge is r 1 on Linux, r 3 on Windows.
	for _, c := range []struct{ name, body, want string }{
		{"HTML", `<html></html>`, "expected JSON"},
		{"NoRanges", `{"spot_advisor":{"us-east-1":{"Linux":{"g5.xlarge":{"s":59,"r":4}}}}}`, "no ranges"},
		{"UnknownBand", `{"ranges":[{"index":0,"label":"<5%"}],"spot_advisor":{"us-east-1":{"Linux":{"g5.xlarge":{"s":59,"r":4}}}}}`, "no Linux entry"},
		{"Truncated", `{"ranges":[{"index":0,`, "decode JSON"},
	} {
		if _, err := awsspot.ParseAdvisor([]byte(c.body)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(fixtureBody(f, "spot.json"))
	f.Add(fixtureBody(f, "spot.js"))
	f.Add([]byte(`callback({"config":{"regions":[{"region":"us-east","instanceTypes":[{"type":"gpuCurrentGen","sizes":[{"size":"p5.48xlarge","valueColumns":[{"name":"linux","prices":{"USD":"1e400"}}]}]}]}]}});`))
	f.Add([]byte(`{"config":{"regions":[{"region":"us-east-1","instanceTypes":[{"type":"gpu","sizes":[{"size":"g5.xlarge","valueColumns":[{"name":"linux","prices":{"USD":"Inf"}}]}]}]}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		obs, err := awsspot.Parse(body)
		if err != nil {
			return
		}
		for _, o := range obs {
			if !(o.Price > 0) || math.IsInf(o.Price, 0) || o.GPUCount <= 0 || o.Region == "" {
				t.Fatalf("bad observation accepted: %+v", o)
			}
		}
	})
}
