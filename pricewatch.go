// Package pricewatch holds the domain of the daemon: raw observations as the
// sources state them, normalized offers priced per GPU-hour, billing modes,
// scrape runs and the small error taxonomy every other package shares.
//
// Units: a price is always in the currency named beside it; a normalized
// offer's price is per GPU per hour of use at full utilization. Times are UTC.
package pricewatch

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Mode is a billing mode: how an offer is paid for.
type Mode string

// The billing modes pricewatch knows. Commitment modes carry their term in
// the name so that a ranking can tell a 3-month from a 3-year commitment.
const (
	ModeOnDemand   Mode = "ondemand"
	ModeSpot       Mode = "spot"
	ModeDaily      Mode = "daily"
	ModeWeekly     Mode = "weekly"
	ModeMonthly    Mode = "monthly"
	ModeReserved3M Mode = "reserved-3m"
	ModeReserved6M Mode = "reserved-6m"
	ModeReserved1Y Mode = "reserved-1y"
	ModeReserved3Y Mode = "reserved-3y"
	ModeReserved5Y Mode = "reserved-5y"
)

// HoursPerMonth is the conversion used for monthly periods (365 × 24 / 12).
const HoursPerMonth = 730

var modeHours = map[Mode]float64{
	ModeOnDemand:   0,
	ModeSpot:       0,
	ModeDaily:      24,
	ModeWeekly:     7 * 24,
	ModeMonthly:    HoursPerMonth,
	ModeReserved3M: 3 * HoursPerMonth,
	ModeReserved6M: 6 * HoursPerMonth,
	ModeReserved1Y: 8760,
	ModeReserved3Y: 3 * 8760,
	ModeReserved5Y: 5 * 8760,
}

// Modes lists every known billing mode in a stable order.
func Modes() []Mode {
	return []Mode{ModeOnDemand, ModeSpot, ModeDaily, ModeWeekly, ModeMonthly, ModeReserved3M,
		ModeReserved6M, ModeReserved1Y, ModeReserved3Y, ModeReserved5Y}
}

// DefaultModes are the modes without commitment, which a ranking considers
// unless a request names others.
func DefaultModes() []Mode { return []Mode{ModeOnDemand, ModeSpot} }

// ParseMode validates a mode name.
func ParseMode(s string) (Mode, error) {
	m := Mode(strings.ToLower(strings.TrimSpace(s)))
	if _, ok := modeHours[m]; !ok {
		return "", Errorf(EInvalid, "unknown mode %q (known: %s)", s, joinModes(Modes()))
	}
	return m, nil
}

// ParseModes parses a comma-separated list of modes; empty means DefaultModes.
func ParseModes(s string) ([]Mode, error) {
	if strings.TrimSpace(s) == "" {
		return DefaultModes(), nil
	}
	var out []Mode
	for _, part := range strings.Split(s, ",") {
		m, err := ParseMode(part)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out, nil
}

func joinModes(ms []Mode) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = string(m)
	}
	return strings.Join(s, ", ")
}

// CommitmentHours is the length of the mode's commitment in hours; 0 for
// modes without commitment.
func (m Mode) CommitmentHours() float64 { return modeHours[m] }

// Committed reports whether the mode binds the renter for a period.
func (m Mode) Committed() bool { return modeHours[m] > 0 }

// PriceUnit says what span of time a stated price pays for.
type PriceUnit string

// Price units as sources state them.
const (
	PerHour  PriceUnit = "hour"
	PerDay   PriceUnit = "day"
	PerWeek  PriceUnit = "week"
	PerMonth PriceUnit = "month"
	// PerTerm is a total for the whole commitment term of the offer's mode
	// (Azure reservations state the 1- or 3-year total).
	PerTerm PriceUnit = "term"
)

// Kind tells a rentable offer from a reference price.
type Kind string

// The kinds of priced rows.
const (
	// KindOffer is something a team can rent at the stated price.
	KindOffer Kind = "offer"
	// KindReference is a price that cannot itself be rented: a price index
	// (the cheapest price some platform quotes for a card), a catalog's
	// median over many machines, any aggregate a source reports. It is
	// stored and shown beside the offers, never ranked, planned or alerted
	// on.
	KindReference Kind = "reference"
)

// ParseKind validates a kind name; empty means KindOffer.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(strings.ToLower(strings.TrimSpace(s))); k {
	case "", KindOffer:
		return KindOffer, nil
	case KindReference:
		return k, nil
	}
	return "", Errorf(EInvalid, "unknown kind %q (offer or reference)", s)
}

// RentUnit says how an offer's GPUs can be rented, which decides what a job
// on it is billed for.
type RentUnit string

// The rentable units.
const (
	// RentFixed is one unit of GPUCount GPUs rented whole: an instance type,
	// a marketplace bundle, a bare-metal node. A job that uses fewer of its
	// GPUs still pays for all of them.
	RentFixed RentUnit = "fixed"
	// RentPerGPU is a price per GPU where one rental takes any of the GPU
	// counts the source allows (GPUCounts; 1..GPUCount when it lists none).
	RentPerGPU RentUnit = "per_gpu"
)

// Availability says whether an offer can be rented now.
type Availability string

// The availabilities. A source that does not say leaves an offer unknown;
// rankings, plans and alerts use offers that are not known to be out.
const (
	AvailableYes     Availability = "yes"
	AvailableNo      Availability = "no"
	AvailableUnknown Availability = "unknown"
)

// ParseAvailability validates an availability; empty means unknown.
func ParseAvailability(s string) (Availability, error) {
	switch a := Availability(strings.ToLower(strings.TrimSpace(s))); a {
	case "", AvailableUnknown:
		return AvailableUnknown, nil
	case AvailableYes, AvailableNo:
		return a, nil
	}
	return "", Errorf(EInvalid, "unknown availability %q (yes, no or unknown)", s)
}

// Observation is one price as a source states it, before normalization: the
// GPU name as written, the price in the source's unit and currency, for the
// whole instance or per GPU.
type Observation struct {
	Source   string `json:"source"`
	Provider string `json:"provider,omitempty"`
	// OfferID names the offer the way the source does (instance type, GPU
	// type and tier, marketplace offer id); stable across runs where the
	// source allows.
	OfferID string `json:"offer_id"`
	Region  string `json:"region,omitempty"`
	GPUName string `json:"gpu_name"`
	// GPUCount is the number of GPUs the price pays for; 0 when the source
	// does not state it (the price must then be per GPU).
	GPUCount    int     `json:"gpu_count"`
	GPUMemoryGB float64 `json:"gpu_memory_gb,omitempty"`
	// GPUFraction is set for shared or fractional GPUs (vGPU, MIG, 1/6 of a
	// card); 0 means whole GPUs.
	GPUFraction float64   `json:"gpu_fraction,omitempty"`
	Price       float64   `json:"price"`
	Currency    string    `json:"currency"`
	Unit        PriceUnit `json:"unit"`
	PerGPU      bool      `json:"per_gpu"`
	Mode        Mode      `json:"mode"`
	// Reliability is the marketplace's 0–1 score where it gives one.
	Reliability *float64 `json:"reliability,omitempty"`
	// ReclaimRisk is the source's interruption band for spot capacity
	// (e.g. AWS Spot Advisor "<5%"), where it publishes one.
	ReclaimRisk string `json:"reclaim_risk,omitempty"`
	URL         string `json:"url,omitempty"`
	// Bid marks a price that is a bid on an interruptible market (Vast's
	// minimum bid): the least a renter can offer, kept only while nobody
	// bids more.
	Bid bool `json:"bid,omitempty"`
	// StoragePerGBMonth and EgressPerGB are the offer's own prices of disk
	// and of internet egress, in Currency, where the source states them
	// (Vast: storage_cost, inet_up_cost); 0: not stated.
	StoragePerGBMonth float64 `json:"storage_price_gb_month,omitempty"`
	EgressPerGB       float64 `json:"egress_price_gb,omitempty"`
	// MonthlyCapHours is the hours after which an hourly instance bills
	// nothing more in a month, where the source prices the plan both ways
	// (Vultr: monthly_cost ÷ hourly_cost); FreeEgressGBMonth the egress
	// its plan includes a month (Vultr's bandwidth). 0: not stated.
	MonthlyCapHours   float64 `json:"monthly_cap_hours,omitempty"`
	FreeEgressGBMonth float64 `json:"free_egress_gb_month,omitempty"`
	// Kind is KindReference for rows that cannot be rented (indexes,
	// medians); empty means KindOffer.
	Kind Kind `json:"kind,omitempty"`
	// RentUnit says how the offer is rented; empty when the source does not
	// say, and such an offer is never ranked or planned.
	RentUnit RentUnit `json:"rent_unit,omitempty"`
	// GPUCounts are the GPU counts one per-GPU rental may take, ascending;
	// empty means every count from 1 to GPUCount.
	GPUCounts []int `json:"gpu_counts,omitempty"`
	// Available says whether the offer can be rented now (empty: the
	// source does not say); Stock is the source's own stock level where it
	// states one ("High", "3 GPUs free").
	Available Availability `json:"available,omitempty"`
	Stock     string       `json:"stock,omitempty"`
	// Machine is what comes with the GPUCount GPUs the price pays for,
	// where the source states it.
	Machine
}

// Machine is what comes with an observation's GPUs beyond them, where the
// source states it: VCPUs, RAMGB and DiskGB of the GPUCount GPUs the price
// pays for (0: not stated; RAM and disk in GiB where the source counts in
// binary units, as clouds do, else as it states them); Interconnect the
// GPU-to-GPU link the source states for that unit ("nvlink", "pcie";
// empty: not stated, the card's own link applies); Country the ISO
// 3166-1 alpha-2 code of where it runs (the source's, else normalize's
// region table); RentURL the page where it is rented (URL is where its
// price was read).
type Machine struct {
	VCPUs        float64 `json:"vcpus,omitempty"`
	RAMGB        float64 `json:"ram_gb,omitempty"`
	DiskGB       float64 `json:"disk_gb,omitempty"`
	Interconnect string  `json:"interconnect,omitempty"`
	Country      string  `json:"country,omitempty"`
	RentURL      string  `json:"rent_url,omitempty"`
}

// Offer is a normalized observation: a canonical card, a price per GPU-hour
// in the offer's own currency, and the times it was seen.
type Offer struct {
	Key      string `json:"key"`
	Source   string `json:"source"`
	Provider string `json:"provider"`
	OfferID  string `json:"offer_id"`
	Region   string `json:"region,omitempty"`
	// Kind is KindOffer for rentable offers and KindReference for reference
	// prices, which are never ranked, planned or alerted on.
	Kind Kind `json:"kind"`
	// Card is the canonical card id (cards.csv canonical_id); empty when the
	// GPU name is unknown: such an offer is kept and reported, never ranked.
	Card    string `json:"card,omitempty"`
	GPUName string `json:"gpu_name"`
	// GPUs is the GPUs of a fixed unit, or the most GPUs one per-GPU rental
	// takes.
	GPUs int `json:"gpus"`
	// RentUnit is how the offer is rented (empty: not stated, never
	// ranked); GPUCounts the GPU counts one rental can have, ascending (a
	// fixed unit has exactly one); RentUnitGPUs the smallest of them and
	// UnitPricePerHour what that smallest rental costs per hour, in
	// Currency.
	RentUnit         RentUnit `json:"rent_unit,omitempty"`
	GPUCounts        []int    `json:"gpu_counts,omitempty"`
	RentUnitGPUs     int      `json:"rent_unit_gpus,omitempty"`
	UnitPricePerHour float64  `json:"unit_price_per_hour,omitempty"`
	// GPUFraction is the share of one GPU a fractional offer rents (a 1/6
	// vGPU: 0.1667); its PricePerGPUHour is the share's price, and
	// WholeGPUPricePerHour what a whole GPU at that rate would cost.
	GPUFraction float64 `json:"gpu_fraction,omitempty"`
	Shared      bool    `json:"shared,omitempty"`
	// Available is whether the offer can be rented now (yes, no, unknown)
	// and Stock the source's stock level; a change of either is a change
	// of the offer's terms, recorded in the history.
	Available Availability `json:"available"`
	Stock     string       `json:"stock,omitempty"`
	Mode      Mode         `json:"mode"`
	// CommitmentHours is the term the renter commits to (0: none).
	CommitmentHours float64  `json:"commitment_hours,omitempty"`
	PricePerGPUHour float64  `json:"price_per_gpu_hour"`
	Currency        string   `json:"currency"`
	Reliability     *float64 `json:"reliability,omitempty"`
	ReclaimRisk     string   `json:"reclaim_risk,omitempty"`
	URL             string   `json:"url,omitempty"`
	// Bid, StoragePerGBMonth and EgressPerGB are the observation's (a bid
	// price; the offer's own disk and egress prices, in Currency).
	Bid               bool    `json:"bid,omitempty"`
	StoragePerGBMonth float64 `json:"storage_price_gb_month,omitempty"`
	EgressPerGB       float64 `json:"egress_price_gb,omitempty"`
	// MonthlyCapHours and FreeEgressGBMonth are the plan's own monthly
	// cap and included egress (see Observation).
	MonthlyCapHours   float64 `json:"monthly_cap_hours,omitempty"`
	FreeEgressGBMonth float64 `json:"free_egress_gb_month,omitempty"`
	// Machine is the observation's: what comes with the offer's GPUs.
	Machine
	// FirstSeen is when the offer first appeared; ObservedAt when the
	// current price was last confirmed by a successful run.
	FirstSeen  time.Time `json:"first_seen"`
	ObservedAt time.Time `json:"observed_at"`
}

// OfferKey builds the stable key of an offer: source/offer-id/region/mode,
// with "-" for a source that states no region.
func OfferKey(source, offerID, region string, mode Mode) string {
	if region == "" {
		region = "-"
	}
	return source + "/" + offerID + "/" + region + "/" + string(mode)
}

// SamePrice reports whether two offers carry the same priced terms, which
// is what decides whether a re-scrape writes a history row.
func (o Offer) SamePrice(p Offer) bool {
	return o.PricePerGPUHour == p.PricePerGPUHour && o.Currency == p.Currency &&
		o.GPUs == p.GPUs && o.Card == p.Card && o.Shared == p.Shared &&
		o.Kind == p.Kind && o.RentUnit == p.RentUnit && slices.Equal(o.GPUCounts, p.GPUCounts) &&
		o.Available == p.Available && o.Stock == p.Stock
}

// Unavailable reports whether the source says the offer cannot be rented
// now (an unknown availability is not "no").
func (o Offer) Unavailable() bool { return o.Available == AvailableNo }

// Reference reports whether the row is a reference price, not an offer.
func (o Offer) Reference() bool { return o.Kind == KindReference }

// WholeGPUPricePerHour is a fractional offer's price scaled to one whole
// GPU (the share's price / the share); ok is false for an offer of whole
// GPUs, whose PricePerGPUHour already is that.
func (o Offer) WholeGPUPricePerHour() (float64, bool) {
	if o.GPUFraction > 0 && o.GPUFraction < 1 {
		return o.PricePerGPUHour / o.GPUFraction, true
	}
	return 0, false
}

// RentCount is the GPUs a job that needs at least need GPUs (and at most
// most, 0 for no limit) rents on this offer: a fixed unit's GPUs when they
// are enough and within the limit, else the smallest allowed per-GPU count
// that is. ok is false when no rental of the offer qualifies.
func (o Offer) RentCount(need, most int) (int, bool) {
	need = max(need, 1)
	for _, c := range o.GPUCounts {
		if most > 0 && c > most {
			break
		}
		if c >= need {
			return c, true
		}
	}
	return 0, false
}

// CountsUpTo lists 1..n, the counts of a per-GPU offer that takes any
// count up to n.
func CountsUpTo(n int) []int {
	out := make([]int, 0, max(n, 0))
	for i := 1; i <= n; i++ {
		out = append(out, i)
	}
	return out
}

// Rates are currency reference rates: units of each currency per one unit
// of Base (the ECB quotes per EUR).
type Rates struct {
	Base  string             `json:"base"`
	Date  string             `json:"date"`
	Rates map[string]float64 `json:"rates"`
	// FetchedAt is when the rates were last fetched successfully.
	FetchedAt time.Time `json:"fetched_at"`
}

// Convert converts amount from one currency to another.
func (r *Rates) Convert(amount float64, from, to string) (float64, error) {
	from, to = strings.ToUpper(from), strings.ToUpper(to)
	if from == to {
		return amount, nil
	}
	if r == nil {
		return 0, Errorf(EUnavailable, "no exchange rates yet to convert %s to %s", from, to)
	}
	rf, ok := r.rate(from)
	if !ok {
		return 0, Errorf(EInvalid, "no exchange rate for %s", from)
	}
	rt, ok := r.rate(to)
	if !ok {
		return 0, Errorf(EInvalid, "no exchange rate for %s", to)
	}
	return amount / rf * rt, nil
}

// Has reports whether the currency can be converted.
func (r *Rates) Has(cur string) bool {
	if r == nil {
		return false
	}
	_, ok := r.rate(strings.ToUpper(cur))
	return ok
}

func (r *Rates) rate(cur string) (float64, bool) {
	if cur == strings.ToUpper(r.Base) {
		return 1, true
	}
	v, ok := r.Rates[cur]
	return v, ok && v > 0
}

// Run is the record of one scrape of one source.
type Run struct {
	Source   string        `json:"source"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration_ns"`
	OK       bool          `json:"ok"`
	// Offers counts the offers the run parsed; Changes the history rows it
	// wrote (new, changed and vanished offers).
	Offers  int `json:"offers"`
	Changes int `json:"changes"`
	// Unknown lists GPU names no alias maps to a card, with their counts.
	Unknown map[string]int `json:"unknown,omitempty"`
	// Invalid counts observations skipped for a zero, missing or
	// malformed price or unit; a run fails only when nothing valid remains.
	Invalid int    `json:"invalid,omitempty"`
	Error   string `json:"error,omitempty"`
	// Held is set when the run was kept but not applied: RunQuarantined
	// (its prices are implausible) or RunSuspect (its layout drifted);
	// Reason says why, with the numbers.
	Held   RunHold `json:"held,omitempty"`
	Reason string  `json:"reason,omitempty"`
	// HeldOffers are offers of an applied run held back as outliers (their
	// last good version stays), with the price they came with.
	HeldOffers []HeldOffer `json:"held_offers,omitempty"`
}

// RunHold says why a successful fetch was kept out of the offers.
type RunHold string

// The holds.
const (
	RunQuarantined RunHold = "quarantined"
	RunSuspect     RunHold = "suspect"
	// RunSuperseded: the run's answer is older than one already applied
	// (two runs of the source overlapped); it is recorded, not applied.
	RunSuperseded RunHold = "superseded"
)

// HeldOffer is an outlier offer held back from an applied run.
type HeldOffer struct {
	Key             string  `json:"key"`
	PricePerGPUHour float64 `json:"price_per_gpu_hour"`
	Currency        string  `json:"currency"`
	Reason          string  `json:"reason"`
}

// Error codes: a small taxonomy mapped to HTTP statuses in one place.
const (
	EInvalid     = "invalid"
	ENotFound    = "not_found"
	EUnavailable = "unavailable"
	EInternal    = "internal"
)

// Error is an error with a code and a message safe to show to a user.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

// Errorf builds an *Error.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of an *Error in err's chain, else EInternal.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	}
	if asError(err, &e) {
		return e.Code
	}
	return EInternal
}

// Card is one GPU variant from the card catalog (reference cards.csv).
type Card struct {
	ID             string  `json:"id"`
	Vendor         string  `json:"vendor"`
	Model          string  `json:"model"`
	Variant        string  `json:"variant"`
	Architecture   string  `json:"architecture"`
	FormFactor     string  `json:"form_factor"`
	MemoryGB       float64 `json:"memory_gb"`
	BandwidthGBs   float64 `json:"memory_bandwidth_gbs"`
	BF16TFLOPS     float64 `json:"bf16_dense_tflops,omitempty"`
	FP16TFLOPS     float64 `json:"fp16_dense_tflops,omitempty"`
	FP8TFLOPS      float64 `json:"fp8_dense_tflops,omitempty"`
	FP4TFLOPS      float64 `json:"fp4_dense_tflops,omitempty"`
	TDPWatts       float64 `json:"tdp_w,omitempty"`
	Interconnect   string  `json:"interconnect"`
	LinkGBs        float64 `json:"gpu_link_gbs"`
	EstimatorClass string  `json:"estimator_class"`
	// Link is the GPU-to-GPU link a machine of this card has (cards.csv
	// link, resolved from links.csv); Beyond are the links a group larger
	// than Link's domain crosses, in order (the PCIe a bridged pair falls
	// back to, the network between machines).
	Link   Link    `json:"link"`
	Beyond [2]Link `json:"-"`
	// MemoryUnit is what MemoryGB counts: "GiB" (the default: memory is
	// marketed in binary units) or "GB"; ECCReserve is the share ECC takes
	// where it is on by default (GDDR data-centre cards: 1/16).
	MemoryUnit string  `json:"memory_unit,omitempty"`
	ECCReserve float64 `json:"ecc_reserve,omitempty"`

	// BF16 is cards.csv bf16: whether the card computes in bfloat16 at
	// all. Pascal, Volta and Turing (P100, V100, T4, RTX 20, GTX 16) do
	// not; they train in FP16 mixed precision.
	BF16 bool `json:"bf16"`
	// FP16Slow is cards.csv fp16_slow: FP16 with FP32 accumulation (what
	// mixed-precision training uses) runs at about half of FP16TFLOPS or
	// worse. GeForce cards accumulate in FP32 at half rate, cards without
	// tensor cores (P100, GTX 16) at their FP32 rate, and consumer Pascal,
	// Maxwell and the Radeon Pro V520 have no usable 16-bit path at all
	// (FP16TFLOPS empty).
	FP16Slow bool `json:"fp16_slow,omitempty"`
	// FP32TFLOPS is the non-tensor FP32 rate; cards with no usable 16-bit
	// rate have only this one, and no estimate.
	FP32TFLOPS float64 `json:"fp32_tflops,omitempty"`
}

// Link is a GPU-to-GPU link kind (normalize/data/links.csv).
type Link struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// GBsPerDirection is what one GPU sends (and receives at once), GB/s.
	GBsPerDirection float64 `json:"gbs_per_direction"`
	// P2P is false where transfers are staged through host memory.
	P2P bool `json:"p2p"`
	// LatencyUS is the fixed cost of one small all-reduce, microseconds.
	LatencyUS float64 `json:"latency_us"`
	// DomainGPUs is how many GPUs the link joins.
	DomainGPUs int    `json:"domain_gpus"`
	SourceURL  string `json:"source_url,omitempty"`
}

// BytesPerGiB is a binary gigabyte.
const BytesPerGiB = 1 << 30

// CapacityGiB is the memory software sees on the card, in GiB: MemoryGB
// in its unit (MemoryUnit: GiB unless "GB"), less the ECC reserve.
func (c Card) CapacityGiB() float64 {
	gib := c.MemoryGB
	if c.MemoryUnit == "GB" {
		gib = c.MemoryGB * 1e9 / BytesPerGiB
	}
	return gib * (1 - c.ECCReserve)
}

// LinkFor is the link a group of g GPUs of the card communicates over:
// the card's own link while g fits its domain, else the first link beyond
// whose domain holds g. ok is false when none does (or the card has no
// link data).
func (c Card) LinkFor(g int) (Link, bool) {
	for _, l := range [3]Link{c.Link, c.Beyond[0], c.Beyond[1]} {
		if l.Name != "" && g <= l.DomainGPUs {
			return l, true
		}
	}
	return Link{}, false
}

// HasBF16 reports whether the card computes in bfloat16 (cards.csv bf16):
// Pascal, Volta and Turing (P100, V100, T4, RTX 20, GTX 16) do not, and
// train in FP16 mixed precision instead. The catalog only sets it with a
// BF16 rate.
func (c Card) HasBF16() bool { return c.BF16 }

// TrainPeakTFLOPS is the dense 16-bit tensor rate with FP32 accumulation
// that mixed-precision training (and the estimator) uses: BF16 where the
// card has it, else FP16 (T4, V100) — halved on a card whose FP16 figure
// is the FP16-accumulate rate or twice its FP32 rate (FP16Slow: GeForce
// Turing, GTX 16, P100).
func (c Card) TrainPeakTFLOPS() float64 {
	if c.BF16TFLOPS > 0 {
		return c.BF16TFLOPS
	}
	if c.FP16Slow {
		return c.FP16TFLOPS / 2
	}
	return c.FP16TFLOPS
}
