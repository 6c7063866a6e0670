// Package httpapi serves pricewatch's query endpoints. Handlers only read
// the current ranking snapshot (rebuilt after each scrape, never on the
// request path); rendered answers are cached per snapshot under canonical
// keys, within rank.MemoMaxEntries and rank.MemoMaxBytes. Every error is
// JSON: {"error": "..."} with a 4xx for a bad request, never a panic.
package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/store"
)

// Backend is what the server reads (and, for the token-protected write
// endpoints, changes).
type Backend interface {
	View() *pipeline.View
	Config() *config.Config
	Statuses() []pipeline.SourceStatus
	Messages(limit int) ([]store.Message, error)
	Outbox(status string, limit int) (store.OutboxPage, error)
	Digest() ([]alerts.Message, error)
	Enqueue(kind string, m alerts.Message) error
}

// Server is the HTTP API.
type Server struct {
	backend  Backend
	log      *slog.Logger
	mux      *http.ServeMux
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	replays  replays
}

// New builds the handler set. gatherer serves /metrics; reg registers the
// server's own metrics (both usually one *prometheus.Registry).
func New(b Backend, reg prometheus.Registerer, gatherer prometheus.Gatherer, log *slog.Logger) (*Server, error) {
	s := &Server{
		backend: b, log: log, mux: http.NewServeMux(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pricewatch_http_requests_total", Help: "HTTP requests by handler and status code.",
		}, []string{"handler", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "pricewatch_http_request_duration_seconds", Help: "HTTP request latency by handler.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 8),
		}, []string{"handler"}),
	}
	for _, c := range []prometheus.Collector{s.requests, s.latency} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	s.handle("/v1/best", http.MethodGet, s.best)
	s.handle("/v1/offers", http.MethodGet, s.offers)
	s.handle("/v1/sources", http.MethodGet, s.sources)
	s.handle("/v1/alerts", http.MethodGet, s.alerts)
	s.handle("/v1/digest", http.MethodPost, s.digest)
	s.mux.HandleFunc("/v1/silences", s.wrap("/v1/silences", "", func(w http.ResponseWriter, r *http.Request) error {
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			return s.listSilences(w, r)
		case http.MethodPost:
			return s.addSilence(w, r)
		}
		w.Header().Set("Allow", "GET, HEAD, POST")
		return pricewatch.Errorf(EMethod, "method %s not allowed on %s", r.Method, r.URL.Path)
	}))
	s.handle("/v1/silences/{id}", http.MethodDelete, s.removeSilence)
	s.handle("/slack/command", http.MethodPost, s.slash)
	s.handle("/v1/plan", http.MethodPost, s.plan)
	s.handle("/v1/profiles", http.MethodGet, s.listProfiles)
	s.handle("/v1/profiles/{card}/{workload}", http.MethodPut, s.putProfile)
	s.handle("/healthz", http.MethodGet, s.healthz)
	metrics := promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{})
	s.handle("/metrics", http.MethodGet, func(w http.ResponseWriter, r *http.Request) error {
		metrics.ServeHTTP(w, r)
		return nil
	})
	s.handle("/", "", func(w http.ResponseWriter, r *http.Request) error {
		return pricewatch.Errorf(pricewatch.ENotFound, "no such endpoint %s (see /v1/best, /v1/plan, /v1/offers, /v1/sources, /v1/profiles, /healthz, /metrics)", r.URL.Path)
	})
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

type handlerFunc func(w http.ResponseWriter, r *http.Request) error

func (s *Server) handle(pattern, method string, h handlerFunc) {
	s.mux.HandleFunc(pattern, s.wrap(pattern, method, h))
}

// wrap adds the method check (a GET handler answers HEAD too; any other
// method gets 405 with Allow), JSON errors, panic recovery and metrics.
func (s *Server) wrap(name, method string, h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("handler panicked", "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
				writeError(rec, pricewatch.Errorf(pricewatch.EInternal, "internal error"))
			}
			s.requests.WithLabelValues(name, strconv.Itoa(rec.code)).Inc()
			s.latency.WithLabelValues(name).Observe(time.Since(start).Seconds())
		}()
		if method != "" && r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
			allow := method
			if method == http.MethodGet {
				allow = "GET, HEAD"
			}
			rec.Header().Set("Allow", allow)
			writeJSON(rec, http.StatusMethodNotAllowed, map[string]string{"error": fmt.Sprintf("method %s not allowed on %s", r.Method, r.URL.Path)})
			return
		}
		if err := h(rec, r); err != nil {
			writeError(rec, err)
		}
	}
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.code = code
	r.ResponseWriter.WriteHeader(code)
}

// statusOf is the one table from error codes to HTTP statuses.
func statusOf(err error) int {
	switch pricewatch.ErrorCode(err) {
	case pricewatch.EInvalid:
		return http.StatusBadRequest
	case pricewatch.ENotFound:
		return http.StatusNotFound
	case EUnauthorized:
		return http.StatusUnauthorized
	case EForbidden:
		return http.StatusForbidden
	case EMethod:
		return http.StatusMethodNotAllowed
	case pricewatch.EUnavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

func writeError(w http.ResponseWriter, err error) {
	if pricewatch.ErrorCode(err) == EUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="pricewatch"`)
	}
	msg := "internal error"
	var pe *pricewatch.Error
	if errors.As(err, &pe) {
		msg = pe.Message
	}
	writeJSON(w, statusOf(err), map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"internal error"}`)
	}
	writeBytes(w, code, append(b, '\n'))
}

func writeBytes(w http.ResponseWriter, code int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	w.Write(b)
}

func (s *Server) view() (*pipeline.View, error) {
	v := s.backend.View()
	if v == nil || v.Snapshot == nil {
		return nil, pricewatch.Errorf(pricewatch.EUnavailable, "no ranking yet: the first scrape is still running")
	}
	return v, nil
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	status := map[string]any{"status": "ok"}
	if v := s.backend.View(); v != nil && v.Snapshot != nil {
		status["ranking_generated_at"] = v.Snapshot.GeneratedAt
	} else {
		status["ranking_generated_at"] = nil
	}
	writeJSON(w, http.StatusOK, status)
	return nil
}
