package httpapi_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
)

// Issue 33 item 2: a GPU name Vast reports after its first run is listed
// in /v1/sources under the source's new_gpus, with its offers and the time
// it was first seen, and on the dashboard's sources page; the first run's
// unknown names are not.
func TestSources_NewGPUNames(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, fixtures.FS()); err != nil {
		t.Fatal(err)
	}
	env := pipelinetest.New(t, fixtures.Handler(os.DirFS(dir)), nil)
	names := []string{"vast", "ecb"}
	env.Round(t, names...)
	h := newHarnessOn(t, env)
	vast := func() httpapi.SourceStatus {
		t.Helper()
		_, body := h.get(t, "/v1/sources")
		for _, s := range decode[struct{ Sources []httpapi.SourceStatus }](t, body).Sources {
			if s.Name == "vast" {
				return s
			}
		}
		t.Fatal("no vast in /v1/sources")
		return httpapi.SourceStatus{}
	}
	if s := vast(); len(s.UnknownGPUs) == 0 || len(s.NewGPUs) != 0 {
		t.Fatalf("after the first run: unknown %v, new %+v; want the baseline unknown and nothing new", s.UnknownGPUs, s.NewGPUs)
	}
	if _, page := h.page(t, "/sources"); strings.Contains(page, `id="new-gpus"`) {
		t.Error("the sources page lists new GPU names after the baseline alone")
	}

	file := filepath.Join(dir, "vast", "bundles.json")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(`"gpu_name": "RTX 4090"`), []byte(`"gpu_name": "RTX 9090 Ultra"`), 1)
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	env.Advance(10 * time.Minute)
	env.Round(t, names...)
	s := vast()
	if len(s.NewGPUs) != 1 || s.NewGPUs[0].Name != "RTX 9090 Ultra (24 GB)" || s.NewGPUs[0].Offers != 2 ||
		s.LastSuccess == nil || !s.NewGPUs[0].FirstSeen.Equal(*s.LastSuccess) {
		t.Errorf("vast new_gpus %+v (last success %v), want RTX 9090 Ultra (24 GB), 2 offers, first seen at the run", s.NewGPUs, s.LastSuccess)
	}
	_, raw := h.get(t, "/v1/sources")
	if !bytes.Contains(raw, []byte(`"new_gpus":[{"name":"RTX 9090 Ultra (24 GB)","offers":2,"first_seen":"`)) {
		t.Errorf("/v1/sources JSON lacks the new name: %.300s", raw[bytes.Index(raw, []byte(`"name":"vast"`)):])
	}
	code, page := h.page(t, "/sources")
	if code != 200 || !strings.Contains(page, `id="new-gpus"`) ||
		!strings.Contains(page, `<td>vast</td><td><span class="unknown">RTX 9090 Ultra (24 GB)</span></td><td class="num">2</td>`) {
		t.Errorf("/sources %d: no row for the new name", code)
	}
}
