package httpapi_test

import (
	"math"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
)

// offersSnapshot ranks a few offers at the ECB rates of the tests (EUR
// base: USD 1.0163, CNY 6.8095).
func offersSnapshot(t *testing.T, offers ...pricewatch.Offer) *rank.Snapshot {
	t.Helper()
	cat := normalize.DefaultCatalog()
	ws := rank.BuiltinWorkloads()
	return rank.Build(offers, rank.SeedProfiles(cat, ws), ws, cat, rank.Options{Now: time.Now(), ReliabilityFloor: 0.95, Base: "USD",
		Rates: &pricewatch.Rates{Base: "EUR", Rates: map[string]float64{"USD": 1.0163, "CNY": 6.8095}}})
}

func offerOf(source, id, card string, price float64, cur string, gpus int) pricewatch.Offer {
	return pricewatch.Offer{Key: pricewatch.OfferKey(source, id, "", pricewatch.ModeOnDemand), Source: source, Provider: source,
		OfferID: id, Kind: pricewatch.KindOffer, Card: card, GPUs: gpus, RentUnit: pricewatch.RentFixed, GPUCounts: []int{gpus},
		RentUnitGPUs: gpus, Mode: pricewatch.ModeOnDemand, PricePerGPUHour: price, UnitPricePerHour: price * float64(gpus),
		Currency: cur, ObservedAt: time.Now()}
}

func listOffers(t *testing.T, snap *rank.Snapshot, query string) *httpapi.OffersResponse {
	t.Helper()
	q, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	oq, err := httpapi.ParseOffersQuery(q, snap, normalize.DefaultCatalog(), nil)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	r, err := httpapi.Offers(snap, oq, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Issue 32: /v1/offers said "cheapest first" but sorted raw numbers, so
// CNY 1.98 (USD 0.30) came after USD 0.69, and currency= was a 400. Now
// it sorts by the price converted to currency (default the base), and
// shows both prices.
func TestOffers_SortsByConvertedPrice(t *testing.T) {
	snap := offersSnapshot(t, offerOf("runpod", "usd", "A10", 0.69, "USD", 1), offerOf("alibaba", "cny", "A10", 1.98, "CNY", 2))
	r := listOffers(t, snap, "")
	if r.Currency != "USD" || len(r.Offers) != 2 || r.Offers[0].OfferID != "cny" {
		t.Fatalf("default listing: currency %q, %d offers, first %+v", r.Currency, len(r.Offers), r.Offers)
	}
	cny := r.Offers[0]
	if c := cny.Converted; c == nil || c.Currency != "USD" || math.Abs(c.PricePerGPUHour-0.2955) > 0.001 ||
		cny.PricePerGPUHour != 1.98 || cny.Currency != "CNY" || c.UnitGPUs != 2 || math.Abs(c.UnitPricePerHour-0.591) > 0.001 ||
		c.OfferUnitPricePerHour != 3.96 {
		t.Errorf("CNY offer: own %v %s, converted %+v", cny.PricePerGPUHour, cny.Currency, cny.Converted)
	}
	r = listOffers(t, snap, "currency=cny")
	if r.Currency != "CNY" || r.Offers[0].OfferID != "cny" || r.Offers[1].Converted.PricePerGPUHour < 4.6 {
		t.Errorf("currency=cny: %s, %+v", r.Currency, r.Offers)
	}
	// A page's cursor carries its currency.
	first := listOffers(t, snap, "limit=1")
	if first.Next == "" {
		t.Fatal("no next page")
	}
	second := listOffers(t, snap, "limit=1&cursor="+url.QueryEscape(first.Next))
	if len(second.Offers) != 1 || second.Offers[0].OfferID != "usd" {
		t.Errorf("second page %+v", second.Offers)
	}
	q, _ := url.ParseQuery("limit=1&currency=EUR&cursor=" + url.QueryEscape(first.Next))
	if _, err := httpapi.ParseOffersQuery(q, snap, normalize.DefaultCatalog(), nil); err == nil || !strings.Contains(err.Error(), "currency") {
		t.Errorf("USD cursor on an EUR listing: %v", err)
	}
}

// Over the fixtures the handler's order is the converted price's, and it
// differs from the raw numbers' (offers in CNY and EUR among USD ones).
func TestOffers_HandlerConvertsOverFixtures(t *testing.T) {
	h := newHarness(t, true)
	code, body := h.get(t, "/v1/offers?kind=offer&limit=10000")
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	r := decode[httpapi.OffersResponse](t, body)
	overtakes := 0
	for i, o := range r.Offers {
		if o.Converted == nil {
			t.Fatalf("%s (%s) has no converted price", o.Key, o.Currency)
		}
		if i == 0 {
			continue
		}
		prev := r.Offers[i-1]
		if o.Converted.PricePerGPUHour < prev.Converted.PricePerGPUHour {
			t.Fatalf("offer %d %s at USD %v after %s at USD %v", i, o.Key, o.Converted.PricePerGPUHour, prev.Key, prev.Converted.PricePerGPUHour)
		}
		if o.Currency != prev.Currency && o.PricePerGPUHour < prev.PricePerGPUHour {
			overtakes++
		}
	}
	if overtakes == 0 {
		t.Error("no offer lists after one with a larger raw number: the fixtures do not test the conversion")
	}
	for _, bad := range []string{"currency=GBP", "max_price=0", "max_price=x", "gpus=0", "gpus=65", "vendor=arm", "min_total_gpu_memory=-5", "card=nosuchcard"} {
		code, body := h.get(t, "/v1/offers?"+bad)
		name, _, _ := strings.Cut(bad, "=")
		if code != 400 || !strings.Contains(string(body), name) {
			t.Errorf("%s: %d %s, want a 400 naming %s", bad, code, body, name)
		}
	}
}

// The filters of `pricewatch offers` on GET /v1/offers: a card by model
// and an exact GPU count (H100:8), max_price in a currency, vendor and
// total GPU memory.
func TestOffers_ListingFiltersOverFixtures(t *testing.T) {
	h := newHarness(t, true)
	cat := normalize.DefaultCatalog()
	list := func(q string) httpapi.OffersResponse {
		t.Helper()
		code, body := h.get(t, "/v1/offers?limit=10000&kind=offer&"+q)
		if code != 200 {
			t.Fatalf("%s: %d %s", q, code, body)
		}
		return decode[httpapi.OffersResponse](t, body)
	}
	all := list("")
	cases := []struct {
		q    string
		keep func(httpapi.OfferStatus, pricewatch.Card) bool
	}{
		{"card=h100&gpus=8&max_price=3", func(o httpapi.OfferStatus, c pricewatch.Card) bool {
			return normalize.FamilyModel(c) == "H100" && slices.Contains(o.GPUCounts, 8) && o.Converted.PricePerGPUHour <= 3 && o.Converted.UnitGPUs == 8
		}},
		{"max_price=20&currency=CNY", func(o httpapi.OfferStatus, _ pricewatch.Card) bool {
			w := o.Converted.PricePerGPUHour
			if o.Converted.WholeGPUPricePerHour != nil {
				w = *o.Converted.WholeGPUPricePerHour
			}
			return o.Converted.Currency == "CNY" && w <= 20
		}},
		{"vendor=AMD", func(_ httpapi.OfferStatus, c pricewatch.Card) bool { return c.Vendor == "AMD" }},
		{"vendor=nvidia", func(_ httpapi.OfferStatus, c pricewatch.Card) bool { return c.Vendor == "NVIDIA" }},
		{"min_total_gpu_memory=1000", func(o httpapi.OfferStatus, c pricewatch.Card) bool {
			n := o.Converted.UnitGPUs
			return c.MemoryGB*float64(n) >= 1000 && (len(o.GPUCounts) == 0 || o.GPUCounts[len(o.GPUCounts)-1] >= n)
		}},
		{"min_total_gpu_memory=640&gpus=8", func(o httpapi.OfferStatus, c pricewatch.Card) bool {
			return c.MemoryGB*8 >= 640 && slices.Contains(o.GPUCounts, 8)
		}},
	}
	for _, tc := range cases {
		r := list(tc.q)
		if r.Count == 0 || r.Count == all.Count {
			t.Errorf("%s: %d of %d offers: the filter changed nothing", tc.q, r.Count, all.Count)
		}
		for _, o := range r.Offers {
			c, _ := cat.Card(o.Card)
			if !tc.keep(o, c) {
				t.Errorf("%s: kept %s (%s, %v GPUs %v, %v %s)", tc.q, o.Key, o.Card, o.GPUCounts, o.Converted, o.PricePerGPUHour, o.Currency)
			}
		}
	}
	// Every H100 but the NVL: the PCIe and SXM parts and the lower-bound
	// card of offers that state no form factor (DigitalOcean's, Paperspace's).
	h100 := list("card=H100")
	if !slices.Equal(h100.Cards, []string{"H100-80GB", "H100-80GB-PCIE", "H100-80GB-SXM"}) {
		t.Errorf("card=H100 lists %v", h100.Cards)
	}
}

// Issue 32: regions are exact names (Vast's "Texas, US" holds a comma),
// "|"-separated or repeated; an unknown region is a 400 naming the nearest
// known ones on /v1/offers and /v1/best (it was an empty answer with 200).
func TestOffers_RegionsByExactName(t *testing.T) {
	h := newHarness(t, true)
	regionsOf := func(path string) map[string]int {
		t.Helper()
		code, body := h.get(t, path)
		if code != 200 {
			t.Fatalf("%s: %d %s", path, code, body)
		}
		seen := map[string]int{}
		for _, o := range decode[httpapi.OffersResponse](t, body).Offers {
			seen[o.Region]++
		}
		return seen
	}
	texas := regionsOf("/v1/offers?limit=10000&region=" + url.QueryEscape("Texas, US"))
	if len(texas) != 1 || texas["Texas, US"] == 0 {
		t.Errorf("region=Texas, US lists regions %v", texas)
	}
	for _, q := range []string{"region=" + url.QueryEscape("texas, us|California, US"), "region=" + url.QueryEscape("Texas, US") + "&region=" + url.QueryEscape("California, US")} {
		got := regionsOf("/v1/offers?limit=10000&" + q)
		if len(got) != 2 || got["Texas, US"] != texas["Texas, US"] || got["California, US"] == 0 {
			t.Errorf("%s lists regions %v", q, got)
		}
	}
	// The older comma-separated list of plain names still reads as a list.
	if got := regionsOf("/v1/offers?limit=10000&region=us-east-1,us-central1"); len(got) != 2 {
		t.Errorf("region=us-east-1,us-central1 lists regions %v", got)
	}
	code, body := h.get(t, "/v1/best?workload=lora-7b&region="+url.QueryEscape("Texas, US"))
	if code != 200 {
		t.Errorf("/v1/best region=Texas, US: %d %s", code, body)
	}
	for _, tc := range []struct{ region, near string }{{"Texas", `"Texas, US"`}, {"us-east-1x", `"us-east-1"`}, {"Texas, USA", `"Texas, US"`}} {
		for _, path := range []string{"/v1/offers?region=", "/v1/best?workload=lora-7b&region="} {
			code, body := h.get(t, path+url.QueryEscape(tc.region))
			e := decode[struct{ Error string }](t, body)
			if code != 400 || !strings.Contains(e.Error, "region") || !strings.Contains(e.Error, tc.near) {
				t.Errorf("%s%s: %d %s, want a 400 naming %s", path, tc.region, code, e.Error, tc.near)
			}
		}
	}
}

// A blank region (a form's empty field) filters nothing; an empty item
// between separators is a 400.
func TestOffers_BlankRegion(t *testing.T) {
	h := newHarness(t, true)
	for _, path := range []string{"/v1/offers?region=", "/v1/best?workload=lora-7b&region="} {
		if code, body := h.get(t, path); code != 200 {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
	if code, body := h.get(t, "/v1/offers?region="+url.QueryEscape("Texas, US||us-east-1")); code != 400 || !strings.Contains(string(body), "empty") {
		t.Errorf("an empty item: %d %s", code, body)
	}
}
