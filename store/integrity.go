package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"regexp"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
)

// ErrDamaged means the database file is not what its own meta page says:
// shorter than the pages it claims, or a page bbolt cannot read.
var ErrDamaged = errors.New("database file is damaged")

// ErrEmptyFile is an existing database file of 0 bytes.
var ErrEmptyFile = errors.New("empty database file")

// DamagedError names the file, what is wrong with it and the way out.
type DamagedError struct {
	Path string
	Why  string
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("%s: %s: %s; restore it from a backup, or run `pricewatch compact --rewrite --db COPY` on a copy that still reads "+
		"and put the rewritten copy in its place", e.Path, ErrDamaged, e.Why)
}

func (e *DamagedError) Unwrap() error { return ErrDamaged }

// The layout of bbolt's meta page (go.etcd.io/bbolt internal/common,
// meta.go and page.go, file format version 2): a 16-byte page header (id
// u64, flags u16, count u16, overflow u32), then the meta fields in the
// machine's byte order, and a checksum, FNV-64a over the fields before it.
const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	boltMetaFlag     = 0x04
	boltNoFreelist   = ^uint64(0)
	pageHeaderSize   = 16
	metaChecksumFrom = pageHeaderSize + 56 // magic … txid
	metaSize         = metaChecksumFrom + 8
)

type boltMeta struct {
	magic, version, pageSize uint32
	root, freelist, pgid     uint64
	txid                     uint64
}

// readMeta decodes the meta page at off, or says why it is not one.
func readMeta(f io.ReaderAt, off int64) (boltMeta, error) {
	var b [metaSize]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		return boltMeta{}, fmt.Errorf("read the meta page at byte %d: %w", off, err)
	}
	ne := binary.NativeEndian
	m := boltMeta{
		magic: ne.Uint32(b[16:]), version: ne.Uint32(b[20:]), pageSize: ne.Uint32(b[24:]),
		root: ne.Uint64(b[32:]), freelist: ne.Uint64(b[48:]), pgid: ne.Uint64(b[56:]), txid: ne.Uint64(b[64:]),
	}
	h := fnv.New64a()
	h.Write(b[pageHeaderSize:metaChecksumFrom])
	switch {
	case ne.Uint16(b[8:])&boltMetaFlag == 0 || m.magic != boltMagic:
		return m, fmt.Errorf("no meta page at byte %d", off)
	case m.version != boltVersion:
		return m, fmt.Errorf("meta page at byte %d: file format version %d, want %d", off, m.version, boltVersion)
	case h.Sum64() != ne.Uint64(b[metaChecksumFrom:]):
		return m, fmt.Errorf("meta page at byte %d: checksum mismatch", off)
	}
	return m, nil
}

// checkFile compares the file with its own meta pages before bbolt maps
// it: a page bbolt reads past the end of a mapped file is a SIGBUS no
// recover catches, so a truncated file must be refused here. bbolt uses
// the valid meta page of the higher transaction id; that one's high-water
// page id × page size must fit in the file, and its root and freelist
// pages must lie below the high-water mark. A missing or empty file is
// bbolt's to create.
// openError names the file once: an *fs.PathError of that file (what
// os and bolt return) already says "open <path>: …".
func openError(path string, err error) error {
	if errors.Is(err, fs.ErrPermission) {
		// Another user's file: in the shared layout the daemon's (its user
		// owns the database), which the CLI asks through its record.
		return fmt.Errorf("open %s: %w (%v: another user's database, held by its daemon)", path, ErrLocked, err)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return err
	}
	return fmt.Errorf("open %s: %w", path, err)
}

func checkFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return openError(path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return openError(path, err)
	}
	size := fi.Size()
	if !fi.Mode().IsRegular() {
		return nil
	}
	if size == 0 {
		// bbolt would make a new database of it, silently: an empty file
		// where a database was expected is a truncation or a mistake.
		return fmt.Errorf("%s is an empty file (0 bytes), not a pricewatch database: %w; remove it to start a new database there, or restore a backup", path, ErrEmptyFile)
	}
	damaged := func(format string, a ...any) error { return &DamagedError{Path: path, Why: fmt.Sprintf(format, a...)} }
	m0, err0 := readMeta(f, 0)
	// The second meta page is page 1: at the page size the first one
	// states, else (first one damaged) at a size bbolt would have used.
	var m1 boltMeta
	err1 := errors.New("no second meta page")
	if err0 == nil {
		m1, err1 = readMeta(f, int64(m0.pageSize))
	} else {
		for ps := int64(1024); ps <= 16<<20 && ps+metaSize <= size; ps <<= 1 {
			if m, err := readMeta(f, ps); err == nil && int64(m.pageSize) == ps {
				m1, err1 = m, nil
				break
			}
		}
	}
	m := m0
	switch {
	case err0 != nil && err1 != nil:
		return damaged("neither meta page is valid (%v; %v): not a bbolt database, or its first pages are damaged", err0, err1)
	case err0 != nil || err1 == nil && m1.txid > m0.txid:
		m = m1
	}
	ps := uint64(m.pageSize)
	switch {
	case ps < 512 || ps > 16<<20 || ps&(ps-1) != 0:
		return damaged("the meta page states a page size of %d bytes", ps)
	case m.pgid < 2 || m.pgid > uint64(size)/ps:
		return damaged("%d bytes long, but its meta page (transaction %d) claims %d pages of %d bytes (%d bytes): the file was cut short",
			size, m.txid, m.pgid, ps, m.pgid*ps)
	case m.root < 2 || m.root >= m.pgid:
		return damaged("the meta page's root page %d lies outside pages 2..%d", m.root, m.pgid-1)
	case m.freelist != boltNoFreelist && (m.freelist < 2 || m.freelist >= m.pgid):
		return damaged("the meta page's freelist page %d lies outside pages 2..%d", m.freelist, m.pgid-1)
	}
	return nil
}

// guard runs fn (a bbolt open or transaction) and turns a panic in it,
// bbolt's assertion on a page that is not what it should be or a fault
// reading the mapped file, into a DamagedError naming the file. bbolt's
// View and Update roll the transaction back on a panic, so the store stays
// usable for the pages that read.
func guard(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = &DamagedError{Path: path, Why: fmt.Sprintf("reading it failed (%v)", p)}
		}
	}()
	return fn()
}

// view and update are bolt's View and Update under guard.
func (s *Store) view(fn func(*bolt.Tx) error) error {
	return guard(s.path, func() error { return s.db.View(fn) })
}

func (s *Store) update(fn func(*bolt.Tx) error) error {
	return guard(s.path, func() error { return s.db.Update(fn) })
}

// FullCheckMaxBytes is the file size up to which Open checks every page
// (bbolt's own consistency check: every page reachable once, none lost);
// above it a damaged page in the middle is found when read, or by a
// scheduled check. A variable so that tests can reach the read path.
var FullCheckMaxBytes int64 = 64 << 20

// metaPageErr matches the check's complaints about pages 0 and 1.
var metaPageErr = regexp.MustCompile(`\bpage [01]: |Page expected to be: [01],`)

// checkPagesIfSmall runs bbolt's page check at open on a small file, so
// that damage in the middle of it stops start-up instead of surfacing
// on the first read of that page.
func (s *Store) checkPagesIfSmall() error {
	fi, err := os.Stat(s.path)
	if err != nil || fi.Size() > FullCheckMaxBytes {
		return nil
	}
	return s.CheckPages()
}

// CheckPages runs bbolt's consistency check over every page of the file
// (a read transaction: at Open, before anything writes); the first problem
// is a DamagedError.
func (s *Store) CheckPages() error {
	var pc PageCheck
	err := s.view(func(tx *bolt.Tx) error {
		pc = s.checkTx(tx)
		return nil
	})
	if err != nil {
		return err
	}
	return pc.err(s.path)
}

// PageCheck is what a check of every page of the file found.
type PageCheck struct {
	At       time.Time     `json:"at"`
	Duration time.Duration `json:"duration_ns"`
	Bytes    int64         `json:"bytes"`
	// Problems counts what bbolt's check reported (0: every page sound);
	// First are the first maxPageProblems of them.
	Problems int      `json:"problems"`
	First    []string `json:"first,omitempty"`
}

// maxPageProblems bounds the problems a check keeps (a damaged file can
// report one per page).
const maxPageProblems = 10

func (pc PageCheck) err(path string) error {
	if pc.Problems == 0 {
		return nil
	}
	why := "page check: " + pc.First[0]
	if pc.Problems > 1 {
		why += fmt.Sprintf(" (and %d more)", pc.Problems-1)
	}
	return &DamagedError{Path: path, Why: why}
}

// checkTx runs bbolt's check in tx and drains it: its goroutine reads the
// file through tx, so it must be done before tx ends.
func (s *Store) checkTx(tx *bolt.Tx) PageCheck {
	pc := PageCheck{Bytes: tx.Size()}
	for err := range tx.Check() {
		if metaPageErr.MatchString(err.Error()) {
			continue // the meta pages: checkFile judged them, one good copy suffices
		}
		pc.Problems++
		if len(pc.First) < maxPageProblems {
			pc.First = append(pc.First, err.Error())
		}
	}
	return pc
}

// CheckPagesLive checks every page of the file while the store is in use
// (the daemon's scheduled check). bbolt's check reads the database's free
// page list, which its writers change: beside them it is safe only in a
// write transaction (in a read one it races with them), so it runs in one
// that is rolled back, writing nothing; reads go on, writes wait for it.
// A file opened read-only has no writers and is checked in a read
// transaction. Damage is a DamagedError; the PageCheck has the counts.
func (s *Store) CheckPagesLive(now time.Time) (PageCheck, error) {
	start := time.Now()
	var pc PageCheck
	err := guard(s.path, func() error {
		tx, err := s.db.Begin(!s.db.IsReadOnly())
		if err != nil {
			return fmt.Errorf("page check of %s: %w", s.path, err)
		}
		defer tx.Rollback()
		pc = s.checkTx(tx)
		return nil
	})
	pc.At, pc.Duration = now, time.Since(start)
	if err != nil {
		return pc, err
	}
	return pc, pc.err(s.path)
}
