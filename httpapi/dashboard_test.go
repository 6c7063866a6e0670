package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func (h *harness) page(t *testing.T, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("%s: content-type %q", target, ct)
	}
	return rec.Code, rec.Body.String()
}

var (
	rowRe  = regexp.MustCompile(`<tr data-card="([^"]+)">`)
	costRe = regexp.MustCompile(`<td class="num cost">([^<]+)</td>`)
)

// The dashboard's tables are plain server-rendered HTML: they work without
// JavaScript, and the state is the query string.
func TestDashboard_PagesWithoutJavaScript(t *testing.T) {
	h := newPlanHarness(t, "")
	code, body := h.page(t, "/?workload=lora-7b")
	rows := rowRe.FindAllStringSubmatch(body, -1)
	if code != 200 || len(rows) < 8 {
		t.Fatalf("/: %d, %d cards", code, len(rows))
	}
	for _, want := range []string{"Rentable unit", "Throughput origin", `<svg class="chart"`, `id="history"`, "per GPU:", "fixed unit of"} {
		if !strings.Contains(body, want) {
			t.Errorf("/ lacks %q", want)
		}
	}
	usd := costRe.FindAllStringSubmatch(body, -1)
	_, cnyBody := h.page(t, "/?workload=lora-7b&currency=CNY")
	cny := costRe.FindAllStringSubmatch(cnyBody, -1)
	if len(usd) == 0 || len(cny) != len(usd) || usd[0][1] == cny[0][1] || !strings.HasSuffix(cny[0][1], "CNY") {
		t.Errorf("currency switch: USD %v, CNY %v", usd[:1], cny[:1])
	}
	// Sorting by card name, descending: a link away.
	_, sorted := h.page(t, "/?workload=lora-7b&sort=card&order=desc")
	srows := rowRe.FindAllStringSubmatch(sorted, -1)
	for i := 1; i < len(srows); i++ {
		if srows[i][1] > srows[i-1][1] {
			t.Fatalf("sort=card&order=desc: %s before %s", srows[i-1][1], srows[i][1])
		}
	}
	// The max GPUs selector keeps single-GPU rentals.
	_, one := h.page(t, "/?workload=lora-7b&max_gpus=1")
	if strings.Contains(one, "fixed unit of 8 GPUs") {
		t.Error("max_gpus=1 shows an 8-GPU unit")
	}
	// A bad parameter is a 400 page naming it.
	if code, body := h.page(t, "/?workload=gpt-5"); code != 400 || !strings.Contains(body, "unknown workload") {
		t.Errorf("bad workload: %d", code)
	}
	if code, body := h.page(t, "/?range=1y"); code != 400 || !strings.Contains(body, "range must be") {
		t.Errorf("bad range: %d", code)
	}
	if code, body := h.page(t, "/sources"); code != 200 || !strings.Contains(body, `id="sources"`) || !strings.Contains(body, "badge-ok") {
		t.Errorf("/sources: %d", code)
	}
	code, body = h.page(t, "/plan?workload=full-ft-7b&tokens=15000000&currency=CNY")
	if code != 200 || !strings.Contains(body, `id="plan-memory"`) || !strings.Contains(body, "optimizer 26.1") || strings.Count(body, "<tr>") < 5 { // 28e9 B = 26.1 GiB
		t.Errorf("/plan: %d\n%.2000s", code, body)
	}
	// A commitment bills whole periods: the Billed column says how many and
	// whether the period can beat on-demand.
	code, body = h.page(t, "/plan?workload=lora-7b&tokens=15000000&mode=monthly")
	if code != 200 || !strings.Contains(body, "<th>Billed</th>") || !strings.Contains(body, "<th>Region</th>") ||
		!regexp.MustCompile(`<td class="billed">1 × 730 h, (pays above \d+% use|never beats on-demand)</td>`).MatchString(body) {
		t.Errorf("/plan monthly: %d\n%.3000s", code, body)
	}
	// An empty plan says why: here every 4090 offer is too small on one GPU.
	if code, body := h.page(t, "/plan?workload=full-ft-7b&tokens=15000000&max_gpus=1&card=RTX-4090"); code != 200 ||
		!regexp.MustCompile(`No option for this job: \d+ offers in these modes cannot hold it`).MatchString(body) {
		t.Errorf("/plan with nothing big enough: %d\n%.3000s", code, body)
	}
	if code, body := h.page(t, "/plan?workload=lora-7b&tokens=-1"); code != 400 || !strings.Contains(body, "tokens") {
		t.Errorf("/plan with bad tokens: %d", code)
	}
	if code, body := h.page(t, "/alerts"); code != 200 || !strings.Contains(body, `id="outbox"`) || !strings.Contains(body, "write endpoints are off") {
		t.Errorf("/alerts: %d", code)
	}
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/static/style.css", nil))
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/css") {
		t.Errorf("style.css: %d", rec.Code)
	}
}
