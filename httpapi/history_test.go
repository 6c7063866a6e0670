package httpapi_test

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
	"github.com/pricewatch/pricewatch/store"
)

// editableEnv serves a copy of the fixtures that the test can edit.
func editableEnv(t *testing.T) (*harness, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, fixtures.FS()); err != nil {
		t.Fatal(err)
	}
	env := pipelinetest.New(t, fixtures.Handler(os.DirFS(dir)), nil)
	t.Cleanup(httpapi.SetNow(env.Now))
	return newHarnessOn(t, env), dir
}

func editFixture(t *testing.T, dir, file, old, new string) {
	t.Helper()
	path := filepath.Join(dir, file)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(b, []byte(old)) != 1 {
		t.Fatalf("%s: %q not found once", file, old)
	}
	if err := os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

const l40sKey = "runpod/NVIDIA L40S/community/-/ondemand"

// Issue 12: after 3 scrapes with 2 price edits, /v1/history returns
// exactly the stored change points; an empty range returns [].
func TestHistory_ExactlyTheStoredChangePoints(t *testing.T) {
	h, dir := editableEnv(t)
	h.env.Round(t)
	h.env.Advance(time.Hour)
	editFixture(t, dir, "runpod/graphql.json", `"communityPrice": 0.79,`, `"communityPrice": 0.71,`)
	h.env.Round(t, "runpod")
	h.env.Advance(time.Hour)
	editFixture(t, dir, "runpod/graphql.json", `"communityPrice": 0.71,`, `"communityPrice": 0.51,`)
	h.env.Round(t, "runpod")
	h.env.Advance(time.Minute)

	rows, err := h.env.Store.History(l40sKey)
	if err != nil || len(rows) != 3 || rows[0].Event != store.Appeared || rows[2].PricePerGPUHour != 0.51 {
		t.Fatalf("history of %s: %v %+v", l40sKey, err, rows)
	}
	// The stored change times of every on-demand L40S offer; the sources
	// of the first round each ran at their own time, and their rows count
	// as of the round's end, the history's start (issue 22 item 3).
	changes, err := h.env.Store.Changes(time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	from, err := h.env.Store.HistoryFrom()
	if err != nil || from.IsZero() {
		t.Fatalf("history start %s, %v", from, err)
	}
	clamp := func(at time.Time) time.Time {
		if at.Before(from) {
			return from
		}
		return at
	}
	var want []time.Time
	for _, c := range changes {
		if at := clamp(c.At); c.Card == "L40S" && strings.HasSuffix(c.Key, "/ondemand") && !slices.ContainsFunc(want, at.Equal) {
			want = append(want, at)
		}
	}
	slices.SortFunc(want, time.Time.Compare)
	code, body := h.get(t, "/v1/history?card=L40S&workload=lora-7b&mode=ondemand")
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	r := decode[httpapi.HistoryResponse](t, body)
	if len(r.Points) != len(want) || len(want) < 3 {
		t.Fatalf("%d points, %d stored change times: %+v", len(r.Points), len(want), r.Points)
	}
	at := map[time.Time]httpapi.HistoryPoint{}
	for i, p := range r.Points {
		if !p.At.Equal(want[i]) {
			t.Errorf("point %d at %s, the stored change at %s", i, p.At, want[i])
		}
		if p.CostPerMillionTokens == nil || p.PricePerGPUHour == nil || p.Offers == 0 {
			t.Errorf("point %d: %+v", i, p)
		}
		at[p.At] = p
	}
	for _, row := range rows {
		if _, ok := at[clamp(row.At)]; !ok {
			t.Errorf("no point at the edit of %s", row.At)
		}
	}
	if !r.Points[len(r.Points)-1].At.Equal(rows[2].At) || !r.Points[len(r.Points)-2].At.Equal(rows[1].At) {
		t.Errorf("the two edits are not the last two points")
	}
	last := r.Points[len(r.Points)-1]
	if *last.PricePerGPUHour != 0.51 || last.PriceKey != l40sKey || last.Key != l40sKey {
		t.Errorf("last point %+v: want the edited offer at 0.51", last)
	}
	if prev := r.Points[len(r.Points)-2]; *last.CostPerMillionTokens >= *prev.CostPerMillionTokens || *last.PricePerGPUHour >= *prev.PricePerGPUHour {
		t.Errorf("the cost does not fall with the price: %v → %v", *prev.CostPerMillionTokens, *last.CostPerMillionTokens)
	}
	// The last point is what /v1/best says now (the same cost model).
	_, body = h.get(t, "/v1/best?card=L40S&workload=lora-7b&mode=ondemand")
	best := decode[httpapi.BestResponse](t, body).Cards
	if len(best) != 1 || best[0].Key != l40sKey || math.Abs(best[0].CostPerMillionTokens-*last.CostPerMillionTokens) > 1e-12 {
		t.Errorf("best %+v, history's last cost %v", best, *last.CostPerMillionTokens)
	}
	// CNY: the same points at the rate.
	_, body = h.get(t, "/v1/history?card=L40S&workload=lora-7b&mode=ondemand&currency=CNY")
	cny := decode[httpapi.HistoryResponse](t, body)
	if len(cny.Points) != len(want) || *cny.Points[len(want)-1].PricePerGPUHour < 3*0.51 {
		t.Errorf("CNY points %+v", cny.Points)
	}
	// An empty range: between the scrapes, nothing changed.
	q := url.Values{"card": {"L40S"}, "workload": {"lora-7b"},
		"since": {rows[0].At.Add(time.Minute).Format(time.RFC3339)}, "until": {rows[1].At.Add(-time.Minute).Format(time.RFC3339)}}
	code, body = h.get(t, "/v1/history?"+q.Encode())
	if code != http.StatusOK || !bytes.Contains(body, []byte(`"points":[]`)) {
		t.Errorf("empty range: %d %s", code, body)
	}
	// A step folds the points of one bucket; a day holds all three.
	_, body = h.get(t, "/v1/history?card=L40S&workload=lora-7b&mode=ondemand&step=1d&since=2d")
	if n := len(decode[httpapi.HistoryResponse](t, body).Points); n < 1 || n > 2 {
		t.Errorf("step=1d: %d points", n)
	}

	// One offer's changes.
	code, body = h.get(t, "/v1/offers/"+url.PathEscape(l40sKey)+"/history")
	oh := decode[httpapi.OfferHistoryResponse](t, body)
	if code != 200 || oh.Key != l40sKey || len(oh.Rows) != 3 || oh.Current == nil || oh.Current.PricePerGPUHour != 0.51 {
		t.Errorf("offer history: %d %+v", code, oh)
	}
	code, body = h.get(t, "/v1/offers/runpod/nosuch/-/ondemand/history")
	if code != http.StatusNotFound {
		t.Errorf("unknown offer: %d %s", code, body)
	}
	code, _ = h.get(t, "/v1/offers/"+url.PathEscape(l40sKey))
	if code != http.StatusNotFound {
		t.Errorf("an offer path without /history: %d", code)
	}
}

func TestHistory_BadRequests(t *testing.T) {
	h := newHarness(t, true)
	for _, c := range []struct{ q, want string }{
		{"workload=lora-7b", "card is required"},
		{"card=L40S", "workload is required"},
		{"card=L40S&workload=gpt-5", `unknown workload "gpt-5"`},
		{"card=RTX-9090&workload=lora-7b", `unknown card "RTX-9090"`},
		{"card=L40S&workload=lora-7b&mode=hourly", `unknown mode "hourly"`},
		{"card=L40S&workload=lora-7b&currency=JPY", `unknown currency "JPY"`},
		{"card=L40S&workload=lora-7b&source=nosuch", `unknown source "nosuch"`},
		{"card=L40S&workload=lora-7b&since=40d", "since: at most 31 days back"},
		{"card=L40S&workload=lora-7b&since=yesterday", "since must be an RFC 3339 time"},
		{"card=L40S&workload=lora-7b&since=1h&until=2h", "since must be before until"},
		{"card=L40S&workload=lora-7b&step=1w", "step must be 1h or 1d"},
		{"card=L40S&workload=lora-7b&limit=5", `unknown parameter "limit"`},
	} {
		code, body := h.get(t, "/v1/history?"+c.q)
		e := decode[map[string]string](t, body)
		if code != http.StatusBadRequest || !bytes.Contains([]byte(e["error"]), []byte(c.want)) {
			t.Errorf("%s: %d %q, want 400 with %q", c.q, code, e["error"], c.want)
		}
	}
	code, body := h.get(t, "/v1/offers/x/history?limit=0")
	if code != http.StatusBadRequest {
		t.Errorf("limit=0: %d %s", code, body)
	}
	_ = fmt.Sprint
}
