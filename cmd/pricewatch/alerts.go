package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/store"
)

// runAlerts lists the outbox, newest first: from the store, or from the
// running daemon's GET /v1/alerts while it holds the database.
func runAlerts(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("alerts", stdout, stderr)
	var c common
	c.register(fs, false)
	status := fs.String("status", "", "only messages of this status: pending, sent, logged (no Slack configured) or failed")
	limit := fs.String("limit", "", "most messages listed, newest first (1..1000, default 50)")
	asJSON := fs.Bool("json", false, "print the JSON the /v1/alerts endpoint answers")
	addr := fs.String("addr", "", "when a running daemon holds the database, ask it at this address (default: config server.addr)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("alerts takes no arguments, got %q", fs.Args())}
	}
	q := url.Values{}
	for k, v := range map[string]string{"status": *status, "limit": *limit} {
		if v != "" {
			q.Set(k, v)
		}
	}
	// The endpoint's own check, so an error reads alike with and without
	// a daemon.
	st, n, err := httpapi.ParseAlertsQuery(q)
	if err != nil {
		return usageError{"--" + err.Error()}
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	var resp httpapi.AlertsResponse
	err = readOrAsk(ctx, cfg, *addr, stderr, func(p *pipeline.Pipeline) error {
		page, err := p.Store().Outbox(st, n)
		resp = httpapi.Alerts(page)
		return err
	}, func(addr string) error {
		return daemonJSON(ctx, http.MethodGet, addr, "/v1/alerts?"+q.Encode(), "", nil, &resp)
	})
	if err != nil {
		return err
	}
	return printAnswer(stdout, *asJSON, resp, func() { printAlerts(stdout, resp) })
}

func printAlerts(w io.Writer, r httpapi.AlertsResponse) {
	fmt.Fprintf(w, "Outbox: %d pending, %d failed; the newest %s\n", r.Pending, r.Failed, plural(len(r.Messages), "message"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tWATCH\tSTATUS\tCREATED\tATTEMPTS\tTEXT\tLAST ERROR")
	logged := false
	for _, m := range r.Messages {
		logged = logged || m.Status == store.Logged
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", m.ID, m.Kind, dash(m.Watch), m.Status,
			m.Created.UTC().Format("2006-01-02 15:04Z"), m.Attempts, firstLine(m.Text, 72), dash(firstLine(m.LastError, 60)))
	}
	tw.Flush()
	if logged {
		fmt.Fprintln(w, "logged: not sent, no Slack configured; the message went to the log only.")
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// firstLine is s's first line, cut to at most n runes.
func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// digestOutcome says what became of the digest's messages, the newest n of
// the outbox once the sender ran (this process holds the database, so no
// other message came in between).
func digestOutcome(st *store.Store, n int) (string, error) {
	if n == 0 {
		return "digest: no message to send", nil // Outbox's limit 0 would be all
	}
	page, err := st.Outbox("", n)
	if err != nil {
		return "", err
	}
	count := map[string]int{}
	lastErr := ""
	for _, m := range page.Messages {
		count[m.Status]++
		if m.LastError != "" && lastErr == "" {
			lastErr = m.LastError
		}
	}
	msgs := plural(n, "message")
	switch {
	case count[store.Logged] == n:
		return fmt.Sprintf("digest: %s not sent: no Slack configured (messages kept in the outbox as logged; see GET /v1/alerts or pricewatch alerts)", msgs), nil
	case count[store.Sent] == n:
		return fmt.Sprintf("digest: %s sent to Slack", msgs), nil
	}
	parts := []string{}
	for _, s := range []string{store.Sent, store.Pending, store.Failed} {
		if count[s] > 0 {
			parts = append(parts, strconv.Itoa(count[s])+" "+s)
		}
	}
	out := fmt.Sprintf("digest: %s queued: %s", msgs, strings.Join(parts, ", "))
	if count[store.Pending] > 0 {
		out += "; pending ones are retried by the daemon (pricewatch serve)"
	}
	if lastErr != "" {
		out += "; last error: " + lastErr
	}
	return out + " (see pricewatch alerts)", nil
}
