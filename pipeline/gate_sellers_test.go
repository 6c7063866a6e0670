package pipeline

import (
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/pricewatch/pricewatch"
)

// The same machine reached through several sources counts once in the
// market: Lambda's H100 sold by Lambda, resold by Shadeform and Prime
// Intellect and listed by SkyPilot's catalog is one vote, "lambda", so a
// market of only that machine cannot judge a newcomer (one seller, fewer
// than minJudges), and with RunPod and Vast beside it there are three
// votes, not six. Without sellerVotes the four keys of one machine were
// four votes and the newcomer was judged by Lambda alone.
func TestMarket_OneVotePerSeller(t *testing.T) {
	cell := bandKey("H100-80GB-SXM", pricewatch.ModeOnDemand)
	lambdaOnly := map[string]float64{
		"lambda":                   2.99,
		"shadeform\x00lambda":      2.99,
		"primeintellect\x00lambda": 3.19,
		"skypilot\x00lambda":       2.99,
	}
	mk := newMarket("newcomer", map[string]map[string]float64{cell: lambdaOnly}, usd)
	if got := slices.Sorted(maps.Keys(mk.medians[cell])); !slices.Equal(got, []string{"lambda"}) {
		t.Errorf("votes %q, want one: lambda", got)
	}
	if r, ok := mk.ratio(cell, 30, "USD", 3); ok {
		t.Errorf("one seller judged a price (ratio %v): the market needs %d sellers", r, minJudges)
	}

	all := maps.Clone(lambdaOnly)
	all["runpod"], all["vast"] = 2.69, 1.90
	mk = newMarket("newcomer", map[string]map[string]float64{cell: all}, usd)
	votes := mk.medians[cell]
	if got := slices.Sorted(maps.Keys(votes)); !slices.Equal(got, []string{"lambda", "runpod", "vast"}) {
		t.Fatalf("votes %q, want lambda, runpod, vast", got)
	}
	// Lambda's vote: the median of 2.99, 2.99, 3.19, 2.99 = 2.99.
	if math.Abs(votes["lambda"]-2.99) > 1e-9 {
		t.Errorf("lambda's vote %v, want 2.99", votes["lambda"])
	}
	if _, ok := mk.ratio(cell, 30, "USD", 3); !ok {
		t.Error("three sellers did not judge")
	}

	// Judged from Lambda's own run, Lambda's machine is left out however it
	// is resold; judged from Shadeform's, only Shadeform's own keys are.
	if got := slices.Sorted(maps.Keys(newMarket("lambda", map[string]map[string]float64{cell: all}, usd).medians[cell])); !slices.Equal(got, []string{"runpod", "vast"}) {
		t.Errorf("seen from lambda: votes %q, want runpod, vast", got)
	}
	sf := newMarket("shadeform", map[string]map[string]float64{cell: all}, usd).medians[cell]
	// Lambda's vote without Shadeform's resale: median of 2.99, 3.19, 2.99.
	if len(sf) != 3 || math.Abs(sf["lambda"]-2.99) > 1e-9 {
		t.Errorf("seen from shadeform: %v", sf)
	}
}

// A first run of an aggregator votes as the clouds behind its offers.
func TestRunSellerMedians(t *testing.T) {
	off := func(provider string, price float64) pricewatch.Offer {
		return pricewatch.Offer{Source: "shadeform", Provider: provider, Card: "H100-80GB-SXM", Mode: pricewatch.ModeOnDemand,
			PricePerGPUHour: price, Currency: "USD"}
	}
	got := runSellerMedians("shadeform", []pricewatch.Offer{off("lambda", 2.99), off("lambda", 3.19), off("verda", 2.79), off("shadeform", 4)}, usd)
	cell := bandKey("H100-80GB-SXM", pricewatch.ModeOnDemand)
	want := map[string]float64{"shadeform\x00lambda": 3.09, "shadeform\x00verda": 2.79, "shadeform": 4}
	if len(got[cell]) != len(want) {
		t.Fatalf("%v, want %v", got[cell], want)
	}
	for k, v := range want {
		if math.Abs(got[cell][k]-v) > 1e-9 {
			t.Errorf("%q: %v, want %v", k, got[cell][k], v)
		}
	}
}
