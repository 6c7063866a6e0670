package main

import (
	"testing"

	"github.com/pricewatch/pricewatch/config"
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
	if len(cfg.Alerts.Watches) != 2 || cfg.Sources["azure"].Settings.Timeout.Seconds() != 60 {
		t.Errorf("example not decoded as written: %+v", cfg.Alerts.Watches)
	}
}
