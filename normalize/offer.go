package normalize

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
)

// Currencies accepted in observations and requests.
var knownCurrency = map[string]bool{"USD": true, "CNY": true, "EUR": true}

// KnownCurrency reports whether pricewatch prices in the currency.
func KnownCurrency(c string) bool { return knownCurrency[strings.ToUpper(c)] }

// PerGPUHour converts an observation's price to a price per GPU-hour of use
// at full utilization, in the observation's currency.
func PerGPUHour(o pricewatch.Observation) (float64, error) {
	if math.IsNaN(o.Price) || math.IsInf(o.Price, 0) || o.Price <= 0 {
		return 0, fmt.Errorf("price %v is not a positive number", o.Price)
	}
	var hours float64
	switch o.Unit {
	case pricewatch.PerHour, "":
		hours = 1
	case pricewatch.PerDay:
		hours = 24
	case pricewatch.PerWeek:
		hours = 7 * 24
	case pricewatch.PerMonth:
		hours = pricewatch.HoursPerMonth
	case pricewatch.PerTerm:
		hours = o.Mode.CommitmentHours()
		if hours == 0 {
			return 0, fmt.Errorf("price per term for mode %q, which has no term", o.Mode)
		}
	default:
		return 0, fmt.Errorf("unknown price unit %q", o.Unit)
	}
	p := o.Price / hours
	if !o.PerGPU {
		if o.GPUCount <= 0 {
			return 0, errors.New("instance price without a GPU count")
		}
		p /= float64(o.GPUCount)
	}
	if !(p > 0) {
		// A tiny price spread over the hours and GPUs can underflow to 0,
		// which would rank as a free offer.
		return 0, fmt.Errorf("price %v per %s is not a positive number per GPU-hour", o.Price, o.Unit)
	}
	return p, nil
}

// Result is a normalized batch: the offers, the GPU names no alias knows
// (with how many offers carried each), and the observations rejected as
// invalid.
type Result struct {
	Offers  []pricewatch.Offer
	Unknown map[string]int
	Invalid error
	// InvalidCount is how many observations were rejected.
	InvalidCount int
}

// Normalize converts one source's observations, stamping them with the time
// of the run. Offers with an unknown GPU name are kept with an empty Card.
func (c *Catalog) Normalize(obs []pricewatch.Observation, at time.Time) Result {
	// Most observations become an offer: one allocation each, not a
	// doubling slice (100k offers of a marketplace are 49 MB).
	res := Result{Unknown: map[string]int{}, Offers: make([]pricewatch.Offer, 0, len(obs))}
	seen := make(map[string]int, len(obs))
	var errs []error
	for _, o := range obs {
		off, err := c.offer(o, at)
		if err != nil {
			res.InvalidCount++
			if len(errs) < 20 { // the first errors say enough; the count says how many
				errs = append(errs, fmt.Errorf("offer %s/%s/%s: %w", o.OfferID, o.Region, o.Mode, err))
			}
			continue
		}
		// A source listing the same offer twice (AWS spot sizes) keeps the first.
		if _, dup := seen[off.Key]; dup {
			continue
		}
		if off.Card == "" {
			res.Unknown[unknownName(o)]++
		}
		seen[off.Key] = len(res.Offers)
		res.Offers = append(res.Offers, off)
	}
	sort.Slice(res.Offers, func(i, j int) bool { return res.Offers[i].Key < res.Offers[j].Key })
	res.Invalid = errors.Join(errs...)
	return res
}

func unknownName(o pricewatch.Observation) string {
	if o.GPUMemoryGB > 0 {
		return fmt.Sprintf("%s (%g GB)", o.GPUName, math.Round(o.GPUMemoryGB))
	}
	return o.GPUName
}

func (c *Catalog) offer(o pricewatch.Observation, at time.Time) (pricewatch.Offer, error) {
	if o.Source == "" || o.OfferID == "" {
		return pricewatch.Offer{}, errors.New("missing source or offer id")
	}
	m, err := pricewatch.ParseMode(string(o.Mode))
	if err != nil {
		return pricewatch.Offer{}, err
	}
	o.Mode = m // the canonical spelling, for the key, the term and rankings
	cur := strings.ToUpper(o.Currency)
	if !KnownCurrency(cur) {
		return pricewatch.Offer{}, fmt.Errorf("unknown currency %q", o.Currency)
	}
	p, err := PerGPUHour(o)
	if err != nil {
		return pricewatch.Offer{}, err
	}
	kind, err := pricewatch.ParseKind(string(o.Kind))
	if err != nil {
		return pricewatch.Offer{}, err
	}
	unit, counts, err := RentTerms(o)
	if err != nil {
		return pricewatch.Offer{}, err
	}
	avail, err := pricewatch.ParseAvailability(string(o.Available))
	if err != nil {
		return pricewatch.Offer{}, err
	}
	card, _ := c.Resolve(o.Source, o.GPUName, o.GPUMemoryGB)
	provider := o.Provider
	if provider == "" {
		provider = o.Source
	}
	off := pricewatch.Offer{
		Key:             pricewatch.OfferKey(o.Source, o.OfferID, o.Region, o.Mode),
		Source:          o.Source,
		Provider:        provider,
		OfferID:         o.OfferID,
		Region:          o.Region,
		Kind:            kind,
		Card:            card,
		GPUName:         o.GPUName,
		GPUs:            o.GPUCount,
		RentUnit:        unit,
		GPUCounts:       counts,
		Available:       avail,
		Stock:           o.Stock,
		GPUFraction:     o.GPUFraction,
		Shared:          o.GPUFraction > 0 && o.GPUFraction < 1,
		Mode:            o.Mode,
		CommitmentHours: o.Mode.CommitmentHours(),
		PricePerGPUHour: p,
		Currency:        cur,
		Reliability:     o.Reliability,
		ReclaimRisk:     o.ReclaimRisk,
		Bid:             o.Bid,
		// The offer's own disk and egress prices, in its currency.
		StoragePerGBMonth: o.StoragePerGBMonth,
		EgressPerGB:       o.EgressPerGB,
		MonthlyCapHours:   o.MonthlyCapHours,
		FreeEgressGBMonth: o.FreeEgressGBMonth,
		URL:               o.URL,
		Machine:           o.Machine,
		FirstSeen:         at,
		ObservedAt:        at,
	}
	if c := strings.ToUpper(strings.TrimSpace(off.Country)); len(c) == 2 {
		off.Country = c
	} else {
		off.Country = "" // not an ISO code: no country rather than a wrong one
	}
	if off.Country == "" {
		// A cloud's region code says where it is (regions.csv).
		off.Country, _ = RegionCountry(provider, o.Region)
	}
	if len(counts) > 0 {
		off.RentUnitGPUs = counts[0]
		off.UnitPricePerHour = p * float64(counts[0])
	}
	return off, nil
}

// MaxRentGPUs bounds the GPU counts an observation may state, far above
// any real node (a 72-GPU rack is the largest sold today).
const MaxRentGPUs = 1024

// RentTerms checks how an observation says it can be rented and returns the
// unit and the GPU counts one rental can have, ascending: a fixed unit has
// exactly its GPUCount; a per-GPU offer has its GPUCounts, or 1..GPUCount
// when it lists none (1 when it states no count either). A reference row
// and a row with no stated unit have no counts: they are never rented.
func RentTerms(o pricewatch.Observation) (pricewatch.RentUnit, []int, error) {
	if o.Kind == pricewatch.KindReference {
		return o.RentUnit, nil, nil
	}
	if o.GPUCount < 0 || o.GPUCount > MaxRentGPUs {
		return "", nil, fmt.Errorf("GPU count %d outside 0..%d", o.GPUCount, MaxRentGPUs)
	}
	switch o.RentUnit {
	case "":
		return "", nil, nil
	case pricewatch.RentFixed:
		if o.GPUCount < 1 {
			return "", nil, errors.New("fixed rental unit without a GPU count")
		}
		if len(o.GPUCounts) > 0 {
			return "", nil, errors.New("a fixed rental unit lists no other GPU counts")
		}
		return o.RentUnit, []int{o.GPUCount}, nil
	case pricewatch.RentPerGPU:
		if len(o.GPUCounts) == 0 {
			return o.RentUnit, pricewatch.CountsUpTo(max(o.GPUCount, 1)), nil
		}
		prev := 0
		for _, n := range o.GPUCounts {
			if n <= prev || n > MaxRentGPUs {
				return "", nil, fmt.Errorf("GPU counts %v are not ascending within 1..%d", o.GPUCounts, MaxRentGPUs)
			}
			prev = n
		}
		if o.GPUCount > 0 && prev > o.GPUCount {
			return "", nil, fmt.Errorf("GPU counts %v exceed the offer's %d GPUs", o.GPUCounts, o.GPUCount)
		}
		return o.RentUnit, slices.Clone(o.GPUCounts), nil
	}
	return "", nil, fmt.Errorf("unknown rent unit %q", o.RentUnit)
}
