package store_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/store"
)

// Issue 31 item 6: a file above the start-up check's size is checked whole
// on a schedule. With the start-up threshold at 0 every file counts as
// large: Open does not read the zeroed pages in the middle of the file,
// the live check (in a write transaction, the store open for writing)
// finds them, names the file and the way out, keeps the first ten
// problems and counts the rest; the store goes on answering.
func TestCheckPagesLive_FindsDamageInALargeFile(t *testing.T) {
	old := store.FullCheckMaxBytes
	store.FullCheckMaxBytes = 0
	defer func() { store.FullCheckMaxBytes = old }()
	f := newDamagedFixture(t)
	var pages []int64
	for p := f.pgid / 3; p < 2*f.pgid/3; p++ {
		if p != f.root && p != f.freelist {
			pages = append(pages, p)
		}
	}
	f.zeroPages(t, pages...)
	st, err := store.Open(f.path, store.Options{})
	if err != nil {
		t.Fatalf("open of a large file with its middle damaged: %v (the start-up check is for small files)", err)
	}
	defer st.Close()
	at := time.Date(2026, 12, 6, 4, 50, 0, 0, time.UTC)
	pc, err := st.CheckPagesLive(at)
	wantDamaged(t, err, f.path, "page check")
	if pc.Problems < 1 || len(pc.First) != min(pc.Problems, 10) || !pc.At.Equal(at) || pc.Bytes != f.pgid*f.pageSize {
		t.Errorf("check: %d problems, %d kept, at %v, %d bytes (file %d)", pc.Problems, len(pc.First), pc.At, pc.Bytes, f.pgid*f.pageSize)
	}
	if pc.Problems > 1 && !strings.Contains(err.Error(), fmt.Sprintf("and %d more", pc.Problems-1)) {
		t.Errorf("error %q does not count the other problems", err)
	}
	if _, err := st.Health(); err != nil {
		t.Errorf("the store after the check: %v", err)
	}
	t.Logf("%d pages zeroed of %d: %d problems, first %q", len(pages), f.pgid, pc.Problems, pc.First[0])
}

// A sound file checked while runs are written: no problem reported and no
// write lost (the check waits for them or they for it; in a read
// transaction it would race with them on the free page list).
func TestCheckPagesLive_BesideWriters(t *testing.T) {
	f := newDamagedFixture(t)
	st, err := store.Open(f.path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 20 {
			o := offer(fmt.Sprintf("w-%d", i), float64(i+1))
			if _, err := st.RecordRun(okRun(t0.Add(time.Duration(i+2)*time.Hour), o)); err != nil {
				errs <- err
			}
		}
	}()
	for range 3 {
		if pc, err := st.CheckPagesLive(t0); err != nil || pc.Problems != 0 {
			t.Errorf("sound file: %d problems, %v", pc.Problems, err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("write beside the check: %v", err)
	}
	if got, err := st.Offers(); err != nil || len(got) != 1 {
		t.Errorf("after the writes: %d offers, %v", len(got), err)
	}
}
