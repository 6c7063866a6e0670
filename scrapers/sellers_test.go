package scrapers_test

import (
	"testing"

	"github.com/pricewatch/pricewatch/scrapers"
)

// An aggregator's spelling of a cloud becomes the name pricewatch's own
// source for it goes by, so the market counts the machine once.
func TestSeller(t *testing.T) {
	for in, want := range map[string]string{
		"lambdalabs": "lambda", "datacrunch": "verda", "DataCrunch": "verda", "massed-compute": "massedcompute",
		"Massed Compute": "massedcompute", "voltage_park": "voltagepark", "oci": "oracle", "runpod": "runpod",
		"sesterce": "sesterce", "": "",
	} {
		if got := scrapers.Seller(in); got != want {
			t.Errorf("Seller(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWithForm(t *testing.T) {
	for _, c := range []struct{ name, form, want string }{
		{"H100", "sxm5", "H100 SXM5"},
		{"h100", "SXM5", "h100 SXM5"},
		{"A100_80G", "pcie", "A100_80G PCIE"},
		{"A100-SXM4-80GB", "sxm4", "A100-SXM4-80GB"}, // the name states its form
		{"L40S", "pcie", "L40S"},                     // one form only
		{"H100", "", "H100"},
		{"H100", "nvlink", "H100"}, // not a form factor
	} {
		if got := scrapers.WithForm(c.name, c.form); got != c.want {
			t.Errorf("WithForm(%q, %q) = %q, want %q", c.name, c.form, got, c.want)
		}
	}
}
