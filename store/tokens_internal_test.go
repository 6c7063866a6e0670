package store

import (
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
)

// A token source's runs: a history row when a price appears, changes or
// vanishes; none for a run that confirms it; a failed run touches nothing.
func TestTokens_HistoryRowsOnlyForChanges(t *testing.T) {
	s := openTemp(t)
	t0 := time.Date(2026, 8, 20, 12, 0, 0, 0, time.UTC)
	price := func(model string, in, out float64) pricewatch.TokenPrice {
		return pricewatch.TokenPrice{Key: pricewatch.TokenKey("openrouter", "openrouter", model), Source: "openrouter", Provider: "openrouter",
			Model: model, InputPerMillion: in, OutputPerMillion: out, Currency: "USD"}
	}
	run := func(at time.Time, ok bool, prices ...pricewatch.TokenPrice) pricewatch.Run {
		t.Helper()
		r, err := s.RecordRun(RunResult{Run: pricewatch.Run{Source: "openrouter", Started: at, OK: ok, Offers: len(prices)}, Tokens: prices})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := price("openai/gpt-oss-120b", 0.03, 0.17), price("qwen/qwen3-30b-a3b", 0.13, 0.52)
	if r := run(t0, true, a, b); r.Changes != 2 {
		t.Errorf("first run: %d changes, want 2 (both new)", r.Changes)
	}
	if r := run(t0.Add(time.Hour), true, a, b); r.Changes != 0 {
		t.Errorf("same prices: %d changes", r.Changes)
	}
	a2 := price("openai/gpt-oss-120b", 0.03, 0.20)
	if r := run(t0.Add(2*time.Hour), true, a2); r.Changes != 2 {
		t.Errorf("one changed, one vanished: %d changes, want 2", r.Changes)
	}
	run(t0.Add(3*time.Hour), false) // a failed run
	got, err := s.TokenPrices("openrouter")
	if err != nil || len(got) != 1 || got[0].OutputPerMillion != 0.20 || !got[0].FirstSeen.Equal(t0) || !got[0].ObservedAt.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("prices %+v %v", got, err)
	}
	rows, err := s.TokenHistory(a.Key, time.Time{}, 0)
	if err != nil || len(rows) != 2 || rows[0].Event != "new" || rows[1].Event != "changed" || rows[1].OutputPerMillion != 0.20 {
		t.Errorf("history of %s: %+v %v", a.Key, rows, err)
	}
	rows, _ = s.TokenHistory(b.Key, time.Time{}, 0)
	if len(rows) != 2 || rows[1].Event != "vanished" || !rows[1].At.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("history of %s: %+v", b.Key, rows)
	}
	if rows, _ := s.TokenHistory(b.Key, t0.Add(time.Hour), 1); len(rows) != 1 || rows[0].Event != "vanished" {
		t.Errorf("since and limit: %+v", rows)
	}
}
