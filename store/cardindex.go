package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// The card index lists, per card, every offer id any of whose rows named
// that card, so one card's history reads its own offers instead of every
// change in the window. Its keys are <card> 0x00 <first id, 4 bytes> and
// its values sorted 4-byte ids, at most cardChunk per key: a first load of
// 100k offers is a few hundred puts (a key per offer made bbolt grow one
// node to 100k entries: +50 MB allocated), and a run's new offers, whose
// ids are the highest, rewrite the last chunk of their card.
var (
	bCardIDs = []byte("card_ids")
	// kCardIndex in the meta bucket says bCardIDs covers every row (it is
	// built once from the rows of a file written before it existed).
	kCardIndex = []byte("card_index")
)

// cardChunk is the most ids one card index value holds.
const cardChunk = 1024

type cardID struct {
	card string
	id   uint32
}

// chunk is one card index value and its key's first id.
type chunk struct {
	first uint32
	ids   []uint32
	dirty bool
	moved bool // first changed: the old key goes
}

// cardChunks reads the chunks of a card, in id order.
func cardChunks(b *bolt.Bucket, card string) ([]chunk, []byte, error) {
	prefix := append([]byte(card), 0)
	var out []chunk
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) != len(prefix)+4 || len(v)%4 != 0 || len(v) == 0 {
			return nil, nil, fmt.Errorf("card index %q: bad entry %x", card, k)
		}
		out = append(out, chunk{first: binary.BigEndian.Uint32(k[len(prefix):]), ids: decodeIDs(v)})
	}
	return out, prefix, nil
}

// indexCards adds the (card, id) pairs not in the index yet.
func indexCards(b *bolt.Bucket, pairs []cardID) error {
	slices.SortFunc(pairs, func(a, b cardID) int {
		if c := strings.Compare(a.card, b.card); c != 0 {
			return c
		}
		return int(int64(a.id) - int64(b.id))
	})
	pairs = slices.Compact(pairs)
	for i := 0; i < len(pairs); {
		card := pairs[i].card
		j := i
		for j < len(pairs) && pairs[j].card == card {
			j++
		}
		if err := indexCard(b, card, pairs[i:j]); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// indexCard adds the sorted ids of one card.
func indexCard(b *bolt.Bucket, card string, pairs []cardID) error {
	chunks, prefix, err := cardChunks(b, card)
	if err != nil {
		return err
	}
	for _, p := range pairs {
		// The chunk whose first id is the greatest at most p.id (the
		// first chunk when p.id is below them all).
		ci, found := slices.BinarySearchFunc(chunks, p.id, func(c chunk, id uint32) int { return int(int64(c.first) - int64(id)) })
		if !found {
			ci--
		}
		if len(chunks) == 0 {
			chunks = append(chunks, chunk{first: p.id, dirty: true})
			ci = 0
		}
		if ci < 0 {
			ci = 0
		}
		ch := &chunks[ci]
		at, present := slices.BinarySearch(ch.ids, p.id)
		if present {
			continue
		}
		ch.ids = slices.Insert(ch.ids, at, p.id)
		ch.dirty = true
		if ch.ids[0] != ch.first {
			ch.moved = true
		}
	}
	key := func(first uint32) []byte { return binary.BigEndian.AppendUint32(slices.Clip(prefix), first) }
	for _, ch := range chunks {
		if !ch.dirty {
			continue
		}
		if ch.moved {
			if err := b.Delete(key(ch.first)); err != nil {
				return err
			}
		}
		for ids := ch.ids; len(ids) > 0; {
			n := min(len(ids), cardChunk)
			if len(ids) > cardChunk && len(ids) < 2*cardChunk {
				n = len(ids) / 2 // two halves, so both have room
			}
			v := make([]byte, 0, 4*n)
			for _, id := range ids[:n] {
				v = binary.BigEndian.AppendUint32(v, id)
			}
			if err := b.Put(key(ids[0]), v); err != nil {
				return err
			}
			ids = ids[n:]
		}
	}
	return nil
}

// buildCardIndex fills the card index from every stored row, once, for a
// file written before the index existed.
func buildCardIndex(tx *bolt.Tx) error {
	m := tx.Bucket(bMeta)
	if m.Get(kCardIndex) != nil {
		return nil
	}
	r := newHistReader(tx)
	c := r.hist.Cursor()
	var pairs []cardID
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) < 4 {
			continue
		}
		rows, err := r.rows(nil, k, v)
		if err != nil {
			return err
		}
		id := binary.BigEndian.Uint32(k)
		for _, row := range rows {
			if row.Card != "" && (len(pairs) == 0 || pairs[len(pairs)-1] != cardID{row.Card, id}) {
				pairs = append(pairs, cardID{row.Card, id})
			}
		}
	}
	if err := indexCards(bucket(tx, bCardIDs), pairs); err != nil {
		return err
	}
	return m.Put(kCardIndex, []byte("1"))
}
