package store_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

func mustOpen(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "pw.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func offer(id string, price float64) pricewatch.Offer {
	return pricewatch.Offer{
		Key: pricewatch.OfferKey("runpod", id, "", pricewatch.ModeOnDemand), Source: "runpod", OfferID: id,
		Card: "A40", GPUs: 1, Mode: pricewatch.ModeOnDemand, PricePerGPUHour: price, Currency: "USD",
	}
}

var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func okRun(at time.Time, offers ...pricewatch.Offer) store.RunResult {
	return store.RunResult{Run: pricewatch.Run{Source: "runpod", Started: at, OK: true, Offers: len(offers)}, Offers: offers}
}

func TestStore_RecordRun(t *testing.T) {
	st := mustOpen(t)
	steps := []struct {
		name        string
		rr          store.RunResult
		wantChanges int
		wantHistory int
		wantOffers  map[string]float64
	}{
		{"FirstRunAddsEveryOffer", okRun(t0, offer("a", 1), offer("b", 2)), 2, 2, map[string]float64{"a": 1, "b": 2}},
		{"UnchangedRescrapeAddsNothing", okRun(t0.Add(time.Hour), offer("a", 1), offer("b", 2)), 0, 2, map[string]float64{"a": 1, "b": 2}},
		{"ChangeVanishAppear", okRun(t0.Add(2*time.Hour), offer("a", 1.5), offer("c", 3)), 3, 5, map[string]float64{"a": 1.5, "c": 3}},
		{"FailedRunTouchesNoOffer", store.RunResult{Run: pricewatch.Run{Source: "runpod", Started: t0.Add(3 * time.Hour), Error: "HTTP 500"}}, 0, 5, map[string]float64{"a": 1.5, "c": 3}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			run, err := st.RecordRun(s.rr)
			if err != nil {
				t.Fatal(err)
			}
			if run.Changes != s.wantChanges {
				t.Errorf("changes = %d, want %d", run.Changes, s.wantChanges)
			}
			if n, _ := st.HistoryCount(); n != s.wantHistory {
				t.Errorf("history rows = %d, want %d", n, s.wantHistory)
			}
			offers, err := st.Offers()
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for _, o := range offers {
				got[o.OfferID] = o.PricePerGPUHour
			}
			if len(got) != len(s.wantOffers) {
				t.Fatalf("offers = %v, want %v", got, s.wantOffers)
			}
			for id, p := range s.wantOffers {
				if got[id] != p {
					t.Errorf("offer %s = %v, want %v", id, got[id], p)
				}
			}
		})
	}
	hist, err := st.History(offer("a", 0).Key)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 || hist[0].Event != store.Appeared || hist[1].Event != store.Changed || hist[1].PricePerGPUHour != 1.5 {
		t.Errorf("history of a = %+v", hist)
	}
	if hist, _ := st.History(offer("b", 0).Key); len(hist) != 2 || hist[1].Event != store.Vanished {
		t.Errorf("history of b = %+v", hist)
	}
	offers, _ := st.Offers()
	for _, o := range offers {
		if o.OfferID == "a" && (!o.FirstSeen.Equal(t0) || !o.ObservedAt.Equal(t0.Add(2*time.Hour))) {
			t.Errorf("a: first seen %v observed %v", o.FirstSeen, o.ObservedAt)
		}
	}
	h, err := st.Health()
	if err != nil {
		t.Fatal(err)
	}
	rp := h["runpod"]
	if rp.LastOK || rp.ConsecutiveFailures != 1 || rp.LastError != "HTTP 500" || !rp.LastSuccess.Equal(t0.Add(2*time.Hour)) || rp.Offers != 2 {
		t.Errorf("health = %+v", rp)
	}
	runs, err := st.Runs("runpod", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 4 || runs[0].OK || !runs[0].Started.Equal(t0.Add(3*time.Hour)) || !runs[3].Started.Equal(t0) {
		t.Errorf("runs newest first: %+v", runs)
	}
}

func TestStore_RunsArePruned(t *testing.T) {
	st := mustOpen(t)
	for i := range 3 {
		if _, err := st.RecordRun(okRun(t0.Add(time.Duration(i)*24*time.Hour), offer("a", 1))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.RecordRun(okRun(t0.Add(store.RunRetention+36*time.Hour), offer("a", 1))); err != nil {
		t.Fatal(err)
	}
	runs, _ := st.Runs("runpod", 0)
	if len(runs) != 2 {
		t.Errorf("runs kept = %d, want 2 (older than the retention dropped)", len(runs))
	}
}

func TestStore_OfferOfAnotherSourceIsRefused(t *testing.T) {
	st := mustOpen(t)
	o := offer("a", 1)
	o.Source = "vast"
	if _, err := st.RecordRun(okRun(t0, o)); err == nil {
		t.Fatal("want an error for an offer of another source")
	}
	if offers, _ := st.Offers(); len(offers) != 0 {
		t.Errorf("the failed transaction left %d offers", len(offers))
	}
}

func TestStore_LastGoodRatesKept(t *testing.T) {
	st := mustOpen(t)
	if r, err := st.Rates(); err != nil || r != nil {
		t.Fatalf("rates before any run = %v, %v", r, err)
	}
	rates := &pricewatch.Rates{Base: "EUR", Date: "2022-07-08", Rates: map[string]float64{"USD": 1.0163, "CNY": 6.8095}}
	if _, err := st.RecordRun(store.RunResult{Run: pricewatch.Run{Source: "ecb", Started: t0, OK: true}, Rates: rates}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordRun(store.RunResult{Run: pricewatch.Run{Source: "ecb", Started: t0.Add(time.Hour), Error: "timeout"}}); err != nil {
		t.Fatal(err)
	}
	r, err := st.Rates()
	if err != nil || r == nil || r.Rates["CNY"] != 6.8095 {
		t.Fatalf("rates after a failed fetch = %+v, %v", r, err)
	}
}

func TestStore_SeedKeepsMeasuredProfiles(t *testing.T) {
	st := mustOpen(t)
	measured := rank.Profile{Card: "A40", Workload: "lora-7b", TokensPerSecond: 1234, Origin: rank.OriginMeasured}
	if err := st.PutProfile(measured); err != nil {
		t.Fatal(err)
	}
	seeds := []rank.Profile{
		{Card: "A40", Workload: "lora-7b", TokensPerSecond: 999, Origin: rank.OriginEstimated},
		{Card: "L4", Workload: "lora-7b", TokensPerSecond: 500, Origin: rank.OriginEstimated},
	}
	if err := st.SeedProfiles(seeds); err != nil {
		t.Fatal(err)
	}
	if err := st.SeedProfiles(seeds[1:]); err != nil { // a later build no longer seeds A40: the measured one stays
		t.Fatal(err)
	}
	ps, err := st.Profiles()
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Card != "A40" || ps[0].TokensPerSecond != 1234 || ps[0].Origin != rank.OriginMeasured {
		t.Errorf("profiles = %+v", ps)
	}
}

func TestStore_OpenLockedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pw.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Now()
	_, err = store.Open(path, store.Options{Timeout: 100 * time.Millisecond, ReadOnly: true})
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Error("open waited far longer than its timeout")
	}
}

func TestStore_AlertState(t *testing.T) {
	st := mustOpen(t)
	type state struct{ Key string }
	var got state
	if ok, err := st.GetAlertState("w", &got); ok || err != nil {
		t.Fatalf("empty state: ok=%v err=%v", ok, err)
	}
	if err := st.PutAlertState("w", state{"k1"}); err != nil {
		t.Fatal(err)
	}
	if ok, err := st.GetAlertState("w", &got); !ok || err != nil || got.Key != "k1" {
		t.Fatalf("state = %+v ok=%v err=%v", got, ok, err)
	}
}

// An availability change is a history row, as a price change is, and the
// share of time available over a window is read from those rows.
func TestStore_AvailabilityHistory(t *testing.T) {
	st := mustOpen(t)
	with := func(a pricewatch.Availability, stock string) pricewatch.Offer {
		o := offer("a", 1)
		o.Available, o.Stock = a, stock
		return o
	}
	// t0 yes (High), t0+6h still yes: no row; t0+12h no; t0+18h yes (Low):
	// rows at 0, 12 and 18 h.
	for i, o := range []pricewatch.Offer{with(pricewatch.AvailableYes, "High"), with(pricewatch.AvailableYes, "High"),
		with(pricewatch.AvailableNo, ""), with(pricewatch.AvailableYes, "Low")} {
		if _, err := st.RecordRun(okRun(t0.Add(time.Duration(i)*6*time.Hour), o)); err != nil {
			t.Fatal(err)
		}
	}
	hist, _ := st.History(with("", "").Key)
	if len(hist) != 3 || hist[1].Available != pricewatch.AvailableNo || hist[2].Stock != "Low" {
		t.Fatalf("history %+v", hist)
	}
	// Over the day from t0 to t0+24h: available 0–12 h and 18–24 h = 18 of
	// 24 hours = 0.75.
	got, err := st.Availability([]string{with("", "").Key, "no/such/-/ondemand"}, t0, t0.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[with("", "").Key] != 0.75 {
		t.Errorf("availability %v, want 0.75 for a and nothing for an unknown key", got)
	}
	// A window that starts at 12 h: 6 of 12 hours.
	if share, ok := store.AvailableShare(hist, t0.Add(12*time.Hour), t0.Add(24*time.Hour)); !ok || share != 0.5 {
		t.Errorf("from 12 h: %v %v", share, ok)
	}
	// Unknown availability counts for nothing.
	if _, ok := store.AvailableShare([]store.HistoryRow{{At: t0, Event: store.Appeared}}, t0, t0.Add(time.Hour)); ok {
		t.Error("unknown availability reads as known")
	}
}

// Issue 19 item 5: of two runs of a source that overlapped, the one that
// started earlier but committed last is recorded, not applied: the newer
// answer's offers and health stay.
func TestStore_OlderAnswerIsNotApplied(t *testing.T) {
	st := mustOpen(t)
	newer, older := okRun(t0.Add(time.Minute), offer("a", 1.0)), okRun(t0, offer("a", 2.0))
	if _, err := st.RecordRun(newer); err != nil {
		t.Fatal(err)
	}
	run, err := st.RecordRun(older)
	if err != nil || run.Held != pricewatch.RunSuperseded || !strings.Contains(run.Reason, "started 1m0s later") {
		t.Fatalf("older run: %+v %v", run, err)
	}
	os, err := st.OffersOf("runpod")
	if err != nil || len(os) != 1 || os[0].PricePerGPUHour != 1.0 {
		t.Errorf("offers after the older answer: %+v %v", os, err)
	}
	h, err := st.Health()
	if err != nil || !h["runpod"].LastRun.Equal(t0.Add(time.Minute)) || h["runpod"].Hold != "" {
		t.Errorf("health %+v %v", h["runpod"], err)
	}
}

// An accept records the pending level; with none pending it is refused.
func TestStore_AcceptSource(t *testing.T) {
	st := mustOpen(t)
	if _, err := st.AcceptSource("runpod", "ops", "factor:x10", t0); !errors.Is(err, store.ErrNothingToAccept) {
		t.Errorf("never ran: %v", err)
	}
	held := okRun(t0, offer("a", 10))
	held.Run.Held, held.Run.Reason = pricewatch.RunQuarantined, "×10"
	held.Pending = &store.Level{Kind: "factor", Factor: 10, NeedsAccept: true, Runs: 1}
	if _, err := st.RecordRun(held); err != nil {
		t.Fatal(err)
	}
	// An accept names the level it was shown: none, or another, is refused.
	if lv, err := st.AcceptSource("runpod", "ops", "", t0.Add(time.Hour)); !errors.Is(err, store.ErrLevelRequired) || lv.Label() != "factor:x10" {
		t.Errorf("no level: %v (%s)", err, lv.Label())
	}
	if _, err := st.AcceptSource("runpod", "ops", "factor:x4", t0.Add(time.Hour)); !errors.Is(err, store.ErrLevelChanged) {
		t.Errorf("×4 named, ×10 held: %v", err)
	}
	lv, err := st.AcceptSource("runpod", "ops", "factor:x10", t0.Add(time.Hour))
	if err != nil || lv.Factor != 10 || lv.AcceptedBy != "ops" || !lv.AcceptedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("accept: %+v %v", lv, err)
	}
	// A second accept of the same level is refused: the first applies it.
	if _, err := st.AcceptSource("runpod", "ops2", "factor:x10", t0.Add(time.Hour)); !errors.Is(err, store.ErrAlreadyAccepted) {
		t.Errorf("second accept: %v", err)
	}
	h, _ := st.Health()
	if a := h["runpod"].Accepted; a == nil || a.Factor != 10 {
		t.Errorf("accepted %+v", a)
	}
	// An applied run settles it.
	if _, err := st.RecordRun(okRun(t0.Add(2*time.Hour), offer("a", 10))); err != nil {
		t.Fatal(err)
	}
	if h, _ := st.Health(); h["runpod"].Accepted != nil {
		t.Errorf("accept survived an applied run: %+v", h["runpod"].Accepted)
	}
}

// A change in what comes with the GPUs (more vCPUs, a country learnt) is
// kept on the current offer, but is not a price change: no history row.
func TestStore_DetailsChangeKeptWithoutHistory(t *testing.T) {
	st := mustOpen(t)
	a := offer("a", 1)
	if _, err := st.RecordRun(okRun(t0, a)); err != nil {
		t.Fatal(err)
	}
	a.Machine = pricewatch.Machine{VCPUs: 16, RAMGB: 64, Country: "US"}
	run, err := st.RecordRun(okRun(t0.Add(time.Hour), a))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := st.HistoryCount(); run.Changes != 0 || n != 1 {
		t.Errorf("a details-only change: %d changes, %d history rows; want 0 and the first run's 1", run.Changes, n)
	}
	offers, err := st.Offers()
	if err != nil || len(offers) != 1 {
		t.Fatalf("%v %v", offers, err)
	}
	if m := offers[0].Machine; m.VCPUs != 16 || m.RAMGB != 64 || m.Country != "US" {
		t.Errorf("stored details %+v, want the second run's", m)
	}
}
