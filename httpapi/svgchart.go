package httpapi

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
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
	// The axis spans whole ticks, so the lowest and highest are labelled.
	vt := niceTicks(lo, hi, 4)
	lo, hi = vt.values[0], vt.values[len(vt.values)-1]
	span := until.Sub(since).Seconds()
	x := func(t time.Time) float64 {
		if t.Before(since) {
			t = since
		}
		return left + (w-left-right)*t.Sub(since).Seconds()/span
	}
	y := func(v float64) float64 { return top + (h-top-bottom)*(1-(v-lo)/(hi-lo)) }
	// Axes and grid: value ticks at a 1-2-5 step, all printed with one
	// precision, and time ticks on whole hours or days.
	for _, v := range vt.values {
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, left, w-right, y(v), y(v))
		fmt.Fprintf(&b, `<text class="axis axis-y" x="%.1f" y="%.1f" text-anchor="end">%s</text>`, left-6, y(v)+4, strconv.FormatFloat(v, 'f', vt.decimals, 64))
	}
	for _, t := range timeTicks(since, until, 8) {
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, x(t.at), x(t.at), top, h-bottom)
		fmt.Fprintf(&b, `<text class="axis axis-x" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x(t.at), h-12, t.label)
	}
	fmt.Fprintf(&b, `<text class="axis unit" x="%.1f" y="16" text-anchor="end">%s</text>`, w-right, template.HTMLEscapeString(unit))
	// The step line: each value holds until the next change, the last until the end.
	// The points are appended, not printed with fmt: a week's chart has
	// a thousand of them, and the page renders once a minute within 20x
	// /v1/best (issue 20).
	var buf []byte
	f1 := func(v float64) { buf = strconv.AppendFloat(buf, v, 'f', 1, 64) }
	buf = append(buf, `<path class="line" d="`...)
	for i, p := range pts {
		x0 := x(p.At)
		x1 := x(until)
		if i+1 < len(pts) {
			x1 = x(pts[i+1].At)
		}
		if i == 0 {
			buf = append(buf, 'M')
			f1(x0)
			buf = append(buf, ' ')
		} else {
			buf = append(buf, " V"...)
		}
		f1(y(p.Value))
		buf = append(buf, " H"...)
		f1(x1)
	}
	buf = append(buf, `"/>`...)
	for _, p := range pts {
		if p.Carried {
			continue
		}
		buf = append(buf, `<circle class="point" cx="`...)
		f1(x(p.At))
		buf = append(buf, `" cy="`...)
		f1(y(p.Value))
		buf = append(buf, `" r="3.5"><title>`...)
		buf = p.At.UTC().AppendFormat(buf, "2006-01-02 15:04 UTC")
		buf = append(buf, ": "...)
		buf = append(buf, template.HTMLEscapeString(p.Label)...)
		buf = append(buf, "</title></circle>"...)
	}
	b.Write(buf)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// valueTicks are an axis's values and the decimals that print them all.
type valueTicks struct {
	values   []float64
	decimals int
}

// niceTicks covers [lo, hi] with about n intervals of a 1, 2 or 5 times a
// power of ten step, from a multiple of the step below lo to one above
// hi. One precision (the step's) prints every tick, so no two read alike.
func niceTicks(lo, hi float64, n int) valueTicks {
	if !(hi > lo) || n < 1 {
		return valueTicks{values: []float64{lo}, decimals: 2}
	}
	raw := (hi - lo) / float64(n)
	exp := math.Floor(math.Log10(raw))
	mag := math.Pow(10, exp)
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw*(1-1e-9) {
			step = m * mag
			break
		}
	}
	decimals := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	first := math.Floor(lo/step+1e-9) * step
	var vs []float64
	for i := 0; ; i++ {
		v := first + float64(i)*step
		// Rounding to the printed precision keeps 0.30000000000000004 out.
		v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'f', decimals, 64), 64)
		vs = append(vs, v)
		if v >= hi-step*1e-9 || i > 4*n {
			break
		}
	}
	return valueTicks{values: vs, decimals: decimals}
}

// timeTick is a labelled instant of the time axis.
type timeTick struct {
	at    time.Time
	label string
}

// timeSteps are the spacings a time axis may use: whole hours and days,
// each dividing the day or the week evenly.
var timeSteps = []time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	24 * time.Hour, 2 * 24 * time.Hour, 7 * 24 * time.Hour}

// timeTicks puts at most max ticks within [since, until] on the boundaries
// of the smallest step that needs no more (UTC hours, midnights; weeks
// start on Mondays). A tick at midnight names the day, others the hour.
func timeTicks(since, until time.Time, max int) []timeTick {
	span := until.Sub(since)
	step := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if span/s <= time.Duration(max) {
			step = s
			break
		}
	}
	// Truncate counts from year 1's January 1st, a Monday midnight UTC.
	t := since.UTC().Truncate(step)
	if t.Before(since) {
		t = t.Add(step)
	}
	var out []timeTick
	for ; !t.After(until); t = t.Add(step) {
		label := t.Format("Jan 2")
		if step < 24*time.Hour && (t.Hour() != 0 || t.Minute() != 0) {
			label = t.Format("15:04")
		}
		out = append(out, timeTick{at: t, label: label})
	}
	return out
}
