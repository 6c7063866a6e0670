package pipeline

import (
	"math"
	"slices"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// The pipeline's metrics (docs/metrics.md describes each with its labels;
// deploy/ has the Grafana dashboard and the alerting rules built on them).
//
// Counters and the run histogram are updated as runs and decisions happen.
// Everything that describes the current state (the best costs, the
// sources' health, the outbox) is read when /metrics is scraped, from the
// view in place and the store: a source that is no longer enabled, a card
// that left a watched workload's ranking, take their series with them, and
// ages are as of the scrape.
type metrics struct {
	runs        *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	changes     *prometheus.CounterVec
	alerts      *prometheus.CounterVec
	deliveries  *prometheus.CounterVec
	rankSeconds prometheus.Gauge
}

// Source states of pricewatch_source_state, one series per state: the
// state the source is in has the value 1, the others 0.
const (
	stateOK          = "ok"          // the last run was applied and its offers are fresh
	statePending     = "pending"     // no run yet
	stateFailing     = "failing"     // the last run failed (no answer, nothing parsed, a layout loss)
	stateStale       = "stale"       // no applied run for longer than stale_after
	stateQuarantined = "quarantined" // fetched, prices implausible: kept out of the offers
	stateSuspect     = "suspect"     // fetched, layout drifted: kept out of the offers
	stateHeld        = "held"        // fetched, kept out of the offers for another reason
)

var sourceStates = []string{stateOK, statePending, stateFailing, stateStale, stateQuarantined, stateSuspect, stateHeld}

func newMetrics(reg prometheus.Registerer, p *Pipeline) (*metrics, error) {
	m := &metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pricewatch_scrape_runs_total", Help: "Source runs by result (ok: fetched and parsed, applied or held; error: failed).",
		}, []string{"source", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "pricewatch_scrape_duration_seconds", Help: "Duration of source runs.",
			Buckets: []float64{0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300},
		}, []string{"source"}),
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pricewatch_price_changes_total", Help: "History rows written (offers appeared, changed or vanished).",
		}, []string{"source"}),
		alerts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pricewatch_alert_decisions_total", Help: "Alert decisions by kind (baseline, cheaper, unconfirmed, cooldown, silenced, …).",
		}, []string{"kind"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pricewatch_slack_deliveries_total", Help: "Outbox delivery attempts by result (sent; logged: no Slack configured; retry, failed; found: an unanswered post was found in the channel; unconfirmed: posted again unchecked).",
		}, []string{"result"}),
		rankSeconds: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pricewatch_ranking_build_seconds", Help: "Time the last ranking rebuild took.",
		}),
	}
	for _, c := range []prometheus.Collector{m.runs, m.duration, m.changes, m.alerts, m.deliveries, m.rankSeconds, newStateCollector(p)} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) observe(run pricewatch.Run, changes int) {
	result := "ok"
	if !run.OK {
		result = "error"
	}
	m.runs.WithLabelValues(run.Source, result).Inc()
	m.duration.WithLabelValues(run.Source).Observe(run.Duration.Seconds())
	m.changes.WithLabelValues(run.Source).Add(float64(changes))
}

// stateCollector reads the pipeline's current state at scrape time.
type stateCollector struct {
	p *Pipeline

	bestCost, bestPrice *prometheus.Desc

	up, held, state, lastSuccess, lastAttempt, staleAfter *prometheus.Desc
	offers, unknown, heldOffers, failures, disputed       *prometheus.Desc

	outboxPending, outboxFailed, outboxOldest *prometheus.Desc

	pageCheckAt, pageCheckProblems *prometheus.Desc
}

func newStateCollector(p *Pipeline) *stateCollector {
	src := []string{"source"}
	best := []string{"workload", "card", "mode", "currency"}
	return &stateCollector{
		p: p,
		bestCost: prometheus.NewDesc("pricewatch_best_cost_per_million_tokens",
			"Lowest cost per million tokens among the ranked offers of the card in the billing mode for the watched workload, in the base currency (label currency); offers known to be out of stock are left out.", best, nil),
		bestPrice: prometheus.NewDesc("pricewatch_best_price_per_gpu_hour",
			"Price per GPU-hour of the offer behind pricewatch_best_cost_per_million_tokens (same labels), in the base currency.", best, nil),
		up: prometheus.NewDesc("pricewatch_source_up",
			"1 if the source's last run was fetched and applied to the offers; 0 if it failed, was held back (see pricewatch_source_held) or has not run yet.", src, nil),
		held: prometheus.NewDesc("pricewatch_source_held",
			"1 while the source's last run was fetched but held back from the offers (quarantined: implausible prices; suspect: drifted layout); its last applied offers stay.", src, nil),
		state: prometheus.NewDesc("pricewatch_source_state",
			"1 for the state the source is in (ok, pending, failing, stale, quarantined, suspect, held), 0 for the others.", []string{"source", "state"}, nil),
		lastSuccess: prometheus.NewDesc("pricewatch_source_last_success_timestamp_seconds",
			"Unix time the source's last applied run started (0: none yet).", src, nil),
		lastAttempt: prometheus.NewDesc("pricewatch_source_last_attempt_timestamp_seconds",
			"Unix time the source's last run started, whatever its result (0: none yet).", src, nil),
		staleAfter: prometheus.NewDesc("pricewatch_source_stale_after_seconds",
			"The source's stale_after: its offers leave the ranking this long after its last applied run (0: never).", src, nil),
		offers: prometheus.NewDesc("pricewatch_source_offers",
			"Offers from the source's last applied run.", src, nil),
		unknown: prometheus.NewDesc("pricewatch_source_unknown_gpu_names",
			"GPU names of the source's last applied run that map to no card.", src, nil),
		heldOffers: prometheus.NewDesc("pricewatch_source_held_offers",
			"Outlier offers the price gate holds back from the source's runs (their last good version stays ranked).", src, nil),
		failures: prometheus.NewDesc("pricewatch_source_consecutive_failures",
			"Failed runs of the source in a row (0 after a run that was fetched).", src, nil),
		disputed: prometheus.NewDesc("pricewatch_source_disputed",
			"1 while the source's applied level lies beyond the band against the market that formed since it was anchored and no operator accepted it; its offers stay ranked.", src, nil),
		outboxPending: prometheus.NewDesc("pricewatch_outbox_pending_messages",
			"Slack messages in the outbox waiting to be delivered.", nil, nil),
		outboxFailed: prometheus.NewDesc("pricewatch_outbox_failed_messages",
			"Slack messages in the outbox given up on (kept until the outbox retention drops them).", nil, nil),
		outboxOldest: prometheus.NewDesc("pricewatch_outbox_oldest_pending_age_seconds",
			"Age of the oldest Slack message waiting in the outbox (0: none waiting).", nil, nil),
		pageCheckAt: prometheus.NewDesc("pricewatch_db_page_check_timestamp_seconds",
			"Unix time the last scheduled check of every page of the database file started (0: none yet since start-up).", nil, nil),
		pageCheckProblems: prometheus.NewDesc("pricewatch_db_page_check_problems",
			"Problems the last page check of the database file found (0: every page sound); the daemon's log names them and the way out.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.bestCost, c.bestPrice, c.up, c.held, c.state, c.lastSuccess, c.lastAttempt,
		c.staleAfter, c.offers, c.unknown, c.heldOffers, c.failures, c.disputed, c.outboxPending, c.outboxFailed, c.outboxOldest,
		c.pageCheckAt, c.pageCheckProblems} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	p := c.p
	now := p.now()
	v := p.View()
	var health map[string]store.Health
	if v != nil {
		health = v.Health
		if v.Snapshot != nil {
			c.collectBest(ch, v.Snapshot)
		}
	}
	for _, name := range p.Enabled() {
		c.collectSource(ch, name, health, now)
	}
	c.collectOutbox(ch, now)
	var pc store.PageCheck
	if last := p.lastPageCheck.Load(); last != nil {
		pc = *last
	}
	ch <- gauge(c.pageCheckAt, unixSeconds(pc.At))
	ch <- gauge(c.pageCheckProblems, float64(pc.Problems))
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func unixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (c *stateCollector) collectSource(ch chan<- prometheus.Metric, name string, health map[string]store.Health, now time.Time) {
	h, ran := health[name]
	staleAfter := c.p.cfg.Sources[name].Settings.StaleAfter
	st := sourceState(h, ran, staleAfter, now)
	ch <- gauge(c.up, boolValue(ran && h.LastOK && h.Hold == ""), name)
	ch <- gauge(c.held, boolValue(ran && h.LastOK && h.Hold != ""), name)
	for _, s := range sourceStates {
		ch <- gauge(c.state, boolValue(s == st), name, s)
	}
	ch <- gauge(c.lastSuccess, unixSeconds(h.LastSuccess), name)
	ch <- gauge(c.lastAttempt, unixSeconds(h.LastRun), name)
	ch <- gauge(c.staleAfter, staleAfter.Seconds(), name)
	ch <- gauge(c.offers, float64(h.Offers), name)
	ch <- gauge(c.unknown, float64(len(h.Unknown)), name)
	ch <- gauge(c.heldOffers, float64(len(h.HeldOffers)), name)
	ch <- gauge(c.failures, float64(h.ConsecutiveFailures), name)
	ch <- gauge(c.disputed, boolValue(ran && h.Disputed.Open()), name)
}

// sourceState is a source's state for pricewatch_source_state, in the
// order /v1/sources judges it: a failure, then a hold, then staleness.
func sourceState(h store.Health, ran bool, staleAfter time.Duration, now time.Time) string {
	switch {
	case !ran:
		return statePending
	case !h.LastOK:
		return stateFailing
	case h.Hold == pricewatch.RunQuarantined:
		return stateQuarantined
	case h.Hold == pricewatch.RunSuspect:
		return stateSuspect
	case h.Hold != "":
		return stateHeld
	case staleAfter > 0 && now.Sub(h.LastSuccess) > staleAfter:
		return stateStale
	default:
		return stateOK
	}
}

// watchedSet is one watched workload's modes and cards (nil cards: every
// card its ranking has).
type watchedSet struct {
	modes []pricewatch.Mode
	cards map[string]bool
}

// watched gathers the workloads the watches look at, with the union of
// their modes and cards.
func (c *stateCollector) watched() map[string]*watchedSet {
	out := map[string]*watchedSet{}
	if c.p.alerts == nil {
		return out // not built yet
	}
	for _, w := range c.p.alerts.Watches {
		name := w.Workload
		if name == "" && w.Job != nil {
			name = w.Job.Workload
		}
		if name == "" {
			continue // a plan described by its model alone: no ranking to read
		}
		ws := out[name]
		if ws == nil {
			ws = &watchedSet{cards: map[string]bool{}}
			out[name] = ws
		}
		modes := w.Modes
		if len(modes) == 0 {
			modes = pricewatch.DefaultModes()
		}
		for _, m := range modes {
			if !slices.Contains(ws.modes, m) {
				ws.modes = append(ws.modes, m)
			}
		}
		switch {
		case w.Card == "":
			ws.cards = nil // every card
		case ws.cards != nil:
			ws.cards[w.Card] = true
		}
	}
	return out
}

// collectBest exports, per watched workload, mode and card in its
// ranking, the best entry's cost per million tokens and price per
// GPU-hour. They are the ranking's per-group minimums, whatever the
// watches' regions or providers: the market the watches choose from.
func (c *stateCollector) collectBest(ch chan<- prometheus.Metric, snap *rank.Snapshot) {
	watched := c.watched()
	names := make([]string, 0, len(watched))
	for n := range watched {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, wl := range names {
		if _, ok := snap.Workload(wl); !ok {
			continue
		}
		ws := watched[wl]
		for _, mode := range ws.modes {
			for _, e := range snap.Best(wl, rank.Filter{Modes: []pricewatch.Mode{mode}}) {
				if ws.cards != nil && !ws.cards[e.Card] {
					continue
				}
				if !finitePositive(e.CostPerMillionTokens) || !finitePositive(e.PricePerGPUHour) {
					continue
				}
				ch <- gauge(c.bestCost, e.CostPerMillionTokens, wl, e.Card, string(mode), snap.Base)
				ch <- gauge(c.bestPrice, e.PricePerGPUHour, wl, e.Card, string(mode), snap.Base)
			}
		}
	}
}

func finitePositive(f float64) bool { return f > 0 && !math.IsInf(f, 0) && !math.IsNaN(f) }

// collectOutbox exports the outbox's counts and the age of its oldest
// pending message. A store that cannot be read (closing at shutdown)
// leaves them out of this scrape.
func (c *stateCollector) collectOutbox(ch chan<- prometheus.Metric, now time.Time) {
	page, err := c.p.store.Outbox(store.Pending, 1)
	if err != nil {
		c.p.log.Debug("metrics: read outbox", "err", err)
		return
	}
	age := 0.0
	if page.Pending > 0 {
		m, err := c.p.store.NextPending()
		if err != nil {
			c.p.log.Debug("metrics: read oldest pending message", "err", err)
			return
		}
		if m != nil && !m.Created.IsZero() {
			age = math.Max(0, now.Sub(m.Created).Seconds())
		}
	}
	ch <- gauge(c.outboxPending, float64(page.Pending))
	ch <- gauge(c.outboxFailed, float64(page.Failed))
	ch <- gauge(c.outboxOldest, age)
}
