package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
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
	re := regexp.MustCompile(`("[a-zA-Z]*Price"): ([0-9.]+)`)
	b = re.ReplaceAllFunc(b, func(m []byte) []byte {
		s := re.FindSubmatch(m)
		p, _ := strconv.ParseFloat(string(s[2]), 64)
		return []byte(string(s[1]) + ": " + strconv.FormatFloat(p*10, 'f', -1, 64))
	})
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		out, _ := run("scrape", "--db", db, "--fixtures", dir, "runpod")
		if !strings.Contains(out, "ondemand prices ×10 against the accepted level") {
			t.Fatalf("scrape of ×10 not held:\n%s", out)
		}
	}
	out, err := run("sources", "accept", "--db", db, "--fixtures", dir, "runpod")
	if err != nil || !strings.Contains(out, "accepted runpod's held level: factor ×10 (ondemand), shown by 4 run(s) in a row") ||
		!strings.Contains(out, "the run it started: ok") {
		t.Fatalf("accept: %v\n%s", err, out)
	}
	out, _ = run("sources", "--db", db, "--json")
	if !regexp.MustCompile(`"name":"runpod","[^}]*"status":"ok"`).MatchString(out) || !strings.Contains(out, `"anchored_by":"accepted by cli"`) {
		t.Errorf("sources after the accept:\n%s", out)
	}
	if out, err := run("sources", "accept", "--db", db, "--fixtures", dir, "runpod"); err == nil || !strings.Contains(err.Error(), "nothing to accept") {
		t.Errorf("second accept: %v\n%s", err, out)
	}
}
