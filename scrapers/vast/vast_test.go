package vast_test

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
	"github.com/pricewatch/pricewatch/scrapers/vast"
)

func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "vast")
	nr, g := scrapertest.CheckFixture(t, "vast", res)

	// Hand-computed from fixtures/vast/bundles.json: dph_total / num_gpus
	// (on-demand) and min_bid / num_gpus (spot).
	for _, c := range []struct {
		key, card string
		mode      pricewatch.Mode
		price     float64
	}{
		// id 13489095, RTX 4090 ×1: dph_total 0.16805555555555554, min_bid 0.16.
		{"vast/13489095/South Korea, KR/ondemand", "RTX-4090", pricewatch.ModeOnDemand, 0.16805555555555554},
		{"vast/13489095/South Korea, KR/spot", "RTX-4090", pricewatch.ModeSpot, 0.16},
		// id 13511053, A100 SXM4 ×8, gpu_ram 81920: 11.20138888888889/8, 11.2/8.
		{"vast/13511053/Washington, US/ondemand", "A100-80GB-SXM", pricewatch.ModeOnDemand, 1.4001736111111112},
		{"vast/13511053/Washington, US/spot", "A100-80GB-SXM", pricewatch.ModeSpot, 1.4},
		// id 9749088, A100 SXM4 ×1, gpu_ram 40960: the same name resolves to the 40GB card.
		{"vast/9749088/Sweden, SE/ondemand", "A100-40GB-SXM", pricewatch.ModeOnDemand, 0.6019351851851852},
		// id 13047907, H100 SXM ×2: 4.961666666666667/2, 4.266666666666667/2.
		{"vast/13047907/Czechia, CZ/ondemand", "H100-80GB-SXM", pricewatch.ModeOnDemand, 2.4808333333333334},
		{"vast/13047907/Czechia, CZ/spot", "H100-80GB-SXM", pricewatch.ModeSpot, 2.1333333333333333},
		// id 13226144, H100 NVL ×8, geolocation ", US": 27.73472222222223/8, 3.221333/8.
		{"vast/13226144/, US/ondemand", "H100-94GB-NVL", pricewatch.ModeOnDemand, 3.466840277777779},
		{"vast/13226144/, US/spot", "H100-94GB-NVL", pricewatch.ModeSpot, 0.402666625},
		// id 12545701, H100 PCIE ×8: min_bid 23.466667 is above dph_total 20.268055555555556; both kept as stated.
		{"vast/12545701/United Arab Emirates, AE/ondemand", "H100-80GB-PCIE", pricewatch.ModeOnDemand, 2.5335069444444445},
		{"vast/12545701/United Arab Emirates, AE/spot", "H100-80GB-PCIE", pricewatch.ModeSpot, 2.933333375},
		// id 10233045, Tesla V100 ×2 (16 GB, form factor unknown): no card, price kept.
		{"vast/10233045/Sweden, SE/ondemand", "", pricewatch.ModeOnDemand, 0.10763425925925926},
		{"vast/10233045/Sweden, SE/spot", "", pricewatch.ModeSpot, 0.08},
	} {
		scrapertest.Price(t, nr, c.key, c.card, c.mode, c.price)
	}

	o := scrapertest.Find(t, nr, "vast/13511053/Washington, US/ondemand")
	if o.GPUs != 8 || o.Reliability == nil || *o.Reliability != 0.9758131 || o.Currency != "USD" {
		t.Errorf("13511053: gpus %d reliability %v currency %s, want 8, 0.9758131, USD", o.GPUs, o.Reliability, o.Currency)
	}
	// An offer is one fixed bundle of its num_gpus GPUs.
	scrapertest.Rent(t, nr, "vast/13511053/Washington, US/ondemand", pricewatch.RentFixed, 8)
	scrapertest.Rent(t, nr, "vast/13047907/Czechia, CZ/spot", pricewatch.RentFixed, 2)
	scrapertest.Rent(t, nr, "vast/13489095/South Korea, KR/ondemand", pricewatch.RentFixed, 1)
	scrapertest.FixedUnits(t, nr)
	for _, o := range nr.Offers {
		if o.PricePerGPUHour <= 0 || o.GPUs <= 0 || o.Reliability == nil {
			t.Errorf("%s: price %v gpus %d reliability %v", o.Key, o.PricePerGPUHour, o.GPUs, o.Reliability)
		}
		if o.Mode != pricewatch.ModeOnDemand && o.Mode != pricewatch.ModeSpot {
			t.Errorf("%s: mode %s", o.Key, o.Mode)
		}
	}
	// Every one of the 659 offers has a positive dph_total and min_bid.
	if g.ByMode["ondemand"] != 659 || g.ByMode["spot"] != 659 {
		t.Errorf("by mode %v, want 659 ondemand and 659 spot", g.ByMode)
	}
	for _, name := range []string{"RTX A5000 (24 GB)", "Tesla V100 (16 GB)", "Tesla V100 (32 GB)", "A100X (80 GB)"} {
		if nr.Unknown[name] == 0 {
			t.Errorf("unknown report misses %q: %v", name, nr.Unknown)
		}
	}
	for name := range nr.Unknown {
		for _, known := range []string{"RTX 4090 ", "A100 SXM4 ", "H100 SXM ", "RTX A6000 ", "Tesla T4 "} {
			if strings.HasPrefix(name, known) {
				t.Errorf("%q must resolve to a card", name)
			}
		}
	}
}

// TestScraper_Request checks the search body the scraper posts.
func TestScraper_Request(t *testing.T) {
	var got map[string]any
	var ct string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		ct = r.Header.Get("Content-Type")
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &got)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"offers":[{"id":1,"num_gpus":2,"gpu_name":"RTX 4090","gpu_ram":24564,"dph_total":0.5,"min_bid":0}]}`)
	})
	res, err := scrapertest.Scrape(t, "vast", h)
	if err != nil {
		t.Fatal(err)
	}
	if ct != "application/json" {
		t.Errorf("content type %q", ct)
	}
	if got["limit"] != float64(vast.DefaultLimit) || got["type"] != "on-demand" {
		t.Errorf("body %v", got)
	}
	for _, k := range []string{"verified", "external", "rentable", "rented", "order"} {
		if _, ok := got[k]; !ok {
			t.Errorf("body lacks %q: %v", k, got)
		}
	}
	// min_bid 0: no spot observation.
	if len(res.Observations) != 1 || res.Observations[0].Mode != pricewatch.ModeOnDemand ||
		res.Observations[0].Price != 0.5 || res.Observations[0].GPUCount != 2 || res.Observations[0].PerGPU {
		t.Errorf("observations %+v", res.Observations)
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"HTML", `<!DOCTYPE html><html><body>Just a moment...</body></html>`, "expected JSON, got markup"},
		{"Truncated", `{"offers": [{"id": 13489095, "num_gpus": 1, "gpu_na`, "decode JSON"},
		{"Empty", ``, "empty response body"},
		{"EmptyOffers", `{"offers": []}`, "no offers parsed"},
		{"NoOffersKey", `{}`, "no offers parsed"},
		{"ErrorEnvelope", `{"success": false, "error": "bad_request", "msg": "q must be valid JSON"}`, "vast error: bad_request"},
		{"OnlyUnpriced", `{"offers": [{"id": 1, "num_gpus": 1, "gpu_name": "RTX 4090", "dph_total": 0, "min_bid": 0.2}]}`, "no offers parsed"},
		{"NoGPUs", `{"offers": [{"id": 1, "num_gpus": 0, "gpu_name": "RTX 4090", "dph_total": 0.3}]}`, "no offers parsed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := vast.Parse([]byte(c.body), "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
	if _, err := vast.Parse([]byte(`{"offers": []}`), ""); !errors.Is(err, scrapers.ErrNothingParsed) {
		t.Errorf("empty offers: err = %v, want ErrNothingParsed", err)
	}
}

func FuzzParse(f *testing.F) {
	seed, err := fs.ReadFile(fixtures.FS(), "vast/bundles.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"offers":[{"id":7,"num_gpus":-2,"gpu_name":"H100 SXM","dph_total":-1,"min_bid":3}]}`))
	f.Add([]byte(`{"offers":[{"id":7,"num_gpus":2,"gpu_name":"H100 SXM","dph_total":4,"min_bid":-3}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		obs, err := vast.Parse(body, "")
		if err != nil {
			return
		}
		for _, o := range obs {
			if !(o.Price > 0) || o.GPUCount <= 0 || o.OfferID == "" || o.PerGPU {
				t.Fatalf("bad observation accepted: %+v", o)
			}
		}
	})
}
