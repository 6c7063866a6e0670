package main

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/httpapi"
)

// decimalRe finds the numbers with a fractional part in a text.
var decimalRe = regexp.MustCompile(`\b\d+\.\d+\b`)

// unrounded lists the numbers of s printed with more digits than a person
// reads: six significant digits or more with a fractional part
// ("56.888888888888886", "2917.1125", "1056.000031"). Money keeps three
// significant digits below 1 ("0.00433") and whole units from 100, so no
// price trips it.
func unrounded(s string) []string {
	var out []string
	for _, n := range decimalRe.FindAllString(s, -1) {
		if sig := len(strings.TrimLeft(strings.ReplaceAll(n, ".", ""), "0")); sig >= 6 {
			out = append(out, n)
		}
	}
	return out
}

// tagRe and scriptRe strip a page to the text a person reads (attributes,
// scripts and styles hold numbers for machines).
var (
	scriptRe = regexp.MustCompile(`(?s)<(script|style)\b.*?</(script|style)>`)
	tagRe    = regexp.MustCompile(`<[^>]*>`)
)

func pageText(t *testing.T, u string) string {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Errorf("%s: HTTP %d", u, res.StatusCode)
	}
	return tagRe.ReplaceAllString(scriptRe.ReplaceAllString(string(b), " "), " ")
}

// Issue 32 item 3: every number shown to a person is rounded for one — in
// the CLI's tables, the dashboard's pages, the digest and the Slack
// messages — over the demo data, whose offers state vCPUs, RAM and disk
// as shares of a machine. Before: the dashboard's offer browser printed
// RAM and disk as 2917.1125 and 2975.1904677074026 (and vCPUs as
// 56.888888888888886 where a source states a share).
func TestNumbers_RoundedForPeople(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	d := startServe(t, "--demo", "--addr", "127.0.0.1:0")
	waitFor(t, 20*time.Second, "the first scrape", func() bool { return d.sourcesOK(t) })

	// The cards whose offers state a quantity with a fraction: their pages
	// of the offer browser are where one would show.
	var all httpapi.OffersResponse
	getJSON(t, d.base+"/v1/offers?limit=10000", &all)
	var cards []string
	for _, o := range all.Offers {
		frac := func(v float64) bool { return v != float64(int64(v)) }
		if o.Card != "" && (frac(o.VCPUs) || frac(o.RAMGB) || frac(o.DiskGB)) && !slices.Contains(cards, o.Card) {
			cards = append(cards, o.Card)
		}
	}
	if len(cards) == 0 {
		t.Fatal("no demo offer states a fractional vCPU, RAM or disk figure: the test shows nothing")
	}
	pages := []string{"/", "/?workload=serve-7b", "/?workload=lora-7b&min_vcpus_per_gpu=4", "/plan?workload=lora-7b&tokens=15e6",
		"/plan?workload=serve-7b&peak_tokens_per_second=500", "/sources", "/alerts"}
	for _, c := range cards {
		pages = append(pages, "/offers?limit=500&card="+url.QueryEscape(c))
	}
	for _, p := range pages {
		if bad := unrounded(pageText(t, d.base+p)); len(bad) > 0 {
			t.Errorf("dashboard %s shows %v", p, bad[:min(5, len(bad))])
		}
	}

	// The CLI asks the daemon that holds the demo database.
	for _, args := range [][]string{
		{"best", "--workload", "lora-7b"}, {"best", "--workload", "serve-7b", "--min-vcpus-per-gpu", "4", "--min-ram-gb-per-gpu", "8", "--country", "US,CA"},
		{"offers", cards[0]}, {"offers", "--vendor", "nvidia", "--max-price", "1"},
		{"plan", "--workload", "lora-7b", "--tokens", "15e6", "--limit", "10"}, {"plan", "--workload", "serve-7b", "--peak-tps", "500", "--limit", "10"},
		{"sources"}, {"alerts"}, {"digest"}, {"digest", "--json"},
	} {
		var out, errOut bytes.Buffer
		if err := Run(t.Context(), append(args, "--demo"), &out, &errOut); err != nil {
			t.Errorf("%q: %v\n%s", args, err, errOut.String())
			continue
		}
		if bad := unrounded(out.String()); len(bad) > 0 {
			t.Errorf("pricewatch %s prints %v", strings.Join(args, " "), bad[:min(5, len(bad))])
		}
	}
}
