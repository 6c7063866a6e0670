package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/httpapi"
)

// chromiumPath finds Debian's chromium (what .ci/run installs) or another
// Chrome on PATH.
func chromiumPath() string {
	if p := os.Getenv("PRICEWATCH_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestDashboard_InBrowser drives the dashboard of `serve --fixtures` (a
// copy of the demo fixtures) in headless Chromium: the page lists at least
// 8 cards for lora-7b, switching the currency changes the numbers, after a
// second scrape with a price edited in the copy the card's chart has a new
// point (and at least 2), the plan form returns options through
// POST /v1/plan; a screenshot is written under the test's temp dir.
func TestDashboard_InBrowser(t *testing.T) {
	chrome := chromiumPath()
	if chrome == "" {
		msg := "SKIP TestDashboard_InBrowser: no chromium binary (apt-get install chromium; .ci/run installs it)"
		fmt.Fprintln(os.Stderr, msg)
		t.Skip(msg)
	}
	dir := copyFixtures(t)
	db := filepath.Join(t.TempDir(), "pw.db")
	t.Setenv(config.EnvAPIToken, "browser-test-token")
	d := startServe(t, "--fixtures", dir, "--db", db, "--addr", "127.0.0.1:0")
	waitFor(t, 60*time.Second, "the first scrape of every source", func() bool {
		var s struct{ Sources []httpapi.SourceStatus }
		getJSON(t, d.base+"/v1/sources", &s)
		for _, src := range s.Sources {
			if src.Status == httpapi.StatusPending {
				return false
			}
		}
		return len(s.Sources) > 0
	})

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(1400, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 120*time.Second)
	defer cancelT()

	do := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatal(err)
		}
	}
	count := func(sel string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+"`"+sel+"`"+`).length`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// text reads a node's visible text by selector in one evaluation, so a
	// script that re-renders the table between a wait and the read cannot
	// leave it holding a node that no longer exists.
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const e = document.querySelector(`+"`"+sel+"`"+`); return e ? e.innerText : ""; })()`))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(s)
	}
	// navigate loads a page and waits for a selector; a navigation that
	// aborts the one still settling (net::ERR_ABORTED) is tried again.
	navigate := func(u, sel string) {
		t.Helper()
		var err error
		for range 3 {
			if err = chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS(sel))); err == nil {
				return
			}
			if !strings.Contains(err.Error(), "ERR_ABORTED") {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("%s: %v", u, err)
	}
	// settled waits for the page a form submission loads.
	settled := func(contains string) string {
		t.Helper()
		var loc string
		waitFor(t, 20*time.Second, "the page with "+contains, func() bool {
			v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.readyState + " " + location.href`))
			loc = v
			return err == nil && strings.HasPrefix(v, "complete ") && strings.Contains(v, contains)
		})
		return strings.TrimPrefix(loc, "complete ")
	}
	shots := t.TempDir()
	if dir := os.Getenv("PRICEWATCH_SCREENSHOT_DIR"); dir != "" {
		shots = dir
	}
	screenshot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(shots, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// 1. The best table: at least 8 cards for lora-7b, the unit and origin shown.
	navigate(d.base+"/?workload=lora-7b", `#best tbody tr[data-card]`)
	cards, usd, unit := count(`#best tbody tr[data-card]`), text(`#best tbody tr[data-card] td.cost`), text(`#best tbody tr[data-card] td.unit`)
	if cards < 8 || !strings.HasSuffix(usd, "USD") || unit == "" {
		t.Fatalf("best page: %d cards, first cost %q, unit %q", cards, usd, unit)
	}
	// The page says it is a demo, in view above the table, with the rates'
	// date (before: only "Ranking of … (1m ago)" in the footer).
	banner, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const e = document.querySelector("#demo-banner");
		if (!e) return ""; const r = e.getBoundingClientRect(), st = getComputedStyle(e);
		return r.height > 0 && r.bottom <= innerHeight && st.visibility === "visible" && st.display !== "none" ? e.innerText : ""; })()`))
	if err != nil || !strings.Contains(banner, "Demo: prices from bundled fixtures (23 of 41 illustrative), exchange rates of 2022-07-08") {
		t.Errorf("demo banner not in view: %q %v", banner, err)
	}

	// 2. Switching the currency changes the numbers (and the address).
	do(chromedp.SetValue(chromedp.CSS(`#currency`), "CNY"), chromedp.Click(chromedp.CSS(`#apply`)))
	loc := settled("currency=CNY")
	do(chromedp.WaitVisible(chromedp.CSS(`#best tbody tr[data-card]`)))
	cny := text(`#best tbody tr[data-card] td.cost`)
	if cny == usd || !strings.HasSuffix(cny, "CNY") || !strings.Contains(loc, "currency=CNY") {
		t.Fatalf("currency switch: %q → %q at %s", usd, cny, loc)
	}

	// 3. The L40S chart before and after a second scrape with an edited price.
	chart := d.base + "/?workload=lora-7b&mode=ondemand&card=L40S&range=24h"
	navigate(chart, `#chart-cost svg`)
	before := count(`#chart-cost circle.point`)
	file := filepath.Join(dir, "runpod", "graphql.json")
	b, _ := os.ReadFile(file)
	if bytes.Count(b, []byte(`"communityPrice": 0.79,`)) != 1 {
		t.Fatal("fixture changed: the L40S community price is not found once")
	}
	if err := os.WriteFile(file, bytes.Replace(b, []byte(`"communityPrice": 0.79,`), []byte(`"communityPrice": 0.71,`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	// The CLI asks the running daemon to scrape (POST /v1/scrape/runpod).
	var out, errOut bytes.Buffer
	if err := Run(t.Context(), []string{"scrape", "--db", db, "runpod"}, &out, &errOut); err != nil {
		t.Fatalf("scrape via the daemon: %v\n%s%s", err, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "runpod") || !strings.Contains(out.String(), " 1 changes") {
		t.Errorf("scrape via the daemon printed %q", out.String())
	}
	navigate(chart, `#chart-cost svg`)
	after := count(`#chart-cost circle.point`)
	if after < 2 || after != before+1 {
		t.Fatalf("chart points: %d before the edit, %d after", before, after)
	}
	screenshot("dashboard.png")
	if png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()); err == nil {
		os.WriteFile(filepath.Join(shots, "dashboard-top.png"), png, 0o644)
	}
	if png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(`#history`))); err == nil {
		os.WriteFile(filepath.Join(shots, "chart.png"), png, 0o644)
	}

	// 4. The plan form posts to /v1/plan and shows the options with the memory breakdown.
	navigate(d.base+"/plan", `#plan-submit`)
	do(chromedp.Click(chromedp.CSS(`#plan-submit`)), chromedp.WaitVisible(chromedp.CSS(`#plan tbody tr`)))
	options, memory := count(`#plan tbody tr`), text(`#plan-memory`)
	if options < 1 || !strings.Contains(memory, "weights") || !strings.Contains(memory, "GiB") {
		t.Fatalf("plan: %d options, memory %q", options, memory)
	}
	if p := text(`#plan-result p:nth-of-type(2)`); !strings.Contains(p, "POST /v1/plan") {
		t.Errorf("the options did not come from POST /v1/plan: %q", p)
	}
	screenshot("plan.png")
	// A monthly rental priced in the form bills one whole month, and the
	// row says whether that month can beat on-demand (app.js renders it).
	// Modes are checkboxes: on-demand and spot (the defaults) off, monthly on.
	do(chromedp.Click(chromedp.CSS(`#plan-modes input[value=ondemand]`)), chromedp.Click(chromedp.CSS(`#plan-modes input[value=spot]`)),
		chromedp.Click(chromedp.CSS(`#plan-modes input[value=monthly]`)), chromedp.Click(chromedp.CSS(`#plan-submit`)))
	// Wait for the new table: its first row's Mode cell says monthly.
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const c = document.querySelector("#plan tbody tr td:nth-child(5)"); return !!c && c.textContent === "monthly"; })()`,
		chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("no monthly plan in the page: %v", err)
	}
	if b := text(`#plan tbody tr td:nth-child(11)`); !strings.HasPrefix(b, "1 × 730 h, ") {
		t.Errorf("monthly plan's Billed cell = %q, want one month of 730 h and its break-even", b)
	}
	screenshot("plan-monthly.png")
	t.Logf("screenshots in %s", shots)
	// The plan came from the API: the same spec answers there.
	res, err := http.Post(d.base+"/v1/plan", "application/json", strings.NewReader(`{"workload":"lora-7b","tokens":15000000,"limit":20}`))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("POST /v1/plan: %v %v", err, res)
	}
	res.Body.Close()
}
