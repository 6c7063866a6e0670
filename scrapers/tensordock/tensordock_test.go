package tensordock_test

import (
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
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
	austin    = "00000000-0000-4000-b000-000000000001"
	dallas    = "00000000-0000-4000-b000-000000000002"
	montreal  = "00000000-0000-4000-b000-000000000003"
	portland  = "00000000-0000-4000-b000-000000000004"
	frankfurt = "00000000-0000-4000-b000-000000000005"
)

func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "tensordock")
	nr, g := scrapertest.CheckFixture(t, "tensordock", res)
	// Per GPU, any count up to the typical machines one deployment can
	// take now (free GPUs, and vCPUs, RAM and disk for each).
	for _, o := range nr.Offers {
		if o.RentUnit != pricewatch.RentPerGPU || !slices.Equal(o.GPUCounts, pricewatch.CountsUpTo(o.GPUs)) {
			t.Errorf("%s: rent unit %q counts %v, want per_gpu 1..%d", o.Key, o.RentUnit, o.GPUCounts, o.GPUs)
		}
		if o.Available != pricewatch.AvailableYes || !strings.HasSuffix(o.Stock, " GPUs free") {
			t.Errorf("%s: available %q stock %q, want yes and the free GPUs", o.Key, o.Available, o.Stock)
		}
		if o.Mode != pricewatch.ModeOnDemand || o.Currency != "USD" || o.Provider != "tensordock" {
			t.Errorf("%s: %s %s from %s", o.Key, o.Mode, o.Currency, o.Provider)
		}
	}
	// GPU price + 8 vCPU × per_vcpu_hr + 32 GB × per_gb_ram_hr + 100 GB ×
	// per_gb_storage_hr; every GPU of the fixture prices vCPU 0.003, RAM
	// 0.002/GB, disk 0.00005/GB, so the extras are 0.024 + 0.064 + 0.005 =
	// 0.093 per GPU-hour.
	for _, c := range []struct {
		key, card string
		gpus      int
		price     float64
	}{
		// The documented example: 8 free, room for 9 (300 GB RAM / 32).
		{"tensordock/" + austin + "/h100-sxm5-80gb/United States/Texas/Austin/ondemand", "H100-80GB-SXM", 8, 2.293},
		{"tensordock/" + austin + "/geforcertx4090-pcie-24gb/United States/Texas/Austin/ondemand", "RTX-4090", 4, 0.593},
		// 8 free, but 32 vCPUs are room for 4 typical machines.
		{"tensordock/" + dallas + "/l40-pcie-48gb/United States/Texas/Dallas/ondemand", "L40", 4, 1.143},
		{"tensordock/" + montreal + "/geforcertx3090-pcie-24gb/Canada/Quebec/Montreal/ondemand", "RTX-3090", 2, 0.258},
		{"tensordock/" + portland + "/a100-pcie-80gb/United States/Oregon/Portland/ondemand", "A100-80GB-PCIE", 2, 0.963},
		{"tensordock/" + frankfurt + "/rtxa6000-pcie-48gb/Germany/Hesse/Frankfurt/ondemand", "RTX-A6000", 4, 0.518},
	} {
		scrapertest.Price(t, nr, c.key, c.card, pricewatch.ModeOnDemand, c.price)
		if o := scrapertest.Find(t, nr, c.key); o.GPUs != c.gpus {
			t.Errorf("%s: %d GPUs, want %d", c.key, o.GPUs, c.gpus)
		}
	}
	if o := scrapertest.Find(t, nr, "tensordock/"+dallas+"/l40-pcie-48gb/United States/Texas/Dallas/ondemand"); o.Stock != "8 GPUs free" {
		t.Errorf("Dallas L40 stock %q, want the 8 free GPUs", o.Stock)
	}
	// What the price pays for with the GPUs: the typical 8 vCPUs, 32 GB
	// RAM and 100 GB disk per GPU, times the GPUs: the Austin H100's 8 →
	// 64, 256, 800; Frankfurt's RTX A6000's 4 → 32, 128, 400. The country
	// is the location's name as a code.
	for _, c := range []struct {
		key              string
		vcpus, ram, disk float64
		country          string
	}{
		{"tensordock/" + austin + "/h100-sxm5-80gb/United States/Texas/Austin/ondemand", 64, 256, 800, "US"},
		{"tensordock/" + frankfurt + "/rtxa6000-pcie-48gb/Germany/Hesse/Frankfurt/ondemand", 32, 128, 400, "DE"},
		{"tensordock/" + montreal + "/geforcertx3090-pcie-24gb/Canada/Quebec/Montreal/ondemand", 16, 64, 200, "CA"},
	} {
		o := scrapertest.Find(t, nr, c.key)
		if o.VCPUs != c.vcpus || o.RAMGB != c.ram || o.DiskGB != c.disk || o.Country != c.country || o.RentURL != tensordock.RentURL {
			t.Errorf("%s: %v vCPUs, %v GB RAM, %v GB disk, country %q, rent %q; want %v, %v, %v, %s", c.key, o.VCPUs, o.RAMGB, o.DiskGB, o.Country, o.RentURL,
				c.vcpus, c.ram, c.disk, c.country)
		}
	}
	if g.Offers != 7 || len(nr.Unknown) != 0 {
		t.Errorf("%d offers, unknown %v; want 7, every GPU mapped (rtxa4000-pcie is the RTX-A4000)", g.Offers, nr.Unknown)
	}
}

// The key is sent as a Bearer token; without one the source is disabled
// with a reason, as the other keyed sources are.
func TestScraper_Key(t *testing.T) {
	scrapertest.NeedsSecret(t, tensordock.New(), tensordock.APIKeyEnv, "v2")
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		auth = r.Header.Get("Authorization")
		b, _ := fs.ReadFile(fixtures.FS(), "tensordock/locations.json")
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	defer srv.Close()
	env := scrapertest.Env(t, "tensordock", "http://unused")
	env.Settings.URL = srv.URL + "/api/v2/locations"
	if _, err := tensordock.New().Scrape(t.Context(), env); err != nil {
		t.Fatal(err)
	}
	if auth != "Bearer "+scrapertest.TestSecret("") {
		t.Errorf("Authorization %q, want the Bearer key", auth)
	}
}

func TestParse_Availability(t *testing.T) {
	const (
		pr  = `"pricing":{"per_vcpu_hr":0.003,"per_gb_ram_hr":0.002,"per_gb_storage_hr":0.00005}`
		res = `"resources":{"max_vcpus":64,"max_ram_gb":256,"max_storage_gb":4000}`
	)
	body := `{"data":{"locations":[{"id":"L","city":"C","stateprovince":"S","country":"X","gpus":[
		{"v0Name":"v100-pcie-16gb","max_count":0,"price_per_hr":0.1,` + res + `,` + pr + `},
		{"v0Name":"l40-pcie-48gb","max_count":4,"price_per_hr":1.0,"resources":{"max_vcpus":4,"max_ram_gb":256,"max_storage_gb":4000},` + pr + `},
		{"v0Name":"a100-pcie-80gb","max_count":3,"price_per_hr":0.9,` + res + `,` + pr + `}]}]}}`
	obs, err := tensordock.Parse([]byte(body), "u", tensordock.Typical{VCPUsPerGPU: 8, RAMGBPerGPU: 32, StorageGBPerGPU: 100})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]pricewatch.Observation{}
	for _, o := range obs {
		got[o.OfferID] = o
	}
	// None free: kept with its price, not available, never rentable now.
	if o := got["L/v100-pcie-16gb"]; o.Available != pricewatch.AvailableNo || o.Stock != "0 GPUs free" || o.RentUnit != "" || o.Price <= 0.1 {
		t.Errorf("none free: %+v", o)
	}
	// 4 free but 4 vCPUs: no room for one typical machine.
	if o := got["L/l40-pcie-48gb"]; o.Available != pricewatch.AvailableNo || o.Stock != "4 GPUs free" || o.RentUnit != "" {
		t.Errorf("no room: %+v", o)
	}
	if o := got["L/a100-pcie-80gb"]; o.Available != pricewatch.AvailableYes || o.Stock != "3 GPUs free" ||
		o.RentUnit != pricewatch.RentPerGPU || !slices.Equal(o.GPUCounts, []int{1, 2, 3}) || o.GPUCount != 3 || o.Region != "X/S/C" {
		t.Errorf("free: %+v", o)
	}
}

func TestParse_Typical(t *testing.T) {
	body, err := fs.ReadFile(fixtures.FS(), "tensordock/locations.json")
	if err != nil {
		t.Fatal(err)
	}
	// Nothing but the GPU: the GPU price alone, every free GPU.
	obs, err := tensordock.Parse(body, "", tensordock.Typical{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]pricewatch.Observation{}
	for _, o := range obs {
		got[o.OfferID] = o
	}
	if o := got[dallas+"/l40-pcie-48gb"]; o.Price != 1.05 || o.GPUCount != 8 {
		t.Errorf("GPU only: %+v", o)
	}
	// 32 vCPUs per GPU: the Portland A100s (32 vCPUs) fit one GPU, not two.
	obs, err = tensordock.Parse(body, "", tensordock.Typical{VCPUsPerGPU: 32, RAMGBPerGPU: 64, StorageGBPerGPU: 200})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range obs {
		if o.OfferID == portland+"/a100-pcie-80gb" {
			if o.GPUCount != 1 || math.Abs(o.Price-(0.87+32*0.003+64*0.002+200*0.00005)) > 1e-12 {
				t.Errorf("A100 with a big machine: %+v", o)
			}
			return
		}
	}
	t.Error("A100 location missing")
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
	const (
		res = `"resources":{"max_vcpus":64,"max_ram_gb":256,"max_storage_gb":4000}`
		pr  = `"pricing":{"per_vcpu_hr":0.003,"per_gb_ram_hr":0.002,"per_gb_storage_hr":0.00005}`
	)
	loc := func(gpus string) string {
		return `{"data":{"locations":[{"id":"L","country":"X","gpus":[` + gpus + `]}]}}`
	}
	for _, c := range []struct{ name, body, want string }{
		{"HTML", `<html><body>Just a moment...</body></html>`, "expected JSON, got markup"},
		{"Truncated", `{"data":{"locations":[{"id":"L","gpus":[{"v0Name":"l40-pcie-48gb","pri`, "decode JSON"},
		{"Empty", ``, "empty response body"},
		{"NoLocations", `{"data":{"hostnodes":[]}}`, "no data.locations"},
		{"APIError", `{"error":"Unauthorized"}`, "tensordock API error: Unauthorized"},
		{"Message", `{"message":"Invalid API key"}`, "tensordock API error: Invalid API key"},
		{"EmptyList", `{"data":{"locations":[]}}`, "no offers parsed"},
		{"Array", `[]`, "expected an object with data.locations"},
		{"NoPricing", loc(`{"v0Name":"l40-pcie-48gb","max_count":8,"price_per_hr":1.05,` + res + `}`), "no resources or pricing block"},
		{"RenamedPrice", loc(`{"v0Name":"l40-pcie-48gb","max_count":8,"price_per_hr":1.05,` + res + `,"pricing":{"vcpu":0.003,"per_gb_ram_hr":0.002,"per_gb_storage_hr":0.00005}}`), "price per vcpu"},
		{"NoGPUPrice", loc(`{"v0Name":"l40-pcie-48gb","max_count":8,"price_per_hr":null,` + res + `,` + pr + `}`), "price_per_hr"},
		{"NoName", loc(`{"displayName":"L40","max_count":8,"price_per_hr":1.05,` + res + `,` + pr + `}`), "without v0Name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := tensordock.Parse([]byte(c.body), "", typ)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
	// One bad GPU model fails the run by name; the good ones still parse.
	obs, err := tensordock.Parse([]byte(loc(`{"v0Name":"l40-pcie-48gb","max_count":8,"price_per_hr":1.05,`+res+`,`+pr+`},
		{"v0Name":"x-24gb","max_count":8,"price_per_hr":"n/a",`+res+`,`+pr+`}`)), "", typ)
	if len(obs) != 1 || err == nil || !strings.Contains(err.Error(), "L/x-24gb") {
		t.Errorf("%d observations, err %v; want the L40 and an error naming L/x-24gb", len(obs), err)
	}
}

func FuzzParse(f *testing.F) {
	seed, err := fs.ReadFile(fixtures.FS(), "tensordock/locations.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"data":{"locations":[{"id":"a","gpus":[{"v0Name":"x-1e400gb","max_count":1e300,"price_per_hr":1e308,"resources":{"max_vcpus":1e308,"max_ram_gb":"9","max_storage_gb":1},"pricing":{"per_vcpu_hr":-0.5,"per_gb_ram_hr":"1e308","per_gb_storage_hr":0}}]}]}}`))
	typ := tensordock.Typical{VCPUsPerGPU: 8, RAMGBPerGPU: 32, StorageGBPerGPU: 100}
	f.Fuzz(func(t *testing.T, body []byte) {
		obs, _ := tensordock.Parse(body, "", typ)
		for _, o := range obs {
			if !(o.Price > 0) || math.IsInf(o.Price, 0) || o.GPUCount < 1 || o.GPUCount > 1024 || math.IsNaN(o.GPUMemoryGB) {
				t.Fatalf("bad observation accepted: %+v", o)
			}
		}
	})
}
