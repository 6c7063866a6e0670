package pipeline

import (
	"cmp"
	"slices"

	"github.com/pricewatch/pricewatch/rank"
)

// rankProfiles are the throughput profiles rankings, history and the
// profile list read: the reference figure (published, else estimated) of
// every card for every workload of this config, computed from the
// catalog, with the user's measured profiles from the store over them (a
// card-wide measurement replaces its card's reference figure, as Init's
// seeding keeps it). Computed rather than read back from the seeds Init
// stored, a workload added to the config ranks the stored offers at once,
// also in a pipeline that only reads (the CLI's), where Init never runs.
func (p *Pipeline) rankProfiles() ([]rank.Profile, error) {
	stored, err := p.store.Profiles()
	if err != nil {
		return nil, err
	}
	type cw struct{ card, workload string }
	measured := map[cw]bool{}
	out := make([]rank.Profile, 0, len(p.referenceProfiles())+len(stored))
	for _, s := range stored {
		if s.Origin != rank.OriginMeasured {
			continue // a seed of this or another config: the current seeds stand in for it
		}
		out = append(out, s)
		if s.Provider == "" {
			measured[cw{s.Card, s.Workload}] = true
		}
	}
	for _, s := range p.referenceProfiles() {
		if !measured[cw{s.Card, s.Workload}] {
			out = append(out, s)
		}
	}
	// The store's order, so that an unchanged set compares equal and the
	// ranking's profile index is reused (rank.BuildPacks).
	slices.SortFunc(out, func(a, b rank.Profile) int {
		return cmp.Or(cmp.Compare(a.Card, b.Card), cmp.Compare(a.Workload, b.Workload),
			cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Offer, b.Offer))
	})
	return out, nil
}

// referenceProfiles are the reference profiles of every card for the
// config's workloads (rank.SeedProfiles), computed once.
func (p *Pipeline) referenceProfiles() []rank.Profile {
	p.seedOnce.Do(func() { p.seeds = rank.SeedProfiles(p.catalog, p.workloads) })
	return p.seeds
}
