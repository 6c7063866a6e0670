package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pricewatch/pricewatch/pipeline"
)

func runScrape(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("scrape", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs, true)
	verbose := fs.Bool("v", false, "log each run and alert decision (level of the config's log_level)")
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
