package store_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/store"
)

func pinnedRun(at time.Time, keep []string, offers ...pricewatch.Offer) store.RunResult {
	rr := okRun(at, offers...)
	rr.Keep = keep
	return rr
}

// An unchanged re-scrape writes no offer record: the source's seen time
// moves, and every offer reads as observed then.
func TestRecordRun_ConfirmationIsOneRecord(t *testing.T) {
	st := mustOpen(t)
	if _, err := st.RecordRun(okRun(t0, offer("a", 1), offer("b", 2))); err != nil {
		t.Fatal(err)
	}
	fi1, _ := os.Stat(st.Path())
	for i := 1; i <= 50; i++ {
		if _, err := st.RecordRun(okRun(t0.Add(time.Duration(i)*time.Hour), offer("a", 1), offer("b", 2))); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.DropPages(); err != nil {
		t.Fatal(err)
	}
	offers, err := st.Offers()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range offers {
		if !o.ObservedAt.Equal(t0.Add(50*time.Hour)) || !o.FirstSeen.Equal(t0) {
			t.Errorf("%s: observed %s, first seen %s", o.Key, o.ObservedAt, o.FirstSeen)
		}
	}
	fi2, _ := os.Stat(st.Path())
	if fi2.Size() > fi1.Size()+(1<<20) {
		t.Errorf("file grew from %d to %d bytes over 50 confirmations", fi1.Size(), fi2.Size())
	}
	if n, _ := st.HistoryCount(); n != 2 {
		t.Errorf("history rows = %d, want 2", n)
	}
}

// A held offer keeps the time the last applied run confirmed it, and is
// observed again once a run confirms it.
func TestRecordRun_HeldOfferKeepsItsObservedTime(t *testing.T) {
	st := mustOpen(t)
	a, b := offer("a", 1), offer("b", 2)
	if _, err := st.RecordRun(okRun(t0, a, b)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordRun(pinnedRun(t0.Add(time.Hour), []string{b.Key}, offer("a", 1))); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordRun(pinnedRun(t0.Add(2*time.Hour), []string{b.Key}, offer("a", 1))); err != nil {
		t.Fatal(err)
	}
	got := map[string]pricewatch.Offer{}
	offers, _ := st.Offers()
	for _, o := range offers {
		got[o.OfferID] = o
	}
	if !got["a"].ObservedAt.Equal(t0.Add(2*time.Hour)) || !got["b"].ObservedAt.Equal(t0) || got["b"].PricePerGPUHour != 2 {
		t.Fatalf("a observed %s, b observed %s at %v", got["a"].ObservedAt, got["b"].ObservedAt, got["b"].PricePerGPUHour)
	}
	if _, err := st.RecordRun(okRun(t0.Add(3*time.Hour), offer("a", 1), offer("b", 2))); err != nil {
		t.Fatal(err)
	}
	offers, _ = st.Offers()
	for _, o := range offers {
		if !o.ObservedAt.Equal(t0.Add(3 * time.Hour)) {
			t.Errorf("%s observed %s after its confirmation", o.Key, o.ObservedAt)
		}
	}
}

// Changes reads the change index in time, then key order, with the price
// before each change.
func TestChanges_FromTheIndex(t *testing.T) {
	st := mustOpen(t)
	steps := []store.RunResult{
		okRun(t0, offer("b", 2), offer("a", 1)),
		okRun(t0.Add(time.Hour), offer("a", 1.5), offer("b", 2), offer("c", 3)),
		okRun(t0.Add(2*time.Hour), offer("a", 1.5), offer("c", 3)),
	}
	for _, rr := range steps {
		if _, err := st.RecordRun(rr); err != nil {
			t.Fatal(err)
		}
	}
	ch, err := st.Changes(t0.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	type c struct {
		id       string
		ev       store.Event
		old, new float64
	}
	want := []c{{"a", store.Appeared, 0, 1}, {"b", store.Appeared, 0, 2}, {"a", store.Changed, 1, 1.5}, {"c", store.Appeared, 0, 3},
		{"b", store.Vanished, 2, 0}}
	if len(ch) != len(want) {
		t.Fatalf("%d changes: %+v", len(ch), ch)
	}
	for i, w := range want {
		g := ch[i]
		if g.Key != offer(w.id, 0).Key || g.Event != w.ev || g.OldPrice != w.old || g.NewPrice != w.new || g.Source != "runpod" || g.Card != "A40" {
			t.Errorf("#%d = %+v, want %+v", i, g, w)
		}
	}
}

// Compact rolls raw rows before the window into daily rows that History
// returns with the day's open, min, max and close; the rows inside the
// window stay raw, and compacting again changes nothing.
func TestCompact_DailyRows(t *testing.T) {
	st := mustOpen(t)
	day := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	prices := []struct {
		at    time.Time
		price float64
	}{
		{day.Add(1 * time.Hour), 1.0},  // appears
		{day.Add(5 * time.Hour), 0.8},  // min of day 1
		{day.Add(9 * time.Hour), 1.2},  // max, close of day 1
		{day.Add(30 * time.Hour), 1.1}, // day 2: open 1.2, close 1.1
	}
	for _, p := range prices {
		if _, err := st.RecordRun(okRun(p.at, offer("a", p.price))); err != nil {
			t.Fatal(err)
		}
	}
	later := day.Add(100 * 24 * time.Hour)
	if _, err := st.RecordRun(okRun(later, offer("a", 1.3))); err != nil {
		t.Fatal(err)
	}
	stats, err := st.Compact(later.Add(time.Hour), 90*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if stats.RawRows != 4 || stats.Days != 2 || stats.Offers != 1 {
		t.Errorf("stats %+v", stats)
	}
	h, err := st.History(offer("a", 0).Key)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 3 {
		t.Fatalf("history %+v", h)
	}
	d1, d2, raw := h[0], h[1], h[2]
	if d1.Event != store.Daily || !d1.At.Equal(day) || d1.Open != 1.0 || d1.Min != 0.8 || d1.Max != 1.2 || d1.PricePerGPUHour != 1.2 {
		t.Errorf("day 1 %+v", d1)
	}
	if d2.Event != store.Daily || !d2.At.Equal(day.Add(24*time.Hour)) || d2.Open != 1.2 || d2.Min != 1.1 || d2.Max != 1.2 || d2.PricePerGPUHour != 1.1 {
		t.Errorf("day 2 %+v", d2)
	}
	if raw.Event != store.Changed || !raw.At.Equal(later) || raw.PricePerGPUHour != 1.3 {
		t.Errorf("raw %+v", raw)
	}
	again, err := st.Compact(later.Add(2*time.Hour), 90*24*time.Hour)
	if err != nil || again.RawRows != 0 {
		t.Errorf("second compaction %+v, %v", again, err)
	}
	// The change after the compacted days still knows the price before it.
	ch, _ := st.Changes(later.Add(-time.Minute))
	if len(ch) != 1 || ch[0].OldPrice != 1.1 || ch[0].NewPrice != 1.3 {
		t.Errorf("changes %+v", ch)
	}
}

// Rewrite returns a compacted file's free pages to the disk.
func TestRewrite_Shrinks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pw.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var offers []pricewatch.Offer
	for i := range 5000 {
		offers = append(offers, offer(string(rune('a'+i%26))+time.Duration(i).String(), float64(i)))
	}
	if _, err := st.RecordRun(okRun(t0, offers...)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordRun(okRun(t0.Add(time.Hour), offer("x", 1))); err != nil {
		t.Fatal(err)
	}
	st.Close()
	before, after, err := store.Rewrite(path)
	if err != nil {
		t.Fatal(err)
	}
	if after >= before {
		t.Errorf("rewrite: %d → %d bytes", before, after)
	}
	st, err = store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if o, _ := st.Offers(); len(o) != 1 {
		t.Errorf("%d offers after the rewrite", len(o))
	}
}

// Compacting every day, as the daemon does, leaves the same history as
// compacting once at the end: month rows written by one compaction are
// merged, never lost or doubled, by the next. Five offers change price a
// few times a day for 150 days (one vanishes for a week and comes back).
func TestCompact_DailyEqualsOnce(t *testing.T) {
	daily, once := mustOpen(t), mustOpen(t)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ids := []string{"a", "b", "c", "d", "e"}
	for day := range 150 {
		for h := 0; h < 24; h += 6 {
			at := start.Add(time.Duration(day)*24*time.Hour + time.Duration(h)*time.Hour)
			var offers []pricewatch.Offer
			for i, id := range ids {
				if id == "c" && day >= 40 && day < 47 {
					continue // vanished for a week
				}
				// Offer i moves on every (i+1)-th step.
				step := (day*4 + h/6) / (i + 1)
				offers = append(offers, offer(id, 1+0.01*float64(step%17)))
			}
			for _, st := range []*store.Store{daily, once} {
				if _, err := st.RecordRun(okRun(at, offers...)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := daily.Compact(start.Add(time.Duration(day+1)*24*time.Hour), 30*24*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	end := start.Add(150 * 24 * time.Hour)
	stats, err := once.Compact(end, 30*24*time.Hour)
	if err != nil || stats.RawRows == 0 {
		t.Fatalf("one compaction: %+v %v", stats, err)
	}
	for _, id := range ids {
		a, err := daily.History(offer(id, 0).Key)
		if err != nil {
			t.Fatal(err)
		}
		b, err := once.History(offer(id, 0).Key)
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != len(b) || len(a) < 100 {
			t.Fatalf("%s: %d rows compacted daily, %d once", id, len(a), len(b))
		}
		for i := range a {
			if a[i] != b[i] {
				t.Errorf("%s row %d: daily %+v, once %+v", id, i, a[i], b[i])
				break
			}
		}
	}
}

// Two sources' runs at the same instant share one change index entry;
// Changes returns the changes of both, by key.
func TestChanges_SameInstantTwoSources(t *testing.T) {
	st := mustOpen(t)
	vastOffer := func(id string, price float64) pricewatch.Offer {
		return pricewatch.Offer{Key: pricewatch.OfferKey("vast", id, "", pricewatch.ModeOnDemand), Source: "vast", OfferID: id,
			Card: "A40", GPUs: 1, Mode: pricewatch.ModeOnDemand, PricePerGPUHour: price, Currency: "USD"}
	}
	if _, err := st.RecordRun(okRun(t0, offer("b", 1), offer("a", 2))); err != nil {
		t.Fatal(err)
	}
	vr := store.RunResult{Run: pricewatch.Run{Source: "vast", Started: t0, OK: true, Offers: 1}, Offers: []pricewatch.Offer{vastOffer("c", 3)}}
	if _, err := st.RecordRun(vr); err != nil {
		t.Fatal(err)
	}
	ch, err := st.Changes(t0)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range ch {
		keys = append(keys, c.Key)
	}
	want := []string{offer("a", 0).Key, offer("b", 0).Key, vastOffer("c", 0).Key}
	if !slices.Equal(keys, want) {
		t.Errorf("changes %v, want %v", keys, want)
	}
}
