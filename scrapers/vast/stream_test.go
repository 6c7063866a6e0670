package vast_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/internal/scaletest"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// An answer above the size read whole is decoded as a stream, with the
// same observations: every bundle on demand and, at its min_bid, spot.
func TestScraper_StreamsLargeAnswers(t *testing.T) {
	const bundles = 3800 // about 8.9 MB, past holdBelow (8 MiB)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if err := scaletest.WriteBundles(w, bundles, 0, 0); err != nil {
			t.Error(err)
		}
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	sc, env := scrapertest.Scraper(t, "vast", srv.URL)
	env.Settings.Timeout = time.Minute // decoding takes seconds under the race detector
	res, err := sc.Scrape(t.Context(), env)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, o := range res.Observations {
		ids[o.OfferID] = true
	}
	if len(res.Observations) != 2*bundles || len(ids) != bundles {
		t.Errorf("%d observations of %d offers, want %d of %d", len(res.Observations), len(ids), 2*bundles, bundles)
	}
}
