package jarvislabs_test

import (
	"errors"
	"io/fs"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/scrapers/jarvislabs"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "jarvislabs")
	nr, g := scrapertest.CheckFixture(t, "jarvislabs", res)
	// Per GPU, up to num_gpus and no more than are free now: L4 has 8 per
	// instance, 3 free on demand and 3 for spot (num_free_devices, as
	// JarvisLabs' SDK counts spot capacity; the fixture's
	// spot_num_free_devices 2, which gave 1..2 before, is not read); the
	// H100 row has no num_gpus (1) and 25 free.
	scrapertest.Rent(t, nr, "jarvislabs/L4/india-noida-01/ondemand", pricewatch.RentPerGPU, 1, 2, 3)
	scrapertest.Rent(t, nr, "jarvislabs/L4/india-noida-01/spot", pricewatch.RentPerGPU, 1, 2, 3)
	scrapertest.Rent(t, nr, "jarvislabs/A100-80GB/india-noida-01/ondemand", pricewatch.RentPerGPU, 1)
	scrapertest.Rent(t, nr, "jarvislabs/H100/europe-01/ondemand", pricewatch.RentPerGPU, 1)
	for _, c := range []struct {
		key, card string
		mode      pricewatch.Mode
		price     float64
	}{
		// Prices are per GPU-hour already: no division by num_gpus.
		{"jarvislabs/L4/india-noida-01/ondemand", "L4", pricewatch.ModeOnDemand, 0.44},
		{"jarvislabs/L4/india-noida-01/spot", "L4", pricewatch.ModeSpot, 0.29},
		// SXM or PCIe not stated: the lower-bound cards (unknown before).
		{"jarvislabs/A100-80GB/india-noida-01/ondemand", "A100-80GB", pricewatch.ModeOnDemand, 1.49},
		{"jarvislabs/A100-80GB/india-noida-01/spot", "A100-80GB", pricewatch.ModeSpot, 0.89},
		{"jarvislabs/H100/europe-01/ondemand", "H100-80GB", pricewatch.ModeOnDemand, 2.99},
	} {
		scrapertest.Price(t, nr, c.key, c.card, c.mode, c.price)
	}
	if g.Observations != 5 || g.ByMode["ondemand"] != 3 || g.ByMode["spot"] != 2 {
		t.Errorf("container and vm L4 rows must merge: %d observations, modes %v", g.Observations, g.ByMode)
	}
	l4 := scrapertest.Find(t, nr, "jarvislabs/L4/india-noida-01/ondemand")
	if l4.GPUs != 8 || l4.Provider != "jarvislabs" || l4.Currency != "USD" {
		t.Errorf("L4: %d GPUs from %s in %s", l4.GPUs, l4.Provider, l4.Currency)
	}
	if h := scrapertest.Find(t, nr, "jarvislabs/H100/europe-01/ondemand"); h.GPUs != 1 {
		t.Errorf("H100 without num_gpus: %d GPUs, want 1", h.GPUs)
	}
	for _, o := range nr.Offers {
		if o.Key == "jarvislabs/H100/europe-01/spot" {
			t.Error("null spot_price must give no spot offer")
		}
	}
	if len(nr.Unknown) != 0 {
		t.Errorf("unknown = %v, want none", nr.Unknown)
	}
}

func TestScraper_SendsKey(t *testing.T) {
	good := fixtures.Handler(fixtures.FS())
	var mu sync.Mutex
	var auth string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/misc/server_meta") {
			mu.Lock()
			auth = r.Header.Get("Authorization")
			mu.Unlock()
		}
		good.ServeHTTP(w, r)
	})
	if _, err := scrapertest.Scrape(t, "jarvislabs", h); err != nil {
		t.Fatal(err)
	}
	if auth != "Bearer test-secret" {
		t.Errorf("Authorization %q", auth)
	}
}

func TestScraper_Check(t *testing.T) {
	s := &jarvislabs.Scraper{}
	var d *scrapers.Disabled
	for _, key := range []string{"", "  "} {
		env := &scrapers.Env{Getenv: func(string) string { return key }}
		if err := s.Check(env); !errors.As(err, &d) || !strings.Contains(d.Reason, jarvislabs.APIKeyEnv) {
			t.Errorf("key %q: Check = %v, want *Disabled naming %s", key, err, jarvislabs.APIKeyEnv)
		}
		if _, err := s.Scrape(t.Context(), env); !errors.As(err, &d) {
			t.Errorf("key %q: Scrape = %v, want *Disabled", key, err)
		}
	}
	env := &scrapers.Env{Getenv: func(k string) string {
		if k == jarvislabs.APIKeyEnv {
			return "key"
		}
		return ""
	}}
	if err := s.Check(env); err != nil {
		t.Errorf("with a key: Check = %v", err)
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"HTML", `<html><body>Just a moment...</body></html>`, "expected JSON, got markup"},
		{"Truncated", `{"server_meta":[{"gpu_type":"L4","price_per_hour":0.4`, "decode JSON"},
		{"Empty", ``, "empty response body"},
		{"EmptyList", `{"server_meta":[]}`, "no offers parsed"},
		{"NoServerMeta", `{"gpus":[]}`, "no server_meta"},
		{"Unauthorized", `{"detail":"Invalid token"}`, "jarvislabs API error: Invalid token"},
		{"Array", `[{"gpu_type":"L4"}]`, "expected an object with server_meta"},
		{"RenamedPrice", `{"server_meta":[{"gpu_type":"L4","region":"r","hourly_price":0.44}]}`, "no offers parsed"},
		{"BadPrices", `{"server_meta":[{"gpu_type":"L4","price_per_hour":"bad","spot_price":-1},{"gpu_type":"","price_per_hour":1}]}`, "no offers parsed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := jarvislabs.Parse([]byte(c.body), "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestParse_Merge(t *testing.T) {
	// A container row cheaper than the vm row of the same GPUs wins; prices
	// and counts as strings are read.
	body := `{"server_meta":[
	 {"gpu_type":"A6000","region":"india-01","price_per_hour":"0.79","vram":"48","workload_type":"vm","num_gpus":"8"},
	 {"gpu_type":"A6000","region":"india-01","price_per_hour":0.69,"vram":"48","workload_type":"container","num_gpus":"4"},
	 {"gpu_type":"A6000","region":"europe-01","price_per_hour":0.89,"vram":"48","workload_type":"vm"}]}`
	obs, err := jarvislabs.Parse([]byte(body), "u")
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 2 || obs[0].Price != 0.69 || obs[0].GPUCount != 4 || obs[0].GPUMemoryGB != 48 ||
		obs[1].Region != "europe-01" || !obs[0].PerGPU || obs[0].URL != "u" {
		t.Errorf("%+v", obs)
	}
}

func FuzzParse(f *testing.F) {
	seed, err := fs.ReadFile(fixtures.FS(), "jarvislabs/server-meta.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"server_meta":[{"gpu_type":"L4","price_per_hour":"1e400","spot_price":"NaN","num_gpus":"-3","vram":"Inf"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		obs, err := jarvislabs.Parse(body, "")
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

// No GPU free: kept, not available now (the counts of the instance, for
// available=any); no free count given: any count up to num_gpus, unknown.
func TestParse_FreeDevices(t *testing.T) {
	obs, err := jarvislabs.Parse([]byte(`{"server_meta":[
	 {"gpu_type":"A6000","region":"india-01","price_per_hour":0.79,"num_gpus":"4","num_free_devices":0,"effective_num_free_devices":0},
	 {"gpu_type":"A5000","region":"india-01","price_per_hour":0.49,"num_gpus":"2"}]}`), "")
	if err != nil || len(obs) != 2 {
		t.Fatalf("%+v, %v", obs, err)
	}
	if obs[0].Available != pricewatch.AvailableNo || !slices.Equal(obs[0].GPUCounts, []int{1, 2, 3, 4}) {
		t.Errorf("full A6000: %q %v, want not available, per_gpu [1 2 3 4]", obs[0].Available, obs[0].GPUCounts)
	}
	if obs[1].RentUnit != pricewatch.RentPerGPU || !slices.Equal(obs[1].GPUCounts, []int{1, 2}) || obs[1].Available != "" {
		t.Errorf("A5000: %q %v %q, want per_gpu [1 2], availability unknown", obs[1].RentUnit, obs[1].GPUCounts, obs[1].Available)
	}
}

// What comes with the GPUCount GPUs, from fixtures/jarvislabs/server-meta.json,
// the per-GPU shares scaled: L4 "num_gpus": "8", "cpus_per_gpu": 28,
// "ram_per_gpu": 124 → 8 × 28 = 224 vCPUs, 8 × 124 = 992 GiB; A100-80GB
// "num_gpus": "4", 28 and 112 → 112 vCPUs, 448 GiB; H100 (no num_gpus: 1 GPU)
// 16 and 200.
func TestScraper_GPUShareDetails(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "jarvislabs")
	nr, _ := scrapertest.Normalize("jarvislabs", res)
	for _, c := range []struct {
		key        string
		gpus       int
		vcpus, ram float64
	}{
		{"jarvislabs/L4/india-noida-01/ondemand", 8, 224, 992},
		{"jarvislabs/L4/india-noida-01/spot", 8, 224, 992},
		{"jarvislabs/A100-80GB/india-noida-01/ondemand", 4, 112, 448},
		{"jarvislabs/H100/europe-01/ondemand", 1, 16, 200},
	} {
		o := scrapertest.Find(t, nr, c.key)
		if o.GPUs != c.gpus || o.VCPUs != c.vcpus || o.RAMGB != c.ram || o.RentURL != jarvislabs.RentURL {
			t.Errorf("%s: %d GPUs, %v vCPUs, %v GiB, rent %q; want %d, %v, %v", c.key, o.GPUs, o.VCPUs, o.RAMGB, o.RentURL, c.gpus, c.vcpus, c.ram)
		}
	}
}

// JarvisLabs rents spot capacity as containers, not VMs (gpuhunt's
// jarvislabs provider @ 35841515 publishes no spot offer for that reason).
// An offer has no field for the workload its price is for, so the source
// says it where its modes are described, and its spot offers link the
// templates (container) launch page. Before, Yields read "ondemand, spot".
func TestSpot_ContainersOnly(t *testing.T) {
	r, ok := scrapers.Get("jarvislabs")
	if !ok || !strings.Contains(r.Yields, "spot for containers only") {
		t.Errorf("yields %q: does not say spot is for containers only", r.Yields)
	}
	raw, err := fs.ReadFile(fixtures.FS(), "jarvislabs/server-meta.json")
	if err != nil {
		t.Fatal(err)
	}
	obs, err := jarvislabs.Parse(raw, "u")
	if err != nil {
		t.Fatal(err)
	}
	spot := 0
	for _, o := range obs {
		if o.Mode == pricewatch.ModeSpot {
			spot++
			if o.RentURL != jarvislabs.RentURL || !strings.HasSuffix(o.RentURL, "/templates") {
				t.Errorf("%s spot: rent page %q, want the templates page", o.OfferID, o.RentURL)
			}
		}
	}
	if spot == 0 {
		t.Error("no spot offer in the fixture")
	}
}
