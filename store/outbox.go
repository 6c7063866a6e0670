package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The outbox and its status index. Messages live in outbox/ by id; the
// index buckets hold the ids of the pending and of the failed messages
// (empty values), and each keeps its key count in its bucket sequence. So
// the sender's next pending message, the newest messages and the counts
// cost the same at 2,000 messages as at 200,000. The index is built on the
// first write by this build (a file written before it has none); until
// then, and on a read-only file without it, reads scan the outbox.
var (
	bOutboxPending = []byte("outbox_pending")
	bOutboxFailed  = []byte("outbox_failed")
)

// Message statuses in the outbox. Logged is a message no Slack was
// configured for: written to the log only, done like a sent one.
const (
	Pending = "pending"
	Sent    = "sent"
	Logged  = "logged"
	Failed  = "failed"
)

// Message is one Slack message in the outbox, delivered in order.
type Message struct {
	ID      uint64          `json:"id"`
	Kind    string          `json:"kind"` // change, health, degraded, digest
	Watch   string          `json:"watch,omitempty"`
	Text    string          `json:"text"`
	Payload json.RawMessage `json:"payload"` // the Slack message (blocks) as JSON
	Created time.Time       `json:"created"`
	Status  string          `json:"status"`
	// Attempts and NextAttempt drive retries; LastError says why the last
	// attempt failed (a permanent error stays with the failed message).
	Attempts    int       `json:"attempts"`
	NextAttempt time.Time `json:"next_attempt,omitzero"`
	LastError   string    `json:"last_error,omitempty"`
	SentAt      time.Time `json:"sent_at,omitzero"`
	// Attempt is a post that may have reached Slack without its answer
	// being recorded: the sender commits it before each post and clears it
	// with the answer, so one left on a pending message (a crash, a post
	// left unanswered) makes the sender look the message up in the channel
	// before posting it again.
	Attempt *Attempt `json:"attempt,omitempty"`
	// Channel and TS are where Slack put the delivered message (bot token
	// delivery only).
	Channel string `json:"channel,omitempty"`
	TS      string `json:"ts,omitempty"`
}

// Attempt is a recorded post: the client id it carried in the message's
// metadata and when it was sent.
type Attempt struct {
	ClientID string    `json:"client_id"`
	At       time.Time `json:"at"`
}

// outboxIndex is the status index of the outbox.
type outboxIndex struct{ pending, failed *bolt.Bucket }

// indexOf returns the outbox's index, or nil if the file has none yet.
func indexOf(tx *bolt.Tx) *outboxIndex {
	root := tx.Bucket(bRoot)
	p, f := root.Bucket(bOutboxPending), root.Bucket(bOutboxFailed)
	if p == nil || f == nil {
		return nil
	}
	return &outboxIndex{pending: p, failed: f}
}

// ensureIndex returns the outbox's index, building it from the outbox in
// tx (a writable one) if the file has none yet.
func ensureIndex(tx *bolt.Tx) (*outboxIndex, error) {
	if ix := indexOf(tx); ix != nil {
		return ix, nil
	}
	root := tx.Bucket(bRoot)
	ix := &outboxIndex{}
	var err error
	if ix.pending, err = root.CreateBucketIfNotExists(bOutboxPending); err != nil {
		return nil, err
	}
	if ix.failed, err = root.CreateBucketIfNotExists(bOutboxFailed); err != nil {
		return nil, err
	}
	err = bucket(tx, bOutbox).ForEach(func(k, v []byte) error {
		var m Message
		if err := json.Unmarshal(v, &m); err != nil {
			return fmt.Errorf("decode message %x: %w", k, err)
		}
		return ix.set(m.ID, m.Status)
	})
	return ix, err
}

// set files a message id under its status (sent, logged: under none).
func (ix *outboxIndex) set(id uint64, status string) error {
	for _, b := range []*bolt.Bucket{ix.pending, ix.failed} {
		want := b == ix.pending && status == Pending || b == ix.failed && status == Failed
		if err := setMember(b, idKey(id), want); err != nil {
			return err
		}
	}
	return nil
}

// setMember adds or removes k, keeping the key count in the sequence.
func setMember(b *bolt.Bucket, k []byte, in bool) error {
	has := b.Get(k) != nil
	switch {
	case in && !has:
		if err := b.Put(k, []byte{}); err != nil {
			return err
		}
		return b.SetSequence(b.Sequence() + 1)
	case !in && has:
		if err := b.Delete(k); err != nil {
			return err
		}
		return b.SetSequence(b.Sequence() - 1)
	}
	return nil
}

// enqueue adds a message to the outbox within tx.
func enqueue(tx *bolt.Tx, m *Message) error {
	ix, err := ensureIndex(tx)
	if err != nil {
		return err
	}
	b := bucket(tx, bOutbox)
	id, err := b.NextSequence()
	if err != nil {
		return err
	}
	m.ID, m.Status = id, Pending
	if m.NextAttempt.IsZero() {
		m.NextAttempt = m.Created
	}
	if err := putJSON(b, idKey(id), m); err != nil {
		return err
	}
	return ix.set(id, Pending)
}

// Enqueue adds a message to the outbox.
func (s *Store) Enqueue(m Message) (uint64, error) {
	err := s.update(func(tx *bolt.Tx) error { return enqueue(tx, &m) })
	return m.ID, err
}

func getMessage(b *bolt.Bucket, k []byte) (*Message, error) {
	v := b.Get(k)
	if v == nil {
		return nil, fmt.Errorf("message %d: %w", binary.BigEndian.Uint64(k), ErrNotFound)
	}
	var m Message
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, fmt.Errorf("decode message %x: %w", k, err)
	}
	return &m, nil
}

// NextPending returns the oldest pending message (the one the sender must
// deliver before any later one), or nil.
func (s *Store) NextPending() (*Message, error) {
	var out *Message
	err := s.view(func(tx *bolt.Tx) error {
		ix := indexOf(tx)
		if ix == nil {
			page, err := scanOutbox(tx, Pending, 1, true)
			if len(page.Messages) > 0 {
				out = &page.Messages[0]
			}
			return err
		}
		k, _ := ix.pending.Cursor().First()
		if k == nil {
			return nil
		}
		var err error
		out, err = getMessage(bucket(tx, bOutbox), k)
		return err
	})
	return out, err
}

// UpdateMessage stores a message's delivery state.
func (s *Store) UpdateMessage(m Message) error {
	return s.update(func(tx *bolt.Tx) error {
		ix, err := ensureIndex(tx)
		if err != nil {
			return err
		}
		b := bucket(tx, bOutbox)
		if b.Get(idKey(m.ID)) == nil {
			return fmt.Errorf("message %d: %w", m.ID, ErrNotFound)
		}
		if err := putJSON(b, idKey(m.ID), m); err != nil {
			return err
		}
		return ix.set(m.ID, m.Status)
	})
}

// Messages returns up to limit messages, newest first (all statuses; limit
// 0: every message, which reads the whole outbox).
func (s *Store) Messages(limit int) ([]Message, error) {
	page, err := s.Outbox("", limit)
	return page.Messages, err
}

// OutboxPage is the newest messages of the outbox and its counts.
type OutboxPage struct {
	Pending  int       `json:"pending"`
	Failed   int       `json:"failed"`
	Messages []Message `json:"messages"`
}

// Outbox returns the counts of pending and failed messages and up to limit
// messages of a status ("": any), newest first; limit 0 means all. Its cost
// grows with limit, not with the outbox (a sent-only list skips the
// pending and failed messages among the newest).
func (s *Store) Outbox(status string, limit int) (OutboxPage, error) {
	var page OutboxPage
	err := s.view(func(tx *bolt.Tx) error {
		ix := indexOf(tx)
		if ix == nil {
			var err error
			page, err = scanOutbox(tx, status, limit, false)
			return err
		}
		page.Pending, page.Failed = int(ix.pending.Sequence()), int(ix.failed.Sequence())
		ob := bucket(tx, bOutbox)
		full := func(n int) bool { return limit > 0 && n >= limit }
		switch status {
		case Pending, Failed:
			b := ix.pending
			if status == Failed {
				b = ix.failed
			}
			c := b.Cursor()
			for k, _ := c.Last(); k != nil && !full(len(page.Messages)); k, _ = c.Prev() {
				m, err := getMessage(ob, k)
				if err != nil {
					return err
				}
				page.Messages = append(page.Messages, *m)
			}
			return nil
		}
		// Sent and logged messages are not indexed: a list of one of them
		// skips the indexed ones unread and the other by its status.
		c := ob.Cursor()
		for k, v := c.Last(); k != nil && !full(len(page.Messages)); k, v = c.Prev() {
			if status != "" && (ix.pending.Get(k) != nil || ix.failed.Get(k) != nil) {
				continue
			}
			var m Message
			if err := json.Unmarshal(v, &m); err != nil {
				return fmt.Errorf("decode message %x: %w", k, err)
			}
			if status != "" && m.Status != status {
				continue
			}
			page.Messages = append(page.Messages, m)
		}
		return nil
	})
	return page, err
}

// scanOutbox reads the outbox without its index (a file not yet indexed):
// the counts and up to limit messages of a status, newest first; or, when
// oldest is set, the oldest limit messages of the status without counts.
func scanOutbox(tx *bolt.Tx, status string, limit int, oldest bool) (OutboxPage, error) {
	var page OutboxPage
	c := bucket(tx, bOutbox).Cursor()
	first, next := c.Last, c.Prev
	if oldest {
		first, next = c.First, c.Next
	}
	for k, v := first(); k != nil; k, v = next() {
		var m Message
		if err := json.Unmarshal(v, &m); err != nil {
			return page, fmt.Errorf("decode message %x: %w", k, err)
		}
		switch m.Status {
		case Pending:
			page.Pending++
		case Failed:
			page.Failed++
		}
		if (status == "" || m.Status == status) && (limit <= 0 || len(page.Messages) < limit) {
			page.Messages = append(page.Messages, m)
			if oldest && len(page.Messages) == limit {
				break // the next pending message: no counts wanted
			}
		}
	}
	return page, nil
}

// pruneBatch bounds one prune transaction.
const pruneBatch = 1000

// PruneMessages drops sent, logged and failed messages created before the time and
// returns how many it dropped; pending messages stay. Ids follow creation,
// so it reads from the oldest and stops at the first message created at or
// after the time: its cost grows with what it drops, not with the outbox.
func (s *Store) PruneMessages(before time.Time) (int, error) {
	total := 0
	for {
		n, more := 0, false
		err := s.update(func(tx *bolt.Tx) error {
			ix, err := ensureIndex(tx)
			if err != nil {
				return err
			}
			b := bucket(tx, bOutbox)
			var old [][]byte
			c := b.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if ix.pending.Get(k) != nil {
					continue
				}
				var m struct {
					Created time.Time `json:"created"`
				}
				if err := json.Unmarshal(v, &m); err != nil {
					return fmt.Errorf("decode message %x: %w", k, err)
				}
				if !m.Created.Before(before) {
					break
				}
				if len(old) == pruneBatch {
					more = true
					break
				}
				old = append(old, append([]byte{}, k...))
			}
			for _, k := range old {
				if err := b.Delete(k); err != nil {
					return err
				}
				if err := setMember(ix.failed, k, false); err != nil {
					return err
				}
			}
			n = len(old)
			return nil
		})
		total += n
		if err != nil || !more {
			return total, err
		}
	}
}
