package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shellWords splits a command line at spaces outside single quotes (all the
// quoting the README's snippet uses).
func shellWords(line string) []string {
	var out []string
	var cur strings.Builder
	quoted, started := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, started = !quoted, true
		case r == ' ' && !quoted:
			if started {
				out = append(out, cur.String())
				cur.Reset()
				started = false
			}
		default:
			cur.WriteRune(r)
			started = true
		}
	}
	if started {
		out = append(out, cur.String())
	}
	return out
}

// The edit-a-price snippet of docs/cli.md (once in the README) does what
// the text around it says, run line by line (rm, cp -r, sed -i and `go run
// ./cmd/pricewatch` as Run, /tmp/ moved to a temp dir): the second scrape
// changes one offer and best shows RunPod's L40S at 0.590; and the far move
// it describes is held back twice and applied at the third run. Before the fix the snippet scraped
// once, into a fresh file, so "scrape again" was never shown, and the
// same 0.05 edit scraped again showed the old price until the third run
// without a word about it: this test failed with "the snippet scrapes 1
// time(s)".
func TestDocs_EditAPriceSnippet(t *testing.T) {
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "so you can edit a price and scrape again:\n\n```console\n")
	block, _, ok2 := strings.Cut(after, "```")
	if !ok || !ok2 {
		t.Fatal("docs/cli.md: the edit-a-price snippet is not found")
	}
	tmp := t.TempDir()
	path := func(p string) string {
		if p == "fixtures" {
			return "../../fixtures"
		}
		return strings.Replace(p, "/tmp/", tmp+"/", 1)
	}
	var outs []string
	scrapes := 0
	run := func(w []string) {
		t.Helper()
		switch {
		case len(w) >= 3 && w[0] == "rm" && w[1] == "-rf":
			for _, p := range w[2:] {
				os.RemoveAll(path(p))
			}
		case len(w) == 4 && w[0] == "cp" && w[1] == "-r":
			if err := os.CopyFS(path(w[3]), os.DirFS(path(w[2]))); err != nil {
				t.Fatal(err)
			}
		case len(w) == 4 && w[0] == "sed" && w[1] == "-i" && strings.HasPrefix(w[2], "s/"):
			from, to, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(w[2], "s/"), "/"), "/")
			edit(t, path(w[3]), from, to)
		case len(w) > 3 && w[0] == "go" && w[1] == "run" && w[2] == "./cmd/pricewatch":
			args := make([]string, 0, len(w)-3)
			for _, a := range w[3:] {
				args = append(args, path(a))
			}
			if args[0] == "scrape" {
				scrapes++
			}
			var out, errOut bytes.Buffer
			if err := Run(t.Context(), args, &out, &errOut); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, errOut.String())
			}
			outs = append(outs, out.String())
		default:
			t.Fatalf("docs/cli.md snippet: cannot run %q", w)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		line, ok := strings.CutPrefix(line, "$ ") // the rest is output as shown
		if !ok {
			continue
		}
		for _, cmd := range strings.Split(line, " && ") {
			run(shellWords(cmd))
		}
	}
	if scrapes < 2 {
		t.Fatalf("the snippet scrapes %d time(s): it never shows a scrape again", scrapes)
	}
	if len(outs) < 3 || !strings.Contains(outs[len(outs)-2], "1 changes") {
		t.Errorf("second scrape: %q", outs[len(outs)-2])
	}
	if best := outs[len(outs)-1]; !strings.Contains(best, "L40S") || !strings.Contains(best, "0.590") {
		t.Errorf("best after the edit:\n%s", best)
	}
	// The far move the text describes: held back twice, applied at the third run.
	fx := filepath.Join(tmp, "fx", "runpod", "graphql.json")
	edit(t, fx, `"communityPrice": 0.59,`, `"communityPrice": 0.05,`)
	for i, want := range []string{"1 outliers held back", "1 outliers held back", "1 changes"} {
		outs = nil
		run([]string{"go", "run", "./cmd/pricewatch", "scrape", "--fixtures", "/tmp/fx", "--db", "/tmp/pw.db", "runpod"})
		if !strings.Contains(outs[0], want) {
			t.Errorf("run %d after 0.05: %q, want %q", i+1, outs[0], want)
		}
	}
}

func edit(t *testing.T, file, from, to string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(b, []byte(from)) != 1 {
		t.Fatalf("%s: %q is not there once", file, from)
	}
	if err := os.WriteFile(file, bytes.Replace(b, []byte(from), []byte(to), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}
