package rank

import (
	_ "embed"
	"fmt"
	"sync"
)

//go:embed data/moe_read_rates.csv
var moeReadRatesCSV []byte

// moeReadRatios are data/moe_read_rates.csv: the share of its FP8 rate a
// MoE kernel family reads experts of a weight format at on a card, keyed
// by family, job precision and card id.
var moeReadRatios = sync.OnceValue(func() map[[3]string]float64 {
	m := map[[3]string]float64{}
	for _, r := range readTable(moeReadRatesCSV) {
		key := [3]string{r[0], r[1], r[2]}
		v := tableNum(r[3])
		if !moeKernelFamilies()[r[0]] || v <= 0 || v > 1 || r[6] == "" {
			panic(fmt.Sprintf("rank: moe_read_rates.csv %v: family, ratio in (0, 1] and source required", key))
		}
		if _, dup := m[key]; dup {
			panic(fmt.Sprintf("rank: moe_read_rates.csv %v: two rows", key))
		}
		m[key] = v
	}
	return m
})

// moeReadRatio is how fast the family reads experts of format on the card
// relative to FP8 experts (1 where no timings say otherwise).
func moeReadRatio(family, format, cardID string) float64 {
	if v, ok := moeReadRatios()[[3]string{family, format, cardID}]; ok {
		return v
	}
	return 1
}
