package alerts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// Watch is a named ranking whose best offer is watched: a workload (or a
// job spec, whose best plan option is watched) with optional card, modes,
// regions and providers, in a currency, under its rules.
type Watch struct {
	Name     string
	Workload string
	Job      *rank.JobSpec
	Card     string
	Modes    []pricewatch.Mode
	// MaxGPUs keeps offers rentable with at most this many GPUs (0: any).
	MaxGPUs int
	// AnyAvailability watches offers the source says are out of stock too.
	AnyAvailability bool
	Currency        string
	Regions         []string
	Providers       []string
	Rules           Rules
	// IncludeAPI compares a serving workload's best self-hosted option
	// with the cheapest inference API selling its model: a flip between
	// them is posted (confirmed like a best-choice change), and the
	// digest has a line for it.
	IncludeAPI bool
}

// FailingRuns is how many failed runs in a row make a source failing for
// alerting: its vanished offers are inhibited and one health post goes out.
const FailingRuns = 3

// Store is what the engine keeps in the database.
type Store interface {
	Decide(key string, fn func(state []byte) (any, []store.Message, error)) ([]uint64, error)
	AddSample(watch string, s store.Sample) error
	Series(watch string, since time.Time) ([]store.Sample, error)
	Silences() ([]store.Silence, error)
}

// Engine evaluates watches and source health after every refresh.
type Engine struct {
	Store   Store
	Watches []Watch
	Log     *slog.Logger
	Now     func() time.Time
	// Wake, if set, is signalled after messages were enqueued.
	Wake func()
	// Result, if set, counts outcomes by kind.
	Result func(kind string)
	// HoldBand is the ingest band: a held level whose factor moves by it
	// from the one announced is announced again (0: DefaultHoldBand).
	HoldBand float64
}

// DefaultHoldBand is the ingest gate's default band (config.DefaultIngest).
const DefaultHoldBand = 3

// movedBeyond reports whether a held level moved from the one announced so
// that it must be announced again: its factor by the band or more, or, for
// a level without a factor, to another level (store.SameLevel).
func movedBeyond(announced, now store.Level, band float64) bool {
	if band <= 1 {
		band = DefaultHoldBand
	}
	if announced.Kind != now.Kind || announced.Mode != now.Mode {
		return true
	}
	if announced.Factor > 0 && now.Factor > 0 {
		r := now.Factor / announced.Factor
		return r >= band || r <= 1/band
	}
	return !store.SameLevel(announced, now)
}

func (e *Engine) count(k string) {
	if e.Result != nil {
		e.Result(k)
	}
}

// Evaluate runs the watches against a snapshot. health and enabled describe
// the sources for inhibition, health posts and the degraded pause.
func (e *Engine) Evaluate(ctx context.Context, snap *rank.Snapshot, health map[string]store.Health, enabled []string) error {
	now := e.Now()
	paused, queued, err := e.sourceHealth(health, enabled, now)
	// Health and degraded posts wake the sender like change posts do.
	enqueued := queued > 0
	defer func() {
		if enqueued && e.Wake != nil {
			e.Wake()
		}
	}()
	if err != nil {
		return err
	}
	n, err := e.norms(snap, now)
	enqueued = enqueued || n > 0
	if err != nil {
		return err
	}
	silences, err := e.Store.Silences()
	if err != nil {
		return fmt.Errorf("silences: %w", err)
	}
	var errs []error
	for _, w := range e.Watches {
		n, err := e.evaluate(snap, w, health, silences, paused, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("watch %s: %w", w.Name, err))
		}
		enqueued = enqueued || n > 0
		if !w.IncludeAPI || paused {
			continue
		}
		self, _, err := Current(snap, w, now)
		if err == nil {
			n, err = e.evaluateFlip(snap, w, self, IsSilenced(silences, w.Name, now), now)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("watch %s (api): %w", w.Name, err))
		}
		enqueued = enqueued || n > 0
	}
	return errors.Join(errs...)
}

// IsSilenced reports whether a silence covers the watch at t.
func IsSilenced(silences []store.Silence, watch string, t time.Time) bool {
	for _, s := range silences {
		if (s.Watch == watch || s.Watch == "*") && !t.Before(s.Starts) && t.Before(s.Ends) {
			return true
		}
	}
	return false
}

func (e *Engine) evaluate(snap *rank.Snapshot, w Watch, health map[string]store.Health, silences []store.Silence, paused bool, now time.Time) (int, error) {
	cur, present, err := Current(snap, w, now)
	if err != nil {
		return 0, err
	}
	median := 0.0
	if series, err := e.Store.Series(w.Name, now.Add(-7*24*time.Hour)); err == nil {
		median = medianCost(series)
	}
	var out Outcome
	ids, err := e.Store.Decide("watch:"+w.Name, func(raw []byte) (any, []store.Message, error) {
		var st State
		if raw != nil {
			if err := json.Unmarshal(raw, &st); err != nil {
				return nil, nil, fmt.Errorf("decode state: %w", err)
			}
		}
		in := Input{Now: now, Current: cur, Present: present, Median7d: median,
			Silenced: IsSilenced(silences, w.Name, now), Paused: paused,
			LastRun: func(source string) time.Time { return health[source].LastRun }}
		if st.Notified != nil {
			in.Inhibited = health[st.Notified.Source].ConsecutiveFailures >= FailingRuns
		}
		out = Decide(st, in, w.Rules)
		if !out.Post() {
			return out.State, nil, nil
		}
		m, err := encode("change", w.Name, ChangeMessage(w.Name, out), now)
		return out.State, []store.Message{m}, err
	})
	if err != nil {
		return 0, err
	}
	e.count(string(out.Kind))
	if out.Kind != Nothing {
		e.Log.Info("alert decision", "watch", w.Name, "kind", out.Kind, "change_pct", round1(out.ChangePct),
			"unusual", out.Unusual, "confirmations", out.Confirmations)
	}
	if cur != nil {
		if err := e.Store.AddSample(w.Name, store.Sample{At: now, Cost: cur.CostPerMillionTokens, Key: cur.Key}); err != nil {
			return len(ids), err
		}
	}
	return len(ids), nil
}

func round1(v float64) float64 { return float64(int64(v*10)) / 10 }

func medianCost(series []store.Sample) float64 {
	if len(series) == 0 {
		return 0
	}
	v := make([]float64, len(series))
	for i, s := range series {
		v[i] = s.Cost
	}
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// Current is a watch's best choice in its currency (nil when it has no
// eligible offer) and a test of whether an offer key is still ranked.
func Current(snap *rank.Snapshot, w Watch, now time.Time) (*Choice, func(string) bool, error) {
	if w.Job != nil {
		return currentPlan(snap, w, now)
	}
	f := filterOf(w)
	present := func(k string) bool { return snap.Ranked(w.Workload, k, f) }
	list := snap.Best(w.Workload, f)
	if len(list) == 0 {
		return nil, present, nil
	}
	c, err := toChoice(snap, list[0], w.Currency, now)
	return c, present, err
}

// filterOf is the ranking filter of a watch.
func filterOf(w Watch) rank.Filter {
	return rank.Filter{Modes: w.Modes, Card: w.Card, MaxGPUs: w.MaxGPUs, AnyAvailability: w.AnyAvailability,
		Narrowing: rank.Narrowing{Regions: w.Regions, Providers: w.Providers}}
}

// filtered are the watch's best entries per card, cheapest first.
func filtered(snap *rank.Snapshot, w Watch) []rank.Entry {
	return snap.Best(w.Workload, filterOf(w))
}

func toChoice(snap *rank.Snapshot, b rank.Entry, cur string, now time.Time) (*Choice, error) {
	e, err := b.In(snap, cur)
	if err != nil {
		return nil, fmt.Errorf("convert to %s: %w", cur, err)
	}
	return &Choice{
		Key: e.Key, Card: e.Card, Source: e.Source, OfferID: e.OfferID, Region: e.Region, Mode: e.Mode, GPUs: e.GPUs,
		PricePerGPUHour: e.PricePerGPUHour, CostPerMillionTokens: e.CostPerMillionTokens,
		UnitPricePerHour: e.UnitPricePerHour, TokensPerSecond: e.TokensPerSecond,
		Currency: cur, At: now,
	}, nil
}

func currentPlan(snap *rank.Snapshot, w Watch, now time.Time) (*Choice, func(string) bool, error) {
	spec := *w.Job
	spec.Currency = w.Currency
	if w.MaxGPUs > 0 && (spec.MaxGPUs == 0 || spec.MaxGPUs > w.MaxGPUs) {
		spec.MaxGPUs = w.MaxGPUs
	}
	if w.AnyAvailability {
		spec.Available = "any"
	}
	if spec.Limit == 0 {
		spec.Limit = rank.MaxPlanLimit
	}
	job, err := spec.Resolve(func(n string) (rank.Workload, bool) { return snap.Workload(n) }, normalize.KnownCurrency, snap.Base)
	if err != nil {
		return nil, nil, err
	}
	res, err := snap.Plan(job, nil, normalize.DefaultCatalog())
	if err != nil {
		return nil, nil, err
	}
	keys := map[string]bool{}
	var best *rank.Option
	for i, o := range res.Options {
		if (len(w.Regions) > 0 && !slices.Contains(w.Regions, o.Region)) || (len(w.Providers) > 0 && !slices.Contains(w.Providers, o.Provider)) {
			continue
		}
		keys[o.Key] = true
		if best == nil {
			best = &res.Options[i]
		}
	}
	present := func(k string) bool { return keys[k] }
	if best == nil {
		return nil, present, nil
	}
	return &Choice{Key: best.Key, Card: best.Card, Source: best.Source, OfferID: best.Offer, Region: best.Region, Mode: best.Mode, GPUs: best.GPUs,
		PricePerGPUHour: best.PricePerGPUHour, CostPerMillionTokens: best.CostPerMillionTokens, Currency: w.Currency, At: now}, present, nil
}

// sourceState is the notification state of one source's health.
type sourceState struct {
	Alerted bool `json:"alerted"`
}

// holdState is the notification state of a source's held level: the
// level announced, so that a level that moves is announced again.
type holdState struct {
	Alerted bool         `json:"alerted"`
	Level   *store.Level `json:"level,omitempty"`
}

// sourceHealth posts once when a source has failed FailingRuns runs in a
// row and once when it recovers, once for the GPU names a run of a source
// reports for the first time (after its baseline), and once when more
// than half the sources fail (data quality degraded, change posts paused)
// and once when that ends. It returns whether change posts are paused and
// how many messages it enqueued.
func (e *Engine) sourceHealth(health map[string]store.Health, enabled []string, now time.Time) (paused bool, queued int, err error) {
	// Only sources that have run count: one not yet run is not failing,
	// nor a reason to judge the others.
	failing, known := 0, 0
	for _, name := range enabled {
		h, ok := health[name]
		if !ok {
			continue
		}
		known++
		if !h.LastOK {
			failing++
		}
		ids, err := e.Store.Decide("source:"+name, func(raw []byte) (any, []store.Message, error) {
			var st sourceState
			if raw != nil {
				_ = json.Unmarshal(raw, &st)
			}
			switch {
			case !st.Alerted && h.ConsecutiveFailures >= FailingRuns:
				m, err := encode("health", "", HealthMessage(name, h, false), now)
				return sourceState{Alerted: true}, []store.Message{m}, err
			case st.Alerted && h.LastOK:
				m, err := encode("health", "", HealthMessage(name, h, true), now)
				return sourceState{Alerted: false}, []store.Message{m}, err
			}
			return nil, nil, nil
		})
		queued += len(ids)
		if err != nil {
			return false, queued, err
		}
		// A level held for an operator is said once; its end silently
		// rearms the post.
		waits := h.Hold != "" && h.Pending != nil && h.Pending.NeedsAccept
		ids, err = e.Store.Decide("hold:"+name, func(raw []byte) (any, []store.Message, error) {
			var st holdState
			if raw != nil {
				_ = json.Unmarshal(raw, &st)
			}
			switch {
			case waits && (!st.Alerted || st.Level != nil && movedBeyond(*st.Level, *h.Pending, e.HoldBand)):
				// New, or moved by the band from the level announced (an
				// accept names the level it was shown: a level that moved
				// this far must be shown again).
				m, err := encode("health", "", HoldMessage(name, h), now)
				lv := *h.Pending
				return holdState{Alerted: true, Level: &lv}, []store.Message{m}, err
			case !waits && st.Alerted:
				return holdState{}, nil, nil
			}
			return nil, nil, nil
		})
		queued += len(ids)
		if err != nil {
			return false, queued, err
		}
		// A level the market disputes is said once (again only when it
		// moves by the band from the one announced); its end, or an
		// operator's accept, silently rearms the post.
		disputed := h.Disputed.Open()
		ids, err = e.Store.Decide("dispute:"+name, func(raw []byte) (any, []store.Message, error) {
			var st holdState
			if raw != nil {
				_ = json.Unmarshal(raw, &st)
			}
			switch {
			case disputed && (!st.Alerted || st.Level != nil && movedBeyond(*st.Level, h.Disputed.Level(), e.HoldBand)):
				m, err := encode("health", "", DisputeMessage(name, *h.Disputed), now)
				lv := h.Disputed.Level()
				return holdState{Alerted: true, Level: &lv}, []store.Message{m}, err
			case !disputed && st.Alerted:
				return holdState{}, nil, nil
			}
			return nil, nil, nil
		})
		queued += len(ids)
		if err != nil {
			return false, queued, err
		}
		// GPU names the source never reported before are posted once
		// (newnames.go; the first applied run is the silent baseline).
		n, err := e.newNames(name, h, now)
		queued += n
		if err != nil {
			return false, queued, fmt.Errorf("new gpu names of %s: %w", name, err)
		}
	}
	degraded := known > 0 && failing*2 > known
	ids, err := e.Store.Decide("degraded", func(raw []byte) (any, []store.Message, error) {
		var st sourceState
		if raw != nil {
			_ = json.Unmarshal(raw, &st)
		}
		if st.Alerted == degraded {
			return nil, nil, nil
		}
		m, err := encode("degraded", "", DegradedMessage(failing, known, degraded), now)
		return sourceState{Alerted: degraded}, []store.Message{m}, err
	})
	return degraded, queued + len(ids), err
}

// CheckNorms posts once for every provider- or offer-level measurement of
// the snapshot that is flagged below its card's norm and was not flagged
// before (a profile just set or imported, or a norm that moved); a flag
// that clears is forgotten silently, so a later fall posts again.
func (e *Engine) CheckNorms(ctx context.Context, snap *rank.Snapshot) error {
	n, err := e.norms(snap, e.Now())
	if n > 0 && e.Wake != nil {
		e.Wake()
	}
	return err
}

func (e *Engine) norms(snap *rank.Snapshot, now time.Time) (int, error) {
	queued := 0
	for _, c := range snap.Norms {
		ids, err := e.Store.Decide("norm:"+c.Key(), func(raw []byte) (any, []store.Message, error) {
			var st sourceState
			if raw != nil {
				_ = json.Unmarshal(raw, &st)
			}
			switch {
			case c.BelowNorm && !st.Alerted:
				m, err := encode("norm", "", NormMessage(c), now)
				return sourceState{Alerted: true}, []store.Message{m}, err
			case !c.BelowNorm && st.Alerted:
				return sourceState{Alerted: false}, nil, nil
			}
			return nil, nil, nil
		})
		queued += len(ids)
		if err != nil {
			return queued, fmt.Errorf("norm check %s: %w", strings.ReplaceAll(c.Key(), "\x00", "/"), err)
		}
	}
	return queued, nil
}

// payload is a Message as stored in the outbox.
type payload struct {
	Text   string          `json:"text"`
	Blocks json.RawMessage `json:"blocks"`
}

func encode(kind, watch string, m Message, now time.Time) (store.Message, error) {
	blocks, err := json.Marshal(m.Blocks)
	if err != nil {
		return store.Message{}, err
	}
	p, err := json.Marshal(payload{Text: m.Text, Blocks: blocks})
	if err != nil {
		return store.Message{}, err
	}
	return store.Message{Kind: kind, Watch: watch, Text: m.Text, Payload: p, Created: now}, nil
}

// EncodeMessage turns a message into an outbox entry (digests, tests).
func EncodeMessage(kind string, m Message, now time.Time) (store.Message, error) {
	return encode(kind, "", m, now)
}
