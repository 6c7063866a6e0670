package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/config"
)

// Issue 19 item 10, from the command line, from the database file and
// through a running daemon: a vLLM serving benchmark imported for lora-7b
// is refused with an error naming --workload (the daemon's 400 names the
// workload field) and both kinds; the same 70B benchmark for serve-7b is
// stored with a warning naming both models. Before the fix both were
// stored, the second without a word.
func TestProfileImport_KindRefusedModelWarned(t *testing.T) {
	t.Setenv(config.EnvAPIToken, "tok-kind")
	vllm70 := filepath.Join("..", "..", "profileimport", "testdata", "vllm_benchmark_serving.json")
	db := filepath.Join(t.TempDir(), "pw.db")
	var out, errOut bytes.Buffer
	if err := Run(t.Context(), []string{"scrape", "--demo", "--db", db}, &out, &errOut); err != nil {
		t.Fatalf("scrape: %v %s", err, errOut.String())
	}
	imp := func(workload string) (string, error) {
		var out, errOut bytes.Buffer
		err := Run(t.Context(), []string{"profile", "import", vllm70, "--db", db, "--card", "A100-80GB-SXM", "--workload", workload}, &out, &errOut)
		return out.String(), err
	}
	check := func(where string, wantUsage bool) {
		t.Helper()
		_, err := imp("lora-7b")
		var ue usageError
		if err == nil || !strings.Contains(err.Error(), "workload: lora-7b is a training workload") ||
			!strings.Contains(err.Error(), "serving log (vllm-bench-serving)") || errors.As(err, &ue) != wantUsage {
			t.Errorf("%s: 70B benchmark for lora-7b: %v (usage error %v)", where, err, errors.As(err, &ue))
		}
		if wantUsage && err != nil && !strings.HasPrefix(err.Error(), "--workload: ") {
			t.Errorf("%s: %q does not name the flag", where, err)
		}
		s, err := imp("serve-7b")
		if err != nil || !strings.Contains(s, "measured profile set: A100-80GB-SXM serve-7b 400 tokens/s") ||
			!strings.Contains(s, `  warning: the input's model "meta-llama/Llama-3.1-70B-Instruct" (70B) is not serve-7b's model llama-7b (7B)`) {
			t.Errorf("%s: 70B benchmark for serve-7b: %v\n%s", where, err, s)
		}
	}
	check("offline", true)

	d := startServe(t, "--demo", "--db", db, "--addr", "127.0.0.1:0")
	waitFor(t, 30*time.Second, "a ranking", func() bool {
		var r map[string]any
		return getJSON(t, d.base+"/readyz", &r) == 200
	})
	check("through the daemon", false)
}
