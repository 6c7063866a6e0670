package rank

import (
	"math"

	"github.com/pricewatch/pricewatch"
)

// ServingPlan is a serving option's fleet for the job's load: how many
// rentals of the option's unit carry the peak with ServingHeadroom (one
// without a peak), what they bill a month and over the job's months, and
// the margin left.
type ServingPlan struct {
	Instances                  int     `json:"instances"`
	GPUsNeeded                 int     `json:"gpus_needed"`
	MonthlyCost                float64 `json:"monthly_cost"`
	CostPerMillionOutputTokens float64 `json:"cost_per_million_output_tokens"`
	// BilledHoursPerMonth is the hours each instance bills in the month
	// (the job's hours, up to the provider's monthly cap); a spot plan's
	// RestartsPerMonth is the reclaims expected over all its instances.
	BilledHoursPerMonth float64 `json:"billed_hours_per_month"`
	RestartsPerMonth    float64 `json:"restarts_per_month,omitempty"`
	// Months is the period the option's total_cost bills; FirstInvoice is
	// the first month's bill (a month of the fleet, its start-up, the
	// month's storage and egress; a commitment's first month of hours).
	Months       float64 `json:"months"`
	FirstInvoice float64 `json:"first_invoice"`
	// CapacityTokensPerSecond is what the instances serve together (a spot
	// fleet: while up); HeadroomPct how far that is above the peak.
	CapacityTokensPerSecond float64 `json:"capacity_tokens_per_second"`
	HeadroomPct             float64 `json:"headroom_pct,omitempty"`
	// CostPerMillionTokensAtLoad is the month's cost over the tokens the
	// load asks for in the month (peak all its hours, or base and peak),
	// not over what the fleet could serve.
	CostPerMillionTokensAtLoad float64 `json:"cost_per_million_tokens_at_load,omitempty"`
	// SequencesPerInstance is the concurrent sequences each serving group
	// runs (fewer than the engine's batch when a service level asks);
	// TTFTms and TPOTms the latencies there, at the service level's
	// percentile (else the median). Estimated throughput only.
	SequencesPerInstance float64 `json:"sequences_per_instance,omitempty"`
	TTFTms               float64 `json:"ttft_ms,omitempty"`
	TPOTms               float64 `json:"tpot_ms,omitempty"`
}

// servingLatencyOn is the sequences a rental's serving group runs and
// its latencies in ms, from the estimate (zeros when there is none).
func servingLatencyOn(w Workload, c pricewatch.Card, r Rental) (seqs, ttft, tpot float64) {
	_, _, res, ok := servingEstimate(w, c, max(r.Group, 1), r.Layout, calibrated)
	if !ok {
		return 0, 0, 0
	}
	s, _, _ := servingCaseFor(w, c, calibrated)
	t, p := sloLatency(res, s, float64(max(r.Group, 1)), w.SLO.Percentile)
	return res.seqs, t * 1000, p * 1000
}

// servingInstances is the rentals of tokensPerSecond each that carry the
// job's peak with ServingHeadroom; one when the job names no peak.
func servingInstances(job Job, tokensPerSecond float64) int {
	if job.PeakTokensPerSecond <= 0 || !(tokensPerSecond > 0) {
		return 1
	}
	return max(1, int(math.Ceil(job.PeakTokensPerSecond*ServingHeadroom/tokensPerSecond-1e-9)))
}

// loadTokensPerMonth is the output tokens the job's load asks for in a
// month: the peak rate all its hours, or the base rate off peak and the
// peak rate for its peak hours a day.
func loadTokensPerMonth(job Job) float64 {
	if job.BaseTokensPerSecond > 0 {
		peakH := job.PeakHoursPerDay / 24 * job.HoursPerMonth
		return 3600 * (job.BaseTokensPerSecond*(job.HoursPerMonth-peakH) + job.PeakTokensPerSecond*peakH)
	}
	return 3600 * job.PeakTokensPerSecond * job.HoursPerMonth
}

// settleServing turns a fitting serving option's month into the bill for
// the job's months: ComputeCost is the fleet's GPU time over the period (a
// commitment: its whole periods), the hidden costs are start-up once per
// instance and each month's storage and egress, and TotalCost is their sum
// (compute + hidden = total, as for every option). The pessimistic total
// rents the instances that carry the peak at PessimisticThroughput.
func settleServing(opt *Option, job Job) {
	sv := opt.Serving
	if sv == nil || job.Tokens > 0 || !opt.Fits {
		return
	}
	inst, months, unit := float64(sv.Instances), job.Months, opt.UnitPricePerHour
	storageEgress := opt.HiddenCosts["storage"] + opt.HiddenCosts["egress"]
	fleetMonth := sv.MonthlyCost - storageEgress // GPU time of a month
	compute := fleetMonth * months
	firstCompute := fleetMonth
	opt.Hours = job.HoursPerMonth * months
	opt.BilledHours = sv.BilledHoursPerMonth * months
	if opt.PeriodHours > 0 {
		// A commitment bills whole periods of every instance, at least one,
		// however short the job: a year reserved for a month is the year.
		hours := pricewatch.HoursPerMonth * months
		opt.PeriodsBilled = max(1, int(math.Ceil(hours/opt.PeriodHours-1e-9)))
		opt.BilledHours = float64(opt.PeriodsBilled) * opt.PeriodHours
		opt.UnusedHours = opt.BilledHours - hours
		compute = float64(opt.PeriodsBilled) * opt.PeriodPrice * inst
		// Billed month by month (no upfront payment): the first invoice is
		// a month of the commitment, or the whole of a shorter period.
		firstCompute = unit * inst * min(opt.PeriodHours, pricewatch.HoursPerMonth)
		if opt.PeriodHours < pricewatch.HoursPerMonth {
			firstCompute = unit * inst * opt.PeriodHours * math.Ceil(pricewatch.HoursPerMonth/opt.PeriodHours-1e-9)
		}
	}
	opt.ComputeCost = compute
	opt.HiddenCosts["startup"] *= inst
	opt.HiddenCosts["storage"] *= months
	opt.HiddenCosts["egress"] *= months
	hidden := 0.0
	for _, v := range opt.HiddenCosts {
		hidden += v
	}
	opt.TotalCost = compute + hidden
	sv.FirstInvoice = firstCompute + opt.HiddenCosts["startup"] + storageEgress
	avail := 1.0
	if opt.Spot != nil && opt.Spot.Availability > 0 {
		avail = opt.Spot.Availability
	}
	sv.CapacityTokensPerSecond = inst * opt.TokensPerSecond * avail
	if job.PeakTokensPerSecond > 0 {
		sv.HeadroomPct = (sv.CapacityTokensPerSecond/job.PeakTokensPerSecond - 1) * 100
		if t := loadTokensPerMonth(job); t > 0 {
			sv.CostPerMillionTokensAtLoad = sv.MonthlyCost / t * 1e6
		}
		// Pessimistic: the throughput 30% lower, so more instances for
		// the same peak, each billed as the expected ones are.
		worst := math.Ceil(job.PeakTokensPerSecond*ServingHeadroom/(opt.TokensPerSecond*avail*PessimisticThroughput) - 1e-9)
		scale := max(worst, inst) / inst
		opt.PessimisticTotalCost = (compute+opt.HiddenCosts["startup"])*scale + (hidden - opt.HiddenCosts["startup"])
	} else {
		opt.PessimisticTotalCost = opt.TotalCost
	}
}
