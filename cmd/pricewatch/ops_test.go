package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/httpapi"
)

// Every command's -h and --help exits 0 and prints its flags and an example.
func TestHelp_EveryCommand(t *testing.T) {
	// Every command with a help text, so a new one is covered too.
	names := slices.Sorted(maps.Keys(helpText))
	for _, cmd := range []string{"serve", "scrape", "best", "sources", "plan", "profile set", "profile import", "profile list",
		"profile delete", "digest", "alerts", "silence add", "silence list", "silence remove", "compact", "export", "version"} {
		if !slices.Contains(names, cmd) {
			t.Errorf("%s has no help text", cmd)
		}
	}
	for _, name := range names {
		args := strings.Fields(name)
		for _, h := range []string{"-h", "--help"} {
			var out, errOut bytes.Buffer
			err := Run(t.Context(), append(append([]string{}, args...), h), &out, &errOut)
			name := strings.Join(args, " ")
			if err != nil {
				t.Errorf("%s %s: %v", name, h, err)
				continue
			}
			s := out.String()
			if !strings.Contains(s, "usage: pricewatch "+name) || !strings.Contains(s, "Example:\n  pricewatch ") || (name != "version" && !strings.Contains(s, "  -")) {
				t.Errorf("%s %s printed:\n%s\nstderr: %s", name, h, s, errOut.String())
			}
		}
	}
	for _, group := range []string{"profile", "silence"} {
		var out, errOut bytes.Buffer
		if err := Run(t.Context(), []string{group, "--help"}, &out, &errOut); err != nil || !strings.Contains(out.String(), "usage: pricewatch "+group) {
			t.Errorf("%s --help: %v %q", group, err, out.String())
		}
	}
	var out, errOut bytes.Buffer
	if err := Run(t.Context(), []string{"--help"}, &out, &errOut); err != nil || !strings.Contains(out.String(), "export") {
		t.Errorf("--help: %v %q", err, out.String())
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errOut bytes.Buffer
		if err := Run(t.Context(), args, &out, &errOut); err != nil || !strings.HasPrefix(out.String(), "pricewatch ") ||
			!strings.Contains(out.String(), "commit ") || !strings.Contains(out.String(), ", go") {
			t.Errorf("%v: %v %q", args, err, out.String())
		}
	}
}

// The demo keeps its database (and the daemon's .addr file) in the user's
// state directory, never in the working directory; every reading command
// works while serve runs, asking the daemon without waiting out the lock.
func TestDemo_StateDirAndDaemonTalk(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("PRICEWATCH_API_TOKEN", "ops-test-token")
	wd, _ := os.Getwd()
	d := startServe(t, "--demo", "--addr", "127.0.0.1:0")
	db := filepath.Join(state, "pricewatch", "demo.db")
	waitFor(t, 30*time.Second, "the demo database and its .addr file", func() bool {
		_, err1 := os.Stat(db)
		_, err2 := os.Stat(db + ".addr")
		return err1 == nil && err2 == nil
	})
	if m, _ := filepath.Glob(filepath.Join(wd, "*.db*")); len(m) > 0 {
		t.Errorf("the demo wrote into the working directory: %v", m)
	}
	waitFor(t, 60*time.Second, "a ranking", func() bool {
		var r map[string]any
		return getJSON(t, d.base+"/readyz", &r) == 200
	})
	run := func(args ...string) (string, time.Duration) {
		t.Helper()
		var out, errOut bytes.Buffer
		start := time.Now()
		if err := Run(t.Context(), args, &out, &errOut); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errOut.String())
		}
		return out.String(), time.Since(start)
	}
	out, took := run("best", "--demo", "--workload", "lora-7b", "--json")
	var best httpapi.BestResponse
	if err := json.Unmarshal([]byte(out), &best); err != nil || len(best.Cards) < 8 {
		t.Fatalf("best via the daemon: %v %.300s", err, out)
	}
	if took > 1500*time.Millisecond {
		t.Errorf("best via the daemon took %s: it waited for the lock", took)
	}
	if out, _ = run("digest", "--demo"); !strings.Contains(out, "pricewatch daily digest") {
		t.Errorf("digest while serve runs: %q", out)
	}
	if out, _ = run("sources", "--demo"); !strings.Contains(out, "runpod") {
		t.Errorf("sources while serve runs: %q", out)
	}
	out, _ = run("export", "--demo", "--provider", "runpod")
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) < 20 || recs[0][0] != "instance_name" || recs[0][13] != "provider_data" {
		t.Fatalf("export via the daemon: %v %d rows", err, len(recs))
	}
	dir := t.TempDir()
	out, _ = run("export", "--demo", "--format", "json", "--out", dir)
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) < 5 || !strings.Contains(out, "runpod.json") {
		t.Errorf("export --out: %v\n%s", files, out)
	}
	var rows []httpapi.ExportRow
	b, _ := os.ReadFile(filepath.Join(dir, "runpod.json"))
	if err := json.Unmarshal(b, &rows); err != nil || len(rows) != len(recs)-1 || rows[0].Provider != "runpod" {
		t.Errorf("runpod.json: %v, %d rows (CSV %d)", err, len(rows), len(recs)-1)
	}
	// scrape asks the daemon to run the sources.
	if out, _ = run("scrape", "--demo", "ecb", "runpod"); !strings.Contains(out, "ecb") || !strings.Contains(out, "runpod") || strings.Contains(out, "FAILED") {
		t.Errorf("scrape via the daemon: %q", out)
	}
	d.stop(t)
	if _, err := os.Stat(db + ".addr"); !os.IsNotExist(err) {
		t.Errorf("the .addr file outlived the daemon: %v", err)
	}
	// Without the daemon the same commands read the file.
	if out, _ = run("best", "--demo", "--workload", "lora-7b"); !strings.Contains(out, "COST/MTOK") {
		t.Errorf("best from the file: %q", out)
	}
}
