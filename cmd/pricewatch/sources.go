package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/store"
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
	st, err := openStore(cfg.DB, true)
	switch {
	case errors.Is(err, store.ErrLocked):
		if *addr == "" {
			*addr = daemonAddr(cfg.DB, cfg.Server.Addr)
		}
		if list, err = askSources(ctx, *addr); err != nil {
			return fmt.Errorf("%s is held by a running daemon, and asking it at %s failed (pass its --addr HOST:PORT): %w", cfg.DB, *addr, err)
		}
	case err != nil:
		return err
	default:
		defer st.Close()
		p, err := pipeline.New(cfg, st, pipeline.Options{Registry: prometheus.NewRegistry(), Logger: newLogger(stderr, "error")})
		if err != nil {
			return err
		}
		health, err := st.Health()
		if err != nil {
			return err
		}
		list = pipeline.SourceStatuses(cfg, health, p.Disabled(), time.Now().UTC(), nil)
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

func askSources(ctx context.Context, addr string) ([]httpapi.SourceStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/sources", nil)
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", res.StatusCode)
	}
	var out struct{ Sources []httpapi.SourceStatus }
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("decode answer: %w", err)
	}
	return out.Sources, nil
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
