package httpapi_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
)

// One question spelled many ways is one cache entry with one answer.
func TestBest_CacheKeyCanonical(t *testing.T) {
	h := newHarness(t, true)
	snap := h.env.Pipeline.View().Snapshot
	var first []byte
	for i, q := range []string{
		"workload=lora-7b&mode=ondemand,spot&currency=CNY",
		"workload=lora-7b&mode=spot,ondemand&currency=cny",
		"workload=lora-7b&mode=spot,ondemand,spot&currency=Cny",
		"workload=lora-7b&mode=SPOT,+ondemand&currency=CNY",
		"currency=CNY&workload=lora-7b",
	} {
		code, body := h.get(t, "/v1/best?"+q)
		if code != 200 {
			t.Fatalf("%s: %d %s", q, code, body)
		}
		if i == 0 {
			first = body
		} else if !bytes.Equal(body, first) {
			t.Errorf("%s: another answer than %s", q, "mode=ondemand,spot")
		}
	}
	if n, _ := snap.MemoStats(); n != 1 {
		t.Errorf("%d cache entries for one question, want 1", n)
	}
	for _, q := range []string{"workload=lora-7b&utilization=0.5&mode=monthly", "workload=lora-7b&utilization=.50&mode=monthly",
		"workload=lora-7b&utilization=5e-1&mode=monthly"} {
		if code, body := h.get(t, "/v1/best?"+q); code != 200 {
			t.Fatalf("%s: %d %s", q, code, body)
		}
	}
	if n, _ := snap.MemoStats(); n != 2 {
		t.Errorf("%d cache entries, want 2 (0.5, .50 and 5e-1 are one utilization)", n)
	}
}

// distinctQuery is the i-th of many distinct valid /v1/best queries, the
// kind an unauthenticated client can send without end.
func distinctQuery(i int) string {
	workloads := []string{"lora-7b", "serve-7b", "full-ft-7b", "qlora-7b"}
	modes := []string{"ondemand,spot", "monthly", "weekly,monthly", "spot", "reserved-1y,monthly,ondemand"}
	currencies := []string{"USD", "CNY", "EUR"}
	u := strconv.FormatFloat(float64(i+1)/20001, 'g', -1, 64)
	q := fmt.Sprintf("workload=%s&mode=%s&currency=%s&max_gpus=%d&utilization=%s", workloads[i%len(workloads)],
		modes[i%len(modes)], currencies[i%len(currencies)], 1+i%8, u)
	if i%2 == 1 {
		// Every other query names a card: small answers, so that the
		// entry bound is tested besides the byte bound.
		ids := normalize.DefaultCatalog().IDs()
		q += "&card=" + ids[(i/2)%len(ids)]
	}
	return q
}

// rssKB is the process's resident set (Linux; 0 elsewhere).
func rssKB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// heapMB is the live heap after a collection.
func heapMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// 6,000 distinct valid queries (3 × the entry bound) keep the answer cache within its bound
// (entries and bytes), and the heap grows by no more than the bound.
func TestBest_CacheBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("6,000 queries")
	}
	h := newHarness(t, true)
	snap := h.env.Pipeline.View().Snapshot
	heap0, rss0 := heapMB(), rssKB()
	const n = 6000 // three times MemoMaxEntries: eviction must have run
	var (
		mu         sync.Mutex
		maxEntries int
		maxBytes   int64
		wg         sync.WaitGroup
		next       atomic.Int64
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				rec := httptest.NewRecorder()
				h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/best?"+distinctQuery(i), nil))
				if rec.Code != 200 {
					t.Errorf("%s: %d %s", distinctQuery(i), rec.Code, rec.Body)
					return
				}
				e, b := snap.MemoStats()
				mu.Lock()
				maxEntries, maxBytes = max(maxEntries, e), max(maxBytes, b)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	heap1, rss1 := heapMB(), rssKB()
	entries, size := snap.MemoStats()
	t.Logf("%d distinct queries: cache %d entries, %.1f MB (peak %d, %.1f MB; bound %d, %d MB); live heap %.1f → %.1f MB (+%.1f); RSS %.1f → %.1f MB",
		n, entries, float64(size)/(1<<20), maxEntries, float64(maxBytes)/(1<<20), rank.MemoMaxEntries, rank.MemoMaxBytes>>20,
		heap0, heap1, heap1-heap0, float64(rss0)/1024, float64(rss1)/1024)
	if maxEntries > rank.MemoMaxEntries || maxBytes > rank.MemoMaxBytes {
		t.Errorf("cache peaked at %d entries, %d bytes; bound %d, %d", maxEntries, maxBytes, rank.MemoMaxEntries, rank.MemoMaxBytes)
	}
	if grown := heap1 - heap0; grown > 2*float64(rank.MemoMaxBytes>>20) {
		t.Errorf("live heap grew %.1f MB over %d queries; the cache is bounded at %d MB", grown, n, rank.MemoMaxBytes>>20)
	}
	// The cache still answers: the last query is a hit with the same bytes.
	last := "/v1/best?" + distinctQuery(n-1)
	_, a := h.get(t, last)
	e0, _ := snap.MemoStats()
	_, b := h.get(t, last)
	if e1, _ := snap.MemoStats(); e1 != e0 || !bytes.Equal(a, b) {
		t.Errorf("a repeated query is not a cache hit (%d → %d entries)", e0, e1)
	}
}
