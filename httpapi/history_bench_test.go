package httpapi_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/internal/scaletest"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
	"github.com/pricewatch/pricewatch/store"
)

// BenchmarkHistoryWeek100k serves the demo fixtures plus 100k Vast offers
// with a week of 10-minute runs each moving 1% of the prices (1008 runs)
// and times /v1/history for RTX-4090, the busiest card, over the week (the
// default range) and over a day (issue 20: at most 50 ms), from the
// stored series, next to /v1/best. It reports the bytes the stored series
// holds per run. Its setup records the 1008 runs (minutes).
func BenchmarkHistoryWeek100k(b *testing.B) {
	const runs = 1008
	h, bytesPerRun := vastRuns(b, runs)
	for _, c := range []struct{ name, target string }{
		{"best", "/v1/best?workload=lora-7b"},
		{"history-7d", "/v1/history?card=RTX-4090&workload=lora-7b&since=7d"},
		{"history-1d", "/v1/history?card=RTX-4090&workload=lora-7b&since=1d"},
		{"history-7d-1h", "/v1/history?card=RTX-4090&workload=lora-7b&since=7d&step=1h"},
	} {
		b.Run(c.name, func(b *testing.B) {
			benchGet(b, h, c.target, c.name != "best")
			b.ReportMetric(bytesPerRun, "series-bytes/run")
		})
	}
}

// vastRuns serves the demo fixtures plus 100k Vast offers (50k bundles)
// recorded at a first run and then runs times 10 minutes apart, each
// moving 1% of the prices; the clocks stand 10 minutes after the last.
// It returns the harness and the bytes the stored series grew per run.
func vastRuns(b *testing.B, runs int) (*harness, float64) {
	env := pipelinetest.New(b, nil, nil)
	env.Round(b)
	t0 := env.Now()
	cur, err := scaletest.Offers(50_000, 0, 0, t0)
	if err != nil {
		b.Fatal(err)
	}
	before, err := env.Store.BestSeriesBytes()
	if err != nil {
		b.Fatal(err)
	}
	if err := scaletest.ChangeRuns(cur, t0, runs, 0.01, func(at time.Time, offers []pricewatch.Offer) error {
		for i := range offers {
			offers[i].ObservedAt = at
		}
		_, err := env.Store.RecordRun(store.RunResult{Run: pricewatch.Run{Source: "vast", Started: at, OK: true, Offers: len(offers)}, Offers: offers})
		return err
	}); err != nil {
		b.Fatal(err)
	}
	after, err := env.Store.BestSeriesBytes()
	if err != nil {
		b.Fatal(err)
	}
	end := t0.Add(time.Duration(runs+1) * 10 * time.Minute)
	b.Cleanup(httpapi.SetNow(func() time.Time { return end }))
	env.Advance(end.Sub(env.Now()))
	if err := env.Pipeline.Rebuild(); err != nil {
		b.Fatal(err)
	}
	return newHarnessOn(b, env), float64(after-before) / float64(runs+1)
}

// benchGet times GET target; stored asks that a history answer came from
// the stored series.
func benchGet(b *testing.B, h *harness, target string, stored bool) {
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", target, rec.Code, rec.Body)
		}
		if stored && rec.Header().Get("X-Pricewatch-History") != "stored" {
			b.Fatalf("%s: answered from the %s path", target, rec.Header().Get("X-Pricewatch-History"))
		}
	}
}

// BenchmarkHistoryVsBest100k serves the demo fixtures plus 100k Vast
// offers (50k bundles) with 16 runs each moving 1% of the prices, and
// times /v1/history for RTX-4090 (the busiest card), the dashboard with
// its chart, the offer browser's first page of that card and /v1/best,
// alternating within one run so their ratio is measured side by side
// (issue 20: history and / within 20x /v1/best; issue 32: /offers within
// 20x /v1/history).
func BenchmarkHistoryVsBest100k(b *testing.B) {
	h, _ := vastRuns(b, 16)
	for _, c := range []struct{ name, target string }{
		{"best", "/v1/best?workload=lora-7b"},
		{"history", "/v1/history?card=RTX-4090&workload=lora-7b&since=1d"},
		{"dashboard", "/?workload=lora-7b&card=RTX-4090&range=24h"},
		// The offer browser's first page of the busiest card (issue 32:
		// within 20x /v1/history).
		{"offers-page", "/offers?card=RTX-4090"},
	} {
		b.Run(c.name, func(b *testing.B) { benchGet(b, h, c.target, c.name == "history") })
	}
	// The dashboard and the offer browser as the first load of each
	// minute renders them: the clock moves a minute per request, so the
	// page cache never answers.
	for _, c := range []struct{ name, target string }{
		{"dashboard-uncached", "/?workload=lora-7b&card=RTX-4090&range=24h"},
		{"offers-page-uncached", "/offers?card=RTX-4090"},
	} {
		b.Run(c.name, func(b *testing.B) {
			at := time.Now().UTC()
			defer httpapi.SetNow(func() time.Time { return at })()
			b.ReportAllocs()
			for b.Loop() {
				at = at.Add(time.Minute)
				rec := httptest.NewRecorder()
				h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.target, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
	// The dashboard as the first load after a new ranking renders it: a
	// rebuilt snapshot (not timed) holds none of the page's parts yet.
	// /v1/best and the dashboard as the first request after a new ranking
	// answers them: a rebuilt snapshot (not timed) holds none of their
	// answers yet.
	for _, c := range []struct{ name, target string }{
		{"best-new-ranking", "/v1/best?workload=lora-7b"},
		{"dashboard-new-ranking", "/?workload=lora-7b&card=RTX-4090&range=24h"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				if err := h.env.Pipeline.Rebuild(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				rec := httptest.NewRecorder()
				h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.target, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
	// 8 history requests at once, each iteration: all must answer 200
	// (4 run, 4 wait for a slot); the slowest is reported.
	b.Run("parallel8", func(b *testing.B) {
		var slowest time.Duration
		for b.Loop() {
			var wg sync.WaitGroup
			codes := make([]int, 8)
			took := make([]time.Duration, 8)
			for i := range 8 {
				wg.Go(func() {
					start := time.Now()
					rec := httptest.NewRecorder()
					h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/history?card=RTX-4090&workload=lora-7b&since=1d", nil))
					codes[i], took[i] = rec.Code, time.Since(start)
				})
			}
			wg.Wait()
			for i, c := range codes {
				if c != http.StatusOK {
					b.Fatalf("request %d of 8: status %d", i, c)
				}
				slowest = max(slowest, took[i])
			}
		}
		b.ReportMetric(slowest.Seconds()*1000, "slowest-ms")
	})
}

// discardWriter is a ResponseWriter that keeps nothing of the body, so a
// benchmark counts the handler's allocations, not a recorder's buffer; it
// counts the body's lines.
type discardWriter struct {
	h     http.Header
	code  int
	lines int
}

func (d *discardWriter) Header() http.Header { return d.h }
func (d *discardWriter) WriteHeader(c int)   { d.code = c }
func (d *discardWriter) Write(p []byte) (int, error) {
	d.lines += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

// BenchmarkExportCSV100k streams /v1/export.csv of the demo fixtures plus
// 100k Vast offers and reports the bytes allocated per row: what an
// export leaves for the collector, which lets garbage grow to the live
// heap's size before it collects (issue 20: at 1M offers an export may add
// at most 60 MB of RSS, so at most about 60 bytes a row).
func BenchmarkExportCSV100k(b *testing.B) {
	var body bytes.Buffer
	if err := scaletest.WriteBundles(&body, 50_000, 0, 0); err != nil {
		b.Fatal(err)
	}
	fx := fixtures.Handler(fixtures.FS())
	env := pipelinetest.New(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, "/api/v0/bundles") {
			fx.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body.Bytes())
	}), func(c *config.Config) {
		s := c.Sources["vast"]
		s.Settings.MaxBodyMB, s.Settings.Timeout = 512, 10*time.Minute
		c.Sources["vast"] = s
	})
	env.Round(b)
	h := newHarnessOn(b, env)
	var ms0, ms1 runtime.MemStats
	var alloc uint64
	var rows int
	for b.Loop() {
		w := &discardWriter{h: http.Header{}}
		runtime.ReadMemStats(&ms0)
		h.srv.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v1/export.csv", nil))
		runtime.ReadMemStats(&ms1)
		if w.code != http.StatusOK {
			b.Fatalf("status %d", w.code)
		}
		alloc += ms1.TotalAlloc - ms0.TotalAlloc
		rows += w.lines - 1 // the header
	}
	b.ReportMetric(float64(alloc)/float64(rows), "alloc-B/row")
	b.ReportMetric(float64(rows)/float64(b.N), "rows")
}
