package linode_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/scrapers/linode"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// The fixture is a real answer of GET /v4beta/linode/types (linodego's
// recorded integration cassette, fixtures/linode/PROVENANCE.md): 37 types,
// 4 of them GPU plans, every one priced the same in every region.
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "linode")
	nr, g := scrapertest.CheckFixture(t, "linode", res)
	scrapertest.FixedUnits(t, nr)
	if len(res.Observations) != 4 || len(g.Unknown) != 0 {
		t.Fatalf("%d observations, unknown %v; want the 4 RTX 6000 plans, all mapped", len(res.Observations), g.Unknown)
	}
	for _, c := range []struct {
		key   string
		gpus  int
		price float64 // USD per GPU-hour, by hand
		cap   float64 // monthly ÷ hourly
	}{
		{"linode/g1-gpu-rtx6000-1/-/ondemand", 1, 1.50, 1000.0 / 1.5}, // 1.50 / 1; cap 666.67 h
		{"linode/g1-gpu-rtx6000-2/-/ondemand", 2, 1.50, 2000.0 / 3.0}, // 3.00 / 2
		{"linode/g1-gpu-rtx6000-3/-/ondemand", 3, 1.50, 3000.0 / 4.5}, // 4.50 / 3
		{"linode/g1-gpu-rtx6000-4/-/ondemand", 4, 1.50, 4000.0 / 6.0}, // 6.00 / 4
	} {
		scrapertest.Price(t, nr, c.key, "QUADRO-RTX-6000", pricewatch.ModeOnDemand, c.price)
		scrapertest.Rent(t, nr, c.key, pricewatch.RentFixed, c.gpus)
		o := scrapertest.Find(t, nr, c.key)
		if o.Currency != "USD" || math.Abs(o.MonthlyCapHours-c.cap) > 1e-6 {
			t.Errorf("%s: %s, cap %v h; want USD, %v h", c.key, o.Currency, o.MonthlyCapHours, c.cap)
		}
	}
	for _, o := range res.Observations {
		if o.OfferID == "g1-gpu-rtx6000-1" && o.FreeEgressGBMonth != 16000 {
			t.Errorf("transfer: %v GB, want 16000", o.FreeEgressGBMonth)
		}
	}
}

func TestParse_Cases(t *testing.T) {
	// Built from the real answer's fields: an RTX 4000 Ada plan with a
	// regional price, a GPU plan of a model the table does not know, a
	// CPU plan (skipped), and a GPU plan without an hourly price (skipped).
	body := `{"data": [
	 {"id": "g2-gpu-rtx4000a2-m", "class": "gpu", "gpus": 2, "transfer": 8000,
	  "price": {"hourly": 1.34, "monthly": 893.0},
	  "region_prices": [{"id": "br-gru", "hourly": 1.6, "monthly": 1072.0}]},
	 {"id": "g3-gpu-b9000-8", "class": "gpu", "gpus": 8, "price": {"hourly": 40, "monthly": 26000}},
	 {"id": "g6-standard-2", "class": "standard", "gpus": 0, "price": {"hourly": 0.03, "monthly": 20.0}},
	 {"id": "g1-gpu-rtx6000-9", "class": "gpu", "gpus": 9, "price": {"hourly": null, "monthly": 9000}}
	], "page": 1, "pages": 1, "results": 4}`
	obs, pages, err := linode.ParsePage([]byte(body), "u")
	if err != nil || pages != 1 {
		t.Fatalf("pages %d, err %v", pages, err)
	}
	if len(obs) != 3 {
		t.Fatalf("%d observations, want 3 (default and br-gru of the RTX 4000 plan, the unknown one): %+v", len(obs), obs)
	}
	nr := normalize.DefaultCatalog().Normalize(obs, scrapertest.At)
	// 1.34 / 2 = 0.67 per GPU-hour; in br-gru 1.6 / 2 = 0.80.
	scrapertest.Price(t, nr, "linode/g2-gpu-rtx4000a2-m/-/ondemand", "RTX-4000-ADA", pricewatch.ModeOnDemand, 0.67)
	scrapertest.Price(t, nr, "linode/g2-gpu-rtx4000a2-m/br-gru/ondemand", "RTX-4000-ADA", pricewatch.ModeOnDemand, 0.80)
	if u := scrapertest.Find(t, nr, "linode/g3-gpu-b9000-8/-/ondemand"); u.Card != "" || u.RentUnit != "" {
		t.Errorf("unknown model mapped or rentable: %+v", u)
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"api error", `{"errors": [{"reason": "Too many requests"}]}`, "Too many requests"},
		{"no data", `{"page": 1}`, "no data array"},
		{"no gpu type", `{"data": [{"id": "g6-nanode-1", "gpus": 0, "price": {"hourly": 0.0075}}], "page": 1, "pages": 1}`, "no offers parsed"},
		{"truncated", `{"data": [{"id": "g1-gpu`, "JSON"},
	} {
		_, err := linode.Parse([]byte(c.body), "u")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
	if _, err := linode.Parse([]byte(`{"data": []}`), "u"); !errors.Is(err, scrapers.ErrNothingParsed) {
		t.Errorf("empty: %v", err)
	}
}

func TestPageURL(t *testing.T) {
	u, err := linode.PageURL("https://api.linode.com/v4/linode/types", 2)
	if err != nil || u != "https://api.linode.com/v4/linode/types?page=2&page_size=500" {
		t.Errorf("%s %v", u, err)
	}
	if _, err := linode.PageURL("::", 1); err == nil {
		t.Error("bad url accepted")
	}
}

// What comes with a plan (fixtures/linode/types-1.json): g1-gpu-rtx6000-1
// vcpus 8, memory 32768 MB = 32 GiB, disk 655360 MB = 640 GiB;
// g1-gpu-rtx6000-2 16, 65536 → 64, 1310720 → 1280. The region-less price
// list gives no country.
func TestScraper_PlanDetails(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "linode")
	nr, _ := scrapertest.Normalize("linode", res)
	for _, c := range []struct {
		key              string
		vcpus, ram, disk float64
	}{
		{"linode/g1-gpu-rtx6000-1/-/ondemand", 8, 32, 640},
		{"linode/g1-gpu-rtx6000-2/-/ondemand", 16, 64, 1280},
	} {
		o := scrapertest.Find(t, nr, c.key)
		if o.VCPUs != c.vcpus || o.RAMGB != c.ram || o.DiskGB != c.disk || o.RentURL != linode.RentURL {
			t.Errorf("%s: %v vCPUs, %v GiB, %v GiB disk, rent %q; want %v, %v, %v", c.key, o.VCPUs, o.RAMGB, o.DiskGB, o.RentURL, c.vcpus, c.ram, c.disk)
		}
	}
}
