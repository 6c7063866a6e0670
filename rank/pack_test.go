package rank_test

import (
	"reflect"
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
			Machine: pricewatch.Machine{VCPUs: 16, RAMGB: 64, DiskGB: 200, Interconnect: "pcie", Country: "US", RentURL: "https://cloud.vast.ai/create/"},
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
