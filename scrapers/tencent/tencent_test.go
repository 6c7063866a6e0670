package tencent_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
	"github.com/pricewatch/pricewatch/scrapers/tencent"
)

// The fixture is built in the documented shape (fixtures/tencent/PROVENANCE.md):
// a CPU type (skipped), 7 GPU types, one of a family the table does not know.
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "tencent")
	nr, g := scrapertest.CheckFixture(t, "tencent", res)
	if len(res.Observations) != 7 {
		t.Fatalf("%d observations, want 7", len(res.Observations))
	}
	for _, c := range []struct {
		key, card string
		gpus      int
		price     float64 // CNY per GPU-hour, by hand
	}{
		{"tencent/GN7.2XLARGE32/ap-guangzhou-3/ondemand", "T4", 1, 8.68},
		{"tencent/GN7.20XLARGE320/ap-guangzhou-3/ondemand", "T4", 4, 8.68}, // 34.72 / 4
		{"tencent/GN10Xp.2XLARGE40/ap-guangzhou-4/ondemand", "V100-32GB-SXM2", 1, 22.96},
		{"tencent/PNV4.7XLARGE116/ap-guangzhou-6/ondemand", "A10", 1, 9.8},
	} {
		scrapertest.Price(t, nr, c.key, c.card, pricewatch.ModeOnDemand, c.price)
		scrapertest.Rent(t, nr, c.key, pricewatch.RentFixed, c.gpus)
		if o := scrapertest.Find(t, nr, c.key); o.Currency != "CNY" {
			t.Errorf("%s: %s", c.key, o.Currency)
		}
	}
	// A quarter of a T4 is a shared GPU.
	if o := scrapertest.Find(t, nr, "tencent/GN7vw.XLARGE16/ap-guangzhou-4/ondemand"); !o.Shared || o.Card != "T4" {
		t.Errorf("vGPU share: %+v", o)
	}
	if o := scrapertest.Find(t, nr, "tencent/GT4.4XLARGE96/ap-guangzhou-6/ondemand"); o.Available != pricewatch.AvailableNo {
		t.Errorf("SOLD_OUT: available %q", o.Available)
	}
	if g.Unknown["GN8.LARGE56"] != 1 {
		t.Errorf("unknown %v: the P40 family is not in the table", g.Unknown)
	}
}

func TestNeedsKey(t *testing.T) {
	scrapertest.NeedsSecret(t, &tencent.Scraper{}, tencent.SecretIDEnv, tencent.SecretKeyEnv)
}

// The header has the TC3 layout; the signature depends on key, body and
// time, and the scope carries the UTC date of the request.
func TestSign(t *testing.T) {
	at := time.Date(2026, 11, 1, 23, 30, 0, 0, time.FixedZone("CST", 8*3600)) // 15:30 UTC
	a := tencent.Sign("AKIDexample", "secret", "cvm.tencentcloudapi.com", []byte(`{}`), at)
	if !strings.HasPrefix(a, "TC3-HMAC-SHA256 Credential=AKIDexample/2026-11-01/cvm/tc3_request, SignedHeaders=content-type;host, Signature=") {
		t.Errorf("header %q", a)
	}
	sig := a[strings.LastIndex(a, "=")+1:]
	if len(sig) != 64 {
		t.Errorf("signature %q is not 32 bytes of hex", sig)
	}
	for _, b := range []string{
		tencent.Sign("AKIDexample", "other", "cvm.tencentcloudapi.com", []byte(`{}`), at),
		tencent.Sign("AKIDexample", "secret", "cvm.tencentcloudapi.com", []byte(`{"x":1}`), at),
		tencent.Sign("AKIDexample", "secret", "cvm.tencentcloudapi.com", []byte(`{}`), at.Add(time.Second)),
	} {
		if b == a {
			t.Errorf("signature did not change: %s", b)
		}
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"auth", `{"Response": {"Error": {"Code": "AuthFailure.SignatureFailure", "Message": "The provided credentials could not be validated."}, "RequestId": "x"}}`, "AuthFailure.SignatureFailure"},
		{"no response", `{}`, "no Response object"},
		{"no set", `{"Response": {"RequestId": "x"}}`, "no InstanceTypeQuotaSet"},
		{"truncated", `{"Response": {"InstanceTypeQuotaSet": [`, "JSON"},
	} {
		_, err := tencent.Parse([]byte(c.body), "u")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

// Tencent Cloud's own TC3 example (API 3.0 signature docs, DescribeInstances
// on cvm at 1551113065; the masked key as the docs print it), whose
// published signature several independent clients pin.
func TestSign_PublishedExample(t *testing.T) {
	body := []byte(`{"Limit": 1, "Filters": [{"Values": ["\u672a\u547d\u540d"], "Name": "instance-name"}]}`)
	got := tencent.Sign("AKIDz8krbsJ5yKBZQpn74WFkmLPx3*******", "Gu5t9xGARNpq86cd98joQYCN3*******",
		"cvm.tencentcloudapi.com", body, time.Unix(1551113065, 0))
	want := "TC3-HMAC-SHA256 Credential=AKIDz8krbsJ5yKBZQpn74WFkmLPx3*******/2019-02-25/cvm/tc3_request, " +
		"SignedHeaders=content-type;host, Signature=2230eefd229f582d8b1b891af7107b91597240707d778ab3738f756258d7652c"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// Fields as the CVM API reference defines them (tencentcloud-sdk-go
// tencentcloud/cvm/v20170312/models.go @ 144f6c8, InstanceTypeQuotaItem,
// ItemPrice): Status SELL | SOLD_OUT; StatusCategory EnoughStock |
// NormalStock | UnderStock | WithoutStock ("库存已经售罄": an item on sale
// whose stock is gone cannot be rented); GpuCount below 1 is a vGPU share.
func TestParse_StockAsTheAPIReferenceDefinesIt(t *testing.T) {
	item := func(typ, status, category string) string {
		return `{"Zone": "ap-guangzhou-6", "InstanceType": "` + typ + `", "InstanceFamily": "GN7", "InstanceChargeType": "POSTPAID_BY_HOUR",
		 "Status": "` + status + `", "StatusCategory": "` + category + `", "Gpu": 1, "GpuCount": 1,
		 "Price": {"UnitPrice": 8.68, "UnitPriceDiscount": 8.68, "ChargeUnit": "HOUR", "Discount": 100}}`
	}
	body := `{"Response": {"InstanceTypeQuotaSet": [` +
		item("GN7.A", "SELL", "EnoughStock") + `,` + item("GN7.B", "SELL", "UnderStock") + `,` +
		item("GN7.C", "SELL", "WithoutStock") + `,` + item("GN7.D", "SOLD_OUT", "WithoutStock") + `], "RequestId": "r"}}`
	obs, err := tencent.Parse([]byte(body), "u")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]pricewatch.Availability{"GN7.A": pricewatch.AvailableYes, "GN7.B": pricewatch.AvailableYes,
		"GN7.C": pricewatch.AvailableNo, "GN7.D": pricewatch.AvailableNo}
	for _, o := range obs {
		if o.Available != want[o.OfferID] {
			t.Errorf("%s: available %q (stock %q), want %q", o.OfferID, o.Available, o.Stock, want[o.OfferID])
		}
	}
	if len(obs) != 4 {
		t.Errorf("%d observations", len(obs))
	}
}

// What comes with an instance type, from fixtures/tencent/zone-instance-configs.json:
// GN7.20XLARGE320 "Cpu": 80, "Memory": 320 (GB, read as GiB), 4 T4s;
// GN10Xp.2XLARGE40 10 and 40. "StorageBlockAmount": 0 counts blocks, no
// disk. ap-guangzhou-3 is in China (normalize/data/regions.csv).
func TestScraper_InstanceDetails(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "tencent")
	nr, _ := scrapertest.Normalize("tencent", res)
	t4 := scrapertest.Find(t, nr, "tencent/GN7.20XLARGE320/ap-guangzhou-3/ondemand")
	if t4.GPUs != 4 || t4.VCPUs != 80 || t4.RAMGB != 320 || t4.DiskGB != 0 || t4.Country != "CN" || t4.RentURL != tencent.RentURL {
		t.Errorf("GN7.20XLARGE320: %d GPUs, %v vCPUs, %v GiB, %v GiB disk, country %q, rent %q", t4.GPUs, t4.VCPUs, t4.RAMGB, t4.DiskGB, t4.Country, t4.RentURL)
	}
	v100 := scrapertest.Find(t, nr, "tencent/GN10Xp.2XLARGE40/ap-guangzhou-4/ondemand")
	if v100.VCPUs != 10 || v100.RAMGB != 40 {
		t.Errorf("GN10Xp.2XLARGE40: %v vCPUs, %v GiB", v100.VCPUs, v100.RAMGB)
	}
}
