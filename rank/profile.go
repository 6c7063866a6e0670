package rank

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
)

// Origin says where a throughput figure comes from; it is always shown next
// to the number.
type Origin string

// The origins, in order of preference.
const (
	// OriginMeasured is the user's own short run: always preferred.
	OriginMeasured Origin = "measured"
	// OriginPublished is a published measurement from the reference data.
	OriginPublished Origin = "published"
	// OriginEstimated is the estimation model applied to card specs.
	OriginEstimated Origin = "estimated"
)

// Profile is the throughput of one workload on one card: tokens per second
// per GPU (trained tokens for training, output tokens for serving), where the
// figure comes from, and a note on how it was obtained.
type Profile struct {
	Card            string  `json:"card"`
	Workload        string  `json:"workload"`
	TokensPerSecond float64 `json:"tokens_per_second"`
	Origin          Origin  `json:"origin"`
	Note            string  `json:"note,omitempty"`
	// GPUs is the tensor-parallel group the figure is for when one GPU
	// cannot hold the model (serving); 0 or 1 means one GPU.
	GPUs int `json:"gpus,omitempty"`
	// Provider and Offer say where a measurement was taken: a run on one
	// provider's machines (or one offer's) applies to those before any
	// card-wide figure. Offer is the offer ID the provider's entries show.
	Provider string `json:"provider,omitempty"`
	Offer    string `json:"offer,omitempty"`
}

// SeedProfiles is the default profile of every card of the catalog for every
// workload: the published figure where one applies, else the estimate. A
// card and workload with neither (e.g. serving weights that do not fit) get
// no profile. The result is sorted by card, then workload.
func SeedProfiles(cat *normalize.Catalog, ws []Workload) []Profile {
	var out []Profile
	for _, id := range cat.IDs() {
		card, ok := cat.Card(id)
		if !ok {
			continue
		}
		for _, w := range ws {
			if p, ok := Published(w, id); ok {
				out = append(out, p)
				continue
			}
			if p, ok := Estimate(w, card); ok {
				out = append(out, p)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Profile) int {
		return cmp.Or(cmp.Compare(a.Card, b.Card), cmp.Compare(a.Workload, b.Workload))
	})
	return out
}

// Label is the origin as shown beside a figure: "measured@runpod" (or
// "measured@runpod/offer") for a measurement tied to where it was taken.
func (p Profile) Label() Origin {
	switch {
	case p.Provider == "":
		return p.Origin
	case p.Offer == "":
		return p.Origin + Origin("@"+p.Provider)
	}
	return p.Origin + Origin("@"+p.Provider+"/"+p.Offer)
}

// Scope says how specific a profile is: "card", "provider" or "offer".
func (p Profile) Scope() string {
	switch {
	case p.Provider == "":
		return "card"
	case p.Offer == "":
		return "provider"
	}
	return "offer"
}

// Key identifies a profile: card, workload, and where it was measured.
func (p Profile) Key() string {
	return p.Card + "\x00" + p.Workload + "\x00" + p.Provider + "\x00" + p.Offer
}

var originRank = map[Origin]int{OriginMeasured: 3, OriginPublished: 2, OriginEstimated: 1}

// profileSet answers which profile applies to an offer: the most specific
// measurement (offer > provider > card), else the card-wide best (measured
// over published over estimated). A measurement taken on one provider's
// machines says how those machines perform (they may be throttled or
// shared), so it never stands in for another provider's.
type profileSet struct {
	card     map[string]Profile // card \x00 workload
	specific map[string]Profile // Profile.Key of provider- and offer-level measurements
}

func newProfileSet(ps []Profile) profileSet {
	s := profileSet{card: make(map[string]Profile, len(ps)), specific: map[string]Profile{}}
	for _, p := range ps {
		if p.Provider != "" {
			s.specific[p.Key()] = p
			continue
		}
		k := p.Card + "\x00" + p.Workload
		if old, ok := s.card[k]; !ok || originRank[p.Origin] > originRank[old.Origin] {
			s.card[k] = p
		}
	}
	return s
}

// lookup is the profile of a workload on an offer of card by provider.
func (s profileSet) lookup(card, workload, provider, offer string) (Profile, bool) {
	if len(s.specific) > 0 && provider != "" {
		if offer != "" {
			if p, ok := s.specific[card+"\x00"+workload+"\x00"+provider+"\x00"+offer]; ok {
				return p, true
			}
		}
		if p, ok := s.specific[card+"\x00"+workload+"\x00"+provider+"\x00"]; ok {
			return p, true
		}
	}
	p, ok := s.card[card+"\x00"+workload]
	return p, ok
}

// BelowNormRatio is how far under its card's norm a measurement where it
// was taken may fall before it is flagged: more than 20% below (the field
// guides' sign of a throttled, refurbished or shared card).
const BelowNormRatio = 0.8

// NormCheck compares a provider- or offer-level measurement with the
// card's norm for the workload: the median of the card's other
// measurements, else the published figure, else the estimate.
type NormCheck struct {
	Card            string  `json:"card"`
	Workload        string  `json:"workload"`
	Provider        string  `json:"provider"`
	Offer           string  `json:"offer,omitempty"`
	TokensPerSecond float64 `json:"tokens_per_second"`
	Norm            float64 `json:"norm_tokens_per_second"`
	// NormFrom says what the norm is: "median of 3 other measurements",
	// "published" or "estimated".
	NormFrom string `json:"norm_from"`
	// Ratio is TokensPerSecond / Norm; BelowNorm is Ratio < BelowNormRatio.
	Ratio     float64 `json:"ratio"`
	BelowNorm bool    `json:"below_norm"`
	Note      string  `json:"note,omitempty"`
}

// Key identifies the measurement checked (the Profile.Key it came from).
func (c NormCheck) Key() string {
	return c.Card + "\x00" + c.Workload + "\x00" + c.Provider + "\x00" + c.Offer
}

// CheckNorms checks every measured provider- or offer-level profile of a
// known card and workload against its card's norm, sorted by key. Measured
// profiles of the card (other than the one checked) give the norm when
// there are any; a serving figure is compared only with figures for the
// same tensor-parallel group.
func CheckNorms(ps []Profile, ws []Workload, cat *normalize.Catalog) []NormCheck {
	wl := make(map[string]Workload, len(ws))
	for _, w := range ws {
		wl[w.Name] = w
	}
	var out []NormCheck
	for _, p := range ps {
		w, ok := wl[p.Workload]
		card, known := cat.Card(p.Card)
		if p.Provider == "" || p.Origin != OriginMeasured || p.TokensPerSecond <= 0 || !ok || !known {
			continue
		}
		c := NormCheck{Card: p.Card, Workload: p.Workload, Provider: p.Provider, Offer: p.Offer, TokensPerSecond: p.TokensPerSecond}
		var others []float64
		for _, q := range ps {
			if q.Origin == OriginMeasured && q.Card == p.Card && q.Workload == p.Workload && q.Key() != p.Key() &&
				max(q.GPUs, 1) == max(p.GPUs, 1) && q.TokensPerSecond > 0 {
				others = append(others, q.TokensPerSecond)
			}
		}
		switch {
		case len(others) > 0:
			c.Norm = Median(others)
			c.NormFrom = fmt.Sprintf("median of %d other measurement%s", len(others), plural(len(others)))
		default:
			n, ok := normOf(w, card, max(p.GPUs, 1))
			if !ok {
				continue
			}
			c.Norm, c.NormFrom = n.TokensPerSecond, string(n.Origin)
		}
		c.Ratio = c.TokensPerSecond / c.Norm
		c.BelowNorm = c.Ratio < BelowNormRatio
		if c.BelowNorm {
			c.Note = fmt.Sprintf("below norm: %.0f tok/s is %.0f%% of the card's norm %.0f (%s); a throttled, shared or refurbished card looks like this",
				c.TokensPerSecond, 100*c.Ratio, c.Norm, c.NormFrom)
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b NormCheck) int { return cmp.Compare(a.Key(), b.Key()) })
	return out
}

// normOf is the reference figure of a workload on a card at a group size:
// published (one GPU) else estimated.
func normOf(w Workload, card pricewatch.Card, group int) (Profile, bool) {
	if group == 1 {
		if p, ok := Published(w, card.ID); ok {
			return p, true
		}
	}
	return EstimateOn(w, card, group)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
