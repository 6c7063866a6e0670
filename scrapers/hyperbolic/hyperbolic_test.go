package hyperbolic_test

import (
	"encoding/csv"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/scrapers/hyperbolic"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// The fixture is SkyPilot's whole Hyperbolic catalog (real rows of the
// endpoint's answer) in the answer's JSON envelope
// (fixtures/hyperbolic/PROVENANCE.md): 37 instances, H100 and RTX 4090.
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "hyperbolic")
	nr, g := scrapertest.CheckFixture(t, "hyperbolic", res)
	scrapertest.FixedUnits(t, nr)
	if len(res.Observations) != 37 || len(g.Unknown) != 0 {
		t.Fatalf("%d observations, unknown %v; want 37, all mapped", len(res.Observations), g.Unknown)
	}
	for _, c := range []struct {
		key, card string
		gpus      int
		price     float64 // USD per GPU-hour, by hand
	}{
		// "NVIDIA-H100-80GB-HBM3" is the nvidia-smi name of the SXM part.
		{"hyperbolic/8x-H100-224-2165/-/ondemand", "H100-80GB-SXM", 8, 1.39}, // 11.12 / 8 = 1.39
		{"hyperbolic/1x-H100-45-433/-/ondemand", "H100-80GB-SXM", 1, 1.29},   // 1.29 / 1
		{"hyperbolic/6x-H100-192-1856/-/ondemand", "H100-80GB-SXM", 6, 1.29}, // 7.74 / 6 = 1.29
		{"hyperbolic/7x-RTX4090-64-271/-/ondemand", "RTX-4090", 7, 0.25},     // 1.75 / 7 = 0.25
		{"hyperbolic/1x-RTX4090-64-271/-/ondemand", "RTX-4090", 1, 0.23},     // 0.23 / 1
	} {
		scrapertest.Price(t, nr, c.key, c.card, pricewatch.ModeOnDemand, c.price)
		scrapertest.Rent(t, nr, c.key, pricewatch.RentFixed, c.gpus)
	}
	o := scrapertest.Find(t, nr, "hyperbolic/2x-H100-90-866/-/ondemand")
	if o.VCPUs != 90 || o.RAMGB != 866 || o.DiskGB != 960 || o.Region != "" || o.RentURL != hyperbolic.RentURL {
		t.Errorf("2x: %v vCPUs, %v GiB, %v GiB disk, region %q", o.VCPUs, o.RAMGB, o.DiskGB, o.Region)
	}
}

// SkyPilot's catalog (skypilot-vms.csv, its fetcher's output from the
// same endpoint): every row is an offer here at the same instance price.
func TestScraper_MatchesSkyPilotCatalog(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "hyperbolic")
	got := map[string]float64{}
	for _, o := range res.Observations {
		got[o.OfferID] = o.Price
	}
	b, err := fs.ReadFile(fixtures.FS(), "hyperbolic/skypilot-vms.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	for _, r := range rows[1:] {
		want, _ := strconv.ParseFloat(r[6], 64)
		if p, ok := got[r[0]]; !ok || math.Abs(p-want) > 1e-9 {
			t.Errorf("%s: %v (found %v), SkyPilot %v", r[0], p, ok, want)
		}
	}
}

func TestNeedsKey(t *testing.T) {
	scrapertest.NeedsSecret(t, hyperbolic.New(), hyperbolic.KeyEnv)
}

func TestParse(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"detail", `{"detail": "Could not validate credentials"}`, "Could not validate credentials"},
		{"no vms", `{}`, "no vms array"},
		{"empty", `{"vms": []}`, "no offers parsed"},
		{"fractional count", `{"vms": [{"InstanceType": "x", "AcceleratorName": "H100", "AcceleratorCount": 0.5, "Price": 1}]}`, "no offers parsed"},
		{"truncated", `{"vms": [`, "JSON"},
	} {
		_, err := hyperbolic.Parse([]byte(c.body), "u")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
	// A SpotPrice is a second offer in spot mode; numbers may be strings.
	obs, err := hyperbolic.Parse([]byte(`{"vms": [{"InstanceType": "1x-H200", "AcceleratorName": "H200", "AcceleratorCount": "1",
	  "Price": "2.20", "SpotPrice": "1.10", "Region": "us-central-1"}]}`), "u")
	if err != nil || len(obs) != 2 || obs[1].Mode != pricewatch.ModeSpot || obs[1].Price != 1.10 || obs[0].Region != "us-central-1" {
		t.Errorf("%+v, %v", obs, err)
	}
}
