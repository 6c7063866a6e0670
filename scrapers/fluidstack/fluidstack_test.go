package fluidstack_test

import (
	"encoding/csv"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/scrapers/fluidstack"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// The fixture is rebuilt from SkyPilot's Fluidstack catalog
// (fixtures/fluidstack/PROVENANCE.md): 4 plans, 7 plan × region offers.
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "fluidstack")
	nr, g := scrapertest.CheckFixture(t, "fluidstack", res)
	if len(res.Observations) != 7 || len(g.Unknown) != 0 {
		t.Fatalf("%d observations, unknown %v; want 7, all mapped", len(res.Observations), g.Unknown)
	}
	for _, c := range []struct {
		key, card string
		counts    []int
		price     float64 // USD per GPU-hour: price_per_gpu_hr
	}{
		{"fluidstack/H100_PCIE_80GB/UTAH_USA/ondemand", "H100-80GB-PCIE", []int{1, 2, 4}, 2.89},       // SkyPilot: ::4 11.56 / 4 = 2.89
		{"fluidstack/A100_PCIE_80GB/ARIZONA_USA/ondemand", "A100-80GB-PCIE", []int{1, 2, 4, 8}, 1.80}, // ::8 14.4 / 8 = 1.80
		{"fluidstack/L40_48GB/CANADA/ondemand", "L40", []int{1, 2, 4, 8}, 1.25},                       // ::2 2.5 / 2 = 1.25
		{"fluidstack/H100_NVLINK_80GB/FINLAND/ondemand", "H100-80GB-PCIE", []int{8}, 2.99},            // ::8 23.92 / 8 = 2.99
	} {
		scrapertest.Price(t, nr, c.key, c.card, pricewatch.ModeOnDemand, c.price)
		scrapertest.Rent(t, nr, c.key, pricewatch.RentPerGPU, c.counts...)
	}
	if o := scrapertest.Find(t, nr, "fluidstack/H100_NVLINK_80GB/FINLAND/ondemand"); o.Interconnect != "nvlink" {
		t.Errorf("H100_NVLINK_80GB: link %q, want nvlink", o.Interconnect)
	}
}

// SkyPilot's fetcher (an independent parser of the same answer) wrote
// skypilot-vms.csv: each row, a GPU type at a count in a region, is an
// offer here whose counts include that count, at the same VM price
// (count × per-GPU price).
func TestScraper_MatchesSkyPilotCatalog(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "fluidstack")
	b, err := fs.ReadFile(fixtures.FS(), "fluidstack/skypilot-vms.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	for _, r := range rows[1:] {
		typ, n, _ := strings.Cut(r[0], "::")
		count, _ := strconv.Atoi(n)
		want, _ := strconv.ParseFloat(r[5], 64)
		found := false
		for _, o := range res.Observations {
			if o.OfferID == typ && o.Region == r[6] && slices.Contains(o.GPUCounts, count) {
				found = math.Abs(o.Price*float64(count)-want) < 1e-9
			}
		}
		if !found {
			t.Errorf("%s in %s at %v: no offer with that price", r[0], r[6], want)
		}
	}
}

func TestNeedsKey(t *testing.T) {
	scrapertest.NeedsSecret(t, fluidstack.New(), fluidstack.KeyEnv)
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"error object", `{"detail": "Invalid API key"}`, "Invalid API key"},
		{"null", `null`, "null instead of the plan list"},
		{"no counts", `[{"gpu_type": "L40_48GB", "gpu_counts": [], "price_per_gpu_hr": 1.25, "regions": ["CANADA"]}]`, "no offers parsed"},
		{"no price", `[{"gpu_type": "L40_48GB", "gpu_counts": [1], "price_per_gpu_hr": null}]`, "no offers parsed"},
		{"truncated", `[{"gpu_type": `, "JSON"},
	} {
		_, err := fluidstack.Parse([]byte(c.body), "u")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}
