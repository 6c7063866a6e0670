package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/pricewatch/pricewatch/store"
)

// Start schedules every enabled source on its cron spec. Jobs of one source
// never overlap (a slow run makes the next one skip) and a panicking job is
// recovered. ctx is the daemon's lifetime; jobs run under it.
func (p *Pipeline) Start(ctx context.Context) error {
	logger := cronLogger{p.log.With("component", "cron")}
	c := cron.New(cron.WithLogger(logger), cron.WithChain(cron.Recover(logger)))
	entries := map[string]cron.EntryID{}
	for _, name := range p.Enabled() {
		spec := p.cfg.Sources[name].Settings.Schedule
		job := cron.NewChain(cron.SkipIfStillRunning(logger)).Then(cron.FuncJob(func() {
			p.RunSource(ctx, name)
			if err := p.Refresh(ctx); err != nil {
				p.log.Error("refresh failed", "source", name, "err", err)
			}
		}))
		id, err := c.AddJob(spec, job)
		if err != nil {
			return fmt.Errorf("schedule %s (%q): %w", name, spec, err)
		}
		entries[name] = id
	}
	if p.cfg.Digest.Enabled {
		// The digest goes out even when nothing changed: a heartbeat.
		if _, err := c.AddFunc(p.cfg.Digest.Schedule, func() {
			if err := p.SendDigest(); err != nil {
				p.log.Error("digest failed", "err", err)
			}
		}); err != nil {
			return fmt.Errorf("schedule digest (%q): %w", p.cfg.Digest.Schedule, err)
		}
	}
	if spec := p.cfg.History.CompactSchedule; spec != "" {
		if _, err := c.AddFunc(spec, func() {
			if _, err := p.Compact(); err != nil {
				p.log.Error("history compaction failed", "err", err)
			}
		}); err != nil {
			return fmt.Errorf("schedule history compaction (%q): %w", spec, err)
		}
	}
	if spec := p.cfg.History.PageCheckSchedule; spec != "" {
		if _, err := c.AddFunc(spec, func() { p.CheckPages() }); err != nil {
			return fmt.Errorf("schedule the database page check (%q): %w", spec, err)
		}
	}
	p.sched.Lock()
	p.cron, p.entries = c, entries
	p.sched.Unlock()
	c.Start()
	return nil
}

// Compact rolls the raw history that left the configured window into
// daily rows (store.Compact).
func (p *Pipeline) Compact() (store.CompactStats, error) {
	start := time.Now()
	st, err := p.store.Compact(p.now(), p.cfg.History.RawWindow)
	if err == nil && st.RawRows > 0 {
		p.log.Info("history compacted", "cutoff", st.Cutoff, "offers", st.Offers, "raw_rows", st.RawRows, "days", st.Days,
			"duration", time.Since(start))
	}
	return st, err
}

// ErrPageCheckBusy: a page check is already running.
var ErrPageCheckBusy = errors.New("a database page check is in progress")

// CheckPages checks every page of the database file (the schedule's job,
// history.page_check_schedule), one check at a time, logs what it found
// and keeps it for /metrics (pricewatch_db_page_check_*). Damage is
// logged as an error naming the way out; the daemon goes on serving what
// still reads.
func (p *Pipeline) CheckPages() (store.PageCheck, error) {
	if !p.pageCheckMu.TryLock() {
		return store.PageCheck{}, ErrPageCheckBusy
	}
	defer p.pageCheckMu.Unlock()
	pc, err := p.store.CheckPagesLive(p.now())
	switch {
	case errors.Is(err, store.ErrDamaged):
		p.lastPageCheck.Store(&pc)
		p.log.Error("database page check found damage", "err", err, "problems", pc.Problems, "bytes", pc.Bytes, "duration", pc.Duration)
	case err != nil:
		p.log.Error("database page check failed", "err", err)
	default:
		p.lastPageCheck.Store(&pc)
		p.log.Info("database page check: every page sound", "bytes", pc.Bytes, "duration", pc.Duration)
	}
	return pc, err
}

// Stop stops scheduling and waits (at most timeout) for running jobs.
func (p *Pipeline) Stop(timeout time.Duration) {
	p.sched.RLock()
	c := p.cron
	p.sched.RUnlock()
	if c == nil {
		return
	}
	done := c.Stop()
	select {
	case <-done.Done():
	case <-time.After(timeout):
		p.log.Warn("scrape jobs still running at shutdown", "waited", timeout)
	}
}

// NextRun is when a source runs next (zero if not scheduled).
func (p *Pipeline) NextRun(name string) time.Time {
	p.sched.RLock()
	defer p.sched.RUnlock()
	if p.cron == nil {
		return time.Time{}
	}
	id, ok := p.entries[name]
	if !ok {
		return time.Time{}
	}
	return p.cron.Entry(id).Next
}

// cronLogger routes cron's logging through slog instead of stdout.
type cronLogger struct{ l *slog.Logger }

func (c cronLogger) Info(msg string, kv ...any) { c.l.Debug(msg, kv...) }
func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.l.Error(msg, append(kv, "err", err)...)
}
