package store_test

import (
	"bufio"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/internal/scaletest"
	"github.com/pricewatch/pricewatch/store"
)

// wchar is the bytes this process has passed to write calls so far
// (/proc/self/io), -1 where there is no such file.
func wchar() int64 {
	f, err := os.Open("/proc/self/io")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "wchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return -1
}

func vastRun(at time.Time, offers []pricewatch.Offer) store.RunResult {
	return store.RunResult{Run: pricewatch.Run{Source: "vast", Started: at, OK: true, Offers: len(offers)}, Offers: offers}
}

func openBench(b *testing.B, path string) *store.Store {
	b.Helper()
	st, err := store.Open(path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkScale100k measures the store at 100k offers (50k Vast bundles
// in the real card mix, on-demand and spot): the first write of them all
// (time, bytes allocated, file size against the data it holds), an
// unchanged re-scrape (time, bytes written) and runs where 1% of the
// prices move (bytes of file per stored change). scripts/bench-scale runs
// it; the figures are reported as metrics.
func BenchmarkScale100k(b *testing.B) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	base, err := scaletest.Offers(50_000, 0, 0, t0)
	if err != nil {
		b.Fatal(err)
	}
	copyOf := func() []pricewatch.Offer { return append([]pricewatch.Offer(nil), base...) }
	b.Run("FirstWrite", func(b *testing.B) {
		var ms0, ms1 runtime.MemStats
		var sz store.Sizes
		var alloc uint64
		i := 0
		for b.Loop() {
			b.StopTimer()
			path := filepath.Join(b.TempDir(), strconv.Itoa(i)+".db")
			i++
			st := openBench(b, path)
			offers := copyOf()
			runtime.GC()
			runtime.ReadMemStats(&ms0)
			b.StartTimer()
			if _, err := st.RecordRun(vastRun(t0, offers)); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			runtime.ReadMemStats(&ms1)
			alloc += ms1.TotalAlloc - ms0.TotalAlloc
			if sz, err = st.Sizes(); err != nil {
				b.Fatal(err)
			}
			st.Close()
			b.StartTimer()
		}
		b.ReportMetric(float64(alloc)/float64(b.N)/1e6, "alloc-MB/op")
		b.ReportMetric(float64(sz.File)/1e6, "file-MB")
		b.ReportMetric(float64(sz.Data)/1e6, "data-MB")
		b.ReportMetric(float64(sz.File)/float64(sz.Data), "file/data")
		b.ReportMetric(float64(len(base)), "offers")
	})
	b.Run("RescrapeUnchanged", func(b *testing.B) {
		st := openBench(b, filepath.Join(b.TempDir(), "pw.db"))
		defer st.Close()
		if _, err := st.RecordRun(vastRun(t0, copyOf())); err != nil {
			b.Fatal(err)
		}
		fi0, _ := os.Stat(st.Path())
		offers := copyOf()
		var written int64
		i := 0
		for b.Loop() {
			i++
			w0 := wchar()
			run, err := st.RecordRun(vastRun(t0.Add(time.Duration(i)*10*time.Minute), offers))
			if err != nil {
				b.Fatal(err)
			}
			written += wchar() - w0
			if run.Changes != 0 {
				b.Fatalf("%d changes in an unchanged re-scrape", run.Changes)
			}
		}
		fi1, _ := os.Stat(st.Path())
		b.ReportMetric(float64(written)/float64(b.N), "written-B/op")
		b.ReportMetric(float64(fi1.Size()-fi0.Size())/float64(b.N), "file-growth-B/op")
	})
	b.Run("ChangeBytes", func(b *testing.B) {
		// After 10 runs of warm-up, 50 runs that each move the prices of
		// 1% of the offers: the keys and values per stored change, and the
		// file's growth (coarse: the history pages the warm-up split take
		// these 50 runs' rows without growing the file; ChangeFile gives
		// the file per change over days, Year10k with
		// PRICEWATCH_BENCH_DAYS=20 over 20 days).
		const warm, runs = 10, 50
		var perChange, dataPerChange float64
		for b.Loop() {
			b.StopTimer()
			st := openBench(b, filepath.Join(b.TempDir(), "pw.db"))
			cur := copyOf()
			if _, err := st.RecordRun(vastRun(t0, cur)); err != nil {
				b.Fatal(err)
			}
			r := rand.New(rand.NewPCG(7, 8))
			var sz0 store.Sizes
			changes := 0
			for v := range warm + runs {
				if v == warm {
					sz0, _ = st.Sizes()
					changes = 0
					b.StartTimer()
				}
				for range len(cur) / 100 {
					o := &cur[r.IntN(len(cur))]
					o.PricePerGPUHour *= 0.9 + 0.2*r.Float64()
				}
				run, err := st.RecordRun(vastRun(t0.Add(time.Duration(v+1)*10*time.Minute), cur))
				if err != nil {
					b.Fatal(err)
				}
				changes += run.Changes
			}
			b.StopTimer()
			sz1, _ := st.Sizes()
			st.Close()
			perChange = float64(sz1.File-sz0.File) / float64(changes)
			dataPerChange = float64(sz1.Data-sz0.Data) / float64(changes)
			b.StartTimer()
		}
		b.ReportMetric(perChange, "file-B/change")
		b.ReportMetric(dataPerChange, "data-B/change")
	})
}

// BenchmarkYear10k scrapes 10k offers every 10 minutes for a year (52,560
// runs) with 1% of the prices moving per run, compacting daily with the
// default 90-day raw window, and reports the file size (the target is
// ≤ 200 MB). It takes minutes: scripts/bench-scale runs it with
// -benchtime 1x.
func BenchmarkYear10k(b *testing.B) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	base, err := scaletest.Offers(5_000, 0, 0, t0)
	if err != nil {
		b.Fatal(err)
	}
	days := 365
	if d, err := strconv.Atoi(os.Getenv("PRICEWATCH_BENCH_DAYS")); err == nil && d > 0 {
		days = d
	}
	var size, changes float64
	for b.Loop() {
		path := filepath.Join(b.TempDir(), "pw.db")
		st, err := store.Open(path, store.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		cur := append([]pricewatch.Offer(nil), base...)
		r := rand.New(rand.NewPCG(9, 10))
		n := 0
		for run := range days * 144 {
			at := t0.Add(time.Duration(run) * 10 * time.Minute)
			if run > 0 {
				for range len(cur) / 100 {
					o := &cur[r.IntN(len(cur))]
					o.PricePerGPUHour *= 0.9 + 0.2*r.Float64()
				}
			}
			res, err := st.RecordRun(vastRun(at, cur))
			if err != nil {
				b.Fatal(err)
			}
			n += res.Changes
			if run%144 == 143 {
				if _, err := st.Compact(at, store.DefaultRawWindow); err != nil {
					b.Fatal(err)
				}
			}
		}
		sz, _ := st.Sizes()
		st.Close()
		size, changes = float64(sz.File), float64(n)
	}
	b.ReportMetric(size/1e6, "file-MB")
	b.ReportMetric(changes, "changes")
	b.ReportMetric(float64(days), "days")
}

// BenchmarkChangeFile is the bytes of file a stored price change costs,
// at 10k and 100k offers (5k and 50k Vast bundles): a first scrape, then
// PRICEWATCH_BENCH_CHANGE_DAYS (default 2) days of 10-minute runs that
// each move the prices of 1% of the offers. It reports the file's growth
// after the first scrape per change (file-B/change), and that of the last
// day alone (last-day-B/change); the file's free pages at the end
// (free-MB); and the keys and values per change (data-B/change).
//
// Where a change's bytes go (100k offers, 877 changes a run): a history
// row is 22 bytes of key and value, the change index 4 more, and bbolt
// adds 16 bytes of element header and the page space random inserts
// leave (pages about 60-70% full), so the file grows 40-60 bytes a change
// once it has settled. Before that it grows by a fixed amount, about 10
// MB at 100k: bbolt copies every page a run modifies and keeps the pages
// the last run freed as free space for the next (a run rewrites the page
// of each changed offer's record and most history pages: 1.6k pages, 7
// MB), and the first run after the first scrape splits most history
// pages, which that scrape wrote full. Per change that is 9.9 KB after
// one run, 750 B after 16 and 145 B after a day, the same at 10k and
// 100k for the same number of runs: a figure over a short window is
// mostly that fixed part.
func BenchmarkChangeFile(b *testing.B) {
	days := 2
	if d, err := strconv.Atoi(os.Getenv("PRICEWATCH_BENCH_CHANGE_DAYS")); err == nil && d > 0 {
		days = d
	}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name    string
		bundles int
	}{{"10k", 5_000}, {"100k", 50_000}} {
		b.Run(c.name, func(b *testing.B) {
			base, err := scaletest.Offers(c.bundles, 0, 0, t0)
			if err != nil {
				b.Fatal(err)
			}
			var first, dayStart, end store.Sizes
			var changes, lastDay int
			for b.Loop() {
				st, err := store.Open(filepath.Join(b.TempDir(), "pw.db"), store.Options{NoSync: true})
				if err != nil {
					b.Fatal(err)
				}
				cur := append([]pricewatch.Offer(nil), base...)
				if _, err := st.RecordRun(vastRun(t0, cur)); err != nil {
					b.Fatal(err)
				}
				first, _ = st.Sizes()
				r := rand.New(rand.NewPCG(7, 8))
				changes, lastDay = 0, 0
				runs := days * 144
				for v := range runs {
					if v == runs-144 {
						dayStart, _ = st.Sizes()
						lastDay = 0
					}
					for range len(cur) / 100 {
						o := &cur[r.IntN(len(cur))]
						o.PricePerGPUHour *= 0.9 + 0.2*r.Float64()
					}
					run, err := st.RecordRun(vastRun(t0.Add(time.Duration(v+1)*10*time.Minute), cur))
					if err != nil {
						b.Fatal(err)
					}
					changes += run.Changes
					lastDay += run.Changes
				}
				end, _ = st.Sizes()
				st.Close()
			}
			b.ReportMetric(float64(end.File-first.File)/float64(changes), "file-B/change")
			b.ReportMetric(float64(end.File-dayStart.File)/float64(lastDay), "last-day-B/change")
			b.ReportMetric(float64(end.Free)/1e6, "free-MB")
			b.ReportMetric(float64(end.Data-first.Data)/float64(changes), "data-B/change")
			b.ReportMetric(float64(first.File)/1e6, "first-file-MB")
			b.ReportMetric(float64(changes), "changes")
			b.ReportMetric(float64(days), "days")
		})
	}
}
