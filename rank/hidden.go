package rank

import (
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/pricewatch/pricewatch"
)

//go:embed data/providers.csv
var providersCSV []byte

// ProviderDefaults are a provider's hidden-cost prices in USD where
// neither the spec nor the offer gives one, and its spot reclaim rate where
// the source states no band, with that rate's basis (BasisStated, …; the
// table gives each price's basis and the page too).
type ProviderDefaults struct {
	StorageUSDPerGBMonth float64
	EgressUSDPerGB       float64
	SpotReclaimsPerHour  float64
	ReclaimBasis         string
	// BidReclaimsPerHour is how often a bid (a spot price kept only until
	// outbid) is reclaimed, with its basis: the market's own figure where
	// the table has one, else the "*" row's pessimistic default.
	BidReclaimsPerHour float64
	BidBasis           string
}

var providerDefaults = sync.OnceValue(func() map[string]ProviderDefaults {
	m := map[string]ProviderDefaults{}
	for _, r := range readTable(providersCSV) {
		if len(r) < 10 || !validBasis(r[2]) || !validBasis(r[4]) || !validBasis(r[6]) || r[7] != "" && !validBasis(r[8]) {
			panic(fmt.Sprintf("rank: data/providers.csv: row %v", r))
		}
		d := ProviderDefaults{StorageUSDPerGBMonth: tableNum(r[1]), EgressUSDPerGB: tableNum(r[3]),
			SpotReclaimsPerHour: tableNum(r[5]), ReclaimBasis: r[6], BidReclaimsPerHour: -1}
		if r[7] != "" {
			d.BidReclaimsPerHour, d.BidBasis = tableNum(r[7]), r[8]
		}
		m[r[0]] = d
	}
	def, ok := m["*"]
	if !ok || def.BidReclaimsPerHour < 0 {
		panic("rank: data/providers.csv: the * row needs a bid reclaim rate")
	}
	for k, d := range m {
		if d.BidReclaimsPerHour < 0 {
			d.BidReclaimsPerHour, d.BidBasis = def.BidReclaimsPerHour, def.BidBasis
			m[k] = d
		}
	}
	return m
})

// DefaultsFor returns a provider's hidden-cost defaults (data/providers.csv).
func DefaultsFor(provider string) ProviderDefaults {
	if d, ok := providerDefaults()[provider]; ok {
		return d
	}
	return providerDefaults()["*"]
}

// ReclaimsPerHour turns a reclaim-risk band (AWS Spot Advisor's
// "frequency of interruption", the share of instances Spot reclaimed in the
// trailing month: "<5%", "5-10%", "10-15%", "15-20%", ">20%") into expected
// reclaims per instance-hour. The band's middle p (the open ">20%" read as
// 20–30%, so 25%) is the chance an instance is reclaimed within a 730-hour
// month; a constant rate λ gives that chance as 1 − e^(−730 λ), so
// λ = −ln(1 − p) / 730.
func ReclaimsPerHour(band string) (float64, bool) {
	b := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(band), "%"))
	var lo, hi float64
	switch {
	case b == "":
		return 0, false
	case strings.HasPrefix(b, "<"):
		lo, hi = 0, num0(b[1:])
	case strings.HasPrefix(b, ">"):
		lo = num0(b[1:])
		hi = lo + 10
	default:
		parts := strings.SplitN(b, "-", 2)
		if len(parts) != 2 {
			return 0, false
		}
		lo, hi = num0(strings.TrimSuffix(parts[0], "%")), num0(parts[1])
	}
	if hi <= 0 || hi < lo || hi >= 100 {
		return 0, false
	}
	return MonthlyShareToRate((lo + hi) / 2 / 100), true
}

// MonthlyShareToRate is the constant reclaim rate per hour under which a
// share p of instances is reclaimed within a 730-hour month.
func MonthlyShareToRate(p float64) float64 {
	return -math.Log1p(-p) / pricewatch.HoursPerMonth
}

func num0(s string) float64 {
	v, _ := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v
}

// addHidden adds storage and egress, then the totals. A price is the
// spec's, else the offer's own (Vast states its host's disk $/GB-month and
// upload $/GB), else the provider's default (data/providers.csv). Egress
// within the provider's free monthly allowance (data/billing.csv: AWS and
// Azure 100 GB) is free, one allowance per month the job runs. Storage is
// priced per 30-day month (Vast's storage_cost is). Owned hardware has
// neither (nor start-up).
func (s *Snapshot) addHidden(opt *Option, job Job, o pricewatch.Offer, conv func(float64, string) (float64, error)) {
	d := DefaultsFor(o.Provider)
	price := func(spec *float64, own float64, def float64) float64 {
		if spec != nil {
			return *spec
		}
		if own > 0 {
			if v, err := conv(own, o.Currency); err == nil {
				return v
			}
		}
		if v, err := conv(def, "USD"); err == nil {
			return v
		}
		return def
	}
	storage := price(job.Hidden.StoragePricePerGBMonth, o.StoragePerGBMonth, d.StorageUSDPerGBMonth)
	egress := price(job.Hidden.EgressPricePerGB, o.EgressPerGB, d.EgressUSDPerGB)
	egressGB := job.Hidden.EgressGB
	if o.Provider == ownedSource {
		storage, egress = 0, 0
	} else {
		egressGB = max(0, egressGB-freeEgress(*opt, job, o))
	}
	opt.HiddenCosts["storage"] = job.Hidden.StorageGB * job.Hidden.StorageDays / 30 * storage
	opt.HiddenCosts["egress"] = egressGB * egress
	if job.Tokens <= 0 {
		// A serving month: the spec's storage and egress are the month's,
		// and the month's cost is what the plan ranks by.
		if sv := opt.Serving; sv != nil {
			sv.MonthlyCost += opt.HiddenCosts["storage"] + opt.HiddenCosts["egress"]
		}
		return
	}
	hidden := 0.0
	for _, v := range opt.HiddenCosts {
		hidden += v
	}
	opt.TotalCost = opt.ComputeCost + hidden
	opt.CostPerMillionTokens = opt.TotalCost / job.Tokens * 1e6
	// The pessimistic total already has start-up and reclaims (or, for a
	// commitment, its periods); storage and egress do not change.
	opt.PessimisticTotalCost += opt.HiddenCosts["storage"] + opt.HiddenCosts["egress"]
}

// vultrBandwidthMonthHours is the month over which a Vultr server accrues
// its plan's bandwidth, by the hour (docs.vultr.com/support/platform/
// billing/how-are-bandwidth-caps-calculated).
const vultrBandwidthMonthHours = 672

// freeEgress is the egress a job gets free: the provider's allowance per
// account (data/billing.csv) for each month the job runs, plus what the
// plan includes (Vultr: its bandwidth, accrued by the hour each instance
// runs, at most a month's a month).
func freeEgress(opt Option, job Job, o pricewatch.Offer) float64 {
	hours := opt.wallClock(job)
	instances := 1.0
	if sv := opt.Serving; sv != nil && job.Tokens <= 0 {
		hours, instances = sv.BilledHoursPerMonth, float64(sv.Instances)
	}
	months := max(1, math.Ceil(hours/pricewatch.HoursPerMonth-1e-9))
	rule := opt.Billing // set for hourly modes; a commitment's provider has the same allowance
	if rule == nil {
		r := OfferBillingRule(o)
		rule = &r
	}
	free := rule.FreeEgressGB * months
	if o.FreeEgressGBMonth > 0 {
		perMonth := min(hours/months, vultrBandwidthMonthHours) / vultrBandwidthMonthHours
		free += o.FreeEgressGBMonth * perMonth * months * instances
	}
	return free
}
