package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/config"
)

// TestDaemon_InputErrorIsTheDaemonsOwn: while a daemon holds the database,
// a bad input gets the daemon's own message as the error, worded and
// exiting as it does without a daemon; only a daemon that cannot be
// reached is reported as such. Before the fix `best --workload nosuch`
// through the daemon failed with "…held by a running daemon; asking it at
// 127.0.0.1:… failed (pass its --addr HOST:PORT): HTTP 400: unknown
// workload …" and exit status 1, where offline it is a usage error (2).
func TestDaemon_InputErrorIsTheDaemonsOwn(t *testing.T) {
	t.Setenv(config.EnvAPIToken, "")
	db := filepath.Join(t.TempDir(), "pw.db")
	cfg := writeConfig(t, db, "http://127.0.0.1:1", "@every 1h")
	var out, errOut bytes.Buffer
	if err := Run(t.Context(), []string{"scrape", "--config", cfg, "--demo"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	cases := [][]string{
		{"best", "--config", cfg, "--workload", "nosuch"},
		{"best", "--config", cfg, "--workload", "lora-7b", "--mode", "bogus"},
		{"best", "--config", cfg, "--workload", "lora-7b", "--currency", "XYZ"},
		{"plan", "--config", cfg, "--workload", "nosuch", "--tokens", "1e6"},
	}
	offline := make([]error, len(cases))
	for i, args := range cases {
		offline[i] = Run(t.Context(), args, &out, &errOut)
		if offline[i] == nil {
			t.Fatalf("%q offline: no error", args)
		}
	}

	d := startServe(t, "--config", cfg, "--demo")
	waitFor(t, 15*time.Second, "the first scrape", func() bool { return d.sourcesOK(t) })
	for i, args := range cases {
		err := Run(t.Context(), args, &out, &errOut)
		if err == nil {
			t.Errorf("%q via the daemon: no error", args)
			continue
		}
		if strings.Contains(err.Error(), "held by a running daemon") || strings.Contains(err.Error(), "HTTP 400") {
			t.Errorf("%q via the daemon reads as a failure to ask it: %v", args, err)
		}
		if got, want := exitCode(err), exitCode(offline[i]); got != want {
			t.Errorf("%q: exit status %d via the daemon, %d offline (%v / %v)", args, got, want, err, offline[i])
		}
		if err.Error() != offline[i].Error() {
			t.Errorf("%q: the daemon's message differs from the offline one:\n daemon:  %v\n offline: %v", args, err, offline[i])
		}
	}

	// A refusal of the daemon's own (writes are off: no API token) names it.
	err := Run(t.Context(), []string{"digest", "--config", cfg, "--send"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "the daemon holding "+db+" at "+d.base[len("http://"):]+" answered HTTP 403: ") {
		t.Errorf("digest --send without a token via the daemon: %v", err)
	}

	// A daemon that does not answer at the address is said to be out of reach.
	err = Run(t.Context(), []string{"best", "--config", cfg, "--addr", "127.0.0.1:1", "--workload", "lora-7b"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "held by a running daemon, which could not be reached at 127.0.0.1:1") {
		t.Errorf("unreachable daemon: %v", err)
	}
	if err != nil && exitCode(err) != 1 {
		t.Errorf("unreachable daemon: exit status %d, want 1", exitCode(err))
	}
}
