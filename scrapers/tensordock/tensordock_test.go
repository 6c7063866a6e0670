package tensordock_test

import (
	"io/fs"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
	"github.com/pricewatch/pricewatch/scrapers/tensordock"
)

const (
	l40Host  = "00000000-0000-4000-a000-000000000001"
	rtxHost  = "00000000-0000-4000-a000-000000000002"
	a100Host = "00000000-0000-4000-a000-000000000003"
	mixHost  = "00000000-0000-4000-a000-000000000004"
	tinyHost = "00000000-0000-4000-a000-000000000005"
)

func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "tensordock")
	nr, g := scrapertest.CheckFixture(t, "tensordock", res)
	// Per GPU, any count up to the GPUs the host can still give out with
	// their typical vCPUs, RAM and disk (gpuhunt tried every count 1..amount).
	for _, o := range nr.Offers {
		if o.RentUnit != pricewatch.RentPerGPU || !slices.Equal(o.GPUCounts, pricewatch.CountsUpTo(o.GPUs)) {
			t.Errorf("%s: rent unit %q counts %v, want per_gpu 1..%d", o.Key, o.RentUnit, o.GPUCounts, o.GPUs)
		}
	}
	scrapertest.Rent(t, nr, "tensordock/"+l40Host+"/l40-pcie-48gb/United States/Texas/Dallas/ondemand",
		pricewatch.RentPerGPU, 1, 2, 3, 4, 5, 6, 7, 8)
	// GPU price + 8 vCPU × cpu + 32 GB × ram + 100 GB × storage; every host
	// of the fixture prices vCPU 0.003, RAM 0.002/GB, disk 0.00005/GB, so
	// the extras are 0.024 + 0.064 + 0.005 = 0.093 per GPU-hour.
	for _, c := range []struct {
		key, card string
		gpus      int
		price     float64
	}{
		{"tensordock/" + l40Host + "/l40-pcie-48gb/United States/Texas/Dallas/ondemand", "L40", 8, 1.143}, // 1.05 + 0.093
		{"tensordock/" + rtxHost + "/geforcertx4090-pcie-24gb/Canada/Quebec/Montreal/ondemand", "RTX-4090", 4, 0.493},
		{"tensordock/" + rtxHost + "/geforcertx3090-pcie-24gb/Canada/Quebec/Montreal/ondemand", "RTX-3090", 2, 0.258},
		{"tensordock/" + a100Host + "/a100-pcie-80gb/United States/Oregon/Portland/ondemand", "A100-80GB-PCIE", 2, 0.963},
		{"tensordock/" + mixHost + "/rtxa6000-pcie-48gb/Germany/Hesse/Frankfurt/ondemand", "RTX-A6000", 4, 0.518},
	} {
		scrapertest.Price(t, nr, c.key, c.card, pricewatch.ModeOnDemand, c.price)
		if o := scrapertest.Find(t, nr, c.key); o.GPUs != c.gpus || o.Currency != "USD" || o.Provider != "tensordock" {
			t.Errorf("%s: %d GPUs %s from %s, want %d USD", c.key, o.GPUs, o.Currency, o.Provider, c.gpus)
		}
	}
	for _, o := range nr.Offers {
		if strings.Contains(o.Key, tinyHost) {
			t.Errorf("%s: the host has 4 vCPUs, fewer than one GPU's 8", o.Key)
		}
		if strings.Contains(o.Key, "v100-pcie-16gb") {
			t.Errorf("%s: no V100 left to rent (amount 0)", o.Key)
		}
		if o.Mode != pricewatch.ModeOnDemand {
			t.Errorf("%s: mode %s", o.Key, o.Mode)
		}
	}
	if g.Offers != 6 || nr.Unknown["rtxa4000-pcie (16 GB)"] != 1 {
		t.Errorf("%d offers, unknown %v; want 6 and the RTX A4000 (no card) reported", g.Offers, nr.Unknown)
	}
}

func TestParse_Typical(t *testing.T) {
	body, err := fs.ReadFile(fixtures.FS(), "tensordock/hostnodes.json")
	if err != nil {
		t.Fatal(err)
	}
	// Nothing but the GPU: the GPU price alone, and the 4-vCPU host fits.
	obs, err := tensordock.Parse(body, "", tensordock.Typical{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]pricewatch.Observation{}
	for _, o := range obs {
		got[o.OfferID] = o
	}
	if o := got[l40Host+"/l40-pcie-48gb"]; o.Price != 1.05 || o.GPUCount != 8 {
		t.Errorf("GPU only: %+v", o)
	}
	if o, ok := got[tinyHost+"/geforcertx4090-pcie-24gb"]; !ok || o.Price != 0.40 || o.GPUCount != 2 {
		t.Errorf("tiny host without extras: %+v", o)
	}
	// 32 vCPUs per GPU: the A100 host (32 vCPUs) fits one GPU, not two.
	obs, err = tensordock.Parse(body, "", tensordock.Typical{VCPUsPerGPU: 32, RAMGBPerGPU: 64, StorageGBPerGPU: 200})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range obs {
		if o.OfferID == a100Host+"/a100-pcie-80gb" {
			if o.GPUCount != 1 || math.Abs(o.Price-(0.87+32*0.003+64*0.002+200*0.00005)) > 1e-12 {
				t.Errorf("A100 with a big machine: %+v", o)
			}
			return
		}
	}
	t.Error("A100 host missing")
}

func TestScraper_Options(t *testing.T) {
	c := config.Default()
	if err := c.Decode(strings.NewReader("sources:\n  tensordock:\n    vcpus_per_gpu: 16\n    ram_gb_per_gpu: 64\n")); err != nil {
		t.Fatal(err)
	}
	s := c.Sources["tensordock"].Scraper.(*tensordock.Scraper)
	if s.VCPUsPerGPU != 16 || s.RAMGBPerGPU != 64 || s.StorageGBPerGPU != tensordock.DefaultStorageGBPerGPU {
		t.Errorf("options %+v", s)
	}
	bad := tensordock.New()
	bad.RAMGBPerGPU = -1
	if _, err := bad.Scrape(t.Context(), scrapertest.Env(t, "tensordock", "http://127.0.0.1:9")); err == nil ||
		!strings.Contains(err.Error(), "ram_gb_per_gpu") {
		t.Errorf("negative option: err = %v", err)
	}
}

func TestGPUName(t *testing.T) {
	for _, c := range []struct {
		key, name string
		mem       float64
	}{
		{"l40-pcie-48gb", "l40-pcie", 48},
		{"a100-sxm4-80gb", "a100-sxm4", 80},
		{"geforcertx4090-pcie-24gb", "geforcertx4090-pcie", 24},
		{"H100-SXM5-80GB", "h100-sxm5", 80},
		{"mystery", "mystery", 0},
	} {
		if n, m := tensordock.GPUName(c.key); n != c.name || m != c.mem {
			t.Errorf("GPUName(%q) = %q, %v; want %q, %v", c.key, n, m, c.name, c.mem)
		}
	}
}

func TestParse_Errors(t *testing.T) {
	typ := tensordock.Typical{VCPUsPerGPU: 8, RAMGBPerGPU: 32, StorageGBPerGPU: 100}
	const specs = `"cpu":{"amount":64,"price":0.003},"ram":{"amount":256,"price":0.002},"storage":{"amount":4000,"price":5e-05}`
	for _, c := range []struct{ name, body, want string }{
		{"HTML", `<html><body>Just a moment...</body></html>`, "expected JSON, got markup"},
		{"Truncated", `{"hostnodes":{"a":{"specs":{"gpu":{"l40-pcie-48gb":{"amount":8,"pri`, "decode JSON"},
		{"Empty", ``, "empty response body"},
		{"NoHostnodes", `{"nodes":{}}`, "no hostnodes"},
		{"APIError", `{"success":false,"error":"Endpoint retired"}`, "tensordock API error: Endpoint retired"},
		{"EmptyMap", `{"hostnodes":{}}`, "no offers parsed"},
		{"Array", `[]`, "expected an object with hostnodes"},
		{"NoRoom", `{"hostnodes":{"a":{"specs":{"cpu":{"amount":2,"price":0.003},"ram":{"amount":256,"price":0.002},"storage":{"amount":4000,"price":5e-05},"gpu":{"l40-pcie-48gb":{"amount":8,"price":1.05}}}}}}`, "no offers parsed"},
		{"RenamedCPU", `{"hostnodes":{"a":{"specs":{"vcpu":{"amount":64,"price":0.003},"ram":{"amount":256,"price":0.002},"storage":{"amount":4000,"price":5e-05},"gpu":{"l40-pcie-48gb":{"amount":8,"price":1.05}}}}}}`, "no offers parsed"},
		{"AllRented", `{"hostnodes":{"a":{"specs":{` + specs + `,"gpu":{"l40-pcie-48gb":{"amount":0,"price":1.05}}}}}}`, "no offers parsed"},
		{"NoGPUPrice", `{"hostnodes":{"a":{"specs":{` + specs + `,"gpu":{"l40-pcie-48gb":{"amount":8,"price":null}}}}}}`, "no offers parsed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := tensordock.Parse([]byte(c.body), "", typ)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	seed, err := fs.ReadFile(fixtures.FS(), "tensordock/hostnodes.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"hostnodes":{"a":{"specs":{"cpu":{"amount":1e308,"price":-0.5},"ram":{"amount":"9","price":"1e308"},"storage":{"amount":1,"price":0},"gpu":{"x-1e400gb":{"amount":1e300,"price":1e308}}}}}}`))
	typ := tensordock.Typical{VCPUsPerGPU: 8, RAMGBPerGPU: 32, StorageGBPerGPU: 100}
	f.Fuzz(func(t *testing.T, body []byte) {
		obs, err := tensordock.Parse(body, "", typ)
		if err != nil {
			return
		}
		for _, o := range obs {
			if !(o.Price > 0) || math.IsInf(o.Price, 0) || o.GPUCount < 1 || math.IsNaN(o.GPUMemoryGB) {
				t.Fatalf("bad observation accepted: %+v", o)
			}
		}
	})
}
