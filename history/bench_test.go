package history_test

import (
	"context"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/history"
	"github.com/pricewatch/pricewatch/internal/scaletest"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// BenchmarkHistory100k reads RTX-4090's lora-7b series (the busiest card
// of the Vast mix) from a store holding 100k offers (50k bundles) and 16
// runs each moving 1% of the prices: the /v1/history work without HTTP.
// Load is the store read, Series the pricing of its points.
func BenchmarkHistory100k(b *testing.B) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	cur, err := scaletest.Offers(50_000, 0, 0, t0)
	if err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(filepath.Join(b.TempDir(), "pw.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := scaletest.ChangeRuns(cur, t0, 16, 0.01, func(at time.Time, offers []pricewatch.Offer) error {
		_, err := st.RecordRun(store.RunResult{Run: pricewatch.Run{Source: "vast", Started: at, OK: true, Offers: len(offers)}, Offers: offers})
		return err
	}); err != nil {
		b.Fatal(err)
	}
	w, _ := rank.WorkloadByName("lora-7b")
	f := history.Filter{Card: "RTX-4090"}
	until := t0.Add(24 * time.Hour)
	in := func(rows map[string][]store.HistoryRow, terms map[string]pricewatch.Offer) history.Input {
		return history.Input{Filter: f, Rows: rows, Terms: terms, Workload: &w, Catalog: normalize.DefaultCatalog(),
			Profile: func(c string) (rank.Profile, bool) {
				return rank.Profile{Card: c, TokensPerSecond: 1000, Origin: rank.OriginMeasured}, true
			},
			Convert: func(v float64, _ string) (float64, bool) { return v, true }, Since: t0, Until: until}
	}
	b.Run("LoadAndSeries", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rows, terms, err := history.Load(context.Background(), st, history.Current{Offers: slices.Values(cur)}, f, t0)
			if err != nil {
				b.Fatal(err)
			}
			if pts := history.Series(in(rows, terms)); len(pts) != 17 {
				b.Fatalf("%d points", len(pts))
			}
		}
	})
	rows, terms, err := history.Load(context.Background(), st, history.Current{Offers: slices.Values(cur)}, f, t0)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(rows)), "keys")
	b.Run("Series", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			history.Series(in(rows, terms))
		}
	})
}

// BenchmarkTracker100k loads 100k Vast offers into a tracker of the four
// built-in workloads (what the daemon holds in memory for the stored
// series) and applies runs moving 1% of the prices: it reports the heap
// the tracker keeps and the time per run.
func BenchmarkTracker100k(b *testing.B) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	cur, err := scaletest.Offers(50_000, 0, 0, t0)
	if err != nil {
		b.Fatal(err)
	}
	ws := rank.BuiltinWorkloads()
	profiles := rank.SeedProfiles(normalize.DefaultCatalog(), ws)
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	tr := history.NewTracker(ws, normalize.DefaultCatalog())
	// Offer i has id i+1, as a store would give them.
	keyOf := func(id uint32) string { return cur[id-1].Key }
	tr.Reset(func(yield func(uint32, *pricewatch.Offer) bool) {
		for i := range cur {
			if !yield(uint32(i+1), &cur[i]) {
				return
			}
		}
	}, profiles, keyOf)
	runtime.GC()
	runtime.ReadMemStats(&ms1)
	written := make([]store.Written, len(cur)/100)
	for b.Loop() {
		for i := range written {
			j := (i * 97) % len(cur)
			o := &cur[j]
			o.PricePerGPUHour *= 1.01
			written[i] = store.Written{Offer: o, Event: store.Changed, ID: uint32(j + 1)}
		}
		tr.Apply(written, profiles, keyOf)
		tr.Points(t0, false, keyOf)
	}
	b.ReportMetric(float64(ms1.HeapAlloc-ms0.HeapAlloc)/(1<<20), "tracker-MiB")
	runtime.KeepAlive(tr)
}
