package lium_test

import (
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers/lium"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// The fixture is a real capture: the four nodes gpuhunt recorded from the
// public feed on 2026-09-10 (fixtures/lium/PROVENANCE.md), every GPU mapped.
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, lium.Name)
	nr, g := scrapertest.CheckFixture(t, lium.Name, res)
	if len(res.Observations) != 4 || len(g.Unknown) != 0 {
		t.Fatalf("%d observations, unknown %v; want 4 nodes, all mapped", len(res.Observations), g.Unknown)
	}
	for _, c := range []struct {
		key, card string
		mode      pricewatch.Mode
		price     float64 // USD per GPU-hour: price_per_gpu_hour (= price_per_node_hour ÷ gpu_count)
		counts    []int
	}{
		// 8 × RTX 5090, smallest order 8: 4.0 / 8 = 0.5, the whole node only.
		{"lium/ebdfdbe2-875a-4caa-8eea-1ab5c2a763e1/jp-13/ondemand", "RTX-5090", pricewatch.ModeOnDemand, 0.5, []int{8}},
		// 8 × H200, 5 free, smallest order 1: 31.92 / 8 = 3.99, 1 to 5 GPUs;
		// 140 GB reported for the 141 GB card (within 10%).
		{"lium/f092246d-5704-4c9e-b57f-7c0710a06deb/us-ms/ondemand", "H200-141GB-SXM", pricewatch.ModeOnDemand, 3.99, []int{1, 2, 3, 4, 5}},
		// tier "spot": a spot offer, 0.5 for its one GPU.
		{"lium/45af0308-a13c-497f-93ea-ab06144eee29/us-mn/spot", "RTX-5090", pricewatch.ModeSpot, 0.5, []int{1}},
		// "A100-SXM4-80GB": 9.84 / 8 = 1.23.
		{"lium/6780e503-6861-4dca-bdec-ca9dcf37e8d0/us-va/ondemand", "A100-80GB-SXM", pricewatch.ModeOnDemand, 1.23, []int{8}},
	} {
		scrapertest.Price(t, nr, c.key, c.card, c.mode, c.price)
		scrapertest.Rent(t, nr, c.key, pricewatch.RentPerGPU, c.counts...)
		if o := scrapertest.Find(t, nr, c.key); o.Available != pricewatch.AvailableYes || o.Provider != lium.Name {
			t.Errorf("%s: available %q provider %q", c.key, o.Available, o.Provider)
		}
	}
	o := scrapertest.Find(t, nr, "lium/ebdfdbe2-875a-4caa-8eea-1ab5c2a763e1/jp-13/ondemand")
	if o.VCPUs != 384 || o.RAMGB != 251 || o.DiskGB != 935 || o.Country != "JP" ||
		o.RentURL != "https://lium.io/browse-pods/ebdfdbe2-875a-4caa-8eea-1ab5c2a763e1" {
		t.Errorf("RTX 5090 node: %+v", o.Machine)
	}
}

// A node with fewer free GPUs than its smallest order cannot be rented now:
// kept, not available, with the counts a rental takes once it frees up; a
// node without a smallest order rents whole (gpuhunt's rule).
func TestParse_RentTerms(t *testing.T) {
	body := `{"nodes": [
	  {"id": "a", "gpu_model": "RTX 5090", "gpu_count": 8, "available_gpu_count": 3, "min_rentable_gpu_count": 4, "price_per_gpu_hour": 0.5, "tier": "secure", "country_code": "US"},
	  {"id": "b", "gpu_model": "RTX 5090", "gpu_count": 2, "available_gpu_count": 2, "price_per_gpu_hour": 0.5, "tier": "secure", "country_code": "DE", "region": ""}]}`
	obs, err := lium.Parse([]byte(body), "u")
	if err != nil || len(obs) != 2 {
		t.Fatalf("%d observations, %v", len(obs), err)
	}
	if a := obs[0]; a.Available != pricewatch.AvailableNo || len(a.GPUCounts) != 5 || a.GPUCounts[0] != 4 || a.GPUCounts[4] != 8 {
		t.Errorf("a: available %q counts %v, want no, 4..8", a.Available, a.GPUCounts)
	}
	if b := obs[1]; b.Available != pricewatch.AvailableYes || len(b.GPUCounts) != 1 || b.GPUCounts[0] != 2 || b.Region != "de" {
		t.Errorf("b: available %q counts %v region %q, want yes, [2], de", b.Available, b.GPUCounts, b.Region)
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"no list", `{"generated_at": "x"}`, "no nodes"},
		{"detail", `{"detail": "rate limited"}`, "rate limited"},
		{"no priced node", `{"nodes": [{"id": "a", "gpu_model": "H200", "gpu_count": 8, "price_per_gpu_hour": null}]}`, "no offers parsed"},
		{"truncated", `{"nodes": [`, "JSON"},
	} {
		_, err := lium.Parse([]byte(c.body), "u")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}
