package rank_test

import (
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
)

var now = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func off(source, provider, id, card string, mode pricewatch.Mode, price float64, cur string) pricewatch.Offer {
	return pricewatch.Offer{Key: pricewatch.OfferKey(source, id, "", mode), Source: source, Provider: provider, OfferID: id,
		Card: card, GPUs: 1, Mode: mode, PricePerGPUHour: price, Currency: cur, ObservedAt: now}
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

	snap := build(t, []pricewatch.Offer{shared, unreliable, reliable, stale, unknown, cny, feedDup, direct, feedOnly, fullOn24},
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
		{cny, true}, {feedDup, false}, {direct, true}, {feedOnly, true}, {fullOn24, true},
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
		best := snap.Best("lora-7b", []pricewatch.Mode{pricewatch.ModeOnDemand}, "")
		// Same cost and price: the source breaks the tie (runpod < vast).
		if len(best) != 1 || best[0].Key != b.Key {
			t.Fatalf("best on-demand = %v", keys(best))
		}
		if best := snap.Best("lora-7b", pricewatch.DefaultModes(), ""); len(best) != 1 || best[0].Key != c.Key {
			t.Errorf("default modes: %v (monthly must not be considered)", keys(best))
		}
		if best := snap.Best("lora-7b", []pricewatch.Mode{pricewatch.ModeMonthly}, ""); len(best) != 1 || best[0].Key != d.Key || best[0].CommitmentHours != 0 {
			// CommitmentHours comes from the offer; synthetic offers leave it 0.
			t.Errorf("monthly: %v", keys(best))
		}
	}
}
