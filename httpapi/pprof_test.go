package httpapi_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
)

// Profiles are off unless server.pprof; on, they need the token when one
// is configured, and a loopback client when none is.
func TestPprof_OptInAndGuarded(t *testing.T) {
	for _, c := range []struct {
		name          string
		on            bool
		token, bearer string
		remote, host  string
		path          string
		want          int
	}{
		{"off", false, "", "", "127.0.0.1:5000", "localhost:8080", "", 404},
		{"on, token, none sent", true, "tok", "", "127.0.0.1:5000", "localhost:8080", "", 401},
		{"on, token sent", true, "tok", "tok", "192.0.2.7:5000", "pw.example:8080", "", 200},
		{"on, no token, loopback", true, "", "", "127.0.0.1:5000", "127.0.0.1:8080", "", 200},
		{"on, no token, loopback, [::1]", true, "", "", "127.0.0.1:5000", "[::1]:8080", "", 200},
		{"on, no token, remote", true, "", "", "192.0.2.7:5000", "localhost:8080", "", 403},
		// DNS rebinding: a loopback peer with a foreign Host.
		{"on, no token, loopback, foreign Host", true, "", "", "127.0.0.1:5000", "evil.example:8080", "", 403},
		// A trace of an hour is refused before it runs.
		{"on, token, trace too long", true, "tok", "tok", "127.0.0.1:5000", "localhost:8080", "/debug/pprof/trace?seconds=3600", 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := pipelinetest.New(t, nil, func(cfg *config.Config) { cfg.Server.Pprof, cfg.Server.APIToken = c.on, c.token })
			srv, err := httpapi.New(env.Pipeline, env.Registry, env.Registry, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			path := c.path
			if path == "" {
				path = "/debug/pprof/cmdline"
			}
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.RemoteAddr, req.Host = c.remote, c.host
			if c.bearer != "" {
				req.Header.Set("Authorization", "Bearer "+c.bearer)
			}
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if rec.Code != c.want {
				t.Errorf("%d %s, want %d", rec.Code, rec.Body.String(), c.want)
			}
		})
	}
}
