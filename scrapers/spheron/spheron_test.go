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
	scrapertest.ResoldOffers(t, nr, spheron.Name, []scrapertest.Resold{
		// 15.92 for 8 H100 SXM5 on Voltage Park = 1.99.
		{Key: "spheron/vp-h100-sxm5-8x/us-tx-1/ondemand", Card: "H100-80GB-SXM", Provider: "voltagepark", Mode: pricewatch.ModeOnDemand, GPUs: 8, Price: 1.99, Avail: pricewatch.AvailableYes},
		// data-crunch is Verda; two clusters, two offers at 2.29.
		{Key: "spheron/dc-h100-sxm5-1x/fin-01/ondemand", Card: "H100-80GB-SXM", Provider: "verda", Mode: pricewatch.ModeOnDemand, GPUs: 1, Price: 2.29, Avail: pricewatch.AvailableYes},
		{Key: "spheron/dc-h100-sxm5-1x/fin-03/ondemand", Card: "H100-80GB-SXM", Provider: "verda", Mode: pricewatch.ModeOnDemand, GPUs: 1, Price: 2.29, Avail: pricewatch.AvailableYes},
		// instanceType SPOT: spot_price 7.92 (not price 15.92) for 8 = 0.99.
		{Key: "spheron/sai-h100-sxm5-8x::spot/us-ca-2/spot", Card: "H100-80GB-SXM", Provider: "spheron", Mode: pricewatch.ModeSpot, GPUs: 8, Price: 0.99, Avail: pricewatch.AvailableYes},
		{Key: "spheron/ses-rtx4090-1x/es-mad-1/ondemand", Card: "RTX-4090", Provider: "spheron", Mode: pricewatch.ModeOnDemand, GPUs: 1, Price: 0.55, Avail: pricewatch.AvailableYes},
		// Under maintenance: not available; 9.60 / 8 = 1.20.
		{Key: "spheron/mc-a100-sxm4-8x/us-ks-1/ondemand", Card: "A100-80GB-SXM", Provider: "massedcompute", Mode: pricewatch.ModeOnDemand, GPUs: 8, Price: 1.20, Avail: pricewatch.AvailableNo},
		// No cluster: its region.
		{Key: "spheron/st-l40s-1x/FR/ondemand", Card: "L40S", Provider: "sesterce", Mode: pricewatch.ModeOnDemand, GPUs: 1, Price: 0.79, Avail: pricewatch.AvailableYes},
		// Neither: no region; 39.92 / 8 = 4.99.
		{Key: "spheron/sai-b200-8x/-/ondemand", Card: "B200-180GB-SXM", Provider: "spheron", Mode: pricewatch.ModeOnDemand, GPUs: 8, Price: 4.99, Avail: pricewatch.AvailableYes},
	})

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
