package seeweb_test

import (
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
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
	// "A100 80GB" states no form factor: kept, unknown, at 1.98 / 2 = 0.99.
	if g.Unknown["A100 80GB (80 GB)"] != 1 {
		t.Errorf("unknown %v", g.Unknown)
	}
	if o := scrapertest.Find(t, nr, "seeweb/ECS2GPU3/it-fr2/ondemand"); o.GPUs != 2 || o.Currency != "EUR" || o.Available != pricewatch.AvailableYes {
		t.Errorf("ECS2GPU3: %+v", o)
	}
}

func TestNeedsToken(t *testing.T) {
	scrapertest.NeedsSecret(t, &seeweb.Scraper{}, seeweb.TokenEnv)
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
