package alerts

import (
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/store"
)

// New GPU names.
//
// A GPU name no alias maps to a card (a run lists it in Unknown) is news
// the first time its source reports it: so that a new card reaches the
// catalog within a day of its first offer, it is posted once, listed in
// /v1/sources and shown on the dashboard's sources page. Each source keeps
// the unknown names it has reported in its notification state
// ("names:<source>"), written in the transaction that enqueues the post,
// so neither a repeated run nor a restart posts a name again.
//
// The baseline: the first applied run of a source the engine sees (on a
// fresh database, or the first evaluation after an upgrade to a build with
// this check) records the unknown names it reports silently; only names
// that appear after it are news. A source whose first runs fail or are
// held gets its baseline from its first applied run.
//
// Forgetting: a seen name that an applied run no longer reports is
// forgotten when the catalog now maps it (an alias or a card was added),
// or when no run reported it for ForgetNamesAfter; a forgotten name that
// comes back unknown is news again. A name whose offers merely vanish for
// a while (sold out) is kept, so it is not posted again when they return.

// ForgetNamesAfter is how long a seen unknown name that no run reports
// any more is remembered.
const ForgetNamesAfter = store.RunRetention

// seenRefresh is how stale a name's last-seen time may get before it is
// rewritten: the state is written about once a day, not on every run.
const seenRefresh = 24 * time.Hour

// maxNamesListed bounds the names one post lists.
const maxNamesListed = 20

// NewName is a GPU name a source reported after its baseline that no alias
// maps: its offers in the source's last applied run and when it was first
// reported (the start of that run).
type NewName struct {
	Name      string    `json:"name"`
	Offers    int       `json:"offers"`
	FirstSeen time.Time `json:"first_seen"`
}

// namesState is a source's seen unknown names.
type namesState struct {
	// Baseline is the start of the applied run whose names were recorded
	// silently.
	Baseline time.Time           `json:"baseline"`
	Names    map[string]seenName `json:"names,omitempty"`
}

// seenName is one seen unknown name: when it was first and (within
// seenRefresh) last reported, its offers when first reported, and whether
// it came with the baseline.
type seenName struct {
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	Offers    int       `json:"offers"`
	Baseline  bool      `json:"baseline,omitempty"`
}

func namesKey(source string) string { return "names:" + source }

// newNames posts the unknown names of a source's last applied run that
// the source never reported before (after its baseline), all in one
// message, and returns how many messages it enqueued.
func (e *Engine) newNames(source string, h store.Health, now time.Time) (int, error) {
	if h.LastSuccess.IsZero() {
		return 0, nil // no applied run yet: no baseline either
	}
	var news []NewName
	ids, err := e.Store.Decide(namesKey(source), func(raw []byte) (any, []store.Message, error) {
		var prev *namesState
		if raw != nil {
			var st namesState
			// An unreadable state is a new baseline: silence over a flood.
			if json.Unmarshal(raw, &st) == nil {
				prev = &st
			}
		}
		var next namesState
		next, news = decideNames(prev, source, h, catalogMaps)
		if len(news) == 0 {
			return next, nil, nil
		}
		m, err := encode("names", "", NewNamesMessage(source, news), now)
		return next, []store.Message{m}, err
	})
	if len(ids) > 0 && e.Log != nil {
		e.Log.Info("new gpu names", "source", source, "names", len(news))
	}
	return len(ids), err
}

// decideNames is the pure part of newNames: the source's seen names after
// its last applied run (h) and the names that are news, sorted by name.
// prev is nil before the source's baseline; maps reports whether the
// catalog maps a name now.
func decideNames(prev *namesState, source string, h store.Health, maps func(source, name string) bool) (namesState, []NewName) {
	at := h.LastSuccess
	next := namesState{Baseline: at, Names: map[string]seenName{}}
	if prev == nil {
		for name, n := range h.Unknown {
			next.Names[name] = seenName{FirstSeen: at, LastSeen: at, Offers: n, Baseline: true}
		}
		return next, nil
	}
	next.Baseline = prev.Baseline
	for name, s := range prev.Names {
		if _, ok := h.Unknown[name]; ok {
			if at.Sub(s.LastSeen) >= seenRefresh {
				s.LastSeen = at
			}
		} else if maps(source, name) || at.Sub(s.LastSeen) > ForgetNamesAfter {
			continue // forgotten
		}
		next.Names[name] = s
	}
	var news []NewName
	for name, n := range h.Unknown {
		if _, ok := next.Names[name]; ok {
			continue
		}
		next.Names[name] = seenName{FirstSeen: at, LastSeen: at, Offers: n}
		news = append(news, NewName{Name: name, Offers: n, FirstSeen: at})
	}
	sort.Slice(news, func(i, j int) bool { return news[i].Name < news[j].Name })
	return next, news
}

// memorySuffix is how normalize writes an unknown name's stated memory.
var memorySuffix = regexp.MustCompile(`^(.*) \(([0-9.]+) GB\)$`)

// catalogMaps reports whether the catalog maps an unknown name as a run of
// source wrote it ("name" or "name (N GB)") to a card now.
func catalogMaps(source, name string) bool {
	mem := 0.0
	if m := memorySuffix.FindStringSubmatch(name); m != nil {
		if v, err := strconv.ParseFloat(m[2], 64); err == nil {
			name, mem = m[1], v
		}
	}
	_, ok := normalize.DefaultCatalog().Resolve(source, name, mem)
	return ok
}

// StateReader reads stored notification state (*store.Store).
type StateReader interface {
	NotifyState(key string, v any) (ok bool, err error)
}

// NewNames lists the new GPU names of a source whose last applied run
// (h) still reports them unknown, with its offer counts, oldest first:
// names reported after the source's baseline, not the baseline's own.
func NewNames(st StateReader, source string, h store.Health) ([]NewName, error) {
	if len(h.Unknown) == 0 {
		return nil, nil
	}
	var s namesState
	if ok, err := st.NotifyState(namesKey(source), &s); err != nil || !ok {
		return nil, err
	}
	var out []NewName
	for name, n := range h.Unknown {
		if seen, ok := s.Names[name]; ok && !seen.Baseline {
			out = append(out, NewName{Name: name, Offers: n, FirstSeen: seen.FirstSeen})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].FirstSeen.Equal(out[j].FirstSeen) {
			return out[i].FirstSeen.Before(out[j].FirstSeen)
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}
