package skypilot_test

import (
	"errors"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
	"github.com/pricewatch/pricewatch/scrapers/skypilot"
)

func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "skypilot")
	nr, g := scrapertest.CheckFixture(t, "skypilot", res)
	// RunPod's catalog repeats the on-demand price as the spot price where
	// no spot capacity is listed: those spot offers are not available, and
	// they are the only unavailable ones (the catalog states no stock).
	od := map[string]float64{}
	for _, o := range nr.Offers {
		if o.Mode == pricewatch.ModeOnDemand {
			od[strings.TrimSuffix(o.Key, "/ondemand")] = o.PricePerGPUHour
		}
	}
	same, out := 0, 0
	for _, o := range nr.Offers {
		repeat := o.Provider == "runpod" && o.Mode == pricewatch.ModeSpot && od[strings.TrimSuffix(o.Key, "/spot")] == o.PricePerGPUHour
		if repeat {
			same++
		}
		if o.Unavailable() {
			out++
			if !repeat {
				t.Errorf("%s: unavailable, but not a repeated RunPod price", o.Key)
			}
		}
	}
	if same == 0 || out != same {
		t.Errorf("%d RunPod spot rows repeat the on-demand price, %d unavailable", same, out)
	}
	// Instance rows are rented whole; Vast's rows are medians over many
	// marketplace offers (fetch_vast.py): reference prices, no rent unit.
	var vastRows []string
	for _, o := range nr.Offers {
		if o.Provider == "vast" {
			vastRows = append(vastRows, o.Key)
			if !o.Reference() || o.RentUnit != "" || len(o.GPUCounts) != 0 {
				t.Errorf("%s: kind %s rent unit %q counts %v, want a reference without unit", o.Key, o.Kind, o.RentUnit, o.GPUCounts)
			}
		} else if o.Reference() {
			t.Errorf("%s: a %s instance row is not a reference", o.Key, o.Provider)
		}
	}
	if len(vastRows) != 67 {
		t.Errorf("%d Vast rows, want 67", len(vastRows))
	}
	scrapertest.FixedUnits(t, nr)
	scrapertest.Rent(t, nr, "skypilot/lambda/gpu_8x_v100_n/us-east-1/ondemand", pricewatch.RentFixed, 8)
	scrapertest.Rent(t, nr, "skypilot/hyperstack/n3-RTX-A4000x10/NORWAY-1/ondemand", pricewatch.RentFixed, 10)
	scrapertest.Rent(t, nr, "skypilot/runpod/2x_A100-80GB_SECURE/CZ/spot", pricewatch.RentFixed, 2)

	for _, c := range []struct {
		key, card string
		mode      pricewatch.Mode
		price     float64
	}{
		// Instance prices divided by AcceleratorCount.
		{"skypilot/hyperstack/n3-A100x8/CANADA-1/ondemand", "A100-80GB-PCIE", pricewatch.ModeOnDemand, 10.8 / 8},                // 1.35
		{"skypilot/hyperstack/n3-H100-SXM5x8/US-1/ondemand", "H100-80GB-SXM", pricewatch.ModeOnDemand, 2.4},                     // 19.2 / 8
		{"skypilot/hyperstack/n3-H100x8-NVLink/CANADA-1/ondemand", "H100-80GB-PCIE", pricewatch.ModeOnDemand, 1.95},             // 15.6 / 8
		{"skypilot/nebius/gpu-h100-sxm_8gpu-128vcpu-1600gb/eu-north1/ondemand", "H100-80GB-SXM", pricewatch.ModeOnDemand, 2.95}, // 23.60 / 8
		{"skypilot/nebius/gpu-h100-sxm_8gpu-128vcpu-1600gb/eu-north1/spot", "H100-80GB-SXM", pricewatch.ModeSpot, 1.25},         // 10.00 / 8
		{"skypilot/nebius/gpu-b200-sxm_8gpu-160vcpu-1792gb/us-central1/ondemand", "B200-180GB-SXM", pricewatch.ModeOnDemand, 5.5},
		{"skypilot/lambda/gpu_8x_a100_80gb_sxm4/us-east-1/ondemand", "A100-80GB-SXM", pricewatch.ModeOnDemand, 2.79}, // 22.32 / 8
		{"skypilot/lambda/gpu_1x_h100_pcie/us-east-1/ondemand", "H100-80GB-PCIE", pricewatch.ModeOnDemand, 3.29},
		{"skypilot/lambda/gpu_1x_h100_sxm5/me-west-1/ondemand", "H100-80GB-SXM", pricewatch.ModeOnDemand, 4.29},
		{"skypilot/cudo/sapphire-rapids-h100_8x64v128gb/no-kristiansand-1/ondemand", "H100-80GB-SXM", pricewatch.ModeOnDemand, 15.3248 / 8}, // 1.9156
		{"skypilot/cudo/intel-ice-lake-a100-pci_1x2v4gb/us-carlsbad-1/ondemand", "A100-80GB-PCIE", pricewatch.ModeOnDemand, 1.3734000000000002},
		{"skypilot/runpod/2x_A100-80GB_SECURE/US/spot", "A100-80GB-PCIE", pricewatch.ModeSpot, 1.39},                        // 2.78 / 2, SpotPrice = Price kept
		{"skypilot/vast/4x-H100_SXM-32-65536/Vietnam, VN, AS/ondemand", "H100-80GB-SXM", pricewatch.ModeOnDemand, 8.53 / 4}, // 2.1325
		{"skypilot/vast/2x-H100_NVL-32-65536/Australia, AU, OC/ondemand", "H100-94GB-NVL", pricewatch.ModeOnDemand, 2.265},  // 4.53 / 2
		{"skypilot/vast/2x-A100_SXM4-32-65536/Slovenia, SI, EU/ondemand", "A100-40GB-SXM", pricewatch.ModeOnDemand, 0.745},  // total 80 GB / 2
		{"skypilot/vast/1x-A100_PCIE-32-65536/Oklahoma, US, NA/ondemand", "A100-80GB-PCIE", pricewatch.ModeOnDemand, 0.87},
		{"skypilot/vast/2x-B200-32-65536/US, NA/ondemand", "B200-180GB-SXM", pricewatch.ModeOnDemand, 4.705}, // region ", US, NA" trimmed
		{"skypilot/verda/1B200.30V/FIN-03/spot", "B200-180GB-SXM", pricewatch.ModeSpot, 1.712},
		{"skypilot/verda/2B300.60V/FIN-03/spot", "B300-288GB-SXM", pricewatch.ModeSpot, 4.893 / 2}, // empty Price: spot only
		{"skypilot/verda/2H200.141S.88V/FIN-03/ondemand", "H200-141GB-SXM", pricewatch.ModeOnDemand, 3.39},
	} {
		scrapertest.Price(t, nr, c.key, c.card, c.mode, c.price)
	}

	keys := map[string]pricewatch.Offer{}
	for _, o := range nr.Offers {
		keys[o.Key] = o
		if !(o.PricePerGPUHour > 0) || o.Currency != "USD" {
			t.Errorf("%s: price %v %s", o.Key, o.PricePerGPUHour, o.Currency)
		}
		cloud := strings.SplitN(o.OfferID, "/", 2)[0]
		if o.Source != "skypilot" || o.Provider != cloud {
			t.Errorf("%s: source %q provider %q, want skypilot and %q", o.Key, o.Source, o.Provider, cloud)
		}
	}
	for _, absent := range []string{
		"skypilot/lambda/cpu_4x_general/us-east-1/ondemand",       // CPU row
		"skypilot/nebius/cpu-d3_4vcpu-16gb/eu-north1/ondemand",    // CPU row (count 0)
		"skypilot/verda/CPU.4V.16G/FIN-01/ondemand",               // CPU row
		"skypilot/paperspace/C5/East Coast (NY2)/ondemand",        // CPU row
		"skypilot/vast/1x-H200-32-65536/France, FR, EU/spot",      // SpotPrice 0.00 = none
		"skypilot/verda/2B300.60V/FIN-03/ondemand",                // empty Price
		"skypilot/hyperstack/n3-A100x1/CANADA-1/spot",             // empty SpotPrice
		"skypilot/runpod/1x_A100-80GB_SECURE/US/US-KS-2/ondemand", // equal zones collapse to the region
		"skypilot/runpod/1x_A100-80GB_SECURE/US/US-TX-3/ondemand", // (same)
		"skypilot/aws/p4d.24xlarge/us-east-1/ondemand",            // opt-in cloud, not a default
		"skypilot/scaleway/H100-1-80G/fr-par/ondemand",            // opt-in cloud, not a default
	} {
		if _, ok := keys[absent]; ok {
			t.Errorf("offer %s must not exist", absent)
		}
	}
	// The 48 GB RTX 4090 is its own card, and Vast rows keep the suffix
	// SkyPilot's AcceleratorName drops (from the instance type).
	for key, card := range map[string]string{
		"skypilot/vast/1x-RTX_4090-32-65536/Hong Kong, HK, AS/ondemand":         "RTX-4090-48GB",
		"skypilot/vast/2x-RTX_3060_Ti-32-65536/Michigan, US, NA/ondemand":       "RTX-3060-TI",
		"skypilot/vast/1x-RTX_4060_Ti-32-65536/United Kingdom, GB, EU/ondemand": "RTX-4060-TI-16GB",
		"skypilot/vast/2x-RTX_4070S_Ti-32-65536/Bulgaria, BG, EU/ondemand":      "RTX-4070-TI-SUPER",
		"skypilot/lambda/gpu_1x_rtx6000/us-east-1/ondemand":                     "QUADRO-RTX-6000",
		"skypilot/cudo/ice-lake-rtx-a5000_1x2v4gb/ca-montreal-3/ondemand":       "RTX-A5000",
	} {
		if o, ok := keys[key]; !ok || o.Card != card {
			t.Errorf("%s: card %q (found %v), want %q", key, o.Card, ok, card)
		}
	}
	// Names that state the family and memory but no form factor (or
	// edition) where the row's fields do not decide it map to the
	// lower-bound cards (unknown before: 19 offers); a bare "V100" with no
	// memory (Paperspace) is 16 or 32 GB and stays unknown.
	for key, card := range map[string]string{
		"skypilot/lambda/gpu_8x_v100/us-east-1/ondemand":               "V100-16GB",         // "V100" 16 GB: SXM2 or PCIe stated nowhere
		"skypilot/verda/1RTXPRO6000.30V/FIN-03/ondemand":               "RTX-PRO-6000-96GB", // Server, Workstation or Max-Q not stated
		"skypilot/paperspace/H100/East Coast (NY2)/ondemand":           "H100-80GB",         // GpuInfo is just "H100", no memory
		"skypilot/paperspace/A100-80G/East Coast (NY2)/ondemand":       "A100-80GB",
		"skypilot/paperspace/V100-32Gx4/East Coast (NY2)/ondemand":     "V100-32GB",
		"skypilot/vast/8x-Tesla_V100-32-65536/Sweden, SE, EU/ondemand": "V100-16GB", // a group median over SXM2 and PCIe boards
	} {
		if o, ok := keys[key]; !ok || o.Card != card {
			t.Errorf("%s: card %q (found %v), want %q", key, o.Card, ok, card)
		}
	}
	if len(nr.Unknown) != 1 || nr.Unknown["V100"] != 1 {
		t.Errorf("unknown %v, want only Paperspace's bare V100", nr.Unknown)
	}
	// Before data/parts.csv these 9 offers were unknown ("A100 (40 GB)" ×2,
	// "H100 (80 GB)" ×2, "A100-80GB (80 GB)" ×5); the provider's own
	// description of the instance type decides them now. Prices per
	// GPU-hour by hand from the catalog rows: Lambda gpu_1x_a100 1.99 / 1 =
	// 1.99; Verda 1A100.22V 1.29 / 1 = 1.29, spot 0.4515; 4A100.88V
	// 5.16 / 4 = 1.29; 1H100.80S.32V 2.29 / 1, spot 0.8015.
	for key, want := range map[string]struct {
		card  string
		price float64
	}{
		"skypilot/lambda/gpu_1x_a100/us-east-1/ondemand": {"A100-40GB-PCIE", 1.99},
		"skypilot/lambda/gpu_1x_a100/us-west-2/ondemand": {"A100-40GB-PCIE", 1.99},
		"skypilot/verda/1A100.22V/FIN-01/ondemand":       {"A100-80GB-SXM", 1.29},
		"skypilot/verda/1A100.22V/FIN-03/spot":           {"A100-80GB-SXM", 0.4515},
		"skypilot/verda/4A100.88V/FIN-03/ondemand":       {"A100-80GB-SXM", 1.29},
		"skypilot/verda/1H100.80S.32V/FIN-02/ondemand":   {"H100-80GB-SXM", 2.29},
		"skypilot/verda/1H100.80S.32V/FIN-02/spot":       {"H100-80GB-SXM", 0.8015},
	} {
		o, ok := keys[key]
		if !ok || o.Card != want.card || math.Abs(o.PricePerGPUHour-want.price) > 1e-9 {
			t.Errorf("%s: card %q at %v (found %v), want %q at %v", key, o.Card, o.PricePerGPUHour, ok, want.card, want.price)
		}
	}
	if g.ByMode["ondemand"] == 0 || g.ByMode["spot"] == 0 {
		t.Errorf("modes %v", g.ByMode)
	}
}

// The opt-in clouds: AWS (spot per availability zone, empty Price),
// Scaleway (EUR, two zones at one price) and OVHcloud (v6).
func TestScraper_OptInClouds(t *testing.T) {
	srv := httptest.NewServer(fixtures.Handler(fixtures.FS()))
	defer srv.Close()
	s := skypilot.New()
	s.Clouds = []string{"aws", "scaleway", "ovhcloud"}
	res, err := s.Scrape(t.Context(), scrapertest.Env(t, "skypilot", srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	nr, _ := scrapertest.Normalize("skypilot", res)
	for _, c := range []struct {
		key, card string
		mode      pricewatch.Mode
		price     float64
	}{
		// On-demand is one price per region; spot differs per zone.
		{"skypilot/aws/p4d.24xlarge/us-east-1/ondemand", "", pricewatch.ModeOnDemand, 21.957642 / 8},
		{"skypilot/aws/p4d.24xlarge/us-east-1/use1-az1/spot", "", pricewatch.ModeSpot, 2.4655 / 8},
		{"skypilot/aws/p4d.24xlarge/us-east-1/use1-az6/spot", "", pricewatch.ModeSpot, 7.8799 / 8},
		{"skypilot/aws/p5e.48xlarge/us-east-2/spot", "H200-141GB-SXM", pricewatch.ModeSpot, 18.7359 / 8},  // empty Price, one zone
		{"skypilot/scaleway/H100-2-80G/fr-par/ondemand", "H100-80GB-PCIE", pricewatch.ModeOnDemand, 2.52}, // 5.04 / 2, GpuInfo "NVIDIA H100 PCIe"
		{"skypilot/ovhcloud/a100-360/GRA/ondemand", "A100-80GB", pricewatch.ModeOnDemand, 3.075},          // 6.15 / 2; no form factor: lower bound
	} {
		scrapertest.Price(t, nr, c.key, c.card, c.mode, c.price)
	}
	keys := map[string]pricewatch.Offer{}
	for _, o := range nr.Offers {
		keys[o.Key] = o
	}
	if o := keys["skypilot/scaleway/H100-2-80G/fr-par/ondemand"]; o.Currency != "EUR" || o.Provider != "scaleway" {
		t.Errorf("scaleway: %s %s, want EUR from provider scaleway", o.Currency, o.Provider)
	}
	if o := keys["skypilot/ovhcloud/a100-360/GRA/ondemand"]; o.Currency != "USD" {
		t.Errorf("ovhcloud currency %s, want USD", o.Currency)
	}
	if _, ok := keys["skypilot/scaleway/RENDER-S/fr-par/ondemand"]; !ok {
		t.Error("RENDER-S in fr-par-1 and fr-par-2 at one price must be one offer in fr-par")
	}
	if _, ok := keys["skypilot/aws/p5e.48xlarge/us-east-2/ondemand"]; ok {
		t.Error("p5e has an empty Price: no on-demand offer")
	}
	if _, ok := keys["skypilot/aws/p4d.24xlarge/us-east-1/use1-az1/ondemand"]; ok {
		t.Error("on-demand prices agree across zones: region only")
	}
}

// A cloud that fails fails the run, naming the cloud and the cause.
func TestScraper_CloudFails(t *testing.T) {
	good := fixtures.Handler(fixtures.FS())
	for _, c := range []struct {
		name    string
		handler func(w http.ResponseWriter)
		want    []string
	}{
		{"500", func(w http.ResponseWriter) { http.Error(w, "boom", http.StatusInternalServerError) },
			[]string{"skypilot cloud runpod", "HTTP 500"}},
		{"404", func(w http.ResponseWriter) { http.Error(w, "404: Not Found", http.StatusNotFound) },
			[]string{"skypilot cloud runpod", "HTTP 404"}},
		{"HTML", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<!doctype html><html><body>Just a moment...</body></html>\n"))
		}, []string{"skypilot cloud runpod", "expected CSV, got markup"}},
		{"RenamedColumn", func(w http.ResponseWriter) {
			w.Write([]byte("InstanceType,AcceleratorName,AcceleratorCount,Region,HourlyPrice\nx,A100,1,US,1.0\n"))
		}, []string{"skypilot cloud runpod", "missing column(s) Price"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/v8/runpod/vms.csv") {
					c.handler(w)
					return
				}
				good.ServeHTTP(w, r)
			})
			res, err := scrapertest.Scrape(t, "skypilot", h)
			if err == nil {
				t.Fatalf("no error; %d observations", len(res.Observations))
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to contain %q", err, w)
				}
			}
		})
	}
	// The GCP excerpt has machine rows without GPUs, TPUs and 700.0
	// placeholders only: nothing to parse is a failure naming GCP.
	srv := httptest.NewServer(good)
	defer srv.Close()
	s := skypilot.New()
	s.Clouds = []string{"lambda", "gcp"}
	_, err := s.Scrape(t.Context(), scrapertest.Env(t, "skypilot", srv.URL))
	if !errors.Is(err, scrapers.ErrNothingParsed) || !strings.Contains(err.Error(), "skypilot cloud gcp") {
		t.Errorf("gcp: err = %v, want ErrNothingParsed naming gcp", err)
	}
}

// Config adds to the built-in version and currency tables.
func TestScraper_Options(t *testing.T) {
	c := config.Default()
	y := "sources:\n  skypilot:\n    clouds: [lambda, fluidstack]\n    versions: {lambda: v7}\n    currencies: {ovhcloud: EUR}\n"
	if err := c.Decode(strings.NewReader(y)); err != nil {
		t.Fatal(err)
	}
	s := c.Sources["skypilot"].Scraper.(*skypilot.Scraper)
	if strings.Join(s.Clouds, ",") != "lambda,fluidstack" || s.Versions["lambda"] != "v7" || s.Versions["paperspace"] != "v6" ||
		s.Currency("ovhcloud") != "EUR" || s.Currency("scaleway") != "EUR" || s.Currency("lambda") != "USD" {
		t.Errorf("options: %+v", s)
	}
	if d := skypilot.New(); d.Versions["lambda"] != "" || d.Currency("ovhcloud") != "USD" {
		t.Error("config changed the package defaults")
	}
}

func TestScraper_CatalogURL(t *testing.T) {
	s := skypilot.New()
	s.Versions["lambda"] = "v7"
	const base = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/"
	for _, c := range []struct{ base, cloud, want, err string }{
		{base, "runpod", base + "runpod/vms.csv", ""},
		{strings.TrimSuffix(base, "/"), "runpod", base + "runpod/vms.csv", ""},
		{base, "paperspace", "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v6/paperspace/vms.csv", ""},
		{base, "lambda", "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v7/lambda/vms.csv", ""},
		{"http://127.0.0.1:9/cat/v6/", "scaleway", "http://127.0.0.1:9/cat/v6/scaleway/vms.csv", ""},
		{base, "../etc", "", "bad cloud name"},
		{base, "", "", "bad cloud name"},
		{"not a url", "runpod", "", "bad base url"},
	} {
		got, err := s.CatalogURL(c.base, c.cloud)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %s: err = %v, want %q", c.base, c.cloud, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s %s = %q, %v; want %q", c.base, c.cloud, got, err, c.want)
		}
	}
	s.Versions["vast"] = "latest"
	if _, err := s.CatalogURL(base, "vast"); err == nil || !strings.Contains(err.Error(), "bad catalog version") {
		t.Errorf("bad version: err = %v", err)
	}
}

func TestParse_Errors(t *testing.T) {
	const header = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
	for _, c := range []struct{ name, body, want string }{
		{"Empty", "", "empty response body"},
		{"HTML", "<html><body>Just a moment...</body></html>\n", "expected CSV, got markup"},
		{"NoFinalNewline", header + "gpu_1x_a10,A10,1.0,30.0,200.0,1.2", "truncated"},
		{"CutInQuotedField", header + "gpu_1x_a10,A10,1.0,30.0,200.0,1.29,us-east-1,\"{'Gpus': [{'Name'\n", "parse CSV"},
		{"ShortRow", header + "gpu_1x_a10,A10,1.0,30.0\n", "parse CSV"},
		{"RenamedColumn", strings.Replace(header, "AcceleratorCount", "GPUCount", 1) + "x,A10,1,1,1,1,r,,\n", "missing column(s) AcceleratorCount"},
		{"HeaderOnly", header, "no offers parsed"},
		{"OnlyCPU", header + "cpu_4x_general,,,4.0,16.0,0.2,us-east-1,,\n", "no offers parsed"},
		{"OnlyPlaceholders", header + ",tpu-v6e-1,1,,,700.0,asia-east1,tpu-v6e-1,700.0\nx,A100,1,1,1,700.0,r,,0\n", "no offers parsed"},
		{"BadPrices", header + "x,A100,1,1,1,abc,r,,-1\ny,A100,0.5.1,1,1,1.0,r,,\n", "no offers parsed"},
		{"Garbage", "\x00\x01garbage{{{\n", "missing column(s)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := skypilot.Parse([]byte(c.body), "lambda", "USD", "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestParse_Rows(t *testing.T) {
	// Column order differs by cloud; CRLF endings; a UTF-8 BOM; a share of
	// a GPU; GPU memory from GpuInfo (Vast's is the instance total).
	body := "\xef\xbb\xbfAvailabilityZone,Price,Region,AcceleratorCount,InstanceType,AcceleratorName,GpuInfo\r\n" +
		"z1,0.5,r1,0.25,frac,A10,\r\n" +
		"z1,4.0,r1,2,two,RTX4090,\"{'Gpus': [{'Name': 'RTX4090', 'Count': 2, 'MemoryInfo': {'SizeInMiB': 49128}}], 'TotalGpuMemoryInMiB': 49128}\"\r\n"
	obs, err := skypilot.Parse([]byte(body), "vast", "USD", "u")
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 2 {
		t.Fatalf("%d observations: %+v", len(obs), obs)
	}
	if o := obs[0]; o.GPUCount != 1 || o.GPUFraction != 0.25 || o.PerGPU || o.Price != 0.5 || o.Region != "r1" {
		t.Errorf("fractional row: %+v", o)
	}
	if o := obs[1]; o.GPUCount != 2 || o.GPUMemoryGB != 24 || o.OfferID != "vast/two" || o.Provider != "vast" || o.URL != "u" {
		t.Errorf("vast row: %+v", o)
	}
}

func TestGPUName(t *testing.T) {
	for _, c := range []struct{ accel, info, instance, want string }{
		{"H100", "H100", "gpu_1x_h100_pcie", "H100 PCIE"},
		{"H100", "H100", "gpu_1x_h100_sxm5", "H100 SXM5"},
		{"H100", "H100", "1x-H100_NVL-32-65536", "H100 NVL"},
		{"A100-80GB", "A100 PCIe", "1x_A100-80GB_SECURE", "A100-80GB PCIE"}, // GpuInfo name first
		{"A100", "A100", "intel-ice-lake-a100-pci_1x2v4gb", "A100 PCIE"},    // "pci" is PCIe
		{"H100-80G-PCIe", "H100-80G-PCIe", "n3-H100x1", "H100-80G-PCIe"},    // already stated
		{"H100", "H100", "1H100.80S.32V", "H100"},                           // nothing stated
		{"A100", "A100", "odd-a100-sxm4-pcie", "A100"},                      // contradictory: nothing
		{"RTX4090", "RTX4090", "1x-RTX_4090-32-65536", "RTX4090"},
	} {
		if got := skypilot.GPUName(c.accel, c.info, c.instance); got != c.want {
			t.Errorf("GPUName(%q, %q, %q) = %q, want %q", c.accel, c.info, c.instance, got, c.want)
		}
	}
}

// Vast rows keep the suffix SkyPilot's AcceleratorName drops, from the
// instance type that carries Vast's gpu_name.
func TestVastName(t *testing.T) {
	for _, c := range []struct{ accel, instance, want string }{
		{"RTX3060", "2x-RTX_3060_Ti-32-65536", "RTX 3060 Ti"},
		{"RTX3060", "1x-RTX_3060-32-65536", "RTX 3060"},
		{"RTX4070", "2x-RTX_4070S_Ti-32-65536", "RTX 4070S Ti"},
		{"RTX4060", "1x-RTX_4060_Ti-32-65536", "RTX 4060 Ti"},
		{"RTX3090", "1x-RTX_3090_Ti-32-65536", "RTX 3090 Ti"},
		{"RTX4090", "1x-RTX_4090D-32-65536", "RTX 4090D"},
		{"RTXPRO6000S", "1x-RTX_PRO_6000_S-32-65536", "RTX PRO 6000 S"},
		{"RTX6000-Ada", "1x-RTX_6000Ada-32-65536", "RTX 6000Ada"},
		{"V100", "8x-Tesla_V100-32-65536", "Tesla V100"},
		{"H100", "2x-H100_SXM-32-65536", "H100 SXM"},
		{"A40", "1x-A40-32-65536", "A40"},
		{"RTX4090", "gpu_1x_rtx4090", "RTX4090"}, // not a Vast instance type
		{"A100", "1x-H100_SXM-32-65536", "A100"}, // does not extend the name
		{"", "1x-RTX_4090-32-65536", ""},
	} {
		if got := skypilot.VastName(c.accel, c.instance); got != c.want {
			t.Errorf("VastName(%q, %q) = %q, want %q", c.accel, c.instance, got, c.want)
		}
	}
}

func TestParseLiteral(t *testing.T) {
	v, err := skypilot.ParseLiteral(`{'Gpus': [{'Name': 'A100-80G-PCIe', 'Manufacturer': null, 'Count': '1.0', ` +
		`'Workloads': ['graphics', 'ml-ai'], 'Ok': True, 'X': None, 'T': (1, 2,), 'MemoryInfo': {'SizeInMiB': 81920}}], 'TotalGpuMemoryInMiB': 8.192e4}`)
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	g := m["Gpus"].([]any)[0].(map[string]any)
	if g["Name"] != "A100-80G-PCIe" || g["Count"] != "1.0" || g["Manufacturer"] != nil || g["Ok"] != true ||
		g["MemoryInfo"].(map[string]any)["SizeInMiB"] != 81920.0 || m["TotalGpuMemoryInMiB"] != 81920.0 {
		t.Errorf("parsed %#v", v)
	}
	if v, err := skypilot.ParseLiteral(`{"Gpus": [{"Name": "B300", "Count": 1, "MemoryInfo": {"SizeInMiB": 268288}}]}`); err != nil ||
		v.(map[string]any)["Gpus"].([]any)[0].(map[string]any)["Name"] != "B300" {
		t.Errorf("JSON: %v %v", v, err)
	}
	if v, err := skypilot.ParseLiteral(`'it\'s \"x\" \u00e9'`); err != nil || v != `it's "x" é` {
		t.Errorf("escapes: %q %v", v, err)
	}
	for _, bad := range []string{"", "{", "{'a' 1}", "{'a': 1", "[1, 2", "'open", "__import__('os')", "H100",
		"{'a': 1} trailing", strings.Repeat("[", 100) + strings.Repeat("]", 100), "1.2.3"} {
		if _, err := skypilot.ParseLiteral(bad); err == nil {
			t.Errorf("ParseLiteral(%q) accepted", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	files, err := fs.Glob(fixtures.FS(), "skypilot/*.csv")
	if err != nil || len(files) == 0 {
		f.Fatalf("fixtures: %v", err)
	}
	for _, name := range files {
		b, err := fs.ReadFile(fixtures.FS(), name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("InstanceType,AcceleratorName,AcceleratorCount,Price,Region,GpuInfo\nx,A10,1e308,1e308,r,\"{'Gpus': [{'MemoryInfo': {'SizeInMiB': 1e400}}]}\"\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		obs, err := skypilot.Parse(body, "vast", "USD", "")
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
