package httpapi_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDashboardBrowser_OfferBrowser opens the offer browser of a card as a
// person would: the rows show every offer detail column ("—" where the
// source states none), the next page continues the numbering with other
// offers, a provider filter keeps only that provider's rows (and is in the
// address), and a click on the price header sorts dearest first.
// Before: /offers was a 404 page ("no such endpoint /offers").
func TestDashboardBrowser_OfferBrowser(t *testing.T) {
	h := newPlanHarness(t, "")
	_, all := h.get(t, "/v1/offers?card=L40S&limit=10000")
	total := len(decode[struct{ Offers []struct{ Provider string } }](t, all).Offers)
	if total <= 25 {
		t.Fatalf("the fixtures have %d L40S offers, the test needs more than a page of 25", total)
	}
	b := newBrowser(t, h)
	b.open("/offers?card=L40S&limit=25", `#offers tbody tr[data-key]`)
	heads := strings.Join(b.texts(`#offers thead th`), "|")
	for _, col := range []string{"vCPUs", "RAM GB", "Disk GB", "Interconnect", "Country", "Rent", "Price / GPU-h"} {
		if !strings.Contains(heads, col) {
			t.Errorf("no %s column: %s", col, heads)
		}
	}
	page1 := b.texts(`#offers tbody tr[data-key] td.offer`)
	if len(page1) != 25 || !strings.Contains(b.texts(`#offers-count`)[0], fmt.Sprintf("1–25 of %d", total)) {
		t.Fatalf("first page: %d rows, %q", len(page1), b.texts(`#offers-count`))
	}
	for _, c := range b.texts(`#offers td.vcpus, #offers td.ram, #offers td.disk`) {
		if _, err := strconv.ParseFloat(c, 64); err != nil && c != "—" {
			t.Errorf("detail cell %q: neither a number nor —", c)
		}
	}
	b.noOverflow(`#offers`)
	b.screenshot("offers.png")

	// Paging: the next page starts at row 26 with other offers.
	b.do(chromedp.Click(chromedp.CSS(`#offers-next`)))
	b.loaded("from=26")
	b.do(chromedp.WaitVisible(chromedp.CSS(`#offers tbody tr[data-key]`)))
	page2 := b.texts(`#offers tbody tr[data-key] td.offer`)
	if n := b.texts(`#offers tbody tr[data-key] td:first-child`); len(n) == 0 || n[0] != "26" || len(page2) == 0 {
		t.Fatalf("second page numbered %v", n)
	}
	if strings.Join(page1, "|") == strings.Join(page2, "|") {
		t.Error("the next page shows the first page's offers")
	}

	// A provider filter: the rows change to that provider's only.
	b.open("/offers?card=L40S&limit=100", `#offers tbody tr[data-key]`)
	before := len(b.texts(`#offers tbody tr[data-key]`))
	b.do(chromedp.SetValue(chromedp.CSS(`#offers-form input[name=provider]`), "vast"), chromedp.Click(chromedp.CSS(`#offers-apply`)))
	loc := b.loaded("provider=vast")
	b.do(chromedp.WaitVisible(chromedp.CSS(`#offers tbody tr[data-key]`)))
	provs := eval[[]string](b, `Array.from(document.querySelectorAll("#offers tbody tr[data-key]"), e => e.dataset.provider)`)
	if len(provs) == 0 || len(provs) == before {
		t.Fatalf("provider=vast: %d rows of %d before", len(provs), before)
	}
	for _, p := range provs {
		if p != "vast" {
			t.Fatalf("provider=vast shows a row of %s", p)
		}
	}
	// The address holds only the filters set: no empty region= or country=.
	if strings.Contains(loc, "region=") || strings.Contains(loc, "country=") {
		t.Errorf("empty filters in the address: %s", loc)
	}
	b.screenshot("offers-filtered.png")

	// Sorting: the price header's first click (the list is cheapest
	// first) sorts dearest first, within the filter.
	b.do(chromedp.Click(chromedp.CSS(`#offers thead a[data-sort=price]`)))
	b.loaded("sort=-price")
	b.do(chromedp.WaitVisible(chromedp.CSS(`#offers tbody tr[data-key]`)))
	prices := numbers(t, b.texts(`#offers tbody td.price`))
	if len(prices) != len(provs) || !slices.IsSortedFunc(prices, func(a, b float64) int { return int(b*1e6 - a*1e6) }) {
		t.Errorf("sort=-price: %d rows (%d filtered), prices %v", len(prices), len(provs), prices)
	}
}

// TestDashboardBrowser_Ranking: at 1400 px the ranking table has no
// horizontal scroll; the first click on Tokens/s sorts highest first; a
// provider filter typed in the form changes the rows and is in the
// address (a shared link is the filtered view), and each row's offers
// link carries it; the chart's value ticks are distinct and its time
// ticks on whole hours.
// Before: the table was 1480 px wide in 1400 (page scrollWidth 1500),
// the first Tokens/s click sorted lowest first (order=asc), the form had
// no provider input, and the 24 h chart's time ticks read since + i/4.
func TestDashboardBrowser_Ranking(t *testing.T) {
	h := newPlanHarness(t, "")
	b := newBrowser(t, h)
	b.open("/?workload=lora-7b", `#best tbody tr[data-card]`)
	b.noOverflow(`#best`)
	b.screenshot("ranking.png")
	all := b.texts(`#best tbody tr[data-card] td:nth-child(7)`)

	b.do(chromedp.Click(chromedp.CSS(`#best thead a[href*="sort=tps"]`)))
	loc := b.loaded("sort=tps")
	b.do(chromedp.WaitVisible(chromedp.CSS(`#best tbody tr[data-card]`)))
	tps := numbers(t, b.texts(`#best tbody tr[data-card] td:nth-child(6)`))
	if !strings.Contains(loc, "order=desc") || len(tps) < 2 || tps[0] < tps[len(tps)-1] || !slices.IsSortedFunc(tps, func(a, b float64) int { return int(b - a) }) {
		t.Errorf("first Tokens/s click: %s, tokens/s %v", loc, tps)
	}

	b.do(chromedp.SetValue(chromedp.CSS(`#best-form input[name=provider]`), "runpod"), chromedp.Click(chromedp.CSS(`#apply`)))
	loc = b.loaded("provider=runpod")
	b.do(chromedp.WaitVisible(chromedp.CSS(`#best tbody tr[data-card]`)))
	srcs := b.texts(`#best tbody tr[data-card] td:nth-child(7)`)
	if len(srcs) == 0 || len(srcs) == len(all) {
		t.Fatalf("provider=runpod: %d rows of %d", len(srcs), len(all))
	}
	for _, s := range srcs {
		if !strings.Contains(s, "runpod") {
			t.Errorf("provider=runpod shows a row from %q", s)
		}
	}
	if strings.Contains(loc, "region=") || !strings.Contains(loc, "sort=tps") {
		t.Errorf("filtered address %s: empty filters kept or the sort lost", loc)
	}
	if l := eval[string](b, `document.querySelector("#best a.offers-link").href`); !strings.Contains(l, "/offers?") || !strings.Contains(l, "provider=runpod") {
		t.Errorf("offers link %s lacks the filter", l)
	}
	// The navigation's Offers link keeps the filter.
	if l := eval[string](b, `document.querySelector("nav a[href^='/offers']").href`); !strings.Contains(l, "provider=runpod") {
		t.Errorf("nav's Offers link %s drops the filter", l)
	}
	// The shared link shows the same filtered table.
	b.open(strings.TrimPrefix(loc, b.base), `#best tbody tr[data-card]`)
	if got := b.texts(`#best tbody tr[data-card] td:nth-child(7)`); strings.Join(got, "|") != strings.Join(srcs, "|") {
		t.Errorf("the filtered link shows %v, the form showed %v", got, srcs)
	}
	b.screenshot("ranking-filtered.png")

	b.open("/?workload=lora-7b&card=L40S&range=24h", `#chart-cost svg`)
	for _, id := range []string{"#chart-cost", "#chart-price"} {
		labels := b.texts(id + ` svg text.axis`)
		var values, times []string
		for _, l := range labels {
			if _, err := strconv.ParseFloat(l, 64); err == nil {
				values = append(values, l)
			} else if l != "" && !strings.Contains(l, "/") {
				times = append(times, l)
			}
		}
		if len(values) < 3 || len(slices.Compact(slices.Clone(values))) != len(values) {
			t.Errorf("%s value ticks %v: fewer than 3 or repeated", id, values)
		}
		for _, tm := range times {
			if !strings.HasSuffix(tm, ":00") && strings.Contains(tm, ":") {
				t.Errorf("%s time tick %q is not on a whole hour (%v)", id, tm, times)
			}
		}
	}
	b.shot("chart.png", chromedp.Screenshot(chromedp.CSS(`#history`)))
}
