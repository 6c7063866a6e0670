package httpapi_test

import (
	"regexp"
	"strings"
	"testing"
)

var offerRowRe = regexp.MustCompile(`<tr data-key="([^"]+)" data-provider="([^"]+)">`)

// The offer browser and the API reference are server-rendered pages: they
// work without JavaScript. Before: both were 404 pages.
func TestDashboard_OffersAndAPIWithoutJavaScript(t *testing.T) {
	h := newPlanHarness(t, "")
	code, body := h.page(t, "/offers?card=L40S&limit=25")
	rows := offerRowRe.FindAllStringSubmatch(body, -1)
	if code != 200 || len(rows) != 25 || !strings.Contains(body, `id="offers-next"`) || !strings.Contains(body, "Offers 1–25 of") {
		t.Fatalf("/offers: %d, %d rows\n%.1500s", code, len(rows), body)
	}
	// The Next link carries the API's cursor and the next row number.
	next := regexp.MustCompile(`href="(/offers\?[^"]+)" id="offers-next"`).FindStringSubmatch(body)
	if next == nil || !strings.Contains(next[1], "cursor=") || !strings.Contains(next[1], "from=26") {
		t.Fatalf("next link %v", next)
	}
	code, body2 := h.page(t, strings.ReplaceAll(next[1], "&amp;", "&"))
	rows2 := offerRowRe.FindAllStringSubmatch(body2, -1)
	if code != 200 || len(rows2) == 0 || rows2[0][1] == rows[0][1] || !strings.Contains(body2, "<td>26</td>") {
		t.Errorf("second page: %d, %d rows", code, len(rows2))
	}
	// A bad parameter of the API is the API's message on the page, with its status.
	if code, body := h.page(t, "/offers?card=L40S&kind=bogus"); code != 400 || !strings.Contains(body, "kind") || !strings.Contains(body, `id="offers-form"`) {
		t.Errorf("bad kind: %d\n%.600s", code, body)
	}
	if code, body := h.page(t, "/offers?card=L40S&from=0"); code != 400 || !strings.Contains(body, "from") {
		t.Errorf("bad from: %d", code)
	}
	code, body = h.page(t, "/api")
	if code != 200 || strings.Count(body, `<section class="api-op"`) < 25 || !strings.Contains(body, `id="get-v1-best"`) ||
		!strings.Contains(body, "A workload: lora-7b, qlora-7b") || !strings.Contains(body, "<code>Best</code>") {
		t.Errorf("/api: %d\n%.1500s", code, body)
	}
}

// A filter the API rejects is a 400 page that names it above the form
// holding it, on the ranking and the offer browser alike. Before: the
// ranking's was an error page without the form.
func TestDashboard_BadFilterKeepsTheForm(t *testing.T) {
	h := newPlanHarness(t, "")
	for _, tc := range []struct{ target, form string }{
		{"/?workload=lora-7b&provider=nosuch", `id="best-form"`},
		{"/offers?card=L40S&provider=nosuch", `id="offers-form"`},
	} {
		code, body := h.page(t, tc.target)
		if code != 400 || !strings.Contains(body, `class="error"`) || !strings.Contains(body, "provider") ||
			!strings.Contains(body, tc.form) || !strings.Contains(body, `name="provider" value="nosuch"`) {
			t.Errorf("%s: %d\n%.2500s", tc.target, code, body)
		}
	}
}
