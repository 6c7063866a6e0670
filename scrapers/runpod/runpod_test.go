package runpod_test

import (
	"encoding/json"
	"io/fs"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/scrapers/runpod"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "runpod")
	nr, _ := scrapertest.CheckFixture(t, "runpod", res)

	for _, c := range []struct {
		key, card string
		mode      pricewatch.Mode
		price     float64
	}{
		{"runpod/NVIDIA A100-SXM4-80GB/secure/-/ondemand", "A100-80GB-SXM", pricewatch.ModeOnDemand, 1.74},
		{"runpod/NVIDIA A100-SXM4-80GB/community/-/ondemand", "A100-80GB-SXM", pricewatch.ModeOnDemand, 1.39},
		{"runpod/NVIDIA A100-SXM4-80GB/secure/-/spot", "A100-80GB-SXM", pricewatch.ModeSpot, 0.95},
		{"runpod/NVIDIA A100-SXM4-80GB/community/-/spot", "A100-80GB-SXM", pricewatch.ModeSpot, 0.79},
		{"runpod/NVIDIA A100-SXM4-80GB/secure/-/reserved-3m", "A100-80GB-SXM", pricewatch.ModeReserved3M, 1.644},
		{"runpod/NVIDIA A100-SXM4-80GB/secure/-/reserved-6m", "A100-80GB-SXM", pricewatch.ModeReserved6M, 1.607},
		{"runpod/NVIDIA GeForce RTX 4090/community/-/ondemand", "RTX-4090", pricewatch.ModeOnDemand, 0.34},
		{"runpod/NVIDIA H100 80GB HBM3/secure/-/ondemand", "H100-80GB-SXM", pricewatch.ModeOnDemand, 2.99},
		{"runpod/NVIDIA H100 PCIe/community/-/spot", "H100-80GB-PCIE", pricewatch.ModeSpot, 1.35},
		{"runpod/AMD Instinct MI300X OAM/secure/-/ondemand", "MI300X-192GB", pricewatch.ModeOnDemand, 2.49},
		{"runpod/Tesla V100-SXM2-32GB/community/-/ondemand", "V100-32GB-SXM2", pricewatch.ModeOnDemand, 0.33},
	} {
		scrapertest.Price(t, nr, c.key, c.card, c.mode, c.price)
	}
	// Rented per GPU, any count from 1 to the type's maxGpuCount, in every
	// tier and mode.
	for _, c := range []struct {
		key  string
		most int
	}{
		{"runpod/NVIDIA A40/secure/-/ondemand", 10},
		{"runpod/NVIDIA RTX A4000/community/-/spot", 12},
		{"runpod/AMD Instinct MI300X OAM/secure/-/reserved-6m", 8},
		{"runpod/Tesla V100-SXM2-32GB/community/-/ondemand", 4},
		{"runpod/NVIDIA GeForce RTX 4080/community/-/ondemand", 2},
	} {
		scrapertest.Rent(t, nr, c.key, pricewatch.RentPerGPU, pricewatch.CountsUpTo(c.most)...)
	}
	keys := map[string]bool{}
	for _, o := range nr.Offers {
		keys[o.Key] = true
		if o.PricePerGPUHour <= 0 {
			t.Errorf("%s: non-positive price", o.Key)
		}
		if o.RentUnit != pricewatch.RentPerGPU || len(o.GPUCounts) != o.GPUs || o.RentUnitGPUs != 1 {
			t.Errorf("%s: rent %s counts %v for %d GPUs, want per_gpu 1..%d", o.Key, o.RentUnit, o.GPUCounts, o.GPUs, o.GPUs)
		}
	}
	for _, absent := range []string{
		"runpod/AMD Instinct MI300X OAM/community/-/ondemand",                     // placeholder 0.5 on a secure-only card
		"runpod/NVIDIA GeForce RTX 3070/secure/-/ondemand",                        // securePrice 0 = not offered
		"runpod/NVIDIA B200/secure/-/spot",                                        // null spot price
		"runpod/unknown/secure/-/ondemand", "runpod/unknown/community/-/ondemand", // not a card
	} {
		if keys[absent] {
			t.Errorf("offer %s must not exist", absent)
		}
	}
	// Every GPU type of the capture names a card: the GeForce, RTX Ax000 and
	// Ada workstation ids, A30, the RTX PRO 6000 Workstation Edition and the
	// FHHL V100 (a PCIe card) included.
	if len(nr.Unknown) != 0 {
		t.Errorf("unknown = %v, want none", nr.Unknown)
	}
	for key, card := range map[string]string{
		"runpod/NVIDIA A30/community/-/ondemand":                                     "A30",
		"runpod/NVIDIA RTX A5000/secure/-/ondemand":                                  "RTX-A5000",
		"runpod/NVIDIA GeForce RTX 4080 SUPER/community/-/ondemand":                  "RTX-4080-SUPER",
		"runpod/NVIDIA RTX 4000 Ada Generation/secure/-/ondemand":                    "RTX-4000-ADA",
		"runpod/NVIDIA RTX PRO 6000 Blackwell Workstation Edition/secure/-/ondemand": "RTX-PRO-6000-WS",
		"runpod/Tesla V100-FHHL-16GB/community/-/ondemand":                           "V100-16GB-FHHL",
		"runpod/NVIDIA GeForce RTX 3080/community/-/ondemand":                        "RTX-3080",
	} {
		if o := scrapertest.Find(t, nr, key); o.Card != card {
			t.Errorf("%s: card %q, want %q", key, o.Card, card)
		}
	}
	for name := range nr.Unknown {
		if name == "unknown" {
			t.Error(`the "unknown" row must be skipped, not reported`)
		}
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"GraphQLError", `{"errors":[{"message":"rate limited"}]}`, "graphql error: rate limited"},
		{"NoData", `{"data":null}`, "no offers parsed"},
		{"EmptyList", `{"data":{"gpuTypes":[]}}`, "no offers parsed"},
		{"OnlyPlaceholders", `{"data":{"gpuTypes":[{"id":"unknown","memoryInGb":0,"securePrice":0}]}}`, "no offers parsed"},
		{"HTML", `<html><body>Just a moment...</body></html>`, "expected JSON, got markup"},
		{"Truncated", `{"data":{"gpuTypes":[{"id":"NVIDIA A40","secur`, "decode JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := runpod.Parse([]byte(c.body), "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	seed, err := fs.ReadFile(fixtures.FS(), "runpod/graphql.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"data":{"gpuTypes":[{"id":"NVIDIA L4","memoryInGb":24,"maxGpuCount":8,"secureCloud":true,"securePrice":-1}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		obs, err := runpod.Parse(body, "")
		if err != nil {
			return
		}
		// A zero or negative price on an offered tier reaches normalization,
		// which skips it and counts it invalid: no offer is ever free.
		nr := normalize.DefaultCatalog().Normalize(obs, scrapertest.At)
		bad := 0
		for _, o := range obs {
			if !(o.Price > 0) {
				bad++
			}
		}
		if nr.InvalidCount < bad {
			t.Fatalf("%d non-positive prices, %d counted invalid", bad, nr.InvalidCount)
		}
		for _, o := range nr.Offers {
			if !(o.PricePerGPUHour > 0) {
				t.Fatalf("non-positive price accepted: %+v", o)
			}
		}
	})
}

// Stock: lowestPrice.stockStatus per cloud. The 2025 capture predates the
// field, so the test adds it to two types of a copy: "High" in Secure
// Cloud, null (none to rent) in Community Cloud for the RTX 4090, and no
// answer at all for the others.
func TestParse_Stock(t *testing.T) {
	seed, err := fs.ReadFile(fixtures.FS(), "runpod/graphql.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]map[string][]map[string]any
	if err := json.Unmarshal(seed, &doc); err != nil {
		t.Fatal(err)
	}
	for _, g := range doc["data"]["gpuTypes"] {
		if g["id"] == "NVIDIA GeForce RTX 4090" {
			g["secureStock"] = map[string]any{"stockStatus": "High"}
			g["communityStock"] = map[string]any{"stockStatus": nil}
		}
	}
	body, _ := json.Marshal(doc)
	obs, err := runpod.Parse(body, "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]string{}
	for _, o := range obs {
		got[o.OfferID+"/"+string(o.Mode)] = [2]string{string(o.Available), o.Stock}
	}
	for key, want := range map[string][2]string{
		"NVIDIA GeForce RTX 4090/secure/ondemand":    {"yes", "High"},
		"NVIDIA GeForce RTX 4090/community/ondemand": {"no", "out of stock"},
		"NVIDIA GeForce RTX 4090/community/spot":     {"no", "out of stock"},
		"NVIDIA A40/community/ondemand":              {"", ""}, // no answer: unknown
	} {
		if got[key] != want {
			t.Errorf("%s: available %q stock %q, want %q", key, got[key][0], got[key][1], want)
		}
	}
	// The query asks for both clouds' stock.
	if !strings.Contains(runpod.Query, "secureStock: lowestPrice(input: {gpuCount: 1, secureCloud: true}) { stockStatus }") ||
		!strings.Contains(runpod.Query, "communityStock: lowestPrice(input: {gpuCount: 1, secureCloud: false})") {
		t.Errorf("query %s", runpod.Query)
	}
}

// A real capture of another query has no id field: the GPU is then named
// by displayName and its memory. The same real capture with every "id"
// removed must map exactly the same cards. RunPod's own answer pairs each
// displayName with one id (checked here), which is what lets the display
// name decide the part ("Tesla V100" is the PCIe card, "RTX PRO 6000" the
// Workstation Edition). Before the fallback every row was dropped and
// Parse failed with "nothing parsed"; before the runpod display-name
// aliases 5 of 149 observations (Tesla V100 ×2, RTX PRO 6000 ×3) and the
// 12 A100 ones stayed unknown.
func TestParse_NoID(t *testing.T) {
	raw, err := fs.ReadFile(fixtures.FS(), "runpod/graphql.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	types := doc["data"].(map[string]any)["gpuTypes"].([]any)
	for _, g := range types {
		delete(g.(map[string]any), "id")
	}
	stripped, _ := json.Marshal(doc)

	withID, err := runpod.Parse(raw, "u")
	if err != nil {
		t.Fatal(err)
	}
	noID, err := runpod.Parse(stripped, "u")
	if err != nil {
		t.Fatalf("no id: %v", err)
	}
	if len(noID) != len(withID) {
		t.Fatalf("%d observations without id, %d with", len(noID), len(withID))
	}
	cat := normalize.DefaultCatalog()
	card := func(o pricewatch.Observation) string {
		c, _ := cat.Resolve("runpod", o.GPUName, o.GPUMemoryGB)
		return c
	}
	mapped, unknown := 0, map[string]int{}
	for i := range noID {
		a, b := withID[i], noID[i]
		if a.Price != b.Price || a.Mode != b.Mode || a.GPUCount != b.GPUCount {
			t.Fatalf("row %d: %+v vs %+v", i, a, b)
		}
		switch cb := card(b); {
		case cb == "":
			unknown[b.GPUName]++
		case cb != card(a):
			t.Errorf("%s (%v GB): card %s, with id %s", b.GPUName, b.GPUMemoryGB, cb, card(a))
		default:
			mapped++
		}
	}
	if len(unknown) != 0 || mapped != len(noID) {
		t.Errorf("without id: %d of %d map, unknown %v; want all", mapped, len(noID), unknown)
	}
	// One id per display name in RunPod's own answer.
	var withIDs struct {
		Data struct {
			GPUTypes []struct{ ID, DisplayName string } `json:"gpuTypes"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &withIDs); err != nil {
		t.Fatal(err)
	}
	idOf := map[string]string{}
	for _, g := range withIDs.Data.GPUTypes {
		if prev, ok := idOf[g.DisplayName]; ok && prev != g.ID {
			t.Errorf("display name %q names %q and %q: it cannot decide the part", g.DisplayName, prev, g.ID)
		}
		idOf[g.DisplayName] = g.ID
	}
	if idOf["Tesla V100"] != "Tesla V100-PCIE-16GB" || idOf["RTX PRO 6000"] != "NVIDIA RTX PRO 6000 Blackwell Workstation Edition" {
		t.Errorf("display names in the capture: Tesla V100 = %q, RTX PRO 6000 = %q", idOf["Tesla V100"], idOf["RTX PRO 6000"])
	}
	// A100 SXM 80 GB, community on demand: 1.39 per GPU-hour as with the id.
	for _, o := range noID {
		if o.OfferID == "A100 SXM/community" && o.Mode == pricewatch.ModeOnDemand && o.Price != 1.39 {
			t.Errorf("A100 SXM community on demand = %v, want 1.39", o.Price)
		}
	}
	t.Logf("without id: %d of %d observations map, unknown %v", mapped, len(noID), unknown)
}

// Every pod offer links the console page where it is deployed, and states
// no vCPUs or RAM (gpuTypes has none): unstated, not zero-filled guesses.
func TestScraper_RentPage(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "runpod")
	if len(res.Observations) == 0 {
		t.Fatal("no observations")
	}
	for _, o := range res.Observations {
		if o.RentURL != runpod.RentURL || o.VCPUs != 0 || o.RAMGB != 0 {
			t.Errorf("%s: rent %q, %v vCPUs, %v GB", o.OfferID, o.RentURL, o.VCPUs, o.RAMGB)
		}
	}
}
