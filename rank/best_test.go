package rank_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
)

var now = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func off(source, provider, id, card string, mode pricewatch.Mode, price float64, cur string) pricewatch.Offer {
	return pricewatch.Offer{Key: pricewatch.OfferKey(source, id, "", mode), Source: source, Provider: provider, OfferID: id,
		Kind: pricewatch.KindOffer, Card: card, GPUs: 1, RentUnit: pricewatch.RentFixed, GPUCounts: []int{1}, RentUnitGPUs: 1,
		Mode: mode, CommitmentHours: mode.CommitmentHours(), PricePerGPUHour: price, UnitPricePerHour: price, Currency: cur,
		ObservedAt: now}
}

// fixed makes an offer a fixed unit of n GPUs at the same price per GPU.
func fixed(o pricewatch.Offer, n int) pricewatch.Offer {
	o.GPUs, o.RentUnit, o.GPUCounts, o.RentUnitGPUs = n, pricewatch.RentFixed, []int{n}, n
	o.UnitPricePerHour = o.PricePerGPUHour * float64(n)
	return o
}

// perGPU makes an offer rentable per GPU in the given counts.
func perGPU(o pricewatch.Offer, counts ...int) pricewatch.Offer {
	o.GPUs, o.RentUnit, o.GPUCounts, o.RentUnitGPUs = counts[len(counts)-1], pricewatch.RentPerGPU, counts, counts[0]
	o.UnitPricePerHour = o.PricePerGPUHour * float64(counts[0])
	return o
}

func build(t *testing.T, offers []pricewatch.Offer, mod func(*rank.Options)) *rank.Snapshot {
	t.Helper()
	cat := normalize.DefaultCatalog()
	ws := rank.BuiltinWorkloads()
	opt := rank.Options{Now: now, ReliabilityFloor: 0.95, Base: "USD",
		Rates: &pricewatch.Rates{Base: "EUR", Rates: map[string]float64{"USD": 1.0163, "CNY": 6.8095}}}
	if mod != nil {
		mod(&opt)
	}
	return rank.Build(offers, rank.SeedProfiles(cat, ws), ws, cat, opt)
}

func keys(es []rank.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Key)
	}
	return out
}

func TestBuild_Eligibility(t *testing.T) {
	low, high := 0.5, 0.99
	shared := off("azure", "azure", "nv6", "A10", pricewatch.ModeOnDemand, 0.1, "USD")
	shared.Shared = true
	unreliable := off("vast", "vast", "v1", "RTX-4090", pricewatch.ModeOnDemand, 0.01, "USD")
	unreliable.Reliability = &low
	reliable := off("vast", "vast", "v2", "RTX-4090", pricewatch.ModeOnDemand, 0.3, "USD")
	reliable.Reliability = &high
	stale := off("lambda", "lambda", "old", "A10", pricewatch.ModeOnDemand, 0.05, "USD")
	stale.ObservedAt = now.Add(-20 * time.Hour)
	unknown := off("vast", "vast", "x", "", pricewatch.ModeOnDemand, 0.01, "USD")
	cny := off("autodl", "autodl", "a", "RTX-4090", pricewatch.ModeOnDemand, 1.98, "CNY")
	feedDup := off("skypilot", "runpod", "rp-feed", "A40", pricewatch.ModeOnDemand, 0.01, "USD")
	direct := off("runpod", "runpod", "rp", "A40", pricewatch.ModeOnDemand, 0.40, "USD")
	feedOnly := off("skypilot", "hyperstack", "hs", "L40S", pricewatch.ModeOnDemand, 1.0, "USD")
	fullOn24 := off("runpod", "runpod", "4090", "RTX-4090", pricewatch.ModeOnDemand, 0.34, "USD")
	// AWS on-demand is scraped directly, and aws-spot prices another mode
	// of the same provider: not a copy.
	awsOD := off("aws", "aws", "g5", "A10G", pricewatch.ModeOnDemand, 1.0, "USD")
	awsSpot := off("aws-spot", "aws", "g5", "A10G", pricewatch.ModeSpot, 0.4, "USD")

	snap := build(t, []pricewatch.Offer{shared, unreliable, reliable, stale, unknown, cny, feedDup, direct, feedOnly, fullOn24, awsOD, awsSpot},
		func(o *rank.Options) { o.StaleAfter = map[string]time.Duration{"lambda": 15 * time.Hour} })
	got := map[string]bool{}
	for _, k := range keys(snap.Entries("lora-7b")) {
		got[k] = true
	}
	for _, c := range []struct {
		o    pricewatch.Offer
		want bool
	}{
		{shared, false}, {unreliable, false}, {reliable, true}, {stale, false}, {unknown, false},
		{cny, true}, {feedDup, false}, {direct, true}, {feedOnly, true}, {fullOn24, true}, {awsOD, true}, {awsSpot, true},
	} {
		if got[c.o.Key] != c.want {
			t.Errorf("%s ranked = %v, want %v", c.o.Key, got[c.o.Key], c.want)
		}
	}
	ex := snap.Excluded("lora-7b")
	for why, n := range map[string]int{rank.WhyShared: 1, rank.WhyReliability: 1, rank.WhyStale: 1, rank.WhyUnknownCard: 1, rank.WhyDuplicate: 1} {
		if ex[why] != n {
			t.Errorf("excluded[%s] = %d, want %d", why, ex[why], n)
		}
	}
	// full-ft-7b does not fit a 24 GB or 48 GB card.
	for _, e := range snap.Entries("full-ft-7b") {
		if e.Card == "RTX-4090" || e.Card == "A40" || e.Card == "L40S" {
			t.Errorf("full-ft-7b ranks %s", e.Key)
		}
	}
	// The CNY offer is compared in USD: 1.98 CNY at the 2022-07-08 rates.
	for _, e := range snap.Entries("lora-7b") {
		if e.Key == cny.Key && (e.OfferCurrency != "CNY" || e.PricePerGPUHour < 0.295 || e.PricePerGPUHour > 0.296) {
			t.Errorf("CNY offer in USD: %+v", e)
		}
	}
}

func TestSnapshot_BestIsDeterministic(t *testing.T) {
	a := off("vast", "vast", "a", "RTX-4090", pricewatch.ModeOnDemand, 0.30, "USD")
	b := off("runpod", "runpod", "b", "RTX-4090", pricewatch.ModeOnDemand, 0.30, "USD")
	c := off("vast", "vast", "c", "RTX-4090", pricewatch.ModeSpot, 0.10, "USD")
	d := off("vast", "vast", "d", "A40", pricewatch.ModeMonthly, 0.05, "USD")
	for range 3 {
		snap := build(t, []pricewatch.Offer{a, b, c, d}, nil)
		best := snap.Best("lora-7b", rank.Filter{Modes: []pricewatch.Mode{pricewatch.ModeOnDemand}})
		// Same cost and price: the source breaks the tie (runpod < vast).
		if len(best) != 1 || best[0].Key != b.Key {
			t.Fatalf("best on-demand = %v", keys(best))
		}
		if best := snap.Best("lora-7b", rank.Filter{}); len(best) != 1 || best[0].Key != c.Key {
			t.Errorf("default modes: %v (monthly must not be considered)", keys(best))
		}
		if best := snap.Best("lora-7b", rank.Filter{Modes: []pricewatch.Mode{pricewatch.ModeMonthly}}); len(best) != 1 || best[0].Key != d.Key || best[0].CommitmentHours != 730 {
			// CommitmentHours comes from the offer: a month is 730 h.
			t.Errorf("monthly: %v", keys(best))
		}
	}
}

// Each offer is ranked at its own unit. lora-7b on an RTX-4090 is 1941.3
// tokens/s per GPU (U 0.544 × 165.2e12 / 46.295e9 FLOPs a token), and
// several GPUs keep TrainingScaling of it (the link model: data parallel,
// adapter gradients only, 0.997 on 8 4090s over PCIe). A fixed bundle of 8
// at 0.30 per GPU-hour costs 2.40 an hour for 8 × 1941.3 × 0.997 tokens/s:
// about 0.0431 per million tokens. A per-GPU offer at 0.35 rents one GPU:
// 0.35e6 / (1941.3 × 3600) = 0.0501; the pair at 0.20 per GPU-hour is
// cheapest, 0.4e6 / (2 × 1941.3 × 0.998 × 3600) = 0.0287.
func TestBest_RanksEachOfferAtItsUnit(t *testing.T) {
	bundle := fixed(off("vast", "vast", "8x4090", "RTX-4090", pricewatch.ModeOnDemand, 0.30, "USD"), 8)
	single := perGPU(off("runpod", "runpod", "4090", "RTX-4090", pricewatch.ModeOnDemand, 0.35, "USD"), 1, 2, 3, 4)
	pair := fixed(off("vast", "vast", "2x4090", "RTX-4090", pricewatch.ModeOnDemand, 0.20, "USD"), 2)
	ref := off("cny-index", "cny-index", "RTX 4090@autodl", "RTX-4090", pricewatch.ModeOnDemand, 1.0, "CNY")
	ref.Kind, ref.RentUnit, ref.GPUCounts, ref.GPUs = pricewatch.KindReference, "", nil, 0
	unknownUnit := off("lambda", "lambda", "shape", "RTX-4090", pricewatch.ModeOnDemand, 0.01, "USD")
	unknownUnit.RentUnit, unknownUnit.GPUCounts = "", nil
	snap := build(t, []pricewatch.Offer{bundle, single, pair, ref, unknownUnit}, nil)
	by := map[string]rank.Entry{}
	for _, e := range snap.Entries("lora-7b") {
		by[e.OfferID] = e
	}
	c, _ := normalize.DefaultCatalog().Card("RTX-4090")
	lora, _ := rank.WorkloadByName("lora-7b")
	one, _ := rank.EstimateOn(lora, c, 1)
	if !near(one.TokensPerSecond, 1941.3, 0.5) {
		t.Fatalf("lora-7b on an RTX 4090: %.1f tok/s, want 1941.3 (worked above)", one.TokensPerSecond)
	}
	eff8, eff2 := rank.TrainingScaling(lora, c, 8), rank.TrainingScaling(lora, c, 2)
	if eff8 < 0.99 || eff8 > 1 || eff2 < eff8 {
		t.Errorf("scaling 8 GPUs %.4f, 2 GPUs %.4f: adapter gradients are 70 MB, want near 1", eff8, eff2)
	}
	tps := one.TokensPerSecond
	b := by["8x4090"]
	if b.GPUs != 8 || b.GPUsUsed != 8 || !near(b.UnitPricePerHour, 2.4, 1e-12) ||
		!near(b.TokensPerSecond, 8*tps*eff8, 1e-6) || !near(b.CostPerMillionTokens, 2.4e6/(8*tps*eff8*3600), 1e-12) {
		t.Errorf("8-GPU bundle: %+v", b)
	}
	s := by["4090"]
	if s.GPUs != 1 || !near(s.CostPerMillionTokens, 0.35e6/(tps*3600), 1e-12) || s.RentUnit != pricewatch.RentPerGPU {
		t.Errorf("per-GPU offer: %+v", s)
	}
	if p := by["2x4090"]; p.GPUs != 2 || !near(p.CostPerMillionTokens, 0.4e6/(2*tps*eff2*3600), 1e-12) {
		t.Errorf("2-GPU bundle: %+v", p)
	}
	if _, ok := by["RTX 4090@autodl"]; ok {
		t.Error("a reference price is ranked")
	}
	if _, ok := by["shape"]; ok {
		t.Error("an offer with no stated unit is ranked")
	}
	ex := snap.Excluded("lora-7b")
	if ex[rank.WhyReference] != 1 || ex[rank.WhyNoUnit] != 1 {
		t.Errorf("excluded %v", ex)
	}
	// Best per card: the pair wins at its unit; with max_gpus=1 only the
	// per-GPU offer is left.
	if best := snap.Best("lora-7b", rank.Filter{}); len(best) != 1 || best[0].OfferID != "2x4090" {
		t.Errorf("best %v", keys(best))
	}
	if best := snap.Best("lora-7b", rank.Filter{MaxGPUs: 1}); len(best) != 1 || best[0].OfferID != "4090" {
		t.Errorf("max_gpus=1: %v", keys(best))
	}
	// full-ft-7b holds 52.9 GiB on one GPU: sharded over 3 × 24 GiB cards
	// it is 17.4 + 0.77 GiB each, within 80% (19.2 GiB); over 2 not. The
	// per-GPU offer rents 3 (1.05 an hour), the 8-bundle all 8, the pair
	// none.
	full := map[string]rank.Entry{}
	for _, e := range snap.Entries("full-ft-7b") {
		full[e.OfferID] = e
	}
	ft, _ := rank.WorkloadByName("full-ft-7b")
	ftOne, _ := rank.EstimateOn(ft, c, 1)
	if e := full["4090"]; e.GPUs != 3 || !near(e.CostPerMillionTokens, 1.05e6/(3*ftOne.TokensPerSecond*rank.TrainingScaling(ft, c, 3)*3600), 1e-9) {
		t.Errorf("full-ft-7b per-GPU: %+v", e)
	}
	if e := full["8x4090"]; e.GPUs != 8 || e.GPUsUsed != 8 {
		t.Errorf("full-ft-7b bundle: %+v", e)
	}
	if _, ok := full["2x4090"]; ok || snap.Excluded("full-ft-7b")[rank.WhyUnitSmall] != 1 {
		t.Errorf("the 2-GPU bundle cannot hold full-ft-7b: %v", snap.Excluded("full-ft-7b"))
	}
	// The reference stays beside the ranking.
	if refs := snap.References("RTX-4090"); len(refs) != 1 || refs[0].OfferID != "RTX 4090@autodl" {
		t.Errorf("references %+v", refs)
	}
}

// Committed modes are priced per used hour at the filter's utilization.
func TestBest_CommittedAtUtilization(t *testing.T) {
	m := off("autodl", "autodl", "m", "RTX-4090", pricewatch.ModeMonthly, 0.20, "USD")
	o := off("runpod", "runpod", "o", "RTX-4090", pricewatch.ModeOnDemand, 0.30, "USD")
	snap := build(t, []pricewatch.Offer{m, o}, nil)
	both := []pricewatch.Mode{pricewatch.ModeOnDemand, pricewatch.ModeMonthly}
	// At full use the month wins (0.20 < 0.30); at 50% it costs 0.40 per
	// used hour and on-demand wins.
	if b := snap.Best("lora-7b", rank.Filter{Modes: both}); len(b) != 1 || b[0].OfferID != "m" || b[0].Utilization != 1 {
		t.Errorf("full use: %+v", b)
	}
	if b := snap.Best("lora-7b", rank.Filter{Modes: both, Utilization: 0.5}); len(b) != 1 || b[0].OfferID != "o" {
		t.Errorf("half use: %+v", b)
	}
	b := snap.Best("lora-7b", rank.Filter{Modes: []pricewatch.Mode{pricewatch.ModeMonthly}, Utilization: 0.5})
	if len(b) != 1 || !near(b[0].PricePerGPUHour, 0.40, 1e-12) || b[0].Utilization != 0.5 {
		t.Errorf("monthly at 50%%: %+v", b)
	}
}

// An offer its source says is out of stock is left out of answers, plans
// and watches by default; asking for any availability brings it back.
func TestBest_UnavailableLeftOutByDefault(t *testing.T) {
	out := off("runpod", "runpod", "out", "RTX-4090", pricewatch.ModeOnDemand, 0.10, "USD")
	out.Available, out.Stock = pricewatch.AvailableNo, "Out of stock"
	in := off("vast", "vast", "in", "RTX-4090", pricewatch.ModeOnDemand, 0.30, "USD")
	in.Available = pricewatch.AvailableYes
	unknown := off("aws", "aws", "unk", "RTX-4090", pricewatch.ModeOnDemand, 0.40, "USD")
	snap := build(t, []pricewatch.Offer{out, in, unknown}, nil)
	if b := snap.Best("lora-7b", rank.Filter{}); len(b) != 1 || b[0].OfferID != "in" || b[0].Available != pricewatch.AvailableYes {
		t.Errorf("default: %+v", b)
	}
	if b := snap.Best("lora-7b", rank.Filter{AnyAvailability: true}); len(b) != 1 || b[0].OfferID != "out" || b[0].Stock != "Out of stock" {
		t.Errorf("any: %+v", b)
	}
	if snap.Excluded("lora-7b")[rank.WhyUnavailable] != 1 {
		t.Errorf("excluded %v", snap.Excluded("lora-7b"))
	}
	for _, e := range snap.Entries("lora-7b") {
		if e.OfferID == "unk" && e.Available != pricewatch.AvailableUnknown {
			t.Errorf("unstated availability reads %q", e.Available)
		}
	}
	job := func(avail string) rank.Job {
		j, err := rank.JobSpec{Workload: "lora-7b", Tokens: 1e7, Available: avail}.Resolve(rank.WorkloadByName, normalize.KnownCurrency, "USD")
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	res, _ := snap.Plan(job(""), nil, normalize.DefaultCatalog())
	for _, o := range res.Options {
		if o.Offer == "out" {
			t.Error("an out-of-stock offer is planned by default")
		}
	}
	res, _ = snap.Plan(job("any"), nil, normalize.DefaultCatalog())
	if len(res.Options) != 3 || res.Options[0].Offer != "out" || res.Options[0].Available != pricewatch.AvailableNo {
		t.Errorf("any: %+v", res.Options)
	}
	if _, err := (rank.JobSpec{Workload: "lora-7b", Tokens: 1, Available: "maybe"}).Resolve(rank.WorkloadByName, normalize.KnownCurrency, "USD"); err == nil || !strings.HasPrefix(err.Error(), "available:") {
		t.Errorf("bad available: %v", err)
	}
}
