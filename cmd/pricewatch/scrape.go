package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/store"
)

func runScrape(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("scrape", stdout, stderr)
	var c common
	c.register(fs, true)
	verbose := fs.Bool("v", false, "log each run and alert decision (level of the config's log_level)")
	addr := fs.String("addr", "", "when a running daemon holds the database, ask it at this address to run the sources")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	level := "warn"
	if *verbose {
		level = cfg.LogLevel
	}
	names := fs.Args()
	for _, n := range names {
		if _, ok := cfg.Sources[n]; !ok {
			return usageError{fmt.Sprintf("unknown source %q (known: %s)", n, strings.Join(cfg.SourceNames(), ", "))}
		}
	}
	prog := newProgress(stderr)
	sess, err := c.open(cfg, newLogger(stderr, level), prometheus.NewRegistry(), prog.update)
	if errors.Is(err, store.ErrLocked) {
		// A daemon holds the database: it runs the sources (its own
		// fixtures or endpoints, not this command's flags).
		if *addr == "" {
			if *addr, err = tokenDaemonAddr(ctx, cfg.DB); err != nil {
				return fmt.Errorf("%s is held by a running daemon: %w", cfg.DB, err)
			}
		}
		return scrapeViaDaemon(ctx, cfg.DB, *addr, cfg.Server.APIToken, names, stdout, stderr)
	}
	if err != nil {
		return err
	}
	defer sess.Close()
	p := sess.pipe
	prog.start()
	sums := p.RunAll(ctx, names)
	prog.close()
	failed, ran := 0, 0
	for _, s := range sums {
		fmt.Fprintln(stdout, summaryLine(s))
		if s.Disabled == "" {
			ran++
		}
		if s.Err != nil {
			failed++
		}
	}
	if err := p.Refresh(ctx); err != nil {
		fmt.Fprintln(stderr, "pricewatch: refresh:", err)
	}
	// Deliver what the run decided; what cannot go now stays in the
	// outbox for the daemon (or the next run) to retry.
	if err := p.Deliver(ctx); err != nil {
		fmt.Fprintln(stderr, "pricewatch: slack delivery:", err)
	}
	if ran > 0 && failed == ran {
		return fmt.Errorf("every source failed (%d)", failed)
	}
	return nil
}

func summaryLine(s pipeline.Summary) string {
	if s.Disabled != "" {
		return fmt.Sprintf("%-10s disabled  %s", s.Source, s.Disabled)
	}
	if s.Err != nil {
		return fmt.Sprintf("%-10s FAILED    %5.1fs  error: %v", s.Source, s.Duration.Seconds(), s.Err)
	}
	if s.Rates != nil {
		return fmt.Sprintf("%-10s ok        %5.1fs  rates of %s: %d currencies per %s", s.Source, s.Duration.Seconds(), s.Rates.Date, len(s.Rates.Rates), s.Rates.Base)
	}
	if s.Held != "" {
		return fmt.Sprintf("%-10s %-9s %5.1fs  %6d offers not applied: %s", s.Source, strings.ToUpper(string(s.Held)), s.Duration.Seconds(), s.Offers, s.Reason)
	}
	line := fmt.Sprintf("%-10s ok        %5.1fs  %6d offers  %4d changes  %2d unknown GPUs", s.Source, s.Duration.Seconds(), s.Offers, s.Changes, len(s.Unknown))
	if s.Invalid > 0 {
		line += fmt.Sprintf("  %d invalid skipped", s.Invalid)
	}
	if s.HeldOffers > 0 {
		line += fmt.Sprintf("  %d outliers held back", s.HeldOffers)
	}
	if s.Reason != "" {
		line += "  (" + s.Reason + ")"
	}
	if len(s.Unknown) > 0 {
		names := make([]string, 0, len(s.Unknown))
		for n := range s.Unknown {
			names = append(names, n)
		}
		sort.Strings(names)
		if len(names) > 6 {
			names = append(names[:6], fmt.Sprintf("… %d more", len(names)-6))
		}
		line += " (" + strings.Join(names, ", ") + ")"
	}
	return line
}

// scrapeViaDaemon asks the daemon holding db to run the sources (default:
// every one it does not list as disabled) with POST /v1/scrape/{source},
// and prints a line per source. A run the daemon did not finish within its
// wait goes on there ("running").
func scrapeViaDaemon(ctx context.Context, db, addr, token string, names []string, stdout, stderr io.Writer) error {
	if len(names) == 0 {
		var out struct{ Sources []httpapi.SourceStatus }
		if err := daemonJSON(ctx, http.MethodGet, addr, "/v1/sources", "", nil, &out); err != nil {
			return daemonFailed(db, addr, err)
		}
		for _, s := range out.Sources {
			if s.Status != httpapi.StatusDisabled {
				names = append(names, s.Name)
			}
		}
	}
	fmt.Fprintf(stderr, "pricewatch: %s is held by the daemon at %s; it runs the sources\n", db, addr)
	results := make([]httpapi.ScrapeResult, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = daemonJSON(ctx, http.MethodPost, addr, "/v1/scrape/"+n, token, nil, &results[i])
		}()
	}
	wg.Wait()
	failed := 0
	for i, n := range names {
		r := results[i]
		switch {
		case errs[i] != nil:
			failed++
			fmt.Fprintf(stdout, "%-10s FAILED    the daemon refused: %v\n", n, errs[i])
		case r.Status == "running":
			fmt.Fprintf(stdout, "%-10s running   in the daemon (see pricewatch sources)\n", n)
		default:
			sum := pipeline.Summary{Source: n, Offers: r.Offers, Changes: r.Changes, Unknown: r.UnknownGPUs,
				Duration: time.Duration(r.DurationSeconds * float64(time.Second)), Reason: r.Reason}
			switch r.Status {
			case "failed":
				failed++
				sum.Err = errors.New(r.Error)
			case "disabled":
				sum.Disabled = r.Reason
			case "held":
				sum.Held = "held"
			}
			fmt.Fprintln(stdout, summaryLine(sum))
		}
	}
	if len(names) > 0 && failed == len(names) {
		return fmt.Errorf("every source failed (%d)", failed)
	}
	return nil
}
