package history_test

import (
	"slices"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/history"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// Apply tells the store when the profiles the series price with changed,
// so it resets the series: the same profiles again are no change (the
// fingerprint is not worked again for them), a preferred profile's new
// figure is, even when the caller edits the slice it gave Reset in place.
func TestTracker_ApplySeesProfileChanges(t *testing.T) {
	ws := rank.BuiltinWorkloads()
	profiles := rank.SeedProfiles(normalize.DefaultCatalog(), ws)
	if len(profiles) == 0 {
		t.Fatal("no seed profiles")
	}
	tr := history.NewTracker(ws, normalize.DefaultCatalog())
	none := func(func(uint32, *pricewatch.Offer) bool) {}
	keys := store.KeyOf(func(uint32) string { return "" })
	tr.Reset(none, profiles, keys)
	fp0 := tr.Fingerprint()
	if fp, changed := tr.Apply(nil, slices.Clone(profiles), keys); changed || fp != fp0 {
		t.Errorf("same profiles: changed %v, fingerprint %s → %s", changed, fp0, fp)
	}
	edited := slices.Clone(profiles)
	edited[0].TokensPerSecond *= 2
	fp1, changed := tr.Apply(nil, edited, keys)
	if !changed || fp1 == fp0 {
		t.Errorf("a profile's figure doubled: changed %v, fingerprint %s → %s", changed, fp0, fp1)
	}
	// The caller's slice given to Reset, edited in place afterwards, is not
	// what the tracker compares with.
	profiles[0].TokensPerSecond *= 2
	if _, changed := tr.Apply(nil, profiles, keys); !changed {
		t.Error("the slice given to Reset, edited in place: no change seen")
	}
}
