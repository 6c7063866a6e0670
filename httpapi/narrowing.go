package httpapi

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/rank"
)

// narrowingParams are the query parameters a narrowing reads, the same on
// /v1/best, /v1/offers and the dashboard.
var narrowingParams = []string{"provider", "exclude_provider", "region", "country", "interconnect",
	"min_gpu_memory", "min_vcpus_per_gpu", "min_ram_gb_per_gpu"}

// Bounds of a narrowing's lists and minimums: far above any real use, so a
// query string cannot make a scan compare against megabytes of names.
const (
	maxNarrowItems = 64
	maxNarrowName  = 64
	maxNarrowMin   = 100000
)

// ParseNarrowing reads the narrowing parameters of q. known lists the
// providers a provider or exclude_provider item may name (nil: any); an
// item outside it is a 400 naming the parameter and the known ones, since
// a misspelt provider would otherwise answer an empty ranking. Regions are
// taken as named (see narrowingOf for the check against known ones).
func ParseNarrowing(q url.Values, known []string) (rank.Narrowing, error) {
	return parseNarrowing(q, known, nil)
}

// narrowingOf reads q's narrowing against the snapshot: a provider or a
// region it names must be one of the snapshot's offers' (while it has
// any), else the answer is a 400 naming the known or nearest ones.
func narrowingOf(q url.Values, snap *rank.Snapshot) (rank.Narrowing, error) {
	var regions []string
	if len(q["region"]) > 0 {
		// While no offer states a region, any name is taken.
		if regions = snap.Regions(); len(regions) == 0 {
			regions = nil
		}
	}
	return parseNarrowing(q, knownProviders(snap), regions)
}

// parseNarrowing is ParseNarrowing with the known regions (nil: any).
func parseNarrowing(q url.Values, known, regions []string) (rank.Narrowing, error) {
	var n rank.Narrowing
	var err error
	list := func(name string, check func(string) error) []string {
		v := q.Get(name)
		if v == "" || err != nil {
			return nil
		}
		var out []string
		for item := range strings.SplitSeq(v, ",") {
			item = strings.TrimSpace(item)
			switch {
			case item == "":
				err = pricewatch.Errorf(pricewatch.EInvalid, "%s: empty item in %q (a comma-separated list)", name, v)
			case len(item) > maxNarrowName:
				err = pricewatch.Errorf(pricewatch.EInvalid, "%s: item of %d characters (at most %d)", name, len(item), maxNarrowName)
			case len(out) == maxNarrowItems:
				err = pricewatch.Errorf(pricewatch.EInvalid, "%s: more than %d items", name, maxNarrowItems)
			case check != nil:
				err = check(item)
			}
			if err != nil {
				return nil
			}
			out = append(out, item)
		}
		return out
	}
	provider := func(name string) func(string) error {
		return func(p string) error {
			if known == nil || slices.ContainsFunc(known, func(k string) bool { return strings.EqualFold(k, p) }) {
				return nil
			}
			return pricewatch.Errorf(pricewatch.EInvalid, "%s: unknown provider %q (known: %s)", name, p, strings.Join(known, ", "))
		}
	}
	n.Providers = list("provider", provider("provider"))
	n.ExcludeProviders = list("exclude_provider", provider("exclude_provider"))
	if err == nil {
		n.Regions, err = parseRegions(q["region"], regions)
	}
	n.Countries = list("country", func(c string) error {
		if len(c) != 2 || !isLetters(c) {
			return pricewatch.Errorf(pricewatch.EInvalid, "country: %q is not an ISO 3166-1 alpha-2 code (two letters, e.g. US, DE)", c)
		}
		return nil
	})
	n.Interconnects = list("interconnect", func(f string) error {
		if !slices.Contains(rank.LinkFamilies, strings.ToLower(f)) {
			return pricewatch.Errorf(pricewatch.EInvalid, "interconnect: unknown link family %q (one of %s)", f, strings.Join(rank.LinkFamilies, ", "))
		}
		return nil
	})
	if err != nil {
		return n, err
	}
	for i := range n.Countries {
		n.Countries[i] = strings.ToUpper(n.Countries[i])
	}
	for i := range n.Interconnects {
		n.Interconnects[i] = strings.ToLower(n.Interconnects[i])
	}
	for _, m := range []struct {
		name string
		to   *float64
	}{{"min_gpu_memory", &n.MinGPUMemoryGB}, {"min_vcpus_per_gpu", &n.MinVCPUsPerGPU}, {"min_ram_gb_per_gpu", &n.MinRAMGBPerGPU}} {
		v := q.Get(m.name)
		if v == "" {
			continue
		}
		f, perr := strconv.ParseFloat(v, 64)
		if perr != nil || math.IsNaN(f) || f < 0 || f > maxNarrowMin {
			return n, pricewatch.Errorf(pricewatch.EInvalid, "%s must be a number within 0..%d, got %q", m.name, maxNarrowMin, v)
		}
		*m.to = f
	}
	return n, nil
}

func isLetters(s string) bool {
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') {
			return false
		}
	}
	return true
}

// narrowingKey is the narrowing's part of a cache key: every list in
// its canonical (sorted, case-folded) form, so one question gets one entry.
func narrowingKey(n rank.Narrowing) string {
	canon := func(l []string) string {
		c := make([]string, len(l))
		for i, s := range l {
			c[i] = strings.ToLower(s)
		}
		slices.Sort(c)
		return strings.Join(slices.Compact(c), ",")
	}
	return fmt.Sprintf("%s|%s|%s|%s|%s|%g|%g|%g", canon(n.Providers), canon(n.ExcludeProviders), canon(n.Regions),
		canon(n.Countries), canon(n.Interconnects), n.MinGPUMemoryGB, n.MinVCPUsPerGPU, n.MinRAMGBPerGPU)
}

// knownProviders are the providers a narrowing may name: those of the
// snapshot's offers (stored offers outlive a failing source, so a saved
// query keeps working); nil, any name, while the snapshot holds none.
func knownProviders(snap *rank.Snapshot) []string {
	if k := snap.Providers(); len(k) > 0 {
		return k
	}
	return nil
}

// regionSep separates regions in one region parameter: region names hold
// commas (Vast's "Texas, US"), so a list is "|"-separated or the
// parameter is repeated.
const regionSep = "|"

// parseRegions reads region parameters: exact names, "|"-separated or
// repeated. With known regions (nil: any name), a name outside them is a
// 400 listing the nearest known ones; an unknown item with commas whose
// every comma-separated part is a known region is read as that list (the
// older spelling "us-east-1,eu-west-1").
func parseRegions(values, known []string) ([]string, error) {
	var out []string
	add := func(item string) error {
		switch {
		case len(item) > maxNarrowName:
			return pricewatch.Errorf(pricewatch.EInvalid, "region: item of %d characters (at most %d)", len(item), maxNarrowName)
		case len(out) == maxNarrowItems:
			return pricewatch.Errorf(pricewatch.EInvalid, "region: more than %d items", maxNarrowItems)
		}
		out = append(out, item)
		return nil
	}
	isKnown := func(r string) bool {
		return known == nil || slices.ContainsFunc(known, func(k string) bool { return strings.EqualFold(k, r) })
	}
	for _, v := range values {
		if strings.TrimSpace(v) == "" {
			continue // a blank field of a form: no filter, as before
		}
		for item := range strings.SplitSeq(v, regionSep) {
			item = strings.TrimSpace(item)
			if item == "" {
				return nil, pricewatch.Errorf(pricewatch.EInvalid, "region: empty item in %q (exact names, several separated by %s or as repeated region parameters)", v, regionSep)
			}
			if len(item) > maxNarrowName || isKnown(item) {
				if err := add(item); err != nil {
					return nil, err
				}
				continue
			}
			if parts, ok := commaList(item, isKnown); ok {
				for _, p := range parts {
					if err := add(p); err != nil {
						return nil, err
					}
				}
				continue
			}
			return nil, pricewatch.Errorf(pricewatch.EInvalid, "region: unknown region %q (nearest known: %s; regions are exact names, several separated by %s or as repeated region parameters)",
				item, quoteAll(nearestNames(item, known, 5)), regionSep)
		}
	}
	return out, nil
}

// commaList splits an item at commas when every part is a known region.
func commaList(item string, known func(string) bool) ([]string, bool) {
	if !strings.Contains(item, ",") {
		return nil, false
	}
	var parts []string
	for p := range strings.SplitSeq(item, ",") {
		if p = strings.TrimSpace(p); p == "" || !known(p) {
			return nil, false
		}
		parts = append(parts, p)
	}
	return parts, true
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// nearestNames are the n known names nearest to name: those containing it
// (or contained in it) first, then by edit distance, case ignored.
func nearestNames(name string, known []string, n int) []string {
	type scored struct {
		name  string
		score int
	}
	want := strings.ToLower(name)
	all := make([]scored, 0, len(known))
	for _, k := range known {
		lk := strings.ToLower(k)
		sc := editDistance(want, lk)
		if strings.Contains(lk, want) || strings.Contains(want, lk) {
			sc = -1000 + max(len(lk), len(want)) - min(len(lk), len(want))
		}
		all = append(all, scored{k, sc})
	}
	slices.SortFunc(all, func(a, b scored) int {
		if a.score != b.score {
			return a.score - b.score
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]string, 0, n)
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.name)
	}
	return out
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
