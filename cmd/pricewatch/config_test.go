package main

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/pipeline"
)

// The shipped example must stay a valid config.
func TestExampleConfig(t *testing.T) {
	cfg, err := config.Load("pricewatch.example.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Alerts.Watches) != 3 || cfg.Sources["azure"].Settings.Timeout.Seconds() != 60 || len(cfg.Owned) != 1 ||
		cfg.Digest.Schedule != "CRON_TZ=Asia/Shanghai 0 9 * * *" || cfg.Alerts.Watches[2].Job == nil {
		t.Errorf("example not decoded as written: %+v", cfg.Alerts.Watches)
	}
	// The watches, the job watch included, build.
	st, err := openStore(t.TempDir()+"/pw.db", false)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := pipeline.New(cfg, st, pipeline.Options{Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	if ws := p.Watches(); len(ws) != 3 || ws[2].Job == nil || ws[1].Rules.Cooldown.Hours() != 2 || ws[2].Rules.Worse != "post" {
		t.Errorf("watches %+v", ws)
	}
}
