package all_test

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/scrapers"
	_ "github.com/pricewatch/pricewatch/scrapers/all"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// unmappedSize is the one kind of offer a source may keep without rent
// terms by rule: a size, plan or instance type its static table does not
// know, kept under its own name (GPU name = offer id) with a placeholder
// count of 1 so that normalize reports it; neither its card nor its GPU
// count is known, so no rent unit can be stated truthfully.
var unmappedSize = []string{"alibaba", "aws-spot", "azure", "hetzner", "tencent", "vultr"}

// noneFree are fixture offers that may keep their price without rent
// terms because nothing of them can be rented now and no count is known.
// Full marketplace machines state their counts and availability no
// (scrapers.FreeGPUs), so none is listed today.
var noneFree = map[string]string{}

// Every registered source, run over its fixtures, states how each of its
// offers is rented: a reference row has no rent terms; every other offer
// has a rent unit and GPU counts, except the cases listed above.
func TestFixtures_RentTerms(t *testing.T) {
	srv := httptest.NewServer(fixtures.Handler(fixtures.FS()))
	defer srv.Close()
	used := map[string]bool{}
	for _, name := range scrapers.Names() {
		if !slices.Contains(fixtures.Sources(), name) {
			t.Errorf("%s: registered but has no fixtures", name)
			continue
		}
		results := runs(t, name, srv.URL)
		for _, res := range results {
			nr := normalize.DefaultCatalog().Normalize(res.Observations, scrapertest.At)
			if len(res.Observations) == 0 && res.Rates == nil && len(res.TokenPrices) == 0 {
				t.Errorf("%s: neither offers, rates nor token prices from the fixtures", name)
			}
			if nr.Invalid != nil {
				t.Errorf("%s: invalid observations: %v", name, nr.Invalid)
			}
			for _, o := range nr.Offers {
				switch {
				case o.Reference():
					if len(o.GPUCounts) > 0 {
						t.Errorf("%s: a reference with GPU counts %v", o.Key, o.GPUCounts)
					}
				case o.RentUnit != "":
					if len(o.GPUCounts) == 0 || o.RentUnitGPUs != o.GPUCounts[0] || !(o.UnitPricePerHour > 0) {
						t.Errorf("%s: rent unit %s with counts %v, smallest %d at %v", o.Key, o.RentUnit, o.GPUCounts, o.RentUnitGPUs, o.UnitPricePerHour)
					}
				case slices.Contains(unmappedSize, o.Source) && o.Card == "" && o.GPUName == o.OfferID:
				// A GCP GPU SKU no machine type could be priced from keeps
				// that one SKU's price under a telling name: no unit can be
				// rented at that price.
				case o.Source == "gcp" && o.Card == "" && (strings.HasPrefix(o.GPUName, "unmapped GCP GPU SKU ") ||
					strings.HasPrefix(o.GPUName, "unpriced GCP GPU SKU ")):
				// An OCI GPU part no shape of the table bills (the real
				// list has two: "E4", "H100T") keeps its price under its
				// part number and display name: its GPU count is unknown.
				case o.Source == "oracle" && o.Card == "" && strings.HasPrefix(o.GPUName, o.OfferID+" "):
				case noneFree[o.Key] != "":
					used[o.Key] = true
				default:
					t.Errorf("%s: no rent unit (gpu %q, %d GPUs): state how it is rented or list it here with the reason",
						o.Key, o.GPUName, o.GPUs)
				}
			}
		}
	}
	for key, why := range noneFree {
		if !used[key] {
			t.Errorf("exception %s (%s) matches no offer without a rent unit: remove it", key, why)
		}
	}
}

// runs scrapes the named source from the fixture server at base with every
// secret set, and again without any for a source that runs without one in
// another mode (AutoDL's list prices).
func runs(t *testing.T, name, base string) []scrapers.Result {
	t.Helper()
	var out []scrapers.Result
	for _, withSecrets := range []bool{true, false} {
		s, env := scrapertest.Scraper(t, name, base)
		if _, checked := s.(scrapers.Checker); checked && !withSecrets {
			continue
		}
		if !withSecrets {
			env.Getenv = func(string) string { return "" }
		}
		res, err := s.Scrape(t.Context(), env)
		if err != nil {
			t.Errorf("%s (secrets %v): %v", name, withSecrets, err)
			continue
		}
		out = append(out, res)
	}
	return out
}
