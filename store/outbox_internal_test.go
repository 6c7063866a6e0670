package store

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

var tb0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// fillOutbox adds n messages with a digest-sized payload in one
// transaction: all sent but the last pending ones.
func fillOutbox(tb testing.TB, s *Store, n, pending int) {
	tb.Helper()
	payload := []byte(`{"text":"` + strings.Repeat("x", 1500) + `"}`)
	err := s.db.Update(func(tx *bolt.Tx) error {
		ix, err := ensureIndex(tx)
		if err != nil {
			return err
		}
		for i := range n {
			m := Message{Kind: "change", Text: fmt.Sprint("message ", i), Payload: payload, Created: tb0.Add(time.Duration(i) * time.Minute)}
			if err := enqueue(tx, &m); err != nil {
				return err
			}
			if i < n-pending {
				m.Status, m.SentAt, m.Attempts = Sent, m.Created, 1
				if err := putJSON(bucket(tx, bOutbox), idKey(m.ID), m); err != nil {
					return err
				}
				if err := ix.set(m.ID, Sent); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

func openTemp(tb testing.TB) *Store {
	tb.Helper()
	s, err := Open(filepath.Join(tb.TempDir(), "pw.db"), Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// A file written before the index reads by scanning, and gets the index,
// consistent with its messages, on its first outbox write.
func TestOutbox_IndexBuiltForOlderFile(t *testing.T) {
	s := openTemp(t)
	fillOutbox(t, s, 30, 3)
	if err := s.db.Update(func(tx *bolt.Tx) error {
		root := tx.Bucket(bRoot)
		if err := root.DeleteBucket(bOutboxPending); err != nil {
			return err
		}
		return root.DeleteBucket(bOutboxFailed)
	}); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		next, err := s.NextPending()
		if err != nil || next == nil || next.Text != "message 27" {
			t.Errorf("%s: next pending %v %v", when, next, err)
		}
		page, err := s.Outbox(Pending, 0)
		if err != nil || page.Pending != 3 || len(page.Messages) != 3 || page.Messages[0].Text != "message 29" {
			t.Errorf("%s: pending page %+v %v", when, page, err)
		}
	}
	check("before the index")
	if _, err := s.Enqueue(Message{Kind: "health", Text: "new", Created: tb0}); err != nil {
		t.Fatal(err)
	}
	if err := s.db.View(func(tx *bolt.Tx) error {
		if indexOf(tx) == nil {
			t.Error("no index after a write")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if page, _ := s.Outbox("", 1); page.Pending != 4 || page.Messages[0].Text != "new" {
		t.Errorf("after the index: %+v", page)
	}
}

// BenchmarkOutbox shows the sender's next-pending lookup and the newest-N
// read (/v1/alerts?limit=1 and the default limit of 50) flat from 2,000 to
// 20,000 messages; "scan" rows are the same reads without the index (how
// they worked before it), for comparison.
//
//	go test ./store -run '^$' -bench Outbox
func BenchmarkOutbox(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		s := openTemp(b)
		fillOutbox(b, s, n, 5)
		view := func(b *testing.B, fn func(tx *bolt.Tx) error) {
			for b.Loop() {
				if err := s.db.View(fn); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Run(fmt.Sprintf("NextPending/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				if m, err := s.NextPending(); err != nil || m == nil {
					b.Fatal(m, err)
				}
			}
		})
		for _, limit := range []int{1, 50} {
			b.Run(fmt.Sprintf("Newest%d/n=%d", limit, n), func(b *testing.B) {
				for b.Loop() {
					if p, err := s.Outbox("", limit); err != nil || len(p.Messages) != limit || p.Pending != 5 {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(fmt.Sprintf("NextPending-scan/n=%d", n), func(b *testing.B) {
			view(b, func(tx *bolt.Tx) error { _, err := scanOutbox(tx, Pending, 1, true); return err })
		})
		b.Run(fmt.Sprintf("Newest1-scan/n=%d", n), func(b *testing.B) {
			view(b, func(tx *bolt.Tx) error { _, err := scanOutbox(tx, "", 1, false); return err })
		})
	}
}
