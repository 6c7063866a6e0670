package oracle_test

import (
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/scrapers/oracle"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// The fixture is built in the price list's shape (fixtures/oracle/PROVENANCE.md):
// two CPU parts (skipped) and 11 GPU parts billing 15 shapes.
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "oracle")
	nr, g := scrapertest.CheckFixture(t, "oracle", res)
	scrapertest.FixedUnits(t, nr)
	if len(res.Observations) != 15 || len(g.Unknown) != 0 {
		t.Fatalf("%d observations, unknown %v; want 15 shapes, all mapped", len(res.Observations), g.Unknown)
	}
	for _, c := range []struct {
		key, card string
		gpus      int
		price     float64 // USD per GPU-hour: the part's price, whatever the count
	}{
		{"oracle/BM.GPU.H100.8/-/ondemand", "H100-80GB-SXM", 8, 10.0},     // 8 × 10.00 = 80.00 an hour for the shape
		{"oracle/VM.GPU.A10.2/-/ondemand", "A10", 2, 2.0},                 // 2 × 2.00 = 4.00
		{"oracle/BM.GPU4.8/-/ondemand", "A100-40GB-SXM", 8, 3.05},         // 8 × 3.05 = 24.40
		{"oracle/BM.GPU.GB200.4/-/ondemand", "B200-186GB-GB200", 4, 16.0}, // 4 × 16.00 = 64.00
		{"oracle/VM.GPU3.4/-/ondemand", "V100-16GB-SXM2", 4, 2.95},
		{"oracle/VM.GPU2.1/-/ondemand", "P100-16GB-PCIE", 1, 1.275},
	} {
		scrapertest.Price(t, nr, c.key, c.card, pricewatch.ModeOnDemand, c.price)
		scrapertest.Rent(t, nr, c.key, pricewatch.RentFixed, c.gpus)
	}
}

func TestParse_Cases(t *testing.T) {
	body := `{"items": [
	 {"partNumber": "B199999", "displayName": "Compute - GPU - X9", "metricName": "GPU Per Hour",
	  "currencyCodeLocalizations": [{"currencyCode": "USD", "prices": [{"model": "PAY_AS_YOU_GO", "value": 9}]}]},
	 {"partNumber": "B98415", "displayName": "Compute - GPU - H100", "metricName": "GPU Per Hour",
	  "currencyCodeLocalizations": [{"currencyCode": "EUR", "prices": [{"model": "PAY_AS_YOU_GO", "value": 9.3}]}]},
	 {"partNumber": "B95909", "displayName": "Compute - GPU - A10", "metricName": "GPU Per Hour",
	  "currencyCodeLocalizations": [{"currencyCode": "USD", "prices": [{"model": "MONTHLY_COMMIT", "value": 1.5}, {"model": "PAY_AS_YOU_GO", "value": 2}]}]}
	]}`
	obs, err := oracle.Parse([]byte(body), "u")
	if err != nil {
		t.Fatal(err)
	}
	// The unknown part once, the H100 not at all (no USD price), the A10's three shapes.
	if len(obs) != 4 {
		t.Fatalf("%d observations: %+v", len(obs), obs)
	}
	nr := normalize.DefaultCatalog().Normalize(obs, scrapertest.At)
	scrapertest.Price(t, nr, "oracle/BM.GPU.A10.4/-/ondemand", "A10", pricewatch.ModeOnDemand, 2) // PAY_AS_YOU_GO, not the commit price
	if u := scrapertest.Find(t, nr, "oracle/B199999/-/ondemand"); u.Card != "" || u.RentUnit != "" {
		t.Errorf("unknown part: %+v", u)
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"no items", `{"hasMore": false}`, "no items array"},
		{"no gpu part", `{"items": [{"partNumber": "B97384", "metricName": "OCPU Per Hour"}]}`, "no offers parsed"},
		{"truncated", `{"items": [{"partNumber"`, "JSON"},
	} {
		_, err := oracle.Parse([]byte(c.body), "u")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

func TestListURL(t *testing.T) {
	u, err := oracle.ListURL("https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/")
	if err != nil || u != "https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD" {
		t.Errorf("%s %v", u, err)
	}
}
