package httpapi_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser is headless Chromium on a page of the test server, with the
// few reads and waits the dashboard tests need.
type browser struct {
	t     *testing.T
	ctx   context.Context
	base  string
	shots string
}

// newBrowser serves h on loopback and starts Debian's chromium (what
// .ci/run installs; PRICEWATCH_CHROMIUM names another) at 1400×1000.
// Screenshots go to PRICEWATCH_SCREENSHOT_DIR, else the test's temp dir
// (the log says where).
func newBrowser(t *testing.T, h *harness) *browser {
	t.Helper()
	chrome := os.Getenv("PRICEWATCH_CHROMIUM")
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if chrome != "" {
			break
		}
		chrome, _ = exec.LookPath(name)
	}
	if chrome == "" {
		msg := "SKIP " + t.Name() + ": no chromium binary (apt-get install chromium; .ci/run installs it)"
		fmt.Fprintln(os.Stderr, msg)
		t.Skip(msg)
	}
	ts := httptest.NewServer(h.srv)
	t.Cleanup(ts.Close)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(1400, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancel(); cancelAlloc() })
	// The first run starts the browser on ctx, so that the per-step
	// timeouts of do (contexts derived from it) do not close it.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	b := &browser{t: t, ctx: ctx, base: ts.URL, shots: t.TempDir()}
	if dir := os.Getenv("PRICEWATCH_SCREENSHOT_DIR"); dir != "" {
		b.shots = dir
	}
	t.Logf("screenshots in %s", b.shots)
	return b
}

// do runs steps, at most 15 s; a failure names the page and its error.
func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		page, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`location.href + ": " + ((document.querySelector(".error") || {}).innerText || "no error shown")`))
		b.t.Fatalf("%v (at %s)", err, page)
	}
}

// eval runs a script expression and returns its value.
func eval[T any](b *browser, js string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		b.t.Fatalf("%s: %v", js, err)
	}
	return v
}

// texts is the visible text of every node a selector matches.
func (b *browser) texts(sel string) []string {
	b.t.Helper()
	return eval[[]string](b, `Array.from(document.querySelectorAll(`+strconv.Quote(sel)+`), e => (e.innerText ?? e.textContent).trim())`)
}

// open loads a path and waits for a selector.
func (b *browser) open(path, sel string) {
	b.t.Helper()
	b.do(chromedp.Navigate(b.base+path), chromedp.WaitVisible(chromedp.CSS(sel)))
}

// loaded waits for the page a click or a form loads: complete, at an
// address holding want.
func (b *browser) loaded(want string) string {
	b.t.Helper()
	var loc string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.readyState + " " + location.href`))
		if err == nil && strings.HasPrefix(v, "complete ") && strings.Contains(v, want) {
			return strings.TrimPrefix(v, "complete ")
		}
		loc = v
		time.Sleep(50 * time.Millisecond)
	}
	b.t.Fatalf("no page at an address with %q (last %q)", want, loc)
	return ""
}

// screenshot writes the whole page as PNG; viewport only the window's
// part (a long page such as the API reference).
func (b *browser) screenshot(name string) { b.t.Helper(); b.shot(name, chromedp.FullScreenshot(100)) }

func (b *browser) viewport(name string) { b.t.Helper(); b.shot(name, chromedp.CaptureScreenshot()) }

func (b *browser) shot(name string, a chromedp.Action[[]byte]) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, a)
	if err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// noOverflow fails when the page or a selector's node is wider than the
// 1400 px window (scrollWidth over clientWidth: a horizontal scroll bar).
func (b *browser) noOverflow(sel string) {
	b.t.Helper()
	got := eval[string](b, `(() => { const d = document.documentElement, e = document.querySelector(`+strconv.Quote(sel)+`);
		return [innerWidth, d.scrollWidth, d.clientWidth, e.scrollWidth, e.parentElement.clientWidth].join(" "); })()`)
	var win, dsw, dcw, esw, pcw int
	fmt.Sscan(got, &win, &dsw, &dcw, &esw, &pcw)
	if win != 1400 || dsw > dcw || esw > pcw {
		b.t.Errorf("%s at %d px: page scrollWidth %d, clientWidth %d; table %d wide in %d", sel, win, dsw, dcw, esw, pcw)
	}
}

func numbers(t *testing.T, cells []string) []float64 {
	t.Helper()
	var out []float64
	for _, c := range cells {
		f, err := strconv.ParseFloat(strings.Fields(c + " x")[0], 64)
		if err != nil {
			t.Fatalf("cell %q is not a number", c)
		}
		out = append(out, f)
	}
	return out
}

// TestDashboardBrowser_PlanForm fills the plan form's new inputs (method,
// model, peak and base load, a hidden cost) and gets a plan from
// POST /v1/plan that says it priced them; the form's address holds them.
// Before: the form had no method, model, load or hidden-cost input.
func TestDashboardBrowser_PlanForm(t *testing.T) {
	h := newPlanHarness(t, "")
	b := newBrowser(t, h)
	b.open("/plan", `#plan-submit`)
	b.do(chromedp.SetValue(chromedp.CSS(`#plan-form select[name=workload]`), "serve-7b"),
		chromedp.SetValue(chromedp.CSS(`#plan-method`), "serve"),
		chromedp.SetValue(chromedp.CSS(`#plan-model`), "llama3-8b"),
		chromedp.SetValue(chromedp.CSS(`#plan-form input[name=peak_tokens_per_second]`), "2000"),
		chromedp.SetValue(chromedp.CSS(`#plan-form input[name=base_tokens_per_second]`), "500"),
		chromedp.SetValue(chromedp.CSS(`#plan-form input[name=peak_hours_per_day]`), "8"),
		chromedp.SetValue(chromedp.CSS(`#plan-form input[name=startup_minutes]`), "45"),
		chromedp.SetValue(chromedp.CSS(`#plan-form input[name=egress_gb]`), "200"),
		chromedp.Click(chromedp.CSS(`#plan-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`#plan tbody tr`)))
	job := b.texts(`#plan-job`)
	// llama3-8b is 8.03 B (rank/data/models.csv); 730 h/month the default.
	want := "Priced: serve of llama3-8b (8.03 B), peak 2000 tokens/s for 8 h/day over a base of 500, 730 h/month; start-up 45 min"
	if len(job) != 1 || !strings.HasPrefix(job[0], want) || !strings.Contains(job[0], "egress 200 GB") {
		t.Fatalf("plan says %q, want %q… egress 200 GB", job, want)
	}
	if rows := b.texts(`#plan tbody tr`); len(rows) < 1 || strings.HasPrefix(rows[0], "No option") {
		t.Errorf("no plan option: %v", rows)
	}
	loc := eval[string](b, `location.href`)
	for _, p := range []string{"method=serve", "model=llama3-8b", "peak_tokens_per_second=2000", "startup_minutes=45"} {
		if !strings.Contains(loc, p) {
			t.Errorf("plan address %s lacks %s", loc, p)
		}
	}
	b.noOverflow(`#plan`)
	b.screenshot("plan-form.png")
	// The same address without script is priced by the server alike.
	code, body := h.page(t, strings.TrimPrefix(loc, b.base))
	if code != 200 || !strings.Contains(body, want) {
		t.Errorf("server-priced plan at %s: %d, lacks %q", loc, code, want)
	}
}

// TestDashboardBrowser_APIReference: the navigation's API link opens a
// rendered HTML reference of every operation, not the YAML file.
// Before: "API" linked /openapi.yaml (served as application/yaml).
func TestDashboardBrowser_APIReference(t *testing.T) {
	h := newPlanHarness(t, "")
	b := newBrowser(t, h)
	b.open("/?workload=lora-7b", `#nav-api`)
	b.do(chromedp.Click(chromedp.CSS(`#nav-api`)))
	b.loaded("/api")
	b.do(chromedp.WaitVisible(chromedp.CSS(`#api-reference`)))
	if ct := eval[string](b, `document.contentType`); ct != "text/html" {
		t.Fatalf("the API link opened %s", ct)
	}
	ops := b.texts(`.api-op h3`)
	if len(ops) < 25 || !slices.Contains(ops, "GET /v1/best") || !slices.Contains(ops, "POST /v1/plan bearer token") && !slices.Contains(ops, "POST /v1/plan") {
		t.Fatalf("%d operations: %v", len(ops), ops)
	}
	best := strings.Join(b.texts(`#get-v1-best`), " ")
	for _, want := range []string{"workload", "required", "A workload: lora-7b", "Best", "400"} {
		if !strings.Contains(best, want) {
			t.Errorf("GET /v1/best's section lacks %q: %.600s", want, best)
		}
	}
	b.viewport("api.png")
}
