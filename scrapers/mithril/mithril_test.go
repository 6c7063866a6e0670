package mithril_test

import (
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers/mithril"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// The fixture is built in the documented shape (fixtures/mithril/PROVENANCE.md):
// 6 instance types under the fids and names Mithril's own SDK records, 8
// auctions of which one names a type the types answer lacks: 7 spot offers,
// every GPU mapped.
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, mithril.Name)
	nr, g := scrapertest.CheckFixture(t, mithril.Name, res)
	scrapertest.FixedUnits(t, nr)
	if len(res.Observations) != 7 || len(g.Unknown) != 0 {
		t.Fatalf("%d observations, unknown %v; want 7, all mapped", len(res.Observations), g.Unknown)
	}
	for _, c := range []struct {
		key, card string
		gpus      int
		price     float64 // USD per GPU-hour, by hand: last_instance_price ÷ num_gpus
		avail     pricewatch.Availability
	}{
		{"mithril/a100-80gb.sxm.1x/us-central1-a/spot", "A100-80GB-SXM", 1, 1.00, pricewatch.AvailableYes}, // "$1.00" / 1
		{"mithril/a100-80gb.sxm.2x/us-central1-a/spot", "A100-80GB-SXM", 2, 1.05, pricewatch.AvailableYes}, // "$2.10" / 2
		{"mithril/a100-80gb.sxm.4x/us-central1-a/spot", "A100-80GB-SXM", 4, 1.10, pricewatch.AvailableNo},  // "$4.40" / 4, capacity 0
		{"mithril/a100-80gb.sxm.8x/us-central1-b/spot", "A100-80GB-SXM", 8, 1.10, pricewatch.AvailableYes}, // "$8.80" / 8
		{"mithril/h100-80gb.sxm.8x/us-central2-a/spot", "H100-80GB-SXM", 8, 2.00, pricewatch.AvailableYes}, // "$16.00" / 8
		{"mithril/h100-80gb.sxm.8x/eu-central1-a/spot", "H100-80GB-SXM", 8, 2.30, pricewatch.AvailableYes}, // "$18.40" / 8
		{"mithril/b200-192gb.8x/us-central2-a/spot", "B200-180GB-SXM", 8, 3.95, pricewatch.AvailableYes},   // "$31.60" / 8; 192 GB within 10% of 180
	} {
		scrapertest.Price(t, nr, c.key, c.card, pricewatch.ModeSpot, c.price)
		scrapertest.Rent(t, nr, c.key, pricewatch.RentFixed, c.gpus)
		if o := scrapertest.Find(t, nr, c.key); o.Available != c.avail || o.Provider != mithril.Name {
			t.Errorf("%s: available %q provider %q, want %q mithril", c.key, o.Available, o.Provider, c.avail)
		}
	}
	o := scrapertest.Find(t, nr, "mithril/h100-80gb.sxm.8x/us-central2-a/spot")
	if o.VCPUs != 208 || o.RAMGB != 1800 || o.DiskGB != 15000 || o.Interconnect != "sxm5" || o.Stock != "4 instances free" {
		t.Errorf("h100 8x: %+v stock %q", o.Machine, o.Stock)
	}
}

func TestScraper_NeedsKey(t *testing.T) {
	scrapertest.NeedsSecret(t, &mithril.Scraper{}, mithril.KeyEnv)
}

func TestDollars(t *testing.T) {
	for in, want := range map[string]float64{"$25.60": 25.6, "25.6": 25.6, " $1,024.00 ": 1024} {
		if got, err := mithril.Dollars(in); err != nil || got != want {
			t.Errorf("Dollars(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := mithril.Dollars("n/a"); err == nil {
		t.Error(`Dollars("n/a"): no error`)
	}
}

// The answers may come as bare arrays (as SkyPilot's fetcher reads them) or
// wrapped in {"data": …}; an error detail names its cause.
func TestParse_Shapes(t *testing.T) {
	types := `{"data": [{"fid": "it_1", "name": "h100-80gb.sxm.8x", "num_gpus": 8, "gpu_type": "H100", "gpu_memory_gb": 80, "gpu_socket": "SXM5"}]}`
	tt, err := mithril.ParseTypes([]byte(types))
	if err != nil || len(tt) != 1 {
		t.Fatalf("types %v, %v", tt, err)
	}
	obs, err := mithril.ParseAvailability([]byte(`[{"fid": "a", "instance_type": "it_1", "region": "r", "capacity": 1, "last_instance_price": "$12.00"}]`), tt, "u")
	if err != nil || len(obs) != 1 || obs[0].Price != 12 || obs[0].GPUCount != 8 || obs[0].GPUName != "H100 SXM5" {
		t.Errorf("%+v, %v", obs, err)
	}
	for _, c := range []struct{ name, body, want string }{
		{"detail", `{"detail": "Invalid API key"}`, "Invalid API key"},
		{"no list", `{}`, "no auctions"},
		{"no price", `[{"fid": "a", "instance_type": "it_1", "region": "r", "capacity": 1, "last_instance_price": ""}]`, "no offers parsed"},
		{"truncated", `[{"fid": `, "JSON"},
	} {
		_, err := mithril.ParseAvailability([]byte(c.body), tt, "u")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}
