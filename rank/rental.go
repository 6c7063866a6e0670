package rank

import "github.com/pricewatch/pricewatch"

// Rental is how a workload runs on one rental of an offer: the GPUs billed,
// the GPUs the job runs on and how they work together.
//
// A fixed unit (an instance, a bundle) is rented whole: training shards
// over all of its GPUs (FSDP/ZeRO-3, data parallel), serving runs as many
// copies of the model as whole tensor-parallel groups fit on it. A per-GPU
// offer rents the fewest GPUs it allows that hold the workload. Throughput
// of the rental = Used × tokens/s per GPU × Efficiency.
type Rental struct {
	// GPUs is the GPUs rented and billed.
	GPUs int `json:"gpus"`
	// Used is the GPUs the job runs on (≤ GPUs).
	Used int `json:"gpus_used"`
	// Group is the GPUs that hold one copy of the model: the shards of a
	// training job (all Used GPUs) or a serving tensor-parallel group.
	Group int `json:"group"`
	// Replicas is the copies of the model (serving); 1 for training.
	Replicas int `json:"replicas"`
	// Efficiency is the multi-GPU scaling efficiency applied: the
	// interconnect's (data/scaling.csv) for a training job over Used GPUs;
	// 1 for serving, whose replicas are independent (tensor-parallel
	// communication inside a group is not modelled, THROUGHPUT.md 2.2).
	Efficiency float64 `json:"scaling_efficiency"`
}

// TokensPerSecond is the rental's throughput at perGPU tokens/s per GPU.
func (r Rental) TokensPerSecond(perGPU float64) float64 {
	return float64(r.Used) * perGPU * r.Efficiency
}

// RentalOn lays the workload out on a rental of the offer with at most
// maxGPUs GPUs. The reason is non-empty when no rental of the offer can
// hold it: WhyNoFit (not even maxGPUs GPUs of the card hold it),
// WhyUnitSmall (a fixed unit with too few GPUs) or WhyUnitLarge (every
// rental has more than maxGPUs).
func RentalOn(w Workload, c pricewatch.Card, o pricewatch.Offer, maxGPUs int) (Rental, string) {
	if len(o.GPUCounts) == 0 {
		return Rental{}, WhyNoUnit
	}
	need := MinGPUs(w, c, maxGPUs)
	if need == 0 {
		return Rental{}, WhyNoFit
	}
	n, ok := o.RentCount(need, maxGPUs)
	if !ok {
		if o.GPUCounts[0] > maxGPUs {
			return Rental{}, WhyUnitLarge
		}
		if o.RentUnit == pricewatch.RentFixed {
			return Rental{}, WhyUnitSmall
		}
		return Rental{}, WhyNoFit
	}
	return layout(w, c, n, need), ""
}

// layout runs the workload on n GPUs of which need hold one copy.
func layout(w Workload, c pricewatch.Card, n, need int) Rental {
	if w.Method == MethodServe {
		reps := n / need
		return Rental{GPUs: n, Used: reps * need, Group: need, Replicas: reps, Efficiency: 1}
	}
	return Rental{GPUs: n, Used: n, Group: n, Replicas: 1, Efficiency: ScalingEfficiency(c.InterconnectClass(), n)}
}
