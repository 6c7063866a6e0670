package vast_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/internal/scaletest"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
	"github.com/pricewatch/pricewatch/scrapers/vast"
)

// An answer above the size read whole is decoded as a stream, with the
// same observations: every bundle on demand and, at its min_bid where that
// is not above the on-demand price (vast.BidAboveOnDemand), spot.
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
	onDemand, spot := map[string]float64{}, map[string]float64{}
	for _, o := range res.Observations {
		if o.Mode == pricewatch.ModeSpot {
			spot[o.OfferID] = o.Price
		} else {
			onDemand[o.OfferID] = o.Price
		}
	}
	if len(onDemand) != bundles || len(spot) == 0 || len(spot) >= bundles || len(res.Observations) != len(onDemand)+len(spot) {
		t.Errorf("%d observations: %d on demand, %d spot of %d offers", len(res.Observations), len(onDemand), len(spot), bundles)
	}
	for id, p := range spot {
		if vast.BidAboveOnDemand(p, onDemand[id]) {
			t.Errorf("%s: spot %v above on demand %v", id, p, onDemand[id])
		}
	}
}
