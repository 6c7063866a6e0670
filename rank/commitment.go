package rank

import (
	"fmt"
	"math"
	"strconv"

	"github.com/pricewatch/pricewatch"
)

// commit bills a committed mode as its provider does: whole periods of
// periodHours, at least one, each at the period's price for the GPUs
// rented. Start-up falls inside the periods; a serving plan pays every
// hour of the month.
func (s *Snapshot) commit(opt *Option, job Job, periodHours float64) {
	unit := opt.UnitPricePerHour
	opt.PeriodHours, opt.PeriodPrice = periodHours, unit*periodHours
	opt.HiddenCosts["startup"] = 0
	if opt.Serving != nil {
		opt.Serving.BilledHoursPerMonth = pricewatch.HoursPerMonth
		opt.Serving.MonthlyCost = float64(opt.Serving.Instances) * unit * pricewatch.HoursPerMonth
	}
	if job.Tokens <= 0 {
		return
	}
	periods := func(h float64) int { return max(1, int(math.Ceil(h/periodHours-1e-9))) }
	opt.PeriodsBilled = periods(opt.BilledHours)
	billed := float64(opt.PeriodsBilled) * periodHours
	opt.UnusedHours = billed - opt.BilledHours
	opt.BilledHours = billed
	opt.ComputeCost = float64(opt.PeriodsBilled) * opt.PeriodPrice
	if job.Utilization > 0 {
		opt.Utilization = job.Utilization
		opt.OtherWorkCredit = opt.UnusedHours * job.Utilization * unit
	}
	startup := job.Hidden.StartupMinutes / 60
	worst := opt.Hours/PessimisticThroughput + (job.Hidden.CheckpointMinutes+job.Hidden.RestartMinutes)/60 + startup
	opt.PessimisticTotalCost = float64(periods(worst)) * opt.PeriodPrice
}

// workHours is the hours a committed option's job runs (start-up
// included) inside the periods it bills; an hourly option's billed hours.
func (o Option) workHours() float64 { return o.BilledHours - o.UnusedHours }

// sideBySide sets what a commitment competes with: the same job on the same
// GPUs at the cheapest on-demand price of the card (od per GPU-hour, billed
// for the hours run, start-up, storage and egress), and, when the
// commitment bills more hours than the job runs, the words that say so.
func sideBySide(o *Option, job Job, od float64) {
	gpus := float64(o.GPUs)
	work := o.workHours()
	if sv := o.Serving; sv != nil && job.Tokens <= 0 {
		gpus = float64(sv.GPUsNeeded)
		work = job.HoursPerMonth * job.Months
	}
	total := od * gpus * work
	for k, v := range o.HiddenCosts {
		if k != "startup" {
			total += v
		}
	}
	if sv := o.Serving; sv != nil && job.Tokens <= 0 {
		// A job's start-up is inside its work hours; a serving fleet's
		// instances each start once.
		total += od * gpus * job.Hidden.StartupMinutes / 60
	}
	o.OnDemandTotalCost = &total
	if o.UnusedHours <= 0 {
		return
	}
	cmp := "dearer than"
	if o.TotalCost < total {
		cmp = "cheaper than"
	}
	o.CommitmentNote = fmt.Sprintf("commits to %s for %s of work: %s unused; %s the same job on demand (%s %s at %s/GPU-h)",
		o.Periods(), hoursText(work), hoursText(o.UnusedHours), cmp, money2(total), job.Currency, money2(od))
}

// firstInvoice is the first month's bill of an option (FirstInvoice).
func firstInvoice(o Option, job Job) float64 {
	if !o.Fits {
		return 0
	}
	if sv := o.Serving; sv != nil && job.Tokens <= 0 {
		return sv.FirstInvoice
	}
	month := float64(pricewatch.HoursPerMonth)
	startup := o.HiddenCosts["startup"]
	rest := o.TotalCost - o.ComputeCost - startup // storage, egress, reclaims, increments
	run := o.workHours()
	share := 1.0
	if run > month {
		share = month / run
	}
	compute := o.ComputeCost * share
	if o.PeriodHours > 0 {
		// Billed month by month: a month of a long period, or the short
		// periods that start within the first month.
		if o.PeriodHours >= month {
			compute = o.UnitPricePerHour * month
		} else {
			compute = o.PeriodPrice * float64(min(o.PeriodsBilled, int(math.Ceil(month/o.PeriodHours-1e-9))))
		}
	}
	return compute + startup + rest*share
}

// hoursText writes hours briefly: "730 h", "2,190 h".
func hoursText(h float64) string {
	return strconv.FormatFloat(math.Round(h), 'f', -1, 64) + " h"
}

// money2 writes an amount with two decimals.
func money2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
