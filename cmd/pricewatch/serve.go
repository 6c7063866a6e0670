package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/httpapi"
)

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fs := newFlags("serve", stdout, stderr)
	var c common
	c.register(fs, true)
	addr := fs.String("addr", "", "HTTP listen address (default: config server.addr, 127.0.0.1:8080)")
	noRecord := fs.Bool("no-record", false, "start without the daemon record <db>.addr (the CLI then finds the daemon only with --addr, which proves the API token); by default serve refuses to start when it cannot write the record safely")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("serve takes no arguments, got %q", fs.Args())}
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	if *addr != "" {
		cfg.Server.Addr = *addr
	}
	log := newLogger(stderr, cfg.LogLevel)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Listen before reading the stored offers (at 100k they take a few
	// hundred milliseconds): until the first ranking exists the API answers
	// 503 with the reason, and /healthz answers at once.
	sess, err := c.openUninitialized(cfg, log, reg, nil)
	if err != nil {
		return err
	}
	// The database closes last, after cron and the HTTP server stopped.
	defer sess.Close()
	p := sess.pipe
	backend := newDaemonBackend(ctx, p)
	api, err := httpapi.New(backend, reg, reg, log.With("component", "http"))
	if err != nil {
		return err
	}
	if c.demo || c.fixtures != "" {
		api.SetDemo(httpapi.DemoFixtures())
	}
	ln, err := net.Listen("tcp", cfg.Server.Addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Server.Addr, err)
	}
	srv := &http.Server{
		Handler:           api,
		ReadHeaderTimeout: cfg.Server.ReadHeaderTimeout,
		ReadTimeout:       cfg.Server.ReadTimeout,
		WriteTimeout:      cfg.Server.WriteTimeout,
		IdleTimeout:       cfg.Server.IdleTimeout,
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	// The CLI cannot open a database the daemon holds; it finds the daemon
	// through this file instead (removed on shutdown), and sends a token
	// only once the daemon proved it holds the file's secret.
	addrFile := cfg.DB + ".addr"
	if *noRecord {
		log.Warn("not recording the listen address (--no-record): the CLI finds this daemon only with --addr", "file", addrFile)
	} else if rec, err := newDaemonRecord(ln.Addr()); err != nil {
		srv.Close()
		return fmt.Errorf("cannot record the listen address in %s (%v): the CLI could not prove which daemon to send the API token to; fix it, or start with --no-record", addrFile, err)
	} else if gid, err := resolveGroup(cfg.Server.RecordGroup); err != nil {
		srv.Close()
		return fmt.Errorf("%w: the record cannot be shared with the operators' group; create the group, or drop the key", err)
	} else if written, err := writeDaemonRecordFor(addrFile, rec, gid); err != nil {
		srv.Close()
		return fmt.Errorf("cannot record the listen address in %s: %w; fix it, or start with --no-record", addrFile, err)
	} else {
		secret, _ := hex.DecodeString(rec.Secret)
		api.SetDaemonProof(secret, rec.Addr)
		defer removeDaemonRecord(addrFile, written)
	}
	log.Info("pricewatch serving", "addr", base, "db", cfg.DB, "sources", len(p.Enabled()), "slack", slackMode(cfg))
	for name, reason := range p.Disabled() {
		log.Warn("source disabled", "source", name, "reason", reason)
	}
	fmt.Fprintf(stdout, "pricewatch is serving on %s\n  %s/ — the dashboard\n  %s/v1/best?workload=lora-7b\n  %s/v1/best?workload=serve-7b&currency=CNY\n  %s/v1/history?card=RTX-4090&workload=lora-7b\n  %s/v1/offers?card=H100-80GB-SXM&limit=5\n  %s/v1/sources\n  %s/openapi.yaml\n  %s/metrics\n  database %s\n",
		base, base, base, base, base, base, base, base, base, cfg.DB)

	// The outbox sender delivers Slack messages in order, with retries.
	senderDone := make(chan struct{})
	go func() {
		defer close(senderDone)
		p.RunSender(ctx)
	}()

	// The stored ranking, then the first scrape at once, then cron.
	firstDone := make(chan struct{})
	initErr := make(chan error, 1)
	go func() {
		defer close(firstDone)
		defer backend.firstRoundDone()
		if err := p.Init(); err != nil {
			initErr <- err
			return
		}
		start := time.Now()
		sums := p.RunAll(ctx, nil)
		if err := p.Refresh(ctx); err != nil {
			log.Error("refresh failed", "err", err)
		}
		failed := 0
		for _, sum := range sums {
			if sum.Err != nil {
				failed++
			}
		}
		// One line says the first round is over (its runs, the ranking and
		// the memory they used handed back), for operators and for
		// scripts/bench-scale, which measures after it.
		log.Info("first round done", "sources", len(sums), "failed", failed, "duration", time.Since(start).Round(time.Millisecond))
		backend.firstRoundDone()
		if ctx.Err() == nil {
			if err := p.Start(ctx); err != nil {
				log.Error("scheduling failed", "err", err)
			}
		}
	}()

	select {
	case <-ctx.Done():
	case err := <-serveErr:
		return fmt.Errorf("http server: %w", err)
	case err := <-initErr:
		cancel()
		<-senderDone
		srv.Close()
		return fmt.Errorf("read the database: %w", err)
	}
	log.Info("shutting down")
	// Stop scheduling and wait for running scrapes, then the server, then
	// (deferred) the database.
	<-firstDone
	p.Stop(30 * time.Second)
	backend.Wait()
	<-senderDone
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("http shutdown", "err", err)
	}
	log.Info("stopped")
	return nil
}

func notifier(cfg *config.Config) alerts.Notifier {
	return alerts.NewSlack(alerts.SlackConfig{
		Token: cfg.Slack.Token, Channel: cfg.Slack.Channel, WebhookURL: cfg.Slack.WebhookURL, APIURL: cfg.Slack.APIURL,
	})
}

// slackMode says how alerts are delivered, never the secret itself.
func slackMode(cfg *config.Config) string {
	switch {
	case cfg.Slack.Token != "":
		return "bot token, channel " + cfg.Slack.Channel
	case cfg.Slack.WebhookURL != "":
		return "incoming webhook"
	}
	return "off (alerts are logged)"
}
