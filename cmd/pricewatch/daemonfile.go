package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/pricewatch/pricewatch/httpapi"
)

// The daemon's record beside the database (<db>.addr) tells the CLI where
// the daemon that holds the file listens. The CLI sends tokens and uploads
// there, so it trusts the record only when the file and its folder are the
// user's own and the daemon proves it wrote it (see httpapi.DaemonProof).

// daemonRecord is the content of <db>.addr (JSON, mode 0600).
type daemonRecord struct {
	Addr   string `json:"addr"`
	PID    int    `json:"pid"`
	Secret string `json:"secret"` // hex, 32 random bytes
}

const (
	maxRecordBytes = 4 << 10
	secretBytes    = 32
	// proofTimeout bounds the whole proof exchange.
	proofTimeout = 2 * time.Second
)

// ownerUID is the user the record and its folder must belong to (a
// variable so that tests can play another user).
var ownerUID = os.Getuid

// errNoRecord means there is no <db>.addr.
var errNoRecord = errors.New("no daemon record")

// newDaemonRecord is the record of a daemon listening at ln, or an error
// saying why the CLI could not use one (it talks to loopback only).
func newDaemonRecord(ln net.Addr) (daemonRecord, error) {
	ta, ok := ln.(*net.TCPAddr)
	if !ok {
		return daemonRecord{}, fmt.Errorf("listening on %s, not TCP", ln)
	}
	ip := ta.IP
	switch {
	case ip.IsUnspecified():
		ip = net.IPv4(127, 0, 0, 1)
	case !ip.IsLoopback():
		return daemonRecord{}, fmt.Errorf("listening on %s, not a loopback address: the CLI asks a daemon on loopback only (pass it --addr)", ln)
	}
	s := make([]byte, secretBytes)
	if _, err := rand.Read(s); err != nil {
		return daemonRecord{}, err
	}
	return daemonRecord{Addr: net.JoinHostPort(ip.String(), fmt.Sprint(ta.Port)), PID: os.Getpid(), Secret: hex.EncodeToString(s)}, nil
}

// writeDaemonRecord writes rec to path: a fresh temp file in the same
// folder (O_EXCL|O_NOFOLLOW, 0600), then a rename over path, which
// replaces a symlink there instead of writing through it. It returns the
// file written, for removeDaemonRecord.
func writeDaemonRecord(path string, rec daemonRecord) (fs.FileInfo, error) {
	return writeDaemonRecordFor(path, rec, -1)
}

// writeDaemonRecordFor is writeDaemonRecord shared with a group: with gid
// at least 0 the file is 0640 and belongs to that group (the operators in
// it read the address and the secret; no one else does).
func writeDaemonRecordFor(path string, rec daemonRecord, gid int) (fs.FileInfo, error) {
	if err := checkRecordDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	var suffix [8]byte
	rand.Read(suffix[:])
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"."+hex.EncodeToString(suffix[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if gid >= 0 {
		if err = f.Chown(-1, gid); err == nil {
			err = f.Chmod(0o640)
		}
	}
	if err == nil {
		_, err = f.Write(append(b, '\n'))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return os.Lstat(path)
}

// removeDaemonRecord removes path if it is still the file written.
func removeDaemonRecord(path string, written fs.FileInfo) {
	if fi, err := os.Lstat(path); err == nil && os.SameFile(fi, written) {
		os.Remove(path)
	}
}

// ownedByUser says whose fi is when it is not the user's.
func ownedByUser(fi fs.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != ownerUID() {
		return fmt.Errorf("it belongs to uid %d, not to you (uid %d)", st.Uid, ownerUID())
	}
	return nil
}

// checkRecordDir refuses a folder another user could write the record
// into: it must belong to the user (or root) and be writable by no one
// else, unless sticky (then others cannot replace the user's file, and a
// file of theirs fails the file's own owner check).
func checkRecordDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !ok:
		return nil // no owners to check on this system
	case int(st.Uid) != ownerUID() && st.Uid != 0:
		return fmt.Errorf("folder %s belongs to uid %d, not to you (uid %d)", dir, st.Uid, ownerUID())
	case fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0:
		return fmt.Errorf("folder %s is writable by others (mode %v)", dir, fi.Mode().Perm())
	}
	return nil
}

// recordGID is the group the daemon record may be shared with
// (server.record_group, resolved when the config is loaded; -1: none).
var recordGID = -1

// sharedRecord reports whether fi is a daemon record shared with the
// configured record group: mode 0640 exactly, that group's, and the user
// is in it; owner is the file's owner (the daemon's user).
func sharedRecord(fi fs.FileInfo) (owner int, ok bool) {
	st, sys := fi.Sys().(*syscall.Stat_t)
	if !sys || recordGID < 0 || int(st.Gid) != recordGID || fi.Mode().Perm() != 0o640 {
		return 0, false
	}
	if os.Getegid() == recordGID {
		return int(st.Uid), true
	}
	groups, err := os.Getgroups()
	if err != nil {
		return 0, false
	}
	for _, g := range groups {
		if g == recordGID {
			return int(st.Uid), true
		}
	}
	return 0, false
}

// checkRecordDirOf checks the folder of a shared record: its owner's (or
// root's), writable by no one else.
func checkRecordDirOf(dir string, owner int) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !ok:
		return nil
	case int(st.Uid) != owner && st.Uid != 0:
		return fmt.Errorf("folder %s belongs to uid %d, not to the record's owner (uid %d)", dir, st.Uid, owner)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("folder %s is writable by others (mode %v)", dir, fi.Mode().Perm())
	}
	return nil
}

// resolveGroup reads server.record_group: a numeric gid or a group name.
func resolveGroup(name string) (int, error) {
	if name == "" {
		return -1, nil
	}
	if n, err := strconv.Atoi(name); err == nil && n >= 0 {
		return n, nil
	}
	g, err := user.LookupGroup(name)
	if err != nil {
		return -1, fmt.Errorf("server.record_group: %w", err)
	}
	return strconv.Atoi(g.Gid)
}

// readDaemonRecord reads and checks path: a regular file (Lstat: not a
// symlink) of the user's, readable by no one else (it holds a secret), at
// most maxRecordBytes, naming a loopback address. errNoRecord when absent.
func readDaemonRecord(path string) (daemonRecord, error) {
	var rec daemonRecord
	refuse := func(why string, a ...any) (daemonRecord, error) {
		return rec, fmt.Errorf("refusing the daemon record %s: %s", path, fmt.Sprintf(why, a...))
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, errNoRecord
	}
	if err != nil {
		return rec, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return refuse("a symlink")
	}
	if !fi.Mode().IsRegular() {
		return refuse("not a regular file")
	}
	if owner, ok := sharedRecord(fi); ok {
		// The daemon's record shared with the operators' group: the
		// daemon's folder, writable by it alone.
		if err := checkRecordDirOf(filepath.Dir(path), owner); err != nil {
			return refuse("%v", err)
		}
	} else {
		if err := checkRecordDir(filepath.Dir(path)); err != nil {
			return refuse("%v", err)
		}
		if err := ownedByUser(fi); err != nil {
			return refuse("%v (a daemon of another user shares its record only with server.record_group: a 0640 file of that group, which you are in)", err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			return refuse("mode %v lets others read or write it (want 0600, or 0640 to server.record_group)", fi.Mode().Perm())
		}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return refuse("%v", err)
	}
	defer f.Close()
	if ofi, err := f.Stat(); err != nil || !os.SameFile(fi, ofi) {
		return refuse("it changed while read")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRecordBytes+1))
	if err != nil {
		return refuse("%v", err)
	}
	if len(b) > maxRecordBytes {
		return refuse("larger than %d bytes", maxRecordBytes)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return refuse("not a daemon record (%v): a daemon of an older pricewatch? restart it", err)
	}
	host, _, err := net.SplitHostPort(rec.Addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return refuse("address %q is not a loopback IP address", rec.Addr)
	}
	if s, err := hex.DecodeString(rec.Secret); err != nil || len(s) != secretBytes {
		return refuse("no secret of %d bytes", secretBytes)
	}
	return rec, nil
}

// proveDaemon asks the daemon at rec.Addr to prove it holds rec's secret,
// with a fresh challenge, within proofTimeout and a bounded answer.
func proveDaemon(ctx context.Context, rec daemonRecord) error {
	ctx, cancel := context.WithTimeout(ctx, proofTimeout)
	defer cancel()
	secret, _ := hex.DecodeString(rec.Secret)
	challenge := make([]byte, 32)
	if _, err := rand.Read(challenge); err != nil {
		return err
	}
	var out struct{ Proof string }
	path := "/v1/daemon/proof?" + url.Values{"challenge": {hex.EncodeToString(challenge)}}.Encode()
	if err := daemonGet(ctx, rec.Addr, path, 4<<10, &out); err != nil {
		return err
	}
	got, err := hex.DecodeString(out.Proof)
	if err != nil || !hmac.Equal(got, httpapi.DaemonProof(secret, rec.Addr, challenge)) {
		return errors.New("its answer does not prove the secret of the record")
	}
	return nil
}

// provenDaemon is the address of the daemon recorded beside db once it
// proved it wrote the record; errNoRecord when there is none.
func provenDaemon(ctx context.Context, db string) (string, error) {
	rec, err := readDaemonRecord(db + ".addr")
	if err != nil {
		return "", err
	}
	if err := proveDaemon(ctx, rec); err != nil {
		return "", fmt.Errorf("the process at %s (recorded in %s) is not the daemon that wrote it: %w; remove the file if no pricewatch serve runs",
			rec.Addr, db+".addr", err)
	}
	proven.Store(rec.Addr, true)
	return rec.Addr, nil
}

// proven are the addresses that proved, in this process, to be the
// daemon: by its record's secret, or by the API token (proveToken). The
// token is sent to no other address.
var proven sync.Map

// proveToken asks the process at addr to prove it holds the API token
// (an HMAC of a fresh challenge and the address, keyed by the token),
// before the token is sent there: a process that does not hold it learns
// nothing but the challenge.
func proveToken(ctx context.Context, addr, token string) error {
	if _, ok := proven.Load(addr); ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, proofTimeout)
	defer cancel()
	challenge := make([]byte, 32)
	if _, err := rand.Read(challenge); err != nil {
		return err
	}
	var out struct{ Proof string }
	path := "/v1/daemon/proof?" + url.Values{"challenge": {hex.EncodeToString(challenge)}, "key": {"token"}}.Encode()
	if err := daemonGet(ctx, addr, path, 4<<10, &out); err != nil {
		return fmt.Errorf("the process at %s did not prove it holds the API token (%w): the token was not sent", addr, err)
	}
	got, err := hex.DecodeString(out.Proof)
	if err != nil || !hmac.Equal(got, httpapi.TokenProof(token, addr, challenge)) {
		return fmt.Errorf("the process at %s does not hold the API token: the token was not sent", addr)
	}
	proven.Store(addr, true)
	return nil
}

// tokenDaemonAddr is the daemon to send the API token to: the one recorded
// beside db once it proved the record's secret. Without a record the CLI
// stops (server.addr is where a daemon may listen, not proof that it
// does) unless the address is named with --addr, where the daemon then
// proves it holds the token before the token is sent (daemonCall).
func tokenDaemonAddr(ctx context.Context, db string) (string, error) {
	addr, err := provenDaemon(ctx, db)
	if errors.Is(err, errNoRecord) {
		return "", fmt.Errorf("no daemon record %s (serve writes it): the API token is not sent to an address nothing proved; name the daemon with --addr HOST:PORT", db+".addr")
	}
	return addr, err
}

// daemonGet reads a JSON answer of at most limit bytes from the daemon.
func daemonGet(ctx context.Context, addr, path string, limit int64, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", res.StatusCode)
	}
	return json.NewDecoder(capped(res.Body, limit)).Decode(out)
}

// errAnswerTooLarge is a daemon answer over its cap.
type errAnswerTooLarge struct{ limit int64 }

func (e errAnswerTooLarge) Error() string {
	return fmt.Sprintf("the daemon's answer is larger than %d bytes", e.limit)
}

// capped reads r up to limit bytes and fails past it (io.LimitReader alone
// would end the answer quietly, as if complete).
func capped(r io.Reader, limit int64) io.Reader { return &capReader{r: r, left: limit, limit: limit} }

type capReader struct {
	r           io.Reader
	left, limit int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One byte more tells a body of exactly limit bytes from a longer one.
		var b [1]byte
		n, err := c.r.Read(b[:])
		if n > 0 {
			return 0, errAnswerTooLarge{c.limit}
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}
