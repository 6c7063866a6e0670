package matpool_test

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/scrapers/matpool"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "matpool")
	nr, _ := scrapertest.CheckFixture(t, "matpool", res)
	// One rental unit (gpuIds: one GPU here) rented whole, whatever the
	// unreliable availability counts say (3012 lists 0 available).
	scrapertest.FixedUnits(t, nr)
	scrapertest.Rent(t, nr, "matpool/3012/domain-11/ondemand", pricewatch.RentFixed, 1)
	// priceMillicent / 100000 = CNY per hour of a one-GPU unit.
	for _, c := range []struct {
		key, card string
		price     float64
	}{
		{"matpool/3011/domain-0/ondemand", "RTX-4090", 2.20},
		{"matpool/3012/domain-11/ondemand", "RTX-3090", 1.85},
		{"matpool/3013/domain-0/ondemand", "A100-40GB-PCIE", 2.80},
		{"matpool/3014/domain-0/ondemand", "T4", 1.35},
	} {
		scrapertest.Price(t, nr, c.key, c.card, pricewatch.ModeOnDemand, c.price)
		if o := scrapertest.Find(t, nr, c.key); o.Currency != "CNY" || o.GPUs != 1 {
			t.Errorf("%s: %s, %d GPUs", c.key, o.Currency, o.GPUs)
		}
	}
	if len(nr.Unknown) != 0 {
		t.Errorf("unknown names: %v", nr.Unknown)
	}
}

func TestScraper_Check(t *testing.T) {
	scrapertest.NeedsSecret(t, matpool.New(), matpool.TokenEnv, "session token")
}

// Requests carry the Bearer token and the listing's query; pages are walked
// until the pagination's total is reached.
func TestScraper_Paging(t *testing.T) {
	var pages []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		if got := r.Header.Get("Authorization"); got != "Bearer test-secret" {
			t.Errorf("Authorization = %q", got)
		}
		q := r.URL.Query()
		if q.Get("per_page") != "2" || q.Get("machine_category") != "0" {
			t.Errorf("query %v", q)
		}
		pages = append(pages, q.Get("page"))
		item := func(id, price int) string {
			return fmt.Sprintf(`{"agentId":%d,"hardware":{"gpu":{"gpuIds":[0],"gpuName":"RTX 4090"},"priceMillicent":%d}}`, id, price)
		}
		switch q.Get("page") {
		case "1":
			fmt.Fprintf(w, `{"code":0,"machines":[%s,%s],"pagination":{"total":3,"page":1,"perPage":2}}`, item(1, 220000), item(2, 230000))
		case "2":
			fmt.Fprintf(w, `{"code":0,"machines":[%s],"pagination":{"total":3,"page":2,"perPage":2}}`, item(3, 240000))
		default:
			t.Errorf("page %s requested", q.Get("page"))
		}
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	s, env := scrapertest.Scraper(t, "matpool", srv.URL)
	s.(*matpool.Scraper).PerPage = 2
	res, err := s.Scrape(t.Context(), env)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Observations) != 3 || strings.Join(pages, ",") != "1,2" {
		t.Errorf("%d observations from pages %v", len(res.Observations), pages)
	}
}

// price_scale 1000 (the 厘 reading) gives 100 times the default's prices;
// a multi-GPU unit's price covers all its GPUs.
func TestParsePage_ScaleAndUnits(t *testing.T) {
	body := `{"code":0,"machines":[{"agentId":"7","hardware":{"gpu":{"gpuIds":[0,1],"gpuName":"RTX 4090"},"priceMillicent":"440000"}},
	  {"agentId":8,"gpu":{"total":8},"unit":{"total":4},"hardware":{"gpu":{"gpuName":"RTX 3090"},"priceMillicent":370000}},
	  {"agentId":9,"hardware":{"gpu":{"gpuName":"A16"},"priceMillicent":100000}}]}`
	for _, c := range []struct {
		scale float64
		want  float64
	}{{100000, 4.4}, {1000, 440}} {
		p, err := matpool.ParsePage([]byte(body), c.scale, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Observations) != 2 {
			t.Fatalf("%d observations (the unit without a GPU count must be skipped)", len(p.Observations))
		}
		o := p.Observations[0]
		if o.Price != c.want || o.GPUCount != 2 || o.PerGPU || o.OfferID != "7" {
			t.Errorf("scale %g: %+v", c.scale, o)
		}
		if o := p.Observations[1]; o.GPUCount != 2 || o.OfferID != "8" {
			t.Errorf("gpu/unit totals: %+v", o)
		}
	}
	srv := httptest.NewServer(fixtures.Handler(fixtures.FS()))
	defer srv.Close()
	s, env := scrapertest.Scraper(t, "matpool", srv.URL)
	s.(*matpool.Scraper).PriceScale = 0
	if _, err := s.Scrape(t.Context(), env); err == nil || !strings.Contains(err.Error(), "price_scale") {
		t.Errorf("price_scale 0: err = %v", err)
	}
}

func TestScraper_TokenRefused(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"code":401,"msg":"unauthorized"}`, http.StatusUnauthorized)
	})
	_, err := scrapertest.Scrape(t, "matpool", h)
	if !errors.Is(err, matpool.ErrTokenRefused) || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("err = %v", err)
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"HTML", `<html><body>Just a moment...</body></html>`, "expected JSON, got markup"},
		{"Truncated", `{"code":0,"machines":[{"agentId":1,"hardw`, "decode JSON"},
		{"BusinessError", `{"code":1001,"msg":"请先登录"}`, "matpool error: code 1001: 请先登录"},
		{"EmptyList", `{"code":0,"machines":[],"pagination":{"total":0}}`, "no offers parsed"},
		{"NoList", `{"code":0,"hosts":[]}`, "no machines list"},
		{"RenamedPrice", `{"code":0,"machines":[{"agentId":1,"hardware":{"gpu":{"gpuIds":[0],"gpuName":"RTX 4090"},"price":220000}}]}`, "none with a GPU name, GPU count and priceMillicent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := matpool.Parse([]byte(c.body))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
	// The payload may also come wrapped in data.
	obs, err := matpool.Parse([]byte(`{"code":0,"data":{"machines":[{"agentId":1,"hardware":{"gpu":{"gpuIds":[0],"gpuName":"L20"},"priceMillicent":387000}}]}}`))
	if err != nil || len(obs) != 1 || obs[0].Price != 3.87 {
		t.Errorf("data envelope: %v %+v", err, obs)
	}
}

func FuzzParse(f *testing.F) {
	seed, err := fs.ReadFile(fixtures.FS(), "matpool/machines-1.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"code":"0","machines":[{"agentId":1,"hardware":{"gpu":{"gpuIds":[0],"gpuName":"x"},"priceMillicent":"1e-320"}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		obs, err := matpool.Parse(body)
		if err != nil {
			return
		}
		for _, o := range obs {
			if !(o.Price > 0) || o.Price > 1e300 || o.GPUCount <= 0 {
				t.Fatalf("bad observation accepted: %+v", o)
			}
		}
	})
}
