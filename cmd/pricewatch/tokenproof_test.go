package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/config"
)

// With no daemon record (never written, or deleted) the six token commands
// send nothing to server.addr, where an impostor listens: they stop and
// say to name the daemon. Named with --addr, the impostor must prove it
// holds the token first, which it cannot: 0 tokens to the impostor.
// Before: each command sent the bearer token to server.addr (5/5, 5/5).
func TestTokenCommands_NoRecordSendNoToken(t *testing.T) {
	t.Setenv(config.EnvAPIToken, "secret-api-token")
	im := newImpostor(t)
	db := lockedDB(t)
	cfgFile := writeConfigAddr(t, db, im.addr())
	for _, deleted := range []bool{false, true} {
		if deleted {
			// A record that was there and is gone: the same.
			writeFile(t, db+".addr", "x", 0o600)
			os.Remove(db + ".addr")
		}
		for _, args := range tokenCommands(t, db) {
			var out, errOut bytes.Buffer
			err := Run(t.Context(), withFlags(args, "--config", cfgFile), &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), "--addr") && !strings.Contains(errOut.String(), "--addr") {
				t.Errorf("%v (record deleted %v): %v %s", args, deleted, err, errOut.String())
			}
			var named bytes.Buffer
			err = Run(t.Context(), withFlags(args, "--config", cfgFile, "--addr", im.addr()), &named, &named)
			if err == nil || !strings.Contains(err.Error(), "did not prove it holds the API token") && !strings.Contains(err.Error(), "does not hold the API token") &&
				!strings.Contains(named.String(), "API token") {
				t.Errorf("%v --addr impostor: %v %s", args, err, named.String())
			}
		}
	}
	if tokens, uploads := im.seen(); len(tokens) != 0 || uploads != 0 {
		t.Errorf("the impostor on server.addr got %d tokens and %d uploads: %v", len(tokens), uploads, tokens)
	}
}

// writeConfigAddr writes a config whose server.addr is addr and db is db.
func writeConfigAddr(t *testing.T, db, addr string) string {
	t.Helper()
	path := t.TempDir() + "/pw.yml"
	writeFile(t, path, "db: "+db+"\nserver:\n  addr: "+addr+"\n", 0o600)
	return path
}

// withFlags puts flags right after a command's words (scrape takes its
// source names last).
func withFlags(args []string, flags ...string) []string {
	at := 1
	if args[0] == "profile" || args[0] == "silence" {
		at = 2
	}
	return append(append(append([]string(nil), args[:at]...), flags...), args[at:]...)
}
