package primeintellect_test

import (
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers/primeintellect"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// The fixture is built in the documented shape around the two offers
// Prime Intellect's docs show (fixtures/primeintellect/PROVENANCE.md):
// two pages of 5 items (totalCount 10), one item a dearer duplicate of the
// docs' RunPod offer, so 9 offers, every GPU mapped.
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, primeintellect.Name)
	nr, g := scrapertest.CheckFixture(t, primeintellect.Name, res)
	scrapertest.FixedUnits(t, nr)
	if len(res.Observations) != 9 || len(g.Unknown) != 0 {
		t.Fatalf("%d observations, unknown %v; want 9 (both pages, the duplicate dropped), all mapped", len(res.Observations), g.Unknown)
	}
	scrapertest.ResoldOffers(t, nr, primeintellect.Name, []scrapertest.Resold{
		// The docs' RunPod offer, 2.69 for 1 GPU; its duplicate at 2.89 is dropped.
		{Key: "primeintellect/runpod/NVIDIA H100 PCIe/1x/secure_cloud/US-KS-2/ondemand", Card: "H100-80GB-PCIE", Provider: "runpod", Mode: pricewatch.ModeOnDemand, GPUs: 1, Price: 2.69, Avail: pricewatch.AvailableYes},
		// The docs' Hyperstack offer: 1.9 for 1 GPU (Hyperstack's own H100 PCIe price).
		{Key: "primeintellect/hyperstack/n3-H100x1/1x/secure_cloud/CANADA-1/ondemand", Card: "H100-80GB-PCIE", Provider: "hyperstack", Mode: pricewatch.ModeOnDemand, GPUs: 1, Price: 1.90, Avail: pricewatch.AvailableYes},
		// 22.32 for 8 H100 SXM5 = 2.79; datacrunch is Verda.
		{Key: "primeintellect/datacrunch/8H100.80S.176V/8x/secure_cloud/FIN-01/ondemand", Card: "H100-80GB-SXM", Provider: "verda", Mode: pricewatch.ModeOnDemand, GPUs: 8, Price: 2.79, Avail: pricewatch.AvailableYes},
		// communityPrice 4.38 (not onDemand 4.78) for 2 GPUs = 2.19.
		{Key: "primeintellect/runpod/NVIDIA H100 PCIe/2x/community_cloud/US-KS-2/ondemand", Card: "H100-80GB-PCIE", Provider: "runpod", Mode: pricewatch.ModeOnDemand, GPUs: 2, Price: 2.19, Avail: pricewatch.AvailableYes},
		// A100_40GB on SXM4: the 40 GB SXM part.
		{Key: "primeintellect/lambdalabs/gpu_1x_a100_sxm4/1x/secure_cloud/us-west-1/ondemand", Card: "A100-40GB-SXM", Provider: "lambda", Mode: pricewatch.ModeOnDemand, GPUs: 1, Price: 1.29, Avail: pricewatch.AvailableYes},
		// Prime's own datacenter: 27.92 / 8 = 3.49.
		{Key: "primeintellect/primecompute/H200x8/8x/secure_cloud/US-TX-1/ondemand", Card: "H200-141GB-SXM", Provider: "primeintellect", Mode: pricewatch.ModeOnDemand, GPUs: 8, Price: 3.49, Avail: pricewatch.AvailableYes},
		{Key: "primeintellect/massedcompute/gpu_1x_a6000/1x/secure_cloud/US-KS-1/ondemand", Card: "RTX-A6000", Provider: "massedcompute", Mode: pricewatch.ModeOnDemand, GPUs: 1, Price: 0.57, Avail: pricewatch.AvailableYes},
		// isSpot: a spot offer at 0.82.
		{Key: "primeintellect/runpod/NVIDIA A100 80GB PCIe/1x/secure_cloud/EU-RO-1/spot", Card: "A100-80GB-PCIE", Provider: "runpod", Mode: pricewatch.ModeSpot, GPUs: 1, Price: 0.82, Avail: pricewatch.AvailableYes},
		// stockStatus "Unavailable".
		{Key: "primeintellect/hyperstack/n3-L40x1/1x/secure_cloud/NORWAY-1/ondemand", Card: "L40", Provider: "hyperstack", Mode: pricewatch.ModeOnDemand, GPUs: 1, Price: 1.00, Avail: pricewatch.AvailableNo},
	})

	// The docs' RunPod offer: 16 vCPUs, 251 GB, 80 GB disk, in the US, stock "Low".
	o := scrapertest.Find(t, nr, "primeintellect/runpod/NVIDIA H100 PCIe/1x/secure_cloud/US-KS-2/ondemand")
	if o.VCPUs != 16 || o.RAMGB != 251 || o.DiskGB != 80 || o.Country != "US" || o.Stock != "Low" || o.Interconnect != "pcie" {
		t.Errorf("runpod H100: %+v stock %q", o.Machine, o.Stock)
	}
}

func TestScraper_NeedsKey(t *testing.T) {
	scrapertest.NeedsSecret(t, &primeintellect.Scraper{}, primeintellect.KeyEnv, "Availability")
}

func TestGPUName(t *testing.T) {
	for _, c := range []struct {
		gpu, socket, want string
		mem               float64
	}{
		{"H100_80GB", "SXM5", "H100 SXM5", 80},
		{"H100_80GB", "PCIe", "H100 PCIE", 80},
		{"A100_40GB", "SXM4", "A100 SXM4", 40},
		{"RTX6000Ada_48GB", "PCIe", "RTX6000Ada", 48},       // one form only
		{"RTX_PRO_6000B_96GB", "PCIe", "RTX_PRO_6000B", 96}, // edition not stated
		{"H200_141GB", "", "H200", 141},
	} {
		name, mem := primeintellect.GPUName(c.gpu, c.socket)
		if name != c.want || mem != c.mem {
			t.Errorf("GPUName(%q, %q) = %q, %g; want %q, %g", c.gpu, c.socket, name, mem, c.want, c.mem)
		}
	}
}

func TestSeller(t *testing.T) {
	for in, want := range map[string]string{
		"runpod": "runpod", "datacrunch": "verda", "lambdalabs": "lambda", "primecompute": "primeintellect",
		"dc_roan": "primeintellect", "Massed Compute": "massedcompute",
	} {
		if got := primeintellect.Seller(in); got != want {
			t.Errorf("Seller(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"detail", `{"detail": "Not authenticated"}`, "Not authenticated"},
		{"no list", `{"totalCount": 0}`, "no items"},
		{"no priced offer", `{"items": [{"cloudId": "x", "gpuType": "H100_80GB", "provider": "runpod", "gpuCount": 1, "prices": {"onDemand": null}}], "totalCount": 1}`, "no offers parsed"},
		{"truncated", `{"items": [`, "JSON"},
	} {
		_, err := primeintellect.Parse([]byte(c.body), "u")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}
