package scrapers

import (
	"fmt"

	"github.com/pricewatch/pricewatch"
)

// PerGPUUpTo sets o's rent terms for a market that rents a machine's GPUs
// in steps of step GPUs (1: any count): one rental takes step, 2×step, …
// up to most GPUs. When fewer than step GPUs fit, the rent unit stays
// empty: the offer keeps its price and is never ranked.
func PerGPUUpTo(o *pricewatch.Observation, step, most int) {
	o.RentUnit, o.GPUCounts = "", nil
	if step < 1 || most < step {
		return
	}
	o.RentUnit = pricewatch.RentPerGPU
	for n := step; n <= most; n += step {
		o.GPUCounts = append(o.GPUCounts, n)
	}
}

// FreeGPUs sets o's rent terms and availability for a marketplace machine
// of total GPUs of which free can be rented now (free < 0: the source does
// not say). A rental takes 1 up to the free GPUs; a machine with none free
// is kept, not available now, with the counts a rental of it could take
// when its GPUs are free again (1..total), so that available=any can
// still price it; unknown keeps 1..total with availability unknown.
func FreeGPUs(o *pricewatch.Observation, total, free int) {
	total = max(total, 1)
	switch {
	case free < 0:
		PerGPUUpTo(o, 1, total)
		o.Available, o.Stock = "", ""
	case free == 0:
		PerGPUUpTo(o, 1, total)
		o.Available, o.Stock = pricewatch.AvailableNo, "none free"
	default:
		PerGPUUpTo(o, 1, min(free, total))
		o.Available, o.Stock = pricewatch.AvailableYes, fmt.Sprintf("%d of %d GPUs free", min(free, total), total)
	}
}
