package httpapi

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pricewatch/pricewatch"
)

// Route is one method and path pattern the server answers (the table the
// OpenAPI description is checked against).
type Route struct {
	Method  string
	Pattern string
}

// Routes lists every route the server answers, in registration order.
func (s *Server) Routes() []Route { return append([]Route(nil), s.table...) }

// routes is the route table.
func (s *Server) routes() {
	s.handle("/v1/best", http.MethodGet, s.best)
	s.handle("/v1/history", http.MethodGet, s.heavy(s.history))
	s.handle("/v1/offers", http.MethodGet, s.offers)
	s.handle("/v1/offers/{rest...}", http.MethodGet, s.offerRoute)
	s.handle("/v1/export.csv", http.MethodGet, s.heavy(s.exportCSV))
	s.handle("/v1/export.json", http.MethodGet, s.heavy(s.exportJSON))
	s.handle("/v1/sources", http.MethodGet, s.sources)
	s.handle("/v1/sources/{source}/accept", http.MethodPost, s.acceptSource)
	s.handle("/v1/scrape/{source}", http.MethodPost, s.scrape)
	s.handle("/v1/alerts", http.MethodGet, s.alerts)
	s.handleMethods("/v1/digest", map[string]handlerFunc{http.MethodGet: s.digestPreview, http.MethodPost: s.digest})
	s.handleMethods("/v1/silences", map[string]handlerFunc{http.MethodGet: s.listSilences, http.MethodPost: s.addSilence})
	s.handle("/v1/silences/{id}", http.MethodDelete, s.removeSilence)
	s.handle("/slack/command", http.MethodPost, s.slash)
	s.handle("/v1/plan", http.MethodPost, s.plan)
	s.handle("/v1/estimate", http.MethodPost, s.estimate)
	s.handle("/v1/profiles", http.MethodGet, s.listProfiles)
	s.handleMethods("/v1/profiles/{card}/{workload}", map[string]handlerFunc{http.MethodPut: s.putProfile, http.MethodDelete: s.deleteProfile})
	s.handle("/v1/profiles/import", http.MethodPost, s.importProfile)
	s.handle("/healthz", http.MethodGet, s.healthz)
	s.handle("/v1/daemon/proof", http.MethodGet, s.daemonProof)
	s.handle("/readyz", http.MethodGet, s.readyz)
	s.handle("/openapi.yaml", http.MethodGet, s.openapi)
	metrics := promhttp.HandlerFor(s.gatherer, promhttp.HandlerOpts{})
	s.handle("/metrics", http.MethodGet, func(w http.ResponseWriter, r *http.Request) error {
		metrics.ServeHTTP(w, r)
		return nil
	})
	s.dashboardRoutes()
	s.pprofRoutes()
	s.table = append(s.table, Route{Method: http.MethodGet, Pattern: "/"})
	s.mux.HandleFunc("/", s.wrap("/", "", func(w http.ResponseWriter, r *http.Request) error {
		if r.URL.Path == "/" {
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				w.Header().Set("Allow", "GET, HEAD")
				return pricewatch.Errorf(EMethod, "method %s not allowed on %s", r.Method, r.URL.Path)
			}
			return s.heavy(s.dashboardBest)(w, r)
		}
		return pricewatch.Errorf(pricewatch.ENotFound, "no such endpoint %s (see / for the dashboard, /openapi.yaml for the API)", r.URL.Path)
	}))
}
