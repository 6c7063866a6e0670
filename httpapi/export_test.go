package httpapi_test

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/normalize"
)

// Issue 12: the export loads with encoding/csv, has gpuhunt's v2 header
// and one row per rentable offer, with the price in USD per hour of the
// rentable unit and pricewatch's fields in provider_data.
func TestExport_GPUHuntCatalogCSV(t *testing.T) {
	h := newHarness(t, true)
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/export.csv", nil))
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/csv") {
		t.Fatalf("%d %s", rec.Code, rec.Header())
	}
	recs, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := []string{"instance_name", "location", "price", "cpu", "memory", "gpu_count", "gpu_name", "gpu_memory", "spot",
		"disk_size", "gpu_vendor", "flags", "cpu_arch", "provider_data"}
	if !slices.Equal(recs[0], header) {
		t.Fatalf("header %q", recs[0])
	}
	// The rentable offers, counted from /v1/offers.
	_, body := h.get(t, "/v1/offers?kind=offer&limit=10000")
	offers := decode[httpapi.OffersResponse](t, body)
	if offers.Total > 10000 {
		t.Fatalf("more offers than one page: %d", offers.Total)
	}
	want := map[string]pricewatch.Offer{}
	direct := map[string]bool{}
	for _, o := range offers.Offers {
		if o.Source == o.Provider {
			direct[o.Provider+"/"+string(o.Mode)] = true
		}
	}
	for _, o := range offers.Offers {
		if o.Source != o.Provider && direct[o.Provider+"/"+string(o.Mode)] {
			continue // a feed's copy of a direct source's offer
		}
		if o.Card != "" && !o.Shared && o.RentUnit != "" && !o.Stale &&
			(o.Mode == pricewatch.ModeOnDemand || o.Mode == pricewatch.ModeSpot) {
			want[o.Key] = o.Offer
		}
	}
	rows := recs[1:]
	if len(rows) != len(want) || len(rows) < 1000 {
		t.Fatalf("%d rows, %d rentable hourly offers", len(rows), len(want))
	}
	seen := map[string]bool{}
	for _, r := range rows {
		var data httpapi.ExportData
		if err := json.Unmarshal([]byte(r[13]), &data); err != nil {
			t.Fatalf("provider_data %q: %v", r[13], err)
		}
		o, ok := want[data.Key]
		if !ok || seen[data.Key] {
			t.Fatalf("row for %q: not a rentable offer, or twice", data.Key)
		}
		seen[data.Key] = true
		price, err := strconv.ParseFloat(r[2], 64)
		if err != nil || price <= 0 || r[8] != map[bool]string{true: "True", false: "False"}[o.Mode == pricewatch.ModeSpot] {
			t.Fatalf("row %q", r)
		}
		if n, _ := strconv.Atoi(r[5]); n != o.RentUnitGPUs || r[3] != "0" || r[4] != "0.0" || r[12] == "" || r[6] == "" || r[10] == "" {
			t.Errorf("row %q for %+v", r, o)
		}
		if data.Card != o.Card || data.Mode != o.Mode || data.Currency != o.Currency || data.PricePerGPUHour != o.PricePerGPUHour || data.ObservedAt.IsZero() {
			t.Errorf("provider_data %+v for %s", data, o.Key)
		}
		if o.Currency == "USD" && abs(price-o.UnitPricePerHour) > 1e-9*price {
			t.Errorf("%s: price %v, unit price %v", o.Key, price, o.UnitPricePerHour)
		}
	}
	// One provider: its rows only; the RunPod L40S at its 1-GPU unit.
	rec = httptest.NewRecorder()
	h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/export.csv?provider=runpod", nil))
	recs, _ = csv.NewReader(rec.Body).ReadAll()
	found := false
	for _, r := range recs[1:] {
		if !strings.Contains(r[13], `"source":"runpod"`) {
			t.Fatalf("provider=runpod: %q", r)
		}
		if r[0] == "NVIDIA L40S/community" && r[8] == "False" {
			found = r[2] == "0.79" && r[5] == "1" && r[6] == "L40S" && r[7] == "48.0" && r[10] == "nvidia"
		}
	}
	if !found || len(recs) < 50 {
		t.Errorf("runpod rows %d, L40S community row as expected: %v", len(recs)-1, found)
	}
	if code, body := h.get(t, "/v1/export.csv?provider=nosuch"); code != 400 || !strings.Contains(string(body), "provider") {
		t.Errorf("unknown provider: %d %s", code, body)
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func TestGPUHuntName(t *testing.T) {
	for id, want := range map[string]string{"A100-80GB-SXM": "A100", "H100-94GB-NVL": "H100NVL", "RTX-4090": "RTX4090",
		"RTX-6000-ADA": "RTX6000Ada", "RTX-A6000": "A6000", "MI300X-192GB": "MI300X", "B200-186GB-GB200": "GB200",
		"RTX-3080-TI": "RTX3080Ti", "RTX-PRO-6000-SERVER": "RTXPRO6000", "GH200-96GB": "GH200", "L40S": "L40S", "RTX-4070-TI-SUPER": "RTX4070TiSUPER"} {
		c, ok := catalogCard(id)
		if !ok {
			t.Errorf("no card %s", id)
			continue
		}
		if got := httpapi.GPUHuntName(c); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
}

func catalogCard(id string) (pricewatch.Card, bool) { return normalize.DefaultCatalog().Card(id) }
