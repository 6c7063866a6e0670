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
// a misspelt provider would otherwise answer an empty ranking.
func ParseNarrowing(q url.Values, known []string) (rank.Narrowing, error) {
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
	n.Regions = list("region", nil)
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
