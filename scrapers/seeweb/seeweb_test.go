package seeweb_test

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
	"github.com/pricewatch/pricewatch/scrapers/seeweb"
)

// The fixture is gpuhunt's test payload, which "mirrors the live /plans
// shape" (fixtures/seeweb/PROVENANCE.md): 3 GPU plans, one CPU plan.
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "seeweb")
	nr, g := scrapertest.CheckFixture(t, "seeweb", res)
	scrapertest.FixedUnits(t, nr)
	// ECS1GPU7 in two regions, ECS2GPU3 and ECS1GPU9 in one; eCS4 skipped.
	if len(res.Observations) != 4 {
		t.Fatalf("%d observations, want 4", len(res.Observations))
	}
	scrapertest.Price(t, nr, "seeweb/ECS1GPU7/it-mi2/ondemand", "L40S", pricewatch.ModeOnDemand, 0.85)
	scrapertest.Price(t, nr, "seeweb/ECS1GPU9/it-fr2/ondemand", "MI300X-192GB", pricewatch.ModeOnDemand, 1.6)
	// "A100 80GB" states no form factor: the A100-80GB lower-bound card
	// (unknown before), at 1.98 / 2 = 0.99.
	scrapertest.Price(t, nr, "seeweb/ECS2GPU3/it-fr2/ondemand", "A100-80GB", pricewatch.ModeOnDemand, 0.99)
	if len(g.Unknown) != 0 {
		t.Errorf("unknown %v, want none", g.Unknown)
	}
	// available: true is an active plan, not stock: unknown.
	if o := scrapertest.Find(t, nr, "seeweb/ECS2GPU3/it-fr2/ondemand"); o.GPUs != 2 || o.Currency != "EUR" || o.Available != pricewatch.AvailableUnknown {
		t.Errorf("ECS2GPU3: %+v", o)
	}
}

func TestNeedsToken(t *testing.T) {
	scrapertest.NeedsSecret(t, seeweb.New(), seeweb.TokenEnv)
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"api error", `{"status": "error", "message": "invalid token"}`, "invalid token"},
		{"no plans", `{"status": "ok"}`, "no plans array"},
		{"cpu only", `{"status": "ok", "plans": [{"name": "eCS4", "gpu": "0", "hourly_price": 0.063}]}`, "no offers parsed"},
		{"truncated", `{"status": "ok", "plans": [`, "JSON"},
	} {
		_, err := seeweb.Parse([]byte(c.body), "u")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

// What comes with a plan, from fixtures/seeweb/plans.json: ECS2GPU3 "cpu":
// "32", "ram": "245760" MiB = 245760 / 1024 = 240 GiB; ECS1GPU7 "8" and
// "32768" = 32 GiB. "disk" is left unstated (unit unknown); it-fr2 and it-mi2 are Italy
// (normalize/data/regions.csv).
func TestScraper_PlanDetails(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "seeweb")
	nr, _ := scrapertest.Normalize("seeweb", res)
	for _, c := range []struct {
		key        string
		vcpus, ram float64
	}{
		{"seeweb/ECS2GPU3/it-fr2/ondemand", 32, 240},
		{"seeweb/ECS1GPU7/it-mi2/ondemand", 8, 32},
	} {
		o := scrapertest.Find(t, nr, c.key)
		if o.VCPUs != c.vcpus || o.RAMGB != c.ram || o.DiskGB != 0 || o.Country != "IT" || o.RentURL != seeweb.RentURL {
			t.Errorf("%s: %v vCPUs, %v GiB, %v GiB disk, country %q, rent %q; want %v, %v", c.key, o.VCPUs, o.RAMGB, o.DiskGB, o.Country, o.RentURL, c.vcpus, c.ram)
		}
	}
}

// The 27 GPU plans of a real plan list (fixtures/seeweb/plans-skypilot-catalog.json:
// SkyPilot's Seeweb catalog, built from the live /plans answer, with each
// gpu_label as SkyPilot's fetcher maps it; see PROVENANCE.md). The label
// keeps its memory word ("L4 24GB"): before the scraper dropped it, 22 of
// the 27 plans were unknown (only "L40s 48GB", by a Seeweb alias, and "A30"
// mapped). Without it 17 map, and all 27 since A100 and H100 (no form
// factor) and RTX PRO 6000 (no edition) map to the lower-bound cards.
func TestParse_RealPlanLabels(t *testing.T) {
	body, err := fs.ReadFile(fixtures.FS(), "seeweb/plans-skypilot-catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	obs, err := seeweb.Parse(body, "u")
	if err != nil {
		t.Fatal(err)
	}
	cat := normalize.DefaultCatalog()
	plans, mapped := map[string]string{}, map[string]int{}
	for _, o := range obs {
		if o.Available != "" {
			t.Errorf("%s: available %q: the plan list states no stock", o.OfferID, o.Available)
		}
		card, _ := cat.Resolve("seeweb", o.GPUName, o.GPUMemoryGB)
		if prev, ok := plans[o.OfferID]; ok && prev != card {
			t.Errorf("%s: cards %q and %q", o.OfferID, prev, card)
		}
		plans[o.OfferID] = card
		if card == "" {
			mapped["unknown: "+o.GPUName]++
		}
	}
	byCard := map[string]int{}
	for _, c := range plans {
		byCard[c]++
	}
	want := map[string]int{"L4": 4, "RTX-A6000": 3, "H200-141GB-SXM": 4, "L40S": 4, "A30": 1, "QUADRO-RTX-6000": 1,
		"A100-80GB": 3, "H100-80GB": 3, "RTX-PRO-6000-96GB": 4}
	if len(plans) != 27 {
		t.Fatalf("%d plans, want 27", len(plans))
	}
	for c, n := range want {
		if byCard[c] != n {
			t.Errorf("%d plans map to %q, want %d (all: %v; unknown offers %v)", byCard[c], c, n, byCard, mapped)
		}
	}
	for name := range mapped {
		t.Errorf("%s", name)
	}
}

// The label's memory word is the GPU's memory and not part of its name;
// available false (an inactive plan) is not available, true says nothing.
func TestParse_LabelAndActive(t *testing.T) {
	for _, c := range []struct {
		label, available string
		name             string
		memory           float64
		avail            pricewatch.Availability
	}{
		{"L4 24GB", "true", "L4", 24, ""},
		{"RTX A6000 48GB", "true", "RTX A6000", 48, ""},
		{"NVIDIA L40s  48 GB", "false", "NVIDIA L40s", 48, pricewatch.AvailableNo},
		{"MI300X", "null", "MI300X", 0, ""},
		{"80GB", "true", "80GB", 80, ""},
	} {
		body := `{"status":"ok","plans":[{"name":"P","gpu":"1","gpu_label":"` + c.label + `","hourly_price":1,"available":` + c.available + `,"available_regions":[{"location":"it-fr2"}]}]}`
		obs, err := seeweb.Parse([]byte(body), "u")
		if err != nil || len(obs) != 1 {
			t.Fatalf("%q: %v %v", c.label, obs, err)
		}
		o := obs[0]
		if o.GPUName != c.name || o.GPUMemoryGB != c.memory || o.Available != c.avail {
			t.Errorf("%q (available %s): %q, %v GB, %q; want %q, %v, %q", c.label, c.available, o.GPUName, o.GPUMemoryGB, o.Available, c.name, c.memory, c.avail)
		}
		if c.avail == pricewatch.AvailableNo && o.Stock != seeweb.PlanInactive {
			t.Errorf("%q: stock %q", c.label, o.Stock)
		}
	}
}
