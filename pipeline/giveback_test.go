package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/internal/scaletest"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
	"github.com/pricewatch/pricewatch/scrapers"
)

// Issue 32: a big run that fails hands its memory back as a good one does.
// Vast answers 1,500 bundles (about 3.5 MB) under a 1 MB body cap: the run
// parses up to the cap and fails on it, and the refresh after it forces a
// collection and returns the pages (debug.FreeOSMemory, counted by the
// runtime's NumForcedGC), here with the threshold lowered to 1 MB. A
// small failed run (a 12-byte answer that is not JSON) does not. Before,
// only a run with 20k offers gave back: a 1M run cut by its cap held
// 1.1 GB for minutes, 135 MB at 100k in `benchscale giveback`.
func TestFailedBigRun_GivesMemoryBack(t *testing.T) {
	defer pipeline.SetBigBody(1 << 20)()
	var big bytes.Buffer
	if err := scaletest.WriteBundles(&big, 1500, 0, 0); err != nil {
		t.Fatal(err)
	}
	if big.Len() < 2<<20 {
		t.Fatalf("answer of %d bytes, want one well over the 1 MB cap", big.Len())
	}
	body := big.Bytes()
	fx := fixtures.Handler(fixtures.FS())
	env := pipelinetest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, "/api/v0/bundles") {
			fx.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}), func(c *config.Config) {
		s := c.Sources["vast"]
		s.Settings.MaxBodyMB, s.Settings.Retries = 1, 0
		c.Sources["vast"] = s
	})
	forced := func() uint32 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.NumForcedGC
	}
	ctx := context.Background()
	run := func() (error, uint32) {
		t.Helper()
		n0 := forced()
		sum := env.Pipeline.RunSource(ctx, "vast")
		if err := env.Pipeline.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		return sum.Err, forced() - n0
	}
	if err, n := run(); !errors.Is(err, scrapers.ErrTooLarge) || n == 0 {
		t.Errorf("failed big run: err %v, %d forced collections after it, want the cap's error and a give-back", err, n)
	}
	body = []byte("not json 404")
	if err, n := run(); err == nil || n != 0 {
		t.Errorf("failed small run: err %v, %d forced collections after it, want an error and none", err, n)
	}
}

// A big good run's give-back leaves no garbage behind either: bbolt keeps
// the single pages its write allocated in a sync.Pool, which one
// collection only moves to the pool's victim cache. After the refresh
// that follows the run (4,000 bundles, 7k offers; threshold lowered to
// 1 MB), the heap in use is about the live heap: two more collections
// free under 8 MB (3.8 MB here, which a third collection in the give-back
// does not free: not pooled). Before, with one collection, they freed
// 33 MB, the write's pages among them (at 1M offers 400 MB: 650 MB of RSS
// for a live heap of 200 MB).
func TestGoodBigRun_GivesThePagePoolBack(t *testing.T) {
	defer pipeline.SetBigBody(1 << 20)()
	var big bytes.Buffer
	if err := scaletest.WriteBundles(&big, 4000, 0, 0); err != nil {
		t.Fatal(err)
	}
	fx := fixtures.Handler(fixtures.FS())
	env := pipelinetest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, "/api/v0/bundles") {
			fx.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(big.Bytes())
	}), func(c *config.Config) {
		s := c.Sources["vast"]
		s.Settings.MaxBodyMB = 64
		c.Sources["vast"] = s
	})
	ctx := context.Background()
	if sum := env.Pipeline.RunSource(ctx, "vast"); sum.Err != nil || sum.Offers < 2000 {
		t.Fatalf("vast: %d offers, %v", sum.Offers, sum.Err)
	}
	if err := env.Pipeline.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	inUse := func() uint64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	after := inUse()
	runtime.GC()
	runtime.GC()
	freed := int64(after) - int64(inUse())
	t.Logf("%d KB freed by two more collections", freed>>10)
	if freed > 8<<20 {
		t.Errorf("%d KB of heap freed by two collections after the give-back, want under 8 MB", freed>>10)
	}
}
