package rank_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/internal/scaletest"
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
		gpus := 1 << r.IntN(4)
		out[i] = pricewatch.Offer{
			Key: pricewatch.OfferKey(src, id, "r1", m), Source: src, Provider: src, OfferID: id, Region: "r1",
			Card: cards[r.IntN(len(cards))], GPUs: gpus, Mode: m,
			RentUnit: pricewatch.RentFixed, GPUCounts: []int{gpus}, PricePerGPUHour: 0.1 + r.Float64()*10,
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

// BenchmarkRerank100k re-ranks 100,000 offers in the real card mix for
// the four built-in workloads from scratch, as a run of a source holding
// them all makes the daemon do (packs built, nothing reused); /pack also
// packs the offers first. Compare with BenchmarkSortFloats400k, run in
// the same process: scripts/bench-scale prints the ratio.
func BenchmarkRerank100k(b *testing.B) {
	cat := normalize.DefaultCatalog()
	ws := rank.BuiltinWorkloads()
	profiles := rank.SeedProfiles(cat, ws)
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	offers, err := scaletest.Offers(50_000, 0, 0, now) // the card mix of the real Vast capture
	if err != nil {
		b.Fatal(err)
	}
	opt := rank.Options{Now: now, ReliabilityFloor: 0.95, Base: "USD",
		StaleAfter: map[string]time.Duration{"vast": 30 * time.Minute},
		Rates:      &pricewatch.Rates{Base: "EUR", Rates: map[string]float64{"USD": 1.0163, "CNY": 6.8095}}}
	packs := rank.PackOffers(offers)
	b.Run("rank", func(b *testing.B) {
		b.ReportAllocs()
		var snap *rank.Snapshot
		for b.Loop() {
			snap = rank.BuildPacks(packs, profiles, ws, cat, opt, nil)
		}
		if len(snap.Best("lora-7b", rank.Filter{})) == 0 {
			b.Fatal("empty ranking")
		}
	})
	b.Run("pack", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rank.Build(offers, profiles, ws, cat, opt)
		}
	})
	// A run of a small source beside the 100k: the next snapshot reuses
	// the big part, and the gate's market (SellerMedians) must not count
	// its 100k rows again.
	b.Run("small-run-market", func(b *testing.B) {
		small := slices.Clone(offers[:4])
		for i := range small {
			small[i].Source, small[i].Key = "matpool", fmt.Sprint("matpool/", i)
		}
		all := append(slices.Clone(packs), rank.PackOffers(small)...)
		prev := rank.BuildPacks(all, profiles, ws, cat, opt, nil)
		prev.SellerMedians()
		b.ReportAllocs()
		for b.Loop() {
			all[len(all)-1] = rank.PackOffers(small)[0]
			next := rank.BuildPacks(all, profiles, ws, cat, opt, prev)
			next.SellerMedians()
			prev = next
		}
	})
	b.Run("best", func(b *testing.B) {
		snap := rank.BuildPacks(packs, profiles, ws, cat, opt, nil)
		b.ReportAllocs()
		for b.Loop() {
			snap.Best("lora-7b", rank.Filter{})
		}
	})
}

// BenchmarkSortFloats400k sorts 400,000 float64s (a copy of the same
// random ones each time): the yardstick of BenchmarkRerank100k.
func BenchmarkSortFloats400k(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	src := make([]float64, 400_000)
	for i := range src {
		src[i] = r.Float64()
	}
	v := make([]float64, len(src))
	b.ReportAllocs()
	for b.Loop() {
		copy(v, src)
		slices.Sort(v)
	}
}

// BenchmarkSeedProfiles fills every card of the catalog × every built-in
// workload with its default profile, as a daemon does at start and on
// every profile change.
func BenchmarkSeedProfiles(b *testing.B) {
	cat := normalize.DefaultCatalog()
	ws := rank.BuiltinWorkloads()
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n = len(rank.SeedProfiles(cat, ws))
	}
	if n == 0 {
		b.Fatal("no profiles")
	}
}
