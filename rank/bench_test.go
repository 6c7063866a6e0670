package rank_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
)

// syntheticOffers spreads n offers over every card, several sources, modes
// and both currencies, with marketplace reliabilities.
func syntheticOffers(n int, cat *normalize.Catalog, at time.Time) []pricewatch.Offer {
	r := rand.New(rand.NewPCG(1, 2))
	cards := cat.IDs()
	modes := []pricewatch.Mode{pricewatch.ModeOnDemand, pricewatch.ModeSpot, pricewatch.ModeMonthly, pricewatch.ModeReserved1Y}
	sources := []string{"vast", "runpod", "azure", "lambda", "autodl"}
	out := make([]pricewatch.Offer, n)
	for i := range out {
		src := sources[i%len(sources)]
		cur := "USD"
		if src == "autodl" {
			cur = "CNY"
		}
		rel := 0.9 + r.Float64()*0.1
		m := modes[r.IntN(len(modes))]
		id := fmt.Sprintf("offer-%d", i)
		out[i] = pricewatch.Offer{
			Key: pricewatch.OfferKey(src, id, "r1", m), Source: src, Provider: src, OfferID: id, Region: "r1",
			Card: cards[r.IntN(len(cards))], GPUs: 1 << r.IntN(4), Mode: m, PricePerGPUHour: 0.1 + r.Float64()*10,
			Currency: cur, Reliability: &rel, FirstSeen: at, ObservedAt: at,
		}
	}
	return out
}

// BenchmarkBuild_100k re-ranks 100,000 offers for the four built-in
// workloads, as every scrape run does.
func BenchmarkBuild_100k(b *testing.B) {
	cat := normalize.DefaultCatalog()
	ws := rank.BuiltinWorkloads()
	profiles := rank.SeedProfiles(cat, ws)
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	offers := syntheticOffers(100_000, cat, now)
	opt := rank.Options{Now: now, ReliabilityFloor: 0.95, Base: "USD",
		StaleAfter: map[string]time.Duration{"vast": time.Hour},
		Rates:      &pricewatch.Rates{Base: "EUR", Rates: map[string]float64{"USD": 1.0163, "CNY": 6.8095}}}
	b.ReportAllocs()
	var snap *rank.Snapshot
	for b.Loop() {
		snap = rank.Build(offers, profiles, ws, cat, opt)
	}
	if len(snap.Best("lora-7b", rank.Filter{})) == 0 {
		b.Fatal("empty ranking")
	}
}
