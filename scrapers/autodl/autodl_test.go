package autodl_test

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/scrapers/autodl"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

func noToken(string) string { return "" }

// scrapeList runs the token-less mode against h, which serves the source's
// real paths (mounted under the source's fixture base).
func scrapeList(t *testing.T, h http.Handler, mutate func(*autodl.Scraper)) (scrapers.Result, error) {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/autodl/", http.StripPrefix("/autodl", h))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	sc, env := scrapertest.Scraper(t, "autodl", srv.URL)
	s := sc.(*autodl.Scraper)
	if mutate != nil {
		mutate(s)
	}
	env.Getenv = noToken
	return s.Scrape(t.Context(), env)
}

// fixtureList runs the token-less mode against the embedded fixtures.
func fixtureList(t *testing.T) (scrapers.Result, error) {
	t.Helper()
	srv := httptest.NewServer(fixtures.Handler(fixtures.FS()))
	defer srv.Close()
	s, env := scrapertest.Scraper(t, "autodl", srv.URL)
	env.Getenv = noToken
	return s.Scrape(t.Context(), env)
}

// The golden file holds both modes: the token-mode run (market search) and
// the token-less run (list-price table), normalized together.
func TestScraper_Fixture(t *testing.T) {
	market := scrapertest.ScrapeFixtures(t, "autodl")
	list, err := fixtureList(t)
	if err != nil {
		t.Fatalf("token-less scrape: %v", err)
	}
	for _, o := range market.Observations {
		if strings.HasPrefix(o.OfferID, "list/") {
			t.Errorf("token mode produced a list offer %s", o.OfferID)
		}
	}
	for _, o := range list.Observations {
		if !strings.HasPrefix(o.OfferID, "list/") || o.Mode != pricewatch.ModeOnDemand || o.Region != "" {
			t.Errorf("token-less offer %+v", o)
		}
	}
	all := scrapers.Result{Observations: append(append([]pricewatch.Observation(nil), market.Observations...), list.Observations...)}
	nr, _ := scrapertest.CheckFixture(t, "autodl", all)
	if len(market.Observations) != 12 || len(list.Observations) != 21 {
		t.Errorf("observations: market %d (want 12), list %d (want 21)", len(market.Observations), len(list.Observations))
	}

	for _, c := range []struct {
		key, card string
		mode      pricewatch.Mode
		price     float64
	}{
		// Token mode: li / 1000 per GPU-hour; page 1 and page 2 of payg.
		{"autodl/2dd949a4cf/payg/west-B/ondemand", "RTX-4090", pricewatch.ModeOnDemand, 2.72},
		{"autodl/5f0c6e2a91/payg/beijing-B/ondemand", "RTX-4090", pricewatch.ModeOnDemand, 1.98},
		{"autodl/8b3d1f7c40/payg/west-C/ondemand", "RTX-4090", pricewatch.ModeOnDemand, 2.19},
		{"autodl/e91b2c5a73/payg/beijing-D/ondemand", "RTX-4090D", pricewatch.ModeOnDemand, 2.08}, // payg_price only
		{"autodl/1a6f4d8e25/payg/beijing-E/ondemand", "H20-96GB", pricewatch.ModeOnDemand, 10.5},
		{"autodl/3c8a5f1e97/payg/beijing-B/ondemand", "RTX-5090", pricewatch.ModeOnDemand, 2.93},
		{"autodl/6a1c3e8f59/payg/west-B/ondemand", "L20", pricewatch.ModeOnDemand, 3.87},
		// Monthly: 1052000 li per GPU-month = 1052 CNY / 730 h.
		{"autodl/b2e7d4a019/monthly/beijing-B/monthly", "RTX-4090", pricewatch.ModeMonthly, 1052.0 / 730},
		{"autodl/4f9c1b6e3d/monthly/beijing-D/monthly", "RTX-4090D", pricewatch.ModeMonthly, 946.0 / 730},
		// Token-less: yuan per GPU-hour as the table states it.
		{"autodl/list/RTX 4090/-/ondemand", "RTX-4090", pricewatch.ModeOnDemand, 1.98},
		{"autodl/list/RTX 3090/-/ondemand", "RTX-3090", pricewatch.ModeOnDemand, 1.39},
		{"autodl/list/A100 SXM4/-/ondemand", "A100-80GB-SXM", pricewatch.ModeOnDemand, 7.03},
		{"autodl/list/H20/-/ondemand", "H20-96GB", pricewatch.ModeOnDemand, 10.5},
		{"autodl/list/RTX 3060/-/ondemand", "RTX-3060", pricewatch.ModeOnDemand, 0.63}, // no memory stated: the 12 GB card
		// Family and memory stated, form factor or edition not: the
		// lower-bound cards (normalize/data/aliases.csv), never a guess.
		{"autodl/7d2e9b0c64/payg/beijing-A/ondemand", "A800-80GB", pricewatch.ModeOnDemand, 5.88},
		{"autodl/9e4b7a2d08/payg/beijing-A/ondemand", "V100-32GB", pricewatch.ModeOnDemand, 1.98},
		{"autodl/list/A800-80G/-/ondemand", "A800-80GB", pricewatch.ModeOnDemand, 5.88},
		{"autodl/list/V100/-/ondemand", "V100-32GB", pricewatch.ModeOnDemand, 1.98}, // 32 GB stated
		{"autodl/list/RTX PRO 6000/-/ondemand", "RTX-PRO-6000-96GB", pricewatch.ModeOnDemand, 7.35},
	} {
		scrapertest.Price(t, nr, c.key, c.card, c.mode, c.price)
	}
	// Market: per GPU, any count up to the machine's gpu_idle_num; the full
	// machine (gpu_idle_num 0) has nothing to rent now, so no rent unit.
	// List prices: per GPU, one GPU (no machine behind them).
	for key, free := range map[string]int{
		"autodl/2dd949a4cf/payg/west-B/ondemand":      3, // 8 GPUs, 3 idle
		"autodl/c47a9e0d12/payg/west-B/ondemand":      2, // 4 GPUs, 2 idle
		"autodl/1a6f4d8e25/payg/beijing-E/ondemand":   8, // all 8 idle
		"autodl/b2e7d4a019/monthly/beijing-B/monthly": 2,
		"autodl/5f0c6e2a91/payg/beijing-B/ondemand":   1,
		"autodl/list/RTX 4090/-/ondemand":             1,
		"autodl/list/H20/-/ondemand":                  1,
	} {
		scrapertest.Rent(t, nr, key, pricewatch.RentPerGPU, pricewatch.CountsUpTo(free)...)
	}
	// A full machine (0 of 8 idle) is kept, not available now, with the
	// counts a rental could take once its GPUs are free.
	scrapertest.Rent(t, nr, "autodl/8b3d1f7c40/payg/west-C/ondemand", pricewatch.RentPerGPU, pricewatch.CountsUpTo(8)...)
	if o := scrapertest.Find(t, nr, "autodl/8b3d1f7c40/payg/west-C/ondemand"); o.Available != pricewatch.AvailableNo || o.Stock != "none free" {
		t.Errorf("full machine: available %q stock %q", o.Available, o.Stock)
	}
	if o := scrapertest.Find(t, nr, "autodl/2dd949a4cf/payg/west-B/ondemand"); o.Available != pricewatch.AvailableYes || o.Stock != "3 of 8 GPUs free" {
		t.Errorf("3 idle of 8: available %q stock %q", o.Available, o.Stock)
	}
	if o := scrapertest.Find(t, nr, "autodl/c47a9e0d12/payg/west-B/ondemand"); o.GPUs != 4 || o.Currency != "CNY" {
		t.Errorf("4-GPU machine: %+v", o)
	}
	// H800 (PCIe or SXM) has no lower-bound card; MTT S4000 no card at all.
	for _, name := range []string{"H800 (80 GB)", "MTT S4000 (48 GB)"} {
		if nr.Unknown[name] == 0 {
			t.Errorf("%s is not reported unknown: %v", name, nr.Unknown)
		}
	}
	for _, o := range nr.Offers {
		if o.Mode == pricewatch.ModeDaily || o.Mode == pricewatch.ModeWeekly {
			t.Errorf("%s: the fixture has no daily/weekly machines", o.Key)
		}
	}
}

// The search carries the bare token, the shape's body, and pages by body
// and (mirrored) query; every charge type is searched.
func TestScraper_Requests(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	good := fixtures.Handler(fixtures.FS())
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			var body map[string]any
			if err := json.Unmarshal(b, &body); err != nil {
				t.Errorf("body: %v", err)
			}
			if got := r.Header.Get("Authorization"); got != "test-secret" {
				t.Errorf("Authorization = %q, want the bare token", got)
			}
			q := r.URL.Query()
			if body["charge_type"] != q.Get("charge_type") || jsonInt(body["page_index"]) != q.Get("page_index") || body["page_size"] != 100.0 {
				t.Errorf("body %v and query %v disagree", body, q)
			}
			mu.Lock()
			seen = append(seen, q.Get("charge_type")+"/"+q.Get("page_index"))
			mu.Unlock()
			r.Body = io.NopCloser(strings.NewReader(string(b)))
		}
		good.ServeHTTP(w, r)
	})
	if _, err := scrapertest.Scrape(t, "autodl", h); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(seen, " "); got != "payg/1 payg/2 daily/1 weekly/1 monthly/1" {
		t.Errorf("requests %s", got)
	}
}

func jsonInt(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.Itoa(int(f))
	}
	return ""
}

// A refused token fails the run and names the token; no list fallback.
func TestScraper_TokenRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		h    http.HandlerFunc
	}{
		{"Envelope", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"code":"AuthorizeFailed","msg":"登录超时","data":null}`)
		}},
		{"HTTP401", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := scrapertest.Scrape(t, "autodl", c.h)
			if !errors.Is(err, autodl.ErrTokenRefused) || !strings.Contains(err.Error(), autodl.TokenEnv) {
				t.Fatalf("err = %v, want the token named as refused", err)
			}
			if len(res.Observations) != 0 {
				t.Errorf("%d observations from a refused token", len(res.Observations))
			}
		})
	}
}

func TestScraper_MaxPages(t *testing.T) {
	srv := httptest.NewServer(fixtures.Handler(fixtures.FS()))
	defer srv.Close()
	s := autodl.New()
	s.MaxPages = 1
	_, err := s.Scrape(t.Context(), scrapertest.Env(t, "autodl", srv.URL))
	if err == nil || !strings.Contains(err.Error(), "more than max_pages 1") {
		t.Fatalf("err = %v", err)
	}
}

func TestScraper_UnknownChargeType(t *testing.T) {
	s := autodl.New()
	s.ChargeTypes = []string{"payg", "hourly"}
	_, err := s.Scrape(t.Context(), scrapertest.Env(t, "autodl", "http://127.0.0.1:1"))
	if err == nil || !strings.Contains(err.Error(), `unknown charge type "hourly"`) {
		t.Fatalf("err = %v", err)
	}
}

// Every charge type empty: nothing parsed, never "every offer vanished".
func TestScraper_AllEmpty(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"code":"Success","msg":"","data":{"list":[],"page_index":1,"page_size":100,"result_total":0,"max_page":0}}`)
	})
	_, err := scrapertest.Scrape(t, "autodl", h)
	if !errors.Is(err, scrapers.ErrNothingParsed) {
		t.Fatalf("err = %v", err)
	}
}

func TestParseSearch_ChargeTypes(t *testing.T) {
	body := `{"code":"Success","msg":"","data":{"list":[{"machine_id":"m1","region_name":"北京A区","gpu_name":"vGPU-32GB","gpu_number":1,
	  "machine_sku_info":[{"type":"payg","current_price":1000},{"type":"daily","current_price":24000},{"type":"weekly","current_price":168000},
	  {"type":"yearly","current_price":8760000}]}],"page_index":1,"max_page":1,"result_total":1}}`
	for _, c := range []struct {
		ct    string
		mode  pricewatch.Mode
		unit  pricewatch.PriceUnit
		price float64
	}{
		{"payg", pricewatch.ModeOnDemand, pricewatch.PerHour, 1},
		{"daily", pricewatch.ModeDaily, pricewatch.PerDay, 24},
		{"weekly", pricewatch.ModeWeekly, pricewatch.PerWeek, 168},
		{"yearly", pricewatch.ModeReserved1Y, pricewatch.PerTerm, 8760},
	} {
		p, err := autodl.ParseSearch([]byte(body), c.ct, "u")
		if err != nil {
			t.Fatalf("%s: %v", c.ct, err)
		}
		o := p.Observations[0]
		if o.Mode != c.mode || o.Unit != c.unit || o.Price != c.price || !o.PerGPU || o.OfferID != "m1/"+c.ct || o.Region != "北京A区" {
			t.Errorf("%s: %+v", c.ct, o)
		}
	}
	// No monthly SKU on a listed machine: a layout change, not silence.
	if _, err := autodl.ParseSearch([]byte(body), "monthly", "u"); !errors.Is(err, scrapers.ErrNothingParsed) {
		t.Errorf("monthly: err = %v", err)
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"HTML", `<html><body>Just a moment...</body></html>`, "expected JSON, got markup"},
		{"Truncated", `{"code":"Success","data":{"list":[{"machine_id":"2dd9`, "decode JSON"},
		{"TokenRefused", `{"code":"AuthorizeFailed","msg":"登录超时","data":null}`, "AutoDL refused the token in PRICEWATCH_AUTODL_TOKEN"},
		{"OtherError", `{"code":"RateLimit","msg":"请求过于频繁","data":null}`, "autodl error: code RateLimit: 请求过于频繁"},
		{"NoCode", `{"data":{"list":[]}}`, "no code"},
		{"EmptyList", `{"code":"Success","msg":"","data":{"list":[],"max_page":0}}`, "no offers parsed"},
		{"RenamedList", `{"code":"Success","msg":"","data":{"machines":[{"machine_id":"a"}]}}`, "no data.list"},
		{"RenamedPrice", `{"code":"Success","data":{"list":[{"machine_id":"a","gpu_name":"RTX 4090","machine_sku_info":[{"type":"payg","price":2720}]}],"max_page":1}}`, "none with a price"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := autodl.Parse([]byte(c.body))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestListEntries_Shapes(t *testing.T) {
	for _, c := range []struct {
		name, js string
		want     []autodl.ListEntry
	}{
		{"Minified", `const a=[{gpuName:"RTX 4090",memory:"24G",originalPrice:1.98},{gpuName:"RTX 3060",originalPrice:.63}]`,
			[]autodl.ListEntry{{Name: "RTX 4090", MemoryGB: 24, Price: 1.98}, {Name: "RTX 3060", Price: 0.63}}},
		{"QuotedKeysAndStrings", `x={"name":"L20","gpuMemory":"48GB","originalPrice":"3.87","price":"3.68"}`,
			[]autodl.ListEntry{{Name: "L20", MemoryGB: 48, Price: 3.87}}},
		{"JSONParse", `JSON.parse("[{\"title\":\"H20\",\"originalPrice\":10.5}]")`,
			[]autodl.ListEntry{{Name: "H20", Price: 10.5}}},
		{"NestedPrice", `[{name:"A40",price:{originalPrice:3.14,memberPrice:2.98}}]`,
			[]autodl.ListEntry{{Name: "A40", Price: 3.14}}},
		{"SymbolInString", `[{gpu:'RTX 5090',originalPrice:'¥2.93/时'}]`,
			[]autodl.ListEntry{{Name: "RTX 5090", Price: 2.93}}},
		{"RepeatedTable", `[{name:"L40",originalPrice:4.82}];[{name:"L40",originalPrice:4.82}]`,
			[]autodl.ListEntry{{Name: "L40", Price: 4.82}}},
		{"IgnoresCode", `function f(t,e){return e?t.originalPrice:0}const d={originalPrice:0};[{name:n,originalPrice:p}];[{name:"A800-80G",originalPrice:5.88}]`,
			[]autodl.ListEntry{{Name: "A800-80G", Price: 5.88}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := autodl.ListEntries([]byte(c.js))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("entry %d: got %+v, want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestParseBundle_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"HTML", `<!doctype html><html><title>Just a moment...</title></html>`, "expected JavaScript, got markup"},
		{"NoTable", `function a(){return 1}`, "no offers parsed"},
		{"RenamedField", `[{gpuName:"RTX 4090",listPrice:1.98}]`, "no offers parsed"},
		{"Truncated", `const a=[{gpuName:"RTX 4090",memory:"24G",originalPr`, "no offers parsed"},
		{"UnitChanged", `[{gpuName:"RTX 4090",originalPrice:1980}]`, "not a price in yuan per GPU-hour"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := autodl.ParseBundle([]byte(c.body), "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// The table may sit in a later script of the home page, possibly on another
// host; a home page without scripts (a challenge page) fails with its cause.
func TestScraper_ListLookup(t *testing.T) {
	js := map[string]string{
		"/assets/entry.js":  `import"./chunk.js";console.log(1)`,
		"/assets/vendor.js": `[{name:"WRONG",originalPrice:9}]`,
		"/assets/home.js":   `const t=[{gpuName:"RTX 4090",memory:"24G",originalPrice:1.98}]`,
	}
	var fetched []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/home":
			io.WriteString(w, `<html><head><script src="/assets/vendor.js"></script><script type="module" src="/assets/entry.js"></script>`+
				`<link rel="prefetch" href="/assets/home.js"><link rel="stylesheet" href="/x.css"></head></html>`)
		case js[r.URL.Path] != "":
			fetched = append(fetched, r.URL.Path)
			io.WriteString(w, js[r.URL.Path])
		default:
			http.NotFound(w, r)
		}
	})
	res, err := scrapeList(t, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Observations) != 1 || res.Observations[0].Price != 1.98 || res.Observations[0].OfferID != "list/RTX 4090" {
		t.Errorf("observations %+v", res.Observations)
	}
	if got := strings.Join(fetched, " "); got != "/assets/entry.js /assets/home.js" {
		t.Errorf("fetched %s (vendor chunks last)", got)
	}

	// bundle_url skips the home page.
	fetched = nil
	res, err = scrapeList(t, h, func(s *autodl.Scraper) { s.BundleURL = strings.TrimSuffix(s.HomeURL, "/home") + "/assets/home.js" })
	if err != nil || len(res.Observations) != 1 || strings.Join(fetched, " ") != "/assets/home.js" {
		t.Errorf("bundle_url: %v %+v %v", err, res.Observations, fetched)
	}

	challenge := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><html><head><title>Just a moment...</title></head><body>Checking your browser</body></html>`)
	})
	if _, err := scrapeList(t, challenge, nil); !errors.Is(err, scrapers.ErrNothingParsed) || !strings.Contains(err.Error(), "no <script src>") {
		t.Errorf("challenge page: err = %v", err)
	}
	broken := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/home" {
			io.WriteString(w, `<html><script src="/a.js"></script></html>`)
			return
		}
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	if _, err := scrapeList(t, broken, nil); err == nil || !strings.Contains(err.Error(), "HTTP 500") {
		t.Errorf("script 500: err = %v", err)
	}
}

func TestScripts_OtherHost(t *testing.T) {
	got, err := autodl.Scripts([]byte(`<script src="https://cdn.example.com/app.js"></script><script src="app.js"></script>`+
		`<script src="/assets/x.js"></script>`), "https://www.autodl.com/home", "http://127.0.0.1:9/autodl")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "https://cdn.example.com/app.js https://www.autodl.com/app.js http://127.0.0.1:9/autodl/assets/x.js" {
		t.Errorf("scripts %v", got)
	}
}

func TestScraper_Rebase(t *testing.T) {
	s := autodl.New()
	s.BundleURL = "https://www.autodl.com/assets/index-abc.js"
	s.Rebase("http://127.0.0.1:9/")
	if s.HomeURL != "http://127.0.0.1:9/home" || s.BundleURL != "http://127.0.0.1:9/assets/index-abc.js" {
		t.Errorf("rebased to %q %q", s.HomeURL, s.BundleURL)
	}
}

func fuzzCheck(t *testing.T, obs []pricewatch.Observation) {
	for _, o := range obs {
		if !(o.Price > 0) || o.Price > 1e300 || o.GPUName == "" || o.OfferID == "" {
			t.Fatalf("bad observation accepted: %+v", o)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"autodl/search-payg-1.json", "autodl/search-payg-2.json", "autodl/search-monthly-1.json"} {
		seed, err := fs.ReadFile(fixtures.FS(), name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(seed)
	}
	f.Add([]byte(`{"code":"Success","data":{"list":[{"machine_id":1,"gpu_name":"x","payg_price":"NaN"}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		obs, err := autodl.Parse(body)
		if err != nil {
			return
		}
		fuzzCheck(t, obs)
	})
}

func FuzzBundle(f *testing.F) {
	seed, err := fs.ReadFile(fixtures.FS(), "autodl/index-5b7e2c1d.js")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`[{name:"a",originalPrice:-1},{name:"b",price:{originalPrice:1e999}}]`))
	f.Fuzz(func(t *testing.T, js []byte) {
		obs, err := autodl.ParseBundle(js, "")
		if err != nil {
			return
		}
		fuzzCheck(t, obs)
	})
}

// A machine without gpu_idle_num rents up to its gpu_number; an idle count
// above gpu_number is capped at it.
func TestParseSearch_FreeGPUs(t *testing.T) {
	body := `{"code":"Success","data":{"list":[
	 {"machine_id":"a","region_sign":"r","gpu_name":"RTX 4090","gpu_number":4,"payg_price":1980},
	 {"machine_id":"b","region_sign":"r","gpu_name":"RTX 4090","gpu_number":2,"gpu_idle_num":5,"payg_price":1980}],
	 "page_index":1,"max_page":1,"result_total":2}}`
	p, err := autodl.ParseSearch([]byte(body), "payg", "")
	if err != nil || len(p.Observations) != 2 {
		t.Fatalf("%+v, %v", p, err)
	}
	for i, want := range [][]int{{1, 2, 3, 4}, {1, 2}} {
		if o := p.Observations[i]; o.RentUnit != pricewatch.RentPerGPU || !slices.Equal(o.GPUCounts, want) {
			t.Errorf("%s: %q %v, want per_gpu %v", o.OfferID, o.RentUnit, o.GPUCounts, want)
		}
	}
}
