package rank

import (
	"cmp"
	"math"
	"slices"

	"github.com/pricewatch/pricewatch"
)

// FleetUnit is the rental a fleet uses for one part of its load.
type FleetUnit struct {
	Source           string          `json:"source"`
	Offer            string          `json:"offer"`
	Key              string          `json:"key"`
	Region           string          `json:"region,omitempty"`
	Mode             pricewatch.Mode `json:"mode"`
	GPUs             int             `json:"gpus"`
	TokensPerSecond  float64         `json:"tokens_per_second"`
	UnitPricePerHour float64         `json:"unit_price_per_hour"`
}

// FleetPlan is a serving load's capacity on one card: Committed rentals
// held all month for the base (and part of the peak), OnDemand rentals for
// the rest, each sized with ServingHeadroom, at its cheapest mix, beside
// all-on-demand and all-committed capacity. Costs are per month in the
// job's currency; Saving is what the mix saves on the cheaper pure choice.
type FleetPlan struct {
	Card                 string     `json:"card"`
	Committed            *FleetUnit `json:"committed,omitempty"`
	OnDemand             *FleetUnit `json:"on_demand,omitempty"`
	CommittedUnits       int        `json:"committed_units"`
	OnDemandPeakUnits    int        `json:"on_demand_peak_units"`
	OnDemandOffPeakUnits int        `json:"on_demand_off_peak_units"`
	PeakHoursPerMonth    float64    `json:"peak_hours_per_month"`
	MonthlyCost          float64    `json:"monthly_cost"`
	AllOnDemandMonthly   *float64   `json:"all_on_demand_monthly,omitempty"`
	AllCommittedMonthly  *float64   `json:"all_committed_monthly,omitempty"`
	Saving               float64    `json:"saving"`
	SavingPct            float64    `json:"saving_pct"`
}

// fleets finds, per card, the cheapest mix of committed rentals (the
// card's committed option with the lowest cost per token) and on-demand
// rentals (likewise) for a load of base tokens/s all month and peak
// tokens/s for PeakHoursPerDay hours a day: with k committed rentals,
// on-demand ones cover what k leave of base × 1.2 off peak and of
// peak × 1.2 at peak; the cheapest k from 0 (all on demand) to the number
// that carries the whole peak (all committed) wins. The on-demand units
// added for the peak start once a day (730 / 24 days a month), each start
// billing the job's start-up minutes on the unit.
func fleets(job Job, opts []Option) []FleetPlan {
	perToken := func(o Option) float64 { return o.UnitPricePerHour / o.TokensPerSecond }
	type pair struct{ committed, onDemand *Option }
	by := map[string]*pair{}
	var cards []string
	for i := range opts {
		o := &opts[i]
		if !o.Fits || !(o.TokensPerSecond > 0) {
			continue
		}
		p := by[o.Card]
		if p == nil {
			p = &pair{}
			by[o.Card] = p
			cards = append(cards, o.Card)
		}
		switch {
		case o.Mode.Committed():
			if p.committed == nil || perToken(*o) < perToken(*p.committed) {
				p.committed = o
			}
		case o.Mode == pricewatch.ModeOnDemand:
			if p.onDemand == nil || perToken(*o) < perToken(*p.onDemand) {
				p.onDemand = o
			}
		}
	}
	month := float64(pricewatch.HoursPerMonth)
	days := month / 24
	startupH := job.Hidden.StartupMinutes / 60
	peakH := job.PeakHoursPerDay * month / 24
	base, peak := job.BaseTokensPerSecond*ServingHeadroom, job.PeakTokensPerSecond*ServingHeadroom
	units := func(need, tps float64) int {
		if need <= 0 {
			return 0
		}
		return int(math.Ceil(need/tps - 1e-9))
	}
	var out []FleetPlan
	for _, card := range cards {
		p := by[card]
		if p.committed == nil && p.onDemand == nil {
			continue
		}
		f := FleetPlan{Card: card, PeakHoursPerMonth: peakH, MonthlyCost: math.Inf(1)}
		unit := func(o *Option) *FleetUnit {
			if o == nil {
				return nil
			}
			return &FleetUnit{Source: o.Source, Offer: o.Offer, Key: o.Key, Region: o.Region, Mode: o.Mode, GPUs: o.GPUs,
				TokensPerSecond: o.TokensPerSecond, UnitPricePerHour: o.UnitPricePerHour}
		}
		f.Committed, f.OnDemand = unit(p.committed), unit(p.onDemand)
		most := 0
		if p.committed != nil {
			most = units(peak, p.committed.TokensPerSecond)
		}
		for k := 0; k <= most; k++ {
			cost, offOD, peakOD := 0.0, 0, 0
			left := func(need float64) float64 {
				if p.committed == nil {
					return need
				}
				return need - float64(k)*p.committed.TokensPerSecond
			}
			if p.committed != nil {
				cost += float64(k) * p.committed.UnitPricePerHour * month
			}
			if rest := left(peak); rest > 0 {
				if p.onDemand == nil {
					continue // nothing can carry the rest
				}
				peakOD = units(rest, p.onDemand.TokensPerSecond)
				offOD = units(max(left(base), 0), p.onDemand.TokensPerSecond)
				// The units serving off peak run all month; those added for
				// the peak start every day, each start billing its start-up
				// before it serves and the day's run in the provider's
				// increments; every unit up to the provider's monthly cap.
				rule := BillingRule{}
				if p.onDemand.Billing != nil {
					rule = *p.onDemand.Billing
				}
				daily := peakH / days
				if daily > 0 {
					daily = rule.Bill(daily + startupH)
				}
				cost += p.onDemand.UnitPricePerHour * (float64(offOD)*rule.MonthHours(month) +
					float64(max(peakOD-offOD, 0))*rule.MonthHours(daily*days))
			}
			if k == 0 && p.onDemand != nil {
				c := cost
				f.AllOnDemandMonthly = &c
			}
			if k == most && p.committed != nil {
				c := cost
				f.AllCommittedMonthly = &c
			}
			if cost < f.MonthlyCost {
				f.MonthlyCost, f.CommittedUnits, f.OnDemandOffPeakUnits, f.OnDemandPeakUnits = cost, k, offOD, peakOD
			}
		}
		if math.IsInf(f.MonthlyCost, 1) {
			continue
		}
		pure := math.Inf(1)
		for _, c := range []*float64{f.AllOnDemandMonthly, f.AllCommittedMonthly} {
			if c != nil && *c < pure {
				pure = *c
			}
		}
		if !math.IsInf(pure, 1) && pure > 0 {
			f.Saving = pure - f.MonthlyCost
			f.SavingPct = 100 * f.Saving / pure
		}
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b FleetPlan) int {
		return cmp.Or(cmp.Compare(a.MonthlyCost, b.MonthlyCost), cmp.Compare(a.Card, b.Card))
	})
	return out
}
