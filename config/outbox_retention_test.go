package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/config"
)

// alerts.outbox_retention: 30 days by default, read from the file, a
// duration of at least an hour.
func TestConfig_OutboxRetention(t *testing.T) {
	if got := config.Default().Alerts.OutboxRetention; got != 30*24*time.Hour {
		t.Errorf("default %s, want 720h", got)
	}
	c, err := decode(t, "alerts:\n  outbox_retention: 168h\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.Alerts.OutboxRetention != 7*24*time.Hour {
		t.Errorf("decoded %s, want 168h", c.Alerts.OutboxRetention)
	}
	if err := c.Validate(workloadKnown, cardKnown); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if _, err := decode(t, "alerts:\n  outbox_retention: 30\n"); err == nil {
		t.Error("a bare number decoded as a retention")
	}
	for _, v := range []string{"10m", "-1h"} {
		c, err := decode(t, "alerts:\n  outbox_retention: "+v+"\n")
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if err := c.Validate(workloadKnown, cardKnown); err == nil || !strings.Contains(err.Error(), "alerts.outbox_retention:") {
			t.Errorf("%s: Validate error %v, want one naming alerts.outbox_retention", v, err)
		}
	}
}
