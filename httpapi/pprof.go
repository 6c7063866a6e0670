package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"

	"github.com/pricewatch/pricewatch"
)

// pprofRoutes serves Go's profiles of the running daemon under
// /debug/pprof/ when server.pprof is on (off by default: a profile shows
// what the process is doing). With an API token configured a request
// needs it; without one, only a loopback client is answered.
func (s *Server) pprofRoutes() {
	if !s.backend.Config().Server.Pprof {
		return
	}
	guard := func(h http.HandlerFunc) http.HandlerFunc {
		return s.wrap("/debug/pprof/", "", func(w http.ResponseWriter, r *http.Request) error {
			if err := s.pprofAllowed(r); err != nil {
				return err
			}
			h(w, r)
			return nil
		})
	}
	s.mux.HandleFunc("/debug/pprof/", guard(pprof.Index))
	s.mux.HandleFunc("/debug/pprof/cmdline", guard(pprof.Cmdline))
	s.mux.HandleFunc("/debug/pprof/profile", guard(capped(pprof.Profile)))
	s.mux.HandleFunc("/debug/pprof/symbol", guard(pprof.Symbol))
	s.mux.HandleFunc("/debug/pprof/trace", guard(capped(pprof.Trace)))
}

// MaxProfileSeconds bounds a CPU profile's or a trace's duration: the work
// a request makes the daemon do stays bounded.
const MaxProfileSeconds = 30

// capped refuses a profile or trace longer than MaxProfileSeconds (400
// naming seconds) instead of running it.
func capped(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if v := r.URL.Query().Get("seconds"); v != "" {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil || !(n > 0) || n > MaxProfileSeconds {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("seconds: must be within 0..%d, got %q", MaxProfileSeconds, v)})
				return
			}
		}
		h(w, r)
	}
}

func (s *Server) pprofAllowed(r *http.Request) error {
	if s.backend.Config().Server.APIToken != "" {
		return s.authorize(r)
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return pricewatch.Errorf(EForbidden, "profiles are served to loopback clients only when no API token is configured")
	}
	// A page of another site that a browser on this machine loads can
	// reach loopback under its own name (DNS rebinding): its Host is not.
	if !loopbackHost(r.Host) {
		return pricewatch.Errorf(EForbidden, "profiles are served without a token only to a loopback Host (localhost, 127.0.0.1, [::1]), not %q", r.Host)
	}
	return nil
}

// loopbackHost reports whether a Host header names this machine.
func loopbackHost(h string) bool {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
