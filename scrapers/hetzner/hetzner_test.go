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
	// GEX44's "NVIDIA RTX 4000 SFF Ada Generation" (20 GB, Hetzner's GEX44
	// page) is its own card, the 70 W RTX-4000-SFF-ADA, not the 130 W RTX
	// 4000 Ada; before the card existed both GEX44 offers were unknown.
	// 184 EUR a month ÷ 730 h = 0.252055 per GPU-hour; hourly 0.2949.
	scrapertest.Price(t, nr, "hetzner/GEX44/FSN1/monthly", "RTX-4000-SFF-ADA", pricewatch.ModeMonthly, 184.0/730)
	scrapertest.Price(t, nr, "hetzner/GEX44/FSN1/ondemand", "RTX-4000-SFF-ADA", pricewatch.ModeOnDemand, 0.2949)
	if len(g.Unknown) != 1 || g.Unknown["GEX99"] != 1 {
		t.Errorf("unknown %v, want only the made-up GEX99", g.Unknown)
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

// The answer as Hetzner's Robot web service reference documents it
// (robot.hetzner.com/doc/webservice/en.html, "GET /order/server/product"
// and "…/product/{product-id}"): an array of {"product": …}; location,
// dist and arch arrays; prices per location with string amounts in euros;
// price.hourly_net "if the product is billed hourly, null otherwise". The
// reference's own example (EX40, no GPU) parses and is skipped; the same
// product as a GEX130 in FSN1 billed hourly and in NBG1 not gives three
// offers: 84.03 a month ÷ 730 h = 0.115110 per GPU-hour monthly, 0.1347
// an hour capped at 84.03 ÷ 0.1347 = 623.83 h, and NBG1 monthly only.
func TestParse_TheReferenceExample(t *testing.T) {
	product := func(id, nbgHourly string) string {
		return `[{"product": {"id": "` + id + `", "name": "Dedicated Server ` + id + `",
		 "description": ["Intel\u00ae Core\u2122 i7-4770 Quad-Core Haswell", "32 GB DDR3 RAM"],
		 "traffic": "30 TB", "dist": ["Rescue system", "Debian 7.7 minimal"], "@deprecated arch": [64, 32], "lang": ["en"],
		 "location": ["FSN1", "NBG1"],
		 "prices": [
		  {"location": "FSN1", "price": {"net": "84.03", "gross": "84.03", "hourly_net": "0.1347", "hourly_gross": "0.1347"}, "price_setup": {"net": "41.18", "gross": "41.18"}},
		  {"location": "NBG1", "price": {"net": "84.03", "gross": "84.03", "hourly_net": ` + nbgHourly + `, "hourly_gross": ` + nbgHourly + `}, "price_setup": {"net": "41.18", "gross": "41.18"}}],
		 "orderable_addons": [{"id": "primary_ipv4", "name": "Primary IPv4", "min": 0, "max": 1,
		  "prices": [{"location": "FSN1", "price": {"net": "1.7000", "gross": "1.7000", "hourly_net": "0.0027", "hourly_gross": "0.0027"}, "price_setup": {"net": "0.0000", "gross": "0.0000"}}]}]}}]`
	}
	if _, err := hetzner.Parse([]byte(product("EX40", `"0.1347"`)), "u"); err == nil || !strings.Contains(err.Error(), "no offers parsed") {
		t.Errorf("EX40 (no GPU): %v, want no offers parsed", err)
	}
	obs, err := hetzner.Parse([]byte(product("GEX130", "null")), "u")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]pricewatch.Observation{}
	for _, o := range obs {
		got[o.Region+"/"+string(o.Mode)] = o
	}
	if len(obs) != 3 || got["FSN1/monthly"].Price != 84.03 || got["NBG1/monthly"].Price != 84.03 || got["NBG1/ondemand"].Mode != "" {
		t.Fatalf("%+v", obs)
	}
	if h := got["FSN1/ondemand"]; h.Price != 0.1347 || math.Abs(h.MonthlyCapHours-84.03/0.1347) > 1e-9 {
		t.Errorf("FSN1 hourly: %+v", h)
	}
}
