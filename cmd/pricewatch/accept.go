package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/store"
)

// runSourcesAccept accepts the level a held source shows (a whole-source
// price move or a layout loss the gate holds for an operator) and runs the
// source: the run showing that level is applied and anchors the source.
// While a daemon holds the database, the daemon does it (POST
// /v1/sources/{source}/accept, with PRICEWATCH_API_TOKEN).
func runSourcesAccept(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sources accept", stdout, stderr)
	var c common
	c.register(fs, true)
	addr := fs.String("addr", "", "when a running daemon holds the database, ask it at this address")
	level := fs.String("level", "", "the held level you accept, as pricewatch sources and the hold message show it (factor:x4.02/ondemand), or the level the market disputes (market:x3.93); a level that moved since is refused")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageError{"sources accept needs the held SOURCE whose new level you accept (`pricewatch sources` shows which are held)"}
	}
	if len(pos) != 1 {
		return usageError{fmt.Sprintf("sources accept takes one source name, got %q", pos)}
	}
	name := pos[0]
	cfg, err := c.load()
	if err != nil {
		return err
	}
	if _, ok := cfg.Sources[name]; !ok {
		return usageError{fmt.Sprintf("unknown source %q (known: %s)", name, strings.Join(cfg.SourceNames(), ", "))}
	}
	sess, err := c.open(cfg, newLogger(stderr, "warn"), prometheus.NewRegistry(), nil)
	if errors.Is(err, store.ErrLocked) {
		if *addr == "" {
			if *addr, err = tokenDaemonAddr(ctx, cfg.DB); err != nil {
				return err
			}
		}
		var res httpapi.AcceptResult
		q := ""
		if *level != "" {
			q = "?level=" + url.QueryEscape(*level)
		}
		if err := daemonJSON(ctx, http.MethodPost, *addr, "/v1/sources/"+url.PathEscape(name)+"/accept"+q, cfg.Server.APIToken, nil, &res); err != nil {
			return daemonFailed(cfg.DB, *addr, err)
		}
		printAccepted(stdout, name, res.Accepted, res.Run.Status, res.Run.Reason+res.Run.Error)
		return nil
	}
	if err != nil {
		return err
	}
	defer sess.Close()
	lv, sum, err := sess.pipe.Accept(ctx, name, "cli", *level)
	switch {
	case errors.Is(err, store.ErrNothingToAccept):
		return fmt.Errorf("%s: nothing to accept: no held level waits for an operator (see pricewatch sources)", name)
	case errors.Is(err, store.ErrLevelRequired):
		return usageError{fmt.Sprintf("%s holds %s: accept it by name, pricewatch sources accept %s --level %s", name, lv.Label(), name, lv.Label())}
	case errors.Is(err, store.ErrLevelChanged), errors.Is(err, store.ErrAlreadyAccepted):
		return err
	}
	if err != nil && lv.AcceptedBy == "" {
		return err
	}
	status := httpapi.NewScrapeResult(sum)
	printAccepted(stdout, name, lv, status.Status, status.Reason+status.Error)
	if err := sess.pipe.Deliver(ctx); err != nil {
		fmt.Fprintln(stderr, "pricewatch: slack delivery:", err)
	}
	return nil
}

func printAccepted(w io.Writer, name string, lv store.Level, status, note string) {
	what := lv.Label()
	fmt.Fprintf(w, "accepted %s's held level: %s, shown by %d run(s) in a row\n", name, what, lv.Runs)
	fmt.Fprintf(w, "the run it started: %s", status)
	if note != "" {
		fmt.Fprintf(w, " — %s", note)
	}
	fmt.Fprintln(w)
}
