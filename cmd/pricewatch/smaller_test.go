package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/rank"
)

// Issue 22 item 7, each small one with the failure it showed before.

// The silence add example of -h runs as printed, on the default config
// (before: unknown watch "lora-ondemand", a watch of the example config only).
func TestSilence_HelpExampleRuns(t *testing.T) {
	args := strings.Fields(strings.ReplaceAll(helpText["silence add"][2], `"`, ""))[1:]
	db := filepath.Join(t.TempDir(), "pw.db")
	var out, errOut bytes.Buffer
	if err := Run(t.Context(), append(args, "--db", db), &out, &errOut); err != nil || !strings.Contains(out.String(), "silence 1:") {
		t.Errorf("%v: %v %q", args, err, out.String())
	}
}

// A refused silence, and compact of a file that is not there, create no
// database file (before: both left an empty pricewatch database behind).
func TestRefusedCommands_CreateNoDatabase(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"silence", "add", "--watch", "nosuch", "--for", "1h", "--reason", "x", "--db", filepath.Join(dir, "silence.db")},
		{"compact", "--db", filepath.Join(dir, "typo.db")},
	} {
		var out, errOut bytes.Buffer
		err := Run(t.Context(), args, &out, &errOut)
		if err == nil {
			t.Errorf("%v: accepted", args)
		}
		if _, serr := os.Stat(args[len(args)-1]); !os.IsNotExist(serr) {
			t.Errorf("%v (%v): the file exists: %v", args, err, serr)
		}
	}
	var out, errOut bytes.Buffer
	err := Run(t.Context(), []string{"compact", "--db", filepath.Join(dir, "typo.db")}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "no database at "+filepath.Join(dir, "typo.db")) {
		t.Errorf("compact of a missing file: %v", err)
	}
}

// An unsupported base currency is named by its key in every command, as
// serve names it (before: best and plan said 'unknown currency ""').
func TestBaseCurrency_NamedEverywhere(t *testing.T) {
	db := filepath.Join(t.TempDir(), "pw.db")
	var out, errOut bytes.Buffer
	if err := Run(t.Context(), []string{"scrape", "--demo", "--db", db}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "c.yml")
	if err := os.WriteFile(cfg, []byte("ranking:\n  base_currency: GBP\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"best", "--workload", "lora-7b"},
		{"plan", "--workload", "lora-7b", "--tokens", "1000000"},
		{"serve"},
	} {
		err := Run(t.Context(), append(args, "--config", cfg, "--db", db), &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), "ranking.base_currency") {
			t.Errorf("%s: %v", args[0], err)
		}
	}
}

// A missing file is named once (before: "open X: open X: no such file or
// directory").
func TestMissingDatabase_PathOnce(t *testing.T) {
	db := filepath.Join(t.TempDir(), "none.db")
	var out, errOut bytes.Buffer
	err := Run(t.Context(), []string{"best", "--db", db, "--workload", "lora-7b"}, &out, &errOut)
	if err == nil || strings.Count(err.Error(), db) != 1 {
		t.Errorf("err %v", err)
	}
}

// plan --limit cuts the fleet table as it cuts the options (before: 2
// options and all 68 fleets of the demo data).
func TestPlan_LimitCutsFleets(t *testing.T) {
	db := filepath.Join(t.TempDir(), "pw.db")
	var out, errOut bytes.Buffer
	if err := Run(t.Context(), []string{"scrape", "--demo", "--db", db}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	plan := []string{"plan", "--db", db, "--workload", "serve-7b", "--base-tps", "200", "--peak-tps", "800", "--peak-hours", "4", "--limit", "2"}
	out.Reset()
	if err := Run(t.Context(), append(plan, "--json"), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var res rank.PlanResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Options) != 2 || len(res.Fleets) != 2 || res.FleetsConsidered <= 2 {
		t.Errorf("--limit 2: %d options, %d fleets of %d", len(res.Options), len(res.Fleets), res.FleetsConsidered)
	}
	out.Reset()
	if err := Run(t.Context(), plan, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "2 of ") || !strings.Contains(out.String(), " fleets shown (--limit).") {
		t.Errorf("table:\n%s", out.String())
	}
}

// version calls the commit's time what it is: Go records vcs.time, no
// build time (before: "built <vcs.time>").
func TestVersion_CommitTimeIsNotABuildTime(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-12-02T19:51:30Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, c := range []struct{ buildDate, want string }{
		{"", "committed 2026-12-02T19:51:30Z"},
		{"2026-12-03T08:00:00Z", "built 2026-12-03T08:00:00Z"},
	} {
		ver, rev, when := versionOf(bi, "", "", c.buildDate)
		if ver != "v1.2.3" || rev != "abc123+dirty" || when != c.want {
			t.Errorf("buildDate %q: %s %s %q, want %q", c.buildDate, ver, rev, when, c.want)
		}
	}
	if _, _, when := versionOf(nil, "", "", ""); when != "build date unknown" {
		t.Errorf("no build info: %q", when)
	}
}
