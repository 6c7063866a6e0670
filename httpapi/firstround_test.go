package httpapi_test

import (
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
	"github.com/pricewatch/pricewatch/rank"
)

// Issue 22 item 3: a fresh pipeline whose sources land one after another
// (a second apart) starts a card's history with one point, already the
// best of every source, both from the stored series and from the rows
// (max_gpus=64 is the default limit, so the answer is the same, computed).
// Before the history started at the end of the first round, RTX-4090's
// history fell point by point as the sources landed (8 points here, the
// first at the first source's best).
func TestHistory_FirstRoundIsOnePoint(t *testing.T) {
	env := pipelinetest.New(t, nil, nil)
	for _, name := range env.Pipeline.Enabled() {
		env.Round(t, name)
		env.Advance(time.Second)
	}
	t.Cleanup(httpapi.SetNow(env.Now))
	h := newHarnessOn(t, env)
	page, _, _ := env.Pipeline.View().Snapshot.QueryOffers(rank.OfferQuery{Card: "RTX-4090", Limit: 1000})
	sources := map[string]bool{}
	for _, o := range page {
		sources[o.Source] = true
	}
	if len(sources) < 3 {
		t.Fatalf("RTX-4090 is offered by %d sources; the test needs 3 or more", len(sources))
	}
	_, body := h.get(t, "/v1/best?card=RTX-4090&workload=lora-7b")
	best := decode[httpapi.BestResponse](t, body).Cards
	if len(best) != 1 {
		t.Fatalf("best: %s", body)
	}
	for _, c := range []struct{ target, path string }{
		{"/v1/history?card=RTX-4090&workload=lora-7b", "stored"},
		{"/v1/history?card=RTX-4090&workload=lora-7b&max_gpus=64", "computed"},
	} {
		rec := httptest.NewRecorder()
		h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.target, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", c.target, rec.Code, rec.Body)
		}
		if got := rec.Header().Get("X-Pricewatch-History"); got != c.path {
			t.Errorf("%s answered from the %s path, want %s", c.target, got, c.path)
		}
		r := decode[httpapi.HistoryResponse](t, rec.Body.Bytes())
		if len(r.Points) != 1 {
			t.Errorf("%s: %d points, want 1 (the first round is one point): %+v", c.target, len(r.Points), r.Points)
			continue
		}
		p := r.Points[0]
		if p.CostPerMillionTokens == nil || p.Key != best[0].Key || math.Abs(*p.CostPerMillionTokens-best[0].CostPerMillionTokens) > 1e-12 {
			t.Errorf("%s: first point %+v, want the best of all sources %s at %v", c.target, p, best[0].Key, best[0].CostPerMillionTokens)
		}
	}
}
