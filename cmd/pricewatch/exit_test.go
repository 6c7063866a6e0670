package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// Issue 32 item 3: one table of exit statuses for every command — 2 for
// usage and input errors, 1 for runtime errors, 3 for damaged or
// unsupported data — each command run with a bad input. Before: plan's
// input errors (unknown workload, bad --tokens, unknown currency or card,
// a missing --spec file) exited 1 where best's exit 2; a config file that
// is not there exited 1; `digest extra` ignored its argument (and the
// flags after it); `silence remove 99` (no such silence) exited 1 offline
// and 2 through a daemon; `profile delete` of no profile 1 offline, 2
// through a daemon; a database of an unknown schema exited 1.
func TestExitCodes_OneTable(t *testing.T) {
	db := demoOffersDB(t)
	dir := t.TempDir()
	missingDB := filepath.Join(dir, "none.db")
	badCfg := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(badCfg, []byte("ranking:\n  base_currency: GBP\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	future := futureSchemaDB(t, db)

	cases := []struct {
		args []string
		want int
	}{
		// usage and input: 2
		{[]string{"bogus"}, exitUsage},
		{[]string{"serve", "--config", badCfg, "--db", db}, exitUsage},
		{[]string{"scrape", "nosuch", "--db", db}, exitUsage},
		{[]string{"best", "--db", db, "--workload", "nosuch"}, exitUsage},
		{[]string{"best", "--db", db, "--workload", "lora-7b", "--region", "nowhere"}, exitUsage},
		{[]string{"best", "--config", filepath.Join(dir, "nosuch.yml"), "--workload", "lora-7b"}, exitUsage},
		{[]string{"offers", "--db", db, "H100:x"}, exitUsage},
		{[]string{"sources", "--db", db, "--fixtures", dir}, exitUsage},
		{[]string{"sources", "accept", "nosuch", "--db", db}, exitUsage},
		{[]string{"plan", "--db", db, "--workload", "nosuch", "--tokens", "1e6"}, exitUsage},
		{[]string{"plan", "--db", db, "--workload", "lora-7b", "--tokens", "-5"}, exitUsage},
		{[]string{"plan", "--db", db, "--workload", "lora-7b", "--tokens", "1e6", "--currency", "XYZ"}, exitUsage},
		{[]string{"plan", "--db", db, "--workload", "lora-7b", "--tokens", "1e6", "--card", "NOPE"}, exitUsage},
		{[]string{"plan", "--db", db, "--spec", filepath.Join(dir, "nosuch.yml")}, exitUsage},
		{[]string{"estimate", "--preset", "llama3-8b", "--card", "NOPE"}, exitUsage},
		{[]string{"profile", "set", "--db", db, "--card", "NOPE", "--workload", "lora-7b", "--tps", "100"}, exitUsage},
		{[]string{"profile", "import", filepath.Join(dir, "nosuch.json"), "--db", db, "--card", "A100-80GB-SXM", "--workload", "lora-7b"}, exitUsage},
		{[]string{"profile", "list", "extra", "--db", db}, exitUsage},
		{[]string{"profile", "delete", "--db", db, "--card", "A100-80GB-SXM", "--workload", "lora-7b"}, exitUsage},
		{[]string{"digest", "extra", "--db", db}, exitUsage},
		{[]string{"alerts", "--db", db, "--status", "lost"}, exitUsage},
		{[]string{"silence", "add", "--db", db, "--watch", "nosuch", "--for", "1h", "--reason", "x"}, exitUsage},
		{[]string{"silence", "remove", "--db", db, "99"}, exitUsage},
		{[]string{"silence", "list", "extra", "--db", db}, exitUsage},
		{[]string{"compact", "--db", db, "--raw-window", "1h"}, exitUsage},
		{[]string{"export", "--db", db, "--format", "xml"}, exitUsage},
		{[]string{"export", "--db", db, "--provider", "nope"}, exitUsage},
		{[]string{"version", "extra"}, exitUsage},
		{[]string{"best", "--db", missingDB, "--workload", "lora-7b"}, exitUsage},
		// runtime: 1
		{[]string{"export", "--db", db, "--out", filepath.Join(notDir, "catalog")}, exitRuntime},
		// damaged or unsupported data: 3
		{[]string{"best", "--db", empty, "--workload", "lora-7b"}, exitDamaged},
		{[]string{"offers", "--db", future, "H100"}, exitDamaged},
		{[]string{"serve", "--db", future, "--addr", "127.0.0.1:0"}, exitDamaged},
	}
	for _, tc := range cases {
		var out, errOut bytes.Buffer
		err := Run(t.Context(), tc.args, &out, &errOut)
		if got := exitCode(err); got != tc.want {
			t.Errorf("%q: exit %d, want %d (%v)", tc.args, got, tc.want, err)
		}
	}
}

// futureSchemaDB is a copy of db whose schema version no build reads yet.
func futureSchemaDB(t *testing.T, db string) string {
	t.Helper()
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "future.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	bdb, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	if err := bdb.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("schema_version"), []byte("99"))
	}); err != nil {
		t.Fatal(err)
	}
	return path
}

// docs/cli.md lists the exit table as the code has it: every status with
// its meaning, word for word.
func TestExitCodes_DocumentedTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	rows := regexp.MustCompile("(?m)^\\| `(\\d)` \\| (.+) \\|$").FindAllStringSubmatch(doc, -1)
	got := map[int]string{}
	for _, r := range rows {
		n, _ := strconv.Atoi(r[1])
		got[n] = r[2]
	}
	want := map[int]string{exitOK: "success"}
	for _, r := range exitTable {
		want[r.code] = r.meaning
	}
	if len(got) != len(want) {
		t.Errorf("docs/cli.md lists statuses %v, the code %v", got, want)
	}
	for code, m := range want {
		if got[code] != m {
			t.Errorf("docs/cli.md, status %d:\n doc:  %q\n code: %q", code, got[code], m)
		}
	}
	if !strings.Contains(doc, "exitTable") {
		t.Error("docs/cli.md does not say where the table lives (exitTable)")
	}
}
