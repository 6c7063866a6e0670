package alibaba_test

import (
	"errors"
	"io"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/scrapers/alibaba"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "alibaba")
	nr, g := scrapertest.CheckFixture(t, "alibaba", res)
	want := map[string]int{"ondemand": 8, "monthly": 7, "reserved-1y": 3}
	for m, n := range want {
		if g.ByMode[m] != n {
			t.Errorf("by mode %v, want %v", g.ByMode, want)
			break
		}
	}
	// Instance prices in CNY, divided by the GPUs of the type and by the
	// hours of the period (730 a month, 8760 a year).
	for _, c := range []struct {
		key, card string
		mode      pricewatch.Mode
		price     float64
	}{
		{"alibaba/ecs.gn7i-c8g1.2xlarge/cn-hangzhou/ondemand", "A10", pricewatch.ModeOnDemand, 8.76},
		{"alibaba/ecs.gn7i-c8g1.2xlarge/cn-hangzhou/monthly", "A10", pricewatch.ModeMonthly, 5.0},         // 3650 / 730
		{"alibaba/ecs.gn7i-c8g1.2xlarge/cn-hangzhou/reserved-1y", "A10", pricewatch.ModeReserved1Y, 4.25}, // 37230 / 8760
		{"alibaba/ecs.gn7i-c32g1.16xlarge/cn-hangzhou/ondemand", "A10", pricewatch.ModeOnDemand, 14.6},    // 29.20 / 2
		{"alibaba/ecs.gn7i-c32g1.16xlarge/cn-hangzhou/reserved-1y", "A10", pricewatch.ModeReserved1Y, 8.5},
		{"alibaba/ecs.gn6i-c4g1.xlarge/cn-beijing/ondemand", "T4", pricewatch.ModeOnDemand, 11.68},                // the "optimized" row, not the later "none" one
		{"alibaba/ecs.gn6v-c8g1.16xlarge/cn-shanghai/ondemand", "V100-16GB-SXM2", pricewatch.ModeOnDemand, 26.28}, // 210.24 / 8
		{"alibaba/ecs.gn6v-c8g1.16xlarge/cn-shanghai/monthly", "V100-16GB-SXM2", pricewatch.ModeMonthly, 15.0},    // 87600 / 730 / 8
		{"alibaba/ecs.gn6v-c8g1.16xlarge/cn-shanghai/reserved-1y", "V100-16GB-SXM2", pricewatch.ModeReserved1Y, 12.5},
		{"alibaba/ecs.gn6e-c12g1.3xlarge/cn-shanghai/ondemand", "V100-32GB-SXM2", pricewatch.ModeOnDemand, 29.2},
		{"alibaba/ecs.gn6v-c8g1.2xlarge/cn-hangzhou/monthly", "V100-16GB-SXM2", pricewatch.ModeMonthly, 4.5}, // hours "0.00": monthly only
		{"alibaba/ecs.gn7-c12g1.3xlarge/cn-hangzhou/ondemand", "", pricewatch.ModeOnDemand, 34.74},           // unknown, one GPU
	} {
		scrapertest.Price(t, nr, c.key, c.card, c.mode, c.price)
	}
	// Known types are rented whole in every period; the two types the
	// table does not know have no GPU count, so no rent unit.
	scrapertest.FixedUnits(t, nr, "alibaba/ecs.ebmgn7ex.32xlarge/cn-wulanchabu/ondemand",
		"alibaba/ecs.gn7-c12g1.3xlarge/cn-hangzhou/ondemand", "alibaba/ecs.ebmgn8v.48xlarge/cn-wulanchabu/monthly")
	scrapertest.Rent(t, nr, "alibaba/ecs.gn6v-c8g1.16xlarge/cn-shanghai/reserved-1y", pricewatch.RentFixed, 8)
	scrapertest.Rent(t, nr, "alibaba/ecs.gn7i-c32g1.16xlarge/cn-hangzhou/ondemand", pricewatch.RentFixed, 2)
	keys := map[string]bool{}
	for _, o := range nr.Offers {
		keys[o.Key] = true
		if o.Currency != "CNY" || o.Provider != "alibaba" || o.Region == "" {
			t.Errorf("%s: currency %s provider %s region %q", o.Key, o.Currency, o.Provider, o.Region)
		}
	}
	for _, absent := range []string{
		"alibaba/ecs.gn6i-c4g1.xlarge/cn-beijing/reserved-1y", // only a 3-year period
		"alibaba/ecs.gn6v-c8g1.2xlarge/cn-hangzhou/ondemand",  // 0.00
		"alibaba/ecs.gn6e-c12g1.3xlarge/cn-shanghai/monthly",  // empty price
		"alibaba/ecs.gn7-c12g1.3xlarge/cn-hangzhou/monthly",   // unknown types: pay-as-you-go only
		"alibaba/ecs.g7.xlarge/cn-hangzhou/ondemand",          // not a GPU family
	} {
		if keys[absent] {
			t.Errorf("offer %s must not exist", absent)
		}
	}
	// An unknown type sold only by the month is reported from its monthly
	// row, not dropped.
	if len(nr.Unknown) != 3 || nr.Unknown["ecs.gn7-c12g1.3xlarge"] != 1 || nr.Unknown["ecs.ebmgn7ex.32xlarge"] != 1 ||
		nr.Unknown["ecs.ebmgn8v.48xlarge"] != 1 {
		t.Errorf("unknown = %v, want ecs.gn7-c12g1.3xlarge, ecs.ebmgn7ex.32xlarge and ecs.ebmgn8v.48xlarge once each", nr.Unknown)
	}
}

// TestParseReader_Streams checks that the parser needs no more than a
// reader that hands out one byte at a time, and reports progress.
func TestParseReader_Streams(t *testing.T) {
	body, err := fs.ReadFile(fixtures.FS(), "alibaba/instancePrice.json")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	obs, err := alibaba.ParseReader(iotest.OneByteReader(strings.NewReader(string(body))), "u", func(n int) { total += n })
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 18 || total != 18 {
		t.Errorf("%d observations, progress %d; want 18", len(obs), total)
	}
}

// The run reads the pricing page first and fetches the price file at the
// version the page links, whatever version the configured URL names; a
// pinned version skips the page.
func TestScraper_DiscoversVersion(t *testing.T) {
	var paths []string
	h := fixtures.Handler(fixtures.FS())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			paths = append(paths, r.URL.Path)
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	s, env := scrapertest.Scraper(t, "alibaba", srv.URL)
	env.Settings.URL = strings.Replace(env.Settings.URL, "2.0.999", alibaba.TemplateVersion, 1)
	res, err := s.Scrape(t.Context(), env)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/alibaba/price/ecs/ecs-pricing/zh", "/alibaba/aliyun/ecs-price-info/2.0.999/price/download/instancePrice.json"}
	if !slices.Equal(paths, want) || len(res.Observations) != 18 {
		t.Errorf("requests %q (%d observations), want %q", paths, len(res.Observations), want)
	}
	if res.Observations[0].URL != srv.URL+want[1] {
		t.Errorf("URL %q, want the discovered file", res.Observations[0].URL)
	}
	// Pinned: no page, the pinned version (a 404 here, by name).
	paths = nil
	s.(*alibaba.Scraper).Version = "2.0.8"
	if _, err := s.Scrape(t.Context(), env); err == nil || len(paths) != 1 || !strings.Contains(paths[0], "/2.0.8/") {
		t.Errorf("pinned: requests %q, err %v", paths, err)
	}
}

func TestScraper_PageWithoutVersion(t *testing.T) {
	h := fixtures.Handler(fixtures.FS())
	_, err := scrapertest.Scrape(t, "alibaba", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/ecs-pricing/zh") {
			io.WriteString(w, "<html><body>价格</body></html>")
			return
		}
		h.ServeHTTP(w, r)
	}))
	if err == nil || !strings.Contains(err.Error(), "links no g.alicdn.com/aliyun/ecs-price-info/<version> folder") {
		t.Errorf("err = %v", err)
	}
	_, err = scrapertest.Scrape(t, "alibaba", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/ecs-pricing/zh") {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	}))
	if err == nil || !strings.Contains(err.Error(), "alibaba pricing page") {
		t.Errorf("err = %v", err)
	}
}

func TestPageVersion(t *testing.T) {
	page := []byte(`<script src="//g.alicdn.com/aliyun/ecs-price-info/2.0.28/price/js_price/x.js"></script>
		<a href="https://g.alicdn.com/aliyun/ecs-price-info/2.0.211/price/download/instancePrice.json">
		<script src="https://g.alicdn.com/aliyun/ecs-price-info-intl/2.0.421/price/download/instancePrice.json"></script>
		<a href="https://g.alicdn.com/aliyun/ecs-price-info/2.0.11/">`)
	if v := alibaba.PageVersion(page, false); v != "2.0.211" {
		t.Errorf("China site: %q, want the highest, 2.0.211", v)
	}
	if v := alibaba.PageVersion(page, true); v != "2.0.421" {
		t.Errorf("international site: %q", v)
	}
	if v := alibaba.PageVersion([]byte(`ecs-price-info/2.0.5 g.alicdn.com/aliyun/other/1.0`), false); v != "" {
		t.Errorf("no link: %q", v)
	}
}

func TestFileURL(t *testing.T) {
	base := "https://g.alicdn.com/aliyun/ecs-price-info/2.0.211/price/download/instancePrice.json"
	for _, c := range []struct{ base, version, want, err string }{
		{base, "2.0.28", "https://g.alicdn.com/aliyun/ecs-price-info/2.0.28/price/download/instancePrice.json", ""},
		{base, "", base, ""},
		{strings.Replace(base, "ecs-price-info", "ecs-price-info-intl", 1), "2.0.421",
			"https://g.alicdn.com/aliyun/ecs-price-info-intl/2.0.421/price/download/instancePrice.json", ""},
		{"http://127.0.0.1:9/mirror/instancePrice.json", "2.0.8", "http://127.0.0.1:9/mirror/instancePrice.json", ""},
		{base, "../x", "", `bad version "../x"`},
	} {
		got, err := alibaba.FileURL(c.base, c.version)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("FileURL(%q): err %v, want %q", c.version, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("FileURL(%q, %q) = %q, %v; want %q", c.base, c.version, got, err, c.want)
		}
	}
}

func TestParse_Rows(t *testing.T) {
	// Currency after pricingInfo, a BOM, numbers instead of strings, a key
	// that is not five parts, and an international (USD) file.
	obs, err := alibaba.Parse([]byte("\xef\xbb\xbf"+`{"pricingInfo":{
	  "cn-hangzhou::ecs.gn6i-c4g1.xlarge::vpc::linux::optimized":{"hours":[{"price":1.5,"period":1}],"extra":true},
	  "cn-hangzhou::ecs.gn6i-c4g1.xlarge::vpc":{"hours":[{"price":"9","period":"1"}]},
	  "cn-hangzhou::ecs.sgn7i-vws-m2.xlarge::vpc::linux::optimized":{"hours":[{"price":"2.0","period":"1"}],"months":[{"price":"900","period":"1"}]}
	 },"currency":"USD","more":[1,2,{"x":null}]}`), "u")
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 2 || obs[0].Price != 1.5 || obs[0].Currency != "USD" || obs[0].GPUName != "T4" || obs[0].GPUCount != 1 ||
		obs[1].GPUName != "ecs.sgn7i-vws-m2.xlarge" || obs[1].Mode != pricewatch.ModeOnDemand || obs[1].URL != "u" {
		t.Errorf("observations %+v", obs)
	}
}

func TestParse_Errors(t *testing.T) {
	row := func(price string) string {
		return `{"currency":"CNY","pricingInfo":{"cn-hangzhou::ecs.gn7i-c8g1.2xlarge::vpc::linux::optimized":` +
			`{"hours":[{"price":` + price + `,"period":"1"}]}}}`
	}
	for _, c := range []struct{ name, body, want string }{
		{"HTML", `<!doctype html><html><head><title>Just a moment...</title></head></html>`, "expected JSON, got markup"},
		{"Empty", ``, "empty response body"},
		{"Garbage", "\x00\x01garbage{{{", "decode JSON"},
		{"Truncated", row(`"8.76"`)[:60], "decode JSON"},
		{"NotAnObject", `[1,2,3]`, "the price file is not an object"},
		{"PricingNotObject", `{"pricingInfo":[]}`, "pricingInfo is not an object"},
		{"NoPricingInfo", `{"currency":"CNY","pricing":{}}`, "no pricingInfo object"},
		{"NoGPURows", `{"pricingInfo":{"cn-hangzhou::ecs.g7.xlarge::vpc::linux::optimized":{"hours":[{"price":"1","period":"1"}]}}}`, "no Linux VPC row of a GPU instance type"},
		{"OnlyWindows", `{"pricingInfo":{"cn-hangzhou::ecs.gn7i-c8g1.2xlarge::vpc::windows::optimized":{"hours":[{"price":"9","period":"1"}]}}}`, "no offers parsed"},
		{"PriceGarbage", row(`"8,76"`), `cn-hangzhou ecs.gn7i-c8g1.2xlarge: ondemand price "8,76" is not a number`},
		{"PriceNegative", row(`"-1"`), `ondemand price "-1" is not a number`},
		{"Currency", `{"currency":"JPY","pricingInfo":{}}`, `price file currency "JPY"`},
		{"Trailing", row(`"8.76"`) + `{}`, "data after the price file's closing brace"},
		{"EntryNotObject", `{"pricingInfo":{"cn-hangzhou::ecs.gn7i-c8g1.2xlarge::vpc::linux::optimized":"8.76"}}`, `pricingInfo "cn-hangzhou::ecs.gn7i-c8g1.2xlarge::vpc::linux::optimized"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := alibaba.Parse([]byte(c.body), "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
	if _, err := alibaba.Parse([]byte(`{"pricingInfo":{}}`), ""); !errors.Is(err, scrapers.ErrNothingParsed) {
		t.Errorf("empty pricingInfo: err = %v, want ErrNothingParsed", err)
	}
	// A reader that fails mid-file fails the parse with its error.
	_, err := alibaba.ParseReader(io.MultiReader(strings.NewReader(`{"pricingInfo":{`), iotest.ErrReader(errors.New("connection reset"))), "", nil)
	if err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("read error: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	seed, err := fs.ReadFile(fixtures.FS(), "alibaba/instancePrice.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"pricingInfo":{"r::ecs.gn6i-c4g1.xlarge::vpc::linux::x":{"hours":[{"price":"1e400","period":"1"}],"years":[{"price":"NaN","period":"1"}]}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		obs, err := alibaba.Parse(body, "")
		if err != nil {
			return
		}
		for _, o := range obs {
			if !(o.Price > 0) || math.IsInf(o.Price, 0) || o.GPUCount <= 0 || o.Region == "" || o.OfferID == "" {
				t.Fatalf("bad observation accepted: %+v", o)
			}
		}
	})
}
