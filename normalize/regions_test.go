package normalize_test

import (
	"testing"

	"github.com/pricewatch/pricewatch/normalize"
)

// The embedded table answers case-insensitively and knows nothing it does
// not list (a region missing is no country, never a guess).
func TestRegionCountry(t *testing.T) {
	for _, c := range []struct{ provider, region, want string }{
		{"aws", "us-east-1", "US"},
		{"AWS", "EU-CENTRAL-1", "DE"},
		{"aws-china", "cn-northwest-1", "CN"},
		{"gcp", "europe-west4", "NL"},
		{"azure", "westeurope", "NL"},
		{"alibaba", "ap-southeast-1", "SG"},
		{"gcp", "us-east-1", ""}, // an AWS code under another provider
		{"aws", "mars-north-1", ""},
	} {
		got, ok := normalize.RegionCountry(c.provider, c.region)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s %s: %q %v, want %q", c.provider, c.region, got, ok, c.want)
		}
	}
}
