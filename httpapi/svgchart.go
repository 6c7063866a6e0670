package httpapi

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"
)

// chartPoint is one value at one time; Carried marks the value in force
// at the start of the range (from a change before it): it draws the line,
// not a point.
type chartPoint struct {
	At      time.Time
	Value   float64
	Label   string
	Carried bool
}

// svgStepChart draws values that hold until the next change as a step
// line over [since, until], with a marked point (class "point") at every
// stored change. It is plain SVG rendered on the server: no script, no
// external asset.
func svgStepChart(title, unit string, pts []chartPoint, since, until time.Time) template.HTML {
	const w, h, left, right, top, bottom = 760.0, 230.0, 70.0, 16.0, 26.0, 34.0
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" role="img" viewBox="0 0 %.0f %.0f" width="100%%" preserveAspectRatio="xMidYMid meet" xmlns="http://www.w3.org/2000/svg">`, w, h)
	fmt.Fprintf(&b, `<title>%s</title>`, template.HTMLEscapeString(title))
	fmt.Fprintf(&b, `<text x="%.0f" y="16" class="chart-title">%s</text>`, left, template.HTMLEscapeString(title))
	if len(pts) == 0 {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" class="chart-empty" text-anchor="middle">No stored change in this range: nothing to draw.</text></svg>`, w/2, h/2)
		return template.HTML(b.String())
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		lo, hi = math.Min(lo, p.Value), math.Max(hi, p.Value)
	}
	if hi-lo < 1e-12 {
		pad := math.Max(math.Abs(hi)*0.1, 1e-6)
		lo, hi = lo-pad, hi+pad
	} else {
		pad := (hi - lo) * 0.08
		lo, hi = math.Max(0, lo-pad), hi+pad
	}
	span := until.Sub(since).Seconds()
	x := func(t time.Time) float64 {
		if t.Before(since) {
			t = since
		}
		return left + (w-left-right)*t.Sub(since).Seconds()/span
	}
	y := func(v float64) float64 { return top + (h-top-bottom)*(1-(v-lo)/(hi-lo)) }
	// Axes and grid.
	for i := 0; i <= 4; i++ {
		v := lo + (hi-lo)*float64(i)/4
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, left, w-right, y(v), y(v))
		fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="end">%s</text>`, left-6, y(v)+4, template.HTMLEscapeString(shortNum(v)))
	}
	layout := "Jan 2 15:04"
	if span > 3*24*3600 {
		layout = "Jan 2"
	}
	for i := 0; i <= 4; i++ {
		t := since.Add(time.Duration(float64(until.Sub(since)) * float64(i) / 4))
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case 4:
			anchor = "end"
		}
		fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="%s">%s</text>`, x(t), h-12, anchor, t.UTC().Format(layout))
	}
	fmt.Fprintf(&b, `<text class="axis unit" x="%.1f" y="16" text-anchor="end">%s</text>`, w-right, template.HTMLEscapeString(unit))
	// The step line: each value holds until the next change, the last until the end.
	var path strings.Builder
	for i, p := range pts {
		x0 := x(p.At)
		x1 := x(until)
		if i+1 < len(pts) {
			x1 = x(pts[i+1].At)
		}
		if i == 0 {
			fmt.Fprintf(&path, "M%.1f %.1f", x0, y(p.Value))
		} else {
			fmt.Fprintf(&path, " V%.1f", y(p.Value))
		}
		fmt.Fprintf(&path, " H%.1f", x1)
	}
	fmt.Fprintf(&b, `<path class="line" d="%s"/>`, path.String())
	for _, p := range pts {
		if p.Carried {
			continue
		}
		fmt.Fprintf(&b, `<circle class="point" cx="%.1f" cy="%.1f" r="3.5"><title>%s: %s</title></circle>`,
			x(p.At), y(p.Value), p.At.UTC().Format("2006-01-02 15:04 UTC"), template.HTMLEscapeString(p.Label))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// shortNum prints an axis value with the digits that matter.
func shortNum(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	case a >= 0.01:
		return fmt.Sprintf("%.3f", v)
	default:
		return fmt.Sprintf("%.2g", v)
	}
}
