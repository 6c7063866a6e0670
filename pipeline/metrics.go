package pipeline

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/store"
)

type metrics struct {
	runs        *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	changes     *prometheus.CounterVec
	up          *prometheus.GaugeVec
	offers      *prometheus.GaugeVec
	unknown     *prometheus.GaugeVec
	alerts      *prometheus.CounterVec
	deliveries  *prometheus.CounterVec
	rankSeconds prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pricewatch_scrape_runs_total", Help: "Source runs by result.",
		}, []string{"source", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "pricewatch_scrape_duration_seconds", Help: "Duration of source runs.",
			Buckets: []float64{0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300},
		}, []string{"source"}),
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pricewatch_price_changes_total", Help: "History rows written (offers appeared, changed or vanished).",
		}, []string{"source"}),
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pricewatch_source_up", Help: "1 if the source's last run succeeded.",
		}, []string{"source"}),
		offers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pricewatch_source_offers", Help: "Offers from the source's last good run.",
		}, []string{"source"}),
		unknown: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pricewatch_source_unknown_gpu_names", Help: "GPU names of the last good run that map to no card.",
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
	for _, c := range []prometheus.Collector{m.runs, m.duration, m.changes, m.up, m.offers, m.unknown, m.alerts, m.deliveries, m.rankSeconds} {
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

func (m *metrics) setHealth(h map[string]store.Health, enabled []string) {
	for _, name := range enabled {
		s, ok := h[name]
		up := 0.0
		if ok && s.LastOK {
			up = 1
		}
		m.up.WithLabelValues(name).Set(up)
		m.offers.WithLabelValues(name).Set(float64(s.Offers))
		m.unknown.WithLabelValues(name).Set(float64(len(s.Unknown)))
	}
}
