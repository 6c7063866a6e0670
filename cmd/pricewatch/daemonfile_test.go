package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/store"
)

// impostor is a process on loopback that answers every request 200 with
// "{}" (its proof is garbage) and remembers what it was sent.
type impostor struct {
	srv     *httptest.Server
	mu      sync.Mutex
	tokens  []string
	uploads int
}

func newImpostor(t *testing.T) *impostor {
	im := &impostor{}
	im.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		im.mu.Lock()
		if a := r.Header.Get("Authorization"); a != "" {
			im.tokens = append(im.tokens, r.Method+" "+r.URL.Path+": "+a)
		}
		if len(b) > 0 {
			im.uploads++
		}
		im.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/daemon/proof":
			io.WriteString(w, `{"proof":"00112233"}`)
		case "/v1/sources":
			io.WriteString(w, `{"sources":[{"name":"runpod","status":"ok"}]}`)
		default:
			io.WriteString(w, `{}`)
		}
	}))
	t.Cleanup(im.srv.Close)
	return im
}

func (im *impostor) addr() string { return im.srv.Listener.Addr().String() }

func (im *impostor) seen() ([]string, int) {
	im.mu.Lock()
	defer im.mu.Unlock()
	return append([]string(nil), im.tokens...), im.uploads
}

// lockedDB is a database held by this test (as a daemon would hold it).
func lockedDB(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "pw.db")
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	lockWait = 100 * time.Millisecond
	t.Cleanup(func() { lockWait = 2 * time.Second })
	return db
}

// tokenCommands are the commands that send PRICEWATCH_API_TOKEN (and, for
// import, a training log) to the daemon holding the database.
func tokenCommands(t *testing.T, db string) [][]string {
	log := filepath.Join(t.TempDir(), "trainer_state.json")
	os.WriteFile(log, []byte(`{"log_history":[{"train_tokens_per_second": 2000, "step": 10}]}`), 0o600)
	return [][]string{
		{"profile", "set", "--db", db, "--card", "A100-80GB-SXM", "--workload", "lora-7b", "--tps", "2000"},
		{"profile", "import", log, "--db", db, "--card", "A100-80GB-SXM", "--workload", "lora-7b"},
		{"profile", "delete", "--db", db, "--card", "A100-80GB-SXM", "--workload", "lora-7b"},
		{"silence", "add", "--db", db, "--watch", "*", "--for", "1h", "--reason", "x"},
		{"digest", "--db", db, "--send"},
		{"scrape", "--db", db, "runpod"},
	}
}

// Whatever answers at an address found in <db>.addr gets no token and no
// upload unless the record passes its checks and the daemon proves its
// secret. Before: the file was a bare address, read and trusted — the
// impostor got the token from each of the six commands ("PlainAddress"
// failed with six Authorization headers seen, and one upload).
func TestDaemonRecord_ImpostorGetsNoToken(t *testing.T) {
	t.Setenv(config.EnvAPIToken, "secret-api-token")
	secret := strings.Repeat("ab", secretBytes)
	for _, c := range []struct {
		name string
		all  bool // every token command (else profile set only)
		make func(t *testing.T, path, addr string)
		want string
	}{
		{"PlainAddress", true, func(t *testing.T, path, addr string) { writeFile(t, path, addr+"\n", 0o600) }, "not a daemon record"},
		{"StaleRecordPortTaken", true, func(t *testing.T, path, addr string) {
			writeRecordJSON(t, path, daemonRecord{Addr: addr, PID: 1, Secret: secret}, 0o600)
		}, "is not the daemon that wrote it"},
		{"ReadableByOthers", false, func(t *testing.T, path, addr string) {
			writeRecordJSON(t, path, daemonRecord{Addr: addr, PID: 1, Secret: secret}, 0o644)
		}, "lets others read or write it"},
		{"Symlink", false, func(t *testing.T, path, addr string) {
			real := filepath.Join(t.TempDir(), "elsewhere")
			writeRecordJSON(t, real, daemonRecord{Addr: addr, PID: 1, Secret: secret}, 0o600)
			if err := os.Symlink(real, path); err != nil {
				t.Fatal(err)
			}
		}, "a symlink"},
		{"NotLoopback", false, func(t *testing.T, path, addr string) {
			writeRecordJSON(t, path, daemonRecord{Addr: "192.0.2.7:8080", PID: 1, Secret: secret}, 0o600)
		}, "not a loopback IP address"},
		{"FolderWritableByOthers", false, func(t *testing.T, path, addr string) {
			writeRecordJSON(t, path, daemonRecord{Addr: addr, PID: 1, Secret: secret}, 0o600)
			if err := os.Chmod(filepath.Dir(path), 0o777); err != nil {
				t.Fatal(err)
			}
		}, "is writable by others"},
		{"AnotherUsersFile", false, func(t *testing.T, path, addr string) {
			writeRecordJSON(t, path, daemonRecord{Addr: addr, PID: 1, Secret: secret}, 0o600)
			uid := os.Getuid()
			ownerUID = func() int { return uid + 4242 } // the file is now someone else's
			t.Cleanup(func() { ownerUID = os.Getuid })
		}, "not to you"},
	} {
		t.Run(c.name, func(t *testing.T) {
			im := newImpostor(t)
			db := lockedDB(t)
			c.make(t, db+".addr", im.addr())
			cmds := tokenCommands(t, db)
			if !c.all {
				cmds = cmds[:1]
			}
			for _, args := range cmds {
				var out, errOut bytes.Buffer
				err := Run(t.Context(), args, &out, &errOut)
				if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), db+".addr") {
					t.Errorf("%s %s: %v, want an error naming %s.addr and %q", args[0], args[1], err, db, c.want)
				}
			}
			if tokens, uploads := im.seen(); len(tokens) > 0 || uploads > 0 {
				t.Errorf("the impostor got %d token(s) and %d upload(s): %q", len(tokens), uploads, tokens)
			}
		})
	}
}

func writeFile(t *testing.T, path, s string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

func writeRecordJSON(t *testing.T, path string, rec daemonRecord, mode os.FileMode) {
	t.Helper()
	b, _ := json.Marshal(rec)
	writeFile(t, path, string(b), mode)
}

// serve replaces a symlink at <db>.addr instead of writing through it
// (before: the victim the link pointed at was overwritten with the
// address), writes the record 0600 with a loopback address, answers the
// proof, and removes the record on shutdown.
func TestServe_RecordIsNotWrittenThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "pw.db")
	victim := filepath.Join(t.TempDir(), "victim")
	writeFile(t, victim, "precious\n", 0o600)
	if err := os.Symlink(victim, db+".addr"); err != nil {
		t.Fatal(err)
	}
	d := startServe(t, "--demo", "--db", db, "--addr", "127.0.0.1:0")
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("the victim now holds %q", b)
	}
	rec, err := readDaemonRecord(db + ".addr")
	if err != nil {
		t.Fatal(err)
	}
	if "http://"+rec.Addr != d.base || rec.PID != os.Getpid() {
		t.Errorf("record %+v, daemon at %s", rec, d.base)
	}
	if err := proveDaemon(t.Context(), rec); err != nil {
		t.Errorf("the daemon's own proof: %v", err)
	}
	// A record with the right address but another secret fails the proof.
	forged := rec
	forged.Secret = strings.Repeat("00", secretBytes)
	if err := proveDaemon(t.Context(), forged); err == nil {
		t.Error("a forged secret passed the proof")
	}
	d.stop(t)
	if _, err := os.Lstat(db + ".addr"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the record outlived the daemon: %v", err)
	}
}

// The demo's fallback folder in the shared temp directory is used only if
// it is the user's own, mode 0700, and not a symlink (before: MkdirAll
// accepted any folder of that name, world-writable or another user's).
func TestDemoDB_TempFallbackMustBePrivate(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(t *testing.T, dir string)
		want string // "" = accepted
	}{
		{"Absent", func(t *testing.T, dir string) {}, ""},
		{"OwnPrivate", func(t *testing.T, dir string) { os.Mkdir(dir, 0o700) }, ""},
		{"WorldWritable", func(t *testing.T, dir string) { os.Mkdir(dir, 0o777); os.Chmod(dir, 0o777) }, "mode -rwxrwxrwx"},
		{"Symlink", func(t *testing.T, dir string) {
			other := t.TempDir()
			os.Chmod(other, 0o700)
			os.Symlink(other, dir)
		}, "not a folder"},
		{"AnotherUsers", func(t *testing.T, dir string) {
			os.Mkdir(dir, 0o700)
			uid := os.Getuid()
			ownerUID = func() int { return uid + 4242 }
			t.Cleanup(func() { ownerUID = os.Getuid })
		}, "not to you"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			t.Setenv("XDG_STATE_HOME", "")
			t.Setenv("XDG_CACHE_HOME", "")
			t.Setenv("HOME", "")
			dir := filepath.Join(tmp, fmt.Sprintf("pricewatch-%d", os.Getuid()))
			c.make(t, dir)
			db, err := demoDB("demo.db")
			if c.want == "" {
				fi, serr := os.Lstat(dir)
				if err != nil || db != filepath.Join(dir, "demo.db") || serr != nil || fi.Mode().Perm() != 0o700 {
					t.Errorf("demoDB = %q, %v; folder %v %v", db, err, fi, serr)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), dir) {
				t.Errorf("demoDB = %q, %v; want a refusal naming %s and %q", db, err, dir, c.want)
			}
		})
	}
}

// Every read of a daemon answer is bounded: past the cap it is an error
// saying so, not a quietly cut answer (before: the decoder read on, here
// the 4 MiB of an unending list, and failed "unexpected EOF"; in the
// issue, 1.5 GB of RSS).
func TestDaemonAnswer_Bounded(t *testing.T) {
	maxDaemonAnswer = 1 << 20
	t.Cleanup(func() { maxDaemonAnswer = 64 << 20 })
	huge := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"proof":"`)
		chunk := bytes.Repeat([]byte("0"), 64<<10)
		for range 64 { // 4 MiB, never closed
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
	ts := httptest.NewServer(http.HandlerFunc(huge))
	defer ts.Close()
	addr := ts.Listener.Addr().String()
	var out map[string]any
	err := daemonJSON(t.Context(), http.MethodGet, addr, "/v1/best", "", nil, &out)
	if !errors.As(err, new(errAnswerTooLarge)) || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Errorf("daemonJSON: %v, want the answer refused past 1 MiB", err)
	}
	err = proveDaemon(t.Context(), daemonRecord{Addr: addr, Secret: strings.Repeat("ab", secretBytes)})
	if !errors.As(err, new(errAnswerTooLarge)) {
		t.Errorf("proof: %v, want the answer refused past 4 KiB", err)
	}
	// An answer exactly at the cap is whole.
	exact := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"x":"`+strings.Repeat("y", 1<<20-8)+`"}`)
	}))
	defer exact.Close()
	if err := daemonJSON(context.Background(), http.MethodGet, exact.Listener.Addr().String(), "/", "", nil, &out); err != nil {
		t.Errorf("an answer of exactly the cap: %v", err)
	}
}
