package alerts

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/store"
)

// Issue 12: a day without data has no value (and no chart point); a day
// after a sample carries the value in force when it began.
func TestDailyLows_NoInventedDays(t *testing.T) {
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	if lows := dailyLows(nil, now); !allNaN(lows) {
		t.Errorf("no samples: %v", lows)
	}
	// A database created minutes ago: one sample today, six empty days.
	fresh := dailyLows([]store.Sample{{At: now.Add(-10 * time.Minute), Cost: 0.03}}, now)
	if !allNaN(fresh[:6]) || fresh[6] != 0.03 {
		t.Errorf("fresh database: %v", fresh)
	}
	ss := []store.Sample{
		{At: now.Add(-3*24*time.Hour - time.Hour), Cost: 1.0},
		{At: now.Add(-time.Hour), Cost: 0.5},
	}
	lows := dailyLows(ss, now)
	if !allNaN(lows[:3]) || lows[3] != 1.0 || lows[4] != 1.0 || lows[5] != 1.0 || lows[6] != 0.5 {
		t.Errorf("carried: %v", lows)
	}
}

func allNaN(v []float64) bool {
	for _, x := range v {
		if !math.IsNaN(x) {
			return false
		}
	}
	return true
}

func TestDigestChart_NoPointForADayWithoutData(t *testing.T) {
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	d := DigestData{Now: now, Currency: "USD", Watches: []WatchDigest{
		{Watch: "w", Daily: []float64{math.NaN(), math.NaN(), 0.03, 0.03, 0.02, 0.02, 0.01}},
		{Watch: "fresh", Daily: dailyLows([]store.Sample{{At: now.Add(-time.Minute), Cost: 0.05}}, now)},
	}}
	charts := dailyCharts(d)
	if len(charts) != 2 {
		t.Fatalf("charts: %d", len(charts))
	}
	b, _ := json.Marshal(charts[0])
	s := string(b)
	for _, day := range []string{"Nov 23", "Nov 24"} {
		if strings.Contains(s, `"`+day+`"`) {
			t.Errorf("%s (no data) is in the chart: %s", day, s)
		}
	}
	for _, day := range []string{"Nov 25", "Nov 26", "Nov 27", "Nov 28", "Nov 29"} {
		if strings.Count(s, `"`+day+`"`) != 2 { // the category and its point
			t.Errorf("%s: %d mentions in %s", day, strings.Count(s, `"`+day+`"`), s)
		}
	}
	// A database created minutes ago: today only, one point.
	b, _ = json.Marshal(charts[1])
	if s := string(b); strings.Count(s, `"Nov 29"`) != 2 || strings.Contains(s, `"Nov 28"`) {
		t.Errorf("fresh watch chart: %s", s)
	}
	// A watch with no data at all draws no chart.
	if len(dailyCharts(DigestData{Now: now, Watches: []WatchDigest{{Watch: "x", Daily: dailyLows(nil, now)}}})) != 0 {
		t.Error("a chart without data")
	}
}
