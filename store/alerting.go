package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Buckets of the alerting side (schema v1, created at open when missing).
var (
	bSeries   = []byte("series")
	bOutbox   = []byte("outbox")
	bSilences = []byte("silences")
	bNotify   = []byte("notify")
)

// ErrNotFound is returned for a missing record.
var ErrNotFound = errors.New("not found")

func idKey(id uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, id)
	return b
}

// ChangeRetention is how long the time-ordered change log and the watch
// series are kept (the digest looks back 7 days).
const ChangeRetention = 30 * 24 * time.Hour

// Change is one history event in time order, with the price before it, for
// digests ("biggest moves", "new and vanished offers").
type Change struct {
	At       time.Time `json:"at"`
	Key      string    `json:"key"`
	Source   string    `json:"source"`
	Card     string    `json:"card,omitempty"`
	Event    Event     `json:"event"`
	OldPrice float64   `json:"old_price,omitempty"`
	NewPrice float64   `json:"new_price,omitempty"`
	Currency string    `json:"currency"`
}

// Sample is one point of a watch's best cost over time.
type Sample struct {
	At   time.Time `json:"at"`
	Cost float64   `json:"cost"`
	Key  string    `json:"key,omitempty"`
}

// AddSample appends a watch's best cost; an unchanged value within an hour
// of the last sample is not stored again.
func (s *Store) AddSample(watch string, sm Sample) error {
	repeat := false
	if err := s.view(func(tx *bolt.Tx) error {
		if b := bucket(tx, bSeries).Bucket([]byte(watch)); b != nil {
			if k, v := b.Cursor().Last(); k != nil {
				var last Sample
				repeat = json.Unmarshal(v, &last) == nil && last.Cost == sm.Cost && last.Key == sm.Key && sm.At.Sub(last.At) < time.Hour
			}
		}
		return nil
	}); err != nil || repeat {
		return err // a repeat is not stored: no write transaction
	}
	return s.update(func(tx *bolt.Tx) error {
		b, err := bucket(tx, bSeries).CreateBucketIfNotExists([]byte(watch))
		if err != nil {
			return err
		}
		if k, v := b.Cursor().Last(); k != nil {
			var last Sample
			if json.Unmarshal(v, &last) == nil && last.Cost == sm.Cost && last.Key == sm.Key && sm.At.Sub(last.At) < time.Hour {
				return nil
			}
		}
		if err := putJSON(b, timeKey(sm.At), sm); err != nil {
			return err
		}
		return pruneBefore(b, sm.At.Add(-ChangeRetention))
	})
}

// Series returns a watch's samples from since on, oldest first.
func (s *Store) Series(watch string, since time.Time) ([]Sample, error) {
	var out []Sample
	err := s.view(func(tx *bolt.Tx) error {
		b := bucket(tx, bSeries).Bucket([]byte(watch))
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Seek(timeKey(since)); k != nil; k, v = c.Next() {
			var sm Sample
			if err := json.Unmarshal(v, &sm); err != nil {
				return err
			}
			out = append(out, sm)
		}
		return nil
	})
	return out, err
}

func pruneBefore(b *bolt.Bucket, before time.Time) error {
	_, err := pruneCount(b, before)
	return err
}

// Silence mutes posts for watches matching Watch ("*" for all) until Ends.
type Silence struct {
	ID        uint64    `json:"id"`
	Watch     string    `json:"watch"`
	Starts    time.Time `json:"starts"`
	Ends      time.Time `json:"ends"`
	Reason    string    `json:"reason"`
	CreatedBy string    `json:"created_by,omitempty"`
}

// AddSilence stores a silence and returns its id.
func (s *Store) AddSilence(sl Silence) (uint64, error) {
	err := s.update(func(tx *bolt.Tx) error {
		b := bucket(tx, bSilences)
		id, err := b.NextSequence()
		if err != nil {
			return err
		}
		sl.ID = id
		return putJSON(b, idKey(id), sl)
	})
	return sl.ID, err
}

// Silences lists stored silences (expired ones included), oldest first.
func (s *Store) Silences() ([]Silence, error) {
	var out []Silence
	err := s.view(func(tx *bolt.Tx) error {
		return bucket(tx, bSilences).ForEach(func(k, v []byte) error {
			var sl Silence
			if err := json.Unmarshal(v, &sl); err != nil {
				return err
			}
			out = append(out, sl)
			return nil
		})
	})
	return out, err
}

// RemoveSilence deletes a silence; ErrNotFound if there is none.
func (s *Store) RemoveSilence(id uint64) error {
	return s.update(func(tx *bolt.Tx) error {
		b := bucket(tx, bSilences)
		if b.Get(idKey(id)) == nil {
			return fmt.Errorf("silence %d: %w", id, ErrNotFound)
		}
		return b.Delete(idKey(id))
	})
}

// Decide runs fn over the stored alert state of a key (nil bytes if none)
// and, in the same transaction, stores the state fn returns and enqueues its
// messages: a decision, its post and its record commit together, so a
// restart never repeats a decision. It returns the enqueued ids.
func (s *Store) Decide(key string, fn func(state []byte) (newState any, msgs []Message, err error)) ([]uint64, error) {
	// Most evaluations change nothing: decide in a read transaction, and
	// write (deciding again in the write transaction) only when the state
	// changes or a message goes out. A write transaction costs two fsyncs.
	var unchanged bool
	err := s.view(func(tx *bolt.Tx) error {
		var cur []byte
		if v := bucket(tx, bNotify).Get([]byte(key)); v != nil {
			cur = append([]byte{}, v...)
		}
		st, msgs, err := fn(cur)
		if err != nil || len(msgs) > 0 {
			return err
		}
		if st == nil {
			unchanged = true
			return nil
		}
		b, err := json.Marshal(st)
		unchanged = err == nil && cur != nil && bytes.Equal(b, cur)
		return nil
	})
	if err != nil || unchanged {
		return nil, err
	}
	var ids []uint64
	err = s.update(func(tx *bolt.Tx) error {
		b := bucket(tx, bNotify)
		var cur []byte
		if v := b.Get([]byte(key)); v != nil {
			cur = append([]byte{}, v...)
		}
		st, msgs, err := fn(cur)
		if err != nil {
			return err
		}
		if st != nil {
			if err := putJSON(b, []byte(key), st); err != nil {
				return err
			}
		}
		for i := range msgs {
			if err := enqueue(tx, &msgs[i]); err != nil {
				return err
			}
			ids = append(ids, msgs[i].ID)
		}
		return nil
	})
	return ids, err
}

// NotifyState reads the stored state of a key into v; ok is false if none.
func (s *Store) NotifyState(key string, v any) (ok bool, err error) {
	err = s.view(func(tx *bolt.Tx) error {
		data := bucket(tx, bNotify).Get([]byte(key))
		if data == nil {
			return nil
		}
		ok = true
		return json.Unmarshal(data, v)
	})
	return ok, err
}
