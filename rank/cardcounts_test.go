package rank_test

import (
	"maps"
	"testing"

	"github.com/pricewatch/pricewatch"
)

// CardCounts reads the per-card index lengths; it must count what a walk
// over every offer counts: two sources sharing a card, a reference row
// (counted: the browser lists references too) and an offer without a
// card (left out). By hand: A10 2 (runpod) + 1 (vast) = 3; L40S 1 + the
// reference = 2.
func TestCardCounts_MatchesEveryOffer(t *testing.T) {
	od, spot := pricewatch.ModeOnDemand, pricewatch.ModeSpot
	ref := off("index", "index", "ref-l40s", "L40S", od, 0.9, "USD")
	ref.Kind = pricewatch.KindReference
	offers := []pricewatch.Offer{
		off("runpod", "runpod", "a", "A10", od, 0.5, "USD"),
		off("runpod", "runpod", "b", "A10", spot, 0.3, "USD"),
		off("runpod", "runpod", "c", "L40S", od, 1.1, "USD"),
		off("vast", "vast", "d", "A10", od, 0.4, "USD"),
		off("vast", "vast", "e", "", od, 0.4, "USD"),
		ref,
	}
	snap := build(t, offers, nil)
	walked := map[string]int{}
	for o := range snap.Offers() {
		if o.Card != "" {
			walked[o.Card]++
		}
	}
	got := snap.CardCounts()
	if want := map[string]int{"A10": 3, "L40S": 2}; !maps.Equal(got, want) || !maps.Equal(walked, want) {
		t.Errorf("CardCounts %v, walk of every offer %v, want %v", got, walked, want)
	}
}
