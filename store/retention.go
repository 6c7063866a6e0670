package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// DefaultRawWindow is how long raw history rows are kept before Compact
// rolls them into daily rows.
const DefaultRawWindow = 90 * 24 * time.Hour

// MinRawWindow is the shortest raw window: the digest, the alert engine's
// 7-day median and the 7-day availability read raw rows.
const MinRawWindow = 8 * 24 * time.Hour

// CompactStats says what a Compact did.
type CompactStats struct {
	// Cutoff is the start of the oldest day kept raw.
	Cutoff time.Time `json:"cutoff"`
	// Offers had raw rows rolled up; RawRows were removed and Days daily
	// rows written in their place.
	Offers  int `json:"offers"`
	RawRows int `json:"raw_rows"`
	Days    int `json:"days"`
	// IndexPruned change-index entries older than the cutoff were removed.
	IndexPruned int `json:"index_pruned"`
	// SeriesPruned best-series points older than the cutoff were removed
	// (the last of each sub-series before it stays).
	SeriesPruned int `json:"series_pruned"`
}

// SeriesRetention is how far back the stored best series keeps its points
// (history answers reach 31 days back; older ones have no use): Compact
// drops older points but the last of each sub-series, the state then.
const SeriesRetention = 32 * 24 * time.Hour

// compactBatch bounds one transaction of Compact (raw rows rolled up).
const compactBatch = 2_000

// Compact rolls every offer's raw history rows from before the raw window
// (window back from now, rounded down to a UTC day; at least MinRawWindow)
// into one row per offer and month holding a daily open, min, max and close
// for each day the offer changed. History then returns those days as
// Daily rows. It works in bounded transactions, so the daemon runs it
// while it serves; running it again finds nothing to do.
func (s *Store) Compact(now time.Time, window time.Duration) (CompactStats, error) {
	window = max(window, MinRawWindow)
	cut := now.Add(-window).UTC().Truncate(24 * time.Hour)
	st := CompactStats{Cutoff: cut}
	next := uint32(0)
	for done := false; !done; {
		err := s.update(func(tx *bolt.Tx) error {
			var err error
			next, done, err = compactFrom(tx, next, cut, &st)
			return err
		})
		if err != nil {
			return st, fmt.Errorf("compact history: %w", err)
		}
	}
	for more := true; more; {
		err := s.update(func(tx *bolt.Tx) error {
			n, err := pruneCount(bucket(tx, bChangeIdx), cut)
			st.IndexPruned += n
			more = n >= 1000
			return err
		})
		if err != nil {
			return st, fmt.Errorf("compact change index: %w", err)
		}
	}
	scut := now.Add(-SeriesRetention).UTC().Truncate(24 * time.Hour)
	if cut.After(scut) {
		scut = cut
	}
	err := s.update(func(tx *bolt.Tx) error {
		n, err := compactSeries(tx, scut)
		st.SeriesPruned = n
		return err
	})
	if err != nil {
		return st, fmt.Errorf("compact best series: %w", err)
	}
	return st, nil
}

// pruneCount deletes up to 1000 keys before the time and counts them.
func pruneCount(b *bolt.Bucket, before time.Time) (int, error) {
	limit := timeKey(before)
	var old [][]byte
	c := b.Cursor()
	for k, _ := c.First(); k != nil && bytes.Compare(k, limit) < 0 && len(old) < 1000; k, _ = c.Next() {
		old = append(old, append([]byte{}, k...))
	}
	for _, k := range old {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(old), nil
}

// offerRollup is the work Compact does for one offer.
type offerRollup struct {
	id     uint32
	months map[int64][]byte // month start (ns) → existing month row, if any
	raw    [][]byte         // keys of the raw rows rolled up
	days   []dayOf
}

// monthRef is a month row seen by the cursor, not yet decoded.
type monthRef struct {
	at   int64
	k, v []byte
}

type dayOf struct {
	month int64
	row   dayRow
}

// compactFrom rolls up the offers from id on until a batch is full; it
// returns the id to go on from and whether every offer is done.
func compactFrom(tx *bolt.Tx, from uint32, cut time.Time, st *CompactStats) (uint32, bool, error) {
	hb := bucket(tx, bHist)
	c := hb.Cursor()
	var work []*offerRollup
	rows := 0
	k, v := c.Seek(idBytes(from))
	for k != nil {
		if rows >= compactBatch {
			break
		}
		if len(k) != 12 {
			k, v = c.Next()
			continue
		}
		id := binary.BigEndian.Uint32(k)
		w := &offerRollup{id: id, months: map[int64][]byte{}}
		var last *dayRow // the state in effect before the next raw row
		var lastClose float64
		prevVanished := true
		var cur *dayRow
		var curMonth int64
		flush := func() {
			if cur != nil {
				w.days = append(w.days, dayOf{curMonth, *cur})
				cur = nil
			}
		}
		// An offer's month rows are read only when it has raw rows to roll
		// up: most offers have none on a daily run, and decoding and
		// copying every month row of every offer each day made a year of
		// daily compactions quadratic. Until this batch writes (after the
		// scan), the cursor's values stay valid uncopied.
		var pending []monthRef
		takeMonth := func(at int64, k, v []byte) error {
			days, err := decodeMonth(v)
			if err != nil {
				return fmt.Errorf("decode history %x: %w", k, err)
			}
			w.months[at] = append([]byte{}, v...)
			if n := len(days); n > 0 {
				d := days[n-1]
				last, lastClose, prevVanished = &d, d.close, flagEvent(d.flags) == Vanished
			}
			return nil
		}
		rolling := false
		for ; k != nil && len(k) == 12 && binary.BigEndian.Uint32(k) == id; k, v = c.Next() {
			at := keyTime(k[4:])
			if len(v) > 0 && v[0]&rowMonth != 0 {
				if !rolling {
					pending = append(pending, monthRef{at.UnixNano(), k, v})
					continue
				}
				if err := takeMonth(at.UnixNano(), k, v); err != nil {
					return 0, false, err
				}
				continue
			}
			if !at.Before(cut) {
				break
			}
			if !rolling {
				rolling = true
				for _, m := range pending {
					if err := takeMonth(m.at, m.k, m.v); err != nil {
						return 0, false, err
					}
				}
				pending = nil
			}
			raw, err := decodeRaw(v)
			if err != nil {
				return 0, false, fmt.Errorf("decode history %x: %w", k, err)
			}
			w.raw = append(w.raw, append([]byte{}, k...))
			day := at.Truncate(24 * time.Hour)
			month := time.Date(day.Year(), day.Month(), 1, 0, 0, 0, 0, time.UTC).UnixNano()
			if cur == nil || curMonth != month || cur.day != day.Day() {
				flush()
				cur = &dayRow{day: day.Day(), open: raw.price, low: math.Inf(1), high: math.Inf(-1)}
				curMonth = month
				if last != nil && !prevVanished {
					cur.open = lastClose
					cur.low, cur.high = lastClose, lastClose
				}
			}
			if flagEvent(raw.flags) != Vanished || cur.low > cur.high {
				cur.low, cur.high = math.Min(cur.low, raw.price), math.Max(cur.high, raw.price)
			}
			cur.close, cur.flags, cur.terms = raw.price, raw.flags, raw.terms
			last, lastClose, prevVanished = cur, raw.price, flagEvent(raw.flags) == Vanished
		}
		flush()
		if len(w.raw) > 0 {
			work = append(work, w)
			rows += len(w.raw)
		}
		// Skip the offer's rows inside the window.
		if id == math.MaxUint32 {
			k = nil
			break
		}
		if k != nil && len(k) == 12 && binary.BigEndian.Uint32(k) == id {
			k, v = c.Seek(idBytes(id + 1))
		}
	}
	var next uint32
	done := k == nil
	if !done {
		next = binary.BigEndian.Uint32(k)
	}
	for _, w := range work {
		for _, rk := range w.raw {
			if err := hb.Delete(rk); err != nil {
				return 0, false, err
			}
		}
		byMonth := map[int64][]byte{}
		var order []int64
		for _, d := range w.days {
			b, ok := byMonth[d.month]
			if !ok {
				if old, ok := w.months[d.month]; ok {
					b = old
				} else {
					b = []byte{rowMonth}
				}
				order = append(order, d.month)
			}
			byMonth[d.month] = appendDay(b, d.row)
		}
		for _, m := range order {
			if err := hb.Put(histKey(w.id, time.Unix(0, m)), byMonth[m]); err != nil {
				return 0, false, err
			}
		}
		st.Offers++
		st.RawRows += len(w.raw)
		st.Days += len(w.days)
	}
	return next, done, nil
}

// Rewrite copies the database at path (which no process may hold) into a
// fresh file with every page full and replaces it: bbolt files never
// shrink, so this returns the space Compact and pruning freed. It returns
// the sizes before and after.
func Rewrite(path string) (before, after int64, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	before = fi.Size()
	if err := checkFile(path); err != nil {
		return before, 0, err
	}
	var src *bolt.DB
	err = guard(path, func() (err error) {
		src, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
		return err
	})
	if err != nil {
		return before, 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer src.Close()
	tmp := path + ".rewrite"
	os.Remove(tmp)
	dst, err := bolt.Open(tmp, 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		return before, 0, err
	}
	if err := guard(path, func() error { return bolt.Compact(dst, src, 64<<20) }); err != nil {
		dst.Close()
		os.Remove(tmp)
		return before, 0, fmt.Errorf("rewrite %s: %w", path, err)
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		return before, 0, err
	}
	if err := dst.Close(); err != nil {
		return before, 0, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return before, 0, err
	}
	fi, err = os.Stat(path)
	if err != nil {
		return before, 0, err
	}
	return before, fi.Size(), nil
}
