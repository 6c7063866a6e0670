package rank

import (
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/normalize"
)

// A card whose form factor the offer did not state (normalize's lower-bound
// cards) is never estimated faster than any part it stands for, alone or
// in a group (its link is the slowest part's too), and its note says the
// figure is a floor. Fails if a lower-bound row is given a faster figure or
// link than one of its parts, or if the note is dropped.
func TestEstimate_LowerBoundCardsAreAFloor(t *testing.T) {
	cat := normalize.DefaultCatalog()
	serve70 := Workload{Name: "serve-70b", Model: Presets()["llama3.1-70b"], Method: MethodServe,
		WeightBytes: 2, Precision: PrecisionBF16, InputTokens: 1024, OutputTokens: 256}
	jobs := []struct {
		w    Workload
		gpus int
	}{
		{workload(t, "serve-7b"), 1},
		{workload(t, "lora-7b"), 1},
		{workload(t, "full-ft-7b"), 8},
		{serve70, 8},
	}
	lower := 0
	for _, id := range cat.IDs() {
		c, _ := cat.Card(id)
		if !normalize.FormNotStated(c) {
			continue
		}
		lower++
		compared := 0
		for _, vid := range cat.IDs() {
			v, _ := cat.Card(vid)
			if vid == id || normalize.FamilyModel(v) != normalize.FamilyModel(c) || v.MemoryGB != c.MemoryGB {
				continue
			}
			for _, j := range jobs {
				lp, lok := EstimateOn(j.w, c, j.gpus)
				vp, vok := EstimateOn(j.w, v, j.gpus)
				if !lok || !vok {
					continue
				}
				compared++
				if lp.TokensPerSecond > vp.TokensPerSecond*(1+1e-9) {
					t.Errorf("%s %s on %d: %.1f tok/s, above its part %s at %.1f", id, j.w.Name, j.gpus, lp.TokensPerSecond, vid, vp.TokensPerSecond)
				}
				if !strings.Contains(lp.Note, "a floor on throughput") {
					t.Errorf("%s %s: note %q does not say it is a floor", id, j.w.Name, lp.Note)
				}
				if strings.Contains(vp.Note, "a floor on throughput") {
					t.Errorf("%s: a stated part's note calls itself a floor", vid)
				}
			}
		}
		t.Logf("%s: %d comparisons", id, compared)
		if compared == 0 {
			t.Errorf("%s: no part of its family compared", id)
		}
	}
	if lower < 6 {
		t.Errorf("%d lower-bound cards, want the 6 of cards.csv", lower)
	}
}
