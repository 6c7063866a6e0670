package pipeline_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// scaleRunPod multiplies every price of the RunPod fixture by f, as a unit
// change at the source would (cents for dollars: ×100; per month: ×730).
func scaleRunPod(t *testing.T, dir string, f float64) {
	t.Helper()
	file := filepath.Join(dir, "runpod", "graphql.json")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Data struct {
			GPUTypes []map[string]any `json:"gpuTypes"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, g := range doc.Data.GPUTypes {
		for k, v := range g {
			if p, ok := v.(float64); ok && strings.HasSuffix(k, "Price") {
				g[k] = p * f
			}
		}
	}
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func runpodSummary(t *testing.T, sums []pipeline.Summary) pipeline.Summary {
	t.Helper()
	for _, s := range sums {
		if s.Source == "runpod" {
			return s
		}
	}
	t.Fatal("no runpod run")
	return pipeline.Summary{}
}

func bestKeys(env *pipelinetest.Env) string {
	var ks []string
	for _, e := range env.Pipeline.View().Snapshot.Best("lora-7b", rank.Filter{}) {
		ks = append(ks, e.Key)
	}
	return strings.Join(ks, " ")
}

// A run whose prices all moved ×10 or ×0.1 is quarantined: recorded, not
// applied, the source held, no alert and no ranking change — however many
// runs in a row show it — until an operator accepts it; the run the accept
// starts is applied.
func TestIngest_UnitChangeHeldUntilAccepted(t *testing.T) {
	names := []string{"runpod", "vast", "ecb"}
	for _, f := range []float64{10, 0.1} {
		t.Run(fmt.Sprintf("x%g", f), func(t *testing.T) {
			dir := fixtureDir(t)
			env := pipelinetest.New(t, fixtures.Handler(os.DirFS(dir)), oneWatchGated)
			env.Round(t, names...)
			before, offers := bestKeys(env), runpodPrices(t, env)
			scaleRunPod(t, dir, f)
			for run := 1; run <= 6; run++ {
				s := runpodSummary(t, env.Round(t, names...))
				if s.Err != nil || s.Held != pricewatch.RunQuarantined || !strings.Contains(s.Reason, fmt.Sprintf("ondemand prices ×%g against the accepted level", f)) {
					t.Fatalf("run %d: %+v", run, s)
				}
				st := status(env, "runpod")
				if st.Status != pipeline.StatusSuspect || !strings.Contains(st.Reason, "sources accept runpod") ||
					st.Pending == nil || !st.Pending.NeedsAccept || st.Pending.Runs != run {
					t.Errorf("run %d: /v1/sources %+v", run, st)
				}
				if bestKeys(env) != before || !samePrices(runpodPrices(t, env), offers) {
					t.Errorf("run %d: a quarantined run changed the offers or the ranking", run)
				}
				// Slack hears of it once, and of nothing else.
				if n, holds := env.Notifier.Count(), countHolds(env.Notifier.Messages); n != 1 || holds != 1 {
					t.Errorf("run %d: %d posts (%d hold posts), want the one hold post: %v", run, n, holds, env.Notifier.Messages)
				}
			}
			lv, s, err := env.Pipeline.Accept(t.Context(), "runpod", "test", status(env, "runpod").PendingLabel)
			if err != nil || lv.AcceptedBy != "test" || s.Held != "" || !strings.Contains(s.Reason, "accepted by test") {
				t.Fatalf("accept: %+v %+v %v", lv, s, err)
			}
			for k, p := range runpodPrices(t, env) {
				if want := offers[k] * f; p < want*0.999 || p > want*1.001 {
					t.Errorf("%s: %v after the accept, want %v", k, p, want)
				}
			}
			if st := status(env, "runpod"); st.Status != pipeline.StatusOK || st.AnchoredBy != "accepted by test" {
				t.Errorf("after the accept: %+v", st)
			}
			// The next run at that level is simply applied.
			if s := runpodSummary(t, env.Round(t, names...)); s.Held != "" {
				t.Errorf("after the accept: %+v", s)
			}
			// Nothing is left to accept.
			if _, _, err := env.Pipeline.Accept(t.Context(), "runpod", "test", "factor:x10/ondemand"); !errors.Is(err, store.ErrNothingToAccept) {
				t.Errorf("second accept: %v", err)
			}
		})
	}
}

// oneWatchGated watches lora-7b with the ingest gate at its defaults.
func oneWatchGated(c *config.Config) {
	oneWatch(c)
	c.Ingest = config.DefaultIngest()
}

func runpodPrices(t *testing.T, env *pipelinetest.Env) map[string]float64 {
	t.Helper()
	os, err := env.Store.OffersOf("runpod")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]float64{}
	for _, o := range os {
		m[o.Key] = o.PricePerGPUHour
	}
	return m
}

func samePrices(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func status(env *pipelinetest.Env, name string) pipeline.SourceStatus {
	for _, s := range env.Pipeline.Statuses() {
		if s.Name == name {
			return s
		}
	}
	return pipeline.SourceStatus{}
}

// A renamed field that drops a tier of RunPod offers, or a rename of every
// GPU name, leaves the run suspect with the numbers, not ok.
func TestIngest_LayoutDriftIsSuspect(t *testing.T) {
	names := []string{"runpod", "ecb"}
	for _, c := range []struct {
		name, want string
		mutate     func([]byte) []byte
	}{
		{"renamed spot field", "mapped offers", func(b []byte) []byte {
			return []byte(strings.ReplaceAll(string(b), `"communitySpotPrice"`, `"communitySpotPriceV2"`))
		}},
		{"renamed GPU names", "offers mapping to no card", func(b []byte) []byte {
			return regexp.MustCompile(`"id": "`).ReplaceAll(b, []byte(`"id": "GPU-`))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := fixtureDir(t)
			env := pipelinetest.New(t, fixtures.Handler(os.DirFS(dir)), nil)
			env.Round(t, names...)
			offers := runpodPrices(t, env)
			file := filepath.Join(dir, "runpod", "graphql.json")
			b, _ := os.ReadFile(file)
			if err := os.WriteFile(file, c.mutate(b), 0o644); err != nil {
				t.Fatal(err)
			}
			s := runpodSummary(t, env.Round(t, names...))
			if s.Err != nil || s.Held != pricewatch.RunSuspect || !strings.Contains(s.Reason, c.want) {
				t.Fatalf("run: %+v", s)
			}
			if st := status(env, "runpod"); st.Status != pipeline.StatusSuspect || !strings.Contains(st.Reason, c.want) {
				t.Errorf("/v1/sources %+v", st)
			}
			if !samePrices(runpodPrices(t, env), offers) {
				t.Error("a suspect run changed the offers")
			}
			t.Log(s.Reason)
		})
	}
}

// A RunPod type out of stock in Community Cloud (lowestPrice.stockStatus
// null, added to a copy of the capture, which predates the field) is
// available: no and leaves the default ranking; available=any brings it
// back; the history records the change and /v1/offers' 7-day share.
func TestIngest_OutOfStockLeavesTheRanking(t *testing.T) {
	dir := fixtureDir(t)
	env := pipelinetest.New(t, fixtures.Handler(os.DirFS(dir)), nil)
	names := []string{"runpod", "ecb"}
	env.Round(t, names...)
	// The MI300X: RunPod is the only source of it in this round.
	const card, typ = "MI300X-192GB", "AMD Instinct MI300X OAM"
	before := env.Pipeline.View().Snapshot.Best("lora-7b", rank.Filter{Card: card})
	if len(before) != 1 || before[0].Source != "runpod" {
		t.Fatalf("before: %+v", before)
	}
	file := filepath.Join(dir, "runpod", "graphql.json")
	b, _ := os.ReadFile(file)
	var doc map[string]map[string][]map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, g := range doc["data"]["gpuTypes"] {
		if g["id"] == typ {
			g["secureStock"] = map[string]any{"stockStatus": nil}
			g["communityStock"] = map[string]any{"stockStatus": nil}
		}
	}
	b, _ = json.Marshal(doc)
	os.WriteFile(file, b, 0o644)
	env.Advance(time.Hour)
	if s := runpodSummary(t, env.Round(t, names...)); s.Err != nil || s.Held != "" {
		t.Fatalf("run: %+v", s)
	}
	snap := env.Pipeline.View().Snapshot
	if got := snap.Best("lora-7b", rank.Filter{Card: card}); len(got) != 0 {
		t.Errorf("default ranking still has %+v", got)
	}
	any := snap.Best("lora-7b", rank.Filter{Card: card, AnyAvailability: true})
	if len(any) != 1 || any[0].Key != before[0].Key || any[0].Available != pricewatch.AvailableNo || any[0].Stock != "out of stock" {
		t.Errorf("available=any: %+v", any)
	}
	hist, _ := env.Store.History(before[0].Key)
	if last := hist[len(hist)-1]; len(hist) != 2 || last.Available != pricewatch.AvailableNo {
		t.Errorf("history %+v", hist)
	}
	// Unknown for the first hour, out for the second: no known time
	// available, so the 7-day share is 0.
	shares, _ := env.Store.Availability([]string{before[0].Key}, env.Now().Add(-7*24*time.Hour), env.Now().Add(time.Hour))
	if sh, ok := shares[before[0].Key]; !ok || sh != 0 {
		t.Errorf("7-day availability %v", shares)
	}
}
