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
// "32768" = 32 GiB. "disk" is left unstated (unit unknown); it-fr2 is Italy
// (normalize/data/regions.csv).
func TestScraper_PlanDetails(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "seeweb")
	nr, _ := scrapertest.Normalize("seeweb", res)
	a100 := scrapertest.Find(t, nr, "seeweb/ECS2GPU3/it-fr2/ondemand")
	if a100.VCPUs != 32 || a100.RAMGB != 240 || a100.DiskGB != 0 || a100.Country != "IT" || a100.RentURL != seeweb.RentURL {
		t.Errorf("ECS2GPU3: %v vCPUs, %v GiB, %v GiB disk, country %q, rent %q", a100.VCPUs, a100.RAMGB, a100.DiskGB, a100.Country, a100.RentURL)
	}
	l40s := scrapertest.Find(t, nr, "seeweb/ECS1GPU7/it-mi2/ondemand")
	if l40s.VCPUs != 8 || l40s.RAMGB != 32 {
		t.Errorf("ECS1GPU7: %v vCPUs, %v GiB", l40s.VCPUs, l40s.RAMGB)
	}
}
