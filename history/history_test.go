package history_test

import (
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/history"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

var t0 = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)

func row(h int, ev store.Event, price float64) store.HistoryRow {
	return store.HistoryRow{At: t0.Add(time.Duration(h) * time.Hour), Event: ev, Card: "RTX-4090", GPUs: 1, PricePerGPUHour: price, Currency: "USD"}
}

func input(rows map[string][]store.HistoryRow, current []pricewatch.Offer, since, until time.Time) history.Input {
	keys := map[string]string{}
	for k := range rows {
		keys[k] = "vast"
	}
	w, _ := rank.WorkloadByName("lora-7b")
	return history.Input{
		Filter: history.Filter{Card: "RTX-4090"}, Rows: rows, Terms: history.TermsFor(keys, current), Workload: &w,
		Catalog: normalize.DefaultCatalog(), Profile: func(c string) (rank.Profile, bool) {
			return rank.Profile{Card: c, TokensPerSecond: 1000, Origin: rank.OriginMeasured}, true
		},
		Convert: func(v float64, _ string) (float64, bool) { return v, true }, Since: since, Until: until,
	}
}

func TestSeries_PointsOnlyAtStoredChanges(t *testing.T) {
	rows := map[string][]store.HistoryRow{
		"vast/a/-/ondemand":    {row(0, store.Appeared, 0.40), row(5, store.Changed, 0.30), row(9, store.Vanished, 0.30)},
		"vast/b/-/ondemand":    {row(1, store.Appeared, 0.35)},
		"vast/c/-/reserved-1y": {row(2, store.Appeared, 0.01)}, // not a default mode
	}
	current := []pricewatch.Offer{{Key: "vast/b/-/ondemand", Source: "vast", Provider: "vast", Kind: pricewatch.KindOffer,
		Mode: pricewatch.ModeOnDemand, RentUnit: pricewatch.RentFixed, GPUCounts: []int{1}, GPUs: 1, Card: "RTX-4090"}}
	in := input(rows, current, t0, t0.Add(24*time.Hour))
	pts := history.Series(in)
	wantAt := []int{0, 1, 5, 9}
	wantPrice := []float64{0.40, 0.35, 0.30, 0.35}
	if len(pts) != len(wantAt) {
		t.Fatalf("points %+v", pts)
	}
	for i, p := range pts {
		if !p.At.Equal(t0.Add(time.Duration(wantAt[i])*time.Hour)) || *p.PricePerGPUHour != wantPrice[i] || p.CostPerMillionTokens == nil {
			t.Errorf("point %d: %+v (want %dh, %v)", i, p, wantAt[i], wantPrice[i])
		}
	}
	// 1e6 / (1000 × 3600) per unit price: 0.30 → 0.0833…
	if c := *pts[2].CostPerMillionTokens; c < 0.0833 || c > 0.0834 || pts[2].Key != "vast/a/-/ondemand" {
		t.Errorf("cost at 5h: %v (%s)", c, pts[2].Key)
	}
	// An empty range: nothing invented.
	in = input(rows, current, t0.Add(2*time.Hour), t0.Add(4*time.Hour))
	if pts := history.Series(in); pts == nil || len(pts) != 0 {
		t.Errorf("empty range: %+v", pts)
	}
	// Before: the state in force at since, at its own change time.
	in.Before = true
	pts = history.Series(in)
	if len(pts) != 1 || !pts[0].At.Equal(t0.Add(time.Hour)) || *pts[0].PricePerGPUHour != 0.35 {
		t.Errorf("before: %+v", pts)
	}
	// A step folds a bucket to its lowest values.
	in = input(rows, current, t0, t0.Add(24*time.Hour))
	in.Step = 24 * time.Hour
	pts = history.Series(in)
	if len(pts) != 1 || *pts[0].PricePerGPUHour != 0.30 || !pts[0].At.Equal(t0) {
		t.Errorf("step 1d: %+v", pts)
	}
}

func TestTermsFor_VanishedOfferTakesItsSourcesTerms(t *testing.T) {
	current := []pricewatch.Offer{
		{Key: "runpod/x/-/spot", Source: "runpod", Provider: "runpod", Mode: pricewatch.ModeSpot, RentUnit: pricewatch.RentPerGPU, GPUCounts: []int{1, 2}},
		{Key: "runpod/y/-/ondemand", Source: "runpod", Provider: "runpod", Mode: pricewatch.ModeOnDemand, RentUnit: pricewatch.RentPerGPU, GPUCounts: []int{1}},
	}
	terms := history.TermsFor(map[string]string{"runpod/gone/-/ondemand": "runpod", "other/z/-/spot": "other"}, current)
	if g := terms["runpod/gone/-/ondemand"]; g.RentUnit != pricewatch.RentPerGPU || g.Mode != pricewatch.ModeOnDemand || g.GPUCounts != nil {
		t.Errorf("gone: %+v", g)
	}
	if o := terms["other/z/-/spot"]; o.RentUnit != pricewatch.RentFixed || o.Mode != pricewatch.ModeSpot {
		t.Errorf("unknown source: %+v", o)
	}
}
