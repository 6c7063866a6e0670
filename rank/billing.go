package rank

import (
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pricewatch/pricewatch"
)

//go:embed data/billing.csv
var billingCSV []byte

// Rule basis: where a billing rule comes from (data/billing.csv).
const (
	BasisStated    = "stated"    // the provider's own linked page says it
	BasisSecondary = "secondary" // a secondary source reports it
	BasisDefault   = "default"   // no page found: pricewatch's assumption
)

// BillingRule is how a provider turns time run into time billed, for one
// offer: each term with the basis and the page it comes from.
type BillingRule struct {
	// IncrementSeconds: billed time is a whole number of these, a started
	// one billed whole unless RoundDown (a part increment free: a row's
	// rounding "down").
	IncrementSeconds float64 `json:"increment_seconds"`
	RoundDown        bool    `json:"round_down,omitempty"`
	// MinimumSeconds is the least each start is billed.
	MinimumSeconds float64 `json:"minimum_seconds"`
	// MonthlyCapHours bounds the hours an hourly instance is billed in a
	// month (0: none).
	MonthlyCapHours float64 `json:"monthly_cap_hours,omitempty"`
	// FreeEgressGB is internet egress free each month, per account.
	FreeEgressGB float64 `json:"free_egress_gb,omitempty"`
	// Terms says, per term, its basis and source ("increment_seconds":
	// "stated https://…").
	Terms map[string]string `json:"terms"`
	// Read says, per term whose row records it, the date its page was read
	// (YYYY-MM-DD); a term whose row has no date is absent.
	Read map[string]string `json:"read,omitempty"`
}

// billingRow is one rule of data/billing.csv (the note, for readers, is
// not kept).
type billingRow struct {
	provider, mode, prefix, rule, value, basis, source, read string
}

// billingColumns are data/billing.csv's columns, in order.
var billingColumns = []string{"provider", "mode", "offer_prefix", "rule", "value", "basis", "source", "read", "note"}

// billingRows are data/billing.csv's rules by provider ("*" included),
// read once: a plan looks up the rule of every offer it prices.
var billingRows = sync.OnceValue(func() map[string][]billingRow {
	rows, err := parseBilling(billingCSV)
	if err != nil {
		panic("rank: data/billing.csv: " + err.Error())
	}
	out := map[string][]billingRow{}
	for _, r := range rows {
		out[r.provider] = append(out[r.provider], r)
	}
	return out
})

// parseBilling reads a billing table: every row has each column of
// billingColumns, a known basis and a read date that is empty or
// YYYY-MM-DD.
func parseBilling(b []byte) ([]billingRow, error) {
	var out []billingRow
	for _, r := range readTable(b) {
		if len(r) != len(billingColumns) {
			return nil, fmt.Errorf("row %q: %d columns, want %d (%s)", r, len(r), len(billingColumns), strings.Join(billingColumns, ","))
		}
		row := billingRow{r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]}
		if !validBasis(row.basis) {
			return nil, fmt.Errorf("row %q: basis %q", r, row.basis)
		}
		if row.read != "" {
			if _, err := time.Parse(time.DateOnly, row.read); err != nil {
				return nil, fmt.Errorf("row %q: read %q is not a YYYY-MM-DD date", r, row.read)
			}
		}
		out = append(out, row)
	}
	return out, nil
}

// validBasis reports whether s is one of the bases a rule may have.
func validBasis(s string) bool {
	return s == BasisStated || s == BasisSecondary || s == BasisDefault
}

// billingRuleNames are the rules every provider has (the "*" rows).
var billingRuleNames = []string{"increment_seconds", "rounding", "minimum_seconds", "monthly_cap_hours", "free_egress_gb"}

// BillingRuleFor is the billing rule of an offer: for each term the most
// specific row of data/billing.csv (its provider before "*", then its mode,
// then the longest offer-id prefix).
func BillingRuleFor(provider string, mode pricewatch.Mode, offerID string) BillingRule {
	r, _ := billingRule(provider, mode, offerID)
	return r
}

// billingRule is BillingRuleFor with the row each term came from.
func billingRule(provider string, mode pricewatch.Mode, offerID string) (BillingRule, map[string]billingRow) {
	r := BillingRule{Terms: map[string]string{}}
	from := map[string]billingRow{}
	for _, name := range billingRuleNames {
		best, score := billingRow{}, -1
		for _, rows := range [2][]billingRow{billingRows()[provider], billingRows()["*"]} {
			for _, row := range rows {
				if row.rule != name {
					continue
				}
				s, ok := billingMatch(row, provider, mode, offerID)
				if ok && s > score {
					best, score = row, s
				}
			}
		}
		if score < 0 {
			panic("rank: data/billing.csv has no * row for " + name)
		}
		from[name] = best
		r.Terms[name] = strings.TrimSpace(best.basis + " " + best.source)
		if best.read != "" {
			if r.Read == nil {
				r.Read = map[string]string{}
			}
			r.Read[name] = best.read
		}
		v, _ := strconv.ParseFloat(best.value, 64)
		switch name {
		case "increment_seconds":
			r.IncrementSeconds = v
		case "rounding":
			r.RoundDown = best.value == "down"
		case "minimum_seconds":
			r.MinimumSeconds = v
		case "monthly_cap_hours":
			r.MonthlyCapHours = v
		case "free_egress_gb":
			r.FreeEgressGB = v
		}
	}
	return r, from
}

// OfferBillingRule is the billing rule of one offer: BillingRuleFor its
// provider, mode and id, with the plan's own monthly cap (its monthly
// price ÷ its hourly one, carried by the offer: Linode, Hetzner) where no
// stated row of the offer's own provider gives a cap. A provider that
// states its cap by server type wins over the plan's price ratio: Vultr's
// page bills bare metal up to 672 h a month, whatever a plan's monthly ÷
// hourly price says. An aggregator's offer is billed by the aggregator
// (billingParty).
func OfferBillingRule(o pricewatch.Offer) BillingRule {
	r, from := billingRule(billingParty(o), o.Mode, o.OfferID)
	if o.MonthlyCapHours > 0 && !providerStates(from["monthly_cap_hours"]) {
		r.MonthlyCapHours = o.MonthlyCapHours
		r.Terms["monthly_cap_hours"] = BasisStated + ": the offer's own monthly price ÷ its hourly price"
		delete(r.Read, "monthly_cap_hours")
	}
	return r
}

// billingParty is who bills an offer: its provider, except where its
// source resells the provider's machines under its own account and has
// rows of its own in data/billing.csv (Shadeform, Prime Intellect,
// Spheron: the renter pays the aggregator, on the aggregator's terms). A
// catalog such as SkyPilot has no rows: its offers are rented from the
// cloud itself, on the cloud's terms.
func billingParty(o pricewatch.Offer) string {
	if o.Source != "" && o.Source != o.Provider && len(billingRows()[o.Source]) > 0 {
		return o.Source
	}
	return o.Provider
}

// providerStates reports whether a rule comes from a row of its own
// provider (not the "*" defaults) that the provider's page states.
func providerStates(row billingRow) bool {
	return row.provider != "*" && row.basis == BasisStated
}

// billingMatch scores how specifically a row applies: provider counts
// most, then mode, then the prefix's length.
func billingMatch(row billingRow, provider string, mode pricewatch.Mode, offerID string) (int, bool) {
	s := 0
	switch row.provider {
	case provider:
		s += 1 << 20
	case "*":
	default:
		return 0, false
	}
	switch row.mode {
	case string(mode):
		s += 1 << 10
	case "*":
	default:
		return 0, false
	}
	if row.prefix != "*" {
		if !strings.HasPrefix(offerID, row.prefix) {
			return 0, false
		}
		s += len(row.prefix)
	}
	return s, true
}

// Bill is the hours billed for one start that runs h hours: at least the
// minimum, in whole increments (a started one whole, or dropped when the
// rule rounds down).
func (r BillingRule) Bill(h float64) float64 {
	if !(h > 0) {
		return 0
	}
	h = max(h, r.MinimumSeconds/3600)
	if inc := r.IncrementSeconds / 3600; inc > 0 {
		n := h / inc
		if r.RoundDown {
			n = math.Floor(n + 1e-9)
		} else {
			n = math.Ceil(n - 1e-9)
		}
		h = max(n*inc, r.MinimumSeconds/3600)
	}
	return h
}

// SegmentWaste is the expected hours billed beyond the work of a start
// that ends at a time the job does not choose (a spot reclaim): half an
// increment when a started one is billed whole.
func (r BillingRule) SegmentWaste() float64 {
	if r.RoundDown {
		return 0
	}
	return r.IncrementSeconds / 3600 / 2
}

// MonthHours is the hours billed for an hourly instance that runs h hours
// in a month: h, up to the monthly cap.
func (r BillingRule) MonthHours(h float64) float64 {
	if r.MonthlyCapHours > 0 {
		return min(h, r.MonthlyCapHours)
	}
	return h
}

// RunHours is the hours billed for one run of h hours billed hours from
// the start of a month: each whole 730-hour month up to the cap, then the
// rest up to it.
func (r BillingRule) RunHours(h float64) float64 {
	if !(r.MonthlyCapHours > 0) || h <= r.MonthlyCapHours {
		return h
	}
	months := math.Floor(h / pricewatch.HoursPerMonth)
	return months*r.MonthHours(pricewatch.HoursPerMonth) + r.MonthHours(h-months*pricewatch.HoursPerMonth)
}

// bill applies the offer's billing rule to an hourly option: the job's
// one run (start-up, work, and for spot the checkpoint writes and work
// lost) billed at least the minimum, in whole increments, and each
// reclaimed run's expected part increment (SegmentWaste), each month of
// it up to the monthly cap; the difference from the time run is the
// hidden cost "billing_increments". A serving month bills each instance
// its hours up to the monthly cap.
func bill(opt *Option, job Job, o pricewatch.Offer) {
	rule := OfferBillingRule(o)
	opt.Billing = &rule
	unit := opt.UnitPricePerHour
	if sv := opt.Serving; sv != nil {
		sv.BilledHoursPerMonth = rule.MonthHours(job.HoursPerMonth)
		sv.MonthlyCost = float64(sv.Instances) * unit * sv.BilledHoursPerMonth
	}
	if job.Tokens <= 0 || !opt.Fits {
		return
	}
	run := opt.Hours + job.Hidden.StartupMinutes/60
	restarts := 0.0
	if sp := opt.Spot; sp != nil {
		run += sp.CheckpointHours + sp.ExpectedLostHours
		restarts = sp.ExpectedRestarts
	}
	billed := rule.RunHours(rule.Bill(run) + restarts*rule.SegmentWaste())
	opt.BilledHours = billed
	if extra := billed - run; math.Abs(extra) > 1e-12 {
		opt.HiddenCosts["billing_increments"] = extra * unit
		opt.PessimisticTotalCost += extra * unit
	}
}
