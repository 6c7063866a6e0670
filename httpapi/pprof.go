package httpapi

import (
	"net"
	"net/http"
	"net/http/pprof"

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
	s.mux.HandleFunc("/debug/pprof/profile", guard(pprof.Profile))
	s.mux.HandleFunc("/debug/pprof/symbol", guard(pprof.Symbol))
	s.mux.HandleFunc("/debug/pprof/trace", guard(pprof.Trace))
}

func (s *Server) pprofAllowed(r *http.Request) error {
	if s.backend.Config().Server.APIToken != "" {
		return s.authorize(r)
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return pricewatch.Errorf(EForbidden, "profiles are served to loopback clients only when no API token is configured")
	}
	return nil
}
