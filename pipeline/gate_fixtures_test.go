package pipeline_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
)

// Issue 19, done means: the pristine fixtures of every source are applied
// in all of 20 runs, whatever order the sources land in. Each source runs
// alone and the ranking is refreshed after it, as the daemon's cron does,
// so the first round judges each source's first run against whatever the
// sources before it in that order brought — the order that once held
// aws-spot's T4 spot (0.515 $/h) against Vast's (0.055).
func TestGate_PristineFixturesAlwaysApplied(t *testing.T) {
	// Seed 0 runs 6 rounds (past the runs a held level or an outlier
	// needs in a row, 3); three more landing orders run the first two
	// rounds (the first runs are where the order matters). Later rounds
	// repeat the same fixtures and found nothing the sixth did not.
	for seed := range uint64(4) {
		rounds := 6
		if seed > 0 {
			rounds = 2
		}
		t.Run(fmt.Sprint("order ", seed), func(t *testing.T) {
			t.Parallel()
			pristineRounds(t, seed, rounds)
		})
	}
}

func pristineRounds(t *testing.T, seed uint64, rounds int) {
	{
		env := pipelinetest.New(t, nil, func(c *config.Config) { c.Ingest = config.DefaultIngest() })
		names := env.Pipeline.Enabled()
		if len(names) < 15 {
			t.Fatalf("only %d sources enabled: %v", len(names), names)
		}
		rng := rand.New(rand.NewPCG(seed, 19))
		applied, runs := 0, 0
		for round := range rounds {
			rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
			for _, name := range names {
				sum := env.Pipeline.RunSource(t.Context(), name)
				if err := env.Pipeline.Refresh(t.Context()); err != nil {
					t.Fatal(err)
				}
				runs++
				if sum.Err != nil || sum.Held != "" || sum.HeldOffers != 0 {
					t.Errorf("seed %d round %d: %s not applied whole: err %v, held %q (%s), %d offers held back",
						seed, round+1, name, sum.Err, sum.Held, sum.Reason, sum.HeldOffers)
					continue
				}
				applied++
			}
		}
		t.Logf("seed %d: %d of %d source runs applied whole (%s)", seed, applied, runs, fmt.Sprint(len(names), " sources × ", rounds, " rounds"))
	}
}

// The market's learned band, out of sample: each source's pristine
// fixture, judged as a first run against a band learned from the other
// sources only (leave one source out), must pass whole; the same run with
// every price ×10, ×0.1, ×100 or ×0.01 (a unit slip: a decimal, cents
// for dollars) should be held where the market can judge it at all (a
// card three other sources sell). The figures are printed with -v and
// written in README's "Honest sources".
func TestGate_LearnedBandLeaveOneSourceOut(t *testing.T) {
	env := pipelinetest.New(t, nil, func(c *config.Config) { c.Ingest = config.DefaultIngest() })
	env.Round(t)
	snap := env.Pipeline.View().Snapshot
	medians := snap.SourceMedians()
	factors := []float64{10, 0.1, 100, 0.01}
	caught := map[float64]int{}
	judgeable := 0
	for _, name := range env.Pipeline.Enabled() {
		offers, err := env.Store.OffersOf(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(offers) == 0 {
			continue // the rates
		}
		held, heldOffers, band, judged := pipeline.FirstRun(name, offers, medians, snap.BaseCurrency, env.Config.Ingest)
		if held || heldOffers != 0 {
			t.Errorf("%s: its pristine first run is held (%v) or has %d offers held back, band %.3g×", name, held, heldOffers, band)
		}
		if judged == 0 {
			t.Logf("%s: no card of it has three other sources; the market cannot judge it (band %.3g×)", name, band)
			continue
		}
		judgeable++
		var got []string
		for _, f := range factors {
			held, _, _, _ := pipeline.FirstRun(name, scaledOffers(offers, f), medians, snap.BaseCurrency, env.Config.Ingest)
			if held {
				caught[f]++
				got = append(got, fmt.Sprintf("×%g", f))
			}
		}
		t.Logf("%s: band %.3g×, %d cards judged, held at %v", name, band, judged, got)
	}
	for _, f := range factors {
		t.Logf("×%g held in %d of %d judgeable sources' first runs", f, caught[f], judgeable)
	}
	// A cents-for-dollars slip is caught wherever the market can judge.
	if caught[100] != judgeable || caught[0.01] != judgeable {
		t.Errorf("×100 held in %d, ×0.01 in %d of %d judgeable sources", caught[100], caught[0.01], judgeable)
	}
}

func scaledOffers(os []pricewatch.Offer, f float64) []pricewatch.Offer {
	out := make([]pricewatch.Offer, len(os))
	for i, o := range os {
		o.PricePerGPUHour *= f
		o.UnitPricePerHour *= f
		out[i] = o
	}
	return out
}

// One source's ×10 cannot get another's true data held: RunPod's first run
// comes ×10 on a new install, first and alone (the daemon's cron order;
// its first round runs together: TestGate_FreshInstallWholeCatalog). No
// market exists yet; the reference ranges (data/plausible.csv) tell:
// issue 31, before which it was applied and anchored. It is held, and
// every other source's first run after it is still applied (a few single
// offers may wait for their confirming runs where RunPod's true prices are
// missing from a card's market; no run is held).
func TestGate_OneWrongSourceHoldsNoOther(t *testing.T) {
	dir := fixtureDir(t)
	scaleRunPod(t, dir, 10)
	env := pipelinetest.New(t, fixtures.Handler(os.DirFS(dir)), func(c *config.Config) { c.Ingest = config.DefaultIngest() })
	order := []string{"runpod"}
	for _, n := range env.Pipeline.Enabled() {
		if n != "runpod" {
			order = append(order, n)
		}
	}
	for _, name := range order {
		sum := env.Pipeline.RunSource(t.Context(), name)
		if err := env.Pipeline.Refresh(t.Context()); err != nil {
			t.Fatal(err)
		}
		switch {
		case name == "runpod" && (sum.Held == "" || !strings.Contains(sum.Reason, "reference ranges")):
			t.Errorf("runpod ×10 on a new install not held by the reference ranges: %q %s", sum.Held, sum.Reason)
		case name != "runpod" && (sum.Err != nil || sum.Held != ""):
			t.Errorf("%s held after runpod ×10: %v %q %s (%d offers held back)", name, sum.Err, sum.Held, sum.Reason, sum.HeldOffers)
		}
	}
}

// Two runs of one source never overlap: a run asked for while one is in
// flight is skipped with ErrBusy (the cron's own jobs skip the same way).
func TestPipeline_OneRunPerSource(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	good := fixtures.Handler(fixtures.FS())
	env := pipelinetest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, fixtures.Base("", "runpod")) {
			select {
			case started <- struct{}{}:
			default:
			}
			<-release
		}
		good.ServeHTTP(w, r)
	}), nil)
	done := make(chan pipeline.Summary)
	go func() { done <- env.Pipeline.RunSource(t.Context(), "runpod") }()
	<-started
	second := env.Pipeline.RunSource(t.Context(), "runpod")
	close(release)
	first := <-done
	if !errors.Is(second.Err, pipeline.ErrBusy) || first.Err != nil || first.Offers == 0 {
		t.Errorf("first %+v, second %+v", first, second)
	}
	// Once the first is done, a run goes ahead.
	if s := env.Pipeline.RunSource(t.Context(), "runpod"); s.Err != nil {
		t.Errorf("after: %v", s.Err)
	}
}

// Out of sample on a real marketplace: Vast's capture split into two
// disjoint halves of hosts (by CRC32 of the offer id: even, odd). The gate
// anchors on one half; the other half — every host replaced, more churn
// than any two runs ten minutes apart show — must still be applied, with
// few offers held back as outliers. Then the reverse.
func TestGate_VastHostsReplacedIsApplied(t *testing.T) {
	body, err := fs.ReadFile(fixtures.FS(), "vast/bundles.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Offers []json.RawMessage `json:"offers"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	half := func(parity uint32) []byte {
		var keep []json.RawMessage
		for _, o := range doc.Offers {
			var id struct{ ID int64 }
			json.Unmarshal(o, &id)
			if crc32.ChecksumIEEE([]byte(strconv.FormatInt(id.ID, 10)))%2 == parity {
				keep = append(keep, o)
			}
		}
		b, _ := json.Marshal(map[string]any{"offers": keep})
		return b
	}
	for _, order := range [][2]uint32{{0, 1}, {1, 0}} {
		var serving atomic.Value
		serving.Store(half(order[0]))
		good := fixtures.Handler(fixtures.FS())
		env := pipelinetest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, fixtures.Base("", "vast")) {
				w.Header().Set("Content-Type", "application/json")
				w.Write(serving.Load().([]byte))
				return
			}
			good.ServeHTTP(w, r)
		}), func(c *config.Config) { c.Ingest = config.DefaultIngest() })
		env.Round(t)
		serving.Store(half(order[1]))
		sum := runpodOrNamed(env.Round(t, "vast"), "vast")
		if sum.Err != nil || sum.Held != "" {
			t.Errorf("half %d after half %d: %v %q %s", order[1], order[0], sum.Err, sum.Held, sum.Reason)
			continue
		}
		// Some new hosts' prices are far from the half the source was
		// anchored on; they wait for confirmation, but stay few.
		if share := float64(sum.HeldOffers) / float64(sum.Offers); share > 0.05 {
			t.Errorf("half %d after half %d: %d of %d offers held back", order[1], order[0], sum.HeldOffers, sum.Offers)
		}
		t.Logf("half %d after half %d: applied, %d of %d offers held back as outliers", order[1], order[0], sum.HeldOffers, sum.Offers)
	}
}

func runpodOrNamed(sums []pipeline.Summary, name string) pipeline.Summary {
	for _, s := range sums {
		if s.Source == name {
			return s
		}
	}
	return pipeline.Summary{}
}
