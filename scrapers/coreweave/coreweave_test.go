package coreweave_test

import (
	"errors"
	"io/fs"
	"math"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/scrapers/coreweave"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "coreweave")
	nr, g := scrapertest.CheckFixture(t, "coreweave", res)
	// An instance is rented whole, with its GPU Count.
	scrapertest.FixedUnits(t, nr)
	scrapertest.Rent(t, nr, "coreweave/hgx-h100/-/spot", pricewatch.RentFixed, 8)
	scrapertest.Rent(t, nr, "coreweave/gh200/-/ondemand", pricewatch.RentFixed, 1)
	// 4 priced products (GB300 is "Contact sales"), each once although the
	// page repeats every block; spot on H100 and RTX PRO 6000 only.
	if len(res.Observations) != 6 || g.ByMode["ondemand"] != 4 || g.ByMode["spot"] != 2 {
		t.Errorf("%d observations, by mode %v; want 6 = 4 ondemand + 2 spot", len(res.Observations), g.ByMode)
	}
	for _, c := range []struct {
		key, card string
		mode      pricewatch.Mode
		price     float64
	}{
		{"coreweave/hgx-h100/-/ondemand", "H100-80GB-SXM", pricewatch.ModeOnDemand, 6.155}, // 49.24 / 8
		// The two copies say 19.71 and 19.95: the highest is kept.
		{"coreweave/hgx-h100/-/spot", "H100-80GB-SXM", pricewatch.ModeSpot, 2.49375}, // 19.95 / 8
		{"coreweave/hgx-b200/-/ondemand", "B200-180GB-SXM", pricewatch.ModeOnDemand, 8.6},
		{"coreweave/gh200/-/ondemand", "GH200-96GB", pricewatch.ModeOnDemand, 6.5}, // 1 GPU, 96 GB tells GH200 variants apart
		{"coreweave/rtx-pro-6000-blackwell/-/ondemand", "RTX-PRO-6000-SERVER", pricewatch.ModeOnDemand, 2.5},
		{"coreweave/rtx-pro-6000-blackwell/-/spot", "RTX-PRO-6000-SERVER", pricewatch.ModeSpot, 1.0},
	} {
		scrapertest.Price(t, nr, c.key, c.card, c.mode, c.price)
	}
	keys := map[string]bool{}
	for _, o := range nr.Offers {
		keys[o.Key] = true
		if o.Currency != "USD" || o.Region != "" || o.GPUs <= 0 || o.Provider != "coreweave" {
			t.Errorf("%s: currency %s region %q gpus %d provider %s", o.Key, o.Currency, o.Region, o.GPUs, o.Provider)
		}
	}
	for _, absent := range []string{
		"coreweave/nvidia-gb300-nvl72/-/ondemand", // Contact sales
		"coreweave/hgx-b200/-/spot",               // N/A
		"coreweave/gh200/-/spot",                  // empty
	} {
		if keys[absent] {
			t.Errorf("offer %s must not exist", absent)
		}
	}
	if len(nr.Unknown) != 0 {
		t.Errorf("unknown = %v, want none (the RTX PRO 6000 Server Edition is a card)", nr.Unknown)
	}
}

// TestParse_SameAsScrape checks that Parse, over the raw page, yields what
// the collector's callbacks yield.
func TestParse_SameAsScrape(t *testing.T) {
	scrapertest.SameAsScrape(t, "coreweave", "coreweave/pricing.html", func(b []byte) ([]pricewatch.Observation, error) {
		return coreweave.Parse(b, "")
	})
}

func product(slug, od, spot, per, gpus, vram string) string {
	return `<h3 data-product="` + slug + `" class="table-model-name">NVIDIA ` + strings.ToUpper(slug) + `</h3>` +
		`<div class="table-cell-column-left"><div class="table-meta-value">` +
		`<span class="instance-price">On-Demand Price: <span class="item-value">` + od + `</span> / Hour</span>` +
		`<span class="spot-price">Spot Price: <span class="item-value">` + spot + `</span> / Hour</span>` +
		`<span class="inference-price">Inference Single CPU Price: <span class="item-value">` + per + `</span> / Hour</span>` +
		`</div></div><div class="table-cell-column-right">` +
		`<div class="table-meta-text table-meta-text-right"><div class="table-meta-value">` + gpus + `</div><div>GPU Count</div></div>` +
		`<div class="table-meta-text table-meta-text-right"><div class="table-meta-value">` + vram + `</div><div>VRAM</div></div></div>`
}

func page(products ...string) string {
	return "<!DOCTYPE html><html><body>" + strings.Join(products, "\n") + "</body></html>"
}

func TestParse_Cells(t *testing.T) {
	obs, err := coreweave.Parse([]byte(page(
		product("l40s", " $18.00 ", "$1,234.50", "$2.25", "8", "48"),
		product("a100", "$21.60", "n/a", "", "8", "eighty"), // VRAM that does not parse stays unknown
		product("gb200", "", "", "", "", ""),                // contact sales: other cells not read
	)), "u")
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 3 {
		t.Fatalf("observations %+v", obs)
	}
	l40s, spot, a100 := obs[0], obs[1], obs[2]
	if l40s.OfferID != "l40s" || l40s.GPUName != "NVIDIA L40S" || l40s.Price != 18 || l40s.GPUCount != 8 ||
		l40s.PerGPU || l40s.Unit != pricewatch.PerHour || l40s.GPUMemoryGB != 48 || l40s.URL != "u" {
		t.Errorf("l40s on-demand %+v", l40s)
	}
	if spot.Mode != pricewatch.ModeSpot || spot.Price != 1234.5 {
		t.Errorf("l40s spot %+v", spot)
	}
	if a100.OfferID != "a100" || a100.Mode != pricewatch.ModeOnDemand || a100.GPUMemoryGB != 0 {
		t.Errorf("a100 %+v", a100)
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"NoProducts", `<html><body><p>Pricing is loading…</p></body></html>`, "no offers parsed"},
		{"OnlyContactSales", page(product("gb300", "", "N/A", "", "4", "279")), "no offers parsed"},
		{"JSON", `{"data": {}}`, "page truncated"},
		{"Truncated", `<html><body><h3 data-product="x">X</h3><span class="instance-price"><span class="item-value">$1`, "page truncated"},
		{"PriceGarbage", page(product("h100", "Contact sales", "", "", "8", "80")), `product "h100": on-demand price "Contact sales" is neither`},
		{"PriceZero", page(product("h100", "$0.00", "", "", "8", "80")), `product "h100": on-demand price "$0.00" is not a positive amount`},
		{"SpotGarbage", page(product("h100", "$49.24", "soon", "", "8", "80")), `product "h100": spot price "soon"`},
		{"NoCount", page(product("h100", "$49.24", "", "", "", "80")), `product "h100": GPU Count "" is not a positive count`},
		{"PerGPUDisagrees", page(product("h100", "$6.16", "", "$6.16", "8", "80")), `per-GPU figure $6.16 disagrees with $6.16 / 8 GPUs`},
		{"RenamedPriceClass", `<html><h3 data-product="h100">H100</h3><span class="ondemand-price"><span class="item-value">$49.24</span></span></html>`, `product "h100": no On-Demand Price value`},
		{"NoSlug", `<html><h3 data-product="">H100</h3></html>`, `product "H100" without a data-product slug`},
		{"CopiesDisagree", page(product("h100", "$49.24", "", "", "8", "80"), product("h100", "$48.00", "", "", "8", "80")), `product "h100": page copies disagree`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := coreweave.Parse([]byte(c.body), "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
	if _, err := coreweave.Parse([]byte(page()), ""); !errors.Is(err, scrapers.ErrNothingParsed) {
		t.Errorf("empty page: err = %v, want ErrNothingParsed", err)
	}
}

func FuzzParse(f *testing.F) {
	seed, err := fs.ReadFile(fixtures.FS(), "coreweave/pricing.html")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(page(product("x", "$-1", "$0", "$1e400", "0", "-5"))))
	f.Fuzz(func(t *testing.T, body []byte) {
		obs, err := coreweave.Parse(body, "")
		if err != nil {
			return
		}
		for _, o := range obs {
			if !(o.Price > 0) || math.IsInf(o.Price, 0) || o.GPUCount <= 0 || o.OfferID == "" || o.PerGPU {
				t.Fatalf("bad observation accepted: %+v", o)
			}
		}
	})
}
