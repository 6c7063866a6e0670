package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/httpapi"
)

// `best --demo` opens with a line saying the prices are fixtures and the
// rates of 2022-07-08; `best --db` on the same file (nothing says it is a
// demo) still dates the rates. Before the fix the first line was "Best
// lora-7b per card, … ranking of <a minute ago>".
func TestBest_SaysItIsADemo(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	var out, errOut bytes.Buffer
	if err := Run(t.Context(), []string{"scrape", "--demo"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	first := func(args ...string) string {
		t.Helper()
		out.Reset()
		if err := Run(t.Context(), args, &out, &errOut); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errOut.String())
		}
		line, _, _ := strings.Cut(out.String(), "\n")
		return line
	}
	if got, want := first("best", "--demo", "--workload", "lora-7b"), "Demo: prices from bundled fixtures (23 of 41 illustrative), exchange rates of 2022-07-08"; got != want {
		t.Errorf("best --demo: first line %q, want %q", got, want)
	}
	first("best", "--demo", "--workload", "lora-7b", "--json")
	var res httpapi.BestResponse
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || !res.Demo || res.Data.Sources["runpod"].Captured != "2025-06-21" {
		t.Errorf("best --demo --json: %v, demo %v, runpod %+v", err, res.Demo, res.Data.Sources["runpod"])
	}
	db, err := demoDB("demo.db")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := first("best", "--db", db, "--workload", "lora-7b"), "Data: ECB exchange rates of 2022-07-08"; got != want {
		t.Errorf("best --db: first line %q, want %q", got, want)
	}
}
