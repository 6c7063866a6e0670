package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/pipeline"
)

func runSources(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	args = subFirst(args, []string{"accept"}, func(fs *flag.FlagSet) {
		new(common).register(fs, true) // --fixtures too
		fs.String("addr", "", "")
		fs.String("level", "", "")
	})
	if len(args) > 0 && args[0] == "accept" {
		return runSourcesAccept(ctx, args[1:], stdout, stderr)
	}
	fs := newFlags("sources", stdout, stderr)
	var c common
	c.register(fs, false)
	asJSON := fs.Bool("json", false, "print the JSON the /v1/sources endpoint answers")
	addr := fs.String("addr", "", "when a running daemon holds the database, ask it at this address")
	check := fs.Bool("check", false, "run every scraper over the bundled fixtures (or --fixtures DIR) into a scratch database and print, per source, offers, the share mapped to a card, unknown names, reference rows and unavailable offers")
	fs.StringVar(&c.fixtures, "fixtures", "", "with --check: serve this folder (same layout as fixtures/) instead of the bundled fixtures")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("sources takes no arguments, got %q", fs.Args())}
	}
	if c.fixtures != "" && !*check {
		return usageError{"--fixtures goes with --check"}
	}
	if *check {
		return runSourceCheck(ctx, c, *asJSON, stdout, stderr)
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	var list []httpapi.SourceStatus
	err = readOrAsk(ctx, cfg, *addr, stderr, func(p *pipeline.Pipeline) error {
		// Next runs are known to a running daemon only.
		list = pipeline.SourceStatuses(cfg, p.View().Health, p.Disabled(), time.Now().UTC(), nil)
		return nil
	}, func(addr string) error {
		var out struct{ Sources []httpapi.SourceStatus }
		err := daemonJSON(ctx, http.MethodGet, addr, "/v1/sources", "", nil, &out)
		list = out.Sources
		return err
	})
	if err != nil {
		return err
	}
	if *asJSON {
		b, err := json.Marshal(map[string]any{"sources": list})
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	printSources(stdout, list)
	return nil
}

func printSources(w io.Writer, list []httpapi.SourceStatus) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SOURCE\tSTATUS\tLAST RUN\tLAST SUCCESS\tDURATION\tOFFERS\tUNKNOWN\tFAILURES\tNEXT RUN\tLAST ERROR / REASON")
	ago := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return time.Since(*t).Round(time.Second).String() + " ago"
	}
	for _, s := range list {
		next := "-"
		if s.NextRun != nil {
			next = s.NextRun.Local().Format("Jan 2 15:04")
		}
		note := s.LastError
		if s.Reason != "" {
			note = s.Reason
		}
		if len(note) > 80 {
			note = note[:79] + "…"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1fs\t%d\t%d\t%d\t%s\t%s\n", s.Name, s.Status, ago(s.LastRun), ago(s.LastSuccess),
			s.LastDurationSeconds, s.Offers, len(s.UnknownGPUs), s.ConsecutiveFailures, next, note)
	}
	tw.Flush()
	var unknown []string
	for _, s := range list {
		for name, n := range s.UnknownGPUs {
			unknown = append(unknown, fmt.Sprintf("%s: %s ×%d", s.Name, name, n))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		fmt.Fprintf(w, "\nUnknown GPU names (kept, not ranked; add an alias in normalize/data/aliases.csv if one is a known card):\n  %s\n",
			strings.Join(unknown, "\n  "))
	}
}

// runSourceCheck scrapes every source from fixtures into a scratch
// database and prints what each yields.
func runSourceCheck(ctx context.Context, c common, asJSON bool, stdout, stderr io.Writer) error {
	c.demo = c.fixtures == ""
	cfg, err := c.load()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "pricewatch-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg.DB = filepath.Join(dir, "check.db")
	sess, err := c.open(cfg, newLogger(stderr, "error"), prometheus.NewRegistry(), nil)
	if err != nil {
		return err
	}
	defer sess.Close()
	list, err := sess.pipe.Check(ctx, fixtures.Capture)
	if err != nil {
		return err
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Source < list[j].Source })
	if asJSON {
		b, err := json.Marshal(map[string]any{"sources": list})
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	printCheck(stdout, list)
	return nil
}

func printCheck(w io.Writer, list []pipeline.SourceCheck) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SOURCE\tFIXTURE\tOFFERS\tMAPPED\tUNKNOWN NAMES\tREFERENCE\tUNAVAILABLE\tNO UNIT\tERROR")
	for _, c := range list {
		unknown := 0
		for _, n := range c.Unknown {
			unknown += n
		}
		note := c.Error
		if c.Disabled != "" {
			note = "disabled: " + c.Disabled
		}
		mapped := "-" // a source with no offers (the exchange rates, token prices)
		if c.Offers > 0 {
			mapped = fmt.Sprintf("%.1f%%", 100*c.MappedShare)
		}
		if c.Tokens > 0 && note == "" {
			note = fmt.Sprintf("token prices, not GPUs: %d, %d to a model preset", c.Tokens, c.TokensMapped)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d offers, %d names\t%d\t%d\t%d\t%s\n", c.Source, c.Capture, c.Offers,
			mapped, unknown, len(c.Unknown), c.References, c.Unavailable, c.NoUnit, note)
	}
	tw.Flush()
	for _, c := range list {
		if len(c.Unknown) == 0 {
			continue
		}
		names := make([]string, 0, len(c.Unknown))
		for n, k := range c.Unknown {
			names = append(names, fmt.Sprintf("%s ×%d", n, k))
		}
		sort.Strings(names)
		fmt.Fprintf(w, "%s unknown: %s\n", c.Source, strings.Join(names, "; "))
	}
}
