package hyperstack_test

import (
	"encoding/csv"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/scrapers/hyperstack"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// The fixture is rebuilt from SkyPilot's complete Hyperstack catalog
// (fixtures/hyperstack/PROVENANCE.md): 25 flavors over 8 priced GPUs.
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "hyperstack")
	nr, g := scrapertest.CheckFixture(t, "hyperstack", res)
	scrapertest.FixedUnits(t, nr)
	if len(res.Observations) != 25 || len(g.Unknown) != 0 {
		t.Fatalf("%d observations, unknown %v; want 25 flavors, all mapped", len(res.Observations), g.Unknown)
	}
	for _, c := range []struct {
		key, card string
		gpus      int
		price     float64 // USD per GPU-hour: the pricebook entry of the flavor's GPU
	}{
		{"hyperstack/n3-H100x8/CANADA-1/ondemand", "H100-80GB-PCIE", 8, 1.90},        // 8 × 1.90 = 15.20 (SkyPilot: 15.2)
		{"hyperstack/n3-H100x8-NVLink/CANADA-1/ondemand", "H100-80GB-PCIE", 8, 1.95}, // 8 × 1.95 = 15.60
		{"hyperstack/n3-H100-SXM5x8/US-1/ondemand", "H100-80GB-SXM", 8, 2.40},        // 8 × 2.40 = 19.20
		{"hyperstack/n3-RTX-A4000x10/NORWAY-1/ondemand", "RTX-A4000", 10, 0.15},      // 10 × 0.15 = 1.50
		{"hyperstack/n3-L40x2/CANADA-1/ondemand", "L40", 2, 1.00},
	} {
		scrapertest.Price(t, nr, c.key, c.card, pricewatch.ModeOnDemand, c.price)
		scrapertest.Rent(t, nr, c.key, pricewatch.RentFixed, c.gpus)
	}
	if o := scrapertest.Find(t, nr, "hyperstack/n3-A100x1/CANADA-1/ondemand"); o.Available != pricewatch.AvailableNo {
		t.Errorf("stock_available false: available %q", o.Available)
	}
}

// SkyPilot's fetcher (an independent parser of the same two answers)
// wrote skypilot-vms.csv; every one of its rows is an offer here at the
// same instance price (gpu_count × the pricebook price).
func TestScraper_MatchesSkyPilotCatalog(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "hyperstack")
	got := map[string]float64{}
	for _, o := range res.Observations {
		got[o.OfferID+"@"+o.Region] = o.Price * float64(o.GPUCount)
	}
	b, err := fs.ReadFile(fixtures.FS(), "hyperstack/skypilot-vms.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	for _, r := range rows[1:] {
		want, _ := strconv.ParseFloat(r[6], 64)
		p, ok := got[r[0]+"@"+r[7]]
		if !ok || math.Abs(p-want) > 1e-9 {
			t.Errorf("%s in %s: %v (found %v), SkyPilot %v", r[0], r[7], p, ok, want)
		}
	}
}

func TestNeedsKey(t *testing.T) {
	scrapertest.NeedsSecret(t, &hyperstack.Scraper{}, hyperstack.KeyEnv)
}

func TestParse_Errors(t *testing.T) {
	if _, err := hyperstack.ParsePricebook([]byte(`{"status": false, "message": "Invalid api key"}`)); err == nil || !strings.Contains(err.Error(), "Invalid api key") {
		t.Errorf("pricebook error: %v", err)
	}
	if _, err := hyperstack.ParsePricebook([]byte(`[]`)); err == nil || !strings.Contains(err.Error(), "empty pricebook") {
		t.Errorf("empty pricebook: %v", err)
	}
	prices := map[string]float64{"L40": 1}
	for _, c := range []struct{ name, body, want string }{
		{"status false", `{"status": false, "message": "Unauthorized"}`, "Unauthorized"},
		{"no data", `{"status": true}`, "no data array"},
		{"unpriced gpu only", `{"status": true, "data": [{"gpu": "H200-141G-SXM5", "region_name": "US-1", "flavors": [{"name": "n3-H200x8", "gpu_count": 8}]}]}`, "no offers parsed"},
		{"truncated", `{"status": true, "data": [`, "JSON"},
	} {
		_, err := hyperstack.ParseFlavors([]byte(c.body), prices, "u")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

// What comes with a flavor (fixtures/hyperstack/flavors.json): n3-A100x2
// cpu 60, ram 240.0 GB, no link stated; n3-A100x8-NVLink cpu 252, ram
// 1920.0, in the "A100-80G-PCIe-NVLink" group: NVLink. CANADA-1 is in
// Canada (regions.csv).
func TestScraper_FlavorDetails(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "hyperstack")
	nr, _ := scrapertest.Normalize("hyperstack", res)
	for _, c := range []struct {
		key, link  string
		vcpus, ram float64
	}{
		{"hyperstack/n3-A100x2/CANADA-1/ondemand", "", 60, 240},
		{"hyperstack/n3-A100x8-NVLink/CANADA-1/ondemand", "nvlink", 252, 1920},
	} {
		o := scrapertest.Find(t, nr, c.key)
		if o.VCPUs != c.vcpus || o.RAMGB != c.ram || o.Interconnect != c.link || o.Country != "CA" || o.RentURL != hyperstack.RentURL {
			t.Errorf("%s: %v vCPUs, %v GB, link %q, country %q; want %v, %v, %q, CA", c.key, o.VCPUs, o.RAMGB, o.Interconnect, o.Country, c.vcpus, c.ram, c.link)
		}
	}
}
