package main

import (
	"context"
	"sync"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/pipeline"
)

// daemonBackend is what the HTTP API of serve reads: the pipeline, plus
// scrapes on request (POST /v1/scrape/{source}) run in the daemon's
// context and awaited at shutdown.
type daemonBackend struct {
	*pipeline.Pipeline
	ctx     context.Context
	wg      sync.WaitGroup
	mu      sync.Mutex
	running map[string]bool
	// first is closed when the start-up round of every source is done: a
	// run on request waits for it, so one source never runs twice at once.
	first     chan struct{}
	firstOnce sync.Once
}

var _ httpapi.ScrapeRunner = (*daemonBackend)(nil)

func newDaemonBackend(ctx context.Context, p *pipeline.Pipeline) *daemonBackend {
	return &daemonBackend{Pipeline: p, ctx: ctx, running: map[string]bool{}, first: make(chan struct{})}
}

// firstRoundDone releases the runs requested during the start-up round.
func (d *daemonBackend) firstRoundDone() { d.firstOnce.Do(func() { close(d.first) }) }

// Scrape runs one source now and then refreshes the ranking (and the
// alerts), as a scheduled run does; one run per source at a time.
func (d *daemonBackend) Scrape(source string) (<-chan pipeline.Summary, error) {
	if reason, off := d.Disabled()[source]; off {
		return nil, pricewatch.Errorf(pricewatch.EInvalid, "source %s is disabled: %s", source, reason)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx.Err() != nil {
		return nil, pricewatch.Errorf(pricewatch.EUnavailable, "the daemon is shutting down")
	}
	if d.running[source] {
		return nil, pricewatch.Errorf(httpapi.EConflict, "a run of %s requested earlier is still going", source)
	}
	d.running[source] = true
	done := make(chan pipeline.Summary, 1)
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		var sum pipeline.Summary
		select {
		case <-d.first:
			sum = d.RunSource(d.ctx, source)
		case <-d.ctx.Done():
			sum = pipeline.Summary{Source: source, Err: d.ctx.Err()}
		}
		if d.ctx.Err() == nil { // no refresh while shutting down
			if err := d.Refresh(d.ctx); err != nil && sum.Err == nil {
				sum.Err = err
			}
		}
		d.mu.Lock()
		delete(d.running, source)
		d.mu.Unlock()
		done <- sum
	}()
	return done, nil
}

// Wait waits for the scrapes started on request.
func (d *daemonBackend) Wait() { d.wg.Wait() }
