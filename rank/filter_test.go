package rank_test

import (
	"slices"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/rank"
)

// details sets what comes with an offer's GPUs.
func details(o pricewatch.Offer, region, country, link string, vcpus, ram float64) pricewatch.Offer {
	o.Region, o.Country, o.Interconnect, o.VCPUs, o.RAMGB = region, country, link, vcpus, ram
	return o
}

// narrowingOffers: two RTX 4090s, two H100 SXMs and an L40S, with the
// details a narrowing reads. Cards (normalize/data/cards.csv): RTX-4090 24
// GB, PCIe (pcie4-host); H100-80GB-SXM 80 GB, NVLink (nvlink4-switch);
// L40S 48 GB, PCIe (pcie4-p2p).
func narrowingOffers() []pricewatch.Offer {
	od := pricewatch.ModeOnDemand
	return []pricewatch.Offer{
		// 8 vCPUs and 31 GB for its one GPU.
		details(off("runpod", "runpod", "a", "RTX-4090", od, 0.34, "USD"), "", "US", "", 8, 31),
		// A 2-GPU unit with 32 vCPUs and 64 GB: 16 and 32 per GPU.
		details(fixed(off("vast", "vast", "b", "RTX-4090", od, 0.30, "USD"), 2), "", "DE", "", 32, 64),
		// 8 GPUs, 192 vCPUs and 2048 GB: 24 and 256 per GPU; states no link
		// (the card's NVLink applies).
		details(fixed(off("aws", "aws", "c", "H100-80GB-SXM", od, 4.0, "USD"), 8), "us-east-1", "US", "", 192, 2048),
		// States nothing.
		details(off("lambda", "lambda", "d", "L40S", od, 1.0, "USD"), "us-west-1", "", "", 0, 0),
		// States its link as PCIe, nothing else but its country.
		details(off("vast", "vast", "e", "H100-80GB-SXM", od, 3.0, "USD"), "", "CA", "PCIe", 0, 0),
	}
}

// Each narrowing keeps exactly the offers its rule says; the best entry per
// card is then the cheapest of those (prices above).
func TestBest_Narrowing(t *testing.T) {
	snap := build(t, narrowingOffers(), nil)
	key := func(src, id string) string { return pricewatch.OfferKey(src, id, "", pricewatch.ModeOnDemand) }
	a, b, c, d, e := key("runpod", "a"), key("vast", "b"), key("aws", "c"), key("lambda", "d"), key("vast", "e")
	cases := []struct {
		name string
		n    rank.Narrowing
		want []string // best per card, any order
	}{
		{"none", rank.Narrowing{}, []string{b, e, d}},
		{"exclude vast (any case)", rank.Narrowing{ExcludeProviders: []string{"VAST"}}, []string{a, c, d}},
		{"providers", rank.Narrowing{Providers: []string{"lambda", "RunPod"}}, []string{a, d}},
		// d states no country: "in the US" is not met by "unknown".
		{"country us", rank.Narrowing{Countries: []string{"us"}}, []string{a, c}},
		{"region", rank.Narrowing{Regions: []string{"US-EAST-1"}}, []string{c}},
		// c has the card's NVLink; e says PCIe, and that wins over its card.
		{"nvlink", rank.Narrowing{Interconnects: []string{"nvlink"}}, []string{c}},
		{"pcie", rank.Narrowing{Interconnects: []string{"pcie"}}, []string{b, e, d}},
		// 24 GB RTX 4090s fail 40; 80 GB H100 and 48 GB L40S pass.
		{"min memory 40", rank.Narrowing{MinGPUMemoryGB: 40}, []string{e, d}},
		// a: 8/GPU fails, b: 32/2 = 16 passes, c: 192/8 = 24 passes; d, e state none.
		{"min vcpus 10", rank.Narrowing{MinVCPUsPerGPU: 10}, []string{b, c}},
		// a: 31 fails 32, b: 64/2 = 32 passes (at least), c: 256.
		{"min ram 32", rank.Narrowing{MinRAMGBPerGPU: 32}, []string{b, c}},
		{"all at once", rank.Narrowing{ExcludeProviders: []string{"vast"}, Countries: []string{"US"}, MinVCPUsPerGPU: 8}, []string{a, c}},
	}
	for _, tc := range cases {
		got := keys(snap.Best("lora-7b", rank.Filter{Modes: []pricewatch.Mode{pricewatch.ModeOnDemand}, Narrowing: tc.n}))
		slices.Sort(got)
		want := slices.Clone(tc.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: best %v, want %v", tc.name, got, want)
		}
		for _, k := range want {
			f := rank.Filter{Narrowing: tc.n}
			if !snap.Ranked("lora-7b", k, f) {
				t.Errorf("%s: Ranked(%s) false for a kept offer", tc.name, k)
			}
		}
	}
	if snap.Ranked("lora-7b", a, rank.Filter{Narrowing: rank.Narrowing{MinVCPUsPerGPU: 10}}) {
		t.Error("Ranked keeps an offer the narrowing drops")
	}
}

// A per-GPU rental's entry carries the vCPUs and RAM of the GPUs it rents:
// 128 vCPUs and 1024 GB with 8 GPUs, one GPU rented → 16 and 128. The link
// is the card's family when the offer states none.
func TestBest_EntryDetailsScaleWithGPUsRented(t *testing.T) {
	o := perGPU(off("runpod", "runpod", "pg", "A100-80GB-SXM", pricewatch.ModeOnDemand, 1.5, "USD"), 1, 2, 4, 8)
	o.VCPUs, o.RAMGB, o.Country, o.RentURL = 128, 1024, "US", "https://www.runpod.io/console/deploy"
	es := build(t, []pricewatch.Offer{o}, nil).Best("lora-7b", rank.Filter{})
	if len(es) != 1 {
		t.Fatalf("%d entries", len(es))
	}
	e := es[0]
	if e.GPUs != 1 || e.VCPUs != 16 || e.RAMGB != 128 || e.Interconnect != "nvlink" || e.Country != "US" || e.RentURL != o.RentURL {
		t.Errorf("entry renting %d GPUs: vcpus %v ram %v link %q country %q rent %q", e.GPUs, e.VCPUs, e.RAMGB, e.Interconnect, e.Country, e.RentURL)
	}
}

// An offer listing sorts by vCPUs descending with unstated ones last, pages
// by cursor without loss or repeat, and narrows as Best does.
func TestQueryOffers_SortAndNarrowing(t *testing.T) {
	snap := build(t, narrowingOffers(), nil)
	var got []string
	q := rank.OfferQuery{Sort: rank.SortVCPUsDesc, Limit: 2}
	for page := 0; page < 5; page++ {
		offers, total, next := snap.QueryOffers(q)
		if total != 5 {
			t.Fatalf("total %d, want 5", total)
		}
		for _, o := range offers {
			got = append(got, o.OfferID)
		}
		if next == nil {
			break
		}
		q.After = next
	}
	// c 192, b 32, a 8, then d and e (none stated) by key: "lambda/…" < "vast/…".
	if want := []string{"c", "b", "a", "d", "e"}; !slices.Equal(got, want) {
		t.Errorf("by -vcpus: %v, want %v", got, want)
	}
	offers, total, _ := snap.QueryOffers(rank.OfferQuery{Sort: rank.SortRAM, Limit: 10,
		Narrowing: rank.Narrowing{ExcludeProviders: []string{"aws"}, MinRAMGBPerGPU: 1}})
	var ids []string
	for _, o := range offers {
		ids = append(ids, o.OfferID)
	}
	// a 31 GB, b 64 GB (ascending by the offer's RAM); c excluded, d and e state none.
	if want := []string{"a", "b"}; total != 2 || !slices.Equal(ids, want) {
		t.Errorf("narrowed by ram: %v (total %d), want %v", ids, total, want)
	}
}
