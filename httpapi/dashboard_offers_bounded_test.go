package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/httpapi"
)

// Issue 32: the offer browser is bounded. The cases share one harness
// (a pipeline's first round takes seconds).
func TestOffersPage_Bounded(t *testing.T) {
	h := newHarness(t, true)
	t.Run("under the heavy limit", func(t *testing.T) { testOffersPageUnderTheHeavyLimit(t, h) })
	t.Run("cancelled request stops", func(t *testing.T) { testOffersPageCancelledRequestStops(t, h) })
	t.Run("counts and cache", func(t *testing.T) { testOffersPageCountsAndCache(t, h) })
}

// The offer browser is a heavy request. With every heavy slot
// and waiting place held (HeavyLimit history, dashboard or export
// requests running, HeavyQueue waiting), /offers is refused at once with
// 503 busy and Retry-After, as / and /v1/history are; with a slot free it
// answers. Before, /offers had no bound and answered 200 here.
func testOffersPageUnderTheHeavyLimit(t *testing.T, h *harness) {
	release := h.srv.HoldHeavy(httpapi.HeavyLimit)
	releaseQueue := h.srv.HoldQueue(httpapi.HeavyQueue)
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/offers?card=L40S", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), `"error":"busy`) {
		t.Errorf("/offers with every heavy slot held: status %d, Retry-After %q, %.200s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	releaseQueue()
	release()
	if code, body := h.page(t, "/offers?card=L40S"); code != http.StatusOK {
		t.Errorf("/offers with the slots free: %d %.300s", code, body)
	}
}

// A client that left stops the page: a request whose context has ended
// gets the cancelled answer (503, "request cancelled") and no page is
// built or kept. Before, the page was built in full (200) for nobody.
func testOffersPageCancelledRequestStops(t *testing.T, h *harness) {
	snap := h.env.Pipeline.View().Snapshot
	before, _ := snap.MemoStats()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/offers?card=L40S", nil).WithContext(ctx))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "request cancelled") {
		t.Errorf("cancelled /offers: status %d %.200s", rec.Code, rec.Body)
	}
	if after, _ := snap.MemoStats(); after != before {
		t.Errorf("a cancelled request left %d answers in the cache", after-before)
	}
}

// The card selector's counts come from the per-card indexes; they must
// be what a walk over every offer counts. A page is rendered once per
// snapshot, query and minute: the same address within the minute is the
// cached copy (no new cache entry, the same bytes), a minute later it is
// rendered again, and a page for a bad parameter is never kept.
func testOffersPageCountsAndCache(t *testing.T, h *harness) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	defer httpapi.SetNow(func() time.Time { return at })()
	snap := h.env.Pipeline.View().Snapshot
	walked := map[string]int{}
	for o := range snap.Offers() {
		if o.Card != "" {
			walked[o.Card]++
		}
	}
	if walked["L40S"] == 0 {
		t.Fatal("the demo catalog has no L40S offer")
	}
	entries := func() int { n, _ := snap.MemoStats(); return n }
	n0 := entries()
	code, first := h.page(t, "/offers?card=L40S&limit=25")
	if code != http.StatusOK {
		t.Fatalf("/offers: %d", code)
	}
	for card, n := range walked {
		if label := fmt.Sprintf(">%s (%d)<", card, n); !strings.Contains(first, label) {
			t.Errorf("card selector lacks %q", label)
		}
	}
	if got := entries(); got != n0+1 {
		t.Fatalf("cache entries %d after the first page, want %d", got, n0+1)
	}
	at = at.Add(30 * time.Second)
	if _, again := h.page(t, "/offers?card=L40S&limit=25"); again != first || entries() != n0+1 {
		t.Errorf("the same page within the minute: same bytes %v, entries %d (want %d)", again == first, entries(), n0+1)
	}
	at = at.Add(time.Minute)
	if h.page(t, "/offers?card=L40S&limit=25"); entries() != n0+2 {
		t.Errorf("a minute later: entries %d, want %d (rendered again)", entries(), n0+2)
	}
	if code, _ := h.page(t, "/offers?card=L40S&kind=bogus"); code != http.StatusBadRequest || entries() != n0+2 {
		t.Errorf("bad kind: %d, entries %d (want %d: not kept)", code, entries(), n0+2)
	}
}
