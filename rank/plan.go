package rank

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/csv"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
)

// PessimisticThroughput is the share of the expected throughput the
// pessimistic total assumes (30% lower).
const PessimisticThroughput = 0.7

// ServingHeadroom is the margin serving capacity keeps for bursts and
// memory peaks (DESIGN.md cost model 8).
const ServingHeadroom = 1.2

func readTable(b []byte) [][]string {
	r := csv.NewReader(bytes.NewReader(b))
	r.Comment = '#'
	rows, err := r.ReadAll()
	if err != nil || len(rows) < 2 {
		panic(fmt.Sprintf("rank: embedded table: %v", err))
	}
	return rows[1:]
}

func tableNum(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(fmt.Sprintf("rank: embedded table: %v", err))
	}
	return v
}

// Owned is hardware a user owns or could buy, priced per used GPU-hour so
// that it ranks beside rentals.
type Owned struct {
	Name string `yaml:"name" json:"name"`
	Card string `yaml:"card" json:"card"`
	// Count is the cards owned; PurchasePrice is per card, in Currency.
	Count         int     `yaml:"count" json:"count"`
	PurchasePrice float64 `yaml:"purchase_price" json:"purchase_price"`
	Currency      string  `yaml:"currency" json:"currency"`
	// Months writes the purchase off; Watts per card at KWhPrice (in
	// Currency); Utilization is the share of the month the cards work.
	Months      float64 `yaml:"months" json:"months"`
	Watts       float64 `yaml:"watts" json:"watts"`
	KWhPrice    float64 `yaml:"kwh_price" json:"kwh_price"`
	Utilization float64 `yaml:"utilization" json:"utilization"`
}

// PricePerUsedHour is the purchase written off over its months per used
// hour at the utilization, plus power: 15,000 over 24 months at 50% and
// 450 W at 1/kWh is 15000/(24×730×0.5) + 0.45 = 2.16 per GPU-hour.
func (o Owned) PricePerUsedHour() float64 {
	return o.PurchasePrice/(o.Months*pricewatch.HoursPerMonth*o.Utilization) + o.Watts/1000*o.KWhPrice
}

// BreakEvenMonthlyHours is the used hours a month above which owning a card
// costs less than renting it at rent per hour (same currency): the monthly
// write-off over what each rented hour costs beyond the power. ok is false
// when owning can never pay within the write-off period: renting costs less
// than the power alone, or the break-even lies beyond the 730 hours a month
// has.
func (o Owned) BreakEvenMonthlyHours(rent float64) (float64, bool) {
	power := o.Watts / 1000 * o.KWhPrice
	if rent <= power {
		return 0, false
	}
	h := o.PurchasePrice / o.Months / (rent - power)
	if h > pricewatch.HoursPerMonth {
		return 0, false
	}
	return h, true
}

// Validate checks an owned entry, naming the field.
func (o Owned) Validate(field string, cardKnown func(string) bool, currencyKnown func(string) bool) error {
	switch {
	case !cardKnown(o.Card):
		return fmt.Errorf("%s.card: unknown card %q", field, o.Card)
	case o.Count < 1 || o.Count > MaxOwnedCount:
		return fmt.Errorf("%s.count: must be within 1..%d", field, MaxOwnedCount)
	case !(o.PurchasePrice > 0 && o.PurchasePrice <= MaxOwnedPrice):
		return fmt.Errorf("%s.purchase_price: must be within (0, %g]", field, float64(MaxOwnedPrice))
	case !currencyKnown(o.Currency):
		return fmt.Errorf("%s.currency: unknown %q", field, o.Currency)
	case !(o.Months >= MinOwnedMonths && o.Months <= MaxOwnedMonths):
		return fmt.Errorf("%s.months: must be within %g..%g", field, MinOwnedMonths, float64(MaxOwnedMonths))
	case !(o.Watts >= 0 && o.Watts <= MaxOwnedWatts) || !(o.KWhPrice >= 0 && o.KWhPrice <= MaxOwnedKWhPrice):
		return fmt.Errorf("%s: watts must be within 0..%g and kwh_price within 0..%g", field, float64(MaxOwnedWatts), float64(MaxOwnedKWhPrice))
	case !(o.Utilization >= MinOwnedUtilization && o.Utilization <= 1):
		return fmt.Errorf("%s.utilization: must be within %g..1", field, MinOwnedUtilization)
	}
	return nil
}

// Bounds of owned hardware: beyond them a figure is a typo, and the
// write-off per used hour would leave the range of a float64 (a purchase
// written off over 1e-200 months).
const (
	MaxOwnedCount       = 100000
	MaxOwnedPrice       = 1e9
	MinOwnedMonths      = 0.1 // about three days
	MaxOwnedMonths      = 1200
	MaxOwnedWatts       = 1e5
	MaxOwnedKWhPrice    = 1e4
	MinOwnedUtilization = 0.001
)

// ModeOwned labels owned hardware among the options.
const ModeOwned pricewatch.Mode = "owned"

// Option is one way to run a job: an offer (or owned cards) rented at its
// unit, how the job runs on the GPUs rented, how fast, for how long, and
// every part of what it costs, in the job's currency. Several identical
// offers (same card, source, mode, region, unit and price) are one option.
type Option struct {
	Card     string          `json:"card"`
	Source   string          `json:"source"`
	Provider string          `json:"provider"`
	Offer    string          `json:"offer"`
	Key      string          `json:"key"`
	Region   string          `json:"region"`
	Mode     pricewatch.Mode `json:"mode"`
	// Bid marks a spot price that is a bid on an interruptible market
	// (Vast: the minimum bid, disk included), kept only until outbid.
	Bid bool `json:"bid,omitempty"`
	// Billing is how the provider bills the option's hours (hourly modes:
	// increment, minimum, monthly cap, free egress, each with its source).
	Billing *BillingRule `json:"billing,omitempty"`
	// Available is the offer's availability (owned cards: yes).
	Available pricewatch.Availability `json:"available"`
	// IdenticalOffers counts the offers this option stands for (1 and
	// more); OtherOffers names up to five of the others.
	IdenticalOffers int      `json:"identical_offers"`
	OtherOffers     []string `json:"other_offers,omitempty"`
	// RentUnit and GPUCounts say how the offer is rented; GPUs is the GPUs
	// rented and billed, GPUsUsed those the job runs on, Replicas the
	// serving copies of the model.
	RentUnit  pricewatch.RentUnit `json:"rent_unit"`
	GPUCounts []int               `json:"gpu_counts"`
	GPUs      int                 `json:"gpus"`
	GPUsUsed  int                 `json:"gpus_used"`
	Replicas  int                 `json:"replicas,omitempty"`
	Fits      bool                `json:"fits"`
	Reason    string              `json:"reason,omitempty"`
	// MemoryPerGPUGiB is what each GPU of a copy of the model holds (a
	// serving job: the least it needs); MemoryTotalGiB is that over the
	// copy's GPUs; Layout is how a serving group splits the model ("TP4",
	// "PP2").
	MemoryPerGPUGiB       float64 `json:"memory_per_gpu_gib"`
	MemoryTotalGiB        float64 `json:"memory_total_gib"`
	Layout                string  `json:"layout,omitempty"`
	Precision             string  `json:"precision"`
	PrecisionNote         string  `json:"precision_note,omitempty"`
	TokensPerSecond       float64 `json:"tokens_per_second"`
	TokensPerSecondPerGPU float64 `json:"tokens_per_second_per_gpu"`
	ScalingEfficiency     float64 `json:"scaling_efficiency"`
	ThroughputOrigin      Origin  `json:"throughput_origin"`
	// ThroughputNote flags a measured figure far below the card's norm.
	ThroughputNote string `json:"throughput_note,omitempty"`
	// PricePerGPUHour is per GPU at full use; UnitPricePerHour is the GPUs
	// rented per hour.
	PricePerGPUHour  float64 `json:"price_per_gpu_hour"`
	UnitPricePerHour float64 `json:"unit_price_per_hour"`
	// Hours is the job's compute time; BilledHours the hours paid for
	// (start-up included; for a committed mode every period billed);
	// WallClockHours how long from rental to done (start-up, work, and
	// for spot the checkpoint writes and the work lost to reclaims).
	Hours          float64 `json:"hours"`
	BilledHours    float64 `json:"billed_hours"`
	WallClockHours float64 `json:"wall_clock_hours,omitempty"`
	// A committed mode bills whole periods: PeriodsBilled × PeriodHours at
	// PeriodPrice each (the GPUs rented), UnusedHours of them left after
	// the job. Utilization is the share of those hours the team expects to
	// use for other work and OtherWorkCredit their value at the period's
	// own price: shown beside the total, never taken off it.
	// BreakEvenUtilization is the share of a period above which the
	// commitment costs less than the cheapest on-demand offer of the card
	// (one renting as many GPUs where there is one, priced at
	// OnDemandPerGPUHour): the two prices per GPU-hour divided. When the
	// commitment's hourly rate is not below that on-demand rate no use of
	// the period can pay for it: BreakEvenUtilization is then absent and
	// BreakEven says "never".
	PeriodHours          float64  `json:"period_hours,omitempty"`
	PeriodsBilled        int      `json:"periods_billed,omitempty"`
	PeriodPrice          float64  `json:"period_price,omitempty"`
	UnusedHours          float64  `json:"unused_hours,omitempty"`
	Utilization          float64  `json:"utilization,omitempty"`
	OtherWorkCredit      float64  `json:"other_work_credit,omitempty"`
	BreakEvenUtilization *float64 `json:"break_even_utilization,omitempty"`
	BreakEven            string   `json:"break_even,omitempty"`
	OnDemandPerGPUHour   *float64 `json:"on_demand_per_gpu_hour,omitempty"`
	// OnDemandTotalCost is the same job on the same GPUs at that on-demand
	// price (hours run, start-up, storage and egress; no commitment), the
	// figure a commitment competes with; CommitmentNote says in words what
	// a commitment longer than the job leaves unused and how it compares.
	OnDemandTotalCost *float64 `json:"on_demand_total_cost,omitempty"`
	CommitmentNote    string   `json:"commitment_note,omitempty"`
	// FirstInvoice is the first month's bill: the GPU time of the first
	// 730 hours (a commitment billed month by month: a month of it, or
	// the shorter periods that fall in it), start-up, and the month's
	// share of storage and egress.
	FirstInvoice float64 `json:"first_invoice"`
	// ComputeCost is the GPU time billed for the job; HiddenCosts the
	// rest (start-up, storage, egress, spot reclaims); TotalCost their sum.
	ComputeCost          float64            `json:"compute_cost"`
	HiddenCosts          map[string]float64 `json:"hidden_costs"`
	TotalCost            float64            `json:"total_cost"`
	CostPerMillionTokens float64            `json:"cost_per_million_tokens"`
	PessimisticTotalCost float64            `json:"pessimistic_total_cost"`
	ReclaimsPerHour      float64            `json:"reclaims_per_hour,omitempty"`
	// DeadlineRisk says when the option meets the deadline at the expected
	// throughput but not at the pessimistic one (30% lower).
	DeadlineRisk string `json:"deadline_risk,omitempty"`
	// Spot is how a spot option checkpoints and what reclaims cost it.
	Spot    *SpotPlan    `json:"spot,omitempty"`
	Serving *ServingPlan `json:"serving,omitempty"`
	// OwnedBreakEvenMonthlyHours: used hours a month (at most 730) above
	// which owning beats the cheapest hourly rental of the same card;
	// OwnedBreakEven says "never" when owning cannot pay within its
	// write-off period.
	OwnedBreakEvenMonthlyHours *float64 `json:"owned_break_even_monthly_hours,omitempty"`
	OwnedBreakEven             string   `json:"owned_break_even,omitempty"`
	Currency                   string   `json:"currency"`
}

// ModeLabel writes the option's mode, a marketplace bid as "bid" (its
// JSON stays mode "spot" with bid true).
func (o Option) ModeLabel() string { return modeLabel(o.Mode, o.Bid) }

func modeLabel(m pricewatch.Mode, bid bool) string {
	if bid {
		return ModeBid
	}
	return string(m)
}

// Periods writes the whole periods a commitment bills, "2 × 730 h"; "" for
// an hourly option.
func (o Option) Periods() string {
	if o.PeriodsBilled == 0 {
		return ""
	}
	return fmt.Sprintf("%d × %s h", o.PeriodsBilled, strconv.FormatFloat(o.PeriodHours, 'f', -1, 64))
}

// PlanResult is the answer of POST /v1/plan.
type PlanResult struct {
	Job         Job       `json:"job"`
	Memory      Memory    `json:"memory"`
	Currency    string    `json:"currency"`
	GeneratedAt time.Time `json:"generated_at"`
	// OffersConsidered counts the offers priced; Considered the distinct
	// options they make before Limit cut the list.
	OffersConsidered int `json:"offers_considered"`
	Considered       int `json:"considered"`
	// UnfitOffers counts the offers in the job's modes that cannot hold the
	// job (left out unless IncludeUnfit), so an empty plan can say whether
	// nothing was offered or nothing was big enough.
	UnfitOffers int `json:"unfit_offers"`
	// LateOffers counts the offers that could hold the job but not finish
	// it by the deadline (left out unless IncludeUnfit).
	LateOffers int      `json:"late_offers,omitempty"`
	Options    []Option `json:"options"`
	// Fleets are, for a serving load with a base and a peak, each card's
	// cheapest mix of committed and on-demand rentals, cheapest first.
	Fleets []FleetPlan `json:"fleets,omitempty"`
	// FleetsConsidered is how many fleets there were before Limit.
	FleetsConsidered int `json:"fleets_considered,omitempty"`
	// API is, for serving a model some inference API sells, the cheapest
	// such API at the job's mix; BreakEvenTokensPerDay the output tokens
	// a day above which the cheapest self-hosted option (BreakEvenOption,
	// its key) costs less, fixed costs included, or BreakEven "never".
	API                   *APIOption `json:"api,omitempty"`
	BreakEvenTokensPerDay *float64   `json:"break_even_tokens_per_day,omitempty"`
	BreakEvenOption       string     `json:"break_even_option,omitempty"`
	BreakEven             string     `json:"break_even,omitempty"`
}

// Plan prices the job on every eligible offer of the snapshot in the job's
// modes, each rented at its unit, and on owned hardware, and ranks the
// options: those that fit first, by total cost to target (serving: by
// monthly cost for a target rate, else by cost per million output tokens).
// Reference prices are never planned.
func (s *Snapshot) Plan(job Job, owned []Owned, cat *normalize.Catalog) (*PlanResult, error) {
	if job.Deadline != nil {
		h, err := job.Deadline.hoursFrom(s.GeneratedAt)
		if err != nil {
			return nil, err
		}
		job.DeadlineHours = h
	}
	res := &PlanResult{Job: job, Memory: MemoryPerGPU(job.Workload, 1), Currency: job.Currency, GeneratedAt: s.GeneratedAt}
	conv := func(v float64, from string) (float64, error) { return s.Rates.Convert(v, from, job.Currency) }
	// Cheapest on-demand price per GPU-hour that can hold the job, per card
	// and per card and GPUs rented: a commitment is compared with renting
	// the same GPUs on demand where some offer rents that many.
	onDemand := map[string]float64{}
	var opts []Option
	for o := range s.Offers() {
		card, why := s.eligible(o, cat)
		if (job.Card != "" && o.Card != job.Card) || (o.Unavailable() && !job.AnyAvailability) {
			continue
		}
		if why == WhyShared && slices.Contains(job.Modes, o.Mode) {
			// Listed (when asked) with the reason, not dropped: a plan that
			// finds nothing says a fractional offer was there.
			res.UnfitOffers++
			if job.IncludeUnfit {
				opts = append(opts, fractionalOption(job, card, o))
			}
			continue
		}
		if why != "" {
			continue
		}
		price, err := conv(o.PricePerGPUHour, o.Currency)
		if err != nil {
			continue
		}
		rental, prof, why := s.rentalFor(job, card, o)
		if o.Mode == pricewatch.ModeOnDemand && why == "" {
			for _, k := range []string{o.Card, fmt.Sprintf("%s/%d", o.Card, rental.GPUs)} {
				if c, ok := onDemand[k]; !ok || price < c {
					onDemand[k] = price
				}
			}
		}
		if !slices.Contains(job.Modes, o.Mode) || o.Bid && !job.Bids {
			continue
		}
		if why != "" {
			res.UnfitOffers++
		}
		opt, ok := s.option(job, card, rental, prof, why, o, price, conv)
		if ok {
			if why == "" && !opt.Fits && job.DeadlineHours > 0 {
				res.LateOffers++
			}
			opts = append(opts, opt)
		}
	}
	for i := range opts {
		o := &opts[i]
		if o.Spot != nil && o.Fits {
			od, ok := onDemand[fmt.Sprintf("%s/%d", o.Card, o.GPUs)]
			if !ok {
				od, ok = onDemand[o.Card]
			}
			if ok {
				o.Spot.setBreakEven(SpotBreakEvenRate(o.PricePerGPUHour, od, job.CheckpointWriteSeconds/3600, job.Hidden.RestartMinutes/60))
			}
		}
		if !o.Mode.Committed() || !o.Fits {
			continue
		}
		od, ok := onDemand[fmt.Sprintf("%s/%d", o.Card, o.GPUs)]
		if !ok {
			od, ok = onDemand[o.Card]
		}
		if ok && od > 0 {
			o.OnDemandPerGPUHour = &od
			// At 100% or more the commitment can at best tie: never.
			if u := o.PricePerGPUHour / od; u < 1 {
				o.BreakEvenUtilization = &u
			} else {
				o.BreakEven = "never"
			}
			sideBySide(o, job, od)
		}
	}
	if job.Method == MethodServe && job.BaseTokensPerSecond > 0 {
		// Limit cuts the fleets as it cuts the options (a fleet per card:
		// 68 on the demo data).
		res.Fleets = fleets(job, opts)
		res.FleetsConsidered = len(res.Fleets)
		if len(res.Fleets) > job.Limit {
			res.Fleets = res.Fleets[:job.Limit]
		}
	}
	opts = append(opts, s.ownedOptions(job, owned, opts, cat, conv)...)
	if !job.IncludeUnfit {
		opts = slices.DeleteFunc(opts, func(o Option) bool { return !o.Fits })
	}
	res.OffersConsidered = len(opts)
	serving := job.Method == MethodServe
	slices.SortStableFunc(opts, func(a, b Option) int {
		if a.Fits != b.Fits {
			if a.Fits {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(rankKey(a, serving, job), rankKey(b, serving, job)),
			cmp.Compare(a.PricePerGPUHour, b.PricePerGPUHour), cmp.Compare(a.Source, b.Source), cmp.Compare(a.Key, b.Key))
	})
	opts = collapse(opts)
	s.planAPI(res, job, opts) // over every option, before Limit cuts them
	res.Considered = len(opts)
	if len(opts) > job.Limit {
		opts = opts[:job.Limit]
	}
	res.Options = opts
	if res.Options == nil {
		res.Options = []Option{}
	}
	return res, nil
}

// collapse merges options that differ only in the offer id: same card,
// source, provider, mode, region, rental, price and throughput (an offer
// with its own measurement is its own row; the list is sorted, so the first
// of each stays in place).
func collapse(opts []Option) []Option {
	type key struct {
		card, source, provider, region, counts string
		mode                                   pricewatch.Mode
		unit                                   pricewatch.RentUnit
		gpus                                   int
		price, tps                             float64
		fits                                   bool
	}
	first := map[key]int{}
	var out []Option
	for _, o := range opts {
		k := key{o.Card, o.Source, o.Provider, o.Region, fmt.Sprint(o.GPUCounts) + string(o.Available), o.Mode, o.RentUnit, o.GPUs, o.PricePerGPUHour, o.TokensPerSecond, o.Fits}
		i, ok := first[k]
		if !ok {
			first[k] = len(out)
			o.IdenticalOffers = 1
			out = append(out, o)
			continue
		}
		out[i].IdenticalOffers++
		if len(out[i].OtherOffers) < 5 {
			out[i].OtherOffers = append(out[i].OtherOffers, o.Offer)
		}
	}
	return out
}

func rankKey(o Option, serving bool, job Job) float64 {
	switch {
	case !serving || job.Tokens > 0:
		return o.TotalCost
	case job.PeakTokensPerSecond > 0 && o.Serving != nil:
		return o.TotalCost
	}
	return o.CostPerMillionTokens
}

// rentalFor lays the job out on a rental of the offer, with the
// throughput per GPU that applies there: the most specific stored profile
// of the named workload the job is (measured on the offer, on its
// provider, on the card), else a published one, else the estimate (for
// serving, on the group that serves cheapest: RentalFor).
func (s *Snapshot) rentalFor(job Job, card pricewatch.Card, o pricewatch.Offer) (Rental, Profile, string) {
	base := Profile{Card: card.ID, Workload: job.Workload.Name, Origin: OriginEstimated}
	// A service level or a prefix cache is a setting no measured figure
	// was taken at: the estimate prices it.
	latency := job.Workload.SLO.Set() || job.Workload.CachedPromptShare > 0
	if p, ok := s.profiles.lookup(card.ID, job.FromWorkload, o.Provider, o.OfferID); !latency && job.FromWorkload != "" && ok && p.Origin != OriginEstimated {
		base = p
	} else if p, ok := Published(job.Workload, card.ID); !latency && ok {
		base = p
	}
	need := 0.0
	if job.Method == MethodServe {
		need = job.PeakTokensPerSecond * ServingHeadroom
	}
	r, p, why := RentalForLoad(job.Workload, card, o, job.MaxGPUs, base, need)
	if why == "" && p.Origin == OriginEstimated && job.Method != MethodServe {
		p, _ = EstimateOn(job.Workload, card, 1)
	}
	// A deadline can take more GPUs of a per-GPU offer than the job needs
	// to fit: as many as finishing in time takes.
	if why == "" && job.DeadlineHours > 0 && job.Method.Training() && o.RentUnit == pricewatch.RentPerGPU && p.TokensPerSecond > 0 {
		if n, ok := deadlineCount(job, card, o, r.GPUs, p.TokensPerSecond); ok && n != r.GPUs {
			r = Rental{GPUs: n, Used: n, Group: n, Replicas: 1, Efficiency: TrainingScaling(job.Workload, card, n)}
		}
	}
	return r, p, why
}

// option prices the job on one rental of an offer at price per GPU-hour of
// full use in the job's currency. why is RentalOn's reason when no rental
// holds the job: such an option is kept (unfit) only when the job asks.
func (s *Snapshot) option(job Job, card pricewatch.Card, r Rental, p Profile, why string, o pricewatch.Offer, price float64,
	conv func(float64, string) (float64, error)) (Option, bool) {
	opt := Option{Card: card.ID, Source: o.Source, Provider: o.Provider, Offer: o.OfferID, Key: o.Key, Region: o.Region,
		Mode: o.Mode, Bid: o.Bid, RentUnit: o.RentUnit, GPUCounts: o.GPUCounts, Currency: job.Currency, PricePerGPUHour: price,
		Available: o.Available, HiddenCosts: map[string]float64{}}
	if opt.Available == "" {
		opt.Available = pricewatch.AvailableUnknown
	}
	prec, ok := PrecisionOn(job.Workload, card)
	if !ok {
		// The card cannot run the job's format (or bf16): shown with the
		// reason when asked for, like one that cannot hold it.
		if !job.IncludeUnfit {
			return opt, false
		}
		opt.Reason = prec.Why
		opt.GPUs = o.GPUCounts[len(o.GPUCounts)-1]
		return opt, true
	}
	opt.Precision, opt.PrecisionNote = prec.Name, prec.Note
	if why != "" {
		if !job.IncludeUnfit {
			return opt, false
		}
		opt.Reason = s.unfitReason(job, card, o, why)
		opt.GPUs = o.GPUCounts[len(o.GPUCounts)-1]
		return opt, true
	}
	if p.TokensPerSecond <= 0 {
		return opt, false
	}
	opt.Fits = true
	s.price(&opt, job, card, r, p)
	if o.Mode.Committed() {
		s.commit(&opt, job, o.Mode.CommitmentHours())
	}
	if o.Mode == pricewatch.ModeSpot {
		addSpotLoss(&opt, job, o)
	}
	if !o.Mode.Committed() && o.Provider != ownedSource {
		bill(&opt, job, o)
	}
	s.addHidden(&opt, job, o, conv)
	settleServing(&opt, job)
	opt.FirstInvoice = firstInvoice(opt, job)
	if job.Tokens > 0 {
		opt.WallClockHours = opt.wallClock(job)
		if job.DeadlineHours > 0 && opt.WallClockHours > job.DeadlineHours {
			opt.Fits = false
			opt.Reason = fmt.Sprintf("finishes in %.4g h, after the deadline (%.4g h) even on %s", opt.WallClockHours, job.DeadlineHours, gpus(opt.GPUs))
		}
		opt.DeadlineRisk = deadlineRisk(opt, job)
	}
	return opt, true
}

// fractionalOption is a shared or fractional GPU offer listed as unfit: a
// job's memory and throughput are planned on whole GPUs.
func fractionalOption(job Job, card pricewatch.Card, o pricewatch.Offer) Option {
	share := "a share of one " + card.ID
	if o.GPUFraction > 0 && o.GPUFraction < 1 {
		share = fmt.Sprintf("%.3g of one %s, %.3g GiB", o.GPUFraction, card.ID, o.GPUFraction*card.CapacityGiB())
	}
	return Option{Card: card.ID, Source: o.Source, Provider: o.Provider, Offer: o.OfferID, Key: o.Key, Region: o.Region,
		Mode: o.Mode, Bid: o.Bid, RentUnit: o.RentUnit, GPUCounts: o.GPUCounts, Currency: job.Currency, Available: o.Available,
		HiddenCosts: map[string]float64{},
		Reason:      fmt.Sprintf("a fractional GPU (%s): plans run on whole GPUs, and its memory and speed are not the card's", share)}
}

// unfitReason explains why no rental of the offer holds the job.
func (s *Snapshot) unfitReason(job Job, card pricewatch.Card, o pricewatch.Offer, why string) string {
	top := o.GPUCounts[len(o.GPUCounts)-1]
	n := min(top, job.MaxGPUs)
	if job.Method == MethodServe {
		// A serving group is a power of two: the largest the rental allows.
		n = 1 << (bits.Len(uint(n)) - 1)
	}
	mem := NoFitReason(job.Workload, card, n)
	if mem == "" {
		mem = "no group of its GPUs can serve it over its link"
	}
	switch why {
	case WhyUnitLarge:
		return fmt.Sprintf("rented only as %s, more than max_gpus %d", gpus(o.GPUCounts[0]), job.MaxGPUs)
	case WhyUnitSmall:
		return fmt.Sprintf("rented only as %s: %s", gpus(top), mem)
	}
	return mem
}

// gpus writes a GPU count: "1 GPU", "8 GPUs".
func gpus(n int) string {
	if n == 1 {
		return "1 GPU"
	}
	return fmt.Sprintf("%d GPUs", n)
}

// price fills the rental's layout, throughput, time and hourly costs.
func (s *Snapshot) price(opt *Option, job Job, card pricewatch.Card, r Rental, p Profile) {
	w := job.Workload
	opt.GPUs, opt.GPUsUsed, opt.ScalingEfficiency = r.GPUs, r.Used, r.Efficiency
	if w.Method == MethodServe {
		opt.Replicas = r.Replicas
	}
	m := MemoryPerGPU(w, r.Group)
	opt.MemoryPerGPUGiB, opt.MemoryTotalGiB = m.TotalGiB, m.TotalGiB*float64(r.Group)
	if w.Method == MethodServe && r.Group > 1 {
		opt.Layout = r.Layout.String()
	}
	opt.ThroughputOrigin, opt.ThroughputNote = p.Label(), s.throughputNote(p)
	opt.TokensPerSecondPerGPU = p.TokensPerSecond
	opt.TokensPerSecond = r.TokensPerSecond(p.TokensPerSecond)
	opt.UnitPricePerHour = opt.PricePerGPUHour * float64(r.GPUs)
	unit := opt.UnitPricePerHour
	startup := job.Hidden.StartupMinutes / 60
	if job.Tokens > 0 {
		opt.Hours = job.Tokens / (opt.TokensPerSecond * 3600)
		opt.ComputeCost = opt.Hours * unit
		opt.BilledHours = opt.Hours + startup
		// Pessimistic: 30% less throughput and one restart from the last
		// checkpoint (a checkpoint interval of lost work plus the restart),
		// on every GPU rented.
		opt.PessimisticTotalCost = opt.ComputeCost/PessimisticThroughput +
			(job.Hidden.CheckpointMinutes+job.Hidden.RestartMinutes)/60*unit
	}
	// Start-up time is billed on every GPU rented before work begins.
	opt.HiddenCosts["startup"] = startup * unit
	opt.PessimisticTotalCost += startup * unit
	opt.CostPerMillionTokens = CostPerMillionTokens(unit, opt.TokensPerSecond)
	if w.Method == MethodServe && job.Tokens <= 0 {
		need := servingInstances(job, opt.TokensPerSecond)
		sp := &ServingPlan{Instances: need, GPUsNeeded: need * r.GPUs, BilledHoursPerMonth: job.HoursPerMonth, Months: job.Months}
		sp.MonthlyCost = float64(need) * unit * job.HoursPerMonth
		sp.CostPerMillionOutputTokens = opt.CostPerMillionTokens
		if p.Origin == OriginEstimated {
			sp.SequencesPerInstance, sp.TTFTms, sp.TPOTms = servingLatencyOn(w, card, r)
		}
		opt.Serving = sp
	}
}

// ownedOptions prices the job on owned cards: per used hour (write-off at
// the expected utilization plus power), the cards the job needs of those
// owned, no start-up, storage or egress; with the monthly hours above which
// owning beats the cheapest hourly rental of the same card among rentals.
func (s *Snapshot) ownedOptions(job Job, owned []Owned, rentals []Option, cat *normalize.Catalog,
	conv func(float64, string) (float64, error)) []Option {
	var out []Option
	for i, ow := range owned {
		if job.Card != "" && ow.Card != job.Card {
			continue
		}
		card, ok := cat.Card(ow.Card)
		if !ok {
			continue
		}
		price, err := conv(ow.PricePerUsedHour(), ow.Currency)
		if err != nil {
			continue
		}
		name := ow.Name
		if name == "" {
			name = fmt.Sprintf("owned-%d", i+1)
		}
		o := pricewatch.Offer{Source: "owned", Provider: "owned", OfferID: name, Key: "owned/" + name, Mode: ModeOwned, Available: pricewatch.AvailableYes,
			Card: ow.Card, GPUs: ow.Count, RentUnit: pricewatch.RentPerGPU, GPUCounts: pricewatch.CountsUpTo(ow.Count)}
		r, prof, why := s.rentalFor(job, card, o)
		noStartup := job
		noStartup.Hidden.StartupMinutes = 0
		opt, ok := s.option(noStartup, card, r, prof, why, o, price, conv)
		if !ok {
			continue
		}
		if opt.Fits {
			delete(opt.HiddenCosts, "startup")
			opt.OwnedBreakEven = "never"
			rent := math.Inf(1)
			for _, r := range rentals {
				if r.Card == ow.Card && !r.Mode.Committed() && r.Fits && r.PricePerGPUHour < rent {
					rent = r.PricePerGPUHour
				}
			}
			if math.IsInf(rent, 1) {
				opt.OwnedBreakEven = ""
			} else if rentOwn, err := s.Rates.Convert(rent, job.Currency, ow.Currency); err == nil {
				if h, ok := ow.BreakEvenMonthlyHours(rentOwn); ok {
					opt.OwnedBreakEvenMonthlyHours, opt.OwnedBreakEven = &h, ""
				}
			}
		}
		out = append(out, opt)
	}
	return out
}
