package hetzner_test

import (
	"math"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers/hetzner"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// The fixture is built in the Robot API's documented shape
// (fixtures/hetzner/PROVENANCE.md): a CPU server (skipped), GEX44 (one
// location, monthly and hourly), GEX130 (two locations, monthly) and a GPU
// product the table does not know.
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "hetzner")
	nr, g := scrapertest.CheckFixture(t, "hetzner", res)
	scrapertest.FixedUnits(t, nr, "hetzner/GEX99/FSN1/monthly")
	if len(res.Observations) != 5 || g.ByMode["monthly"] != 4 || g.ByMode["ondemand"] != 1 {
		t.Fatalf("%d observations, by mode %v", len(res.Observations), g.ByMode)
	}
	// 813 EUR a month ÷ 730 h = 1.113699 per GPU-hour (one GPU).
	scrapertest.Price(t, nr, "hetzner/GEX130/NBG1/monthly", "RTX-6000-ADA", pricewatch.ModeMonthly, 813.0/730)
	// RTX 4000 SFF Ada is not the RTX 4000 Ada card: unknown, never mapped to it.
	if g.Unknown["RTX 4000 SFF Ada (20 GB)"] != 2 || g.Unknown["GEX99"] != 1 {
		t.Errorf("unknown %v", g.Unknown)
	}
	for _, o := range res.Observations {
		// GEX44 hourly 0.2949 with a monthly 184: cap 184 / 0.2949 = 623.94 h.
		if o.OfferID == "GEX44" && o.Mode == pricewatch.ModeOnDemand && math.Abs(o.MonthlyCapHours-184/0.2949) > 1e-9 {
			t.Errorf("GEX44 cap %v", o.MonthlyCapHours)
		}
	}
}

func TestNeedsCredentials(t *testing.T) {
	scrapertest.NeedsSecret(t, &hetzner.Scraper{}, hetzner.UserEnv, hetzner.PasswordEnv)
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"unauthorized", `{"error": {"status": 401, "code": "UNAUTHORIZED", "message": "Unauthorized"}}`, "UNAUTHORIZED"},
		{"no gpu", `[{"product": {"id": "EX44", "description": ["64 GB DDR4"], "prices": [{"location": "FSN1", "price": {"net": "44.0000"}}]}}]`, "no offers parsed"},
		{"null", `null`, "no product list"},
		{"truncated", `[{"product": {"id"`, "JSON"},
	} {
		_, err := hetzner.Parse([]byte(c.body), "u")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}
