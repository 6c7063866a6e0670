package pipeline_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// fixtureDir copies the embedded fixtures to a folder a test may edit.
func fixtureDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, fixtures.FS()); err != nil {
		t.Fatal(err)
	}
	return dir
}

func edit(t *testing.T, file, old, new string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(b, []byte(old)) != 1 {
		t.Fatalf("%s: %q must occur exactly once", file, old)
	}
	if err := os.WriteFile(file, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// L40S community on-demand at 0.79 becomes the cheapest lora-7b option at 0.05.
const (
	l40sPrice    = `"communityPrice": 0.79,`
	l40sCheap    = `"communityPrice": 0.05,`
	l40sOnDemand = "runpod/NVIDIA L40S/community/-/ondemand"
)

func oneWatch(c *config.Config) {
	c.Alerts.Watches = []config.Watch{{Name: "lora", Workload: "lora-7b", Modes: []string{"ondemand"}}}
	// These tests cut one price by 94% to exercise the alert rules; the
	// ingest gate would hold such an outlier back for confirmation first
	// (tested on its own in gate_test.go), so it confirms at once here.
	c.Ingest.ConfirmRuns = 1
}

// oneWatchPostingWorse also posts when the best gets worse.
func oneWatchPostingWorse(c *config.Config) {
	oneWatch(c)
	worse := "post"
	c.Alerts.Watches[0].Worse = &worse
}

func TestPipeline_FixtureRound(t *testing.T) {
	env := pipelinetest.New(t, nil, nil)
	for _, s := range env.Round(t) {
		if s.Err != nil {
			t.Errorf("%s: %v", s.Source, s.Err)
		}
	}
	v := env.Pipeline.View()
	if v == nil || v.Snapshot.OfferCount() == 0 {
		t.Fatal("no offers in the view")
	}
	for _, w := range []string{"lora-7b", "qlora-7b", "full-ft-7b", "serve-7b"} {
		if len(v.Snapshot.Best(w, rank.Filter{})) == 0 {
			t.Errorf("%s: empty ranking", w)
		}
	}
	if v.Snapshot.Rates == nil || v.Snapshot.Rates.Rates["CNY"] != 6.8095 {
		t.Errorf("rates = %+v", v.Snapshot.Rates)
	}
	n, _ := env.Store.HistoryCount()
	// An unchanged re-scrape writes no history and posts nothing.
	for _, s := range env.Round(t) {
		if s.Err != nil || s.Changes != 0 {
			t.Errorf("second round %s: changes %d err %v", s.Source, s.Changes, s.Err)
		}
	}
	if m, _ := env.Store.HistoryCount(); m != n {
		t.Errorf("history grew from %d to %d on an unchanged re-scrape", n, m)
	}
	if env.Notifier.Count() != 0 {
		t.Errorf("baseline rounds posted %d messages", env.Notifier.Count())
	}
}

func TestPipeline_NewBestAlertsOnce(t *testing.T) {
	dir := fixtureDir(t)
	env := pipelinetest.New(t, fixtures.Handler(os.DirFS(dir)), oneWatch)
	env.Round(t)
	if env.Notifier.Count() != 0 {
		t.Fatal("the baseline must be silent")
	}
	edit(t, filepath.Join(dir, "runpod", "graphql.json"), l40sPrice, l40sCheap)
	// An 85% drop against the 7-day median is unusual: three wins, not two.
	env.Round(t)
	env.Round(t)
	if env.Notifier.Count() != 0 {
		t.Fatal("an unusual drop must win three evaluations before it is posted")
	}
	env.Round(t)
	if env.Notifier.Count() != 1 {
		t.Fatalf("posts after the price cut = %d, want 1", env.Notifier.Count())
	}
	if msg := env.Notifier.Messages[0].Text; !strings.Contains(msg, "L40S") || !strings.Contains(msg, "runpod") || !strings.Contains(msg, "unusual") {
		t.Errorf("message does not name the new best as unusual: %q", msg)
	}
	env.Round(t)
	if env.Notifier.Count() != 1 {
		t.Errorf("an unchanged round posted again: %d", env.Notifier.Count())
	}
}

func TestPipeline_FailedPostIsDeliveredLater(t *testing.T) {
	dir := fixtureDir(t)
	env := pipelinetest.New(t, fixtures.Handler(os.DirFS(dir)), oneWatch)
	env.Round(t)
	edit(t, filepath.Join(dir, "runpod", "graphql.json"), l40sPrice, l40sCheap)
	env.Notifier.SetFail(true)
	env.Round(t)
	env.Round(t)
	env.Round(t)
	if env.Notifier.Count() != 0 {
		t.Fatal("a failing Slack delivered a message")
	}
	env.Notifier.SetFail(false)
	env.Advance(time.Minute) // past the retry backoff
	env.Round(t)
	if env.Notifier.Count() != 1 {
		t.Fatalf("posts after Slack recovered = %d, want 1", env.Notifier.Count())
	}
	env.Advance(time.Hour)
	env.Round(t)
	if env.Notifier.Count() != 1 {
		t.Errorf("posted again after delivery: %d", env.Notifier.Count())
	}
}

func TestPipeline_VanishedBestAlerts(t *testing.T) {
	dir := fixtureDir(t)
	env := pipelinetest.New(t, fixtures.Handler(os.DirFS(dir)), oneWatchPostingWorse)
	file := filepath.Join(dir, "runpod", "graphql.json")
	edit(t, file, l40sPrice, l40sCheap)
	env.Round(t) // baseline: the cheap L40S
	edit(t, file, l40sCheap, `"communityPrice": 0,`)
	env.Round(t)
	env.Round(t)
	if env.Notifier.Count() != 1 || !strings.Contains(env.Notifier.Messages[0].Text, "vanished") {
		t.Fatalf("want one vanished post, got %d %v", env.Notifier.Count(), env.Notifier.Messages)
	}
}

// badHandler serves the fixtures, except that the named source's path
// misbehaves while bad is set.
func badHandler(source, mode string, bad *atomic.Bool) http.Handler {
	good := fixtures.Handler(fixtures.FS())
	// Every route of the source misbehaves (a source may never request its
	// first route, e.g. a catalog base folder).
	paths := map[string]bool{}
	routes, _ := fixtures.Routes(fixtures.FS())
	for _, rt := range routes {
		if rt.Source == source {
			paths[fixtures.Base("", source)+rt.Path] = true
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !bad.Load() || !paths[r.URL.Path] {
			good.ServeHTTP(w, r)
			return
		}
		switch mode {
		case "500":
			http.Error(w, "upstream exploded", http.StatusInternalServerError)
		case "429":
			w.Header().Set("Retry-After", "120")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		case "timeout":
			// Read the body first: the server notices a client that gave
			// up only once the request is read (POST sources too).
			io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		case "truncated":
			rec := &capture{header: http.Header{}}
			good.ServeHTTP(rec, r)
			w.Header().Set("Content-Type", rec.header.Get("Content-Type"))
			w.Write(rec.body.Bytes()[:rec.body.Len()/2])
		case "html":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<!doctype html><html><head><title>Just a moment...</title></head><body>Checking your browser</body></html>"))
		case "garbage":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("\x00\x01garbage{{{"))
		case "empty", "layout":
			rec := &capture{header: http.Header{}}
			good.ServeHTTP(rec, r)
			ct := rec.header.Get("Content-Type")
			w.Header().Set("Content-Type", ct)
			if mode == "empty" {
				w.Write(emptyBody(ct))
			} else {
				w.Write(relayout(rec.body.Bytes()))
			}
		}
	})
}

// emptyBody is a well-formed answer with nothing in it.
func emptyBody(contentType string) []byte {
	switch {
	case strings.Contains(contentType, "json"):
		return []byte(`{}`)
	case strings.Contains(contentType, "html"):
		return []byte(`<!doctype html><html><body><p>No offers.</p></body></html>`)
	case strings.Contains(contentType, "xml"):
		return []byte(`<?xml version="1.0"?><root/>`)
	}
	return nil
}

var (
	jsonKey  = regexp.MustCompile(`"([A-Za-z_][A-Za-z0-9_]*)"\s*:`)
	markupID = regexp.MustCompile(`(data-[a-z]+|<Cube|</Cube)`)
)

// relayout renames every JSON key, markup attribute and CSV header field,
// as a redesign of the source would: the body stays well-formed.
func relayout(b []byte) []byte {
	b = jsonKey.ReplaceAll(b, []byte(`"renamed_$1":`))
	b = markupID.ReplaceAllFunc(b, func(m []byte) []byte {
		tag := bytes.TrimLeft(m, "</")
		return append(append(m[:len(m)-len(tag):len(m)-len(tag)], 'x'), tag...)
	})
	if i := bytes.IndexByte(b, '\n'); i > 0 && bytes.Count(b[:i], []byte(",")) > 2 && !bytes.ContainsAny(b[:i], "{<") {
		b = append(bytes.ReplaceAll(bytes.ToUpper(b[:i]), []byte(","), []byte(";")), b[i:]...) // a CSV header
	}
	return b
}

type capture struct {
	header http.Header
	body   bytes.Buffer
}

func (c *capture) Header() http.Header         { return c.header }
func (c *capture) Write(b []byte) (int, error) { return c.body.Write(b) }
func (c *capture) WriteHeader(int)             {}

// transportFaultSources are the sources the transport faults (5xx, 429, a
// timeout) are played against: the collector that meets them is shared,
// so one source of each way of fetching covers them (a JSON GET, a JSON
// POST, a GraphQL POST, an HTML page, a streamed bulk file, an XML feed,
// a paged list, a token source). The answer faults, which each parser
// meets on its own, are played against every source.
var transportFaultSources = []string{"cloudrift", "vast", "runpod", "lambda", "aws", "ecb", "primeintellect", "openrouter"}

func TestPipeline_BadSourceIsIsolated(t *testing.T) {
	modes := []struct {
		mode, wantErr string
		transport     bool
	}{
		{"500", "HTTP 500", true},
		{"429", "HTTP 429", true},
		{"timeout", "timed out", true},
		{"truncated", "", false},
		{"html", "", false},
		{"garbage", "", false},
		{"empty", "", false},
		{"layout", "", false},
	}
	for _, source := range fixtures.Sources() {
		for _, m := range modes {
			if m.transport && !slices.Contains(transportFaultSources, source) {
				continue
			}
			t.Run(source+"/"+m.mode, func(t *testing.T) {
				t.Parallel()
				var bad atomic.Bool
				env := pipelinetest.New(t, badHandler(source, m.mode, &bad), nil)
				// The source under test, a canary that must stay healthy,
				// and the rates every conversion needs.
				canary := "runpod"
				if source == canary {
					canary = "vast"
				}
				names := []string{source, canary}
				if source != "ecb" {
					names = append(names, "ecb")
				}
				env.Round(t, names...)
				before, _ := env.Store.Offers()
				rates, _ := env.Store.Rates()
				best := env.Pipeline.View().Snapshot.Best("lora-7b", rank.Filter{})

				// The bad round: one retry (retries are tested in scrapers),
				// and a short timeout only where the answer is to time out:
				// a loaded machine (CI runs -race -parallel 8) can take longer
				// than that to answer a 500, which must be told as a 500.
				s := env.Config.Sources[source]
				s.Settings.Retries = 1
				if m.mode == "timeout" {
					s.Settings.Timeout = 300 * time.Millisecond
				}
				env.Config.Sources[source] = s
				bad.Store(true)
				for _, s := range env.Round(t, names...) {
					switch {
					case s.Source == source && s.Err == nil:
						t.Errorf("%s: a %s answer did not fail the run", source, m.mode)
					case s.Source == source && (!strings.Contains(s.Err.Error(), m.wantErr) || !strings.HasPrefix(s.Err.Error(), source+":")):
						t.Errorf("%s: error %q does not name the cause %q", source, s.Err, m.wantErr)
					case s.Source != source && s.Err != nil:
						t.Errorf("%s failed because %s misbehaved: %v", s.Source, source, s.Err)
					}
				}
				h := env.Pipeline.View().Health[source]
				if h.LastOK || h.ConsecutiveFailures != 1 || h.LastError == "" {
					t.Errorf("health = %+v", h)
				}
				after, _ := env.Store.Offers()
				if len(after) != len(before) {
					t.Errorf("offers %d → %d: the failing source lost its last good offers", len(before), len(after))
				}
				if r, _ := env.Store.Rates(); r == nil || rates == nil || r.Date != rates.Date {
					t.Errorf("rates lost: %+v", r)
				}
				if now := env.Pipeline.View().Snapshot.Best("lora-7b", rank.Filter{}); len(now) != len(best) || now[0].Key != best[0].Key {
					t.Error("the ranking changed although only a failing source's answer did")
				}
				if env.Notifier.Count() != 0 {
					t.Errorf("a failing source caused %d alerts", env.Notifier.Count())
				}
			})
		}
	}
}

func TestPipeline_LayoutChangeIsAFailure(t *testing.T) {
	dir := fixtureDir(t)
	env := pipelinetest.New(t, fixtures.Handler(os.DirFS(dir)), nil)
	env.Round(t)
	// Keep only two GPU types: valid JSON, far fewer offers than last time.
	small := `{"data":{"gpuTypes":[
	 {"id":"NVIDIA L40S","memoryInGb":48,"maxGpuCount":8,"secureCloud":true,"communityCloud":true,"securePrice":0.86,"communityPrice":0.79},
	 {"id":"NVIDIA A40","memoryInGb":48,"maxGpuCount":8,"secureCloud":true,"communityCloud":false,"securePrice":0.4}]}}`
	if err := os.WriteFile(filepath.Join(dir, "runpod", "graphql.json"), []byte(small), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, s := range env.Round(t) {
		if s.Source == "runpod" && (s.Err == nil || !strings.Contains(s.Err.Error(), "layout change")) {
			t.Errorf("runpod: err = %v, want a layout-change failure", s.Err)
		}
	}
	offers, _ := env.Store.Offers()
	n := 0
	for _, o := range offers {
		if o.Source == "runpod" {
			n++
		}
	}
	if n != 149 {
		t.Errorf("runpod offers kept = %d, want the last good 149", n)
	}
}

func TestPipeline_StaleOffersLeaveRanking(t *testing.T) {
	env := pipelinetest.New(t, nil, func(c *config.Config) {
		s := c.Sources["runpod"]
		s.Settings.StaleAfter = time.Nanosecond
		c.Sources["runpod"] = s
	})
	env.Round(t)
	v := env.Pipeline.View()
	for _, w := range v.Snapshot.WorkloadNames() {
		for _, e := range v.Snapshot.Entries(w) {
			if e.Source == "runpod" {
				t.Fatalf("stale runpod offer %s ranked", e.Key)
			}
		}
		if v.Snapshot.Excluded(w)["stale"] == 0 {
			t.Errorf("%s: no offer counted as stale", w)
		}
	}
}

// A source failing three runs in a row gets one health post, and one on
// recovery; its vanished offers post nothing.
func TestPipeline_SourceHealthPosts(t *testing.T) {
	var bad atomic.Bool
	env := pipelinetest.New(t, badHandler("runpod", "500", &bad), oneWatch)
	names := []string{"runpod", "vast", "ecb", "azure", "lambda"}
	env.Round(t, names...)
	bad.Store(true)
	for range 5 {
		env.Round(t, names...)
	}
	health := 0
	for _, m := range env.Notifier.Messages {
		if strings.Contains(m.Text, "runpod has failed 3 runs") {
			health++
		}
	}
	if health != 1 || env.Notifier.Count() != 1 {
		t.Fatalf("health posts %d of %d messages, want exactly one: %v", health, env.Notifier.Count(), env.Notifier.Messages)
	}
	bad.Store(false)
	env.Round(t, names...)
	env.Round(t, names...)
	if n := env.Notifier.Count(); n != 2 || !strings.Contains(env.Notifier.Messages[1].Text, "runpod recovered") {
		t.Errorf("after recovery: %d messages, last %q", n, env.Notifier.Messages[n-1].Text)
	}
}

// More than half the sources failing pauses change posts, with one post
// saying so, and one when it ends.
func TestPipeline_DegradedPausesChangePosts(t *testing.T) {
	dir := fixtureDir(t)
	var bad atomic.Bool
	good := fixtures.Handler(os.DirFS(dir))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if bad.Load() && !strings.HasPrefix(r.URL.Path, "/runpod/") && r.URL.Path != "/robots.txt" {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		good.ServeHTTP(w, r)
	})
	env := pipelinetest.New(t, h, oneWatch)
	names := []string{"runpod", "vast", "ecb", "azure", "lambda"}
	env.Round(t, names...)
	bad.Store(true)
	edit(t, filepath.Join(dir, "runpod", "graphql.json"), l40sPrice, l40sCheap)
	for range 4 {
		env.Round(t, names...)
	}
	var degraded, changes int
	for _, m := range env.Notifier.Messages {
		switch {
		case strings.Contains(m.Text, "Data quality degraded"):
			degraded++
		case strings.Contains(m.Text, "new best"):
			changes++
		}
	}
	if degraded != 1 || changes != 0 {
		t.Fatalf("degraded posts %d, change posts %d; want 1 and 0: %v", degraded, changes, env.Notifier.Messages)
	}
	bad.Store(false)
	for range 3 {
		env.Round(t, names...)
	}
	var restored bool
	changes = 0
	for _, m := range env.Notifier.Messages {
		restored = restored || strings.Contains(m.Text, "Data quality restored")
		if strings.Contains(m.Text, "new best") {
			changes++
		}
	}
	if !restored || changes != 1 {
		t.Errorf("after recovery: restored %v, change posts %d (want the paused change posted once)", restored, changes)
	}
}

// A silenced watch posts nothing, and when the silence ends nothing
// floods out: its state advanced meanwhile.
func TestPipeline_SilenceAdvancesState(t *testing.T) {
	dir := fixtureDir(t)
	env := pipelinetest.New(t, fixtures.Handler(os.DirFS(dir)), oneWatch)
	env.Round(t)
	if _, err := env.Store.AddSilence(store.Silence{Watch: "lora", Starts: env.Now().Add(-time.Minute), Ends: env.Now().Add(time.Hour), Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	edit(t, filepath.Join(dir, "runpod", "graphql.json"), l40sPrice, l40sCheap)
	for range 4 {
		env.Round(t)
	}
	if env.Notifier.Count() != 0 {
		t.Fatalf("a silenced watch posted: %v", env.Notifier.Messages)
	}
	env.Advance(2 * time.Hour) // the silence ended
	env.Round(t)
	env.Round(t)
	if env.Notifier.Count() != 0 {
		t.Errorf("posts flooded out after the silence: %v", env.Notifier.Messages)
	}
}

// Workloads defined in config are ranked beside the built-in ones and can
// be watched.
func TestPipeline_ConfigWorkloads(t *testing.T) {
	env := pipelinetest.New(t, nil, func(c *config.Config) {
		c.Workloads = []map[string]any{
			{"name": "lora-13b", "workload": "lora-7b", "model": map[string]any{"preset": "llama-13b"}},
			{"name": "serve-8b", "model": map[string]any{"preset": "llama3-8b"}, "method": "serve", "context": 2048, "description": "chat"},
		}
		c.Alerts.Watches = []config.Watch{{Name: "big", Workload: "lora-13b", Modes: []string{"ondemand"}}}
	})
	env.Round(t)
	snap := env.Pipeline.View().Snapshot
	w, ok := snap.Workload("lora-13b")
	if !ok || w.Model.ParamsB != 13 || w.Method != "lora" || w.SeqLen != 2048 {
		t.Fatalf("lora-13b = %+v", w)
	}
	b13 := snap.Best("lora-13b", rank.Filter{Card: "A100-80GB-SXM"})
	b7 := snap.Best("lora-7b", rank.Filter{Card: "A100-80GB-SXM"})
	if len(b13) != 1 || len(b7) != 1 || b13[0].TokensPerSecond >= b7[0].TokensPerSecond {
		t.Errorf("a 13B model must train slower than a 7B one: %v vs %v", b13, b7)
	}
	if s, ok := snap.Workload("serve-8b"); !ok || s.Model.KVHeads != 8 || s.Description != "chat" || len(snap.Best("serve-8b", rank.Filter{})) == 0 {
		t.Errorf("serve-8b = %+v", s)
	}
	if ws := env.Pipeline.Watches(); len(ws) != 1 || ws[0].Workload != "lora-13b" {
		t.Errorf("watches %+v", ws)
	}
	for _, c := range []struct {
		name string
		w    map[string]any
		want string
	}{
		{"UnknownField", map[string]any{"name": "x", "workload": "lora-7b", "colour": "red"}, "colour"},
		{"Duplicate", map[string]any{"name": "lora-7b", "workload": "lora-7b"}, "workloads[0].name"},
		{"BadPreset", map[string]any{"name": "x", "model": map[string]any{"preset": "gpt-5"}}, "model.preset"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Workloads = []map[string]any{c.w}
			if _, err := cfg.ResolveWorkloads(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to name %q", err, c.want)
			}
		})
	}
}
