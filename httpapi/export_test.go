package httpapi_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/internal/testfile"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
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
	stated := map[string]bool{} // sources whose rows state vCPUs
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
		if n, _ := strconv.Atoi(r[5]); n != o.RentUnitGPUs || r[12] == "" || r[6] == "" || r[10] == "" {
			t.Errorf("row %q for %+v", r, o)
		}
		// cpu, memory and disk_size are the offer's details scaled to the
		// row's GPUs (the smallest rental): 0 and empty where unstated.
		k := float64(o.RentUnitGPUs) / float64(o.GPUs)
		cpu, _ := strconv.Atoi(r[3])
		mem, _ := strconv.ParseFloat(r[4], 64)
		if cpu != int(math.Round(o.VCPUs*k)) || abs(mem-o.RAMGB*k) > 1e-9 || (o.DiskGB == 0) != (r[9] == "") {
			t.Errorf("row %q: cpu %s memory %s disk %q for %v vCPUs, %v GB, %v GB disk of %d GPUs", data.Key, r[3], r[4], r[9], o.VCPUs, o.RAMGB, o.DiskGB, o.GPUs)
		}
		if o.VCPUs > 0 {
			stated[o.Source] = true
		}
		if data.Country != o.Country || data.RentURL != o.RentURL {
			t.Errorf("provider_data %s: country %q rent %q, offer's %q %q", data.Key, data.Country, data.RentURL, o.Country, o.RentURL)
		}
		if data.Card != o.Card || data.Mode != o.Mode || data.Currency != o.Currency || data.PricePerGPUHour != o.PricePerGPUHour || data.ObservedAt.IsZero() {
			t.Errorf("provider_data %+v for %s", data, o.Key)
		}
		if o.Currency == "USD" && abs(price-o.UnitPricePerHour) > 1e-9*price {
			t.Errorf("%s: price %v, unit price %v", o.Key, price, o.UnitPricePerHour)
		}
	}
	for _, src := range []string{"vast", "aws", "gcp", "lambda", "azure", "tensordock", "vultr", "linode", "digitalocean", "scaleway", "hyperstack", "verda", "jarvislabs", "cloudrift", "tencent"} {
		if !stated[src] {
			t.Errorf("no %s row states its vCPUs (the cpu column was 0 for every row before)", src)
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

// plainNumberRe is a decimal number as a spreadsheet reads it: a value, not
// a formula.
var plainNumberRe = regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// Issue 19 item 9: a scraped name or location that starts with = + - @ TAB
// or CR reaches the CSV export with a single quote before it (OWASP's CSV
// injection advice), through the real handler; every other cell of the
// export is untouched; the JSON export keeps the scraped value as it is.
// Before the fix every payload below was written bare, and the 139 offers
// without a region had the location "-" (22 cells of vast and tensordock
// started a formula; "no location" for each payload).
func TestExport_FormulaCellsNeutralized(t *testing.T) {
	env := pipelinetest.New(t, fixtures.Handler(os.DirFS(testfile.FormulaFixtures(t))), nil)
	env.Round(t)
	h := newHarnessOn(t, env)
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/export.csv", nil))
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	recs, err := csv.NewReader(bytes.NewReader(rec.Body.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// No cell starts a formula: a cell that starts with one of the
	// characters is a plain number (none is today: prices are positive).
	bare := 0
	for _, r := range recs[1:] {
		for i, c := range r {
			if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) && !plainNumberRe.MatchString(c) {
				if bare++; bare <= 5 {
					t.Errorf("%s cell %q starts a formula", recs[0][i], c)
				}
			}
		}
	}
	if bare > 0 {
		t.Errorf("%d cells start a formula", bare)
	}
	// Each payload is there, quoted once, in full (CR LF kept).
	locations, names := map[string]int{}, map[string]int{}
	for _, r := range recs[1:] {
		locations[r[1]]++
		for _, p := range testfile.FormulaPayloads {
			if strings.HasPrefix(r[0], "'"+p+"-") {
				names[p]++
			}
		}
		if _, err := strconv.ParseFloat(r[2], 64); err != nil || r[2][0] == '\'' {
			t.Errorf("price %q is not a number", r[2])
		}
	}
	for i, p := range testfile.FormulaPayloads {
		// encoding/csv reads a quoted CR LF as LF: the bytes are checked too.
		read := strings.ReplaceAll(p, "\r\n", "\n")
		if locations["'"+read] == 0 {
			t.Errorf("no location %q in the export", "'"+p)
		}
		if q := `"'` + strings.ReplaceAll(p, `"`, `""`) + `"`; strings.ContainsAny(p, "\r\",") && !bytes.Contains(rec.Body.Bytes(), []byte(q)) {
			t.Errorf("the CSV has no cell %q", q)
		}
		if locations[read] != 0 {
			t.Errorf("location %q exported bare", p)
		}
		if i < 4 && names[p] == 0 {
			t.Errorf("no instance_name starting %q", "'"+p+"-")
		}
	}
	// The JSON rows are for programs, not spreadsheets: the values as
	// scraped.
	code, body := h.get(t, "/v1/export.json")
	if code != 200 {
		t.Fatalf("export.json: %d %s", code, body)
	}
	rows := decode[[]httpapi.ExportRow](t, body)
	if len(rows) != len(recs)-1 {
		t.Fatalf("export.json: %d rows, CSV %d", len(rows), len(recs)-1)
	}
	raw := map[string]bool{}
	unknown := 0
	for _, r := range rows {
		raw[r.Location] = true
		if r.Location == httpapi.UnknownLocation && strings.HasSuffix(r.Data.Key, "/-/"+string(r.Data.Mode)) {
			unknown++ // an offer without a region (key source/offer/-/mode)
		}
	}
	// Offers without a region are in the "unknown" location: a word, which
	// needs no quote (it was "-", which does).
	if unknown == 0 || locations["'-"] != 0 {
		t.Errorf("%d rows without a region in %q; %d in \"'-\"", unknown, httpapi.UnknownLocation, locations["'-"])
	}
	for _, p := range testfile.FormulaPayloads {
		if !raw[p] {
			t.Errorf("export.json: no location %q", p)
		}
	}
}

// The rule cell by cell: a quote before a cell that starts with a formula
// character, unless it is a plain number; every other cell as it is.
func TestExportRecord_NeutralizesEveryColumn(t *testing.T) {
	for _, p := range testfile.FormulaPayloads {
		row := httpapi.ExportRow{InstanceName: p, Location: p, Price: 1.5, GPUCount: 1, GPUName: p, GPUMemory: 80,
			GPUVendor: "nvidia", Flags: []string{p}, CPUArch: "x86", Data: httpapi.ExportData{Key: p}}
		rec, err := row.Record()
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range []int{0, 1, 6, 11} {
			if rec[i] != "'"+p {
				t.Errorf("%s: %q, want %q", httpapi.ExportColumns[i], rec[i], "'"+p)
			}
		}
		if rec[2] != "1.5" || rec[13][0] != '{' {
			t.Errorf("price %q, provider_data %q", rec[2], rec[13])
		}
	}
	for cell, want := range map[string]string{"-": "'-", "-1.5": "-1.5", "+2": "+2", "-1e3": "-1e3", "-Inf": "'-Inf", "-0x1p3": "'-0x1p3",
		"'=1+1": "'=1+1", " =1": " =1", "us-east-1": "us-east-1", "": ""} {
		rec, _ := httpapi.ExportRow{InstanceName: cell, Data: httpapi.ExportData{}}.Record()
		if rec[0] != want {
			t.Errorf("%q: %q, want %q", cell, rec[0], want)
		}
	}
}

// The export is written in the snapshot's own order, by source and then
// offer key, as the rows are made (issue 20 item 3: no row waits for a
// global sort). Over the demo fixtures the feed sources (skypilot) hold
// several providers, so the order by provider the export had before
// fails this (it did: "row 19: aws aws/g4ad.xlarge/us-east-1/ondemand
// after aws-spot aws-spot/g4ad.xlarge/us-east-1/spot").
func TestExport_RowsBySourceThenKey(t *testing.T) {
	h := newHarness(t, true)
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/export.json", nil))
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	var rows []httpapi.ExportRow
	if err := json.Unmarshal(rec.Body.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) < 100 {
		t.Fatalf("%d rows", len(rows))
	}
	sources := map[string]bool{}
	for i, r := range rows {
		sources[r.Data.Source] = true
		if i == 0 {
			continue
		}
		p := rows[i-1].Data
		if p.Source > r.Data.Source || p.Source == r.Data.Source && p.Key >= r.Data.Key {
			t.Fatalf("row %d: %s %s after %s %s", i, r.Data.Source, r.Data.Key, p.Source, p.Key)
		}
	}
	if len(sources) < 5 {
		t.Errorf("rows of %d sources", len(sources))
	}
}
