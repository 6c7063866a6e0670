package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// BenchmarkBest compares /v1/best with a bare net/http handler that writes
// the same bytes, in process and over loopback HTTP. The ratio of the two is
// the cost pricewatch adds per query (validation, cache lookup, metrics).
func BenchmarkBest(b *testing.B) {
	h := newHarness(b, true)
	const target = "/v1/best?workload=lora-7b&currency=CNY"
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	if rec.Code != 200 {
		b.Fatalf("status %d", rec.Code)
	}
	body := rec.Body.Bytes()
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	})
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"pricewatch", h.srv}, {"bare", bare}} {
		b.Run("inproc/"+c.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, target, nil)
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				c.h.ServeHTTP(w, req)
			}
		})
		b.Run("loopback/"+c.name, func(b *testing.B) {
			srv := httptest.NewServer(c.h)
			defer srv.Close()
			client := srv.Client()
			b.ReportAllocs()
			for b.Loop() {
				res, err := client.Get(srv.URL + target)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		})
	}
}
