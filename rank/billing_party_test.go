package rank_test

import (
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/rank"
)

// An aggregator bills the machines it resells on its own terms: a Spheron
// offer of a RunPod machine is billed per started minute (Spheron's row,
// "per-minute billed"), not per second as RunPod bills its own pods
// (runpod's row). A catalog without rows of its own (SkyPilot) leaves its
// offers on the cloud's terms: SkyPilot's Lambda offer keeps Lambda's
// stated per-minute row. Before billingParty the Spheron offer got 1 s.
func TestOfferBillingRule_AggregatorBillsItself(t *testing.T) {
	for _, c := range []struct {
		source, provider string
		increment        float64
		page             string
	}{
		{"spheron", "runpod", 60, "api-evangelist/spheron"},
		{"shadeform", "runpod", 60, "docs.shadeform.ai"},
		{"runpod", "runpod", 1, "docs.runpod.io"},
		{"skypilot", "lambda", 60, "docs.lambda.ai"},
		{"skypilot", "runpod", 1, "docs.runpod.io"},
	} {
		o := pricewatch.Offer{Source: c.source, Provider: c.provider, OfferID: "x", Mode: pricewatch.ModeOnDemand}
		r := rank.OfferBillingRule(o)
		if r.IncrementSeconds != c.increment || !strings.Contains(r.Terms["increment_seconds"], c.page) {
			t.Errorf("%s offer of %s: increment %v (%s), want %v from %s", c.source, c.provider,
				r.IncrementSeconds, r.Terms["increment_seconds"], c.increment, c.page)
		}
	}
}
