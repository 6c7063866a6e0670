package spheron_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
	"github.com/pricewatch/pricewatch/scrapers/spheron"
)

// The fixture is built in the shape independent clients read
// (fixtures/spheron/PROVENANCE.md): two pages, 5 GPU groups, 7 offers, 8
// observations (one per cluster), every GPU mapped.
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, spheron.Name)
	nr, g := scrapertest.CheckFixture(t, spheron.Name, res)
	scrapertest.FixedUnits(t, nr)
	if len(res.Observations) != 8 || len(g.Unknown) != 0 {
		t.Fatalf("%d observations, unknown %v; want 8 (both pages), all mapped", len(res.Observations), g.Unknown)
	}
	for _, c := range []struct {
		key, card, provider string
		mode                pricewatch.Mode
		gpus                int
		price               float64 // USD per GPU-hour, by hand: the offer's price ÷ gpuCount
		avail               pricewatch.Availability
	}{
		// 15.92 for 8 H100 SXM5 on Voltage Park = 1.99.
		{"spheron/vp-h100-sxm5-8x/us-tx-1/ondemand", "H100-80GB-SXM", "voltagepark", pricewatch.ModeOnDemand, 8, 1.99, pricewatch.AvailableYes},
		// data-crunch is Verda; two clusters, two offers at 2.29.
		{"spheron/dc-h100-sxm5-1x/fin-01/ondemand", "H100-80GB-SXM", "verda", pricewatch.ModeOnDemand, 1, 2.29, pricewatch.AvailableYes},
		{"spheron/dc-h100-sxm5-1x/fin-03/ondemand", "H100-80GB-SXM", "verda", pricewatch.ModeOnDemand, 1, 2.29, pricewatch.AvailableYes},
		// instanceType SPOT: spot_price 7.92 (not price 15.92) for 8 = 0.99.
		{"spheron/sai-h100-sxm5-8x::spot/us-ca-2/spot", "H100-80GB-SXM", "spheron", pricewatch.ModeSpot, 8, 0.99, pricewatch.AvailableYes},
		{"spheron/ses-rtx4090-1x/es-mad-1/ondemand", "RTX-4090", "spheron", pricewatch.ModeOnDemand, 1, 0.55, pricewatch.AvailableYes},
		// Under maintenance: not available; 9.60 / 8 = 1.20.
		{"spheron/mc-a100-sxm4-8x/us-ks-1/ondemand", "A100-80GB-SXM", "massedcompute", pricewatch.ModeOnDemand, 8, 1.20, pricewatch.AvailableNo},
		// No cluster: its region.
		{"spheron/st-l40s-1x/FR/ondemand", "L40S", "sesterce", pricewatch.ModeOnDemand, 1, 0.79, pricewatch.AvailableYes},
		// Neither: no region; 39.92 / 8 = 4.99.
		{"spheron/sai-b200-8x/-/ondemand", "B200-180GB-SXM", "spheron", pricewatch.ModeOnDemand, 8, 4.99, pricewatch.AvailableYes},
	} {
		scrapertest.Price(t, nr, c.key, c.card, c.mode, c.price)
		scrapertest.Rent(t, nr, c.key, pricewatch.RentFixed, c.gpus)
		o := scrapertest.Find(t, nr, c.key)
		if o.Available != c.avail || o.Provider != c.provider || o.Source != spheron.Name {
			t.Errorf("%s: available %q provider %q source %q; want %q %q", c.key, o.Available, o.Provider, o.Source, c.avail, c.provider)
		}
	}
	o := scrapertest.Find(t, nr, "spheron/ses-rtx4090-1x/es-mad-1/ondemand")
	if o.VCPUs != 8 || o.RAMGB != 48 || o.DiskGB != 200 || o.Interconnect != "pcie" {
		t.Errorf("RTX 4090 machine: %+v", o.Machine)
	}
}

// The list answers without a key; a key, where set, is sent as a Bearer
// token.
func TestScraper_KeyOptional(t *testing.T) {
	var auth []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/gpu-offers" {
			http.NotFound(w, r) // robots.txt
			return
		}
		auth = append(auth, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"data": [{"gpuType": "l40s", "offers": [{"provider": "sesterce", "offerId": "x", "gpuCount": 1, "price": 0.79, "available": true, "region": "FR"}]}], "totalPages": 1}`))
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	s, env := scrapertest.Scraper(t, spheron.Name, srv.URL)
	env.Settings.URL = srv.URL + "/api/gpu-offers"
	if _, err := s.Scrape(t.Context(), env); err != nil {
		t.Fatal(err)
	}
	env.Getenv = func(string) string { return "" }
	if _, err := s.Scrape(t.Context(), env); err != nil {
		t.Fatalf("without a key: %v", err)
	}
	if len(auth) != 2 || auth[0] != "Bearer "+scrapertest.TestSecret("") || auth[1] != "" {
		t.Errorf("Authorization headers %q", auth)
	}
}

func TestSeller(t *testing.T) {
	for in, want := range map[string]string{
		"data-crunch": "verda", "massed-compute": "massedcompute", "voltage-park": "voltagepark",
		"spheron-ai": "spheron", "spheron-es": "spheron", "sesterce": "sesterce",
	} {
		if got := spheron.Seller(in); got != want {
			t.Errorf("Seller(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParsePage_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"error", `{"error": "Unauthorized"}`, "Unauthorized"},
		{"no list", `{"total": 0}`, "no data"},
		{"truncated", `{"data": [`, "JSON"},
	} {
		_, err := spheron.ParsePage([]byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}
