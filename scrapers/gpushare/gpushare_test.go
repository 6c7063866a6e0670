package gpushare_test

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
	"github.com/pricewatch/pricewatch/scrapers/gpushare"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "gpushare")
	nr, _ := scrapertest.CheckFixture(t, "gpushare", res)
	// Per card, any number of the machine's free cards (gpuNum − gpuUsed);
	// 1002 has all 4 cards rented: kept, not available now.
	scrapertest.Rent(t, nr, "gpushare/1001/payg/-/ondemand", pricewatch.RentPerGPU, 1, 2, 3)
	scrapertest.Rent(t, nr, "gpushare/1004/payg/-/ondemand", pricewatch.RentPerGPU, 1, 2, 3, 4, 5, 6)
	scrapertest.Rent(t, nr, "gpushare/1005/payg/-/ondemand", pricewatch.RentPerGPU, 1, 2, 3)
	scrapertest.Rent(t, nr, "gpushare/1002/payg/-/ondemand", pricewatch.RentPerGPU, 1, 2, 3, 4)
	if o := scrapertest.Find(t, nr, "gpushare/1002/payg/-/ondemand"); o.Available != pricewatch.AvailableNo {
		t.Errorf("full machine: available %q", o.Available)
	}
	if o := scrapertest.Find(t, nr, "gpushare/1001/payg/-/ondemand"); o.Available != pricewatch.AvailableYes {
		t.Errorf("machine with free cards: available %q", o.Available)
	}
	// The payg price is per card: not divided by gpuNum.
	for _, c := range []struct {
		key, card string
		gpus      int
		price     float64
	}{
		{"gpushare/1001/payg/-/ondemand", "RTX-3090", 8, 0.76},
		{"gpushare/1002/payg/-/ondemand", "RTX-3090", 4, 0.80},
		{"gpushare/1004/payg/-/ondemand", "RTX-A6000", 8, 2.2},
		{"gpushare/1005/payg/-/ondemand", "RTX-A6000", 4, 2.85},
	} {
		scrapertest.Price(t, nr, c.key, c.card, pricewatch.ModeOnDemand, c.price)
		if o := scrapertest.Find(t, nr, c.key); o.GPUs != c.gpus || o.Currency != "CNY" {
			t.Errorf("%s: %d GPUs %s", c.key, o.GPUs, o.Currency)
		}
	}
	for _, o := range nr.Offers {
		if strings.HasPrefix(o.OfferID, "1003/") {
			t.Errorf("offline machine 1003 became offer %s", o.Key)
		}
	}
	if len(nr.Offers) != 4 || len(nr.Unknown) != 0 {
		t.Errorf("%d offers, unknown %v", len(nr.Offers), nr.Unknown)
	}
}

func TestScraper_Check(t *testing.T) {
	scrapertest.NeedsSecret(t, gpushare.New(), gpushare.TokenEnv, "Bearer token")
}

// Requests carry the Bearer token, Origin/Referer and the store's query;
// pages are walked until pn*ps reaches data.total.
func TestScraper_Paging(t *testing.T) {
	var pages []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer test-secret" || r.Header.Get("Origin") != gpushare.Site ||
			!strings.HasPrefix(r.Header.Get("Referer"), gpushare.Site) {
			t.Errorf("headers %v", r.Header)
		}
		q := r.URL.Query()
		if q.Get("models") != "-1" || q.Get("priceOrder") != "asc" || q.Get("ps") != "2" || !q.Has("gpuName") {
			t.Errorf("query %v", q)
		}
		pages = append(pages, q.Get("pn"))
		item := func(id int, price float64) string {
			return fmt.Sprintf(`{"id":%d,"isOnline":true,"gpuNum":8,"baseInfo":{"gpuName":"RTX 3090"},"skuList":[{"skuName":"payg","price":%g}]}`, id, price)
		}
		switch q.Get("pn") {
		case "1":
			fmt.Fprintf(w, `{"data":{"list":[%s,%s],"total":4}}`, item(1, 0.76), item(2, 0.8))
		case "2":
			fmt.Fprintf(w, `{"data":{"list":[%s,%s],"total":4}}`, item(3, 0.9), item(4, 1.1))
		default:
			t.Errorf("page %s requested", q.Get("pn"))
		}
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	s, env := scrapertest.Scraper(t, "gpushare", srv.URL)
	s.(*gpushare.Scraper).PageSize = 2
	res, err := s.Scrape(t.Context(), env)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Observations) != 4 || strings.Join(pages, ",") != "1,2" {
		t.Errorf("%d observations from pages %v", len(res.Observations), pages)
	}
}

func TestScraper_TokenExpired(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"code":401,"msg":"token expired"}`, http.StatusUnauthorized)
	})
	_, err := scrapertest.Scrape(t, "gpushare", h)
	if !errors.Is(err, gpushare.ErrTokenExpired) || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("err = %v", err)
	}
}

func TestParsePage_Rules(t *testing.T) {
	body := `{"data":{"list":[{"id":"a","gpuNum":"4","baseInfo":{"gpuName":"RTX 3090"},
	  "skuList":[{"skuName":"payg","price":"76"},{"skuName":"month","price":400}]}],"total":1}}`
	p, err := gpushare.ParsePage([]byte(body), 100, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Observations) != 1 {
		t.Fatalf("observations %+v (an unobserved SKU must be skipped)", p.Observations)
	}
	if o := p.Observations[0]; o.Price != 0.76 || o.GPUCount != 4 || !o.PerGPU || o.OfferID != "a/payg" || o.Mode != pricewatch.ModeOnDemand {
		t.Errorf("%+v", o)
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"HTML", `<html><body>Just a moment...</body></html>`, "expected JSON, got markup"},
		{"Truncated", `{"data":{"list":[{"id":1,"baseIn`, "decode JSON"},
		{"ErrorEnvelope", `{"code":401,"msg":"登录已过期","data":null}`, "gpushare error: code 401: 登录已过期"},
		{"NoData", `{}`, "no data"},
		{"EmptyList", `{"data":{"list":[],"total":0}}`, "no offers parsed"},
		{"RenamedList", `{"data":{"machines":[],"total":0}}`, "no data.list"},
		{"OnlyOffline", `{"data":{"list":[{"id":1,"isOnline":false,"baseInfo":{"gpuName":"RTX 3090"},"skuList":[{"skuName":"payg","price":0.76}]}],"total":1}}`, "no offers parsed"},
		{"RenamedPrice", `{"data":{"list":[{"id":1,"isOnline":true,"baseInfo":{"gpuName":"RTX 3090"},"skuList":[{"skuName":"payg","unitPrice":0.76}]}],"total":1}}`, "none with a gpuName and a payg price"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := gpushare.Parse([]byte(c.body))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	seed, err := fs.ReadFile(fixtures.FS(), "gpushare/machine-list-1.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"data":{"list":[{"id":1,"gpuNum":1e308,"baseInfo":{"gpuName":"x"},"skuList":[{"skuName":"payg","price":"-1"}]}],"total":1}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		obs, err := gpushare.Parse(body)
		if err != nil {
			return
		}
		for _, o := range obs {
			if !(o.Price > 0) || o.Price > 1e300 || o.GPUCount < 0 {
				t.Fatalf("bad observation accepted: %+v", o)
			}
		}
	})
}
