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
		remote        string
		want          int
	}{
		{"off", false, "", "", "127.0.0.1:5000", 404},
		{"on, token, none sent", true, "tok", "", "127.0.0.1:5000", 401},
		{"on, token sent", true, "tok", "tok", "192.0.2.7:5000", 200},
		{"on, no token, loopback", true, "", "", "127.0.0.1:5000", 200},
		{"on, no token, remote", true, "", "", "192.0.2.7:5000", 403},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := pipelinetest.New(t, nil, func(cfg *config.Config) { cfg.Server.Pprof, cfg.Server.APIToken = c.on, c.token })
			srv, err := httpapi.New(env.Pipeline, env.Registry, env.Registry, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodGet, "/debug/pprof/cmdline", nil)
			req.RemoteAddr = c.remote
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
