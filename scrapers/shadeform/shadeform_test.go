package shadeform_test

import (
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
	"github.com/pricewatch/pricewatch/scrapers/shadeform"
)

// The fixture is built in the documented shape around two entries of
// Shadeform's own docs (fixtures/shadeform/PROVENANCE.md): 10 instance
// types, 13 offers (one per region; the B200 in none), every GPU mapped.
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, shadeform.Name)
	nr, g := scrapertest.CheckFixture(t, shadeform.Name, res)
	scrapertest.FixedUnits(t, nr)
	if len(res.Observations) != 13 || len(g.Unknown) != 0 {
		t.Fatalf("%d observations, unknown %v; want 13, all mapped", len(res.Observations), g.Unknown)
	}
	scrapertest.ResoldOffers(t, nr, shadeform.Name, []scrapertest.Resold{
		// The quickstart's answer: 57 ¢ for 1 A6000 = 0.57.
		{Key: "shadeform/massedcompute/A6000/kansascity-usa-1/ondemand", Card: "RTX-A6000", Provider: "massedcompute", Mode: pricewatch.ModeOnDemand, GPUs: 1, Price: 0.57, Avail: pricewatch.AvailableYes},
		// The cluster-types example: 1400 ¢ for 8 H100 SXM5 = 14.00 / 8 = 1.75.
		{Key: "shadeform/denvr/H100_sxm5x8/houston-usa-1/ondemand", Card: "H100-80GB-SXM", Provider: "denvr", Mode: pricewatch.ModeOnDemand, GPUs: 8, Price: 1.75, Avail: pricewatch.AvailableYes},
		// 2392 ¢ / 8 = 299 ¢ = 2.99; one region available, one not.
		{Key: "shadeform/lambdalabs/H100_sxm5x8/us-south-1/ondemand", Card: "H100-80GB-SXM", Provider: "lambda", Mode: pricewatch.ModeOnDemand, GPUs: 8, Price: 2.99, Avail: pricewatch.AvailableYes},
		{Key: "shadeform/lambdalabs/H100_sxm5x8/us-east-1/ondemand", Card: "H100-80GB-SXM", Provider: "lambda", Mode: pricewatch.ModeOnDemand, GPUs: 8, Price: 2.99, Avail: pricewatch.AvailableNo},
		// "A100" on sxm4 with 40 GB per GPU: A100 SXM4 40 GB, 129 ¢.
		{Key: "shadeform/lambdalabs/A100/us-west-1/ondemand", Card: "A100-40GB-SXM", Provider: "lambda", Mode: pricewatch.ModeOnDemand, GPUs: 1, Price: 1.29, Avail: pricewatch.AvailableYes},
		// An empty availability list: one offer, no region, not available.
		{Key: "shadeform/lambdalabs/B200/-/ondemand", Card: "B200-180GB-SXM", Provider: "lambda", Mode: pricewatch.ModeOnDemand, GPUs: 1, Price: 6.99, Avail: pricewatch.AvailableNo},
		// datacrunch is Verda: 329 ¢ for one H200.
		{Key: "shadeform/datacrunch/H200/helsinki-finland-1/ondemand", Card: "H200-141GB-SXM", Provider: "verda", Mode: pricewatch.ModeOnDemand, GPUs: 1, Price: 3.29, Avail: pricewatch.AvailableYes},
		{Key: "shadeform/hyperstack/H100/canada-1/ondemand", Card: "H100-80GB-PCIE", Provider: "hyperstack", Mode: pricewatch.ModeOnDemand, GPUs: 1, Price: 1.90, Avail: pricewatch.AvailableYes},
		// 1000 ¢ / 8 A100_80G on sxm4 = 125 ¢.
		{Key: "shadeform/massedcompute/A100_80Gx8/us-central-2/ondemand", Card: "A100-80GB-SXM", Provider: "massedcompute", Mode: pricewatch.ModeOnDemand, GPUs: 8, Price: 1.25, Avail: pricewatch.AvailableYes},
		// 1592 ¢ / 8 = 199 ¢.
		{Key: "shadeform/voltagepark/H100_sxm5x8/us-central-1/ondemand", Card: "H100-80GB-SXM", Provider: "voltagepark", Mode: pricewatch.ModeOnDemand, GPUs: 8, Price: 1.99, Avail: pricewatch.AvailableYes},
	})

	// What comes with the quickstart's A6000: 6 vCPUs, 48 GB RAM, 256 GB disk, PCIe.
	o := scrapertest.Find(t, nr, "shadeform/massedcompute/A6000/kansascity-usa-1/ondemand")
	if o.VCPUs != 6 || o.RAMGB != 48 || o.DiskGB != 256 || o.Interconnect != "pcie" || o.RentURL != shadeform.RentURL {
		t.Errorf("A6000 machine: %+v", o.Machine)
	}
	if o := scrapertest.Find(t, nr, "shadeform/denvr/H100_sxm5x8/houston-usa-1/ondemand"); o.Interconnect != "nvlink" {
		t.Errorf("denvr H100 (nvlink true): link %q", o.Interconnect)
	}
}

func TestScraper_NeedsKey(t *testing.T) {
	scrapertest.NeedsSecret(t, shadeform.New(), shadeform.KeyEnv)
}

func TestGPUName(t *testing.T) {
	for _, c := range []struct{ gpu, ic, want string }{
		{"H100", "sxm5", "H100 SXM5"},
		{"H100", "pcie", "H100 PCIE"},
		{"A100_80G", "sxm4", "A100_80G SXM4"},
		{"A6000", "pcie", "A6000"},         // one form only: the name decides
		{"H200", "sxm5", "H200"},           // likewise
		{"H100", "", "H100"},               // no form stated: stays ambiguous
		{"V100_SXM2", "sxm2", "V100_SXM2"}, // the name states its form
	} {
		if got := shadeform.GPUName(c.gpu, c.ic); got != c.want {
			t.Errorf("GPUName(%q, %q) = %q, want %q", c.gpu, c.ic, got, c.want)
		}
	}
}

// An availability entry for spot rental (rental_type "spot", its own
// hourly_price in dollars: a third party's test shape, not Shadeform's
// reference) is not read: no spot offer, and the on-demand offer of the
// same region keeps the instance type's hourly_price.
func TestParse_SpotEntryNotRead(t *testing.T) {
	body := `{"instance_types": [{"cloud": "lambdalabs", "shade_instance_type": "B200x8",
	  "configuration": {"num_gpus": 8, "gpu_type": "B200", "interconnect": "sxm6", "vram_per_gpu_in_gb": 180},
	  "hourly_price": 5352, "availability": [
	    {"region": "dulles-usa-1", "available": false, "rental_type": "on_demand"},
	    {"region": "dulles-usa-1", "available": true, "rental_type": "spot", "hourly_price": "26.76"}]}]}`
	obs, err := shadeform.Parse([]byte(body), "u")
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 1 || obs[0].Mode != pricewatch.ModeOnDemand || obs[0].Price != 53.52 || obs[0].Available != pricewatch.AvailableNo {
		t.Errorf("%+v", obs)
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"error", `{"error": "invalid api key"}`, "invalid api key"},
		{"no list", `{}`, "no instance_types"},
		{"no priced type", `{"instance_types": [{"cloud": "aws", "shade_instance_type": "A10G", "configuration": {"num_gpus": 1, "gpu_type": "A10G"}, "hourly_price": 0}]}`, "no offers parsed"},
		{"truncated", `{"instance_types": [`, "JSON"},
	} {
		_, err := shadeform.Parse([]byte(c.body), "u")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}
