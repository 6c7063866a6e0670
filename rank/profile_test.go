package rank

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestSeedProfiles_Builtins(t *testing.T) {
	cat := catalog()
	ws := BuiltinWorkloads()
	ps := SeedProfiles(cat, ws)

	t.Run("sorted by card then workload, one per pair", func(t *testing.T) {
		for i := 1; i < len(ps); i++ {
			a, b := ps[i-1], ps[i]
			if a.Card > b.Card || (a.Card == b.Card && a.Workload >= b.Workload) {
				t.Errorf("profiles %d and %d out of order: %s/%s, %s/%s", i-1, i, a.Card, a.Workload, b.Card, b.Workload)
			}
		}
	})

	t.Run("published where one applies, else estimated", func(t *testing.T) {
		got := map[string]Profile{}
		for _, p := range ps {
			got[p.Card+"/"+p.Workload] = p
		}
		missing := 0
		for _, id := range cat.IDs() {
			c, _ := cat.Card(id)
			for _, w := range ws {
				p, have := got[id+"/"+w.Name]
				pub, okPub := Published(w, id)
				est, okEst := Estimate(w, c)
				switch {
				case okPub:
					if !have || p != pub {
						t.Errorf("%s/%s = %+v, want published %+v", id, w.Name, p, pub)
					}
				case okEst:
					if !have || p != est {
						t.Errorf("%s/%s = %+v, want estimated %+v", id, w.Name, p, est)
					}
				default:
					missing++
					if have {
						t.Errorf("%s/%s = %+v, want no profile", id, w.Name, p)
					}
				}
				if have && (p.TokensPerSecond <= 0 || p.Note == "") {
					t.Errorf("%s/%s = %+v: want positive throughput and a note", id, w.Name, p)
				}
			}
		}
		if len(ps)+missing != len(cat.IDs())*len(ws) {
			t.Errorf("%d profiles + %d without = %d, want %d", len(ps), missing, len(ps)+missing, len(cat.IDs())*len(ws))
		}
	})

	t.Run("examples", func(t *testing.T) {
		for _, tc := range []struct {
			card, workload string
			origin         Origin
			tps            float64 // 0: no profile
		}{
			// U × peak / (6 × 7e9 + 16 × 32 × 4096 × 2048 = 46.295e9 FLOPs).
			{"H100-80GB-SXM", "lora-7b", OriginEstimated, calibrated.util["hopper_blackwell"] * 989e12 / 46.295e9},
			{"A100-80GB-SXM", "lora-7b", OriginPublished, (3151 + 3244) / 2.0 * 7.72 / 7},
			{"RTX-4090", "lora-7b", OriginEstimated, calibrated.util["consumer"] * 165.2e12 / 46.295e9},
			{"L40S", "qlora-7b", OriginEstimated, calibrated.qlora * calibrated.util["ada_dc"] * 362.05e12 / 46.295e9},
		} {
			t.Run(tc.card+"/"+tc.workload, func(t *testing.T) {
				i := slices.IndexFunc(ps, func(p Profile) bool { return p.Card == tc.card && p.Workload == tc.workload })
				if tc.tps == 0 {
					if i >= 0 {
						t.Errorf("got %+v, want no profile", ps[i])
					}
					return
				}
				if i < 0 {
					t.Fatal("no profile")
				}
				p := ps[i]
				if p.Origin != tc.origin || !near(p.TokensPerSecond, tc.tps, 0.5) {
					t.Errorf("got %.1f %s, want %.1f %s", p.TokensPerSecond, p.Origin, tc.tps, tc.origin)
				}
			})
		}
	})

	// 14e9 B of weights leave no KV room on one 16 GB T4: its seed is the
	// group of GPUs that serves the most per GPU, as BestServingGroup says.
	t.Run("serving seeds take the best group", func(t *testing.T) {
		i := slices.IndexFunc(ps, func(p Profile) bool { return p.Card == "T4" && p.Workload == "serve-7b" })
		want, _, ok := BestServingGroup(workload(t, "serve-7b"), card(t, "T4"), DefaultMaxGPUs)
		if i < 0 || !ok || ps[i].GPUs < 2 || ps[i].TokensPerSecond != want.TokensPerSecond {
			t.Errorf("T4 serve-7b seed %+v, want %+v", ps, want)
		}
	})

	t.Run("empty workloads", func(t *testing.T) {
		if got := SeedProfiles(cat, nil); len(got) != 0 {
			t.Errorf("got %d profiles", len(got))
		}
	})
}

// TestSeedProfiles_Table logs the built-in profiles of four common cards
// with their cost at 2.00 per GPU-hour (go test -v -run Table).
func TestSeedProfiles_Table(t *testing.T) {
	cards := []string{"RTX-4090", "A100-80GB-SXM", "H100-80GB-SXM", "L40S"}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-14s %-11s %9s %-9s %7s  %s\n", "card", "workload", "tok/s", "origin", "fits@1", "note")
	for _, p := range SeedProfiles(catalog(), BuiltinWorkloads()) {
		if !slices.Contains(cards, p.Card) {
			continue
		}
		w, _ := WorkloadByName(p.Workload)
		fmt.Fprintf(&b, "%-14s %-11s %9.0f %-9s %7v  %s\n", p.Card, p.Workload, p.TokensPerSecond, p.Origin,
			Fits(w, card(t, p.Card), 1), p.Note)
	}
	t.Log(b.String())
}
