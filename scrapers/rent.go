package scrapers

import "github.com/pricewatch/pricewatch"

// PerGPUUpTo sets o's rent terms for a market that rents a machine's GPUs
// in steps of step GPUs (1: any count): one rental takes step, 2×step, …
// up to most GPUs, the most one rental can take now (the machine's free
// GPUs). When fewer than step GPUs are free nothing can be rented now, and
// the rent unit stays empty: the offer keeps its price and is never ranked.
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
