package pipeline_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
)

// Issue 10 item 5: with the daemon's sender running, a source-health post
// reaches Slack within seconds although no watch posts (the rounds here
// never call Deliver).
func TestPipeline_HealthPostDeliveredBySender(t *testing.T) {
	var bad atomic.Bool
	good := fixtures.Handler(fixtures.FS())
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if bad.Load() && strings.HasPrefix(r.URL.Path, "/runpod/") {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		good.ServeHTTP(w, r)
	})
	env := pipelinetest.New(t, h, oneWatch)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { env.Pipeline.RunSender(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	names := []string{"runpod", "vast", "ecb", "azure", "lambda"}
	round := func() {
		env.Pipeline.RunAll(ctx, names)
		if err := env.Pipeline.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	round()
	bad.Store(true)
	for range alerts.FailingRuns {
		round()
	}
	// Well under the sender's own poll (alerts.DefaultPoll): the engine woke it.
	deadline := time.Now().Add(3 * time.Second)
	for env.Notifier.Count() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := env.Notifier.Count(); n != 1 || !strings.Contains(env.Notifier.Messages[0].Text, "runpod has failed 3 runs") {
		t.Fatalf("delivered %d messages, want the runpod health post: %v", n, env.Notifier.Messages)
	}
}
