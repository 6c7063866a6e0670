package config

import "fmt"

// Ingest configures the checks a run passes before its offers are
// applied: a plausibility gate on prices and a layout-drift check.
type Ingest struct {
	// Band is the factor beyond which a price is implausible: a run whose
	// prices of a mode moved as a whole by at least Band (or at most
	// 1/Band) from the source's accepted level, while the market did not
	// move with them, is quarantined until an operator accepts it; an offer
	// whose price moved by Band is held back as an outlier. A first run is
	// judged against a band learned from the market's own spread, never
	// narrower than Band.
	Band float64 `yaml:"band"`
	// ConfirmRuns is how many runs of the source in a row must bring the
	// same price before an outlier offer held back is applied (a held
	// level of the whole source waits for an operator instead).
	ConfirmRuns int `yaml:"confirm_runs"`
	// MaxMappedDrop is the share of the last applied run's mapped offers a
	// mode may lose before the run is suspect; MaxUnknownRise the rise of
	// the share of offers mapping to no card.
	MaxMappedDrop  float64 `yaml:"max_mapped_drop"`
	MaxUnknownRise float64 `yaml:"max_unknown_rise"`
	// MaxCardLoss is the share of a mode's mapped offers that the cards
	// losing more than half their offers may lose together before the run
	// is suspect: a layout loss is judged per card as well as per mode.
	MaxCardLoss float64 `yaml:"max_card_loss"`
}

// DefaultIngest: ⅓–3× band, 3 confirming runs, 20% drop per mode, 10%
// lost in cards that lost most of theirs, 20 points rise.
func DefaultIngest() Ingest {
	return Ingest{Band: 3, ConfirmRuns: 3, MaxMappedDrop: 0.2, MaxUnknownRise: 0.2, MaxCardLoss: 0.1}
}

func (in Ingest) validate(bad func(field, format string, args ...any)) {
	if !(in.Band > 1 && in.Band <= 100) {
		bad("ingest.band", "must be within (1, 100]")
	}
	if in.ConfirmRuns < 1 || in.ConfirmRuns > 100 {
		bad("ingest.confirm_runs", "must be within 1..100")
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"ingest.max_mapped_drop", in.MaxMappedDrop}, {"ingest.max_unknown_rise", in.MaxUnknownRise}, {"ingest.max_card_loss", in.MaxCardLoss}} {
		if !(f.v > 0 && f.v <= 1) {
			bad(f.name, "must be within (0, 1], got %s", fmt.Sprint(f.v))
		}
	}
}
