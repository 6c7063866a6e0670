package lambda_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers/lambda"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// API mode over fixtures/lambda/instance-types.json (built in the shape of
// Lambda's OpenAPI spec 1.10.0, prices from SkyPilot's Lambda catalog:
// PROVENANCE.md). 17 types: the CPU type is left out, 11 GPU types have
// capacity in 1 or 2 regions (13 offers), 5 in none (one offer each, not
// available): 18 offers.
func TestScraper_APIFixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "lambda")
	nr, g := scrapertest.CheckFixture(t, "lambda", res)
	scrapertest.FixedUnits(t, nr)
	if len(res.Observations) != 18 || g.ByMode["ondemand"] != 18 {
		t.Fatalf("%d observations, modes %v; want 18 on-demand", len(res.Observations), g.ByMode)
	}
	for _, c := range []struct {
		key, card string
		gpus      int
		price     float64 // USD per GPU-hour, by hand from price_cents_per_hour
		avail     pricewatch.Availability
	}{
		{"lambda/gpu_8x_h100_sxm5/us-east-3/ondemand", "H100-80GB-SXM", 8, 3.99, pricewatch.AvailableYes},      // 3192 ¢ ÷ 100 ÷ 8 = 3.99
		{"lambda/gpu_1x_h100_pcie/us-west-3/ondemand", "H100-80GB-PCIE", 1, 3.29, pricewatch.AvailableYes},     // 329 ¢ ÷ 100 ÷ 1
		{"lambda/gpu_8x_a100_80gb_sxm4/us-east-1/ondemand", "A100-80GB-SXM", 8, 2.79, pricewatch.AvailableYes}, // 2232 ¢ ÷ 100 ÷ 8
		{"lambda/gpu_1x_a100_sxm4/us-east-1/ondemand", "A100-40GB-SXM", 1, 1.99, pricewatch.AvailableYes},      // "A100 (40 GB SXM4)"
		{"lambda/gpu_2x_a100/-/ondemand", "A100-40GB-PCIE", 2, 1.99, pricewatch.AvailableNo},                   // 398 ¢ ÷ 100 ÷ 2, no region
		{"lambda/gpu_8x_b200_sxm6/us-south-2/ondemand", "B200-180GB-SXM", 8, 6.69, pricewatch.AvailableYes},    // 5352 ¢ ÷ 100 ÷ 8
		{"lambda/gpu_1x_a10/us-west-1/ondemand", "A10", 1, 1.29, pricewatch.AvailableYes},                      // "A10 (24 GB PCIe)"
		{"lambda/gpu_1x_rtx6000/-/ondemand", "QUADRO-RTX-6000", 1, 0.69, pricewatch.AvailableNo},               // "RTX 6000 (24 GB)"
		{"lambda/gpu_1x_gh200/us-east-3/ondemand", "GH200-96GB", 1, 2.29, pricewatch.AvailableYes},
	} {
		scrapertest.Price(t, nr, c.key, c.card, pricewatch.ModeOnDemand, c.price)
		scrapertest.Rent(t, nr, c.key, pricewatch.RentFixed, c.gpus)
		if o := scrapertest.Find(t, nr, c.key); o.Available != c.avail {
			t.Errorf("%s: available %q, want %q", c.key, o.Available, c.avail)
		}
	}
	// "Tesla V100 (16 GB)" states no form factor: the V100-16GB lower-bound
	// card, as on the page (unknown before); no name is left unknown.
	if len(nr.Unknown) != 0 {
		t.Errorf("unknown %v, want none", nr.Unknown)
	}
	for _, o := range nr.Offers {
		if strings.Contains(o.GPUName, "V100") && o.Card != "V100-16GB" {
			t.Errorf("%s: card %q, want the V100-16GB lower bound", o.Key, o.Card)
		}
	}
	// The specs are the whole instance's: gpu_8x_h100_sxm5 208 vCPUs,
	// 1800 GiB, 24780 GiB of storage.
	h := scrapertest.Find(t, nr, "lambda/gpu_8x_h100_sxm5/us-east-3/ondemand")
	if h.VCPUs != 208 || h.RAMGB != 1800 || h.DiskGB != 24780 || h.RentURL != lambda.RentURL {
		t.Errorf("gpu_8x_h100_sxm5: %v vCPUs, %v GiB, %v GiB disk, rent %q", h.VCPUs, h.RAMGB, h.DiskGB, h.RentURL)
	}
	for _, o := range res.Observations {
		if strings.HasPrefix(o.OfferID, "cpu_") {
			t.Errorf("%s: a CPU type is not a GPU offer", o.OfferID)
		}
	}
}

// The key goes in a Bearer header, read from the environment; the page is
// not fetched in API mode. A refused key fails the run with Lambda's error
// code: no silent fallback to the page.
func TestScrape_APIKey(t *testing.T) {
	var auth []string
	var paths []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		paths = append(paths, r.URL.Path)
		auth = append(auth, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer k-123" {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error": {"code": "global/invalid-api-key", "message": "API key was invalid, expired, or deleted."}}`)
			return
		}
		io.WriteString(w, `{"data": {"gpu_1x_a10": {"instance_type": {"name": "gpu_1x_a10", "description": "1x A10 (24 GB PCIe)",
		  "gpu_description": "A10 (24 GB PCIe)", "price_cents_per_hour": 129, "specs": {"vcpus": 30, "memory_gib": 200, "storage_gib": 1400, "gpus": 1}},
		  "regions_with_capacity_available": []}}}`)
	})
	getenv := func(k string) string {
		if k == lambda.APIKeyEnv {
			return "k-123"
		}
		return ""
	}
	res, err := scrapertest.ScrapeWith(t, "lambda", h, getenv)
	if err != nil || len(res.Observations) != 1 || res.Observations[0].Price != 1.29 {
		t.Fatalf("%+v, %v", res.Observations, err)
	}
	if len(paths) != 1 || paths[0] != "/lambda/api/v1/instance-types" || auth[0] != "Bearer k-123" {
		t.Errorf("requests %v with %v", paths, auth)
	}
	_, err = scrapertest.ScrapeWith(t, "lambda", h, func(k string) string {
		if k == lambda.APIKeyEnv {
			return "wrong"
		}
		return ""
	})
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("refused key: %v (the key itself must not appear)", err)
	}
}

func TestGPUOf(t *testing.T) {
	for _, c := range []struct {
		gpu, desc, name string
		mem             float64
		ok              bool
	}{
		{"H100 (80 GB SXM5)", "8x H100 (80 GB SXM5)", "H100 SXM5", 80, true},
		{"A10 (24 GB PCIe)", "", "A10 PCIe", 24, true},
		{"GH200 (96 GB)", "", "GH200", 96, true},
		{"Tesla V100 (16 GB)", "", "Tesla V100", 16, true},
		{"", "8x B200 (180 GB SXM6)", "B200 SXM6", 180, true}, // no gpu_description: the description less its count
		{"A100", "8x A100", "", 0, false},                     // no memory stated (a mock's shape)
		{"", "4x CPU General (16 GiB)", "", 0, false},
	} {
		name, mem, ok := lambda.GPUOf(c.gpu, c.desc)
		if name != c.name || mem != c.mem || ok != c.ok {
			t.Errorf("GPUOf(%q, %q) = %q, %v, %v; want %q, %v, %v", c.gpu, c.desc, name, mem, ok, c.name, c.mem, c.ok)
		}
	}
}

func TestParseAPI_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"error object", `{"error": {"code": "global/account-inactive", "message": "Your account is inactive."}}`, "global/account-inactive"},
		{"no data", `{}`, "no data object"},
		{"only CPU", `{"data": {"cpu_4x_general": {"instance_type": {"name": "cpu_4x_general", "price_cents_per_hour": 20, "specs": {"gpus": 0}}, "regions_with_capacity_available": []}}}`, "no offers parsed"},
		{"HTML", `<html><body>Sign in</body></html>`, "JSON"},
		{"truncated", `{"data": {"gpu_1x_a10": {`, "JSON"},
	} {
		_, err := lambda.ParseAPI([]byte(c.body), "u")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
	// A description that cannot be read keeps the price under the type's
	// name, with no rent unit (never ranked).
	obs, err := lambda.ParseAPI([]byte(`{"data": {"gpu_8x_x": {"instance_type": {"name": "gpu_8x_x", "description": "8x X",
	  "gpu_description": "X", "price_cents_per_hour": 800, "specs": {"gpus": 8}}, "regions_with_capacity_available": [{"name": "us-east-1"}]}}}`), "u")
	if err != nil || len(obs) != 1 || obs[0].GPUName != "gpu_8x_x" || obs[0].RentUnit != "" || obs[0].Price != 8 {
		t.Errorf("unreadable description: %+v, %v", obs, err)
	}
}
