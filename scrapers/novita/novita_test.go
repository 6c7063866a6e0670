package novita_test

import (
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/scrapers/novita"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// The fixture is built in the documented shape (fixtures/novita/PROVENANCE.md):
// 6 products, 8 product × region on-demand offers and 4 spot offers.
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "novita")
	nr, g := scrapertest.CheckFixture(t, "novita", res)
	if len(res.Observations) != 12 || g.ByMode["ondemand"] != 8 || g.ByMode["spot"] != 4 || len(g.Unknown) != 0 {
		t.Fatalf("%d observations, modes %v, unknown %v", len(res.Observations), g.ByMode, g.Unknown)
	}
	for _, c := range []struct {
		key, card string
		mode      pricewatch.Mode
		price     float64 // USD per GPU-hour, by hand: price ÷ 100000
		avail     pricewatch.Availability
	}{
		{"novita/1/CN-HK-01/ondemand", "RTX-4090", pricewatch.ModeOnDemand, 0.35, pricewatch.AvailableYes},      // 35000 ÷ 100000
		{"novita/1/US-CA-01/spot", "RTX-4090", pricewatch.ModeSpot, 0.175, pricewatch.AvailableYes},             // "17500" ÷ 100000
		{"novita/5/EU-DE-01/ondemand", "H100-80GB-SXM", pricewatch.ModeOnDemand, 2.25, pricewatch.AvailableYes}, // 225000 ÷ 100000
		{"novita/6/US-CA-01/ondemand", "H200-141GB-SXM", pricewatch.ModeOnDemand, 2.50, pricewatch.AvailableNo}, // availableDeploy false
		{"novita/3/EU-DE-01/ondemand", "RTX-6000-ADA", pricewatch.ModeOnDemand, 0.70, pricewatch.AvailableNo},   // 70000 ÷ 100000
	} {
		scrapertest.Price(t, nr, c.key, c.card, c.mode, c.price)
		scrapertest.Rent(t, nr, c.key, pricewatch.RentPerGPU, 1)
		if o := scrapertest.Find(t, nr, c.key); o.Available != c.avail {
			t.Errorf("%s: available %q, want %q", c.key, o.Available, c.avail)
		}
	}
	// The spot price of a product without "spot" in billingMethods is
	// not offered (RTX 5090 lists only onDemand).
	for _, o := range nr.Offers {
		if o.OfferID == "2" && o.Mode == pricewatch.ModeSpot {
			t.Errorf("%s: spot without the spot billing method", o.Key)
		}
	}
	// cpuPerGpu, memoryPerGpu and diskPerGpu come with each GPU.
	h := scrapertest.Find(t, nr, "novita/5/US-CA-01/ondemand")
	if h.VCPUs != 24 || h.RAMGB != 250 || h.DiskGB != 200 || h.RentURL != novita.RentURL {
		t.Errorf("H100: %v vCPUs, %v GB, %v GB disk", h.VCPUs, h.RAMGB, h.DiskGB)
	}
}

func TestNeedsKey(t *testing.T) {
	scrapertest.NeedsSecret(t, novita.New(), novita.KeyEnv)
}

// Product names carry their memory ("RTX 4090 24GB"): read as the GPU with
// that memory. A bare "A100 80GB" (the name Novita's SDK tests use) states
// no form factor: the A100-80GB lower-bound card (unknown before); regions
// given as the API reference's object are read by their keys.
func TestParse_Names(t *testing.T) {
	obs, err := novita.Parse([]byte(`{"data": [
	  {"id": "a", "name": "A100 80GB", "price": 160000, "availableDeploy": true, "regions": {"CN-HK-01": {}}},
	  {"id": "b", "name": "RTX 3090", "price": "20000", "regions": []}]}`), "u")
	if err != nil || len(obs) != 2 {
		t.Fatalf("%+v, %v", obs, err)
	}
	if obs[0].GPUName != "A100" || obs[0].GPUMemoryGB != 80 || obs[0].Region != "CN-HK-01" || obs[0].Price != 1.6 {
		t.Errorf("A100: %+v", obs[0])
	}
	if obs[1].GPUName != "RTX 3090" || obs[1].GPUMemoryGB != 0 || obs[1].Region != "" || obs[1].Available != "" || obs[1].Price != 0.2 {
		t.Errorf("RTX 3090: %+v", obs[1])
	}
	nr := normalize.DefaultCatalog().Normalize(obs, scrapertest.At)
	if len(nr.Unknown) != 0 {
		t.Errorf("unknown %v, want none", nr.Unknown)
	}
	scrapertest.Price(t, nr, "novita/a/CN-HK-01/ondemand", "A100-80GB", pricewatch.ModeOnDemand, 1.6) // 160000 ÷ 100000
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"error", `{"code": 401, "reason": "UNAUTHORIZED", "message": "invalid api key"}`, "invalid api key"},
		{"no data", `{}`, "no data array"},
		{"unpriced", `{"data": [{"id": "x", "name": "L4 24GB", "price": 0}]}`, "no offers parsed"},
		{"truncated", `{"data": [`, "JSON"},
	} {
		_, err := novita.Parse([]byte(c.body), "u")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}
