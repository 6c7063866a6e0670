package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/pricewatch/pricewatch"
)

// Buckets of schema 1 that schema 2 replaces.
var (
	bHistoryV1   = []byte("history")   // <offer key> 0x00 <time> → JSON HistoryRow
	bChangelogV1 = []byte("changelog") // <time> 0x00 <offer key> → JSON Change
)

// migrateV1 turns a schema-1 file into schema 2 in the transaction that
// opens it: current offers from JSON to the binary encoding (observed-at
// from the source's seen time, pinned where an offer's differs), history
// rows to interned ids and the binary encoding, the change log to the time
// index. Every other bucket keeps its layout.
func migrateV1(tx *bolt.Tx) error {
	root := tx.Bucket(bRoot)
	ob := root.Bucket(bOffers)
	type rec struct {
		k []byte
		o pricewatch.Offer
	}
	var recs []rec
	seen := map[string]time.Time{}
	sourceOf := map[string]string{}
	err := ob.ForEach(func(k, v []byte) error {
		if len(v) > 0 && v[0] != '{' {
			return fmt.Errorf("offer %q: not schema 1 JSON", k)
		}
		var o pricewatch.Offer
		if err := json.Unmarshal(v, &o); err != nil {
			return fmt.Errorf("decode offer %q: %w", k, err)
		}
		i := bytes.IndexByte(k, 0)
		if i < 0 {
			return fmt.Errorf("offer record %q: no source", k)
		}
		src := string(k[:i])
		if o.ObservedAt.After(seen[src]) {
			seen[src] = o.ObservedAt
		}
		sourceOf[o.Key] = src
		recs = append(recs, rec{append([]byte{}, k...), o})
		return nil
	})
	if err != nil {
		return err
	}
	ob.FillPercent = fillAppend
	for _, r := range recs {
		var pin time.Time
		if !r.o.ObservedAt.Equal(seen[r.o.Source]) {
			pin = r.o.ObservedAt
		}
		if err := ob.Put(r.k, encodeOffer(nil, &r.o, pin)); err != nil {
			return err
		}
	}
	sb := root.Bucket(bSeen)
	for src, t := range seen {
		if err := sb.Put([]byte(src), timeKey(t)); err != nil {
			return err
		}
	}
	if cl := root.Bucket(bChangelogV1); cl != nil {
		if err := cl.ForEach(func(k, v []byte) error {
			var ch Change
			if err := json.Unmarshal(v, &ch); err == nil && ch.Source != "" {
				if _, ok := sourceOf[ch.Key]; !ok {
					sourceOf[ch.Key] = ch.Source
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	h := newHistTx(tx)
	if old := root.Bucket(bHistoryV1); old != nil {
		// Keys are in offer-key order, so ids are given in that order and
		// each offer's rows arrive oldest first.
		err := old.ForEach(func(k, v []byte) error {
			if len(k) < 9 || k[len(k)-9] != 0 {
				return nil
			}
			key := string(k[:len(k)-9])
			var r HistoryRow
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("decode history %q: %w", k, err)
			}
			src, ok := sourceOf[key]
			if !ok {
				src, _, _ = strings.Cut(key, "/")
			}
			id, err := h.offerID(src, key)
			if err != nil {
				return err
			}
			tid, err := h.termsID(terms{Card: r.Card, GPUs: r.GPUs, Currency: r.Currency, Stock: r.Stock})
			if err != nil {
				return err
			}
			return h.hist.Put(histKey(id, keyTime(k[len(k)-8:])), encodeRaw(r.Event, r.Available, r.PricePerGPUHour, tid))
		})
		if err != nil {
			return err
		}
		if err := root.DeleteBucket(bHistoryV1); err != nil {
			return err
		}
	}
	if cl := root.Bucket(bChangelogV1); cl != nil {
		// Schema 1's keys are time, 0, offer key: one run's changes are
		// contiguous, and go into one index entry.
		var at []byte
		var ids []uint32
		flush := func() error {
			if at == nil {
				return nil
			}
			err := h.indexChanges(keyTime(at), ids)
			at, ids = nil, nil
			return err
		}
		err := cl.ForEach(func(k, _ []byte) error {
			if len(k) < 10 || k[8] != 0 {
				return nil
			}
			v := h.ids.Get(k[9:])
			if len(v) != 4 {
				return nil // a change without a history row
			}
			if at != nil && !bytes.Equal(at, k[:8]) {
				if err := flush(); err != nil {
					return err
				}
			}
			if at == nil {
				at = append([]byte{}, k[:8]...)
			}
			ids = append(ids, binary.BigEndian.Uint32(v))
			return nil
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			return err
		}
		if err := root.DeleteBucket(bChangelogV1); err != nil {
			return err
		}
	}
	return nil
}
