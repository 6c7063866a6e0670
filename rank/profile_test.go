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
			{"H100-80GB-SXM", "lora-7b", OriginEstimated, 9419.0},
			{"A100-80GB-SXM", "lora-7b", OriginPublished, (3151 + 3244) / 2.0 * 7.72 / 7},
			{"RTX-4090", "lora-7b", OriginEstimated, 1770.0},
			{"L40S", "qlora-7b", OriginEstimated, 0.8 * 0.40 * 362.05e12 / (6 * 7e9)},
			// 14 GB of weights leave no KV room on one 16 GB T4; the seed is
			// the 2-GPU tensor-parallel group (32 GB, 640 GB/s, 130 TFLOPS
			// fp16, ETA_C 0.40): 19.07 sequences of 1280 tokens;
			// prefill 56e9 / (0.48 × 130e12) = 0.897 ms, decode
			// (14e9/19.07 + 524288 × 1152) / (0.7 × 640e9) = 2.987 ms per
			// token of the group: 1 / 3.884 ms / 2 GPUs = 128.7 per GPU.
			{"T4", "serve-7b", OriginEstimated, 128.7},
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
