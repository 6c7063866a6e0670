// Command benchscale is the Go side of scripts/bench-scale: it builds the
// 100k-offer fixture folder, loads HTTP endpoints, serves a bare handler
// to compare with, measures a small source's run in a pipeline over the
// 100k database, reports a database's size against its data, and records
// a history of runs that move a share of the Vast prices each.
//
//	benchscale genfixtures -out DIR [-bundles 50000]
//	benchscale load -url URL [-duration 5s] [-c 4]
//	benchscale bare -body FILE -addr HOST:PORT
//	benchscale smallrun -db FILE -fixtures DIR -config FILE -source NAME
//	benchscale sizes -db FILE
//	benchscale changeruns -db FILE -fixtures DIR -config FILE [-runs 16] [-change 0.01]
//	benchscale giveback -db FILE -fixtures DIR -config FILE [-wait 10s]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/internal/scaletest"
	"github.com/pricewatch/pricewatch/pipeline"
	_ "github.com/pricewatch/pricewatch/scrapers/all"
	"github.com/pricewatch/pricewatch/store"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchscale genfixtures|load|bare|smallrun|sizes|changeruns|giveback [flags]")
		os.Exit(2)
	}
	var err error
	args := os.Args[2:]
	switch os.Args[1] {
	case "genfixtures":
		err = genFixtures(args)
	case "load":
		err = load(args)
	case "bare":
		err = bare(args)
	case "smallrun":
		err = smallRun(args)
	case "sizes":
		err = sizes(args)
	case "changeruns":
		err = changeRuns(args)
	case "giveback":
		err = giveBack(args)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchscale:", err)
		os.Exit(1)
	}
}

// genFixtures copies the embedded fixtures into a folder and replaces the
// Vast answer with one of n bundles in the real format.
func genFixtures(args []string) error {
	fl := flag.NewFlagSet("genfixtures", flag.ExitOnError)
	out := fl.String("out", "", "folder to write")
	n := fl.Int("bundles", 50_000, "Vast bundles (each an on-demand and a spot offer)")
	fl.Parse(args)
	if *out == "" {
		return fmt.Errorf("-out is required")
	}
	if err := os.CopyFS(*out, fixtures.FS()); err != nil {
		return err
	}
	path := filepath.Join(*out, "vast", "bundles.json")
	os.Chmod(path, 0o644)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := scaletest.WriteBundles(f, *n, 0, 0); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fi, _ := os.Stat(path)
	fmt.Printf("%s: %d bundles, %.0f MB\n", path, *n, float64(fi.Size())/1e6)
	return nil
}

// load requests a URL from c keep-alive clients for a while and prints
// the rate and latency percentiles as JSON.
func load(args []string) error {
	fl := flag.NewFlagSet("load", flag.ExitOnError)
	u := fl.String("url", "", "URL to GET")
	d := fl.Duration("duration", 5*time.Second, "how long")
	c := fl.Int("c", 4, "concurrent clients")
	fl.Parse(args)
	tr := &http.Transport{MaxIdleConnsPerHost: *c}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var mu sync.Mutex
	var lat []time.Duration
	errs := 0
	end := time.Now().Add(*d)
	var wg sync.WaitGroup
	for range *c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			bad := 0
			for time.Now().Before(end) {
				t := time.Now()
				res, err := client.Get(*u)
				if err != nil {
					bad++
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					bad++
					continue
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			lat = append(lat, mine...)
			errs += bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"url": *u, "requests": len(lat), "errors": errs, "rps": float64(len(lat)) / d.Seconds(),
		"p50_ms": pct(0.5), "p99_ms": pct(0.99),
	})
}

// bare serves a file's bytes as JSON, with nothing else.
func bare(args []string) error {
	fl := flag.NewFlagSet("bare", flag.ExitOnError)
	bodyFile := fl.String("body", "", "file to serve")
	addr := fl.String("addr", "127.0.0.1:0", "listen address")
	fl.Parse(args)
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		return err
	}
	return http.ListenAndServe(*addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	}))
}

// smallRun opens the database the 100k scrape wrote, builds the daemon's
// pipeline over the fixture folder, and times what the daemon does: the
// start-up read of every offer and the first ranking, then a run of one
// small source and the refresh after it (re-ranking only that source).
// fixturePipeline is a pipeline over the database db with its sources
// pointed at the fixture folder fx served on loopback (now: its clock, nil
// for the real one); done closes what it opened.
func fixturePipeline(db, fx, cfgPath string, now func() time.Time) (*pipeline.Pipeline, func(), error) {
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return nil, nil, err
	}
	srv, err := fixtures.Start(fixtures.Handler(os.DirFS(fx)))
	if err != nil {
		return nil, nil, err
	}
	cfg.PointAt(fixtures.URLs(srv.URL), fixtures.Bases(srv.URL))
	cfg.DB = db
	st, err := store.Open(db, store.Options{})
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	done := func() { st.Close(); srv.Close() }
	p, err := pipeline.New(cfg, st, pipeline.Options{Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry(),
		Getenv: func(string) string { return "demo" }, Now: now})
	if err != nil {
		done()
		return nil, nil, err
	}
	return p, done, nil
}

func smallRun(args []string) error {
	fl := flag.NewFlagSet("smallrun", flag.ExitOnError)
	db := fl.String("db", "", "database")
	fx := fl.String("fixtures", "", "fixture folder")
	cfgPath := fl.String("config", "", "config file")
	source := fl.String("source", "matpool", "the small source")
	n := fl.Int("n", 9, "timed runs (the median is reported)")
	prof := fl.String("cpuprofile", "", "write a CPU profile of the timed runs")
	initProf := fl.String("initprofile", "", "write a CPU profile of the start-up read and ranking")
	fl.Parse(args)
	p, done, err := fixturePipeline(*db, *fx, *cfgPath, nil)
	if err != nil {
		return err
	}
	defer done()
	alloc := func() uint64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.TotalAlloc
	}
	if *initProf != "" {
		f, err := os.Create(*initProf)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	a0, t0 := alloc(), time.Now()
	if err := p.Init(); err != nil {
		return err
	}
	if *initProf != "" {
		pprof.StopCPUProfile()
	}
	initDur, initAlloc := time.Since(t0), alloc()-a0
	offers := p.View().Snapshot.OfferCount()
	ctx := context.Background()
	// Warm the small source once (its first run against this database
	// may bring real changes), then time a second one.
	p.RunSource(ctx, *source)
	if err := p.Refresh(ctx); err != nil {
		return err
	}
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			return err
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	type timing struct {
		run, refresh, total time.Duration
		alloc               uint64
	}
	var ts []timing
	var sum pipeline.Summary
	for range max(*n, 1) {
		runtime.GC()
		a0, t0 = alloc(), time.Now()
		sum = p.RunSource(ctx, *source)
		runDur := time.Since(t0)
		t1 := time.Now()
		if err := p.Refresh(ctx); err != nil {
			return err
		}
		ts = append(ts, timing{runDur, time.Since(t1), time.Since(t0), alloc() - a0})
		if sum.Err != nil {
			return sum.Err
		}
	}
	slices.SortFunc(ts, func(a, b timing) int { return int(a.total - b.total) })
	med := ts[len(ts)/2]
	runDur, refreshDur, total, totalAlloc := med.run, med.refresh, med.total, med.alloc
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"offers": offers, "source": *source, "source_offers": sum.Offers,
		"init_ms": ms(initDur), "init_alloc_mb": float64(initAlloc) / 1e6,
		"run_ms": ms(runDur), "refresh_ms": ms(refreshDur), "total_ms": ms(total), "total_alloc_mb": float64(totalAlloc) / 1e6,
	})
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// sizes prints a database's file size against the data it holds.
func sizes(args []string) error {
	fl := flag.NewFlagSet("sizes", flag.ExitOnError)
	db := fl.String("db", "", "database")
	fl.Parse(args)
	st, err := store.Open(*db, store.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer st.Close()
	sz, err := st.Sizes()
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"file_mb": float64(sz.File) / 1e6, "data_mb": float64(sz.Data) / 1e6,
		"ratio": float64(sz.File) / float64(sz.Data)})
}

// changeRuns writes a new database holding what httpapi's vastRuns builds
// for BenchmarkHistoryVsBest100k: the demo sources' first runs, then the
// Vast offers of the fixture folder's bundles at a first run and at runs
// later runs, 10 minutes apart, each moving change of the prices
// (scaletest.ChangeRuns); the last run ends 10 minutes before now, so a
// history over the last day reads all of them.
//
// The database cannot be the one `pricewatch scrape` wrote: its runs stand
// at the wall clock, and the store keeps a run that started before the
// last applied one out of the offers (superseded), while runs after now
// would fall outside a range that ends now. So the clock of this
// database's pipeline starts (runs+1)×10 minutes back.
//
// The runs are recorded in reverse order of ChangeRuns' states (the
// moves are the same, 1% of the offers between neighbours): the last run
// stored is the fixture's own prices, so the daemon's first scrape of
// the fixtures at serve is an unchanged re-scrape, not a 17th run moving
// every price the 16 moved.
func changeRuns(args []string) error {
	fl := flag.NewFlagSet("changeruns", flag.ExitOnError)
	db := fl.String("db", "", "database to create")
	fx := fl.String("fixtures", "", "fixture folder (genfixtures)")
	cfgPath := fl.String("config", "", "config file")
	runs := fl.Int("runs", 16, "runs after the first")
	share := fl.Float64("change", 0.01, "share of the offers each run moves")
	bundles := fl.Int("bundles", 50_000, "the Vast bundles of the fixture folder")
	fl.Parse(args)
	if *db == "" || *fx == "" {
		return fmt.Errorf("-db and -fixtures are required")
	}
	if _, err := os.Stat(*db); err == nil {
		return fmt.Errorf("%s exists: changeruns writes a new database (see its comment)", *db)
	}
	t0 := time.Now().UTC().Add(-time.Duration(*runs+1) * 10 * time.Minute).Truncate(time.Second)
	p, done, err := fixturePipeline(*db, *fx, *cfgPath, func() time.Time { return t0 })
	if err != nil {
		return err
	}
	defer done()
	// Init installs the stored best series' tracker, which RecordRun
	// feeds; the demo sources' first runs start the history.
	if err := p.Init(); err != nil {
		return err
	}
	ctx := context.Background()
	for _, name := range p.Enabled() {
		if name == "vast" {
			continue
		}
		if sum := p.RunSource(ctx, name); sum.Err != nil {
			return fmt.Errorf("first run of %s: %w", name, sum.Err)
		}
	}
	offers, err := scaletest.Offers(*bundles, 0, 0, t0)
	if err != nil {
		return err
	}
	var states [][]float64
	if err := scaletest.ChangeRuns(offers, t0, *runs, *share, func(_ time.Time, offers []pricewatch.Offer) error {
		prices := make([]float64, len(offers))
		for i := range offers {
			prices[i] = offers[i].PricePerGPUHour
		}
		states = append(states, prices)
		return nil
	}); err != nil {
		return err
	}
	var changes []int
	for k := range states {
		prices, at := states[len(states)-1-k], t0.Add(time.Duration(k)*10*time.Minute)
		for i := range offers {
			offers[i].PricePerGPUHour, offers[i].ObservedAt = prices[i], at
		}
		run, err := p.Store().RecordRun(store.RunResult{Run: pricewatch.Run{Source: "vast", Started: at, OK: true, Offers: len(offers)}, Offers: offers})
		if err != nil {
			return fmt.Errorf("record run %d: %w", k, err)
		}
		if run.Held != "" {
			return fmt.Errorf("run %d at %s held (%s): %s", k, at, run.Held, run.Reason)
		}
		changes = append(changes, run.Changes)
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"offers": len(offers), "runs": len(states),
		"first": t0, "last": t0.Add(time.Duration(*runs) * 10 * time.Minute), "changes": changes})
}

// giveBack runs the fixture folder's Vast answer twice in one daemon
// pipeline over a new database, as cron would (the run, then the
// refresh): first with a body cap below the answer's size, so the run
// parses most of it and fails on the cap, then with the configured cap,
// so it succeeds. After each it samples the process's RSS and the Go
// heap the process holds from the system (in use, and mapped but not
// returned) until wait has passed, and prints both side by side as JSON:
// memory must be given back after a failed big run as after a good one.
func giveBack(args []string) error {
	fl := flag.NewFlagSet("giveback", flag.ExitOnError)
	db := fl.String("db", "", "database to create")
	fx := fl.String("fixtures", "", "fixture folder (genfixtures)")
	cfgPath := fl.String("config", "", "config file (its Vast cap must fit the answer)")
	wait := fl.Duration("wait", 10*time.Second, "how long to sample after each run")
	heapProf := fl.String("heapprofile", "", "write the heap profile after the good run's refresh (as of its last collection)")
	fl.Parse(args)
	if *db == "" || *fx == "" {
		return fmt.Errorf("-db and -fixtures are required")
	}
	if _, err := os.Stat(*db); err == nil {
		return fmt.Errorf("%s exists: giveback writes a new database", *db)
	}
	fi, err := os.Stat(filepath.Join(*fx, "vast", "bundles.json"))
	if err != nil {
		return err
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	srv, err := fixtures.Start(fixtures.Handler(os.DirFS(*fx)))
	if err != nil {
		return err
	}
	defer srv.Close()
	cfg.PointAt(fixtures.URLs(srv.URL), fixtures.Bases(srv.URL))
	cfg.DB = *db
	st, err := store.Open(*db, store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	p, err := pipeline.New(cfg, st, pipeline.Options{Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry(),
		Getenv: func(string) string { return "demo" }})
	if err != nil {
		return err
	}
	if err := p.Init(); err != nil {
		return err
	}
	vast := cfg.Sources["vast"]
	good := vast.Settings.MaxBodyMB
	// The failed run's cap: nine tenths of the answer, so the run has
	// parsed most of it when the cap stops it.
	failCap := max(1, int(fi.Size()*9/10)>>20)
	type sample struct {
		S          float64 `json:"s"`
		RSSMB      float64 `json:"rss_mb"`
		HeapInUse  float64 `json:"heap_inuse_mb"`
		HeapMapped float64 `json:"heap_mapped_mb"` // heap spans not returned to the system
	}
	type result struct {
		Run      string   `json:"run"`
		CapMB    int      `json:"cap_mb"`
		Offers   int      `json:"offers"`
		Err      string   `json:"err,omitempty"`
		PeakMB   float64  `json:"peak_rss_mb"`
		Samples  []sample `json:"samples"`
		AfterMB  float64  `json:"rss_after_mb"` // the last sample
		BeforeMB float64  `json:"rss_before_mb"`
		// LiveMB is the heap in use after a collection forced at the
		// end: what the process must keep (the rest of the last sample's
		// heap in use was garbage no collection had freed yet).
		LiveMB float64 `json:"live_heap_mb"`
		// ForcedGCs counts the collections forced during the run and its
		// refresh (the give-back is one).
		ForcedGCs uint32 `json:"forced_gcs"`
	}
	take := func(t0 time.Time) sample {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return sample{S: time.Since(t0).Seconds(), RSSMB: procKB("VmRSS") / 1024, HeapInUse: float64(ms.HeapInuse) / (1 << 20),
			HeapMapped: float64(ms.HeapSys-ms.HeapReleased) / (1 << 20)}
	}
	ctx := context.Background()
	var out []result
	for _, c := range []struct {
		name string
		cap  int
	}{{"failed (body cap hit)", failCap}, {"good", good}} {
		vast.Settings.MaxBodyMB = c.cap
		cfg.Sources["vast"] = vast
		r := result{Run: c.name, CapMB: c.cap, BeforeMB: procKB("VmRSS") / 1024}
		os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // VmHWM from here on
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		forced := ms.NumForcedGC
		sum := p.RunSource(ctx, "vast")
		if err := p.Refresh(ctx); err != nil {
			return err
		}
		runtime.ReadMemStats(&ms)
		r.ForcedGCs = ms.NumForcedGC - forced
		if *heapProf != "" && c.cap == good {
			f, err := os.Create(*heapProf)
			if err != nil {
				return err
			}
			pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
		r.Offers = sum.Offers
		if sum.Err != nil {
			r.Err = sum.Err.Error()
		}
		r.PeakMB = procKB("VmHWM") / 1024
		t0 := time.Now()
		for _, at := range []time.Duration{0, time.Second, *wait / 2, *wait} {
			time.Sleep(time.Until(t0.Add(at)))
			r.Samples = append(r.Samples, take(t0))
		}
		r.AfterMB = r.Samples[len(r.Samples)-1].RSSMB
		runtime.GC()
		r.LiveMB = take(t0).HeapInUse
		if (sum.Err == nil) != (c.cap == good) {
			return fmt.Errorf("%s run: err %v with a cap of %d MB (answer %d MB)", c.name, sum.Err, c.cap, fi.Size()>>20)
		}
		out = append(out, r)
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

// procKB reads a kB field of /proc/self/status (0 where there is none).
func procKB(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return n
		}
	}
	return 0
}
