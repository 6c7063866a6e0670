package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
)

// POST /v1/sources/{source}/accept needs the token, names an unknown
// source with 404 and a source with nothing held with 409; the run it
// starts is reported.
func TestAcceptSource_Errors(t *testing.T) {
	h := newPlanHarness(t, "tok")
	for _, c := range []struct {
		target, token string
		code          int
		want          string
	}{
		{"/v1/sources/runpod/accept", "", 401, ""},
		{"/v1/sources/runpod/accept", "wrong", 401, ""},
		{"/v1/sources/nosuch/accept", "tok", 404, `unknown source \"nosuch\"`},
		{"/v1/sources/runpod/accept", "tok", 409, "nothing to accept"},
	} {
		code, body := h.do(t, http.MethodPost, c.target, "", c.token)
		var e struct{ Error string }
		json.Unmarshal(body, &e)
		if code != c.code || e.Error == "" || !strings.Contains(string(body), c.want) {
			t.Errorf("%s (token %q): %d %s, want %d with %q", c.target, c.token, code, body, c.code, c.want)
		}
	}
}

// An accept names the level it accepts: RunPod's prices all ×10 are held
// (factor:x10/ondemand, as /v1/sources shows it). Naming no level is a
// 400 naming it; another level (×4, what an earlier message may have
// shown) a 409 with the current one; twenty concurrent accepts of the
// shown level: one 200, nineteen 409.
func TestAcceptSource_NamesTheLevel(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, fixtures.FS()); err != nil {
		t.Fatal(err)
	}
	env := pipelinetest.New(t, fixtures.Handler(os.DirFS(dir)), func(c *config.Config) {
		c.Server.APIToken = "tok"
		c.Ingest = config.DefaultIngest()
	})
	names := []string{"runpod", "vast", "ecb"}
	env.Round(t, names...)
	file := filepath.Join(dir, "runpod", "graphql.json")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, pipelinetest.ScaleRunPodPrices(b, 10), 0o644); err != nil {
		t.Fatal(err)
	}
	env.Round(t, names...)
	h := newHarnessOn(t, env)
	var st struct {
		Sources []struct {
			Name         string `json:"name"`
			PendingLabel string `json:"pending_label"`
		}
	}
	_, body := h.get(t, "/v1/sources")
	json.Unmarshal(body, &st)
	label := ""
	for _, s := range st.Sources {
		if s.Name == "runpod" {
			label = s.PendingLabel
		}
	}
	if label != "factor:x10/ondemand" {
		t.Fatalf("pending label %q: %s", label, body)
	}
	if code, body := h.do(t, http.MethodPost, "/v1/sources/runpod/accept", "", "tok"); code != 400 || !strings.Contains(string(body), "level: required") {
		t.Errorf("no level: %d %s", code, body)
	}
	if code, body := h.do(t, http.MethodPost, "/v1/sources/runpod/accept?level=factor:x4/ondemand", "", "tok"); code != 409 ||
		!strings.Contains(string(body), "now holds factor:x10/ondemand") {
		t.Errorf("another level: %d %s", code, body)
	}
	codes := make(chan int, 20)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			req := httptest.NewRequest(http.MethodPost, "/v1/sources/runpod/accept?level="+url.QueryEscape(label), nil)
			req.Header.Set("Authorization", "Bearer tok")
			rec := httptest.NewRecorder()
			h.srv.ServeHTTP(rec, req)
			codes <- rec.Code
		})
	}
	wg.Wait()
	n := map[int]int{}
	for range 20 {
		n[<-codes]++
	}
	if n[200] != 1 || n[409] != 19 {
		t.Errorf("20 concurrent accepts: %v, want one 200 and nineteen 409", n)
	}
}
