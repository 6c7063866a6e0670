package httpapi

import (
	"slices"
	"testing"
)

// TestPlanFields_TheSpecTakesEach: every input the plan form declares is
// a field of the job spec (the form leaves out one the spec does not take,
// so a field missing from the spec would silently drop from the form), and
// no two inputs share a name.
func TestPlanFields_TheSpecTakesEach(t *testing.T) {
	var names []string
	for _, f := range planFieldsDeclared {
		if !specTakes(f) {
			t.Errorf("the job spec has no %s (input %s)", f.Path, f.Name)
		}
		if slices.Contains(names, f.Name) {
			t.Errorf("two inputs named %s", f.Name)
		}
		names = append(names, f.Name)
	}
	if len(planFields) != len(planFieldsDeclared) {
		t.Errorf("the form has %d of %d inputs", len(planFields), len(planFieldsDeclared))
	}
}
