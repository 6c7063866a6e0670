package rank_test

import (
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/rank"
)

// A fractional GPU offer (Azure's NC8ads A10 v4: half an A10) is counted
// among the unfit offers and, when asked, listed with the reason, not
// dropped: half of the A10's 24 GB is 12 GB (11.2 GiB as the catalog
// counts the card: 22.4 GiB).
func TestPlan_FractionalListedUnfit(t *testing.T) {
	half := off("azure", "azure", "Standard_NC8ads_A10_v4", "A10", pricewatch.ModeOnDemand, 0.9, "USD")
	half.Shared, half.GPUFraction = true, 0.5
	whole := off("azure", "azure", "Standard_NV36ads_A10_v5", "A10", pricewatch.ModeOnDemand, 3.2, "USD")
	snap := planSnap(t, half, whole)
	spec := rank.JobSpec{Workload: "lora-7b", Tokens: 1e7, Modes: []string{"ondemand"}}
	res := planOf(t, snap, spec)
	if res.UnfitOffers != 1 || len(res.Options) != 1 || res.Options[0].Offer != "Standard_NV36ads_A10_v5" {
		t.Errorf("without include_unfit: unfit %d, options %+v", res.UnfitOffers, res.Options)
	}
	spec.IncludeUnfit = true
	o := optionOf(t, planOf(t, snap, spec), "Standard_NC8ads_A10_v4")
	if o.Fits || !strings.Contains(o.Reason, "a fractional GPU (0.5 of one A10, 11.2 GiB)") {
		t.Errorf("fractional: fits %v, reason %q", o.Fits, o.Reason)
	}
}
