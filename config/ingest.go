package config

import "fmt"

// Ingest configures the checks a run passes before its offers are
// applied: a plausibility gate on prices and a layout-drift check.
type Ingest struct {
	// Band is the factor beyond which a price is implausible: a run whose
	// prices moved by a common factor of at least Band (or at most 1/Band),
	// or whose offers mostly lie outside 1/Band..Band × the card's market
	// band (the median of other sources' offers for the card and mode), is
	// quarantined; single outliers are held back.
	Band float64 `yaml:"band"`
	// ConfirmRuns is how many runs in a row must show the same new level
	// (a factor, a smaller layout, an outlier's price) before it is
	// applied.
	ConfirmRuns int `yaml:"confirm_runs"`
	// MaxMappedDrop is the share of the last applied run's mapped offers a
	// mode may lose before the run is suspect; MaxUnknownRise the rise of
	// the share of offers mapping to no card.
	MaxMappedDrop  float64 `yaml:"max_mapped_drop"`
	MaxUnknownRise float64 `yaml:"max_unknown_rise"`
}

// DefaultIngest: ⅓–3× band, 3 confirming runs, 20% drop, 20 points rise.
func DefaultIngest() Ingest {
	return Ingest{Band: 3, ConfirmRuns: 3, MaxMappedDrop: 0.2, MaxUnknownRise: 0.2}
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
	}{{"ingest.max_mapped_drop", in.MaxMappedDrop}, {"ingest.max_unknown_rise", in.MaxUnknownRise}} {
		if !(f.v > 0 && f.v <= 1) {
			bad(f.name, "must be within (0, 1], got %s", fmt.Sprint(f.v))
		}
	}
}
