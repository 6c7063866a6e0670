package cloudrift_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers/cloudrift"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// The fixture is built in the documented shape (fixtures/cloudrift/PROVENANCE.md):
// 5 variants, 6 variant-datacenter offers.
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "cloudrift")
	nr, g := scrapertest.CheckFixture(t, "cloudrift", res)
	if len(res.Observations) != 6 {
		t.Fatalf("%d observations, want 6 (the RTX 4090 ×1 in two datacenters)", len(res.Observations))
	}
	// RTX PRO 6000 names no edition (workstation, server, Max-Q): unknown.
	if g.Unknown["RTX PRO 6000 (96 GB)"] != 1 {
		t.Errorf("unknown %v: the RTX PRO 6000 must stay unknown", g.Unknown)
	}
	for _, c := range []struct {
		key, card string
		gpus      int
		price     float64 // USD per GPU-hour, by hand
		avail     pricewatch.Availability
	}{
		{"cloudrift/rtx49-7c-n.1/us-east-nc-nr-1/ondemand", "RTX-4090", 1, 0.39, pricewatch.AvailableYes},  // 39 ¢ / 1
		{"cloudrift/rtx49-7c-n.1/eu-west-1/ondemand", "RTX-4090", 1, 0.39, pricewatch.AvailableNo},         // 0 nodes free
		{"cloudrift/rtx49-7c-n.8/us-east-nc-nr-1/ondemand", "RTX-4090", 8, 0.39, pricewatch.AvailableYes},  // 312 ¢ / 8 = 39 ¢
		{"cloudrift/rtx59-16c-n.2/us-east-nc-nr-1/ondemand", "RTX-5090", 2, 0.65, pricewatch.AvailableYes}, // 130 ¢ / 2
		{"cloudrift/mi350x-16c.8/us-west-3/ondemand", "MI350X-288GB", 8, 2.50, pricewatch.AvailableNo},     // 2000 ¢ / 8
	} {
		scrapertest.Price(t, nr, c.key, c.card, pricewatch.ModeOnDemand, c.price)
		scrapertest.Rent(t, nr, c.key, pricewatch.RentFixed, c.gpus)
		if o := scrapertest.Find(t, nr, c.key); o.Available != c.avail {
			t.Errorf("%s: available %q, want %q", c.key, o.Available, c.avail)
		}
	}
}

func TestRequestBody(t *testing.T) {
	var b struct {
		Version string         `json:"version"`
		Data    map[string]any `json:"data"`
	}
	if err := json.Unmarshal(cloudrift.RequestBody(), &b); err != nil || b.Version == "" || b.Data["selector"] != "All" {
		t.Errorf("%s: %v", cloudrift.RequestBody(), err)
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"bare string", `"User cannot be authenticated from the request"`, "User cannot be authenticated"},
		{"no list", `{"version": "2025-03-21", "data": {}}`, "no data.instance_types"},
		{"no priced variant", `{"data": {"instance_types": [{"brand_short": "RTX 4090", "variants": [{"name": "a.1", "gpu_count": 1, "cost_per_hour": null, "nodes_per_dc": {"x": 1}}]}]}}`, "no offers parsed"},
		{"truncated", `{"data": {"instance_types": [`, "JSON"},
	} {
		_, err := cloudrift.Parse([]byte(c.body), "u")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}
