package httpapi_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/httpapi"
)

// The ranking page is kept for the minute it was rendered in: a reload in
// that minute gets the same bytes without a render (the answer cache does
// not grow), the next minute renders the page anew ("1m ago" and the
// chart's range move) around the same ranking rows, which are kept for
// the snapshot (one more entry, not two), and a page for a bad parameter
// is never kept.
func TestDashboard_CachedForTheMinute(t *testing.T) {
	h := newHarness(t, true)
	t0 := time.Date(2026, 12, 2, 12, 0, 5, 0, time.UTC)
	at := t0
	defer httpapi.SetNow(func() time.Time { return at })()
	page := func(target string) (int, []byte) {
		t.Helper()
		rec := httptest.NewRecorder()
		h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" || rec.Header().Get("Content-Security-Policy") == "" {
			t.Errorf("%s: content-type %q, CSP %q", target, ct, rec.Header().Get("Content-Security-Policy"))
		}
		return rec.Code, rec.Body.Bytes()
	}
	entries := func() int {
		n, _ := h.env.Pipeline.View().Snapshot.MemoStats()
		return n
	}
	n0 := entries()
	code, first := page("/?workload=lora-7b")
	if code != 200 || entries() != n0+2 {
		t.Fatalf("first render: %d, cache %d → %d entries, want the page and its rows", code, n0, entries())
	}
	at = t0.Add(50 * time.Second)
	if code, again := page("/?workload=lora-7b"); code != 200 || !bytes.Equal(first, again) || entries() != n0+2 {
		t.Errorf("reload in the same minute: %d, same bytes %v, cache %d entries", code, bytes.Equal(first, again), entries())
	}
	at = t0.Add(61 * time.Second)
	if code, next := page("/?workload=lora-7b"); code != 200 || entries() != n0+3 || !bytes.Contains(next, []byte(`<tr data-card="`)) {
		t.Errorf("next minute: %d, cache %d entries, want a new page around the kept rows (%d)", code, entries(), n0+3)
	}
	for range 2 {
		if code, body := page("/?workload=lora-7b&sort=nope"); code != 400 || !bytes.Contains(body, []byte("sort must be")) {
			t.Errorf("bad sort: %d %.200s", code, body)
		}
	}
	if entries() != n0+3 {
		t.Errorf("a 400 page was cached: %d entries", entries())
	}
}
