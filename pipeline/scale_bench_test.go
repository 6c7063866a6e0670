package pipeline_test

import (
	"bytes"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/internal/scaletest"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
)

// BenchmarkVastRun100k is one run of a 100k-offer source end to end, as
// the daemon does it every ten minutes: Vast's answer of 50k bundles (the
// real format, 117 MB) fetched from a loopback server through the
// collector, decoded, normalized, judged by the gate, recorded in the
// store, and the ranking rebuilt (Refresh: the snapshot and the alert
// evaluation). The answers alternate between two variants 1% of whose
// bundles differ, so each run stores ~1% changes, as a market moves. The
// source's politeness delay is set to 0: it is a pause, not work.
//
//	go test ./pipeline -run '^$' -bench VastRun100k -benchtime 5x
func BenchmarkVastRun100k(b *testing.B) {
	const bundles = 50_000
	var bodies [2][]byte
	for v := range bodies {
		var buf bytes.Buffer
		if err := scaletest.WriteBundles(&buf, bundles, v, 0.01); err != nil {
			b.Fatal(err)
		}
		bodies[v] = buf.Bytes()
	}
	var served atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		body := bodies[served.Add(1)%2]
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
	env := pipelinetest.New(b, h, func(c *config.Config) {
		for name, s := range c.Sources {
			s.Settings.Enabled = name == "vast"
			c.Sources[name] = s
		}
		s := c.Sources["vast"]
		s.Settings.Delay = 0
		s.Settings.MaxBodyMB = 512
		s.Settings.Timeout = 10 * time.Minute
		c.Sources["vast"] = s
	})
	run := func() {
		sums := env.Pipeline.RunAll(b.Context(), []string{"vast"})
		if err := sums[0].Err; err != nil {
			b.Fatal(err)
		}
		// The fixture's bundles give 1.77 offers each (88,320 of 50k: not
		// every bundle has a spot offer); fewer means a cut parse.
		if sums[0].Offers < bundles*17/10 || sums[0].Held != "" {
			b.Fatalf("run: %+v", sums[0])
		}
		if err := env.Pipeline.Refresh(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
	// The first run writes every offer; the timed ones are the daemon's
	// steady state.
	run()
	run()
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		run()
	}
	b.ReportMetric(float64(env.Pipeline.View().Snapshot.OfferCount()), "offers")
}
