package httpapi_test

import (
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/pricewatch/pricewatch/alerts"
)

// planAnswer is what the serving plan tests read of POST /v1/plan.
type planAnswer struct {
	Currency string
	Job      struct{ Months float64 }
	Options  []struct {
		Card, Offer, Mode string
		Fits              bool
		ComputeCost       float64            `json:"compute_cost"`
		HiddenCosts       map[string]float64 `json:"hidden_costs"`
		TotalCost         float64            `json:"total_cost"`
		Serving           *struct {
			GPUsNeeded  int     `json:"gpus_needed"`
			MonthlyCost float64 `json:"monthly_cost"`
		}
	}
}

// servingCells are a serving plan table's cells a buyer reads, row by row
// (a cell's first line: a second one is a note such as the first invoice).
type servingCells struct{ offer, gpus, perMonth, compute, hidden, total []string }

func readServingCells(b *browser) servingCells {
	b.t.Helper()
	first := func(sel string) []string {
		var out []string
		for _, s := range b.texts(`#plan.serving tbody tr ` + sel) {
			out = append(out, strings.TrimSpace(strings.Split(s, "\n")[0]))
		}
		return out
	}
	return servingCells{first(`td.offer`), first(`td.gpus`), first(`td.per-month`), first(`td.compute`), first(`td.hidden`), first(`td.total`)}
}

// TestDashboardBrowser_PlanServing prices a serving job as a person would:
// on /plan, no workload, the llama3-8b preset, method serve, no tokens, a
// peak of 300 tokens/s, on-demand and monthly. Every row shows a total
// that is not zero, the GPUs the load needs and the month's cost, each
// what POST /v1/plan answers for the same spec (as the page rounds it),
// and the row's compute + hidden = total; reloading the page's address
// shows the same plan, rendered by the server.
// Before: a serving plan's Total read "0 USD" and the table showed neither
// the GPUs needed nor the month's cost; the form had no mode checkboxes.
func TestDashboardBrowser_PlanServing(t *testing.T) {
	h := newPlanHarness(t, "")
	b := newBrowser(t, h)
	b.open("/plan", `#plan-submit`)
	fill(b, url.Values{"workload": {""}, "tokens": {""}, "model": {"llama3-8b"}, "method": {"serve"}, "peak_tokens_per_second": {"300"}})
	setModes(b, "ondemand", "monthly")
	b.do(chromedp.Click(chromedp.CSS(`#plan-submit`)), chromedp.WaitVisible(chromedp.CSS(`#plan.serving tbody tr`)))
	loc := eval[string](b, `location.href`)
	cur := eval[string](b, `document.querySelector("#plan-form select[name=currency]").value`)

	spec := `{"model": {"preset": "llama3-8b"}, "method": "serve", "peak_tokens_per_second": 300, "modes": ["ondemand", "monthly"], "currency": "` + cur + `", "limit": 20}`
	code, body := h.do(t, http.MethodPost, "/v1/plan", spec, "")
	if code != 200 {
		t.Fatalf("POST /v1/plan %s: %d %s", spec, code, body)
	}
	var api planAnswer
	if err := json.Unmarshal(body, &api); err != nil {
		t.Fatal(err)
	}
	got := readServingCells(b)
	if len(api.Options) == 0 || len(got.total) != len(api.Options) {
		t.Fatalf("the page shows %d options, POST /v1/plan %d", len(got.total), len(api.Options))
	}
	if head := strings.Join(b.texts(`#plan.serving thead th`), "|"); !strings.Contains(head, "GPUs|") || !strings.Contains(head, "Per month") ||
		!strings.Contains(head, "Compute|+ Hidden|= Total, 1 month") || !strings.Contains(head, "at load") || !strings.Contains(head, "Headroom") {
		t.Errorf("serving columns: %s", head)
	}
	for i, o := range api.Options {
		hidden := 0.0
		for _, v := range o.HiddenCosts {
			hidden += v
		}
		if o.Serving == nil || !o.Fits {
			t.Fatalf("option %d (%s %s): fits %v, serving %v", i+1, o.Card, o.Offer, o.Fits, o.Serving)
		}
		if math.Abs(o.ComputeCost+hidden-o.TotalCost) > 1e-9*math.Max(1, o.TotalCost) {
			t.Errorf("option %d: compute %g + hidden %g != total %g", i+1, o.ComputeCost, hidden, o.TotalCost)
		}
		want := []string{o.Offer, strconv.Itoa(o.Serving.GPUsNeeded), alerts.Money(o.Serving.MonthlyCost, cur),
			alerts.Money(o.ComputeCost, cur), alerts.Money(hidden, cur), alerts.Money(o.TotalCost, cur)}
		row := []string{got.offer[i], strings.Fields(got.gpus[i] + " ")[0], got.perMonth[i], got.compute[i], got.hidden[i], got.total[i]}
		if !slices.Equal(row, want) {
			t.Errorf("row %d (offer, GPUs, per month, compute, hidden, total) = %q, POST /v1/plan: %q", i+1, row, want)
		}
		if total := numbers(t, []string{strings.ReplaceAll(got.total[i], "—", "0")})[0]; !(total > 0) {
			t.Errorf("row %d (%s %s): total %q, want more than 0", i+1, o.Card, o.Offer, got.total[i])
		}
	}
	b.noOverflow(`#plan`)
	b.screenshot("plan-serving.png")

	// The address is the plan: the server prices it alike.
	for _, p := range []string{"model=llama3-8b", "method=serve", "peak_tokens_per_second=300", "modes=ondemand", "modes=monthly"} {
		if !strings.Contains(loc, p) {
			t.Errorf("plan address %s lacks %s", loc, p)
		}
	}
	b.open(strings.TrimPrefix(loc, b.base), `#plan.serving tbody tr`)
	if again := readServingCells(b); !equalCells(again, got) {
		t.Errorf("the link shows\n%q\nthe form showed\n%q", again, got)
	}
}

func equalCells(a, b servingCells) bool {
	return slices.Equal(a.offer, b.offer) && slices.Equal(a.gpus, b.gpus) && slices.Equal(a.perMonth, b.perMonth) &&
		slices.Equal(a.compute, b.compute) && slices.Equal(a.hidden, b.hidden) && slices.Equal(a.total, b.total)
}

// fill sets the plan form's inputs and selectors by name (chromedp's
// SetValue cannot empty one).
func fill(b *browser, values url.Values) {
	b.t.Helper()
	for k, v := range values {
		sel := `#plan-form [name=` + k + `]:not([type=checkbox])`
		js := `(e => { e.value = ` + strconv.Quote(v[0]) + `; e.dispatchEvent(new Event("change", {bubbles: true})); return e.value; })(document.querySelector(` + strconv.Quote(sel) + `))`
		if got := eval[string](b, js); got != v[0] {
			b.t.Fatalf("%s: set %q, the form has %q", sel, v[0], got)
		}
	}
}

// setModes clicks the mode checkboxes so that exactly modes are checked.
func setModes(b *browser, modes ...string) {
	b.t.Helper()
	for _, m := range eval[[]string](b, `Array.from(document.querySelectorAll("#plan-modes input[name=modes]"), e => e.value)`) {
		sel := `#plan-modes input[value="` + m + `"]`
		if eval[bool](b, `document.querySelector(`+strconv.Quote(sel)+`).checked`) != slices.Contains(modes, m) {
			b.do(chromedp.Click(chromedp.CSS(sel)))
		}
	}
}

// TestDashboardBrowser_PlanFormRoundTrip fills every kind of input of the
// plan form (selectors, a model by its shape, the sequence, the serving
// load and period, the service level where the spec takes it, a hidden
// cost, modes), submits, and finds each chosen input in the address;
// opening that address shows the same inputs and the same plan.
// Before: the form had no precision, shape, sequence, deadline, months or
// mode checkboxes, and its mode was one selector of fixed combinations.
func TestDashboardBrowser_PlanFormRoundTrip(t *testing.T) {
	h := newPlanHarness(t, "")
	b := newBrowser(t, h)
	b.open("/plan", `#plan-submit`)
	chosen := url.Values{"workload": {""}, "tokens": {""}, "model": {""}, "method": {"serve"}, "precision": {"fp8"}, "max_gpus": {"4"},
		"params_b": {"8"}, "layers": {"32"}, "hidden": {"4096"}, "heads": {"32"}, "kv_heads": {"8"},
		"context": {"4096"}, "output_tokens": {"512"}, "peak_tokens_per_second": {"400"}, "base_tokens_per_second": {"100"},
		"peak_hours_per_day": {"6"}, "hours_per_month": {"600"}, "months": {"3"}, "egress_gb": {"50"}}
	// The service level, as far as the spec takes it yet.
	for k, v := range map[string]string{"ttft_ms": "800", "tpot_ms": "60", "percentile": "95", "user_tokens_per_second": "15", "cached_prompt_share": "0.3"} {
		if eval[bool](b, `!!document.querySelector("#plan-form input[name=`+k+`]")`) {
			chosen.Set(k, v)
		} else {
			t.Logf("the form has no %s input: the job spec does not take it", k)
		}
	}
	fill(b, chosen)
	setModes(b, "ondemand", "monthly", "reserved-1y")
	b.do(chromedp.Click(chromedp.CSS(`#plan-submit`)), chromedp.WaitVisible(chromedp.CSS(`#plan.serving tbody tr`)))
	loc := eval[string](b, `location.href`)
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for k, v := range chosen {
		if v[0] != "" && q.Get(k) != v[0] {
			t.Errorf("the address %s has %s=%q, chosen %q", loc, k, q.Get(k), v[0])
		}
		if v[0] == "" && q.Has(k) {
			t.Errorf("the address %s has %s, left empty", loc, k)
		}
	}
	if m := q["modes"]; !slices.Equal(m, []string{"ondemand", "monthly", "reserved-1y"}) {
		t.Errorf("the address's modes are %v", m)
	}
	before := readServingCells(b)
	job, memory := b.texts(`#plan-job`), b.texts(`#plan-memory`)
	if len(job) != 1 || !strings.Contains(job[0], "Billed for 3 months") || !strings.Contains(job[0], "600 h/month") {
		t.Errorf("plan says %q", job)
	}
	if chosen.Get("ttft_ms") != "" && !strings.Contains(job[0], "Service level at p95: time to first token 800 ms, 60 ms per output token, 15 tokens/s per user.") {
		t.Errorf("plan says %q, without the service level", job)
	}

	b.open(strings.TrimPrefix(loc, b.base), `#plan.serving tbody tr`)
	for k, v := range chosen {
		if got := eval[string](b, `document.querySelector("#plan-form [name=`+k+`]:not([type=checkbox])").value`); got != v[0] {
			t.Errorf("the link's form has %s=%q, chosen %q", k, got, v[0])
		}
	}
	if m := eval[[]string](b, `Array.from(document.querySelectorAll("#plan-modes input:checked"), e => e.value)`); !slices.Equal(m, []string{"ondemand", "monthly", "reserved-1y"}) {
		t.Errorf("the link's form checks %v", m)
	}
	if after := readServingCells(b); len(after.total) == 0 || !equalCells(after, before) {
		t.Errorf("the link shows\n%q\nthe form showed\n%q", after, before)
	}
	if j, m := b.texts(`#plan-job`), b.texts(`#plan-memory`); !slices.Equal(j, job) || !slices.Equal(m, memory) {
		t.Errorf("the link says\n%q %q\nthe form said\n%q %q", j, m, job, memory)
	}
	if head := b.texts(`#plan.serving thead th`); !slices.Contains(head, "= Total, 3 months") {
		t.Errorf("the total's column is not the 3 months': %q", head)
	}
	b.screenshot("plan-roundtrip.png")
}
