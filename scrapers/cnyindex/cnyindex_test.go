package cnyindex_test

import (
	"errors"
	"io/fs"
	"math"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/scrapers/cnyindex"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, cnyindex.Name)
	nr, g := scrapertest.CheckFixture(t, cnyindex.Name, res)
	// Every row is an index entry: a reference price with no rent terms.
	for _, o := range nr.Offers {
		if !o.Reference() || o.RentUnit != "" || len(o.GPUCounts) != 0 {
			t.Errorf("%s: kind %s rent unit %q counts %v, want a reference", o.Key, o.Kind, o.RentUnit, o.GPUCounts)
		}
	}
	if len(res.Observations) != 20 || g.ByMode["ondemand"] != 20 || len(g.ByMode) != 1 {
		t.Errorf("%d observations, by mode %v; want the 20 rows of the excerpt, on-demand", len(res.Observations), g.ByMode)
	}
	for _, c := range []struct {
		key, card, provider string
		price               float64
	}{
		{"cny-index/RTX 3090@gpushare/-/ondemand", "RTX-3090", "gpushare", 0.76},            // 恒源云
		{"cny-index/RTX 4090D 24GB@suanjiayun/-/ondemand", "RTX-4090D", "suanjiayun", 1.14}, // 算家云
		{"cny-index/T4 16GB@matpool/-/ondemand", "T4", "matpool", 1.35},                     // 矩池云
		{"cny-index/H20 96GB@compshare/-/ondemand", "H20-96GB", "compshare", 7.5},           // 优云智算
		{"cny-index/A800 80GB@chenjianyun/-/ondemand", "A800-80GB", "chenjianyun", 5.15},    // 晨涧云; PCIe or SXM not said: lower bound
		{"cny-index/A40 48GB@runpod/-/ondemand", "A40", "runpod", 2.52},
		{"cny-index/RTX 4000 Ada 20GB@akamai-linode/-/ondemand", "RTX-4000-ADA", "akamai-linode", 3.74},
		{"cny-index/L40 48GB@thunder-compute/-/ondemand", "L40", "thunder-compute", 5.69},
		// Plain H200 is the SXM part (the PCIe card is "H200 NVL"); unknown
		// before the cny-index alias. 24.8 CNY per GPU-hour as the row says.
		{"cny-index/H200 141GB@gcore/-/ondemand", "H200-141GB-SXM", "gcore", 24.8},
		// The family and memory said, the form factor (or the RTX PRO 6000's
		// edition) not: the lower-bound cards, the slowest part's figures
		// (unknown before; normalize/data/aliases.csv).
		{"cny-index/A100 80GB@paperspace/-/ondemand", "A100-80GB", "paperspace", 5.47},
		{"cny-index/H100 80GB@paperspace/-/ondemand", "H100-80GB", "paperspace", 8.28},
		{"cny-index/V100 16GB@lambda/-/ondemand", "V100-16GB", "lambda", 5.69},
		{"cny-index/RTX PRO 6000 96GB@nebius/-/ondemand", "RTX-PRO-6000-96GB", "nebius", 12.96},
	} {
		scrapertest.Price(t, nr, c.key, c.card, pricewatch.ModeOnDemand, c.price)
		if o := scrapertest.Find(t, nr, c.key); o.Provider != c.provider || o.Currency != "CNY" || o.Source != "cny-index" {
			t.Errorf("%s: provider %s currency %s source %s", c.key, o.Provider, o.Currency, o.Source)
		}
	}
	for _, o := range res.Observations {
		if !o.PerGPU || o.Unit != pricewatch.PerHour || o.GPUCount != 0 {
			t.Errorf("%s: per GPU %v unit %s count %d", o.OfferID, o.PerGPU, o.Unit, o.GPUCount)
		}
	}
	// Every row maps ("RTX 4000 Ada 20GB" and "RTX 6000 24GB", Linode's
	// Quadro, included); before the lower-bound cards 5 of 20 were unknown.
	if len(nr.Unknown) != 0 {
		t.Errorf("unknown = %v, want none", nr.Unknown)
	}
}

func TestProvider(t *testing.T) {
	for in, want := range map[string]string{
		"恒源云": "gpushare", "矩池云": "matpool", "算家云": "suanjiayun", "晨涧云": "chenjianyun", "优云智算": "compshare",
		"Akamai / Linode": "akamai-linode", "Thunder Compute": "thunder-compute", "RunPod": "runpod", " AutoDL ": "autodl",
		"某某云": "某某云", // an unmapped Chinese name is kept as written, never guessed
	} {
		if got := cnyindex.Provider(in); got != want {
			t.Errorf("Provider(%q) = %q, want %q", in, got, want)
		}
	}
}

const header = "gpu,price_cny_per_hour,platform,min_30d,max_30d,avg_30d,change_30d_pct,sellers_today\n"

func TestParse_Rows(t *testing.T) {
	obs, err := cnyindex.Parse([]byte("\xef\xbb\xbf# a comment\n"+
		"platform,gpu,price_cny_per_hour\n"+ // other order, statistics absent
		"恒源云, RTX  3090 ,0.76\n"+
		"恒源云,RTX 3090,0.80\n"+ // the same GPU and platform again: the first wins
		"AutoDL,RTX 4090,\n"+ // no price today
		"AutoDL,RTX 5090,0\n"+ // zero: skipped
		"AutoDL,\"H20 96GB\",7.5\r\n"), "u")
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 2 || obs[0].OfferID != "RTX 3090@gpushare" || obs[0].GPUName != "RTX 3090" || obs[0].Price != 0.76 ||
		obs[1].OfferID != "H20 96GB@autodl" || obs[1].GPUMemoryGB != 96 || obs[1].URL != "u" {
		t.Errorf("observations %+v", obs)
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"HTML", "<!doctype html><html><body>Just a moment...</body></html>\n", "expected CSV, got markup"},
		{"JSON", `{"error":"Entry not found"}` + "\n", "expected CSV, got JSON"},
		{"Empty", "", "empty response body"},
		{"Truncated", header + "RTX 3090,0.76,恒源云,0.72,0.8,0.75,5.6,1", "truncated (last line has no newline)"},
		{"ShortRow", header + "RTX 3090,0.76,恒源云\n", "wrong number of fields"},
		{"RenamedColumn", "gpu,price_cny,platform\nRTX 3090,0.76,恒源云\n", `no "price_cny_per_hour" column`},
		{"PriceGarbage", header + "RTX 3090,¥0.76,恒源云,0.72,0.8,0.75,5.6,9\n", `line 2: RTX 3090 on 恒源云: price "¥0.76" is not a number`},
		{"NoPlatform", header + "RTX 3090,0.76,,0.72,0.8,0.75,5.6,9\n", "line 2: empty gpu or platform"},
		{"OnlyHeader", header, "no offers parsed"},
		{"OnlyEmptyPrices", header + "RTX 3090,,恒源云,,,,,0\n", "no offers parsed"},
		{"Garbage", "\x00\x01garbage{{{", "truncated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := cnyindex.Parse([]byte(c.body), "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
	if _, err := cnyindex.Parse([]byte(header), ""); !errors.Is(err, scrapers.ErrNothingParsed) {
		t.Errorf("header only: err = %v, want ErrNothingParsed", err)
	}
}

func FuzzParse(f *testing.F) {
	seed, err := fs.ReadFile(fixtures.FS(), "cny-index/gpu_price_index.csv")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(header + "RTX 3090,-0.76,x,,,,,\nA,NaN,y,,,,,\nB,1e999,z,,,,,\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		obs, err := cnyindex.Parse(body, "")
		if err != nil {
			return
		}
		for _, o := range obs {
			if !(o.Price > 0) || math.IsInf(o.Price, 0) || o.GPUName == "" || o.Provider == "" || !o.PerGPU || o.Currency != "CNY" {
				t.Fatalf("bad observation accepted: %+v", o)
			}
		}
	})
}
