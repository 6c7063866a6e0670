package history

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// rescanSeries is the series as it was computed before the book: at each
// change time every key is sorted and re-priced. It is kept here as the
// reference the incremental book must equal point for point.
func rescanSeries(in Input) []Point {
	modes := in.Modes
	if len(modes) == 0 {
		modes = pricewatch.DefaultModes()
	}
	type event struct {
		at  time.Time
		key string
		row store.HistoryRow
	}
	var evs []event
	for key, rows := range in.Rows {
		t, ok := in.Terms[key]
		if !ok || (in.Source != "" && t.Source != in.Source) || !slices.Contains(modes, modeOf(key, t)) {
			continue
		}
		for _, r := range rows {
			if in.Card != "" && r.Card != in.Card {
				r = store.HistoryRow{At: r.At, Event: store.Vanished}
			}
			evs = append(evs, event{at: r.At, key: key, row: r})
		}
	}
	slices.SortStableFunc(evs, func(a, b event) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	state := map[string]store.HistoryRow{}
	out := []Point{}
	var prior *Point
	for i := 0; i < len(evs); {
		at := evs[i].at
		for ; i < len(evs) && evs[i].at.Equal(at); i++ {
			state[evs[i].key] = evs[i].row
		}
		switch {
		case at.Before(in.Since):
			if in.Before && (i == len(evs) || !evs[i].at.Before(in.Since)) {
				p := rescanBest(in, state, at)
				prior = &p
			}
		case !at.After(in.Until):
			out = append(out, rescanBest(in, state, at))
		}
	}
	if in.Step > 0 {
		out = bucket(out, in.Step)
	}
	if prior != nil {
		out = append([]Point{*prior}, out...)
	}
	return out
}

func rescanBest(in Input, state map[string]store.HistoryRow, at time.Time) Point {
	p := Point{At: at}
	keys := make([]string, 0, len(state))
	for k := range state {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		r := state[k]
		t := in.Terms[k]
		if r.Event == store.Vanished || r.Card == "" || t.Reference() || t.Shared ||
			(!in.AnyAvailability && r.Available == pricewatch.AvailableNo) {
			continue
		}
		price, ok := in.Convert(r.PricePerGPUHour, r.Currency)
		if !ok {
			continue
		}
		p.Offers++
		if p.PricePerGPUHour == nil || price < *p.PricePerGPUHour {
			p.PricePerGPUHour, p.PriceKey = &price, k
		}
		if in.Workload == nil {
			continue
		}
		cost, gpus, ok := costOf(in, t, r, price)
		if ok && (p.CostPerMillionTokens == nil || cost < *p.CostPerMillionTokens) {
			p.CostPerMillionTokens, p.Key, p.Card, p.GPUs, p.UnitPricePerHour = &cost, k, r.Card, gpus, price*float64(gpus)
		}
	}
	return p
}

// TestSeries_BookEqualsRescan compares the incremental series with the
// rescan on random histories: prices drawn from a few values (so ties
// between keys happen), offers vanishing and coming back, out of stock,
// another card's rows, an unconvertible currency, two modes, a step and
// the carried first point. Before the book kept versions (a stale heap
// item was taken for the live one) it failed with a point naming a key at
// its superseded price.
func TestSeries_BookEqualsRescan(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	w, _ := rank.WorkloadByName("lora-7b")
	prices := []float64{0.30, 0.35, 0.40, 0.40, 0.55}
	cards := []string{"RTX-4090", "RTX-4090", "RTX-4090", "L40S"}
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 1))
		rows := map[string][]store.HistoryRow{}
		keys := map[string]string{}
		var current []pricewatch.Offer
		for k := range 3 + r.IntN(12) {
			mode := []string{"ondemand", "spot", "reserved-1y"}[r.IntN(3)]
			key := fmt.Sprintf("vast/%d/-/%s", k, mode)
			keys[key] = "vast"
			h := 0
			for range 1 + r.IntN(8) {
				h += r.IntN(5)
				ev := store.Changed
				if len(rows[key]) == 0 {
					ev = store.Appeared
				} else if r.IntN(6) == 0 {
					ev = store.Vanished
				}
				cur := "USD"
				if r.IntN(15) == 0 {
					cur = "XXX"
				}
				avail := pricewatch.AvailableYes
				if r.IntN(7) == 0 {
					avail = pricewatch.AvailableNo
				}
				rows[key] = append(rows[key], store.HistoryRow{At: t0.Add(time.Duration(h) * time.Hour), Event: ev,
					Card: cards[r.IntN(len(cards))], GPUs: 1 + r.IntN(2), PricePerGPUHour: prices[r.IntN(len(prices))],
					Currency: cur, Available: avail})
			}
			if r.IntN(2) == 0 {
				current = append(current, pricewatch.Offer{Key: key, Source: "vast", Provider: "vast", Kind: pricewatch.KindOffer,
					Mode: pricewatch.Mode(mode), RentUnit: pricewatch.RentPerGPU, GPUCounts: []int{1, 2}, GPUs: 2, Card: "RTX-4090"})
			}
		}
		in := Input{Filter: Filter{Card: "RTX-4090", AnyAvailability: seed%3 == 0}, Rows: rows, Terms: TermsFor(keys, current),
			Catalog: normalize.DefaultCatalog(),
			Profile: func(c string) (rank.Profile, bool) {
				return rank.Profile{Card: c, TokensPerSecond: 1000, Origin: rank.OriginMeasured}, true
			},
			Convert: func(v float64, cur string) (float64, bool) { return v, cur == "USD" },
			Since:   t0.Add(time.Duration(r.IntN(10)) * time.Hour), Until: t0.Add(30 * time.Hour), Before: seed%2 == 0}
		if seed%4 != 1 {
			in.Workload = &w
		}
		if seed%5 == 0 {
			in.Step = 24 * time.Hour
		}
		if got, want := Series(in), rescanSeries(in); !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d:\n got %s\nwant %s", seed, show(got), show(want))
		}
	}
}

func show(ps []Point) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "\n  %s offers=%d", p.At.Format("15:04:05.000"), p.Offers)
		if p.PricePerGPUHour != nil {
			fmt.Fprintf(&b, " price=%v(%s)", *p.PricePerGPUHour, p.PriceKey)
		}
		if p.CostPerMillionTokens != nil {
			fmt.Fprintf(&b, " cost=%.5f(%s,%d,%v)", *p.CostPerMillionTokens, p.Key, p.GPUs, p.UnitPricePerHour)
		}
	}
	return b.String()
}
