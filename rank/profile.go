package rank

import (
	"cmp"
	"slices"

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
