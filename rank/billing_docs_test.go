package rank_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/rank"
)

// TestBillingDocs keeps the table of docs/billing.md ("How pricewatch
// bills") what the plan reads: each provider row's increment, minimum and
// monthly cap are BillingRuleFor's.
func TestBillingDocs(t *testing.T) {
	b, err := os.ReadFile("../docs/billing.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "# How pricewatch bills")
	if !ok {
		t.Fatal("docs/billing.md has no How pricewatch bills section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	rows := 0
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		name := strings.TrimSpace(cells[1])
		provider := strings.Trim(strings.Fields(name)[0], "`")
		prefix := ""
		if i := strings.Index(name, "(`"); i >= 0 {
			prefix = strings.TrimSuffix(strings.Trim(name[i+1:], "()`"), "…")
		}
		r := rank.BillingRuleFor(provider, pricewatch.ModeOnDemand, prefix)
		for _, c := range []struct {
			cell string
			want float64
		}{{cells[2], r.IncrementSeconds}, {cells[4], r.MinimumSeconds}, {cells[5], r.MonthlyCapHours}} {
			got := 0.0
			if f := strings.Fields(c.cell); len(f) > 0 && f[0] != "none" {
				got, _ = strconv.ParseFloat(f[0], 64)
			}
			if got != c.want {
				t.Errorf("%s: docs/billing.md says %q, the table %v", name, strings.TrimSpace(c.cell), c.want)
			}
		}
		rows++
	}
	if rows < 10 {
		t.Errorf("%d provider rows in the docs/billing.md table", rows)
	}
}
