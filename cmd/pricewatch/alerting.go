package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/store"
)

// withPipeline opens the store (read-only unless write) and builds a
// pipeline over it. ErrLocked means a daemon holds the database. Such a
// pipeline never scrapes, so a source whose key this shell lacks is not
// "disabled" here: its stored offers are read as the daemon that scrapes
// it (with the key) reads them.
func withPipeline(cfg *config.Config, write bool, stderr io.Writer, fn func(*pipeline.Pipeline) error) error {
	st, err := openStore(cfg.DB, !write)
	if err != nil {
		return err
	}
	defer st.Close()
	p, err := pipeline.New(cfg, st, pipeline.Options{Registry: prometheus.NewRegistry(), Logger: newLogger(stderr, "warn"),
		Notifier: notifier(cfg), Getenv: readOnlyKeys})
	if err != nil {
		return err
	}
	if err := p.Rebuild(); err != nil {
		return err
	}
	return fn(p)
}

// readOnlyKeys stands in for every source key in a pipeline that only
// reads: nothing is fetched, so no key is needed or sent.
func readOnlyKeys(string) string { return "(read only: no key needed)" }

// readOrAsk runs local over a read-only pipeline on the store or, when a
// running daemon holds the database, remote against the daemon's address
// (--addr, else the one it recorded, else server.addr).
func readOrAsk(ctx context.Context, cfg *config.Config, addr string, stderr io.Writer, local func(*pipeline.Pipeline) error, remote func(addr string) error) error {
	err := withPipeline(cfg, false, stderr, local)
	if !errors.Is(err, store.ErrLocked) {
		return err
	}
	if addr == "" {
		if addr, err = daemonAddr(ctx, cfg.DB, cfg.Server.Addr); err != nil {
			return fmt.Errorf("%s is held by a running daemon: %w", cfg.DB, err)
		}
	}
	if err := remote(addr); err != nil {
		return daemonFailed(cfg.DB, addr, err)
	}
	return nil
}

// daemonError is a daemon's refusal: its HTTP status and the message of
// its JSON error body.
type daemonError struct {
	status int
	msg    string
}

func (e *daemonError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.msg) }

// daemonFailed words an error from asking the daemon that holds db at
// addr. The daemon's own answer about the input (a bad request, no such
// item: an input error; a conflict) is the error, worded and exiting as
// without a daemon (a usage error stays one); a refusal of its own (token, failure) names the
// daemon; a daemon that cannot be reached is said to be so.
func daemonFailed(db, addr string, err error) error {
	var ue usageError
	var de *daemonError
	var conn *url.Error
	switch {
	case errors.As(err, &ue):
		return err
	case errors.As(err, &de) && (de.status == http.StatusBadRequest || de.status == http.StatusNotFound):
		return &inputError{errors.New(de.msg)}
	case errors.As(err, &de) && de.status == http.StatusConflict:
		return errors.New(de.msg)
	case errors.As(err, &de):
		return fmt.Errorf("the daemon holding %s at %s answered %w", db, addr, err)
	case errors.As(err, &conn):
		return fmt.Errorf("%s is held by a running daemon, which could not be reached at %s (pass its --addr HOST:PORT): %w", db, addr, err)
	}
	return fmt.Errorf("%s is held by a running daemon; asking it at %s: %w", db, addr, err)
}

func runDigest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("digest", stdout, stderr)
	var c common
	c.register(fs, false)
	send := fs.Bool("send", false, "queue the digest for Slack and deliver it now")
	asJSON := fs.Bool("json", false, "print the Slack messages (Block Kit) as JSON")
	addr := fs.String("addr", "", "when a running daemon holds the database, ask it at this address (--send needs PRICEWATCH_API_TOKEN)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("digest takes no arguments, got %q", fs.Args())}
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	// --send opens the database for writing, which would create a missing
	// one only to send a digest of nothing.
	if _, err := os.Stat(cfg.DB); isNotExist(err) {
		return noDatabase(cfg.DB)
	}
	err = withPipeline(cfg, *send, stderr, func(p *pipeline.Pipeline) error {
		if c.demo {
			p.MarkDemo()
		}
		msgs, err := p.Digest()
		if err != nil {
			return err
		}
		if err := printDigest(stdout, msgs, *asJSON); err != nil {
			return err
		}
		if !*send {
			return nil
		}
		for _, m := range msgs {
			if err := p.Enqueue("digest", m); err != nil {
				return err
			}
		}
		if err := p.Deliver(ctx); err != nil {
			return err
		}
		outcome, err := digestOutcome(p.Store(), len(msgs))
		if err != nil {
			return err
		}
		fmt.Fprintln(stderr, outcome)
		return nil
	})
	if errors.Is(err, store.ErrLocked) {
		if *addr == "" {
			find := func() (string, error) { return daemonAddr(ctx, cfg.DB, cfg.Server.Addr) }
			if *send { // sends the API token: only to a proven daemon
				find = func() (string, error) { return tokenDaemonAddr(ctx, cfg.DB) }
			}
			if *addr, err = find(); err != nil {
				return fmt.Errorf("%s is held by a running daemon: %w", cfg.DB, err)
			}
		}
		if !*send {
			// GET /v1/digest: the preview, with Block Kit messages as JSON.
			var p struct {
				Text     string            `json:"text"`
				Messages []json.RawMessage `json:"messages"`
			}
			if err := daemonJSON(ctx, http.MethodGet, *addr, "/v1/digest", "", nil, &p); err != nil {
				return daemonFailed(cfg.DB, *addr, err)
			}
			if *asJSON {
				b, err := json.MarshalIndent(p.Messages, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(stdout, string(b))
				return nil
			}
			fmt.Fprintln(stdout, stripPart(p.Text))
			return nil
		}
		var out struct{ Queued int }
		if err := daemonJSON(ctx, http.MethodPost, *addr, "/v1/digest", cfg.Server.APIToken, nil, &out); err != nil {
			return daemonFailed(cfg.DB, *addr, err)
		}
		fmt.Fprintf(stdout, "the daemon queued the digest: %d message(s)\n", out.Queued)
		return nil
	}
	return err
}

func printDigest(w io.Writer, msgs []alerts.Message, asJSON bool) error {
	if asJSON {
		b, err := json.MarshalIndent(msgs, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(w, string(b))
		return nil
	}
	if len(msgs) > 0 {
		// Every part repeats the fallback text; print it once.
		fmt.Fprintln(w, stripPart(msgs[0].Text))
	}
	return nil
}

func stripPart(s string) string {
	if len(s) > 0 && s[0] == '(' {
		if i := bytes.IndexByte([]byte(s), ' '); i > 0 {
			return s[i+1:]
		}
	}
	return s
}

// daemonJSON calls a running daemon's API with the bearer token.
func daemonJSON(ctx context.Context, method, addr, path, token string, body, out any) error {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return err
		}
	}
	return daemonCall(ctx, method, addr, path, token, "application/json", b, out)
}

// daemonCall sends body (none when nil) to the daemon and decodes its JSON
// answer into out (unless nil); a non-200 answer is an error with the
// daemon's message.
func daemonCall(ctx context.Context, method, addr, path, token, contentType string, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		// The token goes only to an address that proved to be the daemon.
		if err := proveToken(ctx, addr, token); err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		var e struct{ Error string }
		_ = json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&e)
		return &daemonError{res.StatusCode, e.Error}
	}
	if out == nil {
		return nil
	}
	limit := maxDaemonAnswer
	if strings.HasPrefix(path, "/v1/export") {
		limit = maxExportAnswer // every offer, as rows
	}
	return json.NewDecoder(capped(res.Body, limit)).Decode(out)
}

// maxDaemonAnswer caps a JSON answer of the daemon (a 100k-offer /v1/best
// or plan is a few MB), maxExportAnswer its export (100k offers: about 40
// MB of CSV, 60 MB of JSON rows). Variables for the tests.
var (
	maxDaemonAnswer int64 = 64 << 20
	maxExportAnswer int64 = 512 << 20
)

func runSilence(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	args = subFirst(args, []string{"add", "list", "remove"}, func(fs *flag.FlagSet) {
		new(common).register(fs, false)
		for _, f := range []string{"watch", "for", "reason", "addr"} {
			fs.String(f, "", "")
		}
	})
	if len(args) > 0 && wantsHelp(args[:1]) {
		groupHelp(stdout, "silence", "add", "list", "remove")
		return nil
	}
	if len(args) == 0 || (args[0] != "add" && args[0] != "list" && args[0] != "remove") {
		return usageError{"usage: pricewatch silence add --watch W --for 6h --reason TEXT | list | remove ID"}
	}
	sub := args[0]
	fs := newFlags("silence "+sub, stdout, stderr)
	var c common
	c.register(fs, false)
	watch := fs.String("watch", "", "watch name, or * for every watch (add)")
	dur := fs.String("for", "", "how long, e.g. 6h or 90m (add)")
	reason := fs.String("reason", "", "why (add)")
	addr := fs.String("addr", "", "when a running daemon holds the database, ask it at this address")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	var id uint64
	if sub != "remove" && fs.NArg() > 0 {
		return usageError{fmt.Sprintf("silence %s takes no arguments, got %q", sub, fs.Args())}
	}
	if sub == "remove" {
		if fs.NArg() != 1 {
			return usageError{"usage: pricewatch silence remove ID"}
		}
		if id, err = strconv.ParseUint(fs.Arg(0), 10, 64); err != nil {
			return usageError{fmt.Sprintf("not a silence id: %q", fs.Arg(0))}
		}
	}
	body := httpapi.SilenceBody{Watch: *watch, For: *dur, Reason: *reason, CreatedBy: "cli"}
	if sub == "add" {
		// A bad silence is refused before the store is opened read-write,
		// which would create the database file.
		ws, err := cfg.EffectiveWatches()
		if err != nil {
			return err
		}
		names := make([]string, len(ws))
		for i, w := range ws {
			names[i] = w.Name
		}
		if _, err := httpapi.NewSilence(body, names, time.Now().UTC()); err != nil {
			return usageError{err.Error()}
		}
	}
	var list []store.Silence
	err = withPipeline(cfg, sub != "list", stderr, func(p *pipeline.Pipeline) error {
		switch sub {
		case "add":
			s, err := httpapi.NewSilence(body, p.WatchNames(), time.Now().UTC())
			if err != nil {
				return usageError{err.Error()}
			}
			if s.ID, err = p.AddSilence(s); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "silence %d: %s until %s (%s)\n", s.ID, s.Watch, s.Ends.Format(time.RFC3339), s.Reason)
		case "remove":
			if err := p.RemoveSilence(id); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "silence %d removed\n", id)
		case "list":
			var err error
			list, err = p.Silences()
			return err
		}
		return nil
	})
	if errors.Is(err, store.ErrLocked) {
		if *addr == "" {
			if *addr, err = silenceDaemon(ctx, cfg.DB, cfg.Server.Addr, sub); err != nil {
				return fmt.Errorf("%s is held by a running daemon: %w", cfg.DB, err)
			}
		}
		switch sub {
		case "add":
			var s store.Silence
			if err = daemonJSON(ctx, http.MethodPost, *addr, "/v1/silences", cfg.Server.APIToken, body, &s); err == nil {
				fmt.Fprintf(stdout, "silence %d: %s until %s (%s)\n", s.ID, s.Watch, s.Ends.Format(time.RFC3339), s.Reason)
			}
		case "remove":
			if err = daemonJSON(ctx, http.MethodDelete, *addr, "/v1/silences/"+strconv.FormatUint(id, 10), cfg.Server.APIToken, nil, nil); err == nil {
				fmt.Fprintf(stdout, "silence %d removed\n", id)
			}
		case "list":
			var out struct{ Silences []store.Silence }
			err = daemonJSON(ctx, http.MethodGet, *addr, "/v1/silences", "", nil, &out)
			list = out.Silences
		}
		if err != nil {
			return daemonFailed(cfg.DB, *addr, err)
		}
	} else if err != nil {
		return err
	}
	if sub == "list" {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tWATCH\tSTARTS\tENDS\tACTIVE\tREASON")
		now := time.Now()
		for _, s := range list {
			active := !now.Before(s.Starts) && now.Before(s.Ends)
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%v\t%s\n", s.ID, s.Watch, s.Starts.Format(time.RFC3339), s.Ends.Format(time.RFC3339), active, s.Reason)
		}
		tw.Flush()
	}
	return nil
}

// silenceDaemon finds the daemon for a silence command: listing reads
// (the recorded daemon, else server.addr); add and remove send the API
// token, to a proven daemon only.
func silenceDaemon(ctx context.Context, db, fallback, sub string) (string, error) {
	if sub == "list" {
		return daemonAddr(ctx, db, fallback)
	}
	return tokenDaemonAddr(ctx, db)
}
