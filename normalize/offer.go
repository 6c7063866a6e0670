package normalize

import (
	"errors"
	"fmt"
	"math"
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
}

// Normalize converts one source's observations, stamping them with the time
// of the run. Offers with an unknown GPU name are kept with an empty Card.
func (c *Catalog) Normalize(obs []pricewatch.Observation, at time.Time) Result {
	res := Result{Unknown: map[string]int{}}
	seen := map[string]int{}
	var errs []error
	for _, o := range obs {
		off, err := c.offer(o, at)
		if err != nil {
			errs = append(errs, fmt.Errorf("offer %s/%s/%s: %w", o.OfferID, o.Region, o.Mode, err))
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
	card, _ := c.Resolve(o.Source, o.GPUName, o.GPUMemoryGB)
	provider := o.Provider
	if provider == "" {
		provider = o.Source
	}
	return pricewatch.Offer{
		Key:             pricewatch.OfferKey(o.Source, o.OfferID, o.Region, o.Mode),
		Source:          o.Source,
		Provider:        provider,
		OfferID:         o.OfferID,
		Region:          o.Region,
		Card:            card,
		GPUName:         o.GPUName,
		GPUs:            o.GPUCount,
		GPUFraction:     o.GPUFraction,
		Shared:          o.GPUFraction > 0 && o.GPUFraction < 1,
		Mode:            o.Mode,
		CommitmentHours: o.Mode.CommitmentHours(),
		PricePerGPUHour: p,
		Currency:        cur,
		Reliability:     o.Reliability,
		ReclaimRisk:     o.ReclaimRisk,
		URL:             o.URL,
		FirstSeen:       at,
		ObservedAt:      at,
	}, nil
}
