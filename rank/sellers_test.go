package rank_test

import (
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/rank"
)

// SellerMedians splits each source's median by the seller behind its
// offers: Lambda's own offer votes under "lambda", Shadeform's resale of it
// under "shadeform\x00lambda", and SkyPilot's catalog rows once per cloud.
// SourceMedians, one vote per source, merges SkyPilot's clouds.
func TestSnapshot_SellerMedians(t *testing.T) {
	od := pricewatch.ModeOnDemand
	s := build(t, []pricewatch.Offer{
		off("lambda", "lambda", "gpu_1x_h100", "H100-80GB-SXM", od, 2.99, "USD"),
		off("shadeform", "lambda", "lambdalabs/H100", "H100-80GB-SXM", od, 3.09, "USD"),
		off("shadeform", "shadeform", "own/H100", "H100-80GB-SXM", od, 3.50, "USD"),
		off("skypilot", "lambda", "lambda/gpu_1x_h100", "H100-80GB-SXM", od, 2.99, "USD"),
		off("skypilot", "runpod", "runpod/1x_H100", "H100-80GB-SXM", od, 2.69, "USD"),
		off("skypilot", "runpod", "runpod/2x_H100", "H100-80GB-SXM", od, 2.79, "USD"),
	}, nil)
	cell := "H100-80GB-SXM\x00ondemand"
	got := s.SellerMedians()[cell]
	want := map[string]float64{
		"lambda":              2.99,
		"shadeform\x00lambda": 3.09,
		"shadeform":           3.50,
		"skypilot\x00lambda":  2.99,
		"skypilot\x00runpod":  2.74, // median of 2.69 and 2.79
	}
	if len(got) != len(want) {
		t.Fatalf("votes %v, want %v", got, want)
	}
	for k, v := range want {
		if !near(got[k], v, 1e-9) {
			t.Errorf("%q: %v, want %v", k, got[k], v)
		}
	}
	if src := s.SourceMedians()[cell]; len(src) != 3 || !near(src["skypilot"], 2.79, 1e-9) {
		t.Errorf("SourceMedians %v, want lambda, shadeform and skypilot (median of 2.69, 2.79, 2.99)", src)
	}
	for _, c := range []struct{ src, prov, key string }{{"vast", "", "vast"}, {"vast", "vast", "vast"}, {"spheron", "verda", "spheron\x00verda"}} {
		k := rank.VoteKey(c.src, c.prov)
		if src, seller := rank.SplitVoteKey(k); k != c.key || src != c.src || seller != map[bool]string{true: c.src, false: c.prov}[c.prov == "" || c.prov == c.src] {
			t.Errorf("VoteKey(%q, %q) = %q (split %q %q)", c.src, c.prov, k, src, seller)
		}
	}
}
