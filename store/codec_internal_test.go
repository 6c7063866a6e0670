package store

import (
	"reflect"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
)

// An offer round-trips through the schema-2 encoding, with and without
// its own storage and egress prices, the bid flag and what comes with
// its GPUs (vCPUs, RAM, disk, link, country, rent page); decoding into a
// reused offer leaves nothing of the previous one behind.
func TestOfferCodec_RoundTrip(t *testing.T) {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rel := 0.97
	bid := pricewatch.Offer{Source: "vast", Provider: "vast", OfferID: "1", Region: "US", Card: "RTX-4090", GPUName: "RTX 4090",
		GPUs: 2, RentUnit: pricewatch.RentFixed, GPUCounts: []int{2}, RentUnitGPUs: 2, UnitPricePerHour: 0.33, Mode: pricewatch.ModeSpot,
		PricePerGPUHour: 0.165, Currency: "USD", Reliability: &rel, Bid: true, StoragePerGBMonth: 0.2, EgressPerGB: 0.0039, MonthlyCapHours: 672, FreeEgressGBMonth: 10240,
		Available: pricewatch.AvailableYes, FirstSeen: at, ObservedAt: at,
		Machine: pricewatch.Machine{VCPUs: 32, RAMGB: 128.5, DiskGB: 500, Interconnect: "pcie", Country: "US", RentURL: "https://cloud.vast.ai/?offer=1"}}
	plain := pricewatch.Offer{Source: "aws", Provider: "aws", OfferID: "p5", Card: "H100-80GB-SXM", GPUs: 8, RentUnit: pricewatch.RentFixed,
		GPUCounts: []int{8}, RentUnitGPUs: 8, Mode: pricewatch.ModeOnDemand, PricePerGPUHour: 6.88, Currency: "USD",
		Available: pricewatch.AvailableUnknown, FirstSeen: at, ObservedAt: at}
	var reused pricewatch.Offer
	for _, o := range []pricewatch.Offer{bid, plain} {
		enc := encodeOffer(nil, &o, time.Time{})
		if err := decodeOffer(enc, &reused, at, nil, false); err != nil {
			t.Fatal(err)
		}
		reused.Source = o.Source // the record's key carries the source
		if !reflect.DeepEqual(reused, o) {
			t.Errorf("round trip:\n got  %+v\n want %+v", reused, o)
		}
	}
}
