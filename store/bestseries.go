package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/rank"
)

// The stored best series (issue 20): for each card, workload, mode,
// currency and source, the best offer of that selection after every run
// that changed one of its offers, so a card's history reads its own points
// instead of re-pricing every change. Keys are
//
//	card \0 workload \0 time(8, big-endian ns) mode \0 currency \0 source
//
// so one card+workload range scan yields its points in time order. One
// sub-series per source keeps each source's runs independent: a run that
// started before another but landed after it writes only its own points.
var (
	bBest     = []byte("best_series")
	kBestMeta = []byte("\x00meta") // no card name starts with \x00
)

// SeriesMeta says what the stored best series can answer.
type SeriesMeta struct {
	// FromSet is set once every source enabled when the database was
	// created has finished a first run (or the database predates this);
	// HistoryFrom is then the start of the history: earlier rows count as
	// of HistoryFrom (the first scrape's arrival order is no price move).
	// Zero with FromSet: a database older than this rule, nothing clamped.
	FromSet     bool      `json:"from_set"`
	HistoryFrom time.Time `json:"history_from,omitzero"`
	// Live: points are written at every run; Start is the first point
	// time. Real: Start is HistoryFrom, so no change before it is
	// missing; otherwise (an existing database, a profile change, a
	// compaction) the stored series answers only ranges after Start.
	Live        bool      `json:"live"`
	Start       time.Time `json:"start,omitzero"`
	Real        bool      `json:"real"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	// ProfilesSeq is the profiles' write count when the fingerprint was
	// last checked: a profile written since may reprice the history, so
	// the series answers only once a run (or a restart) checked it again.
	ProfilesSeq uint64 `json:"profiles_seq"`
	// Current: ProfilesSeq is the store's (set by BestSeries).
	Current bool `json:"-"`
}

var kProfileSeq = []byte("profiles_seq")

// bumpProfileSeq counts a write of the profiles (and drops the store's
// copy of them: a transaction that writes them may still roll back to the
// count it started from).
func (s *Store) bumpProfileSeq(tx *bolt.Tx) error {
	s.profiles.drop()
	return tx.Bucket(bMeta).Put(kProfileSeq, binary.BigEndian.AppendUint64(nil, profileSeq(tx)+1))
}

func profileSeq(tx *bolt.Tx) uint64 {
	if v := tx.Bucket(bMeta).Get(kProfileSeq); len(v) == 8 {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

// Written is one history row a run wrote: the offer as stored (a vanished
// one as it was), the event and the offer's id (the store's interned id of
// its key, which never changes and is never reused).
type Written struct {
	Offer *pricewatch.Offer
	Event Event
	ID    uint32
}

// KeyOf gives the key of an offer id (as Written.ID), "" for an unknown
// one: a tracker holding ids rather than a million keys reads a key when it
// must compare two, on equal prices.
type KeyOf func(id uint32) string

// SeriesPoint is the best of one sub-series (card, workload, mode,
// currency, source) at one time, in the sub-series' own currency. The
// cost is kept as its inputs (price per GPU-hour, GPUs rented, tokens/s of
// the rental), so a reader converting the price recomputes the cost
// exactly as a history computed from the rows does.
type SeriesPoint struct {
	At                       time.Time
	Card, Workload, Currency string
	Mode                     pricewatch.Mode
	Source                   string
	Offers                   int
	PriceKey                 string // "" when no offer is counted
	Price                    float64
	CostKey                  string // "" when none can run the workload
	// PriceID and CostID are the ids of PriceKey and CostKey; a tracker
	// may give them instead of the keys (0: none).
	PriceID, CostID            uint32
	CostPrice, TokensPerSecond float64
	GPUs                       int
	// Touch marks a row of the sub-series at At (Workload "" and no
	// values): a point is written only when its values change, a touch at
	// every run that had a row of the sub-series, as a series computed
	// from the rows has a point at each such time.
	Touch bool
}

// SeriesTracker keeps the current offers in memory and gives the points a
// run produces. The store calls it inside the run's transaction.
type SeriesTracker interface {
	// Reset replaces the state with the stored offers, each with its id.
	Reset(offers iter.Seq2[uint32, *pricewatch.Offer], profiles []rank.Profile, keys KeyOf)
	// Fingerprint names what the state is priced with.
	Fingerprint() string
	// Apply applies one run's rows and returns the fingerprint of what
	// prices are computed with (workloads and profiles); a fingerprint
	// other than the one it had means Reset is due.
	Apply(written []Written, profiles []rank.Profile, keys KeyOf) (fingerprint string, changed bool)
	// Points gives the points of the sub-series touched since the last
	// call (all: of every sub-series), at time at.
	Points(at time.Time, all bool, keys KeyOf) []SeriesPoint
}

type seriesHook struct {
	mu      sync.Mutex
	tr      SeriesTracker
	enabled []string
	broken  bool // a transaction failed after Apply: Reset is due
}

// TrackSeries registers the tracker that maintains the stored best series
// at every RecordRun, and the sources whose first runs start the history.
// It loads the stored offers into the tracker.
func (s *Store) TrackSeries(tr SeriesTracker, enabled []string) error {
	s.series.mu.Lock()
	defer s.series.mu.Unlock()
	err := s.update(func(tx *bolt.Tx) error {
		ps, err := profilesIn(tx)
		if err != nil {
			return err
		}
		tr.Reset(storedOffers(tx), ps, keysIn(tx))
		m, err := readBestMeta(tx)
		if err != nil {
			return err
		}
		if m.Live && m.Fingerprint != tr.Fingerprint() {
			m.Live = false // priced otherwise now: the next run starts it again
		}
		m.ProfilesSeq = profileSeq(tx)
		return putJSON(bucket(tx, bBest), kBestMeta, m)
	})
	if err != nil {
		return fmt.Errorf("load the best series: %w", err)
	}
	s.series.tr, s.series.enabled, s.series.broken = tr, enabled, false
	return nil
}

// keysIn reads offer keys by id in tx.
func keysIn(tx *bolt.Tx) KeyOf {
	b := bucket(tx, bOfferKeys)
	var k [4]byte
	return func(id uint32) string {
		binary.BigEndian.PutUint32(k[:], id)
		v := b.Get(k[:])
		if i := bytes.IndexByte(v, 0); i >= 0 {
			return string(v[i+1:])
		}
		return ""
	}
}

// storedOffers yields every stored offer (reused: copy to keep) with its
// id; an offer without one (none should be) is left out.
func storedOffers(tx *bolt.Tx) iter.Seq2[uint32, *pricewatch.Offer] {
	return func(yield func(uint32, *pricewatch.Offer) bool) {
		ids := bucket(tx, bOfferIDs)
		seen := map[string]time.Time{}
		bucket(tx, bSeen).ForEach(func(k, v []byte) error {
			if len(v) == 8 {
				seen[string(k)] = keyTime(v)
			}
			return nil
		})
		c := bucket(tx, bOffers).Cursor()
		var o pricewatch.Offer
		for k, v := c.First(); k != nil; k, v = c.Next() {
			i := bytes.IndexByte(k, 0)
			if i < 0 {
				continue
			}
			id := ids.Get(k[i+1:])
			if len(id) != 4 {
				continue
			}
			o = pricewatch.Offer{Key: string(k[i+1:]), Source: string(k[:i])}
			if err := decodeOffer(v, &o, seen[o.Source], nil, false); err != nil {
				continue // integrity checks report it; a series skips it
			}
			if !yield(binary.BigEndian.Uint32(id), &o) {
				return
			}
		}
	}
}

func readBestMeta(tx *bolt.Tx) (SeriesMeta, error) {
	var m SeriesMeta
	if v := bucket(tx, bBest).Get(kBestMeta); v != nil {
		if err := json.Unmarshal(v, &m); err != nil {
			return m, fmt.Errorf("decode best series meta: %w", err)
		}
	}
	return m, nil
}

// initBestMeta marks a database that has history but no best series as
// older than the first-round rule: its history is not clamped.
func initBestMeta(tx *bolt.Tx) error {
	b := bucket(tx, bBest)
	if b.Get(kBestMeta) != nil {
		return nil
	}
	m := SeriesMeta{}
	if k, _ := bucket(tx, bHist).Cursor().First(); k != nil {
		m.FromSet = true
	}
	return putJSON(b, kBestMeta, m)
}

// recordSeries updates the history start and the best series after a run
// was recorded in tx (its health written): chs are its rows at at.
func (s *Store) recordSeries(tx *bolt.Tx, at time.Time, chs []change) error {
	h := &s.series
	m, err := readBestMeta(tx)
	if err != nil {
		return err
	}
	b := bucket(tx, bBest)
	if !m.FromSet {
		if h.tr == nil {
			m.FromSet = true // runs without a tracker: no first round to wait for
		} else if from, ok, err := firstRoundDone(tx, h.enabled); err != nil {
			return err
		} else if ok {
			m.FromSet, m.HistoryFrom = true, from
		}
	}
	if h.tr == nil {
		m.Live = false
		return putJSON(b, kBestMeta, m)
	}
	ps, err := s.profiles.get(tx)
	if err != nil {
		return err
	}
	ws := make([]Written, len(chs))
	for i, c := range chs {
		ws[i] = Written{c.offer, c.event, c.id}
	}
	keys := keysIn(tx)
	fp, changed := h.tr.Apply(ws, ps, keys)
	if changed || h.broken {
		h.tr.Reset(storedOffers(tx), ps, keys)
		h.broken, m.Live = false, false
	}
	if !m.FromSet {
		h.tr.Points(at, false, keys) // the history has not started: nothing kept
		return putJSON(b, kBestMeta, m)
	}
	// A run that started before the history's start, or before the series'
	// start (its seed), but landed after it counts as of that start: the
	// seed holds its source's state before it, which this run replaces.
	pat := at
	for _, t := range []time.Time{m.HistoryFrom, m.Start} {
		if pat.Before(t) {
			pat = t
		}
	}
	all := !m.Live
	if all {
		if m.Start.IsZero() && m.HistoryFrom.Equal(pat) {
			m.Real = true
		} else {
			m.Real = false
			if err := clearBucket(tx, bBest); err != nil {
				return err
			}
			b = bucket(tx, bBest)
		}
		m.Live, m.Start, m.Fingerprint = true, pat, fp
	}
	if err := writePoints(tx, b, h.tr.Points(pat, all, keys)); err != nil {
		return err
	}
	m.ProfilesSeq = profileSeq(tx)
	return putJSON(b, kBestMeta, m)
}

func clearBucket(tx *bolt.Tx, name []byte) error {
	root := tx.Bucket(bRoot)
	if err := root.DeleteBucket(name); err != nil {
		return err
	}
	_, err := root.CreateBucket(name)
	return err
}

// firstRoundDone reports whether every enabled source has a recorded run,
// and the latest of their first runs' start (each has run once, so its
// last run is its first unless an earlier round completed).
func firstRoundDone(tx *bolt.Tx, enabled []string) (time.Time, bool, error) {
	hb := bucket(tx, bHealth)
	var from time.Time
	for _, name := range enabled {
		v := hb.Get([]byte(name))
		if v == nil {
			return from, false, nil
		}
		// Only the last run's time: a whole Health decodes its per-card
		// counts as well, for every source at every run.
		var h struct {
			LastRun time.Time `json:"last_run"`
		}
		if err := json.Unmarshal(v, &h); err != nil {
			return from, false, fmt.Errorf("decode health of %s: %w", name, err)
		}
		if h.LastRun.IsZero() {
			return from, false, nil
		}
		if h.LastRun.After(from) {
			from = h.LastRun
		}
	}
	return from, true, nil
}

func bestKey(card, workload string, at time.Time, mode pricewatch.Mode, cur, source string) []byte {
	k := make([]byte, 0, len(card)+len(workload)+len(mode)+len(cur)+len(source)+12)
	k = append(append(append(append(k, card...), 0), workload...), 0)
	k = binary.BigEndian.AppendUint64(k, uint64(at.UnixNano()))
	return append(append(append(append(append(k, mode...), 0), cur...), 0), source...)
}

const (
	bestHasPrice = 1 << iota
	bestHasCost
)

func writePoints(tx *bolt.Tx, b *bolt.Bucket, pts []SeriesPoint) error {
	ids := bucket(tx, bOfferIDs)
	idOf := func(key string, id uint32) ([]byte, error) {
		if id != 0 {
			return binary.BigEndian.AppendUint32(nil, id), nil
		}
		v := ids.Get([]byte(key))
		if len(v) != 4 {
			return nil, fmt.Errorf("best series: offer %q has no id", key)
		}
		return v, nil
	}
	for _, p := range pts {
		if p.Touch {
			if err := b.Put(bestKey(p.Card, "", p.At, p.Mode, p.Currency, p.Source), nil); err != nil {
				return err
			}
			continue
		}
		v := binary.AppendUvarint(make([]byte, 0, 48), uint64(p.Offers))
		flags := byte(0)
		hasPrice, hasCost := p.PriceKey != "" || p.PriceID != 0, p.CostKey != "" || p.CostID != 0
		if hasPrice {
			flags |= bestHasPrice
		}
		if hasCost {
			flags |= bestHasCost
		}
		v = append(v, flags)
		if hasPrice {
			id, err := idOf(p.PriceKey, p.PriceID)
			if err != nil {
				return err
			}
			v = binary.BigEndian.AppendUint64(append(v, id...), math.Float64bits(p.Price))
		}
		if hasCost {
			id, err := idOf(p.CostKey, p.CostID)
			if err != nil {
				return err
			}
			v = binary.BigEndian.AppendUint64(append(v, id...), math.Float64bits(p.CostPrice))
			v = binary.BigEndian.AppendUint64(v, math.Float64bits(p.TokensPerSecond))
			v = binary.AppendUvarint(v, uint64(p.GPUs))
		}
		if err := b.Put(bestKey(p.Card, p.Workload, p.At, p.Mode, p.Currency, p.Source), v); err != nil {
			return err
		}
	}
	return nil
}

// decodePoint reads a point's value into p (its key fields set).
func (r *histReader) decodePoint(v []byte, p *SeriesPoint) error {
	n, k := binary.Uvarint(v)
	if k <= 0 || len(v) < k+1 {
		return errShort
	}
	p.Offers = int(n)
	flags := v[k]
	v = v[k+1:]
	if flags&bestHasPrice != 0 {
		if len(v) < 12 {
			return errShort
		}
		_, key, err := r.key(binary.BigEndian.Uint32(v))
		if err != nil {
			return err
		}
		p.PriceKey, p.Price = key, math.Float64frombits(binary.BigEndian.Uint64(v[4:]))
		v = v[12:]
	}
	if flags&bestHasCost != 0 {
		if len(v) < 20 {
			return errShort
		}
		_, key, err := r.key(binary.BigEndian.Uint32(v))
		if err != nil {
			return err
		}
		p.CostKey, p.CostPrice = key, math.Float64frombits(binary.BigEndian.Uint64(v[4:]))
		p.TokensPerSecond = math.Float64frombits(binary.BigEndian.Uint64(v[12:]))
		g, k := binary.Uvarint(v[20:])
		if k <= 0 {
			return errShort
		}
		p.GPUs = int(g)
	}
	return nil
}

// BestSeriesMeta reads what the stored best series can answer.
func (s *Store) BestSeriesMeta() (SeriesMeta, error) {
	var m SeriesMeta
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		m, err = readBestMeta(tx)
		return err
	})
	return m, err
}

// HistoryFrom is the start of the history (zero: none, or not clamped;
// see SeriesMeta.HistoryFrom): rows before it count as of it.
func (s *Store) HistoryFrom() (time.Time, error) {
	m, err := s.BestSeriesMeta()
	if !m.FromSet {
		// Not started: every row counts as of a time after them all.
		return time.Unix(0, math.MaxInt64).UTC(), err
	}
	return m.HistoryFrom, err
}

// BestSeries reads, in one transaction, the meta and every stored point
// and touch of a card (every card with "") and workload up to until,
// oldest first. It stops with ctx's error when ctx ends.
func (s *Store) BestSeries(ctx context.Context, card, workload string, until time.Time) (SeriesMeta, []SeriesPoint, error) {
	var m SeriesMeta
	var out []SeriesPoint
	if err := ctx.Err(); err != nil {
		return m, nil, err
	}
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		if m, err = readBestMeta(tx); err != nil || !m.Live {
			return err
		}
		m.Current = m.ProfilesSeq == profileSeq(tx)
		r := newHistReader(tx)
		c := bucket(tx, bBest).Cursor()
		n := 0
		// scan appends the entries from k on while keep says so.
		scan := func(prefix []byte) error {
			for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
				if n++; n%ctxEvery == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				p, ok, err := r.bestEntry(k, v, workload, until)
				if err != nil {
					return err
				}
				if ok {
					out = append(out, p)
				} else if card != "" {
					return nil // past until
				}
			}
			return nil
		}
		if card == "" {
			return scan(nil)
		}
		if err := scan(append(append([]byte(card), 0), 0)); err != nil {
			return err
		}
		return scan(append(append(append([]byte(card), 0), workload...), 0))
	})
	slices.SortStableFunc(out, func(a, b SeriesPoint) int { return a.At.Compare(b.At) })
	return m, out, err
}

// bestEntry decodes a best-series entry of the workload (or a touch) up
// to until; ok is false for another workload or a later time.
func (r *histReader) bestEntry(k, v []byte, workload string, until time.Time) (SeriesPoint, bool, error) {
	parts := bytes.SplitN(k, []byte{0}, 3)
	if len(parts) != 3 || len(parts[2]) < 8 || (len(parts[1]) > 0 && string(parts[1]) != workload) {
		return SeriesPoint{}, false, nil
	}
	at := keyTime(parts[2][:8])
	if at.After(until) {
		return SeriesPoint{}, false, nil
	}
	sub := bytes.SplitN(parts[2][8:], []byte{0}, 3)
	if len(sub) != 3 {
		return SeriesPoint{}, false, fmt.Errorf("best series key %q: malformed", k)
	}
	p := SeriesPoint{At: at, Card: string(parts[0]), Mode: pricewatch.Mode(sub[0]), Currency: string(sub[1]), Source: string(sub[2])}
	if len(parts[1]) == 0 {
		p.Touch = true
		return p, true, nil
	}
	p.Workload = workload
	if err := r.decodePoint(v, &p); err != nil {
		return p, false, fmt.Errorf("best series %q: %w", k, err)
	}
	return p, true, nil
}

// compactSeries keeps, of the points before cut, the last of each
// sub-series (the state at cut), and moves the series' start to cut: the
// rows before it are daily now, which the stored points do not follow.
func compactSeries(tx *bolt.Tx, cut time.Time) (int, error) {
	m, err := readBestMeta(tx)
	if err != nil || !m.Live || !m.Start.Before(cut) {
		return 0, err
	}
	b := bucket(tx, bBest)
	last := map[string][]byte{} // card\0workload\0sub → key of its last point before cut
	var dels [][]byte
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if k[0] == 0 {
			continue
		}
		i := bytes.IndexByte(k, 0)
		j := i + 1 + bytes.IndexByte(k[i+1:], 0)
		if i < 0 || j <= i || len(k) < j+9 {
			continue
		}
		if keyTime(k[j+1 : j+9]).Before(cut) {
			sub := string(k[:j+1]) + string(k[j+9:])
			if prev, ok := last[sub]; ok {
				dels = append(dels, prev)
			}
			last[sub] = append([]byte{}, k...)
		}
	}
	for _, k := range dels {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	m.Start, m.Real = cut, false
	return len(dels), putJSON(b, kBestMeta, m)
}

// BestSeriesBytes is the size of the stored best series' pages in use (a
// size figure for benchmarks).
func (s *Store) BestSeriesBytes() (int, error) {
	n := 0
	err := s.view(func(tx *bolt.Tx) error {
		st := bucket(tx, bBest).Stats()
		n = st.LeafInuse + st.BranchInuse + st.InlineBucketInuse
		return nil
	})
	return n, err
}
