package pipeline_test

import (
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
	"github.com/pricewatch/pricewatch/rank"
)

// Issue 32 item 3: a workload added to the config ranks the stored offers
// at once — in a pipeline that only reads (the CLI's), with no Init and
// no scrape since the config changed — as plan prices it. Before: best
// said "no eligible offer" for it until the next scrape or serve seeded its
// throughput profiles into the database, while plan worked.
func TestConfigWorkload_RanksWithoutAScrape(t *testing.T) {
	env := pipelinetest.New(t, nil, nil)
	env.Round(t)

	cfg := *env.Config
	cfg.Workloads = []map[string]any{{
		"name": "serve-llama3-8b-mine", "method": "serve", "model": map[string]any{"preset": "llama3-8b"},
		"context": 2048, "concurrency": 64,
	}}
	p, err := pipeline.New(&cfg, env.Store, pipeline.Options{Registry: prometheus.NewRegistry(),
		Logger: slog.New(slog.DiscardHandler), Getenv: func(string) string { return "test-secret" }})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Rebuild(); err != nil { // what the CLI does: no Init, nothing written
		t.Fatal(err)
	}
	snap := p.View().Snapshot
	modes := rank.Filter{Modes: []pricewatch.Mode{pricewatch.ModeOnDemand, pricewatch.ModeSpot}}
	mine := snap.Best("serve-llama3-8b-mine", modes)
	if len(mine) == 0 {
		t.Fatal("the config's workload ranks no offer without a scrape")
	}
	// The same figures as after Init seeded the profiles: the reference
	// figure of each card, here an estimate (no published llama3-8b
	// serving figure of this shape).
	for _, e := range mine[:min(3, len(mine))] {
		if e.ThroughputOrigin != rank.OriginEstimated && e.ThroughputOrigin != rank.OriginPublished {
			t.Errorf("%s: origin %s", e.Card, e.ThroughputOrigin)
		}
	}
	if err := p.Init(); err != nil {
		t.Fatal(err)
	}
	after := p.View().Snapshot.Best("serve-llama3-8b-mine", modes)
	if len(after) != len(mine) || after[0].Key != mine[0].Key || after[0].CostPerMillionTokens != mine[0].CostPerMillionTokens {
		t.Errorf("before Init: %d entries, best %s at %g; after: %d, best %s at %g", len(mine), mine[0].Key,
			mine[0].CostPerMillionTokens, len(after), after[0].Key, after[0].CostPerMillionTokens)
	}
	// A built-in workload is unchanged by the overlay.
	if a, b := env.Pipeline.View().Snapshot.Best("lora-7b", modes), snap.Best("lora-7b", modes); len(a) != len(b) || a[0].Key != b[0].Key {
		t.Errorf("lora-7b differs: %d entries vs %d", len(a), len(b))
	}
}
