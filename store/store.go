package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unsafe"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/pricewatch/pricewatch"
)

// SchemaVersion is the layout this package reads and writes. A file of
// version 1 is migrated when it is opened for writing (see migrate.go).
const SchemaVersion = "2"

// RunRetention is how long run records are kept per source.
const RunRetention = 30 * 24 * time.Hour

var (
	bMeta     = []byte("meta")
	bRoot     = []byte("v1")
	bOffers   = []byte("offers")
	bRuns     = []byte("runs")
	bHealth   = []byte("health")
	bProfiles = []byte("profiles")
	bFX       = []byte("fx")
	bAlerts   = []byte("alerts")
	kVersion  = []byte("schema_version")
	kLatest   = []byte("latest")
)

// ErrLocked means another process (a running daemon) holds the database.
var ErrLocked = errors.New("database is locked by another process")

// ErrUnsupported means a database this build does not read: another schema
// version, or a bbolt file that is not pricewatch's (the CLI exits 3 on it,
// as on a damaged file: restarting does not help).
var ErrUnsupported = errors.New("unsupported database")

// Options tune Open.
type Options struct {
	// Timeout bounds the wait for the file lock (default 2s).
	Timeout  time.Duration
	ReadOnly bool
	// NoSync skips fsync on commit (benchmarks and bulk tools only: a
	// crash may lose or corrupt the last transactions).
	NoSync bool
}

// Store is the bbolt-backed state of pricewatch.
type Store struct {
	db *bolt.DB
	// path is the file, kept here: bbolt's Path reads a field Close
	// writes, and a store read may race a close.
	path string
	// series maintains the stored best series at each run (bestseries.go).
	series seriesHook
	// profiles is the last read of the stored profiles (profiles.go).
	profiles profileCache
}

// initialMmapSize is reserved address space, not memory: bbolt re-maps
// the file (copying nothing, but waiting for readers) each time it
// outgrows the map, which a first scrape of 100k offers would do a dozen
// times in one transaction.
const initialMmapSize = 1 << 30

// allocSize is how far the file grows beyond what a commit needs.
const allocSize = 1 << 20

// The freelist is bbolt's array type: it hands out the lowest free pages
// first, so the file stays as small as its live pages allow and grows the
// same way every time. The map type picks free spans in map order; over
// 130 simulated days of history it left files of 128 to 207 MB for the
// same data (the array type: 124 MB, no slower).

// Open opens (creating if needed) the database at path, migrating a file
// of schema version 1 when opened for writing. A file its own meta page
// contradicts (cut short) is refused before bbolt maps it, and a page
// bbolt cannot read, then or later, is an error wrapping ErrDamaged.
func Open(path string, opt Options) (*Store, error) {
	if opt.Timeout <= 0 {
		opt.Timeout = 2 * time.Second
	}
	if err := checkFile(path); err != nil {
		return nil, err
	}
	var db *bolt.DB
	err := guard(path, func() (err error) {
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: opt.Timeout, ReadOnly: opt.ReadOnly,
			InitialMmapSize: initialMmapSize, FreelistType: bolt.FreelistArrayType, NoSync: opt.NoSync})
		return err
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("open %s: %w", path, ErrLocked)
	}
	if errors.Is(err, ErrDamaged) {
		return nil, err
	}
	if err != nil {
		return nil, openError(path, err)
	}
	db.AllocSize = allocSize
	s := &Store{db: db, path: path}
	if opt.ReadOnly {
		err = s.view(checkVersion)
	} else {
		err = s.update(initBuckets)
	}
	if err == nil {
		err = s.checkPagesIfSmall()
	}
	if err != nil {
		db.Close()
		if errors.Is(err, ErrDamaged) {
			return nil, err
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return s, nil
}

func checkVersion(tx *bolt.Tx) error {
	m := tx.Bucket(bMeta)
	if m == nil {
		return fmt.Errorf("%w: not a pricewatch database (no meta bucket)", ErrUnsupported)
	}
	switch v := string(m.Get(kVersion)); v {
	case SchemaVersion:
		return nil
	case "1":
		return fmt.Errorf("schema version 1: open it once for writing (pricewatch scrape, serve or compact) to migrate it to %s", SchemaVersion)
	default:
		return fmt.Errorf("%w: schema version %q, this build reads %q", ErrUnsupported, v, SchemaVersion)
	}
}

// rootBuckets are the buckets under the root of schema 2.
var rootBuckets = [][]byte{bOffers, bRuns, bHealth, bProfiles, bFX, bAlerts,
	bSeen, bOfferIDs, bOfferKeys, bTerms, bTermIDs, bHist, bChangeIdx,
	bSeries, bOutbox, bSilences, bNotify, bCardIDs, bBest, bTokens, bTokenHist}

func initBuckets(tx *bolt.Tx) error {
	m, err := tx.CreateBucketIfNotExists(bMeta)
	if err != nil {
		return err
	}
	v := string(m.Get(kVersion))
	switch v {
	case "", "1", SchemaVersion:
	default:
		return fmt.Errorf("%w: schema version %q, this build reads %q", ErrUnsupported, v, SchemaVersion)
	}
	root, err := tx.CreateBucketIfNotExists(bRoot)
	if err != nil {
		return err
	}
	for _, b := range rootBuckets {
		if _, err := root.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	if v == "1" {
		if err := migrateV1(tx); err != nil {
			return fmt.Errorf("migrate schema 1 to %s: %w", SchemaVersion, err)
		}
	}
	if err := buildCardIndex(tx); err != nil {
		return fmt.Errorf("build the card index: %w", err)
	}
	if err := initBestMeta(tx); err != nil {
		return err
	}
	if v != SchemaVersion {
		return m.Put(kVersion, []byte(SchemaVersion))
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Path is the database file.
func (s *Store) Path() string { return s.path }

func bucket(tx *bolt.Tx, name []byte) *bolt.Bucket { return tx.Bucket(bRoot).Bucket(name) }

func timeKey(t time.Time) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, uint64(t.UnixNano()))
	return b
}

func join(parts ...[]byte) []byte { return bytes.Join(parts, []byte{0}) }

func putJSON(b *bolt.Bucket, k []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(k, data)
}

// Event names a history row.
type Event string

// History events.
const (
	Appeared Event = "appeared"
	Changed  Event = "changed"
	Vanished Event = "vanished"
	// Daily is a compacted day (older than the raw window): the day's
	// open, min, max and close (PricePerGPUHour) of an offer that changed
	// that day. A day that ended with the offer gone is Vanished instead,
	// with the same prices.
	Daily Event = "daily"
)

// HistoryRow is one change of one offer.
type HistoryRow struct {
	At              time.Time `json:"at"`
	Event           Event     `json:"event"`
	Card            string    `json:"card,omitempty"`
	GPUs            int       `json:"gpus"`
	PricePerGPUHour float64   `json:"price_per_gpu_hour"`
	Currency        string    `json:"currency"`
	// Available and Stock are the offer's availability from this row on
	// (rows written before availability was recorded have none).
	Available pricewatch.Availability `json:"available,omitempty"`
	Stock     string                  `json:"stock,omitempty"`
	// Open, Min and Max are set on compacted days (Daily, or Vanished at a
	// day's close): the price at the day's start and its range.
	Open float64 `json:"open,omitempty"`
	Min  float64 `json:"min,omitempty"`
	Max  float64 `json:"max,omitempty"`
}

// AvailableShare is the share of the time from since to now that the rows
// (one offer's history, oldest first) show it available, counting only the
// time its availability was known; known is false when it never was. A
// vanished offer is unavailable until it reappears.
func AvailableShare(rows []HistoryRow, since, now time.Time) (share float64, known bool) {
	var yes, all time.Duration
	for i, r := range rows {
		end := now
		if i+1 < len(rows) {
			end = rows[i+1].At
		}
		start := r.At
		if start.Before(since) {
			start = since
		}
		if !end.After(start) {
			continue
		}
		d := end.Sub(start)
		switch {
		case r.Event == Vanished || r.Available == pricewatch.AvailableNo:
			all += d
		case r.Available == pricewatch.AvailableYes:
			yes += d
			all += d
		}
	}
	if all == 0 {
		return 0, false
	}
	return float64(yes) / float64(all), true
}

// Health is a source's current state.
type Health struct {
	Source              string         `json:"source"`
	LastRun             time.Time      `json:"last_run"`
	LastDuration        time.Duration  `json:"last_duration_ns"`
	LastOK              bool           `json:"last_ok"`
	LastSuccess         time.Time      `json:"last_success,omitzero"`
	LastError           string         `json:"last_error,omitempty"`
	ConsecutiveFailures int            `json:"consecutive_failures"`
	Offers              int            `json:"offers"`
	Unknown             map[string]int `json:"unknown,omitempty"`
	// Mapped counts the offers of the last applied run that map to a card,
	// per billing mode: what a later run's layout is judged against.
	Mapped map[pricewatch.Mode]int `json:"mapped,omitempty"`
	// Hold is set while the last run was kept but not applied
	// (quarantined or suspect), with HoldReason; Pending is the new level
	// such runs show and how many in a row confirmed it; HeldOffers are the
	// outlier offers held back and how often each came again.
	Hold       pricewatch.RunHold   `json:"hold,omitempty"`
	HoldReason string               `json:"hold_reason,omitempty"`
	Pending    *Level               `json:"pending,omitempty"`
	HeldOffers map[string]HeldState `json:"held_offers,omitempty"`
	// MappedCards counts the mapped offers of the last applied run per card
	// and mode ("card\x00mode"): a layout loss is judged per card too.
	MappedCards map[string]int `json:"mapped_cards,omitempty"`
	// Anchor is the source's accepted price level: what a run's prices are
	// judged against before any market.
	Anchor *Anchor `json:"anchor,omitempty"`
	// Accepted is a pending level an operator accepted (sources accept):
	// the next run showing it is applied and becomes the anchor.
	Accepted *Level `json:"accepted,omitempty"`
	// Disputed is set while the source's applied level lies beyond the
	// band against a market that formed after its anchor (level.go).
	Disputed *Dispute `json:"disputed,omitempty"`
}

// Anchor is a source's accepted price level: per card, mode and currency
// ("card\x00mode\x00currency") its median price per GPU-hour and the
// market's then. It is set by the first applied run and by an operator's
// accept, follows the market where the market moved with the source, and
// gains the cells that appear; it never follows the source alone, so
// neither a repeated unit error nor a slow drift moves it.
type Anchor struct {
	At    time.Time             `json:"at"`
	By    string                `json:"by"`
	Cells map[string]AnchorCell `json:"cells"`
}

// AnchorCell is one card, mode and currency of an anchor: the source's
// median, lowest and highest price per GPU-hour in the currency, and the
// market's median of source medians in the base currency (0: none).
type AnchorCell struct {
	Price  float64 `json:"price"`
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
	Market float64 `json:"market,omitempty"`
}

// Level is a new level a source's held runs show: a common price factor,
// or the mapped offers per mode of a drifted layout; Runs counts the runs
// in a row that showed it.
type Level struct {
	Kind   string                  `json:"kind"`
	Factor float64                 `json:"factor,omitempty"`
	Mapped map[pricewatch.Mode]int `json:"mapped,omitempty"`
	Runs   int                     `json:"runs"`
	// Mode is the billing mode a factor was measured on ("" for all).
	Mode pricewatch.Mode `json:"mode,omitempty"`
	// Cards are the cards (card\x00mode) a layout lost offers of.
	Cards map[string]int `json:"cards,omitempty"`
	// NeedsAccept: repetition alone never applies this level; it waits
	// for the market to move too, or for an operator (sources accept).
	NeedsAccept bool `json:"needs_accept,omitempty"`
	// Since is when the first run showing it was held.
	Since time.Time `json:"since,omitzero"`
	// AcceptedAt and AcceptedBy are set on an accepted level.
	AcceptedAt time.Time `json:"accepted_at,omitzero"`
	AcceptedBy string    `json:"accepted_by,omitempty"`
}

// HeldState is an outlier offer's held price and how many runs in a row
// brought it.
type HeldState struct {
	PricePerGPUHour float64 `json:"price_per_gpu_hour"`
	Runs            int     `json:"runs"`
}

// RunResult is what a run brings to the store. For a successful run Offers
// is the source's complete current set, less Keep: offers held back as
// outliers, whose stored versions stay untouched. Rates is set by rate
// sources. Pending and HeldOffers are the source's confirmation state
// after the run (stored in its health).
type RunResult struct {
	Run    pricewatch.Run
	Offers []pricewatch.Offer
	Keep   []string
	Rates  *pricewatch.Rates
	// Tokens, for a token-price source, is its complete current list (the
	// pipeline has kept held prices at their accepted level).
	Tokens     []pricewatch.TokenPrice
	Pending    *Level
	HeldOffers map[string]HeldState
	// Anchor, when set, replaces the source's anchor (an applied run's).
	Anchor *Anchor
	// Disputed is an applied run's dispute with the market (nil: none;
	// it clears the source's).
	Disputed *Dispute
}

// RecordRun commits one run in one transaction: the run record, the
// source's health and, for a successful run, the diff of its offers against
// the stored ones (history rows only for changes) and any rates. It returns
// the run as stored (Changes filled in).
func (s *Store) RecordRun(rr RunResult) (pricewatch.Run, error) {
	run := rr.Run
	s.series.mu.Lock()
	defer s.series.mu.Unlock()
	var chs []change
	err := s.update(func(tx *bolt.Tx) error {
		src := []byte(run.Source)
		hb := bucket(tx, bHealth)
		var h Health
		if v := hb.Get(src); v != nil {
			if err := json.Unmarshal(v, &h); err != nil {
				return fmt.Errorf("decode health of %s: %w", run.Source, err)
			}
		}
		if run.OK && run.Held == "" && h.LastSuccess.After(run.Started) {
			// An older answer committed after a newer one (two runs that
			// overlapped): the newer stays.
			run.Held = pricewatch.RunSuperseded
			run.Reason = fmt.Sprintf("superseded: a run started %s later was applied first; its offers stay",
				h.LastSuccess.Sub(run.Started).Round(time.Millisecond))
			run.HeldOffers = nil
		}
		if run.OK && run.Held == "" {
			var err error
			chs, err = applyOffers(tx, run.Source, run.Started, rr.Offers, rr.Keep)
			if err != nil {
				return fmt.Errorf("apply offers: %w", err)
			}
			run.Changes = len(chs)
			if rr.Tokens != nil {
				n, err := applyTokens(tx, run.Source, run.Started, rr.Tokens)
				if err != nil {
					return fmt.Errorf("apply token prices: %w", err)
				}
				run.Changes += n
			}
			if rr.Rates != nil {
				if err := putRates(tx, rr.Rates); err != nil {
					return fmt.Errorf("put rates: %w", err)
				}
			}
		}
		runs := bucket(tx, bRuns)
		if err := putJSON(runs, join(src, timeKey(run.Started)), run); err != nil {
			return err
		}
		if err := pruneRuns(runs, src, run.Started.Add(-RunRetention)); err != nil {
			return err
		}
		if run.Held == pricewatch.RunSuperseded {
			return nil // the health is the newer run's
		}
		h.Source, h.LastRun, h.LastDuration = run.Source, run.Started, run.Duration
		switch {
		case run.OK && run.Held != "":
			// Fetched and parsed, kept out of the offers: not a failure, and
			// not a success either (the held source's offers age as they
			// would without it).
			h.LastOK, h.LastError, h.ConsecutiveFailures = true, "", 0
			h.Hold, h.HoldReason = run.Held, run.Reason
			h.Pending, h.HeldOffers = rr.Pending, rr.HeldOffers
		case run.OK:
			h.LastOK, h.LastSuccess, h.LastError, h.ConsecutiveFailures = true, run.Started, "", 0
			h.Offers, h.Unknown = run.Offers, run.Unknown
			h.Mapped, h.MappedCards = mappedByMode(rr.Offers), mappedByCard(rr.Offers)
			h.Hold, h.HoldReason = "", ""
			h.Pending, h.HeldOffers = rr.Pending, rr.HeldOffers
			if rr.Anchor != nil {
				h.Anchor = rr.Anchor
			}
			h.Disputed = rr.Disputed
			h.Accepted = nil // an applied run settles what was accepted
		default:
			// A failure says more than an earlier hold; a pending level's
			// count survives it.
			h.LastOK, h.Hold, h.HoldReason = false, "", ""
			h.LastError = run.Error
			h.ConsecutiveFailures++
		}
		if err := putJSON(hb, src, h); err != nil {
			return err
		}
		if err := s.recordSeries(tx, run.Started, chs); err != nil {
			s.series.broken = true
			return fmt.Errorf("best series: %w", err)
		}
		return nil
	})
	if err != nil {
		if len(chs) > 0 {
			s.series.broken = true // the tracker may have applied what was not stored
		}
		return run, fmt.Errorf("record run of %s: %w", run.Source, err)
	}
	return run, nil
}

// mappedByMode counts the offers that map to a card, per mode.
func mappedByMode(offers []pricewatch.Offer) map[pricewatch.Mode]int {
	m := map[pricewatch.Mode]int{}
	for _, o := range offers {
		if o.Card != "" && !o.Reference() {
			m[o.Mode]++
		}
	}
	return m
}

// mappedByCard counts the offers that map to a card per card and mode.
func mappedByCard(offers []pricewatch.Offer) map[string]int {
	m := map[string]int{}
	for _, o := range offers {
		if o.Card != "" && !o.Reference() {
			m[o.Card+"\x00"+string(o.Mode)]++
		}
	}
	return m
}

func applyOffers(tx *bolt.Tx, source string, at time.Time, offers []pricewatch.Offer, keep []string) ([]change, error) {
	ob, sb := bucket(tx, bOffers), bucket(tx, bSeen)
	src := []byte(source)
	var seenPrev time.Time
	if v := sb.Get(src); len(v) == 8 {
		seenPrev = keyTime(v)
	}
	prefix := append([]byte(source), 0)
	// The offers in key order, merged with the stored ones (in the same
	// order) as the cursor walks them; of two offers with one key the
	// later one counts.
	order := make([]int32, 0, len(offers))
	for i := range offers {
		if offers[i].Source != source {
			return nil, fmt.Errorf("offer %s is not from source %s", offers[i].Key, source)
		}
		order = append(order, int32(i))
	}
	slices.SortStableFunc(order, func(a, b int32) int { return strings.Compare(offers[a].Key, offers[b].Key) })
	order = dedupLast(order, offers)
	kept := make(map[string]bool, len(keep))
	for _, k := range keep {
		kept[k] = true // held back: the stored version stays as it is
	}
	type put struct{ k, v []byte }
	var (
		puts   []put
		dels   [][]byte
		chs    []change
		enc    []byte
		fresh  []int32 // offers not stored, in key order
		stored = 0
		slab   []byte
	)
	// New offers' records are encoded into slabs (bbolt keeps the values,
	// not copies, until the commit).
	addFresh := func(i int32) {
		o := &offers[i]
		if kept[o.Key] {
			return
		}
		o.FirstSeen, o.ObservedAt = at, at
		chs = append(chs, change{offer: o, event: Appeared})
		if cap(slab)-len(slab) < 512+len(o.URL)+len(o.GPUName)+len(o.Region)+len(o.OfferID) {
			slab = make([]byte, 0, 1<<20)
		}
		n := len(slab)
		slab = encodeOffer(slab, o, time.Time{})
		puts = append(puts, put{join(src, []byte(o.Key)), slab[n:len(slab):len(slab)]})
	}
	j := 0
	c := ob.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		stored++
		kb := k[len(prefix):]
		for j < len(order) && offers[order[j]].Key < string(kb) {
			fresh = append(fresh, order[j])
			j++
		}
		found := j < len(order) && offers[order[j]].Key == string(kb)
		var i int32
		if found {
			i = order[j]
			j++
		}
		if kept[string(kb)] {
			if pinnedOf(v).IsZero() && !seenPrev.IsZero() {
				// Not confirmed by this run: it keeps the time the last
				// one confirmed it.
				nv := append([]byte{}, v...)
				binary.BigEndian.PutUint64(nv[9:17], uint64(nanos(seenPrev)))
				puts = append(puts, put{append([]byte{}, k...), nv})
			}
			continue
		}
		if !found {
			o := &pricewatch.Offer{Key: string(kb), Source: source}
			if err := decodeOffer(v, o, seenPrev, nil, false); err != nil {
				return nil, fmt.Errorf("decode offer %q: %w", k, err)
			}
			chs = append(chs, change{offer: o, event: Vanished})
			dels = append(dels, append([]byte{}, k...))
			continue
		}
		o := &offers[i]
		o.FirstSeen, o.ObservedAt = firstSeenOf(v), at
		enc = encodeOffer(enc[:0], o, time.Time{})
		if bytes.Equal(enc, v) {
			continue // confirmed: the source's seen time says so
		}
		prev := pricewatch.Offer{Key: o.Key, Source: source}
		if err := decodeOffer(v, &prev, seenPrev, nil, false); err != nil {
			return nil, fmt.Errorf("decode offer %q: %w", k, err)
		}
		if !prev.SamePrice(*o) {
			chs = append(chs, change{offer: o, event: Changed})
		}
		puts = append(puts, put{append([]byte{}, k...), append([]byte{}, enc...)})
	}
	fresh = append(fresh, order[j:]...)
	puts = slices.Grow(puts, len(fresh))
	chs = slices.Grow(chs, len(fresh))
	for _, i := range fresh {
		addFresh(i)
	}
	if stored == 0 {
		ob.FillPercent = fillAppend // a first load arrives in key order
	}
	if cmp := func(a, b put) int { return bytes.Compare(a.k, b.k) }; !slices.IsSortedFunc(puts, cmp) {
		slices.SortFunc(puts, cmp)
	}
	for _, p := range puts {
		if err := ob.Put(p.k, p.v); err != nil {
			return nil, err
		}
	}
	for _, k := range dels {
		if err := ob.Delete(k); err != nil {
			return nil, err
		}
	}
	h := newHistTx(tx)
	if err := h.writeChanges(at, chs); err != nil {
		return nil, err
	}
	if err := sb.Put(src, timeKey(at)); err != nil {
		return nil, err
	}
	if err := pruneBefore(h.idx, at.Add(-ChangeRetention)); err != nil {
		return nil, err
	}
	return chs, nil
}

// dedupLast keeps the last of the offers (in key order) that share a key.
func dedupLast(order []int32, offers []pricewatch.Offer) []int32 {
	out := order[:0]
	for n, i := range order {
		if n+1 < len(order) && offers[order[n+1]].Key == offers[i].Key {
			continue
		}
		out = append(out, i)
	}
	return out
}

func pruneRuns(b *bolt.Bucket, src []byte, before time.Time) error {
	prefix := append(append([]byte{}, src...), 0)
	limit := join(src, timeKey(before))
	var old [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.Compare(k, limit) < 0 && len(old) < 1000; k, _ = c.Next() {
		old = append(old, append([]byte{}, k...))
	}
	for _, k := range old {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

func putRates(tx *bolt.Tx, r *pricewatch.Rates) error {
	b := bucket(tx, bFX)
	if err := putJSON(b, kLatest, r); err != nil {
		return err
	}
	if r.Date != "" {
		return putJSON(b, []byte(r.Date), r)
	}
	return nil
}

// Offers returns every current offer, ordered by source and key.
func (s *Store) Offers() ([]pricewatch.Offer, error) { return s.offersWith("") }

// OffersOf returns one source's current offers.
func (s *Store) OffersOf(source string) ([]pricewatch.Offer, error) { return s.offersWith(source) }

func (s *Store) offersWith(source string) ([]pricewatch.Offer, error) {
	var out []pricewatch.Offer
	err := s.scan(source, false, func(o *pricewatch.Offer) error {
		out = append(out, *o)
		return nil
	})
	return out, err
}

// ScanOffers calls fn with each current offer of a source ("": of every
// source), ordered by source and key, in one read transaction. The offer
// and everything it points at (its strings, GPU counts and reliability)
// are valid only during the call: fn copies what it keeps.
func (s *Store) ScanOffers(source string, fn func(o *pricewatch.Offer) error) error {
	return s.scan(source, true, fn)
}

func (s *Store) scan(source string, alias bool, fn func(o *pricewatch.Offer) error) error {
	var prefix []byte
	if source != "" {
		prefix = append([]byte(source), 0)
	}
	return s.view(func(tx *bolt.Tx) error {
		seen := map[string]time.Time{}
		if err := bucket(tx, bSeen).ForEach(func(k, v []byte) error {
			if len(v) == 8 {
				seen[string(k)] = keyTime(v)
			}
			return nil
		}); err != nil {
			return err
		}
		var (
			o       pricewatch.Offer
			buf     offerBuf
			lastSrc []byte
			src     string
		)
		c := bucket(tx, bOffers).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			i := bytes.IndexByte(k, 0)
			if i < 0 {
				return fmt.Errorf("offer record %q: no source", k)
			}
			if !bytes.Equal(k[:i], lastSrc) {
				lastSrc, src = k[:i], string(k[:i])
			}
			if alias {
				o.Key = unsafe.String(&k[i+1], len(k)-i-1)
			} else {
				o.Key = string(k[i+1:])
			}
			o.Source = src
			var b *offerBuf
			if alias {
				b = &buf
			}
			if err := decodeOffer(v, &o, seen[src], b, alias); err != nil {
				return fmt.Errorf("decode offer %q: %w", k, err)
			}
			if err := fn(&o); err != nil {
				return err
			}
		}
		return nil
	})
}

// Health returns every source's health, keyed by source.
func (s *Store) Health() (map[string]Health, error) {
	out := map[string]Health{}
	err := s.view(func(tx *bolt.Tx) error {
		return bucket(tx, bHealth).ForEach(func(k, v []byte) error {
			var h Health
			if err := json.Unmarshal(v, &h); err != nil {
				return fmt.Errorf("decode health %q: %w", k, err)
			}
			out[string(k)] = h
			return nil
		})
	})
	return out, err
}

// ErrNothingToAccept: the source holds no level that waits for an
// operator.
var ErrNothingToAccept = errors.New("no held level waits for acceptance")

// AcceptSource records an operator's acceptance of the level a source's
// held runs show: the next run showing it is applied and anchors the
// source. It returns the accepted level.
func (s *Store) AcceptSource(source, by, level string, at time.Time) (Level, error) {
	var lv Level
	err := s.db.Update(func(tx *bolt.Tx) error {
		hb := bucket(tx, bHealth)
		v := hb.Get([]byte(source))
		if v == nil {
			return fmt.Errorf("source %s has not run: %w", source, ErrNothingToAccept)
		}
		var h Health
		if err := json.Unmarshal(v, &h); err != nil {
			return fmt.Errorf("decode health of %s: %w", source, err)
		}
		if h.Disputed != nil && (h.Pending == nil || !h.Pending.NeedsAccept || strings.HasPrefix(level, DisputeKind)) {
			// No held level, or the disputed one named: the accept is the
			// dispute's (level.go).
			var err error
			if lv, err = h.Disputed.accept(source, by, level, at); err != nil {
				return err
			}
			return putJSON(hb, []byte(source), h)
		}
		if h.Pending == nil || !h.Pending.NeedsAccept {
			return fmt.Errorf("source %s: %w", source, ErrNothingToAccept)
		}
		lv = *h.Pending
		if level == "" {
			return fmt.Errorf("source %s holds %s: %w", source, lv.Label(), ErrLevelRequired)
		}
		named, err := ParseLevel(level)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrLevelChanged, err)
		}
		if !SameLevel(named, lv) {
			return fmt.Errorf("source %s now holds %s, not %s: %w", source, lv.Label(), level, ErrLevelChanged)
		}
		if a := h.Accepted; a != nil && SameLevel(*a, lv) {
			lv = *a
			return fmt.Errorf("source %s: %s by %s at %s: %w", source, lv.Label(), a.AcceptedBy, a.AcceptedAt.UTC().Format(time.RFC3339), ErrAlreadyAccepted)
		}
		lv.AcceptedAt, lv.AcceptedBy = at, by
		h.Accepted = &lv
		return putJSON(hb, []byte(source), h)
	})
	return lv, err
}

// Runs returns up to limit runs of a source, newest first.
func (s *Store) Runs(source string, limit int) ([]pricewatch.Run, error) {
	var out []pricewatch.Run
	prefix := append([]byte(source), 0)
	err := s.view(func(tx *bolt.Tx) error {
		c := bucket(tx, bRuns).Cursor()
		// Seek past the last key of the prefix, then walk back.
		k, v := c.Seek(append(append([]byte{}, prefix...), 0xff))
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		for ; k != nil && bytes.HasPrefix(k, prefix) && (limit <= 0 || len(out) < limit); k, v = c.Prev() {
			var r pricewatch.Run
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("decode run %q: %w", k, err)
			}
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// Rates returns the last good exchange rates, or nil if none were fetched.
func (s *Store) Rates() (*pricewatch.Rates, error) {
	var r *pricewatch.Rates
	err := s.view(func(tx *bolt.Tx) error {
		v := bucket(tx, bFX).Get(kLatest)
		if v == nil {
			return nil
		}
		r = new(pricewatch.Rates)
		return json.Unmarshal(v, r)
	})
	return r, err
}

// PutRates stores rates as the latest (used to seed offline defaults).
func (s *Store) PutRates(r *pricewatch.Rates) error {
	return s.update(func(tx *bolt.Tx) error { return putRates(tx, r) })
}
