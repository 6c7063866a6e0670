package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/httpapi"
)

// Issue 32 item 3, "a CLI without traps": each test names what it showed
// before its fix.

// Flags stand anywhere among a command's arguments, for every command that
// takes arguments. Before: `scrape runpod --demo --db X` failed with
// 'unknown source "--demo"', and `silence remove 1 --db X` with "usage:
// pricewatch silence remove ID" (the flags after the first argument were
// read as arguments).
func TestFlags_AnyPosition(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	db := filepath.Join(dir, "pw.db")
	run := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := Run(t.Context(), args, &out, &errOut)
		return out.String() + errOut.String(), err
	}
	if out, err := run("scrape", "runpod", "--demo", "--db", db); err != nil || !sourceOK(out, "runpod") {
		t.Fatalf("scrape runpod --demo --db: %v\n%s", err, out)
	}
	if out, err := run("scrape", "--db", db, "vast", "--demo", "lambda"); err != nil || !sourceOK(out, "vast") || !sourceOK(out, "lambda") {
		t.Errorf("scrape with flags between the sources: %v\n%s", err, out)
	}
	if out, err := run("silence", "add", "--watch", "*", "--for", "1h", "--reason", "test", "--db", db); err != nil || !strings.Contains(out, "silence 1:") {
		t.Fatalf("silence add: %v\n%s", err, out)
	}
	if out, err := run("silence", "remove", "1", "--db", db); err != nil || !strings.Contains(out, "silence 1 removed") {
		t.Errorf("silence remove 1 --db: %v\n%s", err, out)
	}
	if out, err := run("offers", "A100", "--db", db, "--currency", "EUR"); err != nil || !strings.Contains(out, "prices in EUR") {
		t.Errorf("offers A100 --db --currency: %v\n%s", err, out)
	}
	trainer := filepath.Join("..", "..", "profileimport", "testdata", "hf_trainer_state.json")
	if out, err := run("profile", "import", "--card", "A100-80GB-SXM", trainer, "--workload", "lora-7b", "--db", db); err != nil ||
		!strings.Contains(out, "A100-80GB-SXM") {
		t.Errorf("profile import with the file between flags: %v\n%s", err, out)
	}
	// A group's flags may stand before its subcommand too.
	if out, err := run("profile", "--db", db, "list", "--card", "A100-80GB-SXM"); err != nil || !strings.Contains(out, "measured") {
		t.Errorf("profile --db list: %v\n%s", err, out)
	}
	if out, err := run("silence", "--db", db, "list"); err != nil || !strings.Contains(out, "REASON") {
		t.Errorf("silence --db list: %v\n%s", err, out)
	}
	if _, err := run("sources", "--db", db, "accept"); err == nil || !strings.Contains(err.Error(), "sources accept needs the held SOURCE") {
		t.Errorf("sources --db accept: %v", err)
	}
	// "--" ends the flags: what follows is an argument even if it looks
	// like one.
	if _, err := run("scrape", "--db", db, "--", "--demo"); err == nil || !strings.Contains(err.Error(), `unknown source "--demo"`) {
		t.Errorf(`scrape -- --demo: %v, want unknown source "--demo"`, err)
	}
}

// sourceOK reports a scrape summary line saying the source ran well.
func sourceOK(out, source string) bool {
	return regexp.MustCompile(`(?m)^` + source + `\s+ok\s`).MatchString(out)
}

// A command run before anything was scraped says how to start, and best
// and plan without a job name the workloads. Before: every reading command
// said only "open pricewatch.db: no such file or directory" (exit 1),
// `digest --send` created an empty database and sent a digest of "no
// eligible offer" lines (exit 0), and `best` without flags said the same
// (the missing --workload came up only once a database existed).
func TestHints_FirstRun(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // the default database, pricewatch.db, is not there
	for _, args := range [][]string{
		{"best", "--workload", "lora-7b"}, {"offers", "H100"}, {"sources"}, {"alerts"}, {"digest"}, {"export"},
		{"plan", "--workload", "lora-7b", "--tokens", "1e6"}, {"silence", "list"}, {"profile", "list"}, {"compact"}, {"digest", "--send"},
	} {
		var out, errOut bytes.Buffer
		err := Run(t.Context(), args, &out, &errOut)
		if err == nil {
			t.Errorf("%q without a database: no error", args)
			continue
		}
		msg := err.Error()
		for _, want := range []string{"no database at pricewatch.db", "pricewatch serve", "pricewatch scrape --demo", "--db FILE"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%q: %q lacks %q", args, msg, want)
			}
		}
		if exitCode(err) != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, exitCode(err), exitUsage)
		}
		if _, serr := os.Stat(filepath.Join(dir, "pricewatch.db")); !os.IsNotExist(serr) {
			t.Fatalf("%q created pricewatch.db", args)
		}
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"best"}, []string{"best needs --workload", "lora-7b", "serve-7b", "pricewatch best --demo --workload lora-7b"}},
		{[]string{"plan"}, []string{"plan needs a job", "--workload", "lora-7b", "--preset", "--spec", "pricewatch plan --demo"}},
		{[]string{"sources", "accept"}, []string{"sources accept needs the held SOURCE", "pricewatch sources"}},
	} {
		var out, errOut bytes.Buffer
		err := Run(t.Context(), tc.args, &out, &errOut)
		if exitCode(err) != exitUsage {
			t.Errorf("%q: exit %d (%v), want %d", tc.args, exitCode(err), err, exitUsage)
		}
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%q: %v lacks %q", tc.args, err, w)
			}
		}
	}
}

// A workload defined in the config ranks the stored offers at once: best
// answers for it without a scrape since the config changed, as plan does.
// Before: "(no eligible offer)" until the next scrape or serve seeded its
// throughput profiles, while plan priced it.
func TestBest_ConfigWorkloadRanksAtOnce(t *testing.T) {
	db := demoOffersDB(t) // scraped with the built-in workloads only
	cfg := filepath.Join(t.TempDir(), "c.yml")
	if err := os.WriteFile(cfg, []byte("workloads:\n  - name: serve-llama3-8b-mine\n    model: {preset: llama3-8b}\n    method: serve\n    context: 2048\n    concurrency: 64\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := runOut(t, "best", "--config", cfg, "--db", db, "--workload", "serve-llama3-8b-mine")
	if strings.Contains(out, "(no eligible offer)") || !regexp.MustCompile(`(?m)^1\s+\S+\s+0\.\d+`).MatchString(out) {
		t.Errorf("best for the config's workload:\n%s", out)
	}
	plan := runOut(t, "plan", "--config", cfg, "--db", db, "--workload", "serve-llama3-8b-mine", "--limit", "1")
	if strings.Contains(plan, "(no option") {
		t.Errorf("plan for the config's workload:\n%s", plan)
	}
}

// best's table shows what it was narrowed by: vCPUs and RAM per GPU, the
// country, the provider, the link, and the page to rent each offer.
// Before: the same 14 columns whatever the filters, so `--country US,CA
// --min-vcpus-per-gpu 8` showed neither country nor vCPUs, and no rent link.
func TestBest_ColumnsFollowFilters(t *testing.T) {
	db := demoOffersDB(t)
	header := func(out string) []string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "#  ") {
				return strings.Fields(strings.NewReplacer("RAM GB/GPU", "RAM_GB/GPU", "UNIT PRICE/H", "UNIT_PRICE/H").Replace(l))
			}
		}
		t.Fatalf("no table header in:\n%s", out)
		return nil
	}
	plain := header(runOut(t, "best", "--db", db, "--workload", "lora-7b"))
	for _, absent := range []string{"VCPUS/GPU", "RAM_GB/GPU", "COUNTRY", "PROVIDER", "INTERCONNECT"} {
		if slices.Contains(plain, absent) {
			t.Errorf("unfiltered best shows %s: %v", absent, plain)
		}
	}
	if !slices.Contains(plain, "RENT") {
		t.Errorf("best shows no rent link: %v", plain)
	}

	args := []string{"best", "--db", db, "--workload", "lora-7b", "--min-vcpus-per-gpu", "8", "--min-ram-gb-per-gpu", "32",
		"--country", "US,CA", "--provider", "vast,runpod,lambda,aws", "--interconnect", "nvlink,pcie"}
	out := runOut(t, args...)
	cols := header(out)
	for _, want := range []string{"VCPUS/GPU", "RAM_GB/GPU", "COUNTRY", "PROVIDER", "INTERCONNECT", "RENT"} {
		if !slices.Contains(cols, want) {
			t.Errorf("filtered best lacks %s: %v", want, cols)
		}
	}
	// The cells agree with the answer's JSON: each offer's country, and its
	// vCPUs and RAM per GPU rounded (at least the floor asked).
	var res httpapi.BestResponse
	if err := json.Unmarshal([]byte(runOut(t, append(args, "--json")...)), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Cards) == 0 {
		t.Fatalf("no card passes the filters:\n%s", out)
	}
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] != strconv.Itoa(rows+1) {
			continue
		}
		e := res.Cards[rows]
		rows++
		for _, want := range []string{" " + e.Country + " ", " " + offerQty(e.VCPUs/float64(e.GPUs)) + " ", " " + offerQty(e.RAMGB/float64(e.GPUs)) + " ",
			" " + e.Provider + " ", " " + e.RentURL} {
			if !strings.Contains(l+" ", want) {
				t.Errorf("row %d lacks %q: %s", rows, want, l)
			}
		}
		if v := e.VCPUs / float64(e.GPUs); v < 8 || e.Country != "US" && e.Country != "CA" {
			t.Errorf("row %d: %g vCPUs/GPU in %q passed the filters", rows, v, e.Country)
		}
	}
	if rows != len(res.Cards) {
		t.Errorf("%d rows in the table, %d cards in the JSON", rows, len(res.Cards))
	}
}

// The digest says it is the demo's and dates its data: when the offers
// were scraped, which fixtures' capture dates, which ECB rates; on the
// database alone (no --demo) it still dates the offers and the rates, and
// the daemon's digest says so too. Before: "pricewatch daily digest, <today>"
// and the watches, nothing saying the prices were fixtures of 2024–2025
// at rates of 2022.
func TestDigest_MarkedDemoWithDataDates(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	runOut(t, "scrape", "--demo")
	today := time.Now().UTC().Format("2006-01-02")
	lines := strings.SplitN(runOut(t, "digest", "--demo"), "\n", 3)
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "pricewatch daily digest (demo data), ") ||
		!regexp.MustCompile(`^DEMO DATA, not today's market: prices from the bundled fixtures \(captured \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d\), scraped `+
			today+` \d\d:\d\d UTC; ECB exchange rates of 2022-07-08$`).MatchString(lines[1]) {
		t.Errorf("digest --demo opens:\n%s", strings.Join(lines[:min(2, len(lines))], "\n"))
	}
	js := runOut(t, "digest", "--demo", "--json")
	if !strings.Contains(js, `"text": "pricewatch daily digest (demo data)"`) || !strings.Contains(js, "DEMO DATA, not today") {
		t.Errorf("digest --demo --json lacks the demo header or line")
	}
	db, err := demoDB("demo.db")
	if err != nil {
		t.Fatal(err)
	}
	lines = strings.SplitN(runOut(t, "digest", "--db", db), "\n", 3)
	if !regexp.MustCompile(`^Data: offers as of ` + today + ` \d\d:\d\d UTC(?: \(the oldest source's of [^)]+\))?; ECB exchange rates of 2022-07-08$`).MatchString(lines[1]) {
		t.Errorf("digest --db: second line %q", lines[1])
	}

	d := startServe(t, "--demo", "--addr", "127.0.0.1:0")
	waitFor(t, 20*time.Second, "the first scrape", func() bool { return d.sourcesOK(t) })
	var viaDaemon struct{ Text string }
	getJSON(t, d.base+"/v1/digest", &viaDaemon)
	if !strings.Contains(viaDaemon.Text, "pricewatch daily digest (demo data)") || !strings.Contains(viaDaemon.Text, "DEMO DATA, not today's market") {
		t.Errorf("the demo daemon's digest:\n%s", viaDaemon.Text)
	}
}
