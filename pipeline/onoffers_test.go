package pipeline_test

import (
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
)

// OnOffers (the memory limit's sizing) hears the offers held only from
// the last of concurrent runs: a small source finishing while a big one
// still runs must not report its few offers. vast's answer is held back
// until runpod's run has finished; before, OnOffers heard runpod's count
// alone first (it failed with "reported [149 1467], want one report of
// both sources' offers"). Second runs: a round's first runs wait for each
// other (round.go), so on a new install runpod would wait for vast.
func TestOnOffers_LastOfConcurrentRuns(t *testing.T) {
	base := fixtures.Handler(os.DirFS(fixtureDir(t)))
	release := make(chan struct{})
	var hold atomic.Bool
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hold.Load() && r.Method == http.MethodPost && strings.Contains(r.URL.Path, "bundles") {
			<-release // vast's offer search
		}
		base.ServeHTTP(w, r)
	})
	var mu sync.Mutex
	var got []int
	env := pipelinetest.New(t, h, func(c *config.Config) {
		for name, s := range c.Sources {
			s.Settings.Delay = 0
			s.Settings.Timeout = 30 * time.Second
			c.Sources[name] = s
		}
	})
	env.Round(t, "vast", "runpod")
	h0, err := env.Store.Health()
	if err != nil {
		t.Fatal(err)
	}
	first := h0["runpod"].LastSuccess
	hold.Store(true)
	p, err := pipeline.New(env.Config, env.Store, pipeline.Options{Getenv: func(string) string { return "test-secret" },
		OnOffers: func(n int) { mu.Lock(); got = append(got, n); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); p.RunAll(t.Context(), []string{"vast", "runpod"}) }()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if runpodRan(env, first) {
			break
		}
	}
	ran := runpodRan(env, first)
	close(release)
	wg.Wait()
	if !ran {
		t.Fatal("runpod did not finish while vast waited")
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] < 1000 {
		t.Fatalf("reported %v, want one report of both sources' offers", got)
	}
}

// runpodRan: a run of runpod after since is recorded (its health has a
// later success).
func runpodRan(env *pipelinetest.Env, since time.Time) bool {
	h, err := env.Store.Health()
	return err == nil && h["runpod"].LastSuccess.After(since)
}
