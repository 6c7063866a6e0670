package digitalocean_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/scrapers/digitalocean"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// The fixture is gpuhunt's recorded-shape sizes answer (fixtures/digitalocean/PROVENANCE.md):
// a CPU size (skipped), 8 × H100 and 8 × MI300X.
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "digitalocean")
	nr, g := scrapertest.CheckFixture(t, "digitalocean", res)
	if len(res.Observations) != 2 {
		t.Fatalf("%d observations, want the two GPU sizes", len(res.Observations))
	}
	// 15.92 / 8 = 1.99 USD per GPU-hour; 1536 GiB / 8 = 192 GiB a GPU.
	scrapertest.Price(t, nr, "digitalocean/gpu-mi300x8-1536gb/-/ondemand", "MI300X-192GB", pricewatch.ModeOnDemand, 1.99)
	scrapertest.Rent(t, nr, "digitalocean/gpu-mi300x8-1536gb/-/ondemand", pricewatch.RentFixed, 8)
	// "nvidia_h100" says neither SXM nor PCIe: the H100-80GB lower-bound
	// card (unknown before), at 23.92 / 8 = 2.99.
	scrapertest.Price(t, nr, "digitalocean/gpu-h100x8-640gb/-/ondemand", "H100-80GB", pricewatch.ModeOnDemand, 2.99)
	h := scrapertest.Find(t, nr, "digitalocean/gpu-h100x8-640gb/-/ondemand")
	if len(g.Unknown) != 0 || h.Available != pricewatch.AvailableYes || h.Stock != "in nyc1" {
		t.Errorf("H100 ×8: %+v, unknown %v", h, g.Unknown)
	}
}

func TestNeedsToken(t *testing.T) {
	scrapertest.NeedsSecret(t, &digitalocean.Scraper{}, digitalocean.TokenEnv)
}

func TestParse_Cases(t *testing.T) {
	body := `{"sizes": [
	  {"slug": "gpu-l40sx1-48gb", "price_hourly": 1.57, "regions": [], "available": true,
	   "gpu_info": {"count": 1, "model": "nvidia_l40s", "vram": {"amount": 48, "unit": "gib"}}},
	  {"slug": "gpu-x", "price_hourly": 2, "regions": ["tor1"], "available": true, "gpu_info": {"count": 2, "model": ""}},
	  {"slug": "gpu-y", "price_hourly": "n/a", "regions": ["tor1"], "available": true, "gpu_info": {"count": 1, "model": "nvidia_h100"}}
	], "links": {"pages": {"next": "https://api.digitalocean.com/v2/sizes?page=2&per_page=200"}}}`
	obs, next, err := digitalocean.ParsePage([]byte(body), "u")
	if err != nil || len(obs) != 2 || !strings.Contains(next, "page=2") {
		t.Fatalf("%d observations, next %q, err %v", len(obs), next, err)
	}
	nr := normalize.DefaultCatalog().Normalize(obs, scrapertest.At)
	// 1.57 / 1; no region now: not available.
	scrapertest.Price(t, nr, "digitalocean/gpu-l40sx1-48gb/-/ondemand", "L40S", pricewatch.ModeOnDemand, 1.57)
	if o := scrapertest.Find(t, nr, "digitalocean/gpu-l40sx1-48gb/-/ondemand"); o.Available != pricewatch.AvailableNo {
		t.Errorf("no region: available %q", o.Available)
	}
	if o := scrapertest.Find(t, nr, "digitalocean/gpu-x/-/ondemand"); o.Card != "" || o.RentUnit != "" {
		t.Errorf("no model: %+v", o)
	}
}

// DigitalOcean's Ada GPU Droplets name their model "nvidia_rtx4000_ada" and
// "nvidia_rtx6000_ada" (the gpu_info.model ids of sizes gpu-4000adax1-20gb
// and gpu-6000adax1-48gb as public code reading the live API records them,
// repository not resolved by our search tool; dstackai/gpuhunt
// src/gpuhunt/providers/digitalocean.py @ 35841515 names
// "nvidia_rtx6000_ada" among the API's ids). Both were unknown, 3 of the 5
// model ids with "nvidia_h100", which states no form factor: it maps to the
// H100-80GB lower-bound card.
// The sizes' prices are the public table's (fixtures/digitalocean/PROVENANCE.md).
func TestParse_AdaModels(t *testing.T) {
	body := `{"sizes": [
	  {"slug": "gpu-4000adax1-20gb", "price_hourly": 0.76, "regions": ["tor1"], "available": true,
	   "gpu_info": {"count": 1, "model": "nvidia_rtx4000_ada", "vram": {"amount": 20, "unit": "gib"}}},
	  {"slug": "gpu-6000adax1-48gb", "price_hourly": 1.57, "regions": ["nyc2", "tor1"], "available": true,
	   "gpu_info": {"count": 1, "model": "nvidia_rtx6000_ada", "vram": {"amount": 48, "unit": "gib"}}},
	  {"slug": "gpu-l40sx1-48gb", "price_hourly": 1.57, "regions": [], "available": true,
	   "gpu_info": {"count": 1, "model": "nvidia_l40s", "vram": {"amount": 48, "unit": "gib"}}},
	  {"slug": "gpu-h100x1-80gb", "price_hourly": 3.39, "regions": ["nyc2"], "available": true,
	   "gpu_info": {"count": 1, "model": "nvidia_h100", "vram": {"amount": 80, "unit": "gib"}}},
	  {"slug": "gpu-mi300x1-192gb", "price_hourly": 1.99, "regions": ["atl1"], "available": true,
	   "gpu_info": {"count": 1, "model": "amd_mi300x", "vram": {"amount": 192, "unit": "gib"}}}
	]}`
	obs, _, err := digitalocean.ParsePage([]byte(body), "u")
	if err != nil || len(obs) != 5 {
		t.Fatalf("%d observations, err %v", len(obs), err)
	}
	nr := normalize.DefaultCatalog().Normalize(obs, scrapertest.At)
	scrapertest.Price(t, nr, "digitalocean/gpu-4000adax1-20gb/-/ondemand", "RTX-4000-ADA", pricewatch.ModeOnDemand, 0.76)
	scrapertest.Price(t, nr, "digitalocean/gpu-6000adax1-48gb/-/ondemand", "RTX-6000-ADA", pricewatch.ModeOnDemand, 1.57)
	scrapertest.Price(t, nr, "digitalocean/gpu-l40sx1-48gb/-/ondemand", "L40S", pricewatch.ModeOnDemand, 1.57)
	scrapertest.Price(t, nr, "digitalocean/gpu-mi300x1-192gb/-/ondemand", "MI300X-192GB", pricewatch.ModeOnDemand, 1.99)
	scrapertest.Price(t, nr, "digitalocean/gpu-h100x1-80gb/-/ondemand", "H100-80GB", pricewatch.ModeOnDemand, 3.39)
	if len(nr.Unknown) != 0 {
		t.Errorf("unknown %v, want none", nr.Unknown)
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"unauthorized", `{"id": "Unauthorized", "message": "Unable to authenticate you"}`, "Unable to authenticate you"},
		{"no sizes", `{"links": {}}`, "no sizes array"},
		{"no gpu size", `{"sizes": [{"slug": "s-1vcpu-512mb-10gb", "price_hourly": 0.00595}]}`, "no offers parsed"},
		{"truncated", `{"sizes": [{"slug"`, "JSON"},
	} {
		_, err := digitalocean.Parse([]byte(c.body), "u")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

// A next link to another host is refused: the token is never sent there.
func TestScrape_NextLinkOtherHost(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"sizes": [{"slug": "gpu-mi300x1-192gb", "price_hourly": 1.99, "regions": ["atl1"], "available": true,
		  "gpu_info": {"count": 1, "model": "amd_mi300x"}}], "links": {"pages": {"next": "https://evil.example/v2/sizes?page=2"}}}`)
	})
	_, err := scrapertest.Scrape(t, "digitalocean", mux)
	if err == nil || !strings.Contains(err.Error(), "is not on") {
		t.Errorf("err = %v", err)
	}
}

// What comes with a GPU Droplet (fixtures/digitalocean/sizes-1.json,
// gpu-h100x8-640gb): vcpus 160, memory 1966080 MB / 1024 = 1920 GiB, the
// local disk 2046 GiB (the 40960 GiB scratch disk is not counted).
func TestScraper_DropletDetails(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "digitalocean")
	nr, _ := scrapertest.Normalize("digitalocean", res)
	o := scrapertest.Find(t, nr, "digitalocean/gpu-h100x8-640gb/-/ondemand")
	if o.VCPUs != 160 || o.RAMGB != 1920 || o.DiskGB != 2046 || o.RentURL != digitalocean.RentURL {
		t.Errorf("%v vCPUs, %v GiB, %v GiB disk, rent %q; want 160, 1920, 2046", o.VCPUs, o.RAMGB, o.DiskGB, o.RentURL)
	}
}
