package scaleway_test

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/scrapers/scaleway"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// The fixture is a real two-page answer for fr-par-1 (scaleway-sdk-go's
// recorded cassette, fixtures/scaleway/PROVENANCE.md): 75 types, 5 GPU
// types; the other default zones answer an empty list (built).
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "scaleway")
	nr, g := scrapertest.CheckFixture(t, "scaleway", res)
	scrapertest.FixedUnits(t, nr)
	if len(res.Observations) != 5 || len(g.Unknown) != 0 {
		t.Fatalf("%d observations, unknown %v; want L4 ×1/2/4/8 and RENDER-S, all mapped", len(res.Observations), g.Unknown)
	}
	for _, c := range []struct {
		key, card string
		gpus      int
		price     float64 // EUR per GPU-hour, by hand
	}{
		{"scaleway/L4-1-24G/fr-par-1/ondemand", "L4", 1, 0.75}, // 0.75 / 1
		{"scaleway/L4-2-24G/fr-par-1/ondemand", "L4", 2, 0.75}, // 1.50 / 2
		{"scaleway/L4-4-24G/fr-par-1/ondemand", "L4", 4, 0.75}, // 3.00 / 4
		{"scaleway/L4-8-24G/fr-par-1/ondemand", "L4", 8, 0.75}, // 6.00 / 8
		{"scaleway/RENDER-S/fr-par-1/ondemand", "P100-16GB-PCIE", 1, 1.2426},
	} {
		scrapertest.Price(t, nr, c.key, c.card, pricewatch.ModeOnDemand, c.price)
		scrapertest.Rent(t, nr, c.key, pricewatch.RentFixed, c.gpus)
		if o := scrapertest.Find(t, nr, c.key); o.Currency != "EUR" {
			t.Errorf("%s: currency %s", c.key, o.Currency)
		}
	}
	for _, o := range res.Observations {
		if o.OfferID == "L4-1-24G" && o.GPUMemoryGB != 24 { // 25769803776 B / 2^30
			t.Errorf("L4 memory %v GB, want 24", o.GPUMemoryGB)
		}
	}
}

func TestParse_Cases(t *testing.T) {
	body := `{"servers": {
	  "H100-SXM-8-80G": {"gpu": 8, "gpu_info": {"gpu_manufacturer": "NVIDIA", "gpu_name": "H100-SXM", "gpu_memory": 85899345920}, "hourly_price": 23.028, "end_of_service": false},
	  "GPU-3070-S": {"gpu": 1, "gpu_info": null, "hourly_price": 0.98, "end_of_service": true},
	  "DEV1-S": {"gpu": 0, "gpu_info": null, "hourly_price": 0.01368},
	  "L40S-1-48G": {"gpu": 1, "gpu_info": {"gpu_name": "L40S", "gpu_memory": 51539607552}, "hourly_price": null}
	}}`
	obs, n, err := scaleway.ParsePage([]byte(body), "fr-par-2", "u")
	if err != nil || n != 4 || len(obs) != 2 {
		t.Fatalf("n %d, %d observations, err %v: %+v", n, len(obs), err, obs)
	}
	nr := normalize.DefaultCatalog().Normalize(obs, scrapertest.At)
	// 23.028 / 8 = 2.8785 EUR per GPU-hour.
	scrapertest.Price(t, nr, "scaleway/H100-SXM-8-80G/fr-par-2/ondemand", "H100-80GB-SXM", pricewatch.ModeOnDemand, 2.8785)
	u := scrapertest.Find(t, nr, "scaleway/GPU-3070-S/fr-par-2/ondemand")
	if u.Card != "" || u.RentUnit != "" || u.Available != pricewatch.AvailableNo {
		t.Errorf("no gpu_info, end of service: %+v", u)
	}
}

// The GPU types of a newer real answer (captured 2026-10-01, the four
// default zones' types in one object; fixtures/scaleway/servers-2026-10-01-gpu.json
// and PROVENANCE.md). "B300-SXM" had no alias: the 8 × B300 type was
// unknown. Every GPU type now maps; the prices are read as captured
// (B300 60.00 for 8 = 7.50 EUR per GPU-hour; L4 0.7875, where the 2025
// cassette has 0.75).
func TestParse_NewerCapture(t *testing.T) {
	body, err := fs.ReadFile(fixtures.FS(), "scaleway/servers-2026-10-01-gpu.json")
	if err != nil {
		t.Fatal(err)
	}
	obs, err := scaleway.Parse(body, "fr-par-2", "u")
	if err != nil || len(obs) != 7 {
		t.Fatalf("%d observations, err %v", len(obs), err)
	}
	nr := normalize.DefaultCatalog().Normalize(obs, scrapertest.At)
	if len(nr.Unknown) != 0 {
		t.Errorf("unknown %v", nr.Unknown)
	}
	for _, c := range []struct {
		key, card string
		price     float64
	}{
		{"scaleway/B300-SXM-8-288G/fr-par-2/ondemand", "B300-288GB-SXM", 7.5}, // 60 / 8
		{"scaleway/H100-SXM-8-80G/fr-par-2/ondemand", "H100-80GB-SXM", 25.3308 / 8},
		{"scaleway/H100-1-80G/fr-par-2/ondemand", "H100-80GB-PCIE", 2.8665},
		{"scaleway/L40S-1-48G/fr-par-2/ondemand", "L40S", 1.469916},
		{"scaleway/L4-1-24G/fr-par-2/ondemand", "L4", 0.7875},
		{"scaleway/L4-2-24G/fr-par-2/ondemand", "L4", 1.575 / 2},
		{"scaleway/RENDER-S/fr-par-2/ondemand", "P100-16GB-PCIE", 1.221},
	} {
		scrapertest.Price(t, nr, c.key, c.card, pricewatch.ModeOnDemand, c.price)
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"api error", `{"message": "zone not found", "type": "not_found"}`, "zone not found"},
		{"no servers", `{"total_count": 3}`, "no servers object"},
		{"no gpu", `{"servers": {"DEV1-S": {"gpu": 0, "hourly_price": 0.01}}}`, "no offers parsed"},
		{"truncated", `{"servers": {"L4-1-24G": {"gpu"`, "JSON"},
	} {
		_, err := scaleway.Parse([]byte(c.body), "fr-par-1", "u")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

func TestZoneURL(t *testing.T) {
	u, err := scaleway.ZoneURL("https://api.scaleway.com/instance/v1/zones/fr-par-1/products/servers", "pl-waw-2", 3)
	if err != nil || u != "https://api.scaleway.com/instance/v1/zones/pl-waw-2/products/servers?page=3&per_page=100" {
		t.Errorf("%s %v", u, err)
	}
	if _, err := scaleway.ZoneURL("https://api.scaleway.com/instance/v1/products", "x", 1); err == nil {
		t.Error("url without a zone accepted")
	}
}

// What comes with a GPU type (fixtures/scaleway/servers-fr-par-1-1.json):
// L4-2-24G ncpus 16, ram 103079215104 bytes / 2^30 = 96 GiB, no scratch
// disk stated (null); the zone's country is France (regions.csv fr-par-1).
func TestScraper_TypeDetails(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "scaleway")
	nr, _ := scrapertest.Normalize("scaleway", res)
	o := scrapertest.Find(t, nr, "scaleway/L4-2-24G/fr-par-1/ondemand")
	if o.VCPUs != 16 || o.RAMGB != 96 || o.DiskGB != 0 || o.Country != "FR" || o.RentURL != scaleway.RentURL {
		t.Errorf("%v vCPUs, %v GiB, %v GiB disk, country %q, rent %q; want 16, 96, 0, FR", o.VCPUs, o.RAMGB, o.DiskGB, o.Country, o.RentURL)
	}
}
