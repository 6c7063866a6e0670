package oracle_test

import (
	"encoding/csv"
	"io/fs"
	"maps"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/scrapers/oracle"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// The fixture is a real price list answer (fixtures/oracle/PROVENANCE.md):
// 35 parts, of which 23 GPU-hour rentals billing 22 known shapes, and 12
// GPU-hour parts that are no rental (8 NVIDIA AI Enterprise licences, 3
// Cloud@Customer parts; before the fence in isGPUPart they were 11 unknown
// offers, 34 in all, 59% mapped) beside per-node, per-day and OCPU parts.
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "oracle")
	nr, g := scrapertest.CheckFixture(t, "oracle", res)
	scrapertest.FixedUnits(t, nr, "oracle/B93544/-/ondemand")
	// Unknown, never guessed: "E4" names no GPU. H100T's shape (read from
	// OCI scripts) and the RTX PRO 6000 state no form factor or edition:
	// they rank as the lower-bound cards, below.
	want := map[string]int{"B93544 OCI - Compute - GPU - E4": 1}
	if len(res.Observations) != 23 || !maps.Equal(g.Unknown, want) {
		t.Fatalf("%d observations, unknown %v; want 23 (22 shapes + 1 unknown part), unknown %v", len(res.Observations), g.Unknown, want)
	}
	for _, c := range []struct {
		key, card string
		gpus      int
		price     float64 // USD per GPU-hour: the part's price, whatever the count
	}{
		{"oracle/BM.GPU.H100.8/-/ondemand", "H100-80GB-SXM", 8, 10.0},      // B98415 10; 8 × 10.00 = 80.00 an hour for the shape
		{"oracle/BM.GPU.H100T.8/-/ondemand", "H100-80GB", 8, 10.75},        // B109480 10.75; 8 × 10.75 = 86.00 (form not stated: lower bound)
		{"oracle/BM.GPU.RTXPRO.8/-/ondemand", "RTX-PRO-6000-96GB", 8, 4.5}, // B112613 4.5; 8 × 4.50 = 36.00 (edition not stated: lower bound)
		{"oracle/VM.GPU.A10.2/-/ondemand", "A10", 2, 2.0},                  // B95909 2; 2 × 2.00 = 4.00
		{"oracle/BM.GPU4.8/-/ondemand", "A100-40GB-SXM", 8, 3.05},          // B92740 3.05; 8 × 3.05 = 24.40
		{"oracle/BM.GPU.GB200.4/-/ondemand", "B200-186GB-GB200", 4, 16.0},  // B110979 16; 4 × 16.00 = 64.00
		{"oracle/BM.GPU.B300.8/-/ondemand", "B300-288GB-SXM", 8, 15.0},     // B112237 15; 8 × 15.00 = 120.00
		{"oracle/BM.GPU.GB300.4/-/ondemand", "B300-288GB-GB300", 4, 18.0},  // B112140 18; 4 × 18.00 = 72.00
		{"oracle/BM.GPU.MI355X.8/-/ondemand", "MI355X-288GB", 8, 8.6},      // B111758 8.6; 8 × 8.60 = 68.80
		{"oracle/BM.GPU3.8/-/ondemand", "V100-16GB-SXM2", 8, 2.95},         // B89734 2.95; 8 × 2.95 = 23.60
		{"oracle/VM.GPU3.4/-/ondemand", "V100-16GB-SXM2", 4, 2.95},         // 4 × 2.95 = 11.80
		{"oracle/BM.GPU2.2/-/ondemand", "P100-16GB-PCIE", 2, 1.275},        // B88517 1.275; 2 × 1.275 = 2.55
		{"oracle/VM.GPU2.1/-/ondemand", "P100-16GB-PCIE", 1, 1.275},        // B88518 1.275
	} {
		scrapertest.Price(t, nr, c.key, c.card, pricewatch.ModeOnDemand, c.price)
		scrapertest.Rent(t, nr, c.key, pricewatch.RentFixed, c.gpus)
	}
}

// SkyPilot's OCI fetcher (sky/catalog/data_fetchers/fetch_oci.py, an
// independent parser of the same price list joined with Oracle's cost
// estimator shapes) wrote skypilot-vms-gpu.csv: every GPU shape of one
// region, Price = gpuQty × the part's PAY_AS_YOU_GO price (OCI prices are
// the same in every commercial region). Every row is an offer here at the
// same shape price, and every offer here is a row: the fixture and the
// catalog were taken eight days apart (2026-08-22 and SkyPilot's commit
// 0588751), so a price Oracle changed in between would show here too.
func TestScraper_MatchesSkyPilotCatalog(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "oracle")
	got := map[string]float64{}
	for _, o := range res.Observations {
		got[o.OfferID] = o.Price * float64(o.GPUCount)
	}
	b, err := fs.ReadFile(fixtures.FS(), "oracle/skypilot-vms-gpu.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil || len(rows) != 22 {
		t.Fatalf("%d rows, %v; want a header and 21 shapes", len(rows), err)
	}
	seen := map[string]bool{}
	for _, r := range rows[1:] {
		want, err := strconv.ParseFloat(r[6], 64)
		if err != nil {
			t.Fatalf("%s: price %q", r[0], r[6])
		}
		seen[r[0]] = true
		p, ok := got[r[0]]
		if !ok || math.Abs(p-want) > 1e-9 {
			t.Errorf("%s: %v an hour (found %v), SkyPilot %v", r[0], p, ok, want)
		}
	}
	// BM.GPU.H100T.8 (part B109480) is named by OCI's own scripts, not by
	// the shape reference SkyPilot's fetcher joins with: it has no row there.
	notInSkyPilot := map[string]bool{"BM.GPU.H100T.8": true}
	for id := range got {
		if !seen[id] && strings.Contains(id, ".") && !notInSkyPilot[id] { // a shape (part numbers, "B93544", are no shapes)
			t.Errorf("%s: an offer here, no row in SkyPilot's catalog", id)
		}
		if seen[id] && notInSkyPilot[id] {
			t.Errorf("%s: SkyPilot's catalog has it now: check its price and drop the exception", id)
		}
	}
}

func TestParse_Cases(t *testing.T) {
	body := `{"items": [
	 {"partNumber": "B199999", "displayName": "Compute - GPU - X9", "metricName": "GPU Per Hour",
	  "currencyCodeLocalizations": [{"currencyCode": "USD", "prices": [{"model": "PAY_AS_YOU_GO", "value": 9}]}]},
	 {"partNumber": "B98415", "displayName": "Compute - GPU - H100", "metricName": "GPU Per Hour",
	  "currencyCodeLocalizations": [{"currencyCode": "EUR", "prices": [{"model": "PAY_AS_YOU_GO", "value": 9.3}]}]},
	 {"partNumber": "B111826", "displayName": "OCI - NVIDIA AI Enterprise - A10", "metricName": "GPU Per Hour", "serviceCategory": "Compute - GPU",
	  "currencyCodeLocalizations": [{"currencyCode": "USD", "prices": [{"model": "PAY_AS_YOU_GO", "value": 0.88}]}]},
	 {"partNumber": "B110965", "displayName": "Oracle Compute Cloud@Customer - Compute - GPU.L40S", "metricName": "GPU Per Hour", "serviceCategory": "Compute Cloud@Customer",
	  "currencyCodeLocalizations": [{"currencyCode": "USD", "prices": [{"model": "PAY_AS_YOU_GO", "value": 3.5}]}]},
	 {"partNumber": "B95909", "displayName": "Compute - GPU - A10", "metricName": "GPU Per Hour",
	  "currencyCodeLocalizations": [{"currencyCode": "USD", "prices": [{"model": "MONTHLY_COMMIT", "value": 1.5}, {"model": "PAY_AS_YOU_GO", "value": 2}]}]}
	]}`
	obs, err := oracle.Parse([]byte(body), "u")
	if err != nil {
		t.Fatal(err)
	}
	// The unknown part once, the H100 not at all (no USD price), the licence and
	// the on-premises part not at all (no rentals), the A10's three shapes.
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

// A shape's offer says where it is launched (the OCI console); a part no
// shape bills (B93544) is no rentable offer and names no page.
func TestScraper_RentURL(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "oracle")
	nr, _ := scrapertest.Normalize("oracle", res)
	if o := scrapertest.Find(t, nr, "oracle/BM.GPU.H100.8/-/ondemand"); o.RentURL != oracle.RentURL {
		t.Errorf("BM.GPU.H100.8: rent %q", o.RentURL)
	}
	if o := scrapertest.Find(t, nr, "oracle/B93544/-/ondemand"); o.RentURL != "" {
		t.Errorf("B93544: rent %q, want none", o.RentURL)
	}
}
