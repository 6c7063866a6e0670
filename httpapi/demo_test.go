package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/pricewatch/pricewatch/httpapi"
)

// A daemon serving fixtures says so: /v1/best carries "demo": true, the
// ECB rates' own date (the bundled file's, 2022-07-08) and each source's
// capture kind and date; the dashboard shows a banner with how many
// fixtures are built (18 shape rows of 30 in fixtures/captures.csv: 10 of the first 20 sources, 8 of the 10 added since), and
// the sources page each capture date. Before the fix /v1/best had no
// "demo" or "data" key and the dashboard read only "Ranking of … (1m ago)".
func TestDemo_SaysItIsADemo(t *testing.T) {
	h := newHarness(t, true)
	h.srv.SetDemo(httpapi.DemoFixtures())
	code, body := h.get(t, "/v1/best?workload=lora-7b")
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	res := decode[httpapi.BestResponse](t, body)
	if !res.Demo || res.Data.FXDate != "2022-07-08" {
		t.Errorf("demo %v, fx_date %q", res.Demo, res.Data.FXDate)
	}
	if v := res.Data.Sources["vast"]; v.Capture != "real" || v.Captured != "2024-11-05" {
		t.Errorf("vast: %+v", v)
	}
	if v := res.Data.Sources["coreweave"]; v.Capture != "shape" || v.Captured != "" {
		t.Errorf("coreweave: %+v", v)
	}
	line := "Demo: prices from bundled fixtures (23 of 41 illustrative), exchange rates of 2022-07-08"
	if got := httpapi.DataLine(res.Demo, res.Data); got != line {
		t.Errorf("line %q", got)
	}
	for _, target := range []string{"/?workload=lora-7b", "/sources", "/plan?workload=lora-7b&tokens=1000000", "/alerts"} {
		code, page := h.page(t, target)
		if code != 200 || !strings.Contains(page, `id="demo-banner"`) || !strings.Contains(page, line) {
			t.Errorf("%s: %d, no demo banner", target, code)
		}
	}
	_, page := h.page(t, "/sources")
	for _, want := range []string{"<th>Fixture data</th>", "real, captured 2024-11-05", "shape (built, prices illustrative)"} {
		if !strings.Contains(page, want) {
			t.Errorf("/sources lacks %q", want)
		}
	}
}

// Outside demo mode nothing claims a demo, and the rates' date is still
// given: in /v1/best, the dashboard's footer and the CLI's line. Before the
// fix no answer or page named the rates' date.
func TestDemo_OffStillDatesTheRates(t *testing.T) {
	h := newHarness(t, true)
	_, body := h.get(t, "/v1/best?workload=lora-7b")
	res := decode[httpapi.BestResponse](t, body)
	if res.Demo || res.Data.Sources != nil || res.Data.FXDate != "2022-07-08" {
		t.Errorf("demo %v, sources %v, fx_date %q", res.Demo, res.Data.Sources, res.Data.FXDate)
	}
	if !strings.Contains(string(body), `"demo":false`) {
		t.Errorf("no \"demo\": false in %.300s", body)
	}
	_, page := h.page(t, "/?workload=lora-7b")
	if strings.Contains(page, `id="demo-banner"`) || !strings.Contains(page, "Exchange rates of 2022-07-08") {
		t.Errorf("dashboard outside demo mode: banner %v, rates' date %v",
			strings.Contains(page, `id="demo-banner"`), strings.Contains(page, "Exchange rates of 2022-07-08"))
	}
	if got := httpapi.DataLine(false, res.Data); got != "Data: ECB exchange rates of 2022-07-08" {
		t.Errorf("line %q", got)
	}
}

// The /v1/best answer, demo fields included, is what openapi.yaml's Best
// schema says (libopenapi-validator checks the response against it).
func TestDemo_BestMatchesOpenAPI(t *testing.T) {
	doc, err := libopenapi.NewDocument(httpapi.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	h := newHarness(t, true)
	h.srv.SetDemo(httpapi.DemoFixtures())
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080/v1/best?workload=lora-7b", nil)
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, req)
	ok, verrs := v.ValidateHttpResponse(req, rec.Result())
	for _, e := range verrs {
		t.Errorf("%s: %s", e.Message, e.Reason)
		for _, se := range e.SchemaValidationErrors {
			t.Errorf("  at %s: %s", se.FieldPath, se.Reason)
		}
	}
	if !ok && len(verrs) == 0 {
		t.Error("not valid, no reason given")
	}
}
