package httpapi

import (
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
)

// TestOffersPage_Details: an offer's stated details are shown (vCPUs, RAM,
// disk, link, country) and its rent page linked; an offer stating none
// shows "—" in each. (The test pipeline's fixtures state none yet, so the
// browser test sees only dashes.)
func TestOffersPage_Details(t *testing.T) {
	full := pricewatch.Offer{Key: "k1", Source: "lambda", Provider: "lambda", OfferID: "gpu_8x_h100_sxm5", Mode: pricewatch.ModeOnDemand,
		GPUs: 8, RentUnit: pricewatch.RentFixed, PricePerGPUHour: 2.99, Currency: "USD",
		Machine: pricewatch.Machine{VCPUs: 208, RAMGB: 1800, DiskGB: 22000, Interconnect: "nvlink", Country: "US",
			RentURL: "https://cloud.lambda.ai/instances?type=gpu_8x_h100_sxm5"}}
	bare := pricewatch.Offer{Key: "k2", Source: "vast", Provider: "vast", OfferID: "123", Mode: pricewatch.ModeSpot, GPUs: 1,
		RentUnit: pricewatch.RentFixed, PricePerGPUHour: 1.5, Currency: "USD"}
	st := offersPage{page: page{Title: "Offers", Nav: "offers"}, Card: "H100-80GB-SXM",
		Rows: []offerRow{newOfferRow(offerStatus(full, false), 1), newOfferRow(offerStatus(bare, false), 2)}}
	rec := httptest.NewRecorder()
	if err := render(rec, "offers", 200, st); err != nil {
		t.Fatal(err)
	}
	body := rec.Body.String()
	rows := strings.Split(body, `<tr data-key=`)
	if len(rows) != 3 {
		t.Fatalf("%d rows\n%s", len(rows)-1, body)
	}
	for _, want := range []string{`<td class="num vcpus">208</td>`, `<td class="num ram">1800</td>`, `<td class="num disk">22000</td>`,
		`<td class="interconnect">nvlink</td>`, `<td class="country">US</td>`,
		`<a href="https://cloud.lambda.ai/instances?type=gpu_8x_h100_sxm5" rel="noopener noreferrer" target="_blank">rent</a>`} {
		if !strings.Contains(rows[1], want) {
			t.Errorf("the stated offer's row lacks %s:\n%s", want, rows[1])
		}
	}
	for _, want := range []string{`<td class="num vcpus">—</td>`, `<td class="num ram">—</td>`, `<td class="num disk">—</td>`,
		`<td class="interconnect">—</td>`, `<td class="country">—</td>`, `<td class="rent">—</td>`} {
		if !strings.Contains(rows[2], want) {
			t.Errorf("the bare offer's row lacks %s:\n%s", want, rows[2])
		}
	}
}

// offerRow's top-level fields shadow the embedded ones for the template's
// speed; every one must equal the field it shadows, of the same type, for
// an offer that states each of them.
func TestOfferRow_ShadowsEqualTheOffer(t *testing.T) {
	o := pricewatch.Offer{Key: "k", Source: "s", Provider: "p", OfferID: "id", Region: "r", Currency: "EUR", Stock: "Low",
		Kind: pricewatch.KindOffer, Mode: pricewatch.ModeSpot, Available: pricewatch.AvailableYes, RentUnit: pricewatch.RentPerGPU,
		Bid: true, GPUs: 2, GPUCounts: []int{1, 2}, PricePerGPUHour: 1.5, UnitPricePerHour: 3,
		Machine: pricewatch.Machine{VCPUs: 8, RAMGB: 64, DiskGB: 100, Interconnect: "pcie", Country: "DE", RentURL: "https://example.com/rent"}}
	row := newOfferRow(offerStatus(o, true), 7)
	rv, rt := reflect.ValueOf(row), reflect.TypeOf(row)
	emb := rv.FieldByName("OfferStatus")
	shadows := 0
	for i := range rt.NumField() {
		f := rt.Field(i)
		if f.Anonymous || f.Name == "N" {
			continue
		}
		shadows++
		want := emb.FieldByName(f.Name)
		if !want.IsValid() || want.Type() != f.Type {
			t.Errorf("%s shadows no embedded field of its type", f.Name)
			continue
		}
		if got := rv.Field(i); !reflect.DeepEqual(got.Interface(), want.Interface()) || got.IsZero() {
			t.Errorf("%s = %v, the offer's is %v", f.Name, got, want)
		}
	}
	if shadows == 0 || row.N != 7 {
		t.Errorf("%d shadows, N %d", shadows, row.N)
	}
}
