package history

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// storedFixture records random runs of three sources into a store that
// keeps the best series, as the pipeline does.
type storedFixture struct {
	st        *store.Store
	workloads []rank.Workload
	t0, end   time.Time
}

var storedSources = []string{"a", "b", "c"}

// trackFrom is the run from which the store keeps the series (0: from the
// database's creation; later: a database from before the series).
func newStoredFixture(t *testing.T, seed uint64, runs, trackFrom int) storedFixture {
	t.Helper()
	return newStoredFixtureWith(t, seed, runs, trackFrom, nil)
}

// newStoredFixtureWith is newStoredFixture calling before(run, store)
// before each run.
func newStoredFixtureWith(t *testing.T, seed uint64, runs, trackFrom int, before func(int, *store.Store)) storedFixture {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "h.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var ws []rank.Workload
	for _, n := range []string{"lora-7b", "serve-7b"} {
		w, _ := rank.WorkloadByName(n)
		ws = append(ws, w)
	}
	for _, c := range []string{"RTX-4090", "L40S"} {
		for _, w := range ws {
			if err := st.PutProfile(rank.Profile{Card: c, Workload: w.Name, TokensPerSecond: 900 + float64(len(c))*37, Origin: rank.OriginMeasured}); err != nil {
				t.Fatal(err)
			}
		}
	}
	track := func() {
		if err := st.TrackSeries(NewTracker(ws, normalize.DefaultCatalog()), storedSources); err != nil {
			t.Fatal(err)
		}
	}
	if trackFrom == 0 {
		track()
	}
	r := rand.New(rand.NewPCG(seed, 7))
	t0 := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	// Each source's offers: a fixed card, mode and GPU count per key (the
	// terms the rows are priced with stay those of the key); price,
	// currency, availability and presence move from run to run.
	type key struct {
		card string
		mode pricewatch.Mode
		gpus int
	}
	keys := map[string][]key{}
	for _, s := range storedSources {
		for range 2 + r.IntN(6) {
			keys[s] = append(keys[s], key{[]string{"RTX-4090", "RTX-4090", "L40S"}[r.IntN(3)],
				[]pricewatch.Mode{"ondemand", "spot", "reserved-1y"}[r.IntN(3)], 1 + r.IntN(2)})
		}
	}
	prices := []float64{0.30, 0.35, 0.40, 0.40, 0.55}
	// The first round lands in the sources' order, 10 ms apart; later
	// runs start at a 10-minute tick plus up to 3 s, in a random order
	// of landing (a run that started earlier may land later).
	last := map[string]time.Time{}
	for run := range runs {
		if run == trackFrom && run > 0 {
			track()
		}
		if before != nil {
			before(run, st)
		}
		order := slices.Clone(storedSources)
		if run > 0 {
			r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		for i, s := range order {
			at := t0.Add(time.Duration(run)*10*time.Minute + time.Duration(i)*10*time.Millisecond)
			if run > 0 {
				at = t0.Add(time.Duration(run)*10*time.Minute + time.Duration(r.IntN(3000))*time.Millisecond)
			}
			if !at.After(last[s]) {
				at = last[s].Add(time.Millisecond)
			}
			last[s] = at
			var offers []pricewatch.Offer
			for k, kd := range keys[s] {
				if run > 0 && r.IntN(5) == 0 {
					continue // absent this run: vanished
				}
				cur := "USD"
				switch r.IntN(12) {
				case 0:
					cur = "EUR"
				case 1:
					cur = "XXX" // no rate: counted by no answer
				}
				avail := pricewatch.AvailableYes
				if r.IntN(6) == 0 {
					avail = pricewatch.AvailableNo
				}
				offers = append(offers, pricewatch.Offer{Key: fmt.Sprintf("%s/%d/-/%s", s, k, kd.mode), Source: s, Provider: s,
					OfferID: fmt.Sprint(k), Kind: pricewatch.KindOffer, Mode: kd.mode, Card: kd.card, GPUName: kd.card, GPUs: kd.gpus,
					RentUnit: pricewatch.RentPerGPU, GPUCounts: pricewatch.CountsUpTo(kd.gpus),
					PricePerGPUHour: prices[r.IntN(len(prices))], Currency: cur, Available: avail, ObservedAt: at})
			}
			if len(offers) == 0 {
				continue
			}
			if _, err := st.RecordRun(store.RunResult{Run: pricewatch.Run{Source: s, Started: at, OK: true, Offers: len(offers)}, Offers: offers}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return storedFixture{st: st, workloads: ws, t0: t0, end: t0.Add(time.Duration(runs) * 10 * time.Minute)}
}

// computed is the series Series computes from the fixture's rows.
func (f storedFixture) computed(t *testing.T, in StoredInput, card string, w rank.Workload) []Point {
	t.Helper()
	ctx := context.Background()
	cur, err := f.st.Offers()
	if err != nil {
		t.Fatal(err)
	}
	filter := Filter{Card: card, Modes: in.Modes, Source: in.Source}
	rows, terms, err := Load(ctx, f.st, Current{Offers: slices.Values(cur)}, filter, in.Since)
	if err != nil {
		t.Fatal(err)
	}
	profiles, _ := f.st.Profiles()
	tps := BestProfiles(profiles, w.Name)
	from, _ := f.st.HistoryFrom()
	return Series(Input{Filter: filter, Rows: rows, Terms: terms, Workload: &w, Catalog: normalize.DefaultCatalog(),
		Profile: func(c string) (rank.Profile, bool) { v, ok := tps[c]; return v, ok },
		Convert: in.Convert, Since: in.Since, Until: in.Until, Step: in.Step, Before: in.Before, From: from})
}

// TestStoredSeries_EqualsComputed compares the stored best series, merged
// at query time, with the series computed from the rows, point for point,
// on random histories of three sources (prices drawn from a few values so
// ties happen, offers vanishing and coming back, out of stock, a second
// currency converted and one with no rate, runs landing out of their
// start order) for every parameter set the stored series serves: each
// card (and every card, the digest's default watches) and workload,
// default and single modes, all sources and one, ranges starting
// anywhere, a step, the carried first point.
// It failed with the carried first point missing when another
// sub-series' point followed the last selected one before since (fixed in
// FromStored), and, with one sub-series per card, mode and currency across
// sources, with points mixing a late-landing run's offers into the times
// before it (why each source has its own sub-series).
//
// Known difference (seed 76 of 80, 1 query of 2,880): for every card with
// one source, the rows' series reads only current offers and those the
// change log names from since on, so an offer that vanished before since
// is not seen, and its vanishing is not the carried point's time; the
// stored series carries that point (offers=0), which is what happened.
func TestStoredSeries_EqualsComputed(t *testing.T) {
	for seed := range uint64(12) {
		compareStored(t, newStoredFixture(t, seed, 30, 0), seed, true)
	}
}

// TestStoredSeries_OlderDatabase: a database that had history before the
// series existed keeps its history unclamped, and the series starts at the
// first run after it is tracked: it serves only ranges after that start,
// and those equal the computed series.
func TestStoredSeries_OlderDatabase(t *testing.T) {
	for seed := range uint64(6) {
		f := newStoredFixture(t, seed, 30, 12)
		m, err := f.st.BestSeriesMeta()
		if err != nil || !m.Live || m.Real || !m.HistoryFrom.IsZero() || m.Start.Before(f.t0.Add(12*10*time.Minute)) {
			t.Fatalf("seed %d: meta %+v (%v): want live from run 12 on, not real, no history start", seed, m, err)
		}
		compareStored(t, f, seed, false)
	}
}

// TestStoredSeries_ProfileChange: a throughput profile written after the
// series began reprices the history computed from the rows; the stored
// series stops answering at once (no run has checked it since), and the
// next run starts it again from its own time, priced with the new profile,
// equal to the rows' series after that.
func TestStoredSeries_ProfileChange(t *testing.T) {
	for seed := range uint64(4) {
		f := newStoredFixtureWith(t, seed, 30, 0, func(run int, st *store.Store) {
			if run != 15 {
				return
			}
			if err := st.PutProfile(rank.Profile{Card: "RTX-4090", Workload: "lora-7b", TokensPerSecond: 2500, Origin: rank.OriginMeasured}); err != nil {
				t.Fatal(err)
			}
			m, _, err := st.BestSeries(context.Background(), "RTX-4090", "lora-7b", time.Now())
			if err != nil || m.Current || (StoredInput{Meta: m, Since: time.Now()}).Serves(Filter{Card: "RTX-4090"}) {
				t.Fatalf("seed %d: after a profile write the series still answers (meta %+v, %v)", seed, m, err)
			}
		})
		m, err := f.st.BestSeriesMeta()
		if err != nil || !m.Live || m.Real || m.Start.Before(f.t0.Add(15*10*time.Minute)) {
			t.Fatalf("seed %d: meta %+v (%v): want the series started again at run 15", seed, m, err)
		}
		compareStored(t, f, seed, false)
	}
}

// compareStored compares random queries of the stored series with the
// computed ones; all says every query must be served.
func compareStored(t *testing.T, f storedFixture, seed uint64, all bool) {
	t.Helper()
	convert := func(v float64, cur string) (float64, bool) {
		switch cur {
		case "USD":
			return v, true
		case "EUR":
			return v * 1.0837, true
		}
		return 0, false
	}
	r := rand.New(rand.NewPCG(seed, 9))
	served := 0
	for q := range 36 {
		card := []string{"RTX-4090", "L40S", ""}[q%3]
		w := f.workloads[(q/2)%2]
		in := StoredInput{Modes: [][]pricewatch.Mode{nil, {"ondemand"}, {"spot", "reserved-1y"}}[r.IntN(3)],
			Convert: convert, Since: f.t0.Add(time.Duration(r.IntN(300)-10) * time.Minute), Before: r.IntN(2) == 0}
		in.Until = in.Since.Add(time.Duration(1+r.IntN(300)) * time.Minute)
		if r.IntN(3) == 0 {
			in.Source = storedSources[r.IntN(3)]
		}
		if r.IntN(4) == 0 {
			in.Step = time.Hour
		}
		meta, pts, err := f.st.BestSeries(context.Background(), card, w.Name, in.Until)
		if err != nil {
			t.Fatal(err)
		}
		in.Meta, in.Points = meta, pts
		if !in.Serves(Filter{Card: card}) {
			if all {
				t.Fatalf("seed %d: the stored series does not serve %+v (meta %+v)", seed, in, meta)
			}
			continue
		}
		got, ok := FromStored(in)
		if !ok && !all {
			continue
		}
		served++
		want := f.computed(t, in, card, w)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d query %d (%s %s modes %v source %q since %s until %s step %s before %t): ok %t\n got %s\nwant %s",
				seed, q, card, w.Name, in.Modes, in.Source, in.Since.Format("15:04"), in.Until.Format("15:04"), in.Step, in.Before, ok, show(got), show(want))
		}
	}
	if served == 0 {
		t.Errorf("seed %d: no query served", seed)
	}
}

// TestStoredSeries_Compacted: Compact drops the stored points older than
// store.SeriesRetention but the last of each sub-series (the state then)
// and moves the series' start to its cut, after which the stored series
// no longer claims ranges that need what it dropped: a range from before
// the cut, or a carried first point from before it.
func TestStoredSeries_Compacted(t *testing.T) {
	f := newStoredFixture(t, 3, 30, 0)
	ctx := context.Background()
	_, before, err := f.st.BestSeries(ctx, "RTX-4090", "lora-7b", f.end)
	if err != nil {
		t.Fatal(err)
	}
	subs := map[string]bool{}
	for _, p := range before {
		subs[string(p.Mode)+"/"+p.Currency+"/"+p.Source] = true
	}
	now := f.t0.Add(40 * 24 * time.Hour)
	st, err := f.st.Compact(now, 60*24*time.Hour) // the raw window keeps the rows; the series its 32 days
	if err != nil {
		t.Fatal(err)
	}
	meta, after, err := f.st.BestSeries(ctx, "RTX-4090", "lora-7b", now)
	if err != nil {
		t.Fatal(err)
	}
	// Each sub-series keeps its last point and its last touch.
	if len(after) != 2*len(subs) || len(before) <= 2*len(subs) || st.SeriesPruned == 0 {
		t.Fatalf("%d points and touches before, %d after for %d sub-series (pruned %d)", len(before), len(after), len(subs), st.SeriesPruned)
	}
	cut := now.Add(-store.SeriesRetention).Truncate(24 * time.Hour)
	if !meta.Start.Equal(cut) || meta.Real {
		t.Fatalf("meta after compaction %+v, want start %s, not real", meta, cut)
	}
	in := StoredInput{Meta: meta, Points: after, Convert: func(v float64, _ string) (float64, bool) { return v, true },
		Since: cut.Add(-time.Hour), Until: now}
	if in.Serves(Filter{Card: "RTX-4090"}) {
		t.Error("serves a range from before the cut")
	}
	in.Since, in.Before = cut.Add(time.Hour), true
	if !in.Serves(Filter{Card: "RTX-4090"}) {
		t.Error("does not serve a range after the cut")
	}
	if _, ok := FromStored(in); ok {
		t.Error("answers a carried first point from before the cut")
	}
}
