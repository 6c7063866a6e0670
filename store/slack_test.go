package store_test

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/store"
)

// A signature seen before the daemon restarted is still a replay after it,
// until it expires; then the record is gone.
func TestStore_FirstSlackSignature(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pw.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sig := bytes.Repeat([]byte{0xab}, 32)
	other := bytes.Repeat([]byte{0xcd}, 32)
	exp := t0.Add(6 * time.Minute)
	if first, err := st.FirstSlackSignature(sig, exp, t0); err != nil || !first {
		t.Fatalf("first sight: %v %v", first, err)
	}
	if first, err := st.FirstSlackSignature(sig, exp, t0.Add(time.Second)); err != nil || first {
		t.Fatalf("replay: %v %v", first, err)
	}
	if first, _ := st.FirstSlackSignature(other, exp, t0); !first {
		t.Error("another signature is refused")
	}
	st.Close()
	st, err = store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if first, err := st.FirstSlackSignature(sig, exp, t0.Add(5*time.Minute)); err != nil || first {
		t.Fatalf("replay after a restart: %v %v", first, err)
	}
	// Past its expiry the record is pruned (Slack refuses the timestamp by
	// then anyway), so the bucket does not grow.
	if first, _ := st.FirstSlackSignature(sig, t0.Add(20*time.Minute), exp.Add(time.Second)); !first {
		t.Error("an expired record still refuses")
	}
	if _, err := st.FirstSlackSignature(nil, exp, t0); err == nil {
		t.Error("an empty signature is accepted")
	}
}

// One Slack request creates one silence, whatever the number of times it
// arrives, across restarts; another request creates another.
func TestStore_AddSilenceOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pw.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sl := store.Silence{Watch: "*", Starts: t0, Ends: t0.Add(time.Hour), Reason: "deploy", CreatedBy: "slack:ana"}
	exp := t0.Add(24 * time.Hour)
	a, created, err := st.AddSilenceOnce("T1\x00trigger-1", sl, exp, t0)
	if err != nil || !created || a.ID == 0 {
		t.Fatalf("first: %+v %v %v", a, created, err)
	}
	st.Close()
	if st, err = store.Open(path, store.Options{}); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	again, created, err := st.AddSilenceOnce("T1\x00trigger-1", sl, exp, t0.Add(time.Minute))
	if err != nil || created || again.ID != a.ID {
		t.Fatalf("again: %+v %v %v, want silence %d unchanged", again, created, err, a.ID)
	}
	b, created, _ := st.AddSilenceOnce("T1\x00trigger-2", sl, exp, t0.Add(time.Minute))
	if !created || b.ID == a.ID {
		t.Errorf("another request: %+v %v", b, created)
	}
	if ss, _ := st.Silences(); len(ss) != 2 {
		t.Errorf("%d silences, want 2", len(ss))
	}
	if _, _, err := st.AddSilenceOnce("", sl, exp, t0); err == nil {
		t.Error("an empty request id is accepted")
	}
}
