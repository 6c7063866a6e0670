package httpapi_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/httpapi"
)

// TestHeavy_LimitAnswers503 holds every heavy slot, as HeavyLimit running
// history requests would. With the waiting places full too, the next
// history, dashboard or export request is refused at once with 503,
// Retry-After and a JSON error, while /v1/best still answers; with a
// waiting place free a request waits (here 50 ms) and then gets the same
// 503; a request that waits gets the slot that frees and answers 200.
// Before the limit the held slots did not exist and history answered 200
// (the test failed with "status 200").
func TestHeavy_LimitAnswers503(t *testing.T) {
	h := newHarness(t, true)
	defer httpapi.SetHeavyWait(50 * time.Millisecond)()
	heavy := []string{"/v1/history?card=L40S&workload=lora-7b", "/?workload=lora-7b&card=L40S", "/v1/export.csv", "/v1/export.json"}
	refused := func(when string) {
		t.Helper()
		for _, target := range heavy {
			rec := httptest.NewRecorder()
			h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
			if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" ||
				!strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") || !strings.Contains(rec.Body.String(), `"error":"busy`) {
				t.Errorf("%s %s: status %d, Retry-After %q, %s", target, when, rec.Code, rec.Header().Get("Retry-After"), rec.Body)
			}
		}
	}
	release := h.srv.HoldHeavy(httpapi.HeavyLimit)
	releaseQueue := h.srv.HoldQueue(httpapi.HeavyQueue)
	refused("with every slot and waiting place held")
	if code, body := h.get(t, "/v1/best?workload=lora-7b"); code != http.StatusOK {
		t.Errorf("/v1/best while heavy requests run: %d %s", code, body)
	}
	releaseQueue()
	refused("after waiting for a slot")
	// A waiting request takes the slot that frees.
	httpapi.SetHeavyWait(10 * time.Second)
	done := make(chan int)
	go func() {
		rec := httptest.NewRecorder()
		h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, heavy[0], nil))
		done <- rec.Code
	}()
	time.Sleep(50 * time.Millisecond)
	release()
	if code := <-done; code != http.StatusOK {
		t.Errorf("a waiting request when a slot frees: status %d", code)
	}
	release = h.srv.HoldHeavy(httpapi.HeavyLimit - 1)
	defer release()
	for _, target := range heavy {
		rec := httptest.NewRecorder()
		h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		if rec.Code != http.StatusOK {
			t.Errorf("%s with a slot free: status %d %s", target, rec.Code, rec.Body)
		}
	}
}

// TestHistory_CancelledRequestStops sends a history request whose context
// has ended (the client left): the store read returns the context's error
// instead of reading the rows, and the answer is a 503 saying so, not a
// series. Without the context checks it answered 200 with the points.
func TestHistory_CancelledRequestStops(t *testing.T) {
	h := newHarness(t, true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/history?card=L40S&workload=lora-7b", nil).WithContext(ctx))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "request cancelled") {
		t.Errorf("cancelled request: status %d %s", rec.Code, rec.Body)
	}
}

// TestExport_Streamed checks the streamed exports: the JSON array is byte
// for byte the encoding of the whole slice (what writeJSON wrote before),
// the CSV has its header and a row per offer; and an export whose client
// has left is cut (http.ErrAbortHandler: the connection is dropped, so a
// cut file never looks complete) instead of being written to the end.
// Before the context check the cancelled export answered 200 in full.
func TestExport_Streamed(t *testing.T) {
	h := newHarness(t, true)
	code, body := h.get(t, "/v1/export.json")
	want, err := json.Marshal(httpapi.ExportRows(h.env.Pipeline.View().Snapshot, ""))
	if err != nil {
		t.Fatal(err)
	}
	if code != http.StatusOK || !bytes.Equal(body, append(want, '\n')) {
		t.Fatalf("export.json: %d, %d bytes, want the %d of the encoded slice", code, len(body), len(want)+1)
	}
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/export.csv", nil))
	recs, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil || rec.Code != http.StatusOK || len(recs) < 2 || recs[0][0] != "instance_name" {
		t.Fatalf("export.csv: %d, %d records, %v", rec.Code, len(recs), err)
	}
	for _, target := range []string{"/v1/export.csv", "/v1/export.json"} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		rec := httptest.NewRecorder()
		func() {
			defer func() {
				if p := recover(); p != http.ErrAbortHandler {
					t.Errorf("%s cancelled: recovered %v, status %d, %d bytes; want the response aborted", target, p, rec.Code, rec.Body.Len())
				}
			}()
			h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil).WithContext(ctx))
		}()
	}
}

// TestHeavy_GivesMemoryBackAfterABurst: a burst of heavy requests hands
// the memory back to the system once, after the last one ends — not per
// request, and not while one still runs. Without afterHeavy the count
// stayed 0 (idle RSS stayed at 194 MB after a history and a dashboard
// request).
func TestHeavy_GivesMemoryBackAfterABurst(t *testing.T) {
	h := newHarness(t, true)
	count := h.srv.CountGiveBacks(50 * time.Millisecond)
	for range 3 {
		if code, body := h.get(t, "/v1/history?card=L40S&workload=lora-7b"); code != http.StatusOK {
			t.Fatalf("history: %d %s", code, body)
		}
	}
	release := h.srv.HoldHeavy(1) // a request still running
	time.Sleep(200 * time.Millisecond)
	if n := count(); n != 0 {
		t.Errorf("given back %d times while a heavy request runs", n)
	}
	release()
	h.get(t, "/v1/history?card=L40S&workload=lora-7b")
	deadline := time.Now().Add(5 * time.Second)
	for count() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if n := count(); n != 1 {
		t.Errorf("given back %d times after the burst, want 1", n)
	}
}
