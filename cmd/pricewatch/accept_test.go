package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
)

// sources accept, offline: RunPod's prices all ×10 are held however many
// scrapes bring them; the accept records the level and runs the source,
// whose run is applied; a second accept has nothing to accept.
func TestSourcesAccept_Offline(t *testing.T) {
	dir := copyFixtures(t)
	db := filepath.Join(t.TempDir(), "pw.db")
	run := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := Run(t.Context(), args, &out, &errOut)
		return out.String() + errOut.String(), err
	}
	if out, err := run("scrape", "--db", db, "--fixtures", dir, "runpod"); err != nil {
		t.Fatalf("first scrape: %v\n%s", err, out)
	}
	file := filepath.Join(dir, "runpod", "graphql.json")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, pipelinetest.ScaleRunPodPrices(b, 10), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		out, _ := run("scrape", "--db", db, "--fixtures", dir, "runpod")
		if !strings.Contains(out, "ondemand prices ×10 against the accepted level") {
			t.Fatalf("scrape of ×10 not held:\n%s", out)
		}
	}
	// An accept names the level it was shown (sources, the hold message):
	// without it the CLI says which to name; another level is refused.
	if out, err := run("sources", "accept", "--db", db, "--fixtures", dir, "runpod"); err == nil ||
		!strings.Contains(err.Error(), "--level factor:x10/ondemand") {
		t.Fatalf("accept without a level: %v\n%s", err, out)
	}
	if out, err := run("sources", "accept", "runpod", "--db", db, "--fixtures", dir, "--level", "factor:x4/ondemand"); err == nil ||
		!strings.Contains(err.Error(), "now holds factor:x10/ondemand, not factor:x4/ondemand") {
		t.Fatalf("accept of another level: %v\n%s", err, out)
	}
	out, err := run("sources", "accept", "runpod", "--db", db, "--fixtures", dir, "--level", "factor:x10/ondemand")
	if err != nil || !strings.Contains(out, "accepted runpod's held level: factor:x10/ondemand, shown by 4 run(s) in a row") ||
		!strings.Contains(out, "the run it started: ok") {
		t.Fatalf("accept: %v\n%s", err, out)
	}
	out, _ = run("sources", "--db", db, "--json")
	if !regexp.MustCompile(`"name":"runpod","[^}]*"status":"ok"`).MatchString(out) || !strings.Contains(out, `"anchored_by":"accepted by cli"`) {
		t.Errorf("sources after the accept:\n%s", out)
	}
	if out, err := run("sources", "accept", "--db", db, "--fixtures", dir, "runpod", "--level", "factor:x10/ondemand"); err == nil || !strings.Contains(err.Error(), "nothing to accept") {
		t.Errorf("second accept: %v\n%s", err, out)
	}
}

// Issue 22 item 6: a command that only reads lists the sources the daemon
// scraped as they are, whether or not this shell has their keys (before:
// gcp, verda, jarvislabs … read "disabled" offline while the demo daemon
// reported them ok).
func TestSources_ReadWithoutKeysAgreesWithTheDaemon(t *testing.T) {
	db := filepath.Join(t.TempDir(), "pw.db")
	var out, errOut bytes.Buffer
	if err := Run(t.Context(), []string{"scrape", "--demo", "--db", db}, &out, &errOut); err != nil {
		t.Fatalf("scrape: %v\n%s", err, errOut.String())
	}
	for _, k := range []string{"PRICEWATCH_GCP_API_KEY", "PRICEWATCH_VERDA_CLIENT_ID", "PRICEWATCH_JARVISLABS_API_KEY", "PRICEWATCH_TENSORDOCK_API_KEY"} {
		t.Setenv(k, "")
	}
	out.Reset()
	if err := Run(t.Context(), []string{"sources", "--db", db, "--json"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Sources []struct{ Name, Status, Reason string }
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	for _, s := range got.Sources {
		if s.Status != "ok" {
			t.Errorf("%s: %s (%s) read without its key", s.Name, s.Status, s.Reason)
		}
	}
}
