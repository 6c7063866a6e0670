// Package pipeline runs pricewatch's data flow: a source run scrapes,
// normalizes and records its offers in one store transaction; a refresh
// rebuilds the ranking snapshot off the request path, swaps it in
// atomically and lets the alert engine compare the new best choices with
// the last alerted ones. Cron drives one run per source on its schedule.
package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/robfig/cron/v3"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/history"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/store"
)

// View is what queries read: the current ranking and the sources' health.
type View struct {
	Snapshot *rank.Snapshot
	Health   map[string]store.Health
}

// Pipeline owns the run → record → rank → alert loop.
type Pipeline struct {
	cfg   *config.Config
	store *store.Store
	// tokens caches the stored token prices (read once, replaced after a
	// token source's applied run): every rebuild reads them.
	tokens    atomic.Pointer[[]pricewatch.TokenPrice]
	catalog   *normalize.Catalog
	workloads []rank.Workload
	alerts    *alerts.Engine
	sender    *alerts.Sender
	wake      chan struct{}
	log       *slog.Logger
	metrics   *metrics
	now       func() time.Time

	getenv     func(string) string
	onProgress func(scrapers.Progress)
	onOffers   func(int)
	// disabled holds enabled sources that cannot run as configured (a key
	// is missing), with the reason; they are not scheduled.
	disabled map[string]string

	view    atomic.Pointer[View]
	refresh sync.Mutex
	// giveBack says a big run ended since the last swap: its parse, its
	// diff and the pack and ranking it replaced are garbage once the new
	// view is in.
	giveBack atomic.Bool

	// packs are the current offers of every source with stored offers, in
	// the compact form rankings read, kept in step with the store: a run
	// replaces its source's pack, and a refresh re-ranks only the packs
	// that changed.
	packMu sync.Mutex
	packs  map[string]*rank.Pack // nil until read from the store

	demo bool // Options.Demo

	// seeds are the reference profiles of the config's workloads
	// (rankProfiles), computed once.
	seedOnce sync.Once
	seeds    []rank.Profile

	// running holds a source's name while a run of it is in flight: one
	// run per source at a time (cron, POST /v1/scrape, accept).
	running sync.Map

	// pageCheckMu lets one page check run at a time; lastPageCheck is
	// the last one's result (nil before any).
	pageCheckMu   sync.Mutex
	lastPageCheck atomic.Pointer[store.PageCheck]

	sched   sync.RWMutex // guards cron and entries, set once by Start
	cron    *cron.Cron
	entries map[string]cron.EntryID
}

// Options are the pipeline's collaborators; zero values get defaults.
type Options struct {
	Notifier alerts.Notifier
	Logger   *slog.Logger
	Registry prometheus.Registerer
	Now      func() time.Time
	// Getenv reads the sources' keys and tokens (nil: the environment).
	Getenv func(string) string
	// OnProgress receives byte and offer counts while sources run.
	OnProgress func(scrapers.Progress)
	// DeliverySettle is how long after an unanswered Slack post the sender
	// looks for it in the channel (0: alerts.DefaultSettle; tests with a
	// fast fake Slack shorten it).
	DeliverySettle time.Duration
	// OnOffers receives the number of offers held after a run changed
	// them (the daemon sizes its memory limit from it).
	OnOffers func(int)
	// Demo says the sources are the bundled fixtures (--demo, --fixtures)
	// or their database: the digest says so.
	Demo bool
}

// New builds a pipeline over an open store. It writes nothing: Init does.
func New(cfg *config.Config, st *store.Store, opt Options) (*Pipeline, error) {
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.Now == nil {
		opt.Now = func() time.Time { return time.Now().UTC() }
	}
	if opt.Registry == nil {
		opt.Registry = prometheus.NewRegistry()
	}
	p := &Pipeline{
		cfg: cfg, store: st, catalog: normalize.DefaultCatalog(),
		log: opt.Logger, now: opt.Now, getenv: opt.Getenv, onProgress: opt.OnProgress, onOffers: opt.OnOffers,
		disabled: map[string]string{}, demo: opt.Demo,
	}
	for _, name := range cfg.SourceNames() {
		src := cfg.Sources[name]
		if ch, ok := src.Scraper.(scrapers.Checker); ok && src.Settings.Enabled {
			var d *scrapers.Disabled
			if err := ch.Check(p.env(name)); errors.As(err, &d) {
				p.disabled[name] = d.Reason
			} else if err != nil {
				return nil, fmt.Errorf("source %s: %w", name, err)
			}
		}
	}
	ws, err := cfg.ResolveWorkloads()
	if err != nil {
		return nil, err
	}
	p.workloads = ws
	m, err := newMetrics(opt.Registry, p)
	if err != nil {
		return nil, err
	}
	p.metrics = m
	watches, err := p.watches()
	if err != nil {
		return nil, err
	}
	p.wake = make(chan struct{}, 1)
	p.alerts = &alerts.Engine{
		Store: st, Watches: watches, Log: opt.Logger.With("component", "alerts"), Now: opt.Now, HoldBand: cfg.Ingest.Band,
		Result: func(r string) { m.alerts.WithLabelValues(r).Inc() },
		Wake: func() {
			select {
			case p.wake <- struct{}{}:
			default:
			}
		},
	}
	p.sender = &alerts.Sender{
		Outbox: st, Notifier: opt.Notifier, Log: opt.Logger.With("component", "outbox"), Now: opt.Now,
		Result:    func(r string) { m.deliveries.WithLabelValues(r).Inc() },
		Retention: cfg.Alerts.OutboxRetention, Settle: opt.DeliverySettle,
	}
	return p, nil
}

// Watches are the watches the alert engine evaluates.
func (p *Pipeline) Watches() []alerts.Watch { return p.alerts.Watches }

// Deliver sends the due messages of the outbox once (scrape and digest
// commands; the daemon runs the sender continuously with RunSender).
func (p *Pipeline) Deliver(ctx context.Context) error {
	_, err := p.sender.DeliverDue(ctx)
	return err
}

// RunSender delivers the outbox until ctx ends, in order, with retries.
func (p *Pipeline) RunSender(ctx context.Context) { p.sender.Run(ctx, p.wake) }

// Enqueue puts a message (the digest) into the outbox and wakes the sender.
func (p *Pipeline) Enqueue(kind string, m alerts.Message) error {
	sm, err := alerts.EncodeMessage(kind, m, p.now())
	if err != nil {
		return err
	}
	if _, err := p.store.Enqueue(sm); err != nil {
		return err
	}
	p.alerts.Wake()
	return nil
}

// Availability is the share of the window each offer was available, from
// the store's history (offers whose availability was never known are left
// out).
func (p *Pipeline) Availability(keys []string, since, now time.Time) (map[string]float64, error) {
	return p.store.Availability(keys, since, now)
}

// Store is the pipeline's store (read paths of the API and the digest).
func (p *Pipeline) Store() *store.Store { return p.store }

func (p *Pipeline) watches() ([]alerts.Watch, error) {
	cw, err := p.cfg.EffectiveWatches()
	if err != nil {
		return nil, err
	}
	out := make([]alerts.Watch, 0, len(cw))
	for _, w := range cw {
		modes, err := pricewatch.ParseModes(joinStrings(w.Modes))
		if err != nil {
			return nil, fmt.Errorf("watch %s: %w", w.Name, err)
		}
		cur := w.Currency
		if cur == "" {
			cur = p.cfg.Ranking.BaseCurrency
		}
		aw := alerts.Watch{Name: w.Name, Workload: w.Workload, Card: w.Card, Modes: modes, MaxGPUs: w.MaxGPUs, AnyAvailability: w.Available == "any", Currency: cur,
			Regions: w.Regions, Providers: w.Providers, Rules: w.RulesOver(p.cfg.Alerts.Rules), IncludeAPI: w.IncludeAPI}
		if w.Job != nil {
			// The job goes through the endpoint's strict decoder, so a watch
			// names a bad field just as POST /v1/plan would.
			b, err := json.Marshal(w.Job)
			if err != nil {
				return nil, fmt.Errorf("watch %s: job: %w", w.Name, err)
			}
			var spec rank.JobSpec
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&spec); err != nil {
				return nil, fmt.Errorf("watch %s: job: %w", w.Name, err)
			}
			if _, err := spec.Resolve(p.Workload, normalize.KnownCurrency, cur); err != nil {
				return nil, fmt.Errorf("watch %s: job: %w", w.Name, err)
			}
			aw.Job = &spec
		}
		out = append(out, aw)
	}
	return out, nil
}

func joinStrings(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ","
		}
		out += v
	}
	return out
}

// Init seeds the reference throughput profiles into the store (keeping a
// user's measured ones), reads the stored offers into memory and builds
// the first view from them, so the last good ranking answers queries
// before the first scrape completes.
func (p *Pipeline) Init() error {
	if err := p.store.SeedProfiles(p.referenceProfiles()); err != nil {
		return fmt.Errorf("seed profiles: %w", err)
	}
	if err := p.loadPacks(); err != nil {
		return fmt.Errorf("read offers: %w", err)
	}
	// The stored best series is kept from here on (store/bestseries.go).
	if err := p.store.TrackSeries(history.NewTracker(p.workloads, p.catalog), p.Enabled()); err != nil {
		return err
	}
	return p.Rebuild()
}

// loadPacks reads every stored offer into the packs.
func (p *Pipeline) loadPacks() error {
	packs := map[string]*rank.Pack{}
	// Each source's last run says about how many offers it holds: sized
	// once, a pack's rows are not copied as they grow (most of the packing
	// time at 100k).
	health, err := p.store.Health()
	if err != nil {
		return err
	}
	var b *rank.PackBuilder
	src, n := "", 0
	err = p.store.ScanOffers("", func(o *pricewatch.Offer) error {
		n++
		if b == nil || o.Source != src {
			if b != nil {
				packs[src] = b.Pack()
			}
			src = o.Source
			b = rank.NewPackBuilder(src, health[src].Offers)
		}
		b.Add(o)
		return nil
	})
	if err != nil {
		return err
	}
	if b != nil {
		packs[src] = b.Pack()
	}
	p.packMu.Lock()
	p.packs = packs
	p.packMu.Unlock()
	if n >= bigRun {
		p.giveBack.Store(true) // the rows decoded to build the packs
	}
	return nil
}

// runsInFlight is the number of source runs going on (this one included).
func (p *Pipeline) runsInFlight() int {
	n := 0
	p.running.Range(func(any, any) bool { n++; return true })
	return n
}

// heldOffers is the number of offers in every source's pack.
func (p *Pipeline) heldOffers() int {
	p.packMu.Lock()
	defer p.packMu.Unlock()
	n := 0
	for _, pk := range p.packs {
		n += pk.Len()
	}
	return n
}

// pack is a source's current offers (nil when it has none).
func (p *Pipeline) pack(source string) *rank.Pack {
	p.packMu.Lock()
	defer p.packMu.Unlock()
	return p.packs[source]
}

// setPack replaces a source's pack after its run was applied: the offers
// the store recorded (with their first-seen and observed times) and those
// it kept as they were.
func (p *Pipeline) setPack(source string, offers []pricewatch.Offer, keep []string) {
	p.packMu.Lock()
	defer p.packMu.Unlock()
	if p.packs == nil {
		p.packs = map[string]*rank.Pack{}
	}
	old := p.packs[source]
	var np *rank.Pack
	if old != nil && len(keep) > 0 {
		np = old.Replace(offers, keep)
	} else {
		np = rank.NewPack(source, offers)
	}
	if np.Len() == 0 {
		delete(p.packs, source)
		return
	}
	p.packs[source] = np
}

// Rebuild rebuilds and swaps in the ranking without evaluating alerts (at
// start-up, stored offers may be stale until the first scrape renews them;
// judging alerts on them would announce vanishings that are not real).
func (p *Pipeline) Rebuild() error {
	p.refresh.Lock()
	defer p.refresh.Unlock()
	if _, err := p.swap(); err != nil {
		return err
	}
	p.releaseBigRun()
	return nil
}

// swap builds a view and swaps it in; the caller holds p.refresh.
func (p *Pipeline) swap() (*View, error) {
	v, err := p.BuildView()
	if err != nil {
		return nil, fmt.Errorf("build ranking: %w", err)
	}
	p.view.Store(v)
	return v, nil
}

// releaseBigRun returns a big run's garbage to the system now rather than
// over the next minutes (the collector's goal would keep twice the live
// heap), and the database pages its diff read, once a big run ended since
// the last call. Only after the swap (before it, the old view still held
// the pack the run replaced) and after the alerts' evaluation of the new
// view (its garbage goes too). The caller holds p.refresh.
//
// Two collections: bbolt keeps the single pages a write transaction
// allocated in a sync.Pool, which one collection only moves to its victim
// cache. After a first write of 1M offers that was 400 MB, so one
// collection left 650 MB of RSS for a live heap of 200 MB
// (benchscale giveback); the second frees them before the scavenge.
func (p *Pipeline) releaseBigRun() {
	if p.giveBack.Swap(false) {
		runtime.GC()
		debug.FreeOSMemory()
		if err := p.store.DropPages(); err != nil {
			p.log.Debug("drop database pages", "err", err)
		}
	}
}

// SetProfile stores a profile (a user's measured one), rebuilds the
// ranking so that it applies at once, and checks provider- and offer-level
// measurements against their card's norm: a new "below norm" flag queues
// one Slack message. The check of the stored profile is returned when it
// has one (a card-wide figure has none).
func (p *Pipeline) SetProfile(ctx context.Context, pr rank.Profile) (*rank.NormCheck, error) {
	if err := p.store.PutProfile(pr); err != nil {
		return nil, err
	}
	if err := p.Rebuild(); err != nil {
		return nil, err
	}
	return p.checkNorms(ctx, pr.Key())
}

// DeleteProfile removes a measured profile; a card-wide one gives way to
// the reference figure again. ok is false when there was none.
func (p *Pipeline) DeleteProfile(ctx context.Context, card, workload, provider, offer string) (ok bool, err error) {
	if ok, err = p.store.DeleteProfile(card, workload, provider, offer); err != nil || !ok {
		return ok, err
	}
	if provider == "" {
		if err := p.store.SeedProfiles(p.referenceProfiles()); err != nil {
			return true, fmt.Errorf("restore reference profiles: %w", err)
		}
	}
	if err := p.Rebuild(); err != nil {
		return true, err
	}
	// Other measurements' norms may have moved with this one gone.
	_, err = p.checkNorms(ctx, "")
	return true, err
}

// checkNorms runs the alert engine's norm check on the current view and
// returns the check of the profile with key (nil when it has none).
func (p *Pipeline) checkNorms(ctx context.Context, key string) (*rank.NormCheck, error) {
	v := p.View()
	if v == nil || v.Snapshot == nil {
		return nil, nil
	}
	if err := p.alerts.CheckNorms(ctx, v.Snapshot); err != nil {
		return nil, err
	}
	if c, ok := v.Snapshot.NormOf(key); ok {
		return &c, nil
	}
	return nil, nil
}

// NormChecks are the current checks of provider- and offer-level
// measurements against their card's norm.
func (p *Pipeline) NormChecks() []rank.NormCheck {
	if v := p.View(); v != nil && v.Snapshot != nil {
		return v.Snapshot.Norms
	}
	return nil
}

// Profiles lists the throughput profiles rankings use: the reference
// figures of the config's workloads and the stored measured ones.
func (p *Pipeline) Profiles() ([]rank.Profile, error) { return p.rankProfiles() }

// Catalog is the card catalog the pipeline normalizes with.
func (p *Pipeline) Catalog() *normalize.Catalog { return p.catalog }

// Workload returns a workload rankings are built for, by name.
func (p *Pipeline) Workload(name string) (rank.Workload, bool) {
	for _, w := range p.workloads {
		if w.Name == name {
			return w, true
		}
	}
	return rank.Workload{}, false
}

// Workloads are the workloads rankings are built for.
func (p *Pipeline) Workloads() []rank.Workload { return p.workloads }

// Config is the configuration the pipeline runs with.
func (p *Pipeline) Config() *config.Config { return p.cfg }

// View returns the current view (nil before the first Refresh).
func (p *Pipeline) View() *View { return p.view.Load() }

// Summary reports one source run.
type Summary struct {
	Source  string
	Offers  int
	Changes int
	Unknown map[string]int
	// Rates is set by rate sources (the ECB).
	Rates *pricewatch.Rates
	// Disabled is the reason a source did not run (a missing key).
	Disabled string
	Duration time.Duration
	Err      error
	// Invalid counts observations skipped; Held is set when the run was
	// kept but not applied (quarantined, suspect), Reason says why (or that
	// a new level was confirmed); HeldOffers counts outliers held back.
	Invalid    int
	Held       pricewatch.RunHold
	Reason     string
	HeldOffers int
}

// ErrBusy: a run of the source is already in flight.
var ErrBusy = errors.New("a run of this source is in progress")

// RunSource scrapes one source and records the run. A failure is recorded
// too (the source turns failing) and leaves its stored offers untouched.
func (p *Pipeline) RunSource(ctx context.Context, name string) Summary {
	r, sum := p.startRun(ctx, name)
	if r == nil {
		return sum
	}
	return p.finishRun(r, nil)
}

// sourceRun is a source's run scraped and normalized, not yet judged nor
// recorded; it holds the source's running slot until finishRun.
type sourceRun struct {
	name string
	run  pricewatch.Run
	rr   store.RunResult
	in   *gateIn // what the gate judges (nil: a failure, rates, token prices)
	err  error
	// fetched is the bytes the run's responses read: a big run that
	// failed (its body cap hit) leaves its parse as garbage too.
	fetched int64
}

// startRun scrapes a source and prepares its run for the gate; without a
// run, the summary says why none started.
func (p *Pipeline) startRun(ctx context.Context, name string) (*sourceRun, Summary) {
	src, ok := p.cfg.Sources[name]
	if !ok {
		return nil, Summary{Source: name, Err: fmt.Errorf("unknown source %q", name)}
	}
	if reason, off := p.disabled[name]; off {
		return nil, Summary{Source: name, Disabled: reason}
	}
	if since, busy := p.running.LoadOrStore(name, p.now()); busy {
		return nil, Summary{Source: name, Err: fmt.Errorf("%s: %w (started %s ago); this one was skipped",
			name, ErrBusy, p.now().Sub(since.(time.Time)).Round(time.Millisecond))}
	}
	start := p.now()
	env := p.env(name)
	res, err := safeScrape(ctx, src.Scraper, env)
	r := &sourceRun{name: name, run: pricewatch.Run{Source: name, Started: start, Duration: p.now().Sub(start)}, fetched: env.BytesRead()}
	if err == nil {
		r.rr, r.in, err = p.prepare(name, &res, start)
	}
	r.err = err
	return r, Summary{}
}

// finishRun judges a prepared run (a first run of a round against its
// peers too: round.go), records it and frees the source's running slot.
func (p *Pipeline) finishRun(r *sourceRun, peers *roundMarket) Summary {
	defer p.running.Delete(r.name)
	name, run, rr, err := r.name, r.run, r.rr, r.err
	log := p.log.With("source", name)
	if err == nil && r.in != nil {
		p.judgeRun(&rr, r.in, peers)
		r.in = nil // its offers are rr's now
	}
	if err != nil {
		// The error names its source wherever it ends up (logs, /v1/sources).
		err = fmt.Errorf("%s: %w", name, err)
		run.Error = err.Error()
		run.Invalid = rr.Run.Invalid
	} else {
		run.OK = true
		run.Offers = rr.Run.Offers
		run.Unknown, run.Invalid = rr.Run.Unknown, rr.Run.Invalid
		run.Held, run.Reason, run.HeldOffers = rr.Run.Held, rr.Run.Reason, rr.Run.HeldOffers
	}
	rr.Run = run
	stored, serr := p.store.RecordRun(rr)
	if serr != nil {
		err = errors.Join(err, serr)
	} else if stored.Held == pricewatch.RunSuperseded {
		run.Held, run.Reason = stored.Held, stored.Reason
	} else if run.OK && run.Held == "" {
		if rr.Tokens != nil {
			p.tokens.Store(nil) // re-read with the times the store set
		}
		// The store filled in the offers' times as it recorded them.
		p.setPack(name, rr.Offers, rr.Keep)
		if p.onOffers != nil && p.runsInFlight() == 1 {
			// Only the last of concurrent runs reports: a small source
			// finishing first would size the memory limit for a catalog
			// without the big run still going (a first scrape of 1M
			// offers then ran under 160 MiB).
			p.onOffers(p.heldOffers())
		}
	}
	if len(rr.Offers) >= bigRun || r.fetched >= bigBody {
		// A failed big run too: nothing collected its parse before (a 1M
		// run cut by its body cap held 1.1 GB for minutes).
		p.giveBack.Store(true)
	}
	p.metrics.observe(run, stored.Changes)
	sum := Summary{Source: name, Offers: run.Offers, Changes: stored.Changes, Unknown: run.Unknown, Duration: run.Duration, Err: err,
		Invalid: run.Invalid, Held: run.Held, Reason: run.Reason, HeldOffers: len(run.HeldOffers)}
	if err == nil {
		sum.Rates = rr.Rates
	}
	switch {
	case err != nil:
		log.Warn("scrape failed", "err", err, "duration", run.Duration)
	case run.Held != "":
		log.Warn("run held", "hold", run.Held, "reason", run.Reason, "duration", run.Duration)
	default:
		log.Info("scrape ok", "offers", run.Offers, "changes", stored.Changes, "unknown_gpus", len(run.Unknown), "duration", run.Duration)
	}
	return sum
}

func (p *Pipeline) env(name string) *scrapers.Env {
	return &scrapers.Env{Name: name, Settings: p.cfg.Sources[name].Settings, UserAgent: p.cfg.UserAgent,
		Getenv: p.getenv, OnProgress: p.onProgress}
}

// Disabled maps sources that are enabled in config but cannot run (a key
// or token is missing) to the reason.
func (p *Pipeline) Disabled() map[string]string { return p.disabled }

// safeScrape turns a scraper panic into an error: one broken parser must not
// take the daemon down.
func safeScrape(ctx context.Context, s scrapers.Scraper, env *scrapers.Env) (res scrapers.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("scraper panicked: %v", r)
		}
	}()
	res, err = s.Scrape(ctx, env)
	if err != nil {
		return res, err
	}
	if len(res.Observations) == 0 && res.Rates == nil && len(res.TokenPrices) == 0 {
		return res, scrapers.ErrNothingParsed
	}
	return res, nil
}

// bigRun is the offers of a run after which memory is handed back at once.
const bigRun = 20_000

// bigBody is the bytes of a run's responses after which memory is handed
// back at once, whether the run succeeded or not (a Vast answer of 20k
// offers is about 23 MB).
var bigBody int64 = 16 << 20

// MinKeepRatio is the share of the last good run's offers a run must
// parse; fewer means a layout change, not a market that emptied.
const MinKeepRatio = 0.5

// prepare normalizes a run's result and reads what the gate judges it
// with (nil when nothing is to be judged: rates, token prices); it drops
// the observations once they are normalized (at 1M offers they are 408 MB
// the gate and the store need no more).
func (p *Pipeline) prepare(name string, res *scrapers.Result, at time.Time) (store.RunResult, *gateIn, error) {
	rr := store.RunResult{Rates: res.Rates}
	if res.Rates != nil {
		for _, cur := range []string{"USD", "CNY"} {
			if !res.Rates.Has(cur) {
				return rr, nil, fmt.Errorf("rates lack %s", cur)
			}
		}
		res.Rates.FetchedAt = at
	}
	if res.TokenPrices != nil {
		rr, err := p.checkTokens(name, res)
		return rr, nil, err
	}
	if len(res.Observations) == 0 {
		return rr, nil, nil
	}
	nr := p.catalog.Normalize(res.Observations, at)
	parsed := len(res.Observations)
	res.Observations = nil
	rr.Run.Invalid = nr.InvalidCount
	if len(nr.Offers) == 0 {
		return rr, nil, fmt.Errorf("no valid offer among %d parsed: %w", parsed, nr.Invalid)
	}
	if nr.Invalid != nil {
		p.log.Warn("observations rejected", "source", name, "invalid", nr.InvalidCount, "err", nr.Invalid)
	}
	health, err := p.store.Health()
	if err != nil {
		return rr, nil, err
	}
	h, ran := health[name]
	if ran && h.Offers >= 10 && float64(len(nr.Offers)) < MinKeepRatio*float64(h.Offers) {
		return rr, nil, fmt.Errorf("only %d offers parsed where the last good run had %d: layout change suspected, last good offers kept",
			len(nr.Offers), h.Offers)
	}
	in := gateIn{cfg: p.cfg.Ingest, source: name, now: at, health: h, ran: ran, prev: map[string]prevPrice{}, next: nr.Offers, filterNext: true}
	if pk := p.pack(name); pk != nil {
		in.prev = make(map[string]prevPrice, pk.Len())
		for o := range pk.Offers {
			in.prev[o.Key] = prevPrice{PricePerGPUHour: o.PricePerGPUHour, Currency: o.Currency, Card: o.Card, Mode: o.Mode}
		}
	}
	for _, n := range nr.Unknown {
		in.unknown += n
	}
	rr.Run.Unknown = nr.Unknown
	rr.Run.Offers = len(nr.Offers)
	return rr, &in, nil
}

// judgeRun judges a prepared run against the market of the current view
// (a first run of a round against the round's other first runs too) and
// fills in what the store records.
func (p *Pipeline) judgeRun(rr *store.RunResult, in *gateIn, peers *roundMarket) {
	if peers != nil && firstRun(in) {
		in.market = newMarket(in.source, peers.medians, peers.base)
	} else if v := p.View(); v != nil && v.Snapshot != nil {
		in.market = newMarket(in.source, v.Snapshot.SellerMedians(), v.Snapshot.BaseCurrency)
	}
	v := judge(*in)
	rr.Run.Held, rr.Run.Reason, rr.Run.HeldOffers = v.hold, v.reason, v.held
	if v.confirmed != "" {
		rr.Run.Reason = v.confirmed
	}
	rr.Offers, rr.Keep, rr.Pending, rr.HeldOffers, rr.Anchor = v.offers, v.keep, v.pending, v.heldState, v.anchor
	rr.Disputed = v.disputed
}

// Enabled lists the sources that run: enabled in config and not disabled
// for want of a key, sorted.
func (p *Pipeline) Enabled() []string {
	var out []string
	for _, n := range p.cfg.SourceNames() {
		if _, off := p.disabled[n]; p.cfg.Sources[n].Settings.Enabled && !off {
			out = append(out, n)
		}
	}
	return out
}

// BuildView builds a view as of now from the offers in memory and the
// store's profiles, rates and health, without swapping it in (the CLI uses
// it; Refresh swaps it). Only the sources whose offers changed since the
// current view, or whose offers' freshness did, are re-ranked.
func (p *Pipeline) BuildView() (*View, error) {
	profiles, err := p.rankProfiles()
	if err != nil {
		return nil, err
	}
	rates, err := p.store.Rates()
	if err != nil {
		return nil, err
	}
	health, err := p.store.Health()
	if err != nil {
		return nil, err
	}
	p.packMu.Lock()
	loaded := p.packs != nil
	p.packMu.Unlock()
	if !loaded {
		if err := p.loadPacks(); err != nil {
			return nil, err
		}
	}
	stale := map[string]time.Duration{}
	var live []*rank.Pack
	p.packMu.Lock()
	for name, pk := range p.packs {
		src, ok := p.cfg.Sources[name]
		if _, off := p.disabled[name]; !ok || !src.Settings.Enabled || off {
			continue // a disabled source's offers leave the ranking at once
		}
		stale[name] = src.Settings.StaleAfter
		live = append(live, pk)
	}
	p.packMu.Unlock()
	var prev *rank.Snapshot
	if v := p.View(); v != nil {
		prev = v.Snapshot
	}
	tokens, err := p.liveTokenPrices()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	snap := rank.BuildPacks(live, profiles, p.workloads, p.catalog, rank.Options{
		Now: p.now(), StaleAfter: stale, ReliabilityFloor: p.cfg.Ranking.ReliabilityFloor,
		Base: p.cfg.Ranking.BaseCurrency, Rates: rates, TokenPrices: tokens,
	}, prev)
	p.metrics.rankSeconds.Set(time.Since(start).Seconds())
	return &View{Snapshot: snap, Health: health}, nil
}

// Refresh rebuilds the ranking, swaps it in and evaluates the watches.
// Refreshes are serialized so alert decisions see snapshots in order.
func (p *Pipeline) Refresh(ctx context.Context) error {
	p.refresh.Lock()
	defer p.refresh.Unlock()
	v, err := p.swap()
	if err != nil {
		return err
	}
	defer p.releaseBigRun()
	if err := p.alerts.Evaluate(ctx, v.Snapshot, v.Health, p.Enabled()); err != nil {
		return fmt.Errorf("alerts: %w", err)
	}
	return nil
}
