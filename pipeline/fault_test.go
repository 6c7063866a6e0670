package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/alerts/slacktest"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
	"github.com/pricewatch/pricewatch/store"
)

// faultSource serves the fixtures from dir, with RunPod's answer replaced
// by the current fault ("" for the good answer).
type faultSource struct {
	mu    sync.Mutex
	fault string
	dir   string
	good  http.Handler
}

func (f *faultSource) set(fault string) { f.mu.Lock(); f.fault = fault; f.mu.Unlock() }

func (f *faultSource) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	fault := f.fault
	f.mu.Unlock()
	if fault == "" || !strings.HasPrefix(r.URL.Path, fixtures.Base("", "runpod")) {
		f.good.ServeHTTP(w, r)
		return
	}
	body, _ := os.ReadFile(filepath.Join(f.dir, "runpod", "graphql.json"))
	switch fault {
	case "500":
		http.Error(w, "upstream exploded", http.StatusInternalServerError)
		return
	case "429":
		w.Header().Set("Retry-After", "120")
		http.Error(w, "slow down", http.StatusTooManyRequests)
		return
	case "hang":
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
		return
	case "truncated":
		body = body[:len(body)/2]
	case "html":
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<!doctype html><title>Just a moment...</title>"))
		return
	case "empty":
		body = []byte(`{"data": {"gpuTypes": []}}`)
	case "x10", "x0.1":
		body = scaledPrices(body, map[string]float64{"x10": 10, "x0.1": 0.1}[fault])
	case "drop cards":
		body = dropCards(body, 0.15)
	default:
		var f float64
		if _, err := fmt.Sscanf(fault, "scale %g", &f); err == nil {
			body = scaledPrices(body, f)
		}
	case "zero":
		body = regexp.MustCompile(`("[a-zA-Z]*Price"): [0-9.]+`).ReplaceAll(body, []byte(`$1: 0`))
	case "renamed field":
		body = []byte(strings.ReplaceAll(string(body), `"communityPrice"`, `"communityPriceUSD"`))
	case "renamed GPUs":
		body = regexp.MustCompile(`"id": "`).ReplaceAll(body, []byte(`"id": "GPU-`))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// dropCards removes whole GPU types from a RunPod answer, first to last,
// until their priced fields reach share of all: a field rename that
// empties some cards, spread over every mode.
func dropCards(body []byte, share float64) []byte {
	var doc struct {
		Data struct {
			GPUTypes []map[string]any `json:"gpuTypes"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return body
	}
	priced := func(g map[string]any) int {
		n := 0
		for k, v := range g {
			if strings.HasSuffix(k, "Price") && v != nil && v != 0.0 {
				n++
			}
		}
		return n
	}
	total := 0
	for _, g := range doc.Data.GPUTypes {
		total += priced(g)
	}
	dropped, keep := 0, doc.Data.GPUTypes[:0]
	for i, g := range doc.Data.GPUTypes {
		// Every third type, so the loss is spread over the catalogue.
		if i%3 == 1 && float64(dropped) < share*float64(total) {
			dropped += priced(g)
			continue
		}
		keep = append(keep, g)
	}
	doc.Data.GPUTypes = keep
	out, _ := json.Marshal(doc)
	return out
}

// scaledPrices multiplies every "…Price": number of a RunPod answer.
func scaledPrices(body []byte, f float64) []byte { return pipelinetest.ScaleRunPodPrices(body, f) }

// TestFaultCampaign cycles RunPod through every kind of bad answer between
// good runs, with a real price change in the middle: every bad run stays
// with its source (the canary Vast and the rates keep working), no alert
// comes from bad data, and the real change is posted exactly once.
func TestFaultCampaign(t *testing.T) {
	dir := fixtureDir(t)
	src := &faultSource{dir: dir, good: fixtures.Handler(os.DirFS(dir))}
	env := pipelinetest.New(t, src, func(c *config.Config) {
		c.Alerts.Watches = []config.Watch{{Name: "lora", Workload: "lora-7b", Modes: []string{"ondemand"}}}
		s := c.Sources["runpod"]
		s.Settings.Timeout, s.Settings.Retries = 2*time.Second, 0
		c.Sources["runpod"] = s
	})
	names := []string{"runpod", "vast", "ecb"}
	round := func(fault string) (failed, held bool) {
		t.Helper()
		src.set(fault)
		s := env.Config.Sources["runpod"]
		s.Settings.Timeout = 2 * time.Second
		if fault == "hang" {
			s.Settings.Timeout = 300 * time.Millisecond
		}
		env.Config.Sources["runpod"] = s
		for _, sum := range env.Round(t, names...) {
			switch {
			case sum.Source == "runpod":
				failed, held = sum.Err != nil, sum.Held != ""
			case sum.Err != nil || sum.Held != "":
				t.Errorf("%s: %s broke %s: %v %s", fault, "runpod", sum.Source, sum.Err, sum.Reason)
			}
		}
		env.Advance(10 * time.Minute)
		return failed, held
	}
	for range 2 {
		round("") // baseline, confirmed
	}
	faults := []string{"500", "429", "hang", "truncated", "html", "empty", "x10", "x0.1", "zero", "renamed field", "renamed GPUs"}
	for i, fault := range faults {
		if i == len(faults)/2 {
			// A real change: L40S community 0.79 → 0.30 (×0.38, inside the
			// band) makes it the best lora-7b option (0.30e6 / (3448 × 3600) = 0.0242 per million tokens against the RTX-4090's 0.0264). Two good runs confirm
			// it (the watch's default); it is posted once.
			edit(t, filepath.Join(dir, "runpod", "graphql.json"), l40sPrice, `"communityPrice": 0.30,`)
			round("")
			round("")
			if n := env.Notifier.Count(); n != 1 {
				t.Fatalf("the real change posted %d times, want 1: %v", n, env.Notifier.Messages)
			}
		}
		before := env.Notifier.Count()
		failed, held := round(fault)
		if !failed && !held {
			t.Errorf("%s: the run was applied", fault)
		}
		for range 2 {
			round("")
		}
		// A held level that waits for an operator is said once (a source
		// post); no change post comes from bad data.
		after := env.Notifier.Messages[before:]
		if holds := countHolds(after); holds != len(after) || holds > 1 || holds == 1 != held {
			t.Errorf("%s: %d posts (%d hold posts) from bad data: %v", fault, len(after), holds, after)
		}
		if st := status(env, "runpod"); st.Status != "ok" {
			t.Errorf("after %s and two good runs: %+v", fault, st)
		}
	}
	// Issue 19: faults that last. A ×10 or ×0.1 for three runs and more, a
	// −5% per run drift down to ×0.1 and a loss of 15% of the offers in
	// whole cards are held until accepted, each said once, and none posts
	// a change; the good answer afterwards is applied.
	if n := env.Notifier.Count() - countHolds(env.Notifier.Messages); n != 1 {
		t.Errorf("%d change posts in all, want the one real change", n)
	}
	baseline := runpodPrices(t, env)
	lasting := []struct {
		name   string
		faults []string
		heldAt int // the first run held (1-based)
		why    string
	}{
		{"×10 for 5 runs", repeat("x10", 5), 1, "ondemand prices ×10 against the accepted level"},
		{"×0.1 for 5 runs", repeat("x0.1", 5), 1, "ondemand prices ×0.1 against the accepted level"},
		{"15% of the offers in whole cards", repeat("drop cards", 4), 1, "cards lost half or more of their offers"},
		// Last: its first 21 steps are plausible moves, applied (and the
		// watch posts them as a better best should).
		// 0.95^21 = 0.341 passes, 0.95^22 = 0.324 ≤ ⅓ is held, and so is
		// every step down to 0.95^45 = 0.099.
		{"−5% per run to ×0.1", drift(0.95, 45), 22, "×0.324 against the accepted level"},
	}
	for _, c := range lasting {
		before := env.Notifier.Count()
		for i, fault := range c.faults {
			src.set(fault)
			sum := runpodOf(env.Round(t, names...))
			env.Advance(10 * time.Minute)
			held := sum.Held != ""
			if want := i+1 >= c.heldAt; held != want || sum.Err != nil {
				t.Fatalf("%s: run %d (%s): held %v, want %v: %v %s", c.name, i+1, fault, held, want, sum.Err, sum.Reason)
			}
			if i+1 == c.heldAt && !strings.Contains(sum.Reason, c.why) {
				t.Errorf("%s: run %d: %s, want %q", c.name, i+1, sum.Reason, c.why)
			}
			if c.name == "15% of the offers in whole cards" && strings.Contains(sum.Reason, "mapped offers (-") {
				t.Errorf("%s: caught per mode, not per card: %s", c.name, sum.Reason)
			}
		}
		after := env.Notifier.Messages[before:]
		// One hold post; the drift's held level moves from ×0.324 to
		// ×0.0994, by more than the band (3×): announced again, with the
		// label an accept must now name (issue 31).
		wantHolds := 1
		if c.name == "−5% per run to ×0.1" {
			wantHolds = 2
		}
		if holds := countHolds(after); holds != wantHolds || (c.heldAt == 1 && len(after) != 1) {
			t.Errorf("%s: %d posts, %d of them hold posts; want %d hold post(s): %v", c.name, len(after), holds, wantHolds, after)
		}
		if c.heldAt > 1 {
			// The served prices stay at the last step applied.
			want := math.Pow(0.95, float64(c.heldAt-1))
			for k, p := range runpodPrices(t, env) {
				if base := baseline[k]; math.Abs(p/base-want) > 1e-6 {
					t.Errorf("%s: %s at ×%.4f of its price, want ×%.4f", c.name, k, p/base, want)
					break
				}
			}
			break // the watch has rightly posted the applied steps
		}
		round("") // the good answer is applied: the anchor never moved
		if st := status(env, "runpod"); st.Status != "ok" {
			t.Errorf("%s: after the good answer: %+v", c.name, st)
		}
	}
	_ = pricewatch.RunQuarantined
}

func repeat(fault string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fault
	}
	return out
}

// drift is n faults scaling every price by f, f², … fⁿ.
func drift(f float64, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("scale %g", math.Pow(f, float64(i+1)))
	}
	return out
}

func runpodOf(sums []pipeline.Summary) pipeline.Summary {
	for _, s := range sums {
		if s.Source == "runpod" {
			return s
		}
	}
	return pipeline.Summary{}
}

// countHolds counts the "source is held" posts among ms.
func countHolds(ms []alerts.Message) int {
	n := 0
	for _, m := range ms {
		if strings.HasPrefix(m.Text, "Source ") && strings.Contains(m.Text, " is held: ") {
			n++
		}
	}
	return n
}

func fmtSscan(s string, p *float64) (int, error) { return fmt.Sscan(s, p) }

func jsonFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// killCampaign sizes the campaign: kills, the fake Slack's answer time
// and the messages; PRICEWATCH_KILLS and PRICEWATCH_SLACK_DELAY (a Go
// duration) set the first two for a longer run, such as issue 19's 200
// kills with 0.5 s answers.
func killCampaign(t *testing.T) (kills int, delay time.Duration) {
	kills, delay = 60, 40*time.Millisecond
	if v := os.Getenv("PRICEWATCH_KILLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("PRICEWATCH_KILLS: %v", err)
		}
		kills = n
	}
	if v := os.Getenv("PRICEWATCH_SLACK_DELAY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("PRICEWATCH_SLACK_DELAY: %v", err)
		}
		delay = d
	}
	return kills, delay
}

// Issue 19 item 11, the fault campaign's crash case: the daemon's sender
// posts to a slow Slack (bot token, through the real slack-go client) and
// is killed again and again at random instants — the store closed and
// the sender's context cancelled, so nothing more is recorded, while Slack
// still completes a post it has received. Each restart opens the file
// again with a new pipeline and notifier and queues a message or two.
// Every message must be in the channel exactly once, and the campaign must
// have hit the window the fix is for (a post accepted, its answer never
// recorded: "found" deliveries). Before the fix, issue 19 measured 84
// posts for 66 messages (200 kills, 0.5 s answers).
func TestFaultCampaign_KilledSenderSlowSlack(t *testing.T) {
	kills, delay := killCampaign(t)
	fake := &slacktest.Server{Delay: delay}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	cfg := config.Default()
	cfg.DB = filepath.Join(t.TempDir(), "pricewatch.db")
	rng := rand.New(rand.NewPCG(19, 11))
	queued, found := 0, 0.0
	// start is one process life: open, queue, run the sender.
	start := func(enqueue int) (*store.Store, context.CancelFunc, chan struct{}, *prometheus.Registry) {
		st, err := store.Open(cfg.DB, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		p, err := pipeline.New(cfg, st, pipeline.Options{
			Notifier: alerts.NewSlack(alerts.SlackConfig{Token: "xoxb-test", Channel: "#" + slacktest.ChannelName, APIURL: srv.URL}),
			Logger:   slog.New(slog.DiscardHandler), Registry: reg, Getenv: func(string) string { return "" },
			// Longer than any answer of the fake: a post in flight has landed.
			DeliverySettle: 3 * delay,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Init(); err != nil {
			t.Fatal(err)
		}
		for range enqueue {
			queued++
			if err := p.Enqueue("digest", alerts.Message{Text: fmt.Sprintf("message %d", queued)}); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { p.RunSender(ctx); close(done) }()
		return st, cancel, done, reg
	}
	for range kills {
		st, cancel, done, reg := start(1 + rng.IntN(2))
		time.Sleep(time.Duration(rng.Int64N(int64(6 * delay))))
		st.Close() // the kill: nothing is recorded after this instant
		cancel()
		<-done
		found += counter(t, reg, "found")
	}
	// The last life runs until the outbox is empty.
	st, cancel, done, reg := start(0)
	defer func() { cancel(); <-done; st.Close() }()
	deadline := time.Now().Add(time.Duration(queued)*4*delay + 10*time.Second)
	for {
		page, err := st.Outbox("", 1)
		if err != nil {
			t.Fatal(err)
		}
		if page.Pending == 0 {
			if page.Failed != 0 {
				t.Fatalf("%d messages failed", page.Failed)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d messages still pending", page.Pending)
		}
		time.Sleep(10 * time.Millisecond)
	}
	found += counter(t, reg, "found")
	seen := map[string]int{}
	for _, text := range fake.Texts() {
		seen[text]++
	}
	for i := 1; i <= queued; i++ {
		if n := seen[fmt.Sprintf("message %d", i)]; n != 1 {
			t.Errorf("message %d is in the channel %d times, want once", i, n)
		}
	}
	posts := len(fake.Texts())
	t.Logf("%d kills, %v answers: %d posts for %d messages; %v unanswered posts found in the channel instead of posted again",
		kills, delay, posts, queued, found)
	if posts != queued {
		t.Errorf("%d posts for %d messages", posts, queued)
	}
	if found == 0 {
		t.Error("no kill fell between a post Slack accepted and its record: the campaign tested nothing")
	}
}

// counter reads pricewatch_slack_deliveries_total{result}.
func counter(t *testing.T, reg *prometheus.Registry, result string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "pricewatch_slack_deliveries_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
