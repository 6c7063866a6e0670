package scrapers_test

import (
	"errors"
	"testing"

	"github.com/pricewatch/pricewatch/scrapers"
)

// NeedSecrets names every secret and why, and passes once all are set.
func TestNeedSecrets(t *testing.T) {
	set := map[string]string{"A": "x"}
	env := &scrapers.Env{Getenv: func(n string) string { return set[n] }}
	var d *scrapers.Disabled
	err := scrapers.NeedSecrets(env, "an API key", "A", "B")
	if !errors.As(err, &d) || d.Reason != "needs A and B (an API key)" {
		t.Errorf("err = %v", err)
	}
	set["B"] = " y "
	if err := scrapers.NeedSecrets(env, "an API key", "A", "B"); err != nil {
		t.Errorf("both set: %v", err)
	}
}
