package store

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/pricewatch/pricewatch"
)

// TestHistorySince_CardIndexEqualsChangeLog reads one card's history with
// the card index and with the change-log scan it replaces (the index
// switched off): the same keys and rows — a current offer, one that
// vanished in the window, one that vanished before it (left out: no row
// of the window), one whose card changed from the card to another before
// the window's change (out, as the change log has it: its change in the
// window is of the other card), another card's offer (out). Then the
// index is dropped, as in a file written before it, and rebuilt by Open;
// the answer stays the same. Without the rebuild at Open it failed with
// "after reopening: no card index".
func TestHistorySince_CardIndexEqualsChangeLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pw.db")
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	offer := func(id, card string, price float64) pricewatch.Offer {
		return pricewatch.Offer{Key: "vast/" + id + "/-/ondemand", Source: "vast", Provider: "vast", OfferID: id, Card: card,
			GPUs: 1, Mode: pricewatch.ModeOnDemand, PricePerGPUHour: price, Currency: "USD", ObservedAt: t0}
	}
	runs := [][]pricewatch.Offer{
		{offer("a", "RTX-4090", 0.4), offer("b", "RTX-4090", 0.5), offer("c", "RTX-4090", 0.3), offer("d", "L40S", 0.9), offer("e", "RTX-4090", 0.6)},
		{offer("a", "RTX-4090", 0.4), offer("b", "RTX-4090", 0.5), offer("d", "L40S", 0.9), offer("e", "RTX-4090", 0.6)}, // c vanishes before since
		{offer("a", "RTX-4090", 0.35), offer("d", "L40S", 0.8), offer("e", "L40S", 0.6)},                                 // b vanishes, e changes card
	}
	for i, offers := range runs {
		at := t0.Add(time.Duration(i) * time.Hour)
		if _, err := st.RecordRun(RunResult{Run: pricewatch.Run{Source: "vast", Started: at, OK: true, Offers: len(offers)}, Offers: offers}); err != nil {
			t.Fatal(err)
		}
	}
	since := t0.Add(90 * time.Minute)
	read := func() (map[string]string, map[string][]HistoryRow) {
		keys := map[string]string{"vast/a/-/ondemand": "vast"}
		rows, err := st.HistorySince(context.Background(), keys, since, "RTX-4090", "")
		if err != nil {
			t.Fatal(err)
		}
		return keys, rows
	}
	keys, rows := read()
	want := map[string]string{"vast/a/-/ondemand": "vast", "vast/b/-/ondemand": "vast"}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("with the card index: keys %v, want %v", keys, want)
	}
	// The change-log scan (the index's flag off) gives the same.
	setFlag := func(on bool) {
		if err := st.db.Update(func(tx *bolt.Tx) error {
			if on {
				return tx.Bucket(bMeta).Put(kCardIndex, []byte("1"))
			}
			return tx.Bucket(bMeta).Delete(kCardIndex)
		}); err != nil {
			t.Fatal(err)
		}
	}
	setFlag(false)
	if k2, r2 := read(); !reflect.DeepEqual(k2, keys) || !reflect.DeepEqual(r2, rows) {
		t.Fatalf("change-log scan: keys %v rows %v; card index: keys %v rows %v", k2, r2, keys, rows)
	}
	// A file without the index: Open builds it from the rows.
	if err := st.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bRoot).DeleteBucket(bCardIDs); err != nil {
			return err
		}
		_, err := tx.Bucket(bRoot).CreateBucket(bCardIDs)
		return err // the flag is off since setFlag(false)
	}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if st, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.db.View(func(tx *bolt.Tx) error {
		r := newHistReader(tx)
		id, _ := r.id("vast/b/-/ondemand")
		chunks, _, err := cardChunks(bucket(tx, bCardIDs), "RTX-4090")
		if err != nil || tx.Bucket(bMeta).Get(kCardIndex) == nil || len(chunks) != 1 || !slices.Contains(chunks[0].ids, id) {
			t.Errorf("after reopening: no card index (flag %q, %d keys)", tx.Bucket(bMeta).Get(kCardIndex), bucket(tx, bCardIDs).Stats().KeyN)
		}
		return nil
	})
	if k3, r3 := read(); !reflect.DeepEqual(k3, keys) || !reflect.DeepEqual(r3, rows) {
		t.Fatalf("after the rebuild: keys %v, want %v (rows %v)", k3, keys, r3)
	}
}

// TestIndexCards_Chunks adds ids to the card index in the orders runs
// give them — a first load, later offers with higher ids, an id below
// every chunk, ids already there — and reads back exactly the ids added,
// each chunk at most cardChunk ids and keyed by its first.
func TestIndexCards_Chunks(t *testing.T) {
	st, err := Open(filepath.Join(t.TempDir(), "pw.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	want := map[uint32]bool{}
	add := func(ids ...uint32) {
		t.Helper()
		var pairs []cardID
		for _, id := range ids {
			pairs = append(pairs, cardID{"RTX-4090", id}, cardID{"L40S", id + 1e6})
			want[id] = true
		}
		if err := st.db.Update(func(tx *bolt.Tx) error { return indexCards(bucket(tx, bCardIDs), pairs) }); err != nil {
			t.Fatal(err)
		}
	}
	var first []uint32
	for id := uint32(100); id < 100+2500; id++ {
		first = append(first, id)
	}
	add(first...)            // a first load: three chunks
	add(2600, 2601, 100)     // new offers, and one already there
	add(5, 7)                // below every chunk: the first chunk's key moves
	add(first[1200:1300]...) // already there
	st.db.View(func(tx *bolt.Tx) error {
		chunks, prefix, err := cardChunks(bucket(tx, bCardIDs), "RTX-4090")
		if err != nil {
			t.Fatal(err)
		}
		var got []uint32
		for _, ch := range chunks {
			if len(ch.ids) == 0 || len(ch.ids) > cardChunk || ch.ids[0] != ch.first {
				t.Errorf("chunk %d: %d ids, first %v", ch.first, len(ch.ids), ch.ids[:min(1, len(ch.ids))])
			}
			got = append(got, ch.ids...)
		}
		if len(got) != len(want) || !slices.IsSorted(got) {
			t.Errorf("%d ids (sorted %v), want %d", len(got), slices.IsSorted(got), len(want))
		}
		for _, id := range got {
			if !want[id] {
				t.Errorf("id %d never added", id)
			}
		}
		if string(prefix) != "RTX-4090\x00" {
			t.Errorf("prefix %q", prefix)
		}
		other, _, _ := cardChunks(bucket(tx, bCardIDs), "L40S")
		if n := len(other); n < 3 {
			t.Errorf("L40S: %d chunks", n)
		}
		return nil
	})
}
