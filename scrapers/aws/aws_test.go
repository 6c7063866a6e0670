package aws_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/scrapers/aws"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

const (
	od  = pricewatch.ModeOnDemand
	r1y = pricewatch.ModeReserved1Y
	r3y = pricewatch.ModeReserved3Y
)

type priceCase struct {
	key, card string
	mode      pricewatch.Mode
	price     float64
}

func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "aws")
	nr, g := scrapertest.CheckFixture(t, "aws", res)
	// Every instance type is rented whole, with the GPU column's count.
	scrapertest.FixedUnits(t, nr)
	scrapertest.Rent(t, nr, "aws/p5.48xlarge/us-east-1/ondemand", pricewatch.RentFixed, 8)
	scrapertest.Rent(t, nr, "aws/g5g.16xlarge/us-west-2/ondemand", pricewatch.RentFixed, 2)
	scrapertest.Rent(t, nr, "aws/g4dn.xlarge/eu-central-1/reserved-1y", pricewatch.RentFixed, 1)
	scrapertest.Rent(t, nr, "aws/g6f.large/ap-northeast-1/ondemand", pricewatch.RentFixed, 1)
	if g.Offers != 58 || g.ByMode["ondemand"] != 39 || g.ByMode["reserved-1y"] != 19 || len(g.ByMode) != 2 {
		t.Errorf("offers %d by mode %v, want 58 = 39 ondemand + 19 reserved-1y", g.Offers, g.ByMode)
	}
	for _, c := range []priceCase{
		// p4d.24xlarge, 8 × A100 40GB: the Linux row, never the Capacity
		// Block (0), Windows, dedicated, SQL, unused-reservation, Partial
		// Upfront or convertible rows listed before it (all priced 1.0).
		{"aws/p4d.24xlarge/us-east-1/ondemand", "A100-40GB-SXM", od, 21.957642 / 8},     // 2.74470525
		{"aws/p4d.24xlarge/us-east-1/reserved-1y", "A100-40GB-SXM", r1y, 13.921094 / 8}, // 1.74013675
		{"aws/p4d.24xlarge/us-west-2/ondemand", "A100-40GB-SXM", od, 21.95764 / 8},
		{"aws/p4d.24xlarge/eu-central-1/reserved-1y", "A100-40GB-SXM", r1y, 17.392445 / 8},
		{"aws/p4de.24xlarge/ap-northeast-1/ondemand", "A100-80GB-SXM", od, 37.6223 / 8}, // 4.7027875
		{"aws/p4de.24xlarge/us-west-2/ondemand", "A100-80GB-SXM", od, 27.44705 / 8},     // after a Capacity Block at 0
		{"aws/p5.48xlarge/us-east-1/ondemand", "H100-80GB-SXM", od, 6.88},               // 55.04 / 8
		{"aws/p5.48xlarge/ap-northeast-1/ondemand", "H100-80GB-SXM", od, 8.6},
		{"aws/p5en.48xlarge/us-east-1/ondemand", "H200-141GB-SXM", od, 7.912}, // 63.296 / 8
		{"aws/p6-b200.48xlarge/us-east-1/ondemand", "B200-180GB-SXM", od, 14.2416},
		{"aws/p6-b300.48xlarge/us-west-2/ondemand", "B300-288GB-SXM", od, 17.802},
		{"aws/g4dn.xlarge/us-east-1/ondemand", "T4", od, 0.526},
		{"aws/g4dn.12xlarge/us-east-1/ondemand", "T4", od, 0.978},          // 3.912 / 4
		{"aws/g4dn.12xlarge/ap-northeast-1/reserved-1y", "T4", r1y, 0.901}, // 3.604 / 4
		{"aws/g5.12xlarge/eu-central-1/ondemand", "A10G", od, 7.09282 / 4}, // after a Windows row at 1.0
		{"aws/g5.2xlarge/us-east-1/reserved-1y", "A10G", r1y, 0.76356},
		{"aws/g6.12xlarge/us-east-1/ondemand", "L4", od, 1.1504},         // 4.6016 / 4
		{"aws/g6e.12xlarge/us-east-1/reserved-1y", "L40S", r1y, 1.65259}, // 6.61036 / 4
		{"aws/g6e.xlarge/us-east-1/ondemand", "L40S", od, 1.861},
		{"aws/g5g.16xlarge/us-west-2/ondemand", "T4G", od, 1.372}, // 2 × T4G (the Graviton T4 of g5g)
		// Fractions of an L4 (G6f): the price is for the share.
		{"aws/g6f.large/ap-northeast-1/ondemand", "L4", od, 0.293},
		{"aws/g6f.2xlarge/ap-northeast-1/ondemand", "L4", od, 0.689},
		{"aws/g4ad.xlarge/us-east-1/ondemand", "RADEON-PRO-V520", od, 0.1}, // AMD Radeon Pro V520: a card, never estimated
	} {
		scrapertest.Price(t, nr, c.key, c.card, c.mode, c.price)
	}
	keys := map[string]bool{}
	for _, o := range nr.Offers {
		keys[o.Key] = true
		if o.Currency != "USD" || o.Provider != "aws" || o.GPUs <= 0 {
			t.Errorf("%s: currency %s provider %s gpus %d", o.Key, o.Currency, o.Provider, o.GPUs)
		}
	}
	for _, absent := range []string{
		"aws/p5.48xlarge/us-east-1/reserved-1y",    // no reserved row in the fixture
		"aws/p4d.24xlarge/us-east-1/reserved-3y",   // idem
		"aws/c6i.large/ap-northeast-1/reserved-3y", // the real non-GPU rows
	} {
		if keys[absent] {
			t.Errorf("offer %s must not exist", absent)
		}
	}
	if o := scrapertest.Find(t, nr, "aws/g6f.xlarge/ap-northeast-1/ondemand"); !o.Shared || o.GPUFraction != 0.125 {
		t.Errorf("g6f.xlarge: shared %v fraction %v, want 1/8 of an L4", o.Shared, o.GPUFraction)
	}
	// Every GPU of the fixture maps to a card now (T4G and V520 rows in cards.csv).
	if len(nr.Unknown) != 0 {
		t.Errorf("unknown report %v, want none", nr.Unknown)
	}
}

func TestScraperChina_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "aws-china")
	nr, g := scrapertest.CheckFixture(t, "aws-china", res)
	scrapertest.FixedUnits(t, nr)
	scrapertest.Rent(t, nr, "aws-china/g4dn.12xlarge/cn-north-1/reserved-3y", pricewatch.RentFixed, 4)
	if g.Offers != 32 || g.ByMode["ondemand"] != 15 || g.ByMode["reserved-1y"] != 14 || g.ByMode["reserved-3y"] != 3 {
		t.Errorf("offers %d by mode %v, want 32 = 15 ondemand + 14 reserved-1y + 3 reserved-3y", g.Offers, g.ByMode)
	}
	for _, c := range []priceCase{
		// g4dn.12xlarge, 4 × T4, CNY: the Linux rows, never the Windows
		// (53.964), RHEL (42.397), convertible (23.622) or Partial Upfront
		// rows before them.
		{"aws-china/g4dn.12xlarge/cn-north-1/ondemand", "T4", od, 9.71225},     // 38.849 / 4
		{"aws-china/g4dn.12xlarge/cn-north-1/reserved-1y", "T4", r1y, 5.6815},  // 22.726 / 4
		{"aws-china/g4dn.12xlarge/cn-north-1/reserved-3y", "T4", r3y, 4.10675}, // 16.427 / 4
		{"aws-china/g4dn.12xlarge/cn-northwest-1/ondemand", "T4", od, 6.899},   // 27.596 / 4
		{"aws-china/g4dn.12xlarge/cn-northwest-1/reserved-3y", "T4", r3y, 2.9805},
		{"aws-china/g4dn.xlarge/cn-north-1/ondemand", "T4", od, 5.223},
		{"aws-china/g4dn.xlarge/cn-northwest-1/reserved-1y", "T4", r1y, 2.338},
		{"aws-china/g4dn.16xlarge/cn-north-1/reserved-3y", "T4", r3y, 18.274}, // one T4
		{"aws-china/g4dn.metal/cn-north-1/ondemand", "T4", od, 77.697 / 8},
		{"aws-china/p4d.24xlarge/cn-northwest-1/ondemand", "A100-40GB-SXM", od, 172.873412 / 8},     // 21.6091765
		{"aws-china/p4d.24xlarge/cn-northwest-1/reserved-1y", "A100-40GB-SXM", r1y, 109.601338 / 8}, // 13.70016725
	} {
		scrapertest.Price(t, nr, c.key, c.card, c.mode, c.price)
	}
	keys := map[string]bool{}
	for _, o := range nr.Offers {
		keys[o.Key] = true
		if o.Currency != "CNY" || o.Provider != "aws-china" || o.Source != "aws-china" { // its own provider: not a copy of aws
			t.Errorf("%s: currency %s provider %s source %s", o.Key, o.Currency, o.Provider, o.Source)
		}
	}
	for _, absent := range []string{
		"aws-china/g4dn.metal/cn-north-1/reserved-1y", // none in the source data
		"aws-china/p4d.24xlarge/cn-north-1/ondemand",  // p4d is Ningxia only
	} {
		if keys[absent] {
			t.Errorf("offer %s must not exist", absent)
		}
	}
	if len(nr.Unknown) != 0 {
		t.Errorf("unknown report %v, want none", nr.Unknown)
	}
}

// The JSON path through Scrape: the real p4d excerpt served as us-east-1's
// index.json. Its Capacity Block product, priced 0, is skipped.
func TestScraper_JSONRegion(t *testing.T) {
	srv := httptest.NewServer(fixtures.Handler(fixtures.FS()))
	defer srv.Close()
	s := &aws.Scraper{Regions: []string{"us-east-1"}, Format: "json"}
	res, err := s.Scrape(t.Context(), scrapertest.Env(t, "aws", srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Observations) != 1 {
		t.Fatalf("%d observations, want the one on-demand p4d: %+v", len(res.Observations), res.Observations)
	}
	nr := normalize.DefaultCatalog().Normalize(res.Observations, scrapertest.At)
	scrapertest.Price(t, nr, "aws/p4d.24xlarge/us-east-1/ondemand", "A100-40GB-SXM", od, 32.7726/8) // 4.096575
	if o := res.Observations[0]; o.Source != "aws" || o.GPUCount != 8 || o.PerGPU || o.Currency != "USD" ||
		o.Unit != pricewatch.PerHour || !strings.HasSuffix(o.URL, "/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.json") {
		t.Errorf("observation %+v", o)
	}
	// What comes with the 8 GPUs, from the product's attributes: vcpu "96",
	// memory "1152 GiB", storage "8 x 1000 SSD" = 8000 GB.
	if o := res.Observations[0]; o.VCPUs != 96 || o.RAMGB != 1152 || o.DiskGB != 8000 || !strings.Contains(o.RentURL, "console.aws.amazon.com/ec2") {
		t.Errorf("p4d details: %v vCPUs, %v GiB, %v GB disk, rent %q", o.VCPUs, o.RAMGB, o.DiskGB, o.RentURL)
	}
}

// The CSV path reads the same attributes from its vCPU, Memory and Storage
// columns (fixtures/aws/us-east-1.csv): p4d.24xlarge 96, "1152 GiB", "8 x
// 1000 SSD"; g5.12xlarge 48, "192 GiB" and a Storage cell this excerpt
// leaves empty (0: not stated). Its country comes from regions.csv.
func TestScraper_CSVMachineDetails(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "aws")
	nr, _ := scrapertest.Normalize("aws", res)
	for _, c := range []struct {
		key             string
		vcpus, ram, ssd float64
	}{
		{"aws/p4d.24xlarge/us-east-1/ondemand", 96, 1152, 8000},
		{"aws/g5.12xlarge/us-east-1/ondemand", 48, 192, 0},
	} {
		o := scrapertest.Find(t, nr, c.key)
		if o.VCPUs != c.vcpus || o.RAMGB != c.ram || o.DiskGB != c.ssd || o.Country != "US" {
			t.Errorf("%s: %v vCPUs, %v GiB, %v GB, country %q; want %v, %v, %v, US", c.key, o.VCPUs, o.RAMGB, o.DiskGB, o.Country, c.vcpus, c.ram, c.ssd)
		}
	}
}

func TestParseMachine(t *testing.T) {
	for _, c := range []struct {
		vcpu, mem, storage string
		want               [3]float64
	}{
		{"96", "1152 GiB", "8 x 1000 SSD", [3]float64{96, 1152, 8000}},
		{"192", "2,048 GiB", "8 x 3840 GB SSD", [3]float64{192, 2048, 30720}},
		{"4", "16 GiB", "1 x 125 NVMe SSD", [3]float64{4, 16, 125}},
		{"8", "32 GiB", "EBS only", [3]float64{8, 32, 0}},
		{"NA", "16 GB", "", [3]float64{0, 0, 0}}, // a unit AWS does not write for memory: not guessed
	} {
		if got := aws.ParseMachine(c.vcpu, c.mem, c.storage); got != c.want {
			t.Errorf("%q %q %q: %v, want %v", c.vcpu, c.mem, c.storage, got, c.want)
		}
	}
}

// A JSON file with reservations: only the standard No Upfront hourly
// rates count; upfront fees, Partial Upfront and convertible terms do not.
// Prices are the real p4d us-east-1 levels (on-demand, 1-year) of the CSV
// fixture; the term layout is the documented one.
const reservedJSON = `{
 "offerCode": "AmazonEC2", "version": "test",
 "products": {
  "AAA": {"sku": "AAA", "productFamily": "Compute Instance", "attributes": {"instanceType": "p4d.24xlarge",
    "tenancy": "Shared", "operatingSystem": "Linux", "preInstalledSw": "NA", "capacitystatus": "Used",
    "marketoption": "OnDemand", "locationType": "AWS Region", "operation": "RunInstances", "gpu": "8", "regionCode": "us-east-1"}},
  "BBB": {"sku": "BBB", "productFamily": "Compute Instance", "attributes": {"instanceType": "p4d.24xlarge",
    "tenancy": "Shared", "operatingSystem": "Windows", "preInstalledSw": "NA", "capacitystatus": "Used", "gpu": "8"}},
  "CCC": {"sku": "CCC", "productFamily": "Compute Instance", "attributes": {"instanceType": "m5.large",
    "tenancy": "Shared", "operatingSystem": "Linux", "preInstalledSw": "NA", "capacitystatus": "Used"}}
 },
 "terms": {
  "OnDemand": {
   "AAA": {"AAA.JRTCKXETXF": {"priceDimensions": {"AAA.JRTCKXETXF.6YS6EN2CT7": {"unit": "Hrs", "pricePerUnit": {"USD": "21.9576420000"}}}, "termAttributes": {}}},
   "BBB": {"BBB.JRTCKXETXF": {"priceDimensions": {"BBB.JRTCKXETXF.6YS6EN2CT7": {"unit": "Hrs", "pricePerUnit": {"USD": "1.0"}}}, "termAttributes": {}}},
   "CCC": {"CCC.JRTCKXETXF": {"priceDimensions": {"CCC.JRTCKXETXF.6YS6EN2CT7": {"unit": "Hrs", "pricePerUnit": {"USD": "0.096"}}}, "termAttributes": {}}}
  },
  "Reserved": {
   "AAA": {
    "AAA.4NA7Y494T4": {"priceDimensions": {"AAA.4NA7Y494T4.6YS6EN2CT7": {"unit": "Hrs", "pricePerUnit": {"USD": "13.9210940000"}}},
      "termAttributes": {"LeaseContractLength": "1yr", "OfferingClass": "standard", "PurchaseOption": "No Upfront"}},
    "AAA.HU7G6KETJZ": {"priceDimensions": {
       "AAA.HU7G6KETJZ.2TG2D8R56U": {"unit": "Quantity", "pricePerUnit": {"USD": "50000"}},
       "AAA.HU7G6KETJZ.6YS6EN2CT7": {"unit": "Hrs", "pricePerUnit": {"USD": "1.0"}}},
      "termAttributes": {"LeaseContractLength": "1yr", "OfferingClass": "standard", "PurchaseOption": "Partial Upfront"}},
    "AAA.7NE97W5U4E": {"priceDimensions": {"AAA.7NE97W5U4E.6YS6EN2CT7": {"unit": "Hrs", "pricePerUnit": {"USD": "1.0"}}},
      "termAttributes": {"LeaseContractLength": "1yr", "OfferingClass": "convertible", "PurchaseOption": "No Upfront"}}
   }
  }
 },
 "attributesList": {}
}`

func TestParseJSON_Terms(t *testing.T) {
	var got []pricewatch.Observation
	st, err := aws.ParseJSON(strings.NewReader(reservedJSON), aws.Filter{Source: "aws", Region: "us-east-1"},
		func(o pricewatch.Observation) error { got = append(got, o); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if st.Rows != 3 || st.Observations != 2 || st.Version != "test" || len(got) != 2 {
		t.Fatalf("stats %+v, %d observations", st, len(got))
	}
	want := map[pricewatch.Mode]float64{od: 21.957642, r1y: 13.921094}
	for _, o := range got {
		if o.OfferID != "p4d.24xlarge" || o.GPUCount != 8 || o.Price != want[o.Mode] {
			t.Errorf("observation %+v", o)
		}
	}
}

// The real sample: two p4d products, the Capacity Block one priced 0.
func TestParseJSON_Sample(t *testing.T) {
	b, err := fs.ReadFile(fixtures.FS(), "aws/us-east-1.json")
	if err != nil {
		t.Fatal(err)
	}
	obs, err := aws.Parse(b, aws.Filter{Source: "aws", Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 1 || obs[0].Price != 32.7726 || obs[0].Mode != od {
		t.Errorf("observations %+v, want only the 32.7726 on-demand p4d", obs)
	}
}

// A family the table does not know keeps its offers under a name that says
// which family it is; normalization reports it as unknown. A configured
// family list keeps only its families.
func TestParse_UnmappedFamily(t *testing.T) {
	b, err := fs.ReadFile(fixtures.FS(), "aws/us-east-1.csv")
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.ReplaceAll(string(b), "g4ad.xlarge", "g9x.xlarge"))
	obs, err := aws.Parse(b, aws.Filter{Source: "aws", Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	var got []pricewatch.Observation
	for _, o := range obs {
		if o.OfferID == "g9x.xlarge" {
			got = append(got, o)
		}
	}
	if len(got) != 1 || got[0].GPUName != aws.UnmappedName("g9x") || got[0].GPUCount != 1 || got[0].RentUnit != pricewatch.RentFixed {
		t.Fatalf("observations %+v", got)
	}
	nr := normalize.DefaultCatalog().Normalize(obs, scrapertest.At)
	if nr.Unknown["unmapped AWS instance family g9x"] != 1 {
		t.Errorf("unknown report %v", nr.Unknown)
	}
	only, err := aws.Parse(b, aws.Filter{Source: "aws", Region: "us-east-1", Families: []string{"g9x"}})
	if err != nil || len(only) != 1 || only[0].OfferID != "g9x.xlarge" {
		t.Errorf("families [g9x]: %d observations, err %v", len(only), err)
	}
}

// The fractional L4 families are one share of one L4 whatever the GPU
// column says; a GPU row whose count cannot be told (a fractional size
// not in the table, a known family with no GPU column) is reported under
// its instance type, once, with no rent unit; inf/trn rows stay out.
func TestParse_FractionsAndUntoldCounts(t *testing.T) {
	lines := fixtureLines("aws/us-east-1.csv")
	var g6e string
	for _, l := range lines {
		if strings.Contains(l, `"g6e.xlarge"`) && strings.Contains(l, `"OnDemand"`) && strings.Contains(l, `"Linux"`) {
			g6e = l
			break
		}
	}
	if g6e == "" {
		t.Fatal("no g6e.xlarge on-demand row in the fixture")
	}
	row := func(typ, gpu string) string {
		l := strings.ReplaceAll(g6e, "g6e.xlarge", typ)
		return strings.Replace(l, `,"1","NA",`, `,`+gpu+`,"NA",`, 1)
	}
	if !strings.Contains(g6e, `,"1","NA",`) {
		t.Fatal("the fixture row has no GPU column \"1\" before GPU Memory \"NA\"")
	}
	body := csvHeader() + strings.Join([]string{
		row("g6f.large", `"0"`), row("g6f.2xlarge", `"1"`), row("gr6f.4xlarge", ``),
		row("g6f.8xlarge", `"1"`), row("g5.9xlarge", ``), row("inf2.xlarge", `"1"`), row("c7i.large", ``),
		row("g7e.12xlarge", `"2"`), row("p6e-gb200.36xlarge", `"4"`),
	}, "\n") + "\n"
	obs, err := aws.Parse([]byte(body), aws.Filter{Source: "aws", Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range obs {
		got[o.OfferID] = fmt.Sprintf("%s×%d/%v %s", o.GPUName, o.GPUCount, o.GPUFraction, o.RentUnit)
	}
	want := map[string]string{
		"g6f.large":          "NVIDIA L4×1/0.125 fixed",
		"g6f.2xlarge":        "NVIDIA L4×1/0.25 fixed",
		"gr6f.4xlarge":       "NVIDIA L4×1/0.5 fixed",
		"g6f.8xlarge":        "g6f.8xlarge×1/0 ",
		"g5.9xlarge":         "g5.9xlarge×1/0 ",
		"g7e.12xlarge":       "RTX-PRO-6000-SERVER×2/0 fixed",
		"p6e-gb200.36xlarge": "B200-186GB-GB200×4/0 fixed",
	}
	if !maps.Equal(got, want) {
		t.Errorf("observations\n got %v\nwant %v", got, want)
	}
}

// The parser hands each kept row over as soon as it is read: the callback
// runs while the rest of the file has not been written yet.
func TestParseCSV_CallsBackPerRow(t *testing.T) {
	lines := fixtureLines("aws/us-east-1.csv")
	pr, pw := io.Pipe()
	seen := make(chan string, 100)
	done := make(chan error, 1)
	go func() {
		_, err := aws.ParseCSV(pr, aws.Filter{Source: "aws", Region: "us-east-1", Families: []string{"p4d"}}, func(o pricewatch.Observation) error {
			seen <- o.OfferID
			return nil
		})
		done <- err
	}()
	var first int
	for i, l := range lines {
		if strings.HasPrefix(l, `"H7NGEAC6UEHNTKSJ","JRTCKXETXF"`) {
			first = i
			break
		}
	}
	// Everything up to and including the first kept row, plus the next
	// line's first byte (the reader only knows a row ended when it sees
	// the next one begin).
	io.WriteString(pw, strings.Join(lines[:first+1], "\n")+"\n\"")
	select {
	case id := <-seen:
		if id != "p4d.24xlarge" {
			t.Errorf("first observation %s", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no observation before the rest of the file arrived: the parser is not streaming")
	}
	io.WriteString(pw, lines[first+1][1:]+"\n"+strings.Join(lines[first+2:], "\n")+"\n")
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func csvHeader() string {
	return strings.Join(fixtureLines("aws/us-east-1.csv")[:6], "\n") + "\n"
}

func TestParse_Errors(t *testing.T) {
	east, _ := fs.ReadFile(fixtures.FS(), "aws/us-east-1.csv")
	js, _ := fs.ReadFile(fixtures.FS(), "aws/us-east-1.json")
	lines := fixtureLines("aws/us-east-1.csv")
	gpuRow := lines[len(lines)-1] // a complete g6e.12xlarge row
	cutRow := strings.Join(lines[:10], "\n") + "\n" + lines[10][:strings.Index(lines[10], `,"Compute Instance"`)+1]
	cutQuote := strings.Join(lines[:10], "\n") + "\n" + lines[10][:strings.Index(lines[10], "p4d")+2]
	for _, c := range []struct{ name, body, want string }{
		{"HTML", "<!doctype html><html><body>Access Denied</body></html>", "got markup"},
		{"Empty", "", "empty CSV offer file"},
		{"NotPriceList", "a,b,c\n1,2,3\n", `line 1 starts "a"`},
		{"OtherOffer", strings.Replace(csvHeader(), `"AmazonEC2"`, `"AmazonS3"`, 1), `for "AmazonS3"`},
		{"PreambleOnly", strings.Join(lines[:5], "\n") + "\n", "before the header"},
		{"HeaderOnly", csvHeader(), "no rows"},
		{"RenamedColumn", strings.Replace(csvHeader(), `"Instance Type"`, `"InstanceType"`, 1) + gpuRow + "\n", `lacks column "Instance Type"`},
		{"CutMidRow", cutRow, "CSV line 11 has 16 fields, the header 91"},
		{"CutInQuotedField", cutQuote, "line 11"},
		{"NoGPURows", strings.Join(fixtureLines("aws/ap-northeast-1.csv")[:8], "\n") + "\n", "no offers parsed"},
		{"JSONHTML", " \n<html>", "got markup"},
		{"JSONCut", string(js[:len(js)/2]), "cut short: unexpected EOF in the value at byte offset"},
		{"JSONCutEarly", `{"products": {"A": {"sku": "A"`, "cut short: unexpected EOF in the value at byte offset"},
		{"JSONGarbage", `{"products": {"A": ]`, "byte offset"},
		{"JSONNoProducts", `{"offerCode": "AmazonEC2", "terms": {}}`, `"terms" before "products"`},
		{"JSONNoTerms", `{"products": {}}`, `no "terms"`},
		{"JSONOtherOffer", `{"offerCode": "AmazonS3", "products": {}}`, `for "AmazonS3"`},
		{"JSONTrailing", string(js) + `{}`, "data after the end"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := aws.Parse([]byte(c.body), aws.Filter{Source: "aws", Region: "us-east-1"})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
	if _, err := aws.Parse(east, aws.Filter{Source: "aws", Region: "us-east-1"}); err != nil {
		t.Errorf("the fixture itself: %v", err)
	}
}

// Errors of a run name the region, the file and the cause.
func TestScraper_Errors(t *testing.T) {
	good := fixtures.Handler(fixtures.FS())
	east, _ := fs.ReadFile(fixtures.FS(), "aws/us-east-1.csv")
	for _, c := range []struct {
		name string
		s    *aws.Scraper
		h    http.HandlerFunc
		want string
	}{
		{"RegionNotInIndex", &aws.Scraper{Regions: []string{"eu-west-9"}}, nil, "region eu-west-9 is not in the region index"},
		{"BadRegion", &aws.Scraper{Regions: []string{"US East"}}, nil, `bad region code "US East"`},
		{"BadFormat", &aws.Scraper{Format: "xml"}, nil, `format "xml"`},
		{"MissingRegionFile", &aws.Scraper{Regions: []string{"eu-west-1"}}, nil, "region eu-west-1"},
		{"IndexHTML", &aws.Scraper{}, func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "region_index.json") {
				w.Write([]byte("<html>maintenance</html>"))
				return
			}
			good.ServeHTTP(w, r)
		}, "expected JSON, got markup"},
		{"IndexEmpty", &aws.Scraper{}, func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "region_index.json") {
				w.Write([]byte(`{"regions": {}}`))
				return
			}
			good.ServeHTTP(w, r)
		}, "no offers parsed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h http.Handler = good
			if c.h != nil {
				h = c.h
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			_, err := c.s.Scrape(t.Context(), scrapertest.Env(t, "aws", srv.URL))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
	// A cut region file fails the run, naming the line.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "us-east-1/index.csv") {
			w.Write(east[:len(east)*2/3])
			return
		}
		good.ServeHTTP(w, r)
	}))
	defer srv.Close()
	_, err := (&aws.Scraper{Regions: []string{"us-east-1"}}).Scrape(t.Context(), scrapertest.Env(t, "aws", srv.URL))
	if err == nil || !strings.Contains(err.Error(), "line ") {
		t.Errorf("cut file: err = %v, want the line named", err)
	}
}

func TestEndpoints(t *testing.T) {
	for _, c := range []struct{ in, index, base string }{
		{aws.GlobalIndexURL, aws.GlobalIndexURL, "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/"},
		{"https://pricing.cn-north-1.amazonaws.com.cn/offers/v1.0/cn/AmazonEC2/current/",
			"https://pricing.cn-north-1.amazonaws.com.cn/offers/v1.0/cn/AmazonEC2/current/region_index.json",
			"https://pricing.cn-north-1.amazonaws.com.cn/offers/v1.0/cn/AmazonEC2/current/"},
	} {
		if i, b := aws.Endpoints(c.in); i != c.index || b != c.base {
			t.Errorf("Endpoints(%q) = %q, %q", c.in, i, b)
		}
	}
	for _, name := range []string{"aws", "aws-china"} {
		reg, ok := scrapers.Get(name)
		if !ok || reg.Defaults.MaxBodyMB < 1024 || reg.Defaults.Timeout < 10*time.Minute {
			t.Errorf("%s: registration %+v", name, reg.Defaults)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"aws/us-east-1.csv", "aws/us-east-1.json", "aws-china/cn-north-1.csv"} {
		b, err := fs.ReadFile(fixtures.FS(), name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(reservedJSON))
	lines := fixtureLines("aws/us-east-1.csv")
	f.Add([]byte(csvHeader() + strings.Replace(lines[len(lines)-1], `"6.6103600000"`, `"-1"`, 1) + "\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		// Parse may return what parsed before an error: all of it must be sane.
		obs, _ := aws.Parse(body, aws.Filter{Source: "aws", Region: "us-east-1"})
		for _, o := range obs {
			if !(o.Price > 0) || math.IsInf(o.Price, 0) || o.GPUCount <= 0 || o.PerGPU {
				t.Fatalf("bad observation accepted: %+v", o)
			}
		}
	})
}

// Every mapped family resolves to the card its GPU is, through the shared
// aliases; the T4G has no card and stays unknown.
func TestFamilies_Resolve(t *testing.T) {
	want := map[string]string{
		"p3": "V100-16GB-SXM2", "p3dn": "V100-32GB-SXM2", "p4d": "A100-40GB-SXM", "p4de": "A100-80GB-SXM",
		"p5": "H100-80GB-SXM", "p5e": "H200-141GB-SXM", "p5en": "H200-141GB-SXM", "p6-b200": "B200-180GB-SXM",
		"p6-b300": "B300-288GB-SXM", "g4dn": "T4", "g5": "A10G", "g5g": "T4G", "g6": "L4", "gr6": "L4", "g6e": "L40S",
		"g6f": "L4", "gr6f": "L4", "g7e": "RTX-PRO-6000-SERVER", "g7": "RTX-PRO-4500-SERVER", "p6e-gb200": "B200-186GB-GB200", "g4ad": "RADEON-PRO-V520",
	}
	cat := normalize.DefaultCatalog()
	for fam, g := range aws.Families {
		w, ok := want[fam]
		if !ok {
			t.Errorf("family %s is not covered by this test", fam)
			continue
		}
		if _, in := cat.Card(w); w != "" && !in {
			t.Logf("family %s: card %s not in cards.csv yet (pending)", fam, w)
			w = ""
		}
		for _, src := range []string{aws.SourceGlobal, aws.SourceChina} {
			card, _ := cat.Resolve(src, g.Name, g.MemoryGB)
			if card != w {
				t.Errorf("%s %s (%s): card %q, want %q", src, fam, g.Name, card, w)
			}
		}
	}
	for _, fam := range aws.DefaultFamilies {
		if _, ok := aws.Families[fam]; !ok {
			t.Errorf("default family %s is not in the table", fam)
		}
	}
	if aws.Family("p6-b200.48xlarge") != "p6-b200" || aws.Family("g5g.2xlarge") != "g5g" {
		t.Error("Family splits at the dot")
	}
}

// The options decode from the config file over the defaults.
func TestScraper_ConfigOptions(t *testing.T) {
	c := config.Default()
	err := c.Decode(strings.NewReader("sources:\n  aws-china:\n    regions: [cn-northwest-1]\n    format: json\n    families: [p4d]\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, ok := c.Sources["aws-china"].Scraper.(*aws.Scraper)
	if !ok || len(s.Regions) != 1 || s.Regions[0] != "cn-northwest-1" || s.Format != "json" || len(s.Families) != 1 {
		t.Errorf("decoded %+v", c.Sources["aws-china"].Scraper)
	}
	if d := c.Sources["aws"].Scraper.(*aws.Scraper); len(d.Regions) != 4 || d.Format != "csv" || len(d.Families) != len(aws.DefaultFamilies) {
		t.Errorf("aws defaults %+v", d)
	}
}

// The aws-china CSV files are built (no China CSV was ever captured); the
// one real China offer file is opencost's test copy of the cn-northwest-1
// JSON offer file (fixtures/aws-china/opencost-cn-northwest-1.json, a
// single EBS product). The built rows must use what that real file shows
// for the region: location "China (Ningxia)", usage types prefixed
// "CNW1-", prices in "CNY". And the JSON parser reads the real file as an
// offer file (no GPU product in it: nothing parsed, not a layout error).
func TestChinaFixture_AgreesWithRealOfferFile(t *testing.T) {
	raw, err := fs.ReadFile(fixtures.FS(), "aws-china/opencost-cn-northwest-1.json")
	if err != nil {
		t.Fatal(err)
	}
	var real struct {
		Products map[string]struct {
			Attributes map[string]string `json:"attributes"`
		} `json:"products"`
		Terms struct {
			OnDemand map[string]map[string]struct {
				PriceDimensions map[string]struct {
					PricePerUnit map[string]string `json:"pricePerUnit"`
				} `json:"priceDimensions"`
			} `json:"OnDemand"`
		} `json:"terms"`
	}
	if err := json.Unmarshal(raw, &real); err != nil {
		t.Fatal(err)
	}
	var location, prefix, currency string
	for sku, p := range real.Products {
		if p.Attributes["regionCode"] != "cn-northwest-1" {
			t.Fatalf("real file: region %q", p.Attributes["regionCode"])
		}
		location = p.Attributes["location"]
		prefix, _, _ = strings.Cut(p.Attributes["usagetype"], "-")
		for _, term := range real.Terms.OnDemand[sku] {
			for _, d := range term.PriceDimensions {
				for c := range d.PricePerUnit {
					currency = c
				}
			}
		}
	}
	if location != "China (Ningxia)" || prefix != "CNW1" || currency != "CNY" {
		t.Fatalf("real file: location %q, usage prefix %q, currency %q", location, prefix, currency)
	}
	body, err := fs.ReadFile(fixtures.FS(), "aws-china/cn-northwest-1.csv")
	if err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(bytes.NewReader(body))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := recs[5]
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	rows := recs[6:]
	if len(rows) == 0 {
		t.Fatal("no rows")
	}
	for i, rec := range rows {
		if rec[col["Location"]] != location || rec[col["Currency"]] != currency ||
			!strings.HasPrefix(rec[col["usageType"]], prefix+"-") {
			t.Errorf("row %d: location %q currency %q usage type %q", i+7, rec[col["Location"]], rec[col["Currency"]], rec[col["usageType"]])
		}
	}
	obs, err := aws.Parse(raw, aws.Filter{Source: "aws-china", Region: "cn-northwest-1"})
	if !errors.Is(err, scrapers.ErrNothingParsed) || len(obs) != 0 {
		t.Errorf("real China JSON offer file: %d observations, %v; want nothing parsed (no GPU product)", len(obs), err)
	}
}
