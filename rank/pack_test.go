package rank_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/rank"
)

// Every field of an offer survives the pack: a field the pack forgets is an
// offer detail the API, the filters and the exports lose.
func TestPack_OfferRoundTrip(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	rel := 0.98
	offers := []pricewatch.Offer{
		{Key: "vast/1/US/spot", Source: "vast", Provider: "vast", OfferID: "1", Region: "US", Kind: pricewatch.KindOffer,
			Card: "RTX-4090", GPUName: "RTX 4090", GPUs: 2, RentUnit: pricewatch.RentFixed, GPUCounts: []int{2}, RentUnitGPUs: 2,
			UnitPricePerHour: 0.6, Available: pricewatch.AvailableYes, Stock: "2 free", Mode: pricewatch.ModeSpot,
			PricePerGPUHour: 0.3, Currency: "USD", Reliability: &rel, ReclaimRisk: "<5%", URL: "https://console.vast.ai/api/v0/bundles/",
			Bid: true, StoragePerGBMonth: 0.15, EgressPerGB: 0.01, MonthlyCapHours: 720, FreeEgressGBMonth: 100,
			Machine:   pricewatch.Machine{VCPUs: 16, RAMGB: 64, DiskGB: 200, Interconnect: "pcie", Country: "US", RentURL: "https://cloud.vast.ai/create/"},
			FirstSeen: at, ObservedAt: at},
		{Key: "vast/2/-/on-demand", Source: "vast", Provider: "vast", OfferID: "2", Kind: pricewatch.KindOffer,
			Card: "H100-80GB-SXM", GPUName: "H100 SXM", GPUs: 8, RentUnit: pricewatch.RentFixed, GPUCounts: []int{8}, RentUnitGPUs: 8,
			Available: pricewatch.AvailableUnknown, Mode: pricewatch.ModeOnDemand, PricePerGPUHour: 2.1, Currency: "USD",
			FirstSeen: at, ObservedAt: at},
	}
	p := rank.NewPack("vast", offers)
	for i, want := range offers {
		j, ok := p.Find(want.Key)
		if !ok {
			t.Fatalf("offer %d: key %q not in the pack", i, want.Key)
		}
		if got := p.Offer(j); !reflect.DeepEqual(got, want) {
			t.Errorf("offer %d:\n got  %+v\n want %+v", i, got, want)
		}
	}
}

// A pack's rows are in key order whatever order its offers came in, equal
// keys in the order they were added: keys that start each other, share
// long prefixes, differ past their first eight bytes after the common
// prefix or only in bytes below and above 0x80 (the sort compares eight
// bytes as one integer, then whole keys).
func TestPack_SortsKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tails := []string{"", "a", "a\x00", "ab", "abcdefgh", "abcdefgh1", "abcdefgh2", "abcdefgi", "\xff", "\x7f", "b"}
	for round := range 200 {
		n := 1 + r.IntN(40)
		prefix := []string{"", "vast/", "vast/offer-"}[r.IntN(3)]
		offers := make([]pricewatch.Offer, n)
		for i := range offers {
			k := prefix + tails[r.IntN(len(tails))]
			if r.IntN(2) == 0 {
				k += tails[r.IntN(len(tails))]
			}
			offers[i] = pricewatch.Offer{Key: k, Source: "vast", OfferID: fmt.Sprint(i)}
		}
		want := slices.Clone(offers)
		slices.SortStableFunc(want, func(a, b pricewatch.Offer) int { return strings.Compare(a.Key, b.Key) })
		p := rank.NewPack("vast", offers)
		var got []string
		for o := range p.Offers {
			got = append(got, o.Key+" #"+o.OfferID)
		}
		var exp []string
		for _, o := range want {
			exp = append(exp, o.Key+" #"+o.OfferID)
		}
		if !slices.Equal(got, exp) {
			t.Fatalf("round %d: rows\n got  %q\n want %q", round, got, exp)
		}
	}
}
