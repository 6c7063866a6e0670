package cudo_test

import (
	"encoding/csv"
	"io/fs"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/scrapers/cudo"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// The fixture (fixtures/cudo/PROVENANCE.md): 7 machine types whose
// component prices reproduce SkyPilot's real Cudo catalog rows, gpuhunt's
// 2 test machine types, and a CPU-only type (left out): 9 offers.
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "cudo")
	nr, g := scrapertest.CheckFixture(t, "cudo", res)
	if len(res.Observations) != 9 || len(g.Unknown) != 0 {
		t.Fatalf("%d observations, unknown %v; want 9, all mapped", len(res.Observations), g.Unknown)
	}
	for _, c := range []struct {
		key, card string
		price     float64 // USD per GPU-hour = gpu + 2 × vCPU + 4 × GiB, by hand
		most      int     // maxGpuFree
		avail     pricewatch.Availability
	}{
		// 2.50 + 2 × 0.0045 + 4 × 0.0066 = 2.50 + 0.009 + 0.0264 = 2.5354 (SkyPilot sapphire-rapids-h100_1x2v4gb, ca-montreal-3)
		{"cudo/sapphire-rapids-h100/ca-montreal-3/ondemand", "H100-80GB-SXM", 2.5354, 8, pricewatch.AvailableYes},
		// 1.79 + 0.009 + 4 × 0.0056 = 1.8214 (SkyPilot, no-kristiansand-1)
		{"cudo/sapphire-rapids-h100/no-kristiansand-1/ondemand", "H100-80GB-SXM", 1.8214, 8, pricewatch.AvailableYes},
		// 0.3344 + 0.009 + 0.0264 = 0.3698 ("A40 (compute mode)")
		{"cudo/ice-lake-a40-compute/ca-montreal-3/ondemand", "A40", 0.3698, 4, pricewatch.AvailableYes},
		// gpuhunt's payload: 0.52 + 2 × 0.0021 + 4 × 0.0034 = 0.52 + 0.0042 + 0.0136 = 0.5378
		{"cudo/epyc-rome-rtx-a5000/no-luster-1/ondemand", "RTX-A5000", 0.5378, 4, pricewatch.AvailableYes},
		// 1.498 + 0.009 + 0.0224 = 1.5294; maxGpuFree 0: not available, a 1-GPU VM when free
		{"cudo/epyc-genoa-a100-pcie/no-kristiansand-1/ondemand", "A100-80GB-PCIE", 1.5294, 1, pricewatch.AvailableNo},
	} {
		scrapertest.Price(t, nr, c.key, c.card, pricewatch.ModeOnDemand, c.price)
		counts := make([]int, c.most)
		for i := range counts {
			counts[i] = i + 1
		}
		scrapertest.Rent(t, nr, c.key, pricewatch.RentPerGPU, counts...)
		if o := scrapertest.Find(t, nr, c.key); o.Available != c.avail {
			t.Errorf("%s: available %q, want %q", c.key, o.Available, c.avail)
		}
	}
	// The largest VM free now: 8 GPUs with 8 × 2 vCPUs and 8 × 4 GiB.
	h := scrapertest.Find(t, nr, "cudo/sapphire-rapids-h100/ca-montreal-3/ondemand")
	if h.GPUs != 8 || h.VCPUs != 16 || h.RAMGB != 32 || h.Stock != "8 GPUs free on one host, 16 in the data center" {
		t.Errorf("H100: %d GPUs, %v vCPUs, %v GiB, stock %q", h.GPUs, h.VCPUs, h.RAMGB, h.Stock)
	}
}

var instRe = regexp.MustCompile(`^(.+)_([0-9]+)x([0-9]+)v([0-9]+)gb$`)

// SkyPilot's Cudo fetcher (an independent parser of the machine types)
// priced VMs of its fixed sizes; every row of its real catalog excerpt
// whose machine type the fixture holds is priced the same here by the
// component formula, and its 1-GPU 2-vCPU 4-GiB rows are the offers'
// prices. The excerpt's V100 row (us-newyork-1) is not in the fixture.
func TestScraper_MatchesSkyPilotCatalog(t *testing.T) {
	b, err := fs.ReadFile(fixtures.FS(), "cudo/machine-types-2.json")
	if err != nil {
		t.Fatal(err)
	}
	mts, err := cudo.ParseMachineTypes(b)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]cudo.MachineType{}
	for _, m := range mts {
		byKey[m.MachineType+"@"+m.DataCenterID] = m
	}
	offers := map[string]float64{}
	for _, o := range scrapertest.ScrapeFixtures(t, "cudo").Observations {
		offers[o.OfferID+"@"+o.Region] = o.Price
	}
	c, err := fs.ReadFile(fixtures.FS(), "cudo/skypilot-vms-excerpt.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(c))).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	checked := 0
	for _, r := range rows[1:] {
		m := instRe.FindStringSubmatch(r[0])
		if m == nil {
			t.Fatalf("instance type %q", r[0])
		}
		mt, ok := byKey[m[1]+"@"+r[6]]
		if !ok {
			if m[1] != "intel-broadwell-v100" {
				t.Errorf("%s in %s: not in the fixture", r[0], r[6])
			}
			continue
		}
		g, _ := strconv.ParseFloat(m[2], 64)
		v, _ := strconv.ParseFloat(m[3], 64)
		gib, _ := strconv.ParseFloat(m[4], 64)
		want, _ := strconv.ParseFloat(r[5], 64)
		if p, ok := mt.VMPrice(g, v, gib); !ok || math.Abs(p-want) > 1e-9 {
			t.Errorf("%s in %s: %v, SkyPilot %v", r[0], r[6], p, want)
		}
		if g == 1 && v == 2 && gib == 4 {
			if p := offers[m[1]+"@"+r[6]]; math.Abs(p-want) > 1e-9 {
				t.Errorf("offer %s in %s: %v, SkyPilot %v", m[1], r[6], p, want)
			}
		}
		checked++
	}
	if checked != 11 {
		t.Errorf("%d rows checked, want the excerpt's 11 besides the V100", checked)
	}
}

// The key is optional: sent as a Bearer token when set, and the request
// is made without one otherwise.
func TestScrape_OptionalKey(t *testing.T) {
	res, err := scrapertest.ScrapeWith(t, "cudo", fixtures.Handler(fixtures.FS()), scrapertest.NoSecret)
	if err != nil || len(res.Observations) != 9 {
		t.Fatalf("without a key: %d observations, %v", len(res.Observations), err)
	}
}

func TestParse_Errors(t *testing.T) {
	s := &cudo.Scraper{VCPUsPerGPU: 2, RAMGiBPerGPU: 4}
	for _, c := range []struct{ name, body, want string }{
		{"error", `{"code": 16, "message": "unauthenticated"}`, "unauthenticated"},
		{"no list", `{}`, "no machineTypes"},
		{"no GPU", `{"machineTypes": [{"dataCenterId": "x", "machineType": "epyc", "gpuModel": "", "gpuPriceHr": {"value": "0"}, "vcpuPriceHr": {"value": "0.002"}, "memoryGibPriceHr": {"value": "0.003"}}]}`, "no offers parsed"},
		{"missing part", `{"machineTypes": [{"dataCenterId": "x", "machineType": "m", "gpuModel": "RTX A5000", "gpuPriceHr": {"value": "0.5"}}]}`, "no offers parsed"},
		{"truncated", `{"machineTypes": [`, "JSON"},
	} {
		_, err := s.Parse([]byte(c.body), "u")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}
