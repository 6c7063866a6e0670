package pipeline_test

import (
	"bytes"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
	"github.com/pricewatch/pricewatch/rank"
)

// metricsScraper serves env's registry through the daemon's own HTTP API
// and returns what GET /metrics answers.
func metricsScraper(t *testing.T, env *pipelinetest.Env) (scrape func() []byte, api http.Handler) {
	t.Helper()
	srv, err := httpapi.New(env.Pipeline, env.Registry, env.Registry, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return func() []byte {
		t.Helper()
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
		}
		return rec.Body.Bytes()
	}, srv
}

// families parses a /metrics answer.
func families(t *testing.T, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return fams
}

// series are a family's metrics as label maps with their gauge value.
type series struct {
	labels map[string]string
	value  float64
}

func seriesOf(fams map[string]*dto.MetricFamily, name string) []series {
	var out []series
	for _, m := range fams[name].GetMetric() {
		s := series{labels: map[string]string{}, value: m.GetGauge().GetValue()}
		for _, l := range m.GetLabel() {
			s.labels[l.GetName()] = l.GetValue()
		}
		out = append(out, s)
	}
	return out
}

// gaugeValue is the value of the family's series with exactly labels.
func gaugeValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	for _, s := range seriesOf(fams, name) {
		if maps.Equal(s.labels, labels) {
			return s.value
		}
	}
	t.Fatalf("/metrics has no %s%v", name, labels)
	return 0
}

func src(name string) map[string]string { return map[string]string{"source": name} }

// Issue 32, done means: a test quarantines a source and reads held from
// /metrics. RunPod's answer at ×10 its accepted level is quarantined (the
// gate's fixtures): pricewatch_source_held turns 1, pricewatch_source_up 0
// (up means fetched and applied), pricewatch_source_state says
// quarantined, and the last success stays behind the last attempt; Vast,
// run beside it, stays up. A good answer afterwards brings it back.
func TestMetrics_QuarantinedSourceReadsHeld(t *testing.T) {
	dir := fixtureDir(t)
	fs := &faultSource{dir: dir, good: fixtures.Handler(os.DirFS(dir))}
	env := pipelinetest.New(t, fs, func(c *config.Config) {
		c.Alerts.Watches = []config.Watch{{Name: "lora", Workload: "lora-7b", Modes: []string{"ondemand"}}}
		s := c.Sources["runpod"]
		s.Settings.Retries = 0
		c.Sources["runpod"] = s
	})
	scrape, _ := metricsScraper(t, env)
	names := []string{"runpod", "vast", "ecb"}
	states := func(fams map[string]*dto.MetricFamily, source string) []string {
		var on []string
		for _, s := range seriesOf(fams, "pricewatch_source_state") {
			if s.labels["source"] == source && s.value == 1 {
				on = append(on, s.labels["state"])
			}
		}
		return on
	}

	// Before any run every enabled source is pending: not up, not held.
	fams := families(t, scrape())
	if up, held := gaugeValue(t, fams, "pricewatch_source_up", src("runpod")), gaugeValue(t, fams, "pricewatch_source_held", src("runpod")); up != 0 || held != 0 {
		t.Errorf("before a run: up %v held %v, want 0 0", up, held)
	}
	if got := states(fams, "runpod"); !slices.Equal(got, []string{"pending"}) {
		t.Errorf("before a run: states %v, want [pending]", got)
	}

	for range 2 {
		env.Round(t, names...) // baseline, confirmed
		env.Advance(10 * time.Minute)
	}
	fams = families(t, scrape())
	for _, name := range names {
		if up, held := gaugeValue(t, fams, "pricewatch_source_up", src(name)), gaugeValue(t, fams, "pricewatch_source_held", src(name)); up != 1 || held != 0 {
			t.Errorf("%s after good runs: up %v held %v, want 1 0", name, up, held)
		}
		if got := states(fams, name); !slices.Equal(got, []string{"ok"}) {
			t.Errorf("%s after good runs: states %v, want [ok]", name, got)
		}
	}
	goodSuccess := gaugeValue(t, fams, "pricewatch_source_last_success_timestamp_seconds", src("runpod"))
	if goodSuccess <= 0 || goodSuccess != gaugeValue(t, fams, "pricewatch_source_last_attempt_timestamp_seconds", src("runpod")) {
		t.Errorf("runpod after good runs: last success %v, last attempt %v", goodSuccess,
			gaugeValue(t, fams, "pricewatch_source_last_attempt_timestamp_seconds", src("runpod")))
	}
	offers := gaugeValue(t, fams, "pricewatch_source_offers", src("runpod"))
	if offers == 0 {
		t.Error("runpod: no offers")
	}
	staleAfter := env.Config.Sources["runpod"].Settings.StaleAfter
	if got := gaugeValue(t, fams, "pricewatch_source_stale_after_seconds", src("runpod")); got != staleAfter.Seconds() || got == 0 {
		t.Errorf("runpod stale_after %v s, want %v", got, staleAfter.Seconds())
	}

	// ×10: quarantined.
	fs.set("x10")
	sum := runpodOf(env.Round(t, names...))
	if sum.Err != nil || sum.Held != pricewatch.RunQuarantined {
		t.Fatalf("runpod ×10: held %q (%s), err %v; want quarantined", sum.Held, sum.Reason, sum.Err)
	}
	fams = families(t, scrape())
	if held := gaugeValue(t, fams, "pricewatch_source_held", src("runpod")); held != 1 {
		t.Errorf("runpod quarantined: pricewatch_source_held %v, want 1", held)
	}
	if up := gaugeValue(t, fams, "pricewatch_source_up", src("runpod")); up != 0 {
		t.Errorf("runpod quarantined: pricewatch_source_up %v, want 0 (fetched, not applied)", up)
	}
	if got := states(fams, "runpod"); !slices.Equal(got, []string{"quarantined"}) {
		t.Errorf("runpod quarantined: states %v, want [quarantined]", got)
	}
	if got := gaugeValue(t, fams, "pricewatch_source_state", map[string]string{"source": "runpod", "state": "ok"}); got != 0 {
		t.Errorf("runpod quarantined: state ok = %v", got)
	}
	if s, a := gaugeValue(t, fams, "pricewatch_source_last_success_timestamp_seconds", src("runpod")),
		gaugeValue(t, fams, "pricewatch_source_last_attempt_timestamp_seconds", src("runpod")); s != goodSuccess || a <= s {
		t.Errorf("runpod quarantined: last success %v (want %v, unchanged), last attempt %v (want later)", s, goodSuccess, a)
	}
	if got := gaugeValue(t, fams, "pricewatch_source_offers", src("runpod")); got != offers {
		t.Errorf("runpod quarantined: offers %v, want the last applied run's %v", got, offers)
	}
	if up, held := gaugeValue(t, fams, "pricewatch_source_up", src("vast")), gaugeValue(t, fams, "pricewatch_source_held", src("vast")); up != 1 || held != 0 {
		t.Errorf("vast beside quarantined runpod: up %v held %v, want 1 0", up, held)
	}

	// The good answer is applied again: up, not held.
	env.Advance(10 * time.Minute)
	fs.set("")
	if sum := runpodOf(env.Round(t, names...)); sum.Err != nil || sum.Held != "" {
		t.Fatalf("runpod good again: held %q (%s), err %v", sum.Held, sum.Reason, sum.Err)
	}
	fams = families(t, scrape())
	if up, held := gaugeValue(t, fams, "pricewatch_source_up", src("runpod")), gaugeValue(t, fams, "pricewatch_source_held", src("runpod")); up != 1 || held != 0 {
		t.Errorf("runpod good again: up %v held %v, want 1 0", up, held)
	}
	if got := states(fams, "runpod"); !slices.Equal(got, []string{"ok"}) {
		t.Errorf("runpod good again: states %v, want [ok]", got)
	}
}

// A failed run reads failing (not held); a source left without an applied
// run past its stale_after reads stale.
func TestMetrics_FailingAndStaleStates(t *testing.T) {
	dir := fixtureDir(t)
	fs := &faultSource{dir: dir, good: fixtures.Handler(os.DirFS(dir))}
	env := pipelinetest.New(t, fs, func(c *config.Config) {
		s := c.Sources["runpod"]
		s.Settings.Retries = 0
		c.Sources["runpod"] = s
	})
	scrape, _ := metricsScraper(t, env)
	names := []string{"runpod", "ecb"}
	env.Round(t, names...)
	fs.set("500")
	env.Advance(time.Minute)
	if sum := runpodOf(env.Round(t, names...)); sum.Err == nil {
		t.Fatal("runpod 500: the run did not fail")
	}
	fams := families(t, scrape())
	if up, held := gaugeValue(t, fams, "pricewatch_source_up", src("runpod")), gaugeValue(t, fams, "pricewatch_source_held", src("runpod")); up != 0 || held != 0 {
		t.Errorf("runpod failing: up %v held %v, want 0 0", up, held)
	}
	if got := gaugeValue(t, fams, "pricewatch_source_state", map[string]string{"source": "runpod", "state": "failing"}); got != 1 {
		t.Errorf("runpod failing: state failing = %v", got)
	}
	if got := gaugeValue(t, fams, "pricewatch_source_consecutive_failures", src("runpod")); got != 1 {
		t.Errorf("runpod failing: consecutive failures %v, want 1", got)
	}
	// ecb's offers age past its stale_after without a run: stale as of the
	// scrape (no refresh needed).
	env.Advance(env.Config.Sources["ecb"].Settings.StaleAfter + time.Minute)
	fams = families(t, scrape())
	if got := gaugeValue(t, fams, "pricewatch_source_state", map[string]string{"source": "ecb", "state": "stale"}); got != 1 {
		t.Errorf("ecb past stale_after: state stale = %v", got)
	}
}

// The best gauges cover the watched workloads only, in the watched modes,
// with the cards the watches name (every card of the ranking for a watch
// without one), at the ranking's own figures in the base currency;
// sources turned off take their own series with them, and the cards only
// they offered.
func TestMetrics_BestPerWatchedWorkloadCardMode(t *testing.T) {
	env := pipelinetest.New(t, nil, func(c *config.Config) {
		c.Alerts.Watches = []config.Watch{
			{Name: "lora", Workload: "lora-7b", Modes: []string{"ondemand"}},
			{Name: "serve-h100", Workload: "serve-7b", Card: "H100-80GB-SXM", Modes: []string{"spot", "ondemand"}},
		}
	})
	scrape, _ := metricsScraper(t, env)
	env.Round(t)
	snap := env.Pipeline.View().Snapshot

	type key struct{ workload, card, mode string }
	want := func(snap *rank.Snapshot) map[key][2]float64 {
		out := map[key][2]float64{}
		for _, e := range snap.Best("lora-7b", rank.Filter{Modes: []pricewatch.Mode{pricewatch.ModeOnDemand}}) {
			out[key{"lora-7b", e.Card, "ondemand"}] = [2]float64{e.CostPerMillionTokens, e.PricePerGPUHour}
		}
		for _, m := range []pricewatch.Mode{pricewatch.ModeSpot, pricewatch.ModeOnDemand} {
			for _, e := range snap.Best("serve-7b", rank.Filter{Modes: []pricewatch.Mode{m}, Card: "H100-80GB-SXM"}) {
				out[key{"serve-7b", e.Card, string(m)}] = [2]float64{e.CostPerMillionTokens, e.PricePerGPUHour}
			}
		}
		return out
	}
	got := func(fams map[string]*dto.MetricFamily) map[key][2]float64 {
		out := map[key][2]float64{}
		for i, name := range []string{"pricewatch_best_cost_per_million_tokens", "pricewatch_best_price_per_gpu_hour"} {
			for _, s := range seriesOf(fams, name) {
				if s.labels["currency"] != snap.Base || len(s.labels) != 4 {
					t.Errorf("%s%v: want labels workload, card, mode and currency %s", name, s.labels, snap.Base)
				}
				k := key{s.labels["workload"], s.labels["card"], s.labels["mode"]}
				v := out[k]
				v[i] = s.value
				out[k] = v
			}
		}
		return out
	}
	w, g := want(snap), got(families(t, scrape()))
	if len(w) < 10 {
		t.Fatalf("only %d watched cards ranked: %v", len(w), w)
	}
	if !maps.Equal(w, g) {
		t.Errorf("best gauges:\n got %v\nwant %v", g, w)
	}
	if _, ok := g[key{"serve-7b", "H100-80GB-SXM", "spot"}]; !ok {
		t.Errorf("no serve-7b H100 spot series: %v", g)
	}

	// Every source but Vast (and the rates) off: their series go, and so
	// do the cards only they offered.
	before := len(g)
	var off []string
	for _, name := range env.Pipeline.Enabled() {
		if name == "vast" || name == "ecb" {
			continue
		}
		s := env.Config.Sources[name]
		s.Settings.Enabled = false
		env.Config.Sources[name] = s
		off = append(off, name)
	}
	if err := env.Pipeline.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	fams := families(t, scrape())
	w, g = want(env.Pipeline.View().Snapshot), got(fams)
	if !maps.Equal(w, g) {
		t.Errorf("best gauges with Vast alone:\n got %v\nwant %v", g, w)
	}
	if len(g) == 0 || len(g) >= before {
		t.Errorf("%d best series with every source, %d with Vast alone: want fewer, not none", before, len(g))
	}
	t.Logf("%d best series with every source, %d with Vast alone", before, len(g))
	for _, name := range []string{"pricewatch_source_up", "pricewatch_source_state", "pricewatch_source_offers"} {
		for _, s := range seriesOf(fams, name) {
			if slices.Contains(off, s.labels["source"]) {
				t.Errorf("%s%v still exported for a source turned off", name, s.labels)
			}
		}
	}
}

// The outbox gauges: messages Slack refuses stay pending, and the oldest
// one's age grows with the clock; delivered, they are gone.
func TestMetrics_OutboxPendingAndOldestAge(t *testing.T) {
	env := pipelinetest.New(t, nil, nil)
	scrape, _ := metricsScraper(t, env)
	fams := families(t, scrape())
	none := map[string]string{}
	if p, a := gaugeValue(t, fams, "pricewatch_outbox_pending_messages", none), gaugeValue(t, fams, "pricewatch_outbox_oldest_pending_age_seconds", none); p != 0 || a != 0 {
		t.Errorf("empty outbox: pending %v, oldest age %v", p, a)
	}
	env.Notifier.SetFail(true)
	for _, text := range []string{"first", "second"} {
		if err := env.Pipeline.Enqueue("digest", alerts.Message{Text: text}); err != nil {
			t.Fatal(err)
		}
		env.Advance(5 * time.Minute)
	}
	if err := env.Pipeline.Deliver(t.Context()); err != nil {
		t.Logf("deliver while Slack refuses: %v", err)
	}
	env.Advance(15 * time.Minute)
	fams = families(t, scrape())
	if p := gaugeValue(t, fams, "pricewatch_outbox_pending_messages", none); p != 2 {
		t.Errorf("pending %v, want 2", p)
	}
	// The first message was enqueued 25 minutes ago by the clock (plus the
	// test's own run time).
	if a := gaugeValue(t, fams, "pricewatch_outbox_oldest_pending_age_seconds", none); a < 25*60 || a > 26*60 {
		t.Errorf("oldest pending age %v s, want about 1500", a)
	}
	env.Notifier.SetFail(false)
	env.Advance(time.Hour) // past any retry back-off
	for range 3 {
		if err := env.Pipeline.Deliver(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	fams = families(t, scrape())
	if p, a := gaugeValue(t, fams, "pricewatch_outbox_pending_messages", none), gaugeValue(t, fams, "pricewatch_outbox_oldest_pending_age_seconds", none); p != 0 || a != 0 {
		t.Errorf("after delivery: pending %v, oldest age %v; want 0 0 (%d delivered)", p, a, env.Notifier.Count())
	}
}
