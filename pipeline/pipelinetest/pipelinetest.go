// Package pipelinetest builds a pipeline over a loopback fixture server and
// a temporary store, with a recording notifier, for tests of the packages
// that sit on the pipeline (HTTP API, CLI).
package pipelinetest

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/pipeline"
	_ "github.com/pricewatch/pricewatch/scrapers/all" // every source
	"github.com/pricewatch/pricewatch/store"
)

// Notifier records messages; while Fail is set it refuses them.
type Notifier struct {
	mu       sync.Mutex
	Messages []alerts.Message
	fail     bool
}

var _ alerts.Notifier = (*Notifier)(nil)

// Notify implements alerts.Notifier.
func (n *Notifier) Notify(_ context.Context, m alerts.Message) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fail {
		return errFail
	}
	n.Messages = append(n.Messages, m)
	return nil
}

// SetFail makes Notify fail (true) or succeed.
func (n *Notifier) SetFail(v bool) {
	n.mu.Lock()
	n.fail = v
	n.mu.Unlock()
}

// Count is the number of delivered messages.
func (n *Notifier) Count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.Messages)
}

type failErr struct{}

func (failErr) Error() string { return "slack unavailable (test)" }

var errFail = failErr{}

// Env is a pipeline wired for a test.
type Env struct {
	Pipeline *pipeline.Pipeline
	Store    *store.Store
	Notifier *Notifier
	Config   *config.Config
	Registry *prometheus.Registry
	URL      string

	mu     sync.Mutex
	offset time.Duration
}

// Now is the pipeline's clock: real time plus what Advance added.
func (e *Env) Now() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return time.Now().UTC().Add(e.offset)
}

// Advance moves the pipeline's clock forward (cooldowns, retry backoff).
func (e *Env) Advance(d time.Duration) {
	e.mu.Lock()
	e.offset += d
	e.mu.Unlock()
}

// New serves h (nil: the embedded fixtures) on loopback, points every
// source at it and builds an initialized pipeline. mutate may adjust the
// config before the pipeline is built.
func New(t testing.TB, h http.Handler, mutate func(*config.Config)) *Env {
	t.Helper()
	if h == nil {
		h = fixtures.Handler(fixtures.FS())
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg := config.Default()
	cfg.PointAt(fixtures.URLs(srv.URL), fixtures.Bases(srv.URL))
	for name, s := range cfg.Sources {
		// Loopback fixtures answer at once; 10 s rides out a CI machine
		// running every package under -race (a test of timeouts sets its
		// own).
		s.Settings.Timeout = 10 * time.Second
		s.Settings.RetryBackoff = 10 * time.Millisecond
		cfg.Sources[name] = s
	}
	cfg.DB = filepath.Join(t.TempDir(), "pricewatch.db")
	if mutate != nil {
		mutate(cfg)
	}
	st, err := store.Open(cfg.DB, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	n := &Notifier{}
	reg := prometheus.NewRegistry()
	env := &Env{Store: st, Notifier: n, Config: cfg, Registry: reg, URL: srv.URL}
	p, err := pipeline.New(cfg, st, pipeline.Options{
		Notifier: n, Registry: reg, Logger: slog.New(slog.DiscardHandler), Now: env.Now,
		// Sources that need a key run against the fixtures with a dummy one.
		Getenv: func(string) string { return "test-secret" },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Init(); err != nil {
		t.Fatal(err)
	}
	env.Pipeline = p
	return env
}

// Restart closes the store and builds a new pipeline over the same file,
// with the same notifier (the same fake Slack), as a daemon restart does.
func (e *Env) Restart(t testing.TB) {
	t.Helper()
	if err := e.Store.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(e.Config.DB, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e.Registry = prometheus.NewRegistry()
	p, err := pipeline.New(e.Config, st, pipeline.Options{
		Notifier: e.Notifier, Registry: e.Registry, Logger: slog.New(slog.DiscardHandler), Now: e.Now,
		Getenv: func(string) string { return "test-secret" },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Init(); err != nil {
		t.Fatal(err)
	}
	e.Store, e.Pipeline = st, p
}

// Round runs the named sources (every enabled one when none are named)
// once and refreshes, failing the test on a refresh error; it returns the
// run summaries.
func (e *Env) Round(t testing.TB, names ...string) []pipeline.Summary {
	t.Helper()
	sums := e.Pipeline.RunAll(t.Context(), names)
	if err := e.Pipeline.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := e.Pipeline.Deliver(t.Context()); err != nil {
		t.Fatal(err)
	}
	return sums
}

// runpodPrice matches every "…Price": number of a RunPod GraphQL answer.
var runpodPrice = regexp.MustCompile(`("[a-zA-Z]*Price"): ([0-9.]+)`)

// ScaleRunPodPrices multiplies every price of a RunPod answer by f (a
// whole-source price level, as the gate tests need one).
func ScaleRunPodPrices(body []byte, f float64) []byte {
	return runpodPrice.ReplaceAllFunc(body, func(m []byte) []byte {
		sub := runpodPrice.FindSubmatch(m)
		p, err := strconv.ParseFloat(string(sub[2]), 64)
		if err != nil {
			return m
		}
		return []byte(string(sub[1]) + ": " + strconv.FormatFloat(p*f, 'f', -1, 64))
	})
}
