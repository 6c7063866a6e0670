package rank

import (
	"math"

	"github.com/pricewatch/pricewatch"
)

// Rental is how a workload runs on one rental of an offer: the GPUs billed,
// the GPUs the job runs on and how they work together.
//
// A fixed unit (an instance, a bundle) is rented whole: training shards
// over all of its GPUs (FSDP/ZeRO-3, data parallel), serving runs as many
// copies of the model as whole groups fit on it. A per-GPU offer rents the
// GPUs that serve or train cheapest per token. Throughput of the rental =
// Used × tokens/s per GPU × Efficiency.
type Rental struct {
	// GPUs is the GPUs rented and billed.
	GPUs int `json:"gpus"`
	// Used is the GPUs the job runs on (≤ GPUs).
	Used int `json:"gpus_used"`
	// Group is the GPUs that hold one copy of the model: the shards of a
	// training job (all Used GPUs) or a serving group.
	Group int `json:"group"`
	// Layout is how a serving group splits the model (tensor or pipeline
	// parallel); zero for training.
	Layout Layout `json:"layout"`
	// Replicas is the copies of the model (serving); 1 for training.
	Replicas int `json:"replicas"`
	// Efficiency is the multi-GPU scaling efficiency applied: for a
	// training job over Used GPUs the link model's (TrainingScaling); 1 for
	// serving, whose group's communication is inside its per-GPU figure
	// and whose replicas are independent.
	Efficiency float64 `json:"scaling_efficiency"`
}

// TokensPerSecond is the rental's throughput at perGPU tokens/s per GPU.
func (r Rental) TokensPerSecond(perGPU float64) float64 {
	return float64(r.Used) * perGPU * r.Efficiency
}

// RentalOn lays the workload out on a rental of the offer with at most
// maxGPUs GPUs, with the estimate as its throughput (RentalFor with an
// estimated profile).
func RentalOn(w Workload, c pricewatch.Card, o pricewatch.Offer, maxGPUs int) (Rental, string) {
	r, _, why := RentalFor(w, c, o, maxGPUs, Profile{Origin: OriginEstimated})
	return r, why
}

// RentalFor lays the workload out on a rental of the offer with at most
// maxGPUs GPUs, and says what throughput per GPU the layout has, given the
// profile that applies to the offer.
//
// Training rents the fewest GPUs that hold it (a fixed unit whole) and
// keeps p. Serving with an estimated profile chooses the group, layout and
// GPUs rented that give the most throughput per GPU billed: a larger group
// than the smallest that fits often serves more per GPU (room for a larger
// batch), unless its communication costs more; the profile returned is the
// estimate for that group. A measured or published serving figure is for
// its own group (Profile.GPUs), which is kept.
//
// The reason is non-empty when no rental of the offer can hold it:
// WhyNoFit (not even maxGPUs GPUs of the card hold it), WhyUnitSmall (a
// fixed unit with too few GPUs) or WhyUnitLarge (every rental has more
// than maxGPUs).
func RentalFor(w Workload, c pricewatch.Card, o pricewatch.Offer, maxGPUs int, p Profile) (Rental, Profile, string) {
	return RentalForLoad(w, c, o, maxGPUs, p, 0)
}

// RentalForLoad is RentalFor for a serving load of need tokens/s (peak ×
// headroom; 0: none). With a load, the group and GPUs rented are those
// whose instances carry it on the fewest GPUs billed (for one offer, the
// least cost), a larger group only when it needs fewer GPUs in all: a
// group that serves more per GPU but leaves most of a larger rental idle
// at this load costs more. Ties keep the smaller rental.
func RentalForLoad(w Workload, c pricewatch.Card, o pricewatch.Offer, maxGPUs int, p Profile, need float64) (Rental, Profile, string) {
	if len(o.GPUCounts) == 0 {
		return Rental{}, p, WhyNoUnit
	}
	fewest := MinGPUs(w, c, maxGPUs)
	if fewest == 0 {
		return Rental{}, p, WhyNoFit
	}
	n, ok := o.RentCount(fewest, maxGPUs)
	if !ok {
		if o.GPUCounts[0] > maxGPUs {
			return Rental{}, p, WhyUnitLarge
		}
		if o.RentUnit == pricewatch.RentFixed {
			return Rental{}, p, WhyUnitSmall
		}
		return Rental{}, p, WhyNoFit
	}
	if w.Method != MethodServe {
		return Rental{GPUs: n, Used: n, Group: n, Replicas: 1, Efficiency: TrainingScaling(w, c, n)}, p, ""
	}
	if p.Origin != OriginEstimated {
		g := max(p.GPUs, 1, fewest)
		if m, ok := o.RentCount(g, maxGPUs); ok {
			n = m
		} else {
			g = fewest
		}
		return serveOn(n, g, Layout{TP: g, PP: 1}), p, ""
	}
	// Estimated: every group from the smallest that fits, on the GPUs the
	// offer rents it at, scored by throughput per GPU billed.
	var best Rental
	var bestP Profile
	var bestScore, bestBilled float64
	for g := fewest; g <= maxGPUs; g *= 2 {
		m, ok := o.RentCount(g, maxGPUs)
		if !ok {
			break
		}
		est, lay, ok := estimateServing(w, c, g, Layout{}, calibrated)
		if !ok {
			continue
		}
		r := serveOn(m, g, lay)
		tps := r.TokensPerSecond(est.TokensPerSecond)
		if !(tps > 0) {
			continue
		}
		score := tps / float64(m)
		if need > 0 {
			// GPUs billed to carry the load: fewer wins, a tie keeps the
			// smaller (earlier) rental.
			billed := math.Max(1, math.Ceil(need/tps-1e-9)) * float64(m)
			if bestScore == 0 || billed < bestBilled {
				best, bestP, bestScore, bestBilled = r, est, score, billed
			}
			continue
		}
		if score > bestScore*(1+1e-9) {
			best, bestP, bestScore = r, est, score
		}
	}
	if bestScore <= 0 {
		return Rental{}, p, WhyNoFit
	}
	return best, bestP, ""
}

// serveOn runs as many copies of a serving group of g GPUs on n GPUs as
// fit.
func serveOn(n, g int, l Layout) Rental {
	reps := n / g
	return Rental{GPUs: n, Used: reps * g, Group: g, Layout: l, Replicas: reps, Efficiency: 1}
}
