package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"
)

// Start schedules every enabled source on its cron spec. Jobs of one source
// never overlap (a slow run makes the next one skip) and a panicking job is
// recovered. ctx is the daemon's lifetime; jobs run under it.
func (p *Pipeline) Start(ctx context.Context) error {
	logger := cronLogger{p.log.With("component", "cron")}
	p.ctx = ctx
	p.cron = cron.New(cron.WithLogger(logger), cron.WithChain(cron.Recover(logger)))
	for _, name := range p.Enabled() {
		spec := p.cfg.Sources[name].Settings.Schedule
		job := cron.NewChain(cron.SkipIfStillRunning(logger)).Then(cron.FuncJob(func() {
			p.RunSource(p.ctx, name)
			if err := p.Refresh(p.ctx); err != nil {
				p.log.Error("refresh failed", "source", name, "err", err)
			}
		}))
		id, err := p.cron.AddJob(spec, job)
		if err != nil {
			return fmt.Errorf("schedule %s (%q): %w", name, spec, err)
		}
		p.entries[name] = id
	}
	p.cron.Start()
	return nil
}

// Stop stops scheduling and waits (at most timeout) for running jobs.
func (p *Pipeline) Stop(timeout time.Duration) {
	if p.cron == nil {
		return
	}
	done := p.cron.Stop()
	select {
	case <-done.Done():
	case <-time.After(timeout):
		p.log.Warn("scrape jobs still running at shutdown", "waited", timeout)
	}
}

// NextRun is when a source runs next (zero if not scheduled).
func (p *Pipeline) NextRun(name string) time.Time {
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
