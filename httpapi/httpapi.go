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
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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
	table    []Route
	gatherer prometheus.Gatherer
	proof    proofHolder
	demo     demoHolder
	// heavySlots holds one token per heavy request running (HeavyLimit).
	heavySlots chan struct{}
	// heavyQueue holds one token per heavy request waiting (HeavyQueue).
	heavyQueue chan struct{}
	// giveBack returns freed memory to the system after heavy requests
	// (debug.FreeOSMemory; tests count the calls).
	giveBack  func()
	idleMu    sync.Mutex
	idleTimer *time.Timer
}

// New builds the handler set. gatherer serves /metrics; reg registers the
// server's own metrics (both usually one *prometheus.Registry).
func New(b Backend, reg prometheus.Registerer, gatherer prometheus.Gatherer, log *slog.Logger) (*Server, error) {
	s := &Server{
		backend: b, log: log, mux: http.NewServeMux(), gatherer: gatherer, heavySlots: make(chan struct{}, HeavyLimit), heavyQueue: make(chan struct{}, HeavyQueue), giveBack: debug.FreeOSMemory,
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
	s.routes()
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

type handlerFunc func(w http.ResponseWriter, r *http.Request) error

func (s *Server) handle(pattern, method string, h handlerFunc) {
	s.table = append(s.table, Route{Method: method, Pattern: pattern})
	s.mux.HandleFunc(pattern, s.wrap(pattern, method, h))
}

// handleMethods serves one pattern with a handler per method (a GET
// handler answers HEAD too); any other method gets 405 with Allow.
func (s *Server) handleMethods(pattern string, hs map[string]handlerFunc) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		if _, ok := hs[m]; ok {
			s.table = append(s.table, Route{Method: m, Pattern: pattern})
			allow = append(allow, m)
			if m == http.MethodGet {
				allow = append(allow, http.MethodHead)
			}
		}
	}
	s.mux.HandleFunc(pattern, s.wrap(pattern, "", func(w http.ResponseWriter, r *http.Request) error {
		m := r.Method
		if m == http.MethodHead {
			m = http.MethodGet
		}
		if h, ok := hs[m]; ok {
			return h(w, r)
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		return pricewatch.Errorf(EMethod, "method %s not allowed on %s", r.Method, r.URL.Path)
	}))
}

// wrap adds the method check (a GET handler answers HEAD too; any other
// method gets 405 with Allow), the body limit (413), JSON errors, panic
// recovery and metrics.
func (s *Server) wrap(name, method string, h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					// A streamed answer cut on purpose: net/http drops the
					// connection, so the client sees it was cut.
					s.requests.WithLabelValues(name, "aborted").Inc()
					panic(p)
				}
				s.log.Error("handler panicked", "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
				writeError(rec, pricewatch.Errorf(pricewatch.EInternal, "internal error"))
			}
			s.requests.WithLabelValues(name, strconv.Itoa(rec.code)).Inc()
			s.latency.WithLabelValues(name).Observe(time.Since(start).Seconds())
		}()
		if !limitBody(rec, r, bodyLimit(name)) {
			return
		}
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
			if cancelled(err) {
				// The client left or the deadline passed: the work stopped.
				s.log.Debug("request cancelled", "path", r.URL.Path, "err", err)
				err = pricewatch.Errorf(pricewatch.EUnavailable, "request cancelled: %v", err)
			}
			if statusOf(err) == http.StatusInternalServerError {
				s.log.Error("request failed", "path", r.URL.Path, "err", err)
			}
			writeError(rec, err)
		}
	}
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

// Unwrap lets http.ResponseController reach the connection (write
// deadlines, flushes).
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

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
	case EConflict:
		return http.StatusConflict
	case ETooLarge:
		return http.StatusRequestEntityTooLarge
	case pricewatch.EUnavailable, EBusy:
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
		// Handlers check their answers first (rank.NonFinite); this is the
		// last guard, and says what failed.
		msg, _ := json.Marshal(map[string]string{"error": "cannot encode the answer: " + err.Error()})
		code, b = http.StatusInternalServerError, msg
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
	if ok, why := ready(v); !ok {
		return nil, pricewatch.Errorf(pricewatch.EUnavailable, "%s (GET /readyz says when a ranking exists)", why)
	}
	return v, nil
}
