package pipeline_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/internal/scaletest"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
	"github.com/pricewatch/pricewatch/store"
)

// The digest reads each watch's series from the stored best series; it is
// the series the rows give, sample for sample, for every default watch
// (every card, one mode each), over the demo's first round and then six
// Vast runs 10 minutes apart moving 10% of 1,000 prices each.
func TestDigestSeries_StoredEqualsRows(t *testing.T) {
	env := pipelinetest.New(t, nil, nil)
	env.Round(t)
	t0 := env.Now()
	cur, err := scaletest.Offers(500, 0, 0, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := scaletest.ChangeRuns(cur, t0, 6, 0.1, func(at time.Time, offers []pricewatch.Offer) error {
		_, err := env.Store.RecordRun(store.RunResult{Run: pricewatch.Run{Source: "vast", Started: at, OK: true, Offers: len(offers)}, Offers: offers})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	env.Advance(80 * time.Minute)
	if err := env.Pipeline.Rebuild(); err != nil {
		t.Fatal(err)
	}
	if m, err := env.Store.BestSeriesMeta(); err != nil || !m.Live || !m.Real {
		t.Fatalf("best series meta %+v, %v: want live from the history's start", m, err)
	}
	since := t0.Add(-24 * time.Hour)
	stored, err := pipeline.DigestSeries(env.Pipeline, since, true)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := pipeline.DigestSeries(env.Pipeline, since, false)
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, w := range env.Pipeline.Watches() {
		for _, from := range []time.Time{since, t0.Add(25 * time.Minute)} {
			got, err := stored(w.Name, from)
			if err != nil {
				t.Fatal(err)
			}
			want, err := rows(w.Name, from)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("watch %s from %s:\n stored %+v\n rows   %+v", w.Name, from.Format(time.RFC3339), got, want)
			}
			if len(want) > 1 {
				compared++
			}
		}
	}
	if compared == 0 {
		t.Fatal("no watch had a series of two samples or more")
	}
}
