package rank_test

import (
	"math"
	"slices"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
)

// listIDs pages through a query, limit offers a page, and returns the
// offer ids in listing order and the total of the first page.
func listIDs(t *testing.T, snap *rank.Snapshot, q rank.OfferQuery) ([]string, int) {
	t.Helper()
	var ids []string
	first := -1
	for range 50 {
		page, total, next := snap.QueryOffers(q)
		if first < 0 {
			first = total
		}
		for _, o := range page {
			ids = append(ids, o.OfferID)
		}
		if next == nil {
			return ids, first
		}
		if next.Currency != q.Currency {
			t.Fatalf("cursor in %q, listing in %q", next.Currency, q.Currency)
		}
		q.After = next
	}
	t.Fatal("more than 50 pages")
	return nil, 0
}

// Issue 32: a listing sorts by price converted to one currency. CNY 1.98
// is USD 0.30 at the test rates (EUR base: USD 1.0163, CNY 6.8095), so it
// lists before USD 0.69 — also when one source sells in both currencies
// (its index orders raw numbers, so each currency is merged on its own).
// A currency without a rate lists last. Before the fix the listing
// compared raw numbers: 0.25, 0.5, 0.69, 1.98.
func TestQueryOffers_SortsByConvertedPrice(t *testing.T) {
	od := pricewatch.ModeOnDemand
	offers := []pricewatch.Offer{
		off("alibaba", "alibaba", "cny198", "A10", od, 1.98, "CNY"),
		off("runpod", "runpod", "usd069", "A10", od, 0.69, "USD"),
		off("hetzner", "hetzner", "eur050", "A10", od, 0.50, "EUR"), // USD 0.508
		// One source, two currencies: USD 0.25 < CNY 1.98 (0.296) < USD 0.69.
		off("mixed", "mixed", "m-usd025", "A10", od, 0.25, "USD"),
		off("mixed", "mixed", "m-cny198", "A10", od, 1.981, "CNY"),
		off("mixed", "mixed", "m-usd070", "A10", od, 0.70, "USD"),
		off("nowhere", "nowhere", "gbp001", "A10", od, 0.01, "GBP"), // no rate
	}
	snap := build(t, offers, nil)
	want := []string{"m-usd025", "cny198", "m-cny198", "eur050", "usd069", "m-usd070", "gbp001"}
	for _, limit := range []int{100, 1, 2, 3} {
		got, total := listIDs(t, snap, rank.OfferQuery{Currency: "USD", Limit: limit})
		if !slices.Equal(got, want) || total != len(want) {
			t.Errorf("USD, %d a page: %v (total %d), want %v", limit, got, total, want)
		}
	}
	// The order is the same in any currency; descending reverses the
	// converted ones and keeps the unconvertible last.
	if got, _ := listIDs(t, snap, rank.OfferQuery{Currency: "CNY", Limit: 2}); !slices.Equal(got, want) {
		t.Errorf("CNY: %v, want %v", got, want)
	}
	desc := []string{"m-usd070", "usd069", "eur050", "m-cny198", "cny198", "m-usd025", "gbp001"}
	if got, _ := listIDs(t, snap, rank.OfferQuery{Currency: "EUR", Sort: rank.SortPriceDesc, Limit: 3}); !slices.Equal(got, desc) {
		t.Errorf("EUR -price: %v, want %v", got, desc)
	}
	// Without a currency the raw numbers, as before (kept for callers that
	// list one source or currency).
	raw, _ := listIDs(t, snap, rank.OfferQuery{Limit: 100})
	if raw[0] != "gbp001" || slices.Index(raw, "cny198") < slices.Index(raw, "usd069") {
		t.Errorf("raw order %v", raw)
	}
	// MaxPrice compares converted whole-GPU prices: 0.30 USD keeps the
	// USD 0.25 and both CNY 1.98 (0.2955…), not the GBP one (no rate).
	got, total := listIDs(t, snap, rank.OfferQuery{Currency: "USD", MaxPrice: 0.30, Limit: 1})
	if w := []string{"m-usd025", "cny198", "m-cny198"}; !slices.Equal(got, w) || total != 3 {
		t.Errorf("max 0.30 USD: %v (total %d), want %v", got, total, w)
	}
}

// A cursor says the currency its listing is in, and reads back.
func TestOfferCursor_RoundTrip(t *testing.T) {
	for _, c := range []rank.OfferCursor{
		{Sort: rank.SortPrice, Currency: "USD", Value: 0.2955, Key: "alibaba/x/cn-beijing/ondemand"},
		{Sort: rank.SortRAMDesc, Value: math.Inf(1), Key: "vast/1/Texas, US/spot"},
	} {
		got, err := rank.ParseOfferCursor(c.String())
		if err != nil || *got != c {
			t.Errorf("%+v: read back %+v, %v", c, got, err)
		}
	}
	if _, err := rank.ParseOfferCursor("AA"); err == nil {
		t.Error("a short cursor parsed")
	}
}

// The listing filters of `pricewatch offers` and GET /v1/offers: exact GPU
// count (H100:8), vendor, total GPU memory of the rental, max price.
func TestQueryOffers_ListingFilters(t *testing.T) {
	od := pricewatch.ModeOnDemand
	share := off("vast", "vast", "h100-half", "H100-80GB-SXM", od, 1.2, "USD")
	share.GPUFraction = 0.5 // 2.40 per whole GPU
	snap := build(t, []pricewatch.Offer{
		fixed(off("aws", "aws", "h100x8", "H100-80GB-SXM", od, 2.5, "USD"), 8),
		fixed(off("aws", "aws", "h100x4", "H100-80GB-SXM", od, 2.0, "USD"), 4),
		perGPU(off("runpod", "runpod", "h100pg", "H100-80GB-PCIE", od, 2.2, "USD"), 1, 2, 4, 8),
		perGPU(off("runpod", "runpod", "h100pg2", "H100-80GB-SXM", od, 1.9, "USD"), 1, 2),
		fixed(off("vultr", "vultr", "mi300x8", "MI300X-192GB", od, 1.8, "USD"), 8),
		fixed(off("alibaba", "alibaba", "a10cny", "A10", od, 14.0, "CNY"), 1), // USD 2.09
		share,
	}, nil)
	h100 := rank.CardsNamed(normalize.DefaultCatalog(), "H100")
	cases := []struct {
		name string
		q    rank.OfferQuery
		want []string
	}{
		{"H100:8", rank.OfferQuery{Cards: h100, GPUs: 8}, []string{"h100pg", "h100x8"}},
		{"H100:8 under 2.4", rank.OfferQuery{Cards: h100, GPUs: 8, MaxPrice: 2.4}, []string{"h100pg"}},
		// 2.40 per whole GPU passes 2.4 (at most), not 2.39; it sorts by
		// its share's price (1.20), as its price_per_gpu_hour says.
		{"share at its whole-GPU price", rank.OfferQuery{Card: "H100-80GB-SXM", GPUs: 1, MaxPrice: 2.4}, []string{"h100-half", "h100pg2"}},
		{"share above", rank.OfferQuery{Card: "H100-80GB-SXM", GPUs: 1, MaxPrice: 2.39}, []string{"h100pg2"}},
		{"amd", rank.OfferQuery{Vendor: "AMD"}, []string{"mi300x8"}},
		{"nvidia under 2.1 USD", rank.OfferQuery{Vendor: "nvidia", MaxPrice: 2.1}, []string{"h100pg2", "h100x4", "a10cny"}},
		// 8 × 80 = 640; the per-GPU offer's largest rental (8) reaches it,
		// the 2-GPU one (160) does not; MI300X 8 × 192.
		{"640 GB in all", rank.OfferQuery{MinTotalGPUMemoryGB: 640}, []string{"mi300x8", "h100pg", "h100x8"}},
		{"640 GB of 4 GPUs", rank.OfferQuery{MinTotalGPUMemoryGB: 640, GPUs: 4}, nil},
		{"300 GB of 4 GPUs", rank.OfferQuery{MinTotalGPUMemoryGB: 300, GPUs: 4}, []string{"h100x4", "h100pg"}},
	}
	for _, tc := range cases {
		tc.q.Currency, tc.q.Limit = "USD", 100
		got, total := listIDs(t, snap, tc.q)
		if !slices.Equal(got, tc.want) || total != len(tc.want) {
			t.Errorf("%s: %v (total %d), want %v", tc.name, got, total, tc.want)
		}
	}
}

// CardsNamed reads a card as people write it.
func TestCardsNamed(t *testing.T) {
	cat := normalize.DefaultCatalog()
	for name, want := range map[string][]string{
		// "H100" is every H100 but the NVL: the PCIe and SXM parts and
		// the lower-bound card of offers that name no form factor.
		"H100":          {"H100-80GB", "H100-80GB-PCIE", "H100-80GB-SXM"},
		"h100":          {"H100-80GB", "H100-80GB-PCIE", "H100-80GB-SXM"},
		"h100-80gb-sxm": {"H100-80GB-SXM"},
		// A lower-bound card's id names its family: itself and its parts.
		"H100-80GB":              {"H100-80GB", "H100-80GB-PCIE", "H100-80GB-SXM"},
		"a100 80gb":              {"A100-80GB", "A100-80GB-PCIE", "A100-80GB-SXM"},
		"V100-16GB":              {"V100-16GB", "V100-16GB-FHHL", "V100-16GB-PCIE", "V100-16GB-SXM2"},
		"RTX PRO 6000 Blackwell": {"RTX-PRO-6000-96GB", "RTX-PRO-6000-MAXQ", "RTX-PRO-6000-SERVER", "RTX-PRO-6000-WS"},
		"H100 NVL":               {"H100-94GB-NVL"},
		"RTX4090":                {"RTX-4090"},
		"mi300x":                 {"MI300X-192GB"},
		"nosuchcard":             nil,
		"":                       nil,
	} {
		if got := rank.CardsNamed(cat, name); !slices.Equal(got, want) {
			t.Errorf("%q: %v, want %v", name, got, want)
		}
	}
	if got := rank.Vendors(cat); !slices.Equal(got, []string{"amd", "intel", "nvidia"}) {
		t.Errorf("vendors %v", got)
	}
}

// Regions lists the offers' regions as stated, commas and all.
func TestSnapshot_RegionsOffers(t *testing.T) {
	o := off("vast", "vast", "t", "RTX-4090", pricewatch.ModeOnDemand, 0.4, "USD")
	o.Region = "Texas, US"
	snap := build(t, append(narrowingOffers(), o), nil)
	if got, want := snap.Regions(), []string{"Texas, US", "us-east-1", "us-west-1"}; !slices.Equal(got, want) {
		t.Errorf("regions %v, want %v", got, want)
	}
	offers, _, _ := snap.QueryOffers(rank.OfferQuery{Narrowing: rank.Narrowing{Regions: []string{"texas, us"}}})
	if len(offers) != 1 || offers[0].OfferID != "t" {
		t.Errorf("region Texas, US: %v", offers)
	}
}
