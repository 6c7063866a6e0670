package rank

import (
	"fmt"
	"math"

	"github.com/pricewatch/pricewatch"
)

// SpotPlan is a spot option's checkpointing, planned: the interval that
// minimizes expected cost (Young/Daly: √(2 × write time × mean time
// between reclaims)), the time spent writing checkpoints, the expected
// restarts and work lost, and the reclaim rate at which the option stops
// beating the cheapest on-demand offer of its card.
type SpotPlan struct {
	CheckpointWriteSeconds float64 `json:"checkpoint_write_seconds"`
	// CheckpointIntervalMinutes is 0 when no checkpoint beyond the job's
	// own is needed (no reclaims expected, or the job is shorter than the
	// interval).
	CheckpointIntervalMinutes float64 `json:"checkpoint_interval_minutes"`
	CheckpointHours           float64 `json:"checkpoint_hours"`
	ExpectedRestarts          float64 `json:"expected_restarts"`
	ExpectedLostHours         float64 `json:"expected_lost_hours"`
	// BreakEvenReclaimsPerHour: above this many reclaims per hour the
	// option costs more than the cheapest on-demand offer of the card per
	// GPU-hour (nil without one; 0 when it never beats it). BreakEven says
	// "any" instead when a reclaim costs nothing (no checkpoint to write,
	// no restart time): the cheaper spot price wins at every rate.
	BreakEvenReclaimsPerHour *float64 `json:"break_even_reclaims_per_hour,omitempty"`
	BreakEven                string   `json:"break_even,omitempty"`
	// ReclaimBasis says where the reclaim rate comes from: "spec", the
	// source's band ("band 5-10%"), or the provider table's basis
	// ("default (rank/data/providers.csv)").
	ReclaimBasis string `json:"reclaim_basis"`
	// Availability is a serving option's share of time up between
	// reclaims (1 − rate × restart hours); serving only.
	Availability float64 `json:"availability,omitempty"`
}

// setBreakEven records the break-even reclaim rate (finite) or "any".
func (sp *SpotPlan) setBreakEven(r float64) {
	if math.IsInf(r, 1) {
		sp.BreakEven = "any"
		return
	}
	sp.BreakEvenReclaimsPerHour = &r
}

// YoungDalyInterval is the checkpoint interval that minimizes the expected
// time of a job interrupted rate times an hour, writing a checkpoint in
// write hours: √(2 × write / rate), in hours; +Inf without reclaims.
func YoungDalyInterval(write, rate float64) float64 {
	if rate <= 0 {
		return math.Inf(1)
	}
	return math.Sqrt(2 * write / rate)
}

// SpotBreakEvenRate is the reclaim rate per hour at which a spot price
// spot, checkpointing at the Young/Daly interval (write hours per
// checkpoint, restart hours per reclaim), costs as much per hour of work
// as onDemand: spot × (1 + √(2 × write × r) + r × restart) = onDemand,
// solved for r. 0 when spot is not cheaper at all; +Inf when a reclaim
// costs nothing (write and restart both 0).
func SpotBreakEvenRate(spot, onDemand, write, restart float64) float64 {
	if !(spot > 0) || onDemand <= spot {
		return 0
	}
	c := onDemand/spot - 1 // overhead spot can afford
	a, b := restart, math.Sqrt(2*write)
	if a <= 0 && b <= 0 {
		return math.Inf(1)
	}
	if a == 0 {
		x := c / b
		return x * x
	}
	x := (-b + math.Sqrt(b*b+4*a*c)) / (2 * a) // √r
	return x * x
}

// reclaimRate is the reclaims per hour a spot offer is planned at, and
// where that comes from: the job's own rate, the source's band, else the
// provider's rate in data/providers.csv with its basis (a bid: the
// table's rate for bids, not its spot rate).
func reclaimRate(job Job, o pricewatch.Offer) (float64, string) {
	if job.Hidden.ReclaimsPerHour != nil {
		return *job.Hidden.ReclaimsPerHour, "spec"
	}
	if r, ok := ReclaimsPerHour(o.ReclaimRisk); ok {
		return r, "band " + o.ReclaimRisk
	}
	d := DefaultsFor(o.Provider)
	if o.Bid {
		return d.BidReclaimsPerHour, d.BidBasis + " for bids (rank/data/providers.csv)"
	}
	return d.SpotReclaimsPerHour, d.ReclaimBasis + " (rank/data/providers.csv)"
}

// addSpotLoss plans a spot option's checkpoints at the Young/Daly interval
// from the reclaim rate (reclaimRate) and the job's checkpoint write time,
// and adds the time writing checkpoints and the expected work lost (a
// reclaim loses half an interval and the restart) on the GPUs rented.
// Serving has nothing to checkpoint: a reclaim takes an instance away for
// the restart, so a share rate × restart of its time serves nothing and a
// serving plan rents enough instances to carry the peak without it.
// Without reclaims the option is its price × hours.
func addSpotLoss(opt *Option, job Job, o pricewatch.Offer) {
	rate, basis := reclaimRate(job, o)
	opt.ReclaimsPerHour = rate
	write := job.CheckpointWriteSeconds / 3600
	restart := job.Hidden.RestartMinutes / 60
	sp := &SpotPlan{CheckpointWriteSeconds: job.CheckpointWriteSeconds, ReclaimBasis: basis}
	opt.Spot = sp
	if rate <= 0 {
		return
	}
	if job.Method == MethodServe {
		if !serveThroughReclaims(opt, job, rate, restart) {
			return
		}
	}
	if opt.Hours <= 0 {
		return
	}
	tau := YoungDalyInterval(write, rate)
	sp.ExpectedRestarts = rate * opt.Hours
	switch {
	case write <= 0:
		// Nothing to checkpoint (serving): a reclaim loses the restart only.
		tau = 0
	case tau < opt.Hours:
		sp.CheckpointIntervalMinutes = tau * 60
		sp.CheckpointHours = opt.Hours / tau * write
	default:
		tau = opt.Hours // no checkpoint before the job's own end
	}
	sp.ExpectedLostHours = sp.ExpectedRestarts * (tau/2 + restart)
	unit := opt.UnitPricePerHour
	opt.HiddenCosts["spot_reclaims"] = sp.ExpectedLostHours * unit
	opt.HiddenCosts["checkpoint_writes"] = sp.CheckpointHours * unit
	opt.PessimisticTotalCost += (sp.ExpectedLostHours + sp.CheckpointHours) / PessimisticThroughput * unit
}

// serveThroughReclaims sizes a spot serving option for its downtime: an
// instance is down rate × restart of its hours, so it serves that much
// less (cost per token up by 1/availability) and a serving plan needs
// ceil(peak × headroom / (tokens/s × availability)) instances, each
// reclaimed rate × hours a month. An option reclaimed faster than it
// restarts serves nothing: unfit (false).
func serveThroughReclaims(opt *Option, job Job, rate, restart float64) bool {
	sp := opt.Spot
	avail := 1 - rate*restart
	if avail <= 0 {
		opt.Fits = false
		opt.Reason = fmt.Sprintf("reclaimed %.3g times an hour, each a %.3g-minute restart: it would never serve", rate, restart*60)
		return false
	}
	sp.Availability = avail
	opt.CostPerMillionTokens = CostPerMillionTokens(opt.UnitPricePerHour, opt.TokensPerSecond*avail)
	if sv := opt.Serving; sv != nil {
		sv.Instances = servingInstances(job, opt.TokensPerSecond*avail)
		sv.GPUsNeeded = sv.Instances * opt.GPUs
		sv.CostPerMillionOutputTokens = opt.CostPerMillionTokens
		sv.RestartsPerMonth = rate * job.HoursPerMonth * float64(sv.Instances)
		if job.Tokens <= 0 {
			sp.ExpectedRestarts = sv.RestartsPerMonth
			sp.ExpectedLostHours = sv.RestartsPerMonth * restart
		}
	}
	return true
}
