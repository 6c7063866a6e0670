package httpapi

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var axisTextRe = regexp.MustCompile(`<text class="axis( axis-[xy])?" x="([\d.]+)" y="[\d.]+" text-anchor="[a-z]+">([^<]+)</text>`)

// axisLabels splits a chart's axis labels into values and dates.
func axisLabels(svg string) (values, dates []string) {
	for _, m := range axisTextRe.FindAllStringSubmatch(svg, -1) {
		if _, err := strconv.ParseFloat(m[3], 64); err == nil {
			values = append(values, m[3])
		} else {
			dates = append(dates, m[3])
		}
	}
	return values, dates
}

// TestChartTicks: the value axis steps by 1, 2 or 5 times a power of ten,
// prints every tick with one precision and no two alike; the time axis
// ticks on whole hours (24 h) or midnights (7 d, 30 d).
// Before (even fifths of the padded range, precision by magnitude): the
// narrow case printed 0.013 five times, "units" 0.984 1.77 2.55 3.33 4.12,
// and the time ticks were since + i/4 of the span (Dec 1 13:37, 19:37, …).
func TestChartTicks(t *testing.T) {
	until := time.Date(2026, 12, 2, 13, 37, 21, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		lo, hi float64
		span   time.Duration
		// want: the value labels, worked out by hand. 0.0126..0.0131 pads
		// by 8% of 0.0005 to 0.01256..0.01314, a fourth is 0.000145, the
		// 1-2-5 step above it 0.0002: 0.0124 .. 0.0132.
		want []string
		// dateRe: each time label's shape.
		dateRe string
	}{
		{"narrow", 0.0126, 0.0131, 24 * time.Hour, []string{"0.0124", "0.0126", "0.0128", "0.0130", "0.0132"}, `^(\d\d:00|[A-Z][a-z]{2} \d+)$`},
		// 0.0126..0.046 pads to 0.0099..0.0487 (8% of 0.0334 = 0.00267, lo
		// clamps at 0.0099), a fourth 0.0097: step 0.01, 0.00 .. 0.05.
		{"drop", 0.0126, 0.046, 7 * 24 * time.Hour, []string{"0.00", "0.01", "0.02", "0.03", "0.04", "0.05"}, `^[A-Z][a-z]{2} \d+$`},
		// 1.2..3.9: pad 0.216 to 0.984..4.116, a fourth 0.783: step 1, 0 .. 5.
		{"units", 1.2, 3.9, 30 * 24 * time.Hour, []string{"0", "1", "2", "3", "4", "5"}, `^[A-Z][a-z]{2} \d+$`},
		// One value 0.79 pads ±10% to 0.711..0.869, a fourth 0.0395: step 0.05.
		{"flat", 0.79, 0.79, 24 * time.Hour, []string{"0.70", "0.75", "0.80", "0.85", "0.90"}, `^(\d\d:00|[A-Z][a-z]{2} \d+)$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			since := until.Add(-tc.span)
			pts := []chartPoint{{At: since.Add(time.Hour), Value: tc.hi}, {At: until.Add(-time.Hour), Value: tc.lo}}
			svg := string(svgStepChart("t", "USD", pts, since, until))
			values, dates := axisLabels(svg)
			if strings.Join(values, " ") != strings.Join(tc.want, " ") {
				t.Errorf("value ticks %v, want %v", values, tc.want)
			}
			seen := map[string]bool{}
			for _, v := range values {
				if seen[v] {
					t.Errorf("value tick %s twice in %v", v, values)
				}
				seen[v] = true
			}
			re := regexp.MustCompile(tc.dateRe)
			if len(dates) < 3 || len(dates) > 8 {
				t.Errorf("%d time ticks: %v", len(dates), dates)
			}
			for _, d := range dates {
				if !re.MatchString(d) {
					t.Errorf("time tick %q is not on a whole hour or day (%v)", d, dates)
				}
			}
		})
	}
}

// TestTimeTicks_EvenBoundaries: the ticks of a range are evenly spaced on
// UTC boundaries of their step.
func TestTimeTicks_EvenBoundaries(t *testing.T) {
	until := time.Date(2026, 12, 2, 13, 37, 21, 0, time.UTC)
	for span, step := range map[time.Duration]time.Duration{24 * time.Hour: 3 * time.Hour, 7 * 24 * time.Hour: 24 * time.Hour, 30 * 24 * time.Hour: 7 * 24 * time.Hour} {
		ticks := timeTicks(until.Add(-span), until, 8)
		for i, tk := range ticks {
			if tk.at.Sub(ticks[0].at) != time.Duration(i)*step {
				t.Errorf("span %v: tick %d at %v, not %v after the first", span, i, tk.at, time.Duration(i)*step)
			}
			if tk.at.Truncate(step) != tk.at || tk.at.Before(until.Add(-span)) || tk.at.After(until) {
				t.Errorf("span %v: tick %v is off its %v boundary or out of range", span, tk.at, step)
			}
		}
		if span == 30*24*time.Hour && len(ticks) > 0 && ticks[0].at.Weekday() != time.Monday {
			t.Errorf("weekly ticks start on %v, want Mondays", ticks[0].at.Weekday())
		}
	}
}
