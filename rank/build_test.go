package rank_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
)

// A build evaluates each shape (card, GPU counts, rent unit) once per
// workload for all its parts: a source ranked beside others must get the
// entries and exclusions it gets ranked alone, also when one provider has
// its own measurement (its rows are not shapes) and the sources share
// cards, counts and rent units. Seen failing with the card left out of the
// shared key (entries of one card priced at another's throughput).
func TestBuild_SharedShapesMatchSoloParts(t *testing.T) {
	cat := normalize.DefaultCatalog()
	ws := rank.BuiltinWorkloads()
	cards := cat.IDs()
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	profiles := rank.SeedProfiles(cat, ws)
	for _, w := range ws {
		profiles = append(profiles, rank.Profile{Card: cards[0], Workload: w.Name, TokensPerSecond: 1234, Origin: rank.OriginMeasured, Provider: "runpod"})
	}
	opt := rank.Options{Now: now, ReliabilityFloor: 0.95, Base: "USD",
		Rates: &pricewatch.Rates{Base: "EUR", Rates: map[string]float64{"USD": 1.0163, "CNY": 6.8095}}}
	sources := []string{"vast", "runpod", "autodl"}
	units := []pricewatch.RentUnit{pricewatch.RentFixed, pricewatch.RentPerGPU}
	countSets := [][]int{{1}, {2}, {8}, {1, 2, 4, 8}, {2, 4}}
	for seed := range uint64(5) {
		r := rand.New(rand.NewPCG(seed, 9))
		var offers []pricewatch.Offer
		for i := range 3000 {
			src := sources[r.IntN(len(sources))]
			cur := "USD"
			if src == "autodl" {
				cur = "CNY"
			}
			counts := countSets[r.IntN(len(countSets))]
			m := pricewatch.Modes()[r.IntN(len(pricewatch.Modes()))]
			id := fmt.Sprint(i)
			offers = append(offers, pricewatch.Offer{
				Key: pricewatch.OfferKey(src, id, "r1", m), Source: src, Provider: src, OfferID: id, Region: "r1",
				Card: cards[r.IntN(min(len(cards), 12))], GPUs: counts[0], Mode: m, RentUnit: units[r.IntN(2)], GPUCounts: counts,
				PricePerGPUHour: 0.1 + r.Float64()*5, Currency: cur, FirstSeen: now, ObservedAt: now,
			})
		}
		packs := rank.PackOffers(offers)
		all := rank.BuildPacks(packs, profiles, ws, cat, opt, nil)
		for _, w := range ws {
			bySource := map[string][]rank.Entry{}
			for _, e := range all.Entries(w.Name) {
				bySource[e.Source] = append(bySource[e.Source], e)
			}
			ex := rank.Exclusions{}
			for _, p := range packs {
				solo := rank.BuildPacks([]*rank.Pack{p}, profiles, ws, cat, opt, nil)
				if got, want := bySource[p.Source()], solo.Entries(w.Name); !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d, %s, %s: %d entries beside the others, %d alone (first: %+v vs %+v)",
						seed, w.Name, p.Source(), len(got), len(want), first(got), first(want))
				}
				for k, n := range solo.Excluded(w.Name) {
					ex[k] += n
				}
			}
			if got := all.Excluded(w.Name); !reflect.DeepEqual(got, ex) {
				t.Fatalf("seed %d, %s: exclusions %v, sum of the parts alone %v", seed, w.Name, got, ex)
			}
		}
	}
}

func first(es []rank.Entry) any {
	if len(es) == 0 {
		return nil
	}
	return es[0]
}
