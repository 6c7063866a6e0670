package httpapi

// What the dashboard writes itself rather than through html/template: the
// ranking rows, selectors, filter inputs and sort headers (each value of
// theirs was a reflective lookup and escape, most of a page's rendering:
// issue 20), and the per-card links. Every text goes through escapeTo; the
// links are built here from "/" and "/offers", never from a scraped URL.

import (
	"html/template"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/alerts"
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
