package store

import (
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/pricewatch/pricewatch/rank"
)

// The profiles a run gives the series tracker, and a refresh its ranking,
// are read from the store once and again only after a write of them: a put, a delete or a seed
// each bumps the write count, and the next read sees it. A caller that
// edits its copy changes nothing for the next.
func TestProfileCache_FollowsEveryWrite(t *testing.T) {
	s := openTemp(t)
	read := func() []rank.Profile {
		t.Helper()
		var ps []rank.Profile
		if err := s.view(func(tx *bolt.Tx) error {
			var err error
			ps, err = s.profiles.get(tx)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return ps
	}
	tps := func(ps []rank.Profile, card string) float64 {
		for _, p := range ps {
			if p.Card == card {
				return p.TokensPerSecond
			}
		}
		return 0
	}
	if ps := read(); len(ps) != 0 {
		t.Fatalf("empty store: %d profiles", len(ps))
	}
	put := func(card string, v float64) {
		t.Helper()
		if err := s.PutProfile(rank.Profile{Card: card, Workload: "lora-7b", TokensPerSecond: v, Origin: rank.OriginMeasured}); err != nil {
			t.Fatal(err)
		}
	}
	put("RTX-4090", 1500)
	ps := read()
	if len(ps) != 1 || tps(ps, "RTX-4090") != 1500 {
		t.Fatalf("after a put: %+v", ps)
	}
	ps[0].TokensPerSecond = 1 // the caller's copy
	if got := tps(read(), "RTX-4090"); got != 1500 {
		t.Errorf("a caller's edit reached the next read: %g", got)
	}
	put("RTX-4090", 1700)
	put("A100-80GB-SXM", 900)
	if ps := read(); len(ps) != 2 || tps(ps, "RTX-4090") != 1700 || tps(ps, "A100-80GB-SXM") != 900 {
		t.Errorf("after two more puts: %+v", ps)
	}
	if ok, err := s.DeleteProfile("RTX-4090", "lora-7b", "", ""); err != nil || !ok {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if ps := read(); len(ps) != 1 || tps(ps, "RTX-4090") != 0 {
		t.Errorf("after a delete: %+v", ps)
	}
	if err := s.SeedProfiles([]rank.Profile{{Card: "H100-80GB-SXM", Workload: "lora-7b", TokensPerSecond: 3000, Origin: rank.OriginEstimated}}); err != nil {
		t.Fatal(err)
	}
	if ps := read(); tps(ps, "H100-80GB-SXM") != 3000 {
		t.Errorf("after a seed: %+v", ps)
	}
}
