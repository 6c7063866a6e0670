package alerts_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/alerts"
)

// Issue 32 item 3: the digest dates its data and says when it is the
// demo's. Before: it said neither; a digest of the bundled fixtures (2024
// and 2025 captures at ECB rates of 2022) read as today's market.
func TestDataDates_Line(t *testing.T) {
	at := func(h, m int) time.Time { return time.Date(2026, 11, 29, h, m, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name string
		d    alerts.DataDates
		want string
	}{
		{"nothing yet", alerts.DataDates{}, "Data: no successful scrape yet; no exchange rates yet"},
		{"one time", alerts.DataDates{OffersFrom: at(6, 0), OffersTo: at(6, 40), FXDate: "2026-11-27"},
			"Data: offers as of 2026-11-29 06:40 UTC; ECB exchange rates of 2026-11-27"},
		// 6:00 to 8:30 is more than an hour apart: the oldest is named too.
		{"spread", alerts.DataDates{OffersFrom: at(6, 0), OffersTo: at(8, 30), FXDate: "2026-11-27"},
			"Data: offers as of 2026-11-29 08:30 UTC (the oldest source's of 2026-11-29 06:00 UTC); ECB exchange rates of 2026-11-27"},
		{"demo", alerts.DataDates{Demo: true, CapturedFrom: "2024-05-01", CapturedTo: "2025-06-21", OffersFrom: at(6, 0), OffersTo: at(6, 0), FXDate: "2022-07-08"},
			"DEMO DATA, not today's market: prices from the bundled fixtures (captured 2024-05-01 to 2025-06-21), scraped 2026-11-29 06:00 UTC; ECB exchange rates of 2022-07-08"},
		{"demo, one capture date, no scrape", alerts.DataDates{Demo: true, CapturedFrom: "2025-06-21", CapturedTo: "2025-06-21"},
			"DEMO DATA, not today's market: prices from the bundled fixtures (captured 2025-06-21); no exchange rates yet"},
	} {
		if got := tc.d.Line(); got != tc.want {
			t.Errorf("%s:\n got  %q\n want %q", tc.name, got, tc.want)
		}
	}

	// The messages carry the line, in the fallback text and in a context
	// block, and a demo says so in the header.
	d := alerts.DigestData{Now: at(9, 0), Data: alerts.DataDates{Demo: true, CapturedFrom: "2024-05-01", CapturedTo: "2025-06-21", FXDate: "2022-07-08"}}
	msgs := alerts.DigestMessages(d)
	lines := strings.Split(msgs[0].Text, "\n")
	if len(lines) < 2 || lines[0] != "pricewatch daily digest (demo data), Sun 29 Nov 2026" || lines[1] != d.Data.Line() {
		t.Errorf("fallback text opens:\n%s", strings.Join(lines[:min(2, len(lines))], "\n"))
	}
	b, _ := json.Marshal(msgs[0].Blocks)
	if !strings.Contains(string(b), `"text":"pricewatch daily digest (demo data)"`) || !strings.Contains(string(b), "DEMO DATA, not today") {
		t.Errorf("blocks lack the demo header or line: %s", b)
	}
}
