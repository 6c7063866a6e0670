package store

// Throughput profiles (measured, published, estimated) and the alert
// engine's per-watch state: small records beside the offers.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/pricewatch/pricewatch/rank"
)

// Profiles returns every stored throughput profile, by card then workload.
func (s *Store) Profiles() ([]rank.Profile, error) {
	var out []rank.Profile
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		out, err = s.profiles.get(tx)
		return err
	})
	return out, err
}

// profileCache is the stored profiles as of the profiles' write count at
// (ok: read once). Each source's run gives them to the series tracker and
// each refresh of the ranking reads them: decoding them all every time was
// a third of a round's time. Every write of the profiles bumps the count
// and drops the copy.
type profileCache struct {
	mu sync.Mutex
	at uint64
	ok bool
	ps []rank.Profile
}

// get is the profiles in tx, decoded again only when the write count
// moved since the copy was made. The caller gets its own copy
// (rank.Profile holds no references).
func (c *profileCache) get(tx *bolt.Tx) ([]rank.Profile, error) {
	seq := profileSeq(tx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ok || c.at != seq {
		ps, err := profilesIn(tx)
		if err != nil {
			return nil, err
		}
		c.ps, c.at, c.ok = ps, seq, true
	}
	return slices.Clone(c.ps), nil
}

func (c *profileCache) drop() {
	c.mu.Lock()
	c.ok, c.ps = false, nil
	c.mu.Unlock()
}

// profilesIn reads the profiles in tx, by card then workload.
func profilesIn(tx *bolt.Tx) ([]rank.Profile, error) {
	var out []rank.Profile
	err := bucket(tx, bProfiles).ForEach(func(k, v []byte) error {
		var p rank.Profile
		if err := json.Unmarshal(v, &p); err != nil {
			return fmt.Errorf("decode profile %q: %w", k, err)
		}
		out = append(out, p)
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return cmp.Or(cmp.Compare(a.Card, b.Card), cmp.Compare(a.Workload, b.Workload),
			cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Offer, b.Offer)) < 0
	})
	return out, err
}

// profileKey is a profile's key: card and workload for a card-wide figure
// (the layout every schema has used), with provider and offer appended for
// a measurement tied to where it was taken, so one never replaces another.
func profileKey(p rank.Profile) []byte {
	if p.Provider == "" {
		return join([]byte(p.Card), []byte(p.Workload))
	}
	return join([]byte(p.Card), []byte(p.Workload), []byte(p.Provider), []byte(p.Offer))
}

// PutProfile stores a profile, replacing any for the same card, workload,
// provider and offer.
func (s *Store) PutProfile(p rank.Profile) error {
	return s.update(func(tx *bolt.Tx) error {
		if err := s.bumpProfileSeq(tx); err != nil {
			return err
		}
		return putJSON(bucket(tx, bProfiles), profileKey(p), p)
	})
}

// DeleteProfile removes the measured profile of a card and workload at a
// scope (provider and offer empty for the card-wide one); a card-wide
// measurement gives way to the reference figure, which the next seed
// restores. ok is false when there was no measured profile to remove.
func (s *Store) DeleteProfile(card, workload, provider, offer string) (ok bool, err error) {
	k := profileKey(rank.Profile{Card: card, Workload: workload, Provider: provider, Offer: offer})
	err = s.update(func(tx *bolt.Tx) error {
		b := bucket(tx, bProfiles)
		v := b.Get(k)
		if v == nil {
			return nil
		}
		var p rank.Profile
		if err := json.Unmarshal(v, &p); err != nil || p.Origin != rank.OriginMeasured {
			return nil
		}
		ok = true
		if err := s.bumpProfileSeq(tx); err != nil {
			return err
		}
		return b.Delete(k)
	})
	return ok, err
}

// SeedProfiles stores reference profiles (published or estimated) without
// overwriting a user's measured one, and drops seeds no longer produced.
func (s *Store) SeedProfiles(ps []rank.Profile) error {
	return s.update(func(tx *bolt.Tx) error {
		if err := s.bumpProfileSeq(tx); err != nil {
			return err
		}
		b := bucket(tx, bProfiles)
		want := map[string]bool{}
		for _, p := range ps {
			k := join([]byte(p.Card), []byte(p.Workload))
			want[string(k)] = true
			if v := b.Get(k); v != nil {
				var old rank.Profile
				if err := json.Unmarshal(v, &old); err == nil && old.Origin == rank.OriginMeasured {
					continue
				}
			}
			if err := putJSON(b, k, p); err != nil {
				return err
			}
		}
		var stale [][]byte
		err := b.ForEach(func(k, v []byte) error {
			var p rank.Profile
			if err := json.Unmarshal(v, &p); err == nil && p.Origin != rank.OriginMeasured && !want[string(k)] {
				stale = append(stale, append([]byte{}, k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range stale {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// GetAlertState decodes a watch's alert state into v; ok is false if none.
func (s *Store) GetAlertState(watch string, v any) (ok bool, err error) {
	err = s.view(func(tx *bolt.Tx) error {
		data := bucket(tx, bAlerts).Get([]byte(watch))
		if data == nil {
			return nil
		}
		ok = true
		return json.Unmarshal(data, v)
	})
	return ok, err
}

// PutAlertState stores a watch's alert state.
func (s *Store) PutAlertState(watch string, v any) error {
	return s.update(func(tx *bolt.Tx) error {
		return putJSON(bucket(tx, bAlerts), []byte(watch), v)
	})
}
