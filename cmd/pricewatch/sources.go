package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/pipeline"
)

func runSources(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sources", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs, false)
	asJSON := fs.Bool("json", false, "print the JSON the /v1/sources endpoint answers")
	addr := fs.String("addr", "", "when a running daemon holds the database, ask it at this address")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("sources takes no arguments, got %q", fs.Args())}
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	var list []httpapi.SourceStatus
	err = readOrAsk(cfg, *addr, stderr, func(p *pipeline.Pipeline) error {
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
