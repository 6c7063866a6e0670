package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/pricewatch/pricewatch"
)

// Buckets of the offers' history (schema 2).
var (
	bSeen      = []byte("seen")
	bOfferIDs  = []byte("offer_ids")
	bOfferKeys = []byte("offer_keys")
	bTerms     = []byte("terms")
	bTermIDs   = []byte("term_ids")
	bHist      = []byte("hist")
	bChangeIdx = []byte("change_index")
)

// Fill percents of the buckets whose keys arrive in order: an offer's
// history rows (its id, then time: each offer's rows grow at its end),
// the time-ordered change index and the id table are appended to, so their
// pages are split full instead of half full.
//
// An offer's later rows land in the middle of the history bucket: there
// the default split (half full) leaves room for the next ones, so a run
// whose rows are mostly for new offers (appended after every id) fills its
// pages and any other keeps the default.
const fillAppend = 1.0

// histTx is the history side of one write transaction.
type histTx struct {
	ids, keys, terms, termIDs, hist, idx, cards *bolt.Bucket
	termCache                                   map[string]uint64
	fresh                                       int    // ids given in this transaction
	slab                                        []byte // values written
}

func newHistTx(tx *bolt.Tx) *histTx {
	h := &histTx{
		ids: bucket(tx, bOfferIDs), keys: bucket(tx, bOfferKeys),
		terms: bucket(tx, bTerms), termIDs: bucket(tx, bTermIDs),
		hist: bucket(tx, bHist), idx: bucket(tx, bChangeIdx), cards: bucket(tx, bCardIDs),
		termCache: map[string]uint64{},
	}
	h.idx.FillPercent = fillAppend
	h.keys.FillPercent = fillAppend
	h.terms.FillPercent = fillAppend
	return h
}

// offerID returns the interned id of an offer key, creating one.
func (h *histTx) offerID(source, key string) (uint32, error) {
	if v := h.ids.Get([]byte(key)); len(v) == 4 {
		return binary.BigEndian.Uint32(v), nil
	}
	seq, err := h.keys.NextSequence()
	if err != nil {
		return 0, err
	}
	if seq > 1<<32-1 {
		return 0, fmt.Errorf("offer ids exhausted")
	}
	id := uint32(seq)
	h.fresh++
	// Values stay referenced until the commit: they live in a slab.
	if cap(h.slab)-len(h.slab) < 8+len(source)+len(key) {
		h.slab = make([]byte, 0, max(256<<10, 8+len(source)+len(key)))
	}
	n := len(h.slab)
	h.slab = binary.BigEndian.AppendUint32(h.slab, id)
	idv := h.slab[n:len(h.slab):len(h.slab)]
	n = len(h.slab)
	h.slab = append(append(append(h.slab, source...), 0), key...)
	kv := h.slab[n:len(h.slab):len(h.slab)]
	if err := h.ids.Put([]byte(key), idv); err != nil {
		return 0, err
	}
	return id, h.keys.Put(idv, kv)
}

// termsID returns the interned id of a terms tuple, creating one.
func (h *histTx) termsID(t terms) (uint64, error) {
	enc := encodeTerms(t)
	if id, ok := h.termCache[string(enc)]; ok {
		return id, nil
	}
	if v := h.termIDs.Get(enc); v != nil {
		id, _ := binary.Uvarint(v)
		h.termCache[string(enc)] = id
		return id, nil
	}
	id, err := h.terms.NextSequence()
	if err != nil {
		return 0, err
	}
	if err := h.terms.Put(binary.AppendUvarint(nil, id), enc); err != nil {
		return 0, err
	}
	if err := h.termIDs.Put(enc, binary.AppendUvarint(nil, id)); err != nil {
		return 0, err
	}
	h.termCache[string(enc)] = id
	return id, nil
}

func termsOf(o *pricewatch.Offer) terms {
	return terms{Card: o.Card, GPUs: o.GPUs, Currency: o.Currency, Stock: o.Stock}
}

// change is one history row to write.
type change struct {
	offer *pricewatch.Offer
	event Event
	id    uint32 // the offer's interned id, set by writeChanges
}

// writeChanges writes the history rows and change-index entries of one
// run at time at. Rows are written in offer-id order, so a first run's
// rows are appended in order.
func (h *histTx) writeChanges(at time.Time, chs []change) error {
	type row struct {
		id uint32
		ch change
	}
	rows := make([]row, 0, len(chs))
	// New offers get their ids in key order.
	if byKey := func(a, b change) int { return strings.Compare(a.offer.Key, b.offer.Key) }; !slices.IsSortedFunc(chs, byKey) {
		slices.SortFunc(chs, byKey)
	}
	appeared := 0
	for _, ch := range chs {
		if ch.event == Appeared {
			appeared++
		}
	}
	if appeared > 1000 && appeared >= len(chs)*9/10 {
		h.ids.FillPercent = fillAppend // a first load: its keys arrive in order
	}
	for i, ch := range chs {
		id, err := h.offerID(ch.offer.Source, ch.offer.Key)
		if err != nil {
			return err
		}
		chs[i].id = id
		rows = append(rows, row{id, chs[i]})
	}
	slices.SortFunc(rows, func(a, b row) int { return int(int64(a.id) - int64(b.id)) })
	if h.fresh >= len(rows)*9/10 && len(rows) > 0 {
		h.hist.FillPercent = fillAppend
	}
	var slab []byte
	k := make([]byte, 12) // bbolt copies keys
	for _, r := range rows {
		o := r.ch.offer
		tid, err := h.termsID(termsOf(o))
		if err != nil {
			return err
		}
		if cap(slab)-len(slab) < 24 {
			slab = make([]byte, 0, 64<<10)
		}
		n := len(slab)
		slab = appendRaw(slab, r.ch.event, o.Available, o.PricePerGPUHour, tid)
		binary.BigEndian.PutUint32(k, r.id)
		binary.BigEndian.PutUint64(k[4:], uint64(at.UnixNano()))
		if err := h.hist.Put(k, slab[n:len(slab):len(slab)]); err != nil {
			return err
		}
	}
	ids := make([]uint32, len(rows))
	for i, r := range rows {
		ids[i] = r.id
	}
	pairs := make([]cardID, 0, len(rows))
	for _, r := range rows {
		if c := r.ch.offer.Card; c != "" {
			pairs = append(pairs, cardID{c, r.id})
		}
	}
	if err := indexCards(h.cards, pairs); err != nil {
		return err
	}
	return h.indexChanges(at, ids)
}

// indexChanges adds offer ids to the change index entry of time at: one
// key per run time whose value is the sorted ids (4 bytes each), instead
// of a key per change (12 bytes plus bbolt's 16 per element), so a change
// costs the index 4 bytes. Runs of two sources at the same instant share
// the entry.
func (h *histTx) indexChanges(at time.Time, ids []uint32) error {
	if len(ids) == 0 {
		return nil
	}
	k := timeKey(at)
	if old := h.idx.Get(k); len(old) > 0 {
		ids = append(ids, decodeIDs(old)...)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	v := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		v = binary.BigEndian.AppendUint32(v, id)
	}
	return h.idx.Put(k, v)
}

// decodeIDs reads a change index value.
func decodeIDs(v []byte) []uint32 {
	out := make([]uint32, 0, len(v)/4)
	for ; len(v) >= 4; v = v[4:] {
		out = append(out, binary.BigEndian.Uint32(v))
	}
	return out
}

// histReader reads history rows in one read transaction.
type histReader struct {
	ids, keys, terms, hist *bolt.Bucket
	termCache              map[uint64]terms
	keyCache               map[uint32][2]string
}

func newHistReader(tx *bolt.Tx) *histReader {
	return &histReader{ids: bucket(tx, bOfferIDs), keys: bucket(tx, bOfferKeys), terms: bucket(tx, bTerms),
		hist: bucket(tx, bHist), termCache: map[uint64]terms{}, keyCache: map[uint32][2]string{}}
}

func (r *histReader) id(key string) (uint32, bool) {
	v := r.ids.Get([]byte(key))
	if len(v) != 4 {
		return 0, false
	}
	return binary.BigEndian.Uint32(v), true
}

// source and key of an id.
func (r *histReader) key(id uint32) (source, key string, err error) {
	if sk, ok := r.keyCache[id]; ok {
		return sk[0], sk[1], nil
	}
	v := r.keys.Get(idBytes(id))
	i := bytes.IndexByte(v, 0)
	if i < 0 {
		return "", "", fmt.Errorf("offer id %d has no key", id)
	}
	source, key = string(v[:i]), string(v[i+1:])
	r.keyCache[id] = [2]string{source, key}
	return source, key, nil
}

func (r *histReader) termsOf(id uint64) (terms, error) {
	if t, ok := r.termCache[id]; ok {
		return t, nil
	}
	v := r.terms.Get(binary.AppendUvarint(nil, id))
	if v == nil {
		return terms{}, fmt.Errorf("terms %d missing", id)
	}
	t, err := decodeTerms(v)
	if err != nil {
		return t, err
	}
	r.termCache[id] = t
	return t, nil
}

// rows appends the history rows of key k (an id and time) with value v:
// one raw row, or a month row's days.
func (r *histReader) rows(out []HistoryRow, k, v []byte) ([]HistoryRow, error) {
	if len(v) > 0 && v[0]&rowMonth != 0 {
		days, err := decodeMonth(v)
		if err != nil {
			return out, fmt.Errorf("decode history %x: %w", k, err)
		}
		month := keyTime(k[4:])
		for _, d := range days {
			t, err := r.termsOf(d.terms)
			if err != nil {
				return out, err
			}
			ev := Daily
			if flagEvent(d.flags) == Vanished {
				ev = Vanished
			}
			out = append(out, HistoryRow{At: month.AddDate(0, 0, d.day-1), Event: ev, Card: t.Card, GPUs: t.GPUs,
				PricePerGPUHour: d.close, Currency: t.Currency, Available: flagAvailability(d.flags), Stock: t.Stock,
				Open: d.open, Min: d.low, Max: d.high})
		}
		return out, nil
	}
	raw, err := decodeRaw(v)
	if err != nil {
		return out, fmt.Errorf("decode history %x: %w", k, err)
	}
	t, err := r.termsOf(raw.terms)
	if err != nil {
		return out, err
	}
	return append(out, HistoryRow{At: keyTime(k[4:]), Event: flagEvent(raw.flags), Card: t.Card, GPUs: t.GPUs,
		PricePerGPUHour: raw.price, Currency: t.Currency, Available: flagAvailability(raw.flags), Stock: t.Stock}), nil
}

// history reads an offer's rows from since on (all with the zero time),
// with the row in effect at since first.
func (r *histReader) history(id uint32, since time.Time) ([]HistoryRow, error) {
	var out []HistoryRow
	prefix := idBytes(id)
	c := r.hist.Cursor()
	start := prefix
	if !since.IsZero() {
		start = histKey(id, since)
	}
	k, v := c.Seek(start)
	if !since.IsZero() {
		// The row before since is in effect at since.
		pk, pv := before(c, k)
		if pk != nil && bytes.HasPrefix(pk, prefix) {
			var err error
			if out, err = r.rows(out, pk, pv); err != nil {
				return nil, err
			}
			if len(out) > 1 {
				out = out[len(out)-1:] // of a month row, its last day
			}
		}
		k, v = c.Seek(start)
	}
	for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var err error
		if out, err = r.rows(out, k, v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// before steps back from the key a Seek found (nil: past the end).
func before(c *bolt.Cursor, found []byte) ([]byte, []byte) {
	if found == nil {
		return c.Last()
	}
	return c.Prev()
}

// priceBefore is the price of the offer's row before key k (0 if none).
func (r *histReader) priceBefore(c *bolt.Cursor, id uint32, k []byte) float64 {
	at, _ := c.Seek(k)
	pk, pv := before(c, at)
	if pk == nil || !bytes.HasPrefix(pk, idBytes(id)) {
		return 0
	}
	if len(pv) > 0 && pv[0]&rowMonth != 0 {
		days, err := decodeMonth(pv)
		if err != nil || len(days) == 0 {
			return 0
		}
		return days[len(days)-1].close
	}
	raw, err := decodeRaw(pv)
	if err != nil {
		return 0
	}
	return raw.price
}

// History returns an offer's history rows, oldest first: its raw changes,
// and for days older than the raw window (see Compact) one Daily row per
// day with a change, carrying that day's open, min, max and close.
func (s *Store) History(offerKey string) ([]HistoryRow, error) {
	var out []HistoryRow
	err := s.view(func(tx *bolt.Tx) error {
		r := newHistReader(tx)
		id, ok := r.id(offerKey)
		if !ok {
			return nil
		}
		var err error
		out, err = r.history(id, time.Time{})
		return err
	})
	return out, err
}

// Availability reads the availability share since the given time of each
// offer key (keys whose availability was never known are left out).
func (s *Store) Availability(keys []string, since, now time.Time) (map[string]float64, error) {
	out := make(map[string]float64, len(keys))
	err := s.view(func(tx *bolt.Tx) error {
		r := newHistReader(tx)
		for _, key := range keys {
			id, ok := r.id(key)
			if !ok {
				continue
			}
			rows, err := r.history(id, since)
			if err != nil {
				return err
			}
			if share, ok := AvailableShare(rows, since, now); ok {
				out[key] = share
			}
		}
		return nil
	})
	return out, err
}

// HistoryCount counts the stored history rows (a compacted month of an
// offer counts once; a size check for tests and metrics).
func (s *Store) HistoryCount() (int, error) {
	n := 0
	err := s.view(func(tx *bolt.Tx) error {
		n = bucket(tx, bHist).Stats().KeyN
		return nil
	})
	return n, err
}

// Changes returns the change-log entries from since on, oldest first (by
// time, then offer key), from the last ChangeRetention.
func (s *Store) Changes(since time.Time) ([]Change, error) {
	var out []Change
	err := s.view(func(tx *bolt.Tx) error {
		r := newHistReader(tx)
		hc := r.hist.Cursor()
		c := bucket(tx, bChangeIdx).Cursor()
		for k, v := c.Seek(timeKey(since)); k != nil; k, v = c.Next() {
			if len(k) != 8 {
				continue
			}
			start := len(out)
			if err := r.changesAt(hc, keyTime(k), decodeIDs(v), &out); err != nil {
				return err
			}
			sortByKey(out[start:])
		}
		return nil
	})
	return out, err
}

// rawAt reads the raw row at key hk and its terms (ok false when the
// row is not there: compacted into its month).
func (r *histReader) rawAt(hc *bolt.Cursor, hk []byte) (raw rawRow, t terms, ok bool, err error) {
	hkk, hv := hc.Seek(hk)
	if !bytes.Equal(hkk, hk) {
		return raw, t, false, nil
	}
	if raw, err = decodeRaw(hv); err != nil {
		return raw, t, false, err
	}
	t, err = r.termsOf(raw.terms)
	return raw, t, err == nil, err
}

// changesAt appends the changes of the offers ids at one run time.
func (r *histReader) changesAt(hc *bolt.Cursor, at time.Time, ids []uint32, out *[]Change) error {
	for _, id := range ids {
		hk := histKey(id, at)
		raw, t, ok, err := r.rawAt(hc, hk)
		if err != nil {
			return err
		}
		if !ok {
			continue // compacted away
		}
		source, key, err := r.key(id)
		if err != nil {
			return err
		}
		ch := Change{At: at, Key: key, Source: source, Card: t.Card, Event: flagEvent(raw.flags), Currency: t.Currency}
		switch ch.Event {
		case Appeared:
			ch.NewPrice = raw.price
		case Changed:
			ch.NewPrice = raw.price
			ch.OldPrice = r.priceBefore(hc, id, hk)
		case Vanished:
			ch.OldPrice = raw.price
		}
		*out = append(*out, ch)
	}
	return nil
}

func sortByKey(chs []Change) {
	slices.SortFunc(chs, func(a, b Change) int { return strings.Compare(a.Key, b.Key) })
}

// ctxEvery is how many items a long read handles between checks of its
// context.
const ctxEvery = 1024

// HistorySince reads in one transaction the rows from since on (the row
// in effect at since first, as history does) of the offers keys names
// (key → source) and of every offer the change log names since then with
// a row of card and source ("" for any); those are added to keys. A series needs no more:
// unlike Changes it neither prices each change against the row before it
// nor builds and sorts the whole window, and an offer already taken is
// not looked at again. It stops with ctx's error when ctx ends.
func (s *Store) HistorySince(ctx context.Context, keys map[string]string, since time.Time, card, source string) (map[string][]HistoryRow, error) {
	out := make(map[string][]HistoryRow, len(keys))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		r := newHistReader(tx)
		taken := make(map[uint32]bool, len(keys))
		n := 0
		tick := func() error {
			if n++; n%ctxEvery == 0 {
				return ctx.Err()
			}
			return nil
		}
		for key := range keys {
			if err := tick(); err != nil {
				return err
			}
			if id, ok := r.id(key); ok {
				taken[id] = true
				rows, err := r.history(id, since)
				if err != nil {
					return err
				}
				out[key] = rows
			} else {
				out[key] = nil
			}
		}
		// add takes an offer the index or the log names, of the source
		// asked, with its rows (read here when rows is nil).
		add := func(id uint32, rows []HistoryRow) error {
			src, key, err := r.key(id)
			if err != nil || (source != "" && src != source) {
				return err
			}
			if rows == nil {
				if rows, err = r.history(id, since); err != nil {
					return err
				}
			}
			keys[key], taken[id], out[key] = src, true, rows
			return nil
		}
		if cards := bucket(tx, bCardIDs); card != "" && cards != nil && tx.Bucket(bMeta).Get(kCardIndex) != nil {
			// The offers that ever were of the card: those with a row of it
			// from since on are the change log's ones.
			chunks, _, err := cardChunks(cards, card)
			if err != nil {
				return err
			}
			for _, ch := range chunks {
				for _, id := range ch.ids {
					if err := tick(); err != nil {
						return err
					}
					if taken[id] {
						continue
					}
					rows, err := r.history(id, since)
					if err != nil {
						return err
					}
					if slices.ContainsFunc(rows, func(h HistoryRow) bool { return !h.At.Before(since) && h.Card == card }) {
						if err := add(id, rows); err != nil {
							return err
						}
					}
				}
			}
			return nil
		}
		hc := r.hist.Cursor()
		c := bucket(tx, bChangeIdx).Cursor()
		for k, v := c.Seek(timeKey(since)); k != nil; k, v = c.Next() {
			if len(k) != 8 {
				continue
			}
			for ; len(v) >= 4; v = v[4:] {
				if err := tick(); err != nil {
					return err
				}
				id := binary.BigEndian.Uint32(v)
				if taken[id] {
					continue
				}
				_, t, ok, err := r.rawAt(hc, histKey(id, keyTime(k)))
				if err != nil {
					return err
				}
				if ok && (card == "" || t.Card == card) { // not compacted away, of the card
					if err := add(id, nil); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	return out, err
}
