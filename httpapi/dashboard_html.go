package httpapi

// What the dashboard writes itself rather than through html/template: the
// ranking rows, selectors, filter inputs and sort headers (each value of
// theirs was a reflective lookup and escape, most of a page's rendering:
// issue 20), and the per-card links. Every text goes through escapeTo; the
// links are built here from "/" and "/offers", never from a scraped URL.
// Also the texts the pages' templates print: units, billing, times and a
// serving plan's rows.

import (
	"fmt"
	"html/template"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/rank"
)

// cardLinks gives pageLink(path, q, kv..., "card", card) for card after
// card: the rest of the query is encoded once (Encode sorts the keys, so
// the card goes between the keys before "card" and those after). The
// ranking links every row twice; encoding each link whole was a tenth of
// the page's time.
func cardLinks(path string, q url.Values, kv ...string) func(card string) string {
	full, _ := url.ParseQuery(strings.TrimPrefix(pageLink("", q, kv...), "?"))
	before, after := url.Values{}, url.Values{}
	for k, v := range full {
		switch {
		case k < "card":
			before[k] = v
		case k > "card":
			after[k] = v
		}
	}
	b, a := before.Encode(), after.Encode()
	if b != "" {
		b += "&"
	}
	if a != "" {
		a = "&" + a
	}
	return func(card string) string {
		if card == "" {
			return pageLink(path, full, "card", "")
		}
		return path + "?" + b + "card=" + url.QueryEscape(card) + a
	}
}

// bestRow is one card in the dashboard's table.
// It is flat, its numbers already text: html/template looks every field up
// by name through reflection, and through rank.Entry's embedded structs
// that lookup was most of the page's millisecond (issue 20: the first load
// of a minute within 20x /v1/best).
type bestRow struct {
	Rank                    int
	Card, ChartLink         string
	OffersLink              string // the card's offers in the browser, same filters
	Cost, UnitPrice, Price  string
	TokensPerSecond, PerGPU string
	Source, Provider, Unit  string
	Origin, Precision       string
	Mode                    pricewatch.Mode
	Bid                     bool
	Region, OfferID         string
	Available               pricewatch.Availability
	Stock                   string
}

// bestRowsHTML writes the ranking table's rows. They are most of the page
// (a row per card, thirteen cells each), and html/template escapes every
// cell through a reflective call: written here, each text escaped with
// template.HTMLEscapeString (text and quoted attribute values alike), the
// first load of a minute takes half the time.
func bestRowsHTML(rows []bestRow) template.HTML {
	var b strings.Builder
	b.Grow(len(rows) * 900)
	e := func(s string) { escapeTo(&b, s) }
	w := b.WriteString
	for _, r := range rows {
		w(`<tr data-card="`)
		e(r.Card)
		w("\">\n<td>")
		w(strconv.Itoa(r.Rank))
		w("</td>\n<td><a href=\"")
		e(r.ChartLink)
		w(`">`)
		e(r.Card)
		w(`</a> <a class="offers-link" href="`)
		e(r.OffersLink)
		w(`" title="every offer of `)
		e(r.Card)
		w("\">offers</a></td>\n<td class=\"num cost\">")
		e(r.Cost)
		w("</td>\n<td class=\"num\">")
		e(r.UnitPrice)
		w("</td>\n<td class=\"num\">")
		e(r.Price)
		w("</td>\n<td class=\"num\">")
		e(r.TokensPerSecond)
		w("</td>\n<td>")
		e(r.Source)
		if r.Provider != r.Source {
			w(" (")
			e(r.Provider)
			w(")")
		}
		w("</td>\n<td class=\"unit\">")
		e(r.Unit)
		w("</td>\n<td><span class=\"origin origin-")
		e(r.Origin)
		w(`">`)
		e(r.Origin)
		w("</span> ")
		e(r.PerGPU)
		w("/GPU")
		if r.Precision != "bf16" {
			w(", ")
			e(r.Precision)
		}
		w("</td>\n<td>")
		e(string(r.Mode))
		if r.Bid {
			w(" (bid)")
		}
		w("</td>\n<td>")
		if r.Region != "" {
			e(r.Region)
		} else {
			w("—")
		}
		w("</td>\n<td class=\"offer\">")
		e(r.OfferID)
		w("</td>\n<td>")
		e(string(r.Available))
		if r.Stock != "" {
			w(" (")
			e(r.Stock)
			w(")")
		}
		w("</td>\n</tr>")
	}
	return template.HTML(b.String())
}

// escapeTo writes s escaped for HTML text and quoted attribute values.
func escapeTo(b *strings.Builder, s string) {
	if strings.ContainsAny(s, "<>&'\"\x00") {
		b.WriteString(template.HTMLEscapeString(s))
	} else {
		b.WriteString(s) // most texts: nothing to escape
	}
}

// optionsHTML is a selector's options. Selectors, filter inputs and sort
// headers are written here rather than by html/template, as the ranking
// rows are: each of their values was a reflective lookup and escape, and
// together they were most of what is left of the page's rendering.
func optionsHTML(opts []option) template.HTML {
	var b strings.Builder
	for _, o := range opts {
		b.WriteString(`<option value="`)
		escapeTo(&b, o.Value)
		b.WriteByte('"')
		if o.Selected {
			b.WriteString(" selected")
		}
		b.WriteByte('>')
		escapeTo(&b, o.Label)
		b.WriteString("</option>")
	}
	return template.HTML(b.String())
}

// filtersHTML is the filters fieldset of the ranking, offers and plan
// pages.
func filtersHTML(fs []filterField) template.HTML {
	var b strings.Builder
	b.WriteString(`<fieldset class="filters"><legend>Filters</legend>`)
	for _, f := range fs {
		b.WriteString("\n  <label title=\"")
		escapeTo(&b, f.Title)
		b.WriteString(`">`)
		escapeTo(&b, f.Label)
		b.WriteString(` <input name="`)
		escapeTo(&b, f.Name)
		b.WriteString(`" value="`)
		escapeTo(&b, f.Value)
		b.WriteByte('"')
		if f.Number {
			b.WriteString(` type="number" min="0" step="any" size="5"`)
		} else {
			b.WriteString(` placeholder="`)
			escapeTo(&b, f.Placeholder)
			b.WriteString(`" size="10"`)
		}
		b.WriteString("></label>")
	}
	b.WriteString("\n</fieldset>")
	return template.HTML(b.String())
}

// sortHeadsHTML is the ranking's sortable column headers.
func sortHeadsHTML(cols []sortColumn) template.HTML {
	var b strings.Builder
	for _, c := range cols {
		b.WriteString("<th")
		if c.Numeric {
			b.WriteString(` class="num"`)
		}
		b.WriteString(`><a href="`)
		escapeTo(&b, c.Link)
		b.WriteString(`">`)
		escapeTo(&b, c.Label)
		b.WriteString("</a> ")
		escapeTo(&b, c.Arrow)
		b.WriteString("</th>")
	}
	return template.HTML(b.String())
}

// money is a cost or price in cur, "—" when there is none.
func money(v float64, cur string) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "—"
	}
	return alerts.Money(v, cur)
}

func wholeNumber(v float64) string { return strconv.FormatFloat(math.Round(v), 'f', 0, 64) }

// place is a region as shown: Vast hosts without a city are ", US" (the
// offer key keeps it).
func place(r string) string { return strings.TrimSpace(strings.TrimPrefix(r, ",")) }

// pageLink is a link to path with the page's query q changed by the
// key/value pairs kv (an empty value removes the key); q's empty values
// (a form's unset inputs) are left out.
func pageLink(path string, q url.Values, kv ...string) string {
	l := url.Values{}
	for k, v := range q {
		if len(v) > 0 && v[0] != "" {
			l[k] = v
		}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			l.Del(kv[i])
		} else {
			l.Set(kv[i], kv[i+1])
		}
	}
	return path + "?" + l.Encode()
}

// option is one choice of a selector.
type option struct {
	Value, Label string
	Selected     bool
}

func options(cur string, pairs ...string) []option {
	var out []option
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, option{Value: pairs[i], Label: pairs[i+1], Selected: pairs[i] == cur})
	}
	return out
}

// sortColumn is a sortable column header.
type sortColumn struct {
	Key, Label, Link, Arrow string
	Numeric                 bool
}

// unitText says how an entry is rented: "fixed 8 GPUs" or "per GPU: 2 of 1–8".
func unitText(u pricewatch.RentUnit, gpus, used int, counts []int) string {
	var s string
	switch u {
	case pricewatch.RentFixed:
		s = fmt.Sprintf("fixed unit of %d GPU%s", gpus, plural(gpus))
	case pricewatch.RentPerGPU:
		s = fmt.Sprintf("per GPU: %d rented", gpus)
		if len(counts) > 0 {
			lo, hi := counts[0], counts[len(counts)-1]
			if lo == hi {
				s += fmt.Sprintf(" (%d allowed)", lo)
			} else {
				s += fmt.Sprintf(" (%d–%d allowed)", lo, hi)
			}
		}
	default:
		s = fmt.Sprintf("%d GPU%s", gpus, plural(gpus))
	}
	if used > 0 && used < gpus {
		s += fmt.Sprintf(", %d used", used)
	}
	return s
}

// modeChoices are the billing selector's value/label pairs: the default
// (on-demand and spot), then every mode alone.
func modeChoices() []string {
	pairs := []string{"", "on-demand and spot"}
	for _, m := range pricewatch.Modes() {
		pairs = append(pairs, string(m), string(m))
	}
	return pairs
}

// billedText says what a plan option pays for: "0.69 h", "2190 h" (whole
// hours from 100 on), or for a commitment "1 × 730 h, pays above 77% use"
// (or "never beats on-demand").
func billedText(o rank.Option) string {
	s := o.Periods()
	if s == "" && o.BilledHours >= 100 {
		return wholeNumber(o.BilledHours) + " h"
	}
	if s == "" {
		return strconv.FormatFloat(o.BilledHours, 'g', 3, 64) + " h"
	}
	switch {
	case o.BreakEvenUtilization != nil:
		s += fmt.Sprintf(", pays above %.0f%% use", *o.BreakEvenUtilization*100)
	case o.BreakEven == "never":
		s += ", never beats on-demand"
	}
	return s
}

// pairs makes value/label pairs of values that are their own labels.
func pairs(vs []string) []string {
	out := make([]string, 0, 2*len(vs))
	for _, v := range vs {
		out = append(out, v, v)
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	d := now().Sub(t)
	switch {
	case d < 0:
		return "in " + (-d).Round(time.Second).String()
	case d < time.Minute:
		return fmt.Sprintf("%.0fs ago", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%.0fm ago", d.Minutes())
	case d < 48*time.Hour:
		return fmt.Sprintf("%.1fh ago", d.Hours())
	}
	return fmt.Sprintf("%.0fd ago", d.Hours()/24)
}

func whenText(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "never"
	}
	return ago(*t)
}

// servingRow is a serving option as a buyer reads it, each figure already
// text (app.js writes the same from POST /v1/plan's answer): the GPUs the
// load needs, what they serve together and how far above the peak, the
// month, the period's bill as compute + hidden = total, and the cost per
// million tokens at the expected load ("at full use" without a load).
type servingRow struct {
	Rank                                             int
	O                                                rank.Option
	GPUs, Capacity, Headroom, PerMonth, FirstInvoice string
	Compute, Hidden, HiddenItems, Total, AtLoad      string
	AtLoadNote                                       string
}

func servingRowOf(n int, o rank.Option) servingRow {
	cur, hidden := o.Currency, 0.0
	for _, v := range o.HiddenCosts {
		hidden += v
	}
	r := servingRow{Rank: n, O: o, GPUs: "—", Capacity: "—", Headroom: "—", PerMonth: "—", Total: "—",
		Compute: money(o.ComputeCost, cur), Hidden: money(hidden, cur), HiddenItems: hiddenItems(o.HiddenCosts, cur),
		AtLoad: money(o.CostPerMillionTokens, cur), AtLoadNote: "at full use"}
	// A fitting option's period costs something: a total of 0 is a total
	// not computed, shown as none rather than as free.
	if o.TotalCost != 0 || !o.Fits {
		r.Total = money(o.TotalCost, cur)
	}
	sv := o.Serving
	if sv == nil {
		return r
	}
	r.GPUs = strconv.Itoa(sv.GPUsNeeded)
	if sv.Instances > 1 {
		r.GPUs += fmt.Sprintf(" (%d × %d)", sv.Instances, o.GPUs)
	}
	r.PerMonth = money(sv.MonthlyCost, cur)
	if sv.FirstInvoice > 0 {
		r.FirstInvoice = "first invoice " + money(sv.FirstInvoice, cur)
	}
	if sv.CapacityTokensPerSecond > 0 {
		r.Capacity = wholeNumber(sv.CapacityTokensPerSecond)
	}
	if sv.HeadroomPct != 0 {
		r.Headroom = fmt.Sprintf("%+.0f%%", sv.HeadroomPct)
	}
	if sv.CostPerMillionTokensAtLoad > 0 {
		r.AtLoad, r.AtLoadNote = money(sv.CostPerMillionTokensAtLoad, cur), ""
	}
	return r
}

// hiddenItems lists an option's hidden costs that are not zero:
// "egress 12.0 USD, startup 3.10 USD".
func hiddenItems(m map[string]float64, cur string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] != 0 {
			out = append(out, k+" "+money(m[k], cur))
		}
	}
	return strings.Join(out, ", ")
}

// monthsText is a serving plan's period: "1 month", "2.5 months".
func monthsText(m float64) string {
	if m == 1 {
		return "1 month"
	}
	return strconv.FormatFloat(m, 'f', -1, 64) + " months"
}

// serviceText is a serving job's service level as the plan says it
// (app.js writes the same): "Service level at p95: time to first token
// 800 ms, 60 ms per output token, 15 tokens/s per user; 30% of prompt
// tokens cached." ("" without one).
func serviceText(slo *rank.SLO, cached float64) string {
	var parts []string
	if slo != nil {
		for _, t := range []struct {
			v      float64
			before string
			after  string
		}{{slo.TTFTms, "time to first token ", " ms"}, {slo.TPOTms, "", " ms per output token"}, {slo.UserTokensPerSecond, "", " tokens/s per user"}} {
			if t.v > 0 {
				parts = append(parts, t.before+strconv.FormatFloat(t.v, 'f', -1, 64)+t.after)
			}
		}
	}
	s := ""
	if len(parts) > 0 {
		s = " Service level"
		if slo.Percentile > 0 {
			s += " at p" + strconv.FormatFloat(slo.Percentile, 'f', -1, 64)
		}
		s += ": " + strings.Join(parts, ", ") + "."
	}
	if cached > 0 {
		s += " " + strconv.FormatFloat(math.Round(cached*1000)/10, 'f', -1, 64) + "% of prompt tokens cached."
	}
	return s
}
