package rank_test

import (
	"bytes"
	"errors"
	"strconv"
	"testing"

	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
)

func emptySnap() *rank.Snapshot {
	return rank.Build(nil, nil, nil, normalize.DefaultCatalog(), rank.Options{Now: now})
}

func memoize(t *testing.T, s *rank.Snapshot, key string, val []byte) (ran bool) {
	t.Helper()
	got, err := s.Memo(key, func() ([]byte, error) { ran = true; return val, nil })
	if err != nil || !bytes.Equal(got, val) {
		t.Fatalf("Memo(%s) = %q, %v", key, got, err)
	}
	return ran
}

func TestSnapshot_MemoBoundedLRU(t *testing.T) {
	s := emptySnap()
	small := []byte("{}")
	for i := range 3 * rank.MemoMaxEntries {
		memoize(t, s, "k"+strconv.Itoa(i), small)
		if i == 10 {
			// Keep k0 recently used: the least recently used go first.
			memoize(t, s, "k0", small)
		}
		if i > 10 && i%100 == 0 && memoize(t, s, "k0", small) {
			t.Fatalf("k0 dropped after %d keys although used", i)
		}
	}
	if n, b := s.MemoStats(); n != rank.MemoMaxEntries || b > rank.MemoMaxBytes {
		t.Errorf("%d entries, %d bytes; bound %d entries", n, b, rank.MemoMaxEntries)
	}
	if !memoize(t, s, "k1", small) {
		t.Error("k1, least recently used, is still cached")
	}
	// Large answers: the byte bound holds, whatever the entry count.
	big := bytes.Repeat([]byte("x"), rank.MemoMaxBytes/64)
	for i := range 200 {
		memoize(t, s, "big"+strconv.Itoa(i), big)
		if _, b := s.MemoStats(); b > rank.MemoMaxBytes {
			t.Fatalf("%d bytes after %d big answers; bound %d", b, i+1, rank.MemoMaxBytes)
		}
	}
	// An answer too large to cache is computed every time, never kept.
	huge := bytes.Repeat([]byte("x"), rank.MemoMaxBytes/8)
	memoize(t, s, "huge", huge)
	if !memoize(t, s, "huge", huge) {
		t.Error("an answer of an eighth of the bound was cached")
	}
	// Errors are returned, not cached.
	boom := errors.New("boom")
	if _, err := s.Memo("err", func() ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
	if !memoize(t, s, "err", small) {
		t.Error("an error was cached")
	}
}
