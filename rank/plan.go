package rank

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
)

//go:embed data/scaling.csv
var scalingCSV []byte

//go:embed data/providers.csv
var providersCSV []byte

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

type scalePoint struct {
	gpus int
	eff  float64
}

var scaling = sync.OnceValue(func() map[string][]scalePoint {
	m := map[string][]scalePoint{}
	for _, r := range readTable(scalingCSV) {
		m[r[0]] = append(m[r[0]], scalePoint{int(tableNum(r[1])), tableNum(r[2])})
	}
	for _, pts := range m {
		slices.SortFunc(pts, func(a, b scalePoint) int { return cmp.Compare(a.gpus, b.gpus) })
	}
	return m
})

// ScalingEfficiency is the throughput share n GPUs of an interconnect class
// keep (data/scaling.csv): n × single-GPU throughput × efficiency.
func ScalingEfficiency(interconnect string, n int) float64 {
	pts := scaling()[interconnect]
	if len(pts) == 0 {
		pts = scaling()[pricewatch.InterconnectPCIe]
	}
	if n <= pts[0].gpus {
		return pts[0].eff
	}
	for i := 1; i < len(pts); i++ {
		if n <= pts[i].gpus {
			a, b := pts[i-1], pts[i]
			return a.eff + (b.eff-a.eff)*float64(n-a.gpus)/float64(b.gpus-a.gpus)
		}
	}
	return pts[len(pts)-1].eff
}

// ProviderDefaults are a provider's assumed hidden-cost prices in USD.
type ProviderDefaults struct {
	StorageUSDPerGBMonth float64
	EgressUSDPerGB       float64
	SpotReclaimsPerHour  float64
}

var providerDefaults = sync.OnceValue(func() map[string]ProviderDefaults {
	m := map[string]ProviderDefaults{}
	for _, r := range readTable(providersCSV) {
		m[r[0]] = ProviderDefaults{tableNum(r[1]), tableNum(r[2]), tableNum(r[3])}
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

// ReclaimsPerHour turns a reclaim-risk band (AWS Spot Advisor's monthly
// interruption frequency: "<5%", "5-10%", …, ">20%") into expected reclaims
// per instance-hour: the band's middle spread over a 730-hour month.
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
	if hi <= 0 || hi < lo {
		return 0, false
	}
	return (lo + hi) / 2 / 100 / pricewatch.HoursPerMonth, true
}

func num0(s string) float64 {
	v, _ := strconv.ParseFloat(strings.TrimSpace(s), 64)
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
// when renting costs less than the power alone.
func (o Owned) BreakEvenMonthlyHours(rent float64) (float64, bool) {
	power := o.Watts / 1000 * o.KWhPrice
	if rent <= power {
		return 0, false
	}
	return o.PurchasePrice / o.Months / (rent - power), true
}

// Validate checks an owned entry, naming the field.
func (o Owned) Validate(field string, cardKnown func(string) bool, currencyKnown func(string) bool) error {
	switch {
	case !cardKnown(o.Card):
		return fmt.Errorf("%s.card: unknown card %q", field, o.Card)
	case o.Count < 1:
		return fmt.Errorf("%s.count: must be at least 1", field)
	case o.PurchasePrice <= 0:
		return fmt.Errorf("%s.purchase_price: must be positive", field)
	case !currencyKnown(o.Currency):
		return fmt.Errorf("%s.currency: unknown %q", field, o.Currency)
	case o.Months <= 0:
		return fmt.Errorf("%s.months: must be positive", field)
	case o.Watts < 0 || o.KWhPrice < 0:
		return fmt.Errorf("%s: watts and kwh_price must not be negative", field)
	case o.Utilization <= 0 || o.Utilization > 1:
		return fmt.Errorf("%s.utilization: must be within (0, 1]", field)
	}
	return nil
}

// ModeOwned labels owned hardware among the options.
const ModeOwned pricewatch.Mode = "owned"

// ServingPlan sizes a serving option for a target peak rate.
type ServingPlan struct {
	GPUsNeeded                 int     `json:"gpus_needed"`
	Instances                  int     `json:"instances"`
	MonthlyCost                float64 `json:"monthly_cost"`
	CostPerMillionOutputTokens float64 `json:"cost_per_million_output_tokens"`
}

// Option is one way to run a job: an offer (or owned cards), how many GPUs,
// how fast, for how long, and every part of what it costs, in the job's
// currency.
type Option struct {
	Card                  string             `json:"card"`
	Source                string             `json:"source"`
	Provider              string             `json:"provider"`
	Offer                 string             `json:"offer"`
	Key                   string             `json:"key"`
	Region                string             `json:"region"`
	Mode                  pricewatch.Mode    `json:"mode"`
	GPUs                  int                `json:"gpus"`
	Fits                  bool               `json:"fits"`
	Reason                string             `json:"reason,omitempty"`
	MemoryPerGPUGB        float64            `json:"memory_per_gpu_gb"`
	TokensPerSecond       float64            `json:"tokens_per_second"`
	TokensPerSecondPerGPU float64            `json:"tokens_per_second_per_gpu"`
	ScalingEfficiency     float64            `json:"scaling_efficiency"`
	ThroughputOrigin      Origin             `json:"throughput_origin"`
	PricePerGPUHour       float64            `json:"price_per_gpu_hour"`
	Utilization           float64            `json:"utilization,omitempty"`
	BreakEvenUtilization  *float64           `json:"break_even_utilization,omitempty"`
	Hours                 float64            `json:"hours"`
	ComputeCost           float64            `json:"compute_cost"`
	HiddenCosts           map[string]float64 `json:"hidden_costs"`
	TotalCost             float64            `json:"total_cost"`
	CostPerMillionTokens  float64            `json:"cost_per_million_tokens"`
	PessimisticTotalCost  float64            `json:"pessimistic_total_cost"`
	ReclaimsPerHour       float64            `json:"reclaims_per_hour,omitempty"`
	Serving               *ServingPlan       `json:"serving,omitempty"`
	// OwnedBreakEvenMonthlyHours: used hours a month above which owning
	// beats the cheapest rental of the same card.
	OwnedBreakEvenMonthlyHours *float64 `json:"owned_break_even_monthly_hours,omitempty"`
	Currency                   string   `json:"currency"`
}

// PlanResult is the answer of POST /v1/plan.
type PlanResult struct {
	Job         Job       `json:"job"`
	Memory      Memory    `json:"memory"`
	Currency    string    `json:"currency"`
	GeneratedAt time.Time `json:"generated_at"`
	// Considered counts the options before Limit cut the list.
	Considered int      `json:"considered"`
	Options    []Option `json:"options"`
}

// Plan prices the job on every eligible offer of the snapshot in the job's
// modes, and on owned hardware, and ranks the options: those that fit
// first, by total cost to target (serving: by monthly cost for a target
// rate, else by cost per million output tokens).
func (s *Snapshot) Plan(job Job, owned []Owned, cat *normalize.Catalog) (*PlanResult, error) {
	res := &PlanResult{Job: job, Memory: MemoryPerGPU(job.Workload, 1), Currency: job.Currency, GeneratedAt: s.GeneratedAt}
	conv := func(v float64, from string) (float64, error) { return s.Rates.Convert(v, from, job.Currency) }
	var opts []Option
	cheapestOnDemand := map[string]float64{}
	for _, o := range s.Offers {
		card, why := s.eligible(o, cat)
		if why != "" || (job.Card != "" && o.Card != job.Card) {
			continue
		}
		price, err := conv(o.PricePerGPUHour, o.Currency)
		if err != nil {
			continue
		}
		if o.Mode == pricewatch.ModeOnDemand {
			if c, ok := cheapestOnDemand[o.Card]; !ok || price < c {
				cheapestOnDemand[o.Card] = price
			}
		}
		if !slices.Contains(job.Modes, o.Mode) {
			continue
		}
		prof, pok := s.profileFor(job, card)
		opt, ok := s.option(job, card, o.GPUs, price, o.Mode, prof, pok)
		if !ok {
			continue
		}
		opt.Source, opt.Provider, opt.Offer, opt.Key, opt.Region, opt.Mode = o.Source, o.Provider, o.OfferID, o.Key, o.Region, o.Mode
		if o.Mode == pricewatch.ModeSpot {
			s.addSpotLoss(&opt, job, o, conv)
		}
		s.addHidden(&opt, job, o.Provider, conv)
		opts = append(opts, opt)
	}
	// Period rentals: the utilization below which on-demand is cheaper.
	for i := range opts {
		o := &opts[i]
		if o.Mode.Committed() {
			if od, ok := cheapestOnDemand[o.Card]; ok && od > 0 {
				u := round(o.PricePerGPUHour*o.Utilization/od, 4)
				o.BreakEvenUtilization = &u
			}
		}
	}
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
		prof, pok := s.profileFor(job, card)
		opt, ok := s.option(job, card, ow.Count, price, ModeOwned, prof, pok)
		if !ok {
			continue
		}
		name := ow.Name
		if name == "" {
			name = fmt.Sprintf("owned-%d", i+1)
		}
		opt.Source, opt.Provider, opt.Offer, opt.Key, opt.Mode = "owned", "owned", name, "owned/"+name, ModeOwned
		s.addHidden(&opt, job, "owned", conv)
		// Owning versus the cheapest rental of this card in the job's modes.
		rent := math.Inf(1)
		for _, r := range opts {
			if r.Card == ow.Card && r.Mode != ModeOwned && r.PricePerGPUHour < rent {
				rent = r.PricePerGPUHour
			}
		}
		if !math.IsInf(rent, 1) {
			if rentOwn, err := s.Rates.Convert(rent, job.Currency, ow.Currency); err == nil {
				if h, ok := ow.BreakEvenMonthlyHours(rentOwn); ok {
					h = round(h, 1)
					opt.OwnedBreakEvenMonthlyHours = &h
				}
			}
		}
		opts = append(opts, opt)
	}
	if !job.IncludeUnfit {
		opts = slices.DeleteFunc(opts, func(o Option) bool { return !o.Fits })
	}
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
	res.Considered = len(opts)
	if len(opts) > job.Limit {
		opts = opts[:job.Limit]
	}
	for i := range opts {
		roundOption(&opts[i])
	}
	res.Options = opts
	if res.Options == nil {
		res.Options = []Option{}
	}
	return res, nil
}

func rankKey(o Option, serving bool, job Job) float64 {
	switch {
	case !serving || job.Tokens > 0:
		if serving && job.Tokens == 0 {
			return o.CostPerMillionTokens
		}
		return o.TotalCost
	case o.Serving != nil:
		return o.Serving.MonthlyCost
	}
	return o.CostPerMillionTokens
}

func (s *Snapshot) profileFor(job Job, card pricewatch.Card) (Profile, bool) {
	if job.FromWorkload != "" {
		if p, ok := s.profiles[card.ID+"\x00"+job.FromWorkload]; ok {
			return p, true
		}
	}
	if p, ok := Published(job.Workload, card.ID); ok {
		return p, true
	}
	return Estimate(job.Workload, card)
}

// option sizes and prices the job on GPUs of one card, offerGPUs at most
// (0: not stated), at price per GPU-hour of full use in the job's
// currency; committed modes are priced per used hour at the job's
// utilization. ok is false when the card has no throughput for the job.
func (s *Snapshot) option(job Job, card pricewatch.Card, offerGPUs int, price float64, mode pricewatch.Mode, p Profile, pok bool) (Option, bool) {
	if !pok || p.TokensPerSecond <= 0 {
		return Option{}, false
	}
	w := job.Workload
	limit := job.MaxGPUs
	if offerGPUs > 0 && offerGPUs < limit {
		limit = offerGPUs
	}
	opt := Option{Card: card.ID, ThroughputOrigin: p.Origin, Currency: job.Currency, HiddenCosts: map[string]float64{}}
	n := 0
	for g := 1; g <= limit; g++ {
		if Fits(w, card, g) {
			n = g
			break
		}
	}
	opt.Fits = n > 0
	if n == 0 {
		n = limit
		need := MemoryPerGPU(w, n).TotalGB
		opt.Reason = fmt.Sprintf("needs %.1f GB per GPU on %d GPU(s); %s has %.1f GB usable (80%% of %g GB)",
			need, n, card.ID, UsableGB(card), card.MemoryGB)
	}
	opt.GPUs = n
	opt.MemoryPerGPUGB = MemoryPerGPU(w, n).TotalGB
	eff := ScalingEfficiency(card.InterconnectClass(), n)
	opt.ScalingEfficiency = eff
	opt.TokensPerSecondPerGPU = p.TokensPerSecond
	opt.TokensPerSecond = p.TokensPerSecond * float64(n) * eff
	opt.PricePerGPUHour = price
	if mode.Committed() {
		opt.Utilization = job.Utilization
		opt.PricePerGPUHour = price / job.Utilization
	}
	gpuHour := opt.PricePerGPUHour * float64(n) // per hour of the job
	if job.Tokens > 0 {
		opt.Hours = job.Tokens / (opt.TokensPerSecond * 3600)
		opt.ComputeCost = opt.Hours * gpuHour
		// Pessimistic: 30% less throughput and one restart from the last
		// checkpoint (a checkpoint interval of lost work plus the restart).
		opt.PessimisticTotalCost = opt.ComputeCost/PessimisticThroughput +
			(job.Hidden.CheckpointMinutes+job.Hidden.RestartMinutes)/60*gpuHour
	}
	if job.Method == MethodServe && job.PeakTokensPerSecond > 0 {
		need := int(math.Ceil(job.PeakTokensPerSecond * ServingHeadroom / opt.TokensPerSecond))
		sp := &ServingPlan{Instances: need, GPUsNeeded: need * n}
		sp.MonthlyCost = float64(sp.GPUsNeeded) * opt.PricePerGPUHour * job.HoursPerMonth
		opt.Serving = sp
	}
	// Per million tokens: GPU time per token; hidden costs join below.
	opt.CostPerMillionTokens = gpuHour * 1e6 / (opt.TokensPerSecond * 3600)
	if opt.Serving != nil {
		opt.Serving.CostPerMillionOutputTokens = opt.CostPerMillionTokens
	}
	opt.HiddenCosts["startup"] = job.Hidden.StartupMinutes / 60 * gpuHour
	return opt, true
}

// addSpotLoss adds the expected work lost to reclaims: reclaims per hour ×
// hours × (half a checkpoint interval + the restart) of the job's GPUs.
func (s *Snapshot) addSpotLoss(opt *Option, job Job, o pricewatch.Offer, conv func(float64, string) (float64, error)) {
	rate := DefaultsFor(o.Provider).SpotReclaimsPerHour
	if r, ok := ReclaimsPerHour(o.ReclaimRisk); ok {
		rate = r
	}
	if job.Hidden.ReclaimsPerHour != nil {
		rate = *job.Hidden.ReclaimsPerHour
	}
	opt.ReclaimsPerHour = rate
	lost := rate * opt.Hours * (job.Hidden.CheckpointMinutes/2 + job.Hidden.RestartMinutes) / 60
	gpuHour := opt.PricePerGPUHour * float64(opt.GPUs)
	opt.HiddenCosts["spot_reclaims"] = lost * gpuHour
	opt.PessimisticTotalCost += lost / PessimisticThroughput * gpuHour
}

// addHidden adds storage and egress at the spec's prices or the provider's
// defaults, then the totals.
func (s *Snapshot) addHidden(opt *Option, job Job, provider string, conv func(float64, string) (float64, error)) {
	d := DefaultsFor(provider)
	storage, egress := d.StorageUSDPerGBMonth, d.EgressUSDPerGB
	if provider == "owned" {
		storage, egress = 0, 0
	}
	if v, err := conv(storage, "USD"); err == nil {
		storage = v
	}
	if v, err := conv(egress, "USD"); err == nil {
		egress = v
	}
	if job.Hidden.StoragePricePerGBMonth != nil {
		storage = *job.Hidden.StoragePricePerGBMonth
	}
	if job.Hidden.EgressPricePerGB != nil {
		egress = *job.Hidden.EgressPricePerGB
	}
	opt.HiddenCosts["storage"] = job.Hidden.StorageGB * job.Hidden.StorageDays / 30 * storage
	opt.HiddenCosts["egress"] = job.Hidden.EgressGB * egress
	hidden := 0.0
	for _, v := range opt.HiddenCosts {
		hidden += v
	}
	if job.Tokens > 0 {
		opt.TotalCost = opt.ComputeCost + hidden
		opt.CostPerMillionTokens = opt.TotalCost / job.Tokens * 1e6
		opt.PessimisticTotalCost += hidden - opt.HiddenCosts["spot_reclaims"]
	}
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

func roundOption(o *Option) {
	for _, f := range []*float64{&o.MemoryPerGPUGB, &o.TokensPerSecond, &o.TokensPerSecondPerGPU} {
		*f = round(*f, 2)
	}
	for _, f := range []*float64{&o.PricePerGPUHour, &o.Hours, &o.ComputeCost, &o.TotalCost, &o.CostPerMillionTokens,
		&o.PessimisticTotalCost, &o.ScalingEfficiency} {
		*f = round(*f, 6)
	}
	for k, v := range o.HiddenCosts {
		o.HiddenCosts[k] = round(v, 6)
	}
	if o.Serving != nil {
		o.Serving.MonthlyCost = round(o.Serving.MonthlyCost, 4)
		o.Serving.CostPerMillionOutputTokens = round(o.Serving.CostPerMillionOutputTokens, 6)
	}
}
