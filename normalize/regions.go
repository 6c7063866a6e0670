package normalize

import (
	"bytes"
	_ "embed"
	"fmt"
	"strings"
	"sync"
)

//go:embed data/regions.csv
var regionsCSV []byte

// regionKey is a provider's region, case-folded.
type regionKey struct{ provider, region string }

var regionTable = sync.OnceValue(func() map[regionKey]string {
	m, err := parseRegions(regionsCSV)
	if err != nil {
		panic(fmt.Sprintf("normalize: embedded regions.csv: %v", err))
	}
	return m
})

func parseRegions(b []byte) (map[regionKey]string, error) {
	rows, err := readCSV(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	m := map[regionKey]string{}
	for i, r := range rows {
		k := regionKey{strings.ToLower(r["provider"]), strings.ToLower(r["region"])}
		c := r["country"]
		switch {
		case k.provider == "" || k.region == "":
			return nil, fmt.Errorf("row %d: provider and region are required", i+1)
		case len(c) != 2 || strings.ToUpper(c) != c:
			return nil, fmt.Errorf("row %d (%s %s): country %q is not an upper-case ISO 3166-1 alpha-2 code", i+1, k.provider, k.region, c)
		case r["source_url"] != "DEFAULT" && !strings.HasPrefix(r["source_url"], "https://"):
			return nil, fmt.Errorf("row %d (%s %s): source_url must be the provider's page or DEFAULT", i+1, k.provider, k.region)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("row %d: %s %s listed twice", i+1, k.provider, k.region)
		}
		m[k] = c
	}
	return m, nil
}

// RegionCountry is the country of a provider's region (regions.csv), ok
// false when the table does not list it.
func RegionCountry(provider, region string) (string, bool) {
	c, ok := regionTable()[regionKey{strings.ToLower(provider), strings.ToLower(region)}]
	return c, ok
}
