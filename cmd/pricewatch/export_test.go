package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/internal/testfile"
)

// Issue 19 item 9: pricewatch export through a running daemon writes the
// very bytes it writes from the database file — CSV and JSON, to standard
// output and with --out — over offers whose locations hold CR LF and start
// with formula characters. Before the fix the daemon's CSV was read back
// with encoding/csv, which turns a quoted CR LF into LF (the files
// differed at the Vast location "\r=1+1\r\nsecond line"), and JSON carried
// the CSV's neutralising quote.
func TestExport_ViaDaemonSameBytesAsOffline(t *testing.T) {
	dir := testfile.FormulaFixtures(t)
	// serve --fixtures reads a missing key as "demo"; the offline export
	// reads the environment, and leaves out the sources a missing key
	// disables. The same keys on both sides, so both see every source.
	for _, k := range []string{"PRICEWATCH_GCP_API_KEY", "PRICEWATCH_VERDA_CLIENT_ID", "PRICEWATCH_VERDA_CLIENT_SECRET",
		"PRICEWATCH_TENSORDOCK_API_KEY", "PRICEWATCH_JARVISLABS_API_KEY", "PRICEWATCH_MATPOOL_TOKEN", "PRICEWATCH_GPUSHARE_TOKEN",
		"PRICEWATCH_DIGITALOCEAN_TOKEN", "PRICEWATCH_HYPERSTACK_API_KEY", "PRICEWATCH_HETZNER_ROBOT_USER", "PRICEWATCH_HETZNER_ROBOT_PASSWORD",
		"PRICEWATCH_TENCENT_SECRET_ID", "PRICEWATCH_TENCENT_SECRET_KEY", "PRICEWATCH_SEEWEB_API_TOKEN"} {
		t.Setenv(k, "demo")
	}
	cfg := writeConfig(t, filepath.Join(t.TempDir(), "pw.db"), "http://127.0.0.1:9", "0 0 1 1 *") // the first scrape only
	variants := [][]string{{}, {"--format", "json"}, {"--provider", "vast"}, {"--out", "DIR"}, {"--format", "json", "--out", "DIR"}}
	export := func(i int, args []string) map[string][]byte {
		t.Helper()
		out := map[string][]byte{}
		var dir string
		for j, a := range args {
			if a == "DIR" {
				dir = filepath.Join(t.TempDir(), "out")
				args = append(append(append([]string{}, args[:j]...), dir), args[j+1:]...)
			}
		}
		var stdout, stderr bytes.Buffer
		if err := Run(t.Context(), append([]string{"export", "--config", cfg}, args...), &stdout, &stderr); err != nil {
			t.Fatalf("export %v: %v\n%s", args, err, stderr.String())
		}
		if dir == "" {
			out["stdout"] = stdout.Bytes()
			return out
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[filepath.Base(f)] = b
		}
		if len(files) < 5 {
			t.Fatalf("export %v: %d files", args, len(files))
		}
		return out
	}
	d := startServe(t, "--config", cfg, "--fixtures", dir)
	waitFor(t, 30*time.Second, "the first scrape", func() bool { return d.sourcesOK(t) })
	viaDaemon := make([]map[string][]byte, len(variants))
	for i, v := range variants {
		viaDaemon[i] = export(i, v)
	}
	d.stop(t)
	for i, v := range variants {
		offline := export(i, v)
		if len(offline) != len(viaDaemon[i]) {
			t.Errorf("export %v: %d outputs offline, %d via the daemon", v, len(offline), len(viaDaemon[i]))
		}
		for name, want := range offline {
			got := viaDaemon[i][name]
			if !bytes.Equal(got, want) {
				n := 0
				for n < len(got) && n < len(want) && got[n] == want[n] {
					n++
				}
				t.Errorf("export %v, %s: via the daemon differs at byte %d of %d: %q, offline %q", v, name, n, len(want),
					got[max(0, n-40):min(len(got), n+40)], want[max(0, n-40):min(len(want), n+40)])
			}
		}
	}
	// The case the test is about is in the output.
	if csv := string(viaDaemon[0]["stdout"]); !strings.Contains(csv, "\"'\r=1+1\r\nsecond line\"") {
		t.Errorf("the CSV has no CR LF location")
	}
}
