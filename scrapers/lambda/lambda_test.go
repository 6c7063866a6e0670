package lambda_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io/fs"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/scrapers/lambda"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// realRows is the number of priced <tr data-plan> rows in the fixture's
// table (12 rows, one of them an em dash). The <script> copy holds 12 more.
const realRows = 11

// scrapePage runs the source keyless over the fixtures: the pricing page.
func scrapePage(t *testing.T) scrapers.Result {
	t.Helper()
	res, err := scrapertest.ScrapeWith(t, "lambda", fixtures.Handler(fixtures.FS()), scrapertest.NoSecret)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The keyless fallback: the pricing page (golden expected-page.json).
func TestScraper_PageFixture(t *testing.T) {
	res := scrapePage(t)
	nr, g := scrapertest.Normalize("lambda", res)
	scrapertest.CheckGoldenFile(t, g, "expected-page.json")
	if nr.Invalid != nil {
		t.Errorf("invalid observations: %v", nr.Invalid)
	}
	if len(res.Observations) != realRows || len(nr.Offers) != realRows || g.ByMode["ondemand"] != realRows {
		t.Errorf("%d observations, %d offers (%v), want %d: the script copy must be ignored",
			len(res.Observations), len(nr.Offers), g.ByMode, realRows)
	}

	// SkyPilot catalog Price per instance / AcceleratorCount.
	for _, c := range []struct {
		key, card string
		price     float64
	}{
		{"lambda/NVIDIA A100 SXM/240vcpu/-/ondemand", "A100-80GB-SXM", 2.79},  // gpu_8x_a100_80gb_sxm4 22.32/8
		{"lambda/NVIDIA H100 PCIe/26vcpu/-/ondemand", "H100-80GB-PCIE", 3.29}, // gpu_1x_h100_pcie
		{"lambda/NVIDIA H100 SXM/26vcpu/-/ondemand", "H100-80GB-SXM", 4.29},   // gpu_1x_h100_sxm5
		{"lambda/NVIDIA A10/30vcpu/-/ondemand", "A10", 1.29},                  // gpu_1x_a10
		{"lambda/NVIDIA A100 PCIe/30vcpu/-/ondemand", "A100-40GB-PCIE", 1.99}, // gpu_1x_a100 1.99/1 ("A100 (40 GB PCIe)")
		{"lambda/NVIDIA RTX A6000/14vcpu/-/ondemand", "RTX-A6000", 1.09},      // gpu_1x_a6000
		{"lambda/NVIDIA RTX A6000/28vcpu/-/ondemand", "RTX-A6000", 1.09},      // gpu_2x_a6000 2.18/2
		{"lambda/NVIDIA RTX A6000/56vcpu/-/ondemand", "RTX-A6000", 1.09},      // gpu_4x_a6000 4.36/4
		// No Lambda page or response states the V100's form factor: the
		// V100-16GB lower-bound card (V100-16GB-SXM2 once, then unknown).
		{"lambda/NVIDIA Tesla V100/92vcpu/-/ondemand", "V100-16GB", 0.79},            // gpu_8x_v100 6.32/8
		{"lambda/NVIDIA Tesla V100/88vcpu/-/ondemand", "V100-16GB", 0.79},            // gpu_8x_v100_n 6.32/8
		{"lambda/NVIDIA Quadro RTX 6000/14vcpu/-/ondemand", "QUADRO-RTX-6000", 0.69}, // gpu_1x_rtx6000
	} {
		scrapertest.Price(t, nr, c.key, c.card, pricewatch.ModeOnDemand, c.price)
	}
	// Every shape is rented whole, with the shape table's GPU count.
	scrapertest.FixedUnits(t, nr)
	for key, n := range map[string]int{
		"lambda/NVIDIA A100 SXM/240vcpu/-/ondemand":       8,
		"lambda/NVIDIA H100 SXM/26vcpu/-/ondemand":        1,
		"lambda/NVIDIA A100 PCIe/30vcpu/-/ondemand":       1,
		"lambda/NVIDIA RTX A6000/28vcpu/-/ondemand":       2,
		"lambda/NVIDIA RTX A6000/56vcpu/-/ondemand":       4,
		"lambda/NVIDIA Tesla V100/88vcpu/-/ondemand":      8,
		"lambda/NVIDIA Quadro RTX 6000/14vcpu/-/ondemand": 1,
	} {
		scrapertest.Rent(t, nr, key, pricewatch.RentFixed, n)
	}
	for _, o := range nr.Offers {
		if o.Region != "" || o.Currency != "USD" || o.Mode != pricewatch.ModeOnDemand {
			t.Errorf("%s: region %q currency %s mode %s", o.Key, o.Region, o.Currency, o.Mode)
		}
		if strings.Contains(o.GPUName, "B200") {
			t.Errorf("%s comes from the script copy", o.Key)
		}
	}
	for _, o := range res.Observations {
		if o.OfferID == "NVIDIA H100 SXM/208vcpu" {
			t.Error("the em-dash row must be skipped")
		}
		if !o.PerGPU || o.GPUMemoryGB <= 0 {
			t.Errorf("%s: per GPU %v, memory %v", o.OfferID, o.PerGPU, o.GPUMemoryGB)
		}
	}
	// Every row maps (the Quadro RTX 6000 is a card; the V100 the lower bound).
	if len(nr.Unknown) != 0 {
		t.Errorf("unknown = %v, want none", nr.Unknown)
	}
}

// TestParse_SameAsScrape checks that Parse, over the raw page, yields what
// the collector's callbacks yield.
func TestParse_SameAsScrape(t *testing.T) {
	body, err := fs.ReadFile(fixtures.FS(), "lambda/pricing.html")
	if err != nil {
		t.Fatal(err)
	}
	obs, err := lambda.Parse(body, "")
	if err != nil {
		t.Fatal(err)
	}
	res := scrapePage(t)
	if len(obs) != len(res.Observations) {
		t.Fatalf("Parse %d observations, Scrape %d", len(obs), len(res.Observations))
	}
	for i := range obs {
		a, b := obs[i], res.Observations[i]
		a.URL, b.URL = "", ""
		if !reflect.DeepEqual(a, b) {
			t.Errorf("row %d: Parse %+v, Scrape %+v", i, a, b)
		}
	}
}

func row(plan, vcpus, price string) string {
	return `<tr data-plan="` + plan + `"><th data-label="Plan">` + plan + `</th>` +
		`<td data-label="VRAM/GPU">80 GB</td><td data-label="vCPUs">` + vcpus + `</td>` +
		`<td data-label="PRICE/GPU/HR*">` + price + `</td></tr>`
}

func page(rows ...string) string {
	return "<html><body><table><tbody>" + strings.Join(rows, "") + "</tbody></table></body></html>"
}

func TestParse_Cells(t *testing.T) {
	obs, err := lambda.Parse([]byte(page(
		row("NVIDIA H100 SXM", "26", "  $2.99 "),
		row("NVIDIA H100 SXM", "208", "\u2014"), // literal em dash
		row("NVIDIA H100 SXM", "104", ""),       // empty
		row("NVIDIA GH200", "64", "$1,049.50"),
	)), "u")
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 2 || obs[0].OfferID != "NVIDIA H100 SXM/26vcpu" || obs[0].Price != 2.99 ||
		obs[0].GPUMemoryGB != 80 || !obs[0].PerGPU || obs[1].Price != 1049.5 {
		t.Errorf("observations %+v", obs)
	}
	// The 26-vCPU H100 shape is one GPU, sold whole; no table entry says
	// how many GPUs the 64-vCPU GH200 row has: no count, no rent unit.
	if obs[0].GPUCount != 1 || obs[0].RentUnit != pricewatch.RentFixed || obs[1].GPUCount != 0 || obs[1].RentUnit != "" {
		t.Errorf("rent terms: %d %q, %d %q; want 1 fixed, 0 none", obs[0].GPUCount, obs[0].RentUnit, obs[1].GPUCount, obs[1].RentUnit)
	}
	// Without a Plan cell, the data-plan attribute names the plan.
	obs, err = lambda.Parse([]byte(page(`<tr data-plan="NVIDIA A10"><td data-label="vCPUs">30</td>`+
		`<td data-label="PRICE/GPU/HR">$1.29</td></tr>`)), "")
	if err != nil || len(obs) != 1 || obs[0].GPUName != "NVIDIA A10" || obs[0].OfferID != "NVIDIA A10/30vcpu" {
		t.Errorf("data-plan fallback: %+v, %v", obs, err)
	}
}

// The shape table is the real SkyPilot Lambda catalog: every GPU row of the
// catalog (fixtures/skypilot/lambda-vms.csv, the same real excerpt) has its
// count in the table under its model and vCPUs, and every table entry is
// such a row.
func TestShapes_Catalog(t *testing.T) {
	b, err := fs.ReadFile(fixtures.FS(), "skypilot/lambda-vms.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	table := lambda.Shapes()
	seen := map[string]bool{}
	for _, r := range rows[1:] {
		accel := r[col["AcceleratorName"]]
		if accel == "" {
			continue // CPU instance
		}
		model, _, _ := strings.Cut(accel, "-") // A100-80GB: the A100 model
		vcpus, _ := strconv.ParseFloat(r[col["vCPUs"]], 64)
		count, _ := strconv.ParseFloat(r[col["AcceleratorCount"]], 64)
		k := model + "/" + strconv.Itoa(int(vcpus))
		seen[k] = true
		if got, ok := table[k]; !ok || got != int(count) {
			t.Errorf("%s (%s): table has %d, %v; the catalog says %g GPUs", r[col["InstanceType"]], k, got, ok, count)
		}
	}
	for k := range table {
		if !seen[k] {
			t.Errorf("table entry %s is not a catalog row", k)
		}
	}
	for plan, want := range map[string]string{
		"NVIDIA H100 SXM": "H100", "NVIDIA RTX A6000": "A6000", "NVIDIA Tesla V100": "V100",
		"NVIDIA Quadro RTX 6000": "RTX6000", "NVIDIA GH200": "GH200", "NVIDIA A100 SXM": "A100", "CPU only": "",
	} {
		if got := lambda.Model(plan); got != want {
			t.Errorf("Model(%q) = %q, want %q", plan, got, want)
		}
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"NoRows", `<html><body><p>Pricing is loading…</p></body></html>`, "no offers parsed"},
		{"OnlyScriptCopy", `<html><body><script>x="\u003Ctr data-plan=\"NVIDIA A10\"\u003E\u003Ctd data-label=\"PRICE/GPU/HR*\"\u003E$1.29"</script></body></html>`, "no offers parsed"},
		{"OnlyDashes", page(row("NVIDIA V100", "88", "&#8212;")), "no offers parsed"},
		{"JSON", `{"data": {}}`, "page truncated"},
		{"Truncated", `<html><body><table><tr data-plan="NVIDIA A10"><td data-label="vCPUs">30</td><td data-label="PRICE/GPU/HR*">$1.29</td></tr>`, "page truncated"},
		{"PriceGarbage", page(row("NVIDIA A10", "30", "$1.29"), row("NVIDIA H100 PCIe", "26", "Contact sales")), `plan "NVIDIA H100 PCIe": price cell "Contact sales"`},
		{"PriceNoDollar", page(row("NVIDIA A10", "30", "1.29")), `plan "NVIDIA A10": price cell "1.29"`},
		{"PriceZero", page(row("NVIDIA A10", "30", "$0.00")), `plan "NVIDIA A10": price "$0.00" is not a positive amount`},
		{"NoPriceColumn", `<html><table><tr data-plan="NVIDIA A10"><td data-label="vCPUs">30</td></tr></table></html>`, `plan "NVIDIA A10": no PRICE/GPU/HR cell`},
		{"VCPUGarbage", page(row("NVIDIA A10", "many", "$1.29")), `plan "NVIDIA A10": vCPUs cell "many"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := lambda.Parse([]byte(c.body), "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
	if _, err := lambda.Parse([]byte(page()), ""); !errors.Is(err, scrapers.ErrNothingParsed) {
		t.Errorf("empty table: err = %v, want ErrNothingParsed", err)
	}
}

func FuzzParse(f *testing.F) {
	seed, err := fs.ReadFile(fixtures.FS(), "lambda/pricing.html")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(page(row("NVIDIA A10", "30", "$-1.29"), row("X", "0", "$1"))))
	f.Fuzz(func(t *testing.T, body []byte) {
		obs, err := lambda.Parse(body, "")
		if err != nil {
			return
		}
		for _, o := range obs {
			if !(o.Price > 0) || o.GPUName == "" || !o.PerGPU || !strings.HasSuffix(o.OfferID, "vcpu") {
				t.Fatalf("bad observation accepted: %+v", o)
			}
		}
	})
}

// What comes with a shape, from its row (fixtures/lambda/pricing.html):
// H100 SXM 26 vCPUs, "225 GiB", "2.75 TiB SSD" = 2.75 × 1024 = 2816 GiB;
// the 2-GPU RTX A6000 shape 28 vCPUs and "200 GiB". The page's own RAM and
// Storage labels are the described layout's (PROVENANCE.md).
func TestScraper_ShapeDetails(t *testing.T) {
	res := scrapePage(t)
	nr, _ := scrapertest.Normalize("lambda", res)
	h100 := scrapertest.Find(t, nr, "lambda/NVIDIA H100 SXM/26vcpu/-/ondemand")
	if h100.VCPUs != 26 || h100.RAMGB != 225 || h100.DiskGB != 2816 || h100.RentURL != lambda.RentURL {
		t.Errorf("H100 SXM: %v vCPUs, %v GiB, %v GiB disk, rent %q", h100.VCPUs, h100.RAMGB, h100.DiskGB, h100.RentURL)
	}
	a6000 := scrapertest.Find(t, nr, "lambda/NVIDIA RTX A6000/28vcpu/-/ondemand")
	if a6000.VCPUs != 28 || a6000.RAMGB != 200 || a6000.GPUs != 2 {
		t.Errorf("2× RTX A6000: %d GPUs, %v vCPUs, %v GiB", a6000.GPUs, a6000.VCPUs, a6000.RAMGB)
	}
}
