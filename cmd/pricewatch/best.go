package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/store"
)

func runBest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("best", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs, false)
	workload := fs.String("workload", "", "workload: lora-7b, qlora-7b, full-ft-7b, serve-7b (required)")
	card := fs.String("card", "", "only this card (canonical id, e.g. A100-80GB-SXM)")
	mode := fs.String("mode", "", "billing modes, comma-separated (default ondemand,spot)")
	currency := fs.String("currency", "", "currency: USD, CNY or EUR (default: ranking.base_currency)")
	asJSON := fs.Bool("json", false, "print the JSON the /v1/best endpoint answers")
	addr := fs.String("addr", "", "when a running daemon holds the database, ask it at this address (default: config server.addr)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("best takes no arguments, got %q", fs.Args())}
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	q := url.Values{}
	for k, v := range map[string]string{"workload": *workload, "card": *card, "mode": *mode, "currency": *currency} {
		if v != "" {
			q.Set(k, v)
		}
	}
	st, err := openStore(cfg.DB, true)
	var resp *httpapi.BestResponse
	switch {
	case errors.Is(err, store.ErrLocked):
		if *addr == "" {
			*addr = daemonAddr(cfg.DB, cfg.Server.Addr)
		}
		resp, err = askDaemon(ctx, *addr, q)
		if err != nil {
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
		v, err := p.BuildView()
		if err != nil {
			return err
		}
		bq, err := httpapi.ParseBestQuery(q, v.Snapshot, normalize.DefaultCatalog())
		if err != nil {
			return usageError{err.Error()}
		}
		if resp, err = httpapi.Best(v.Snapshot, bq); err != nil {
			return err
		}
		if len(v.Snapshot.Offers) == 0 {
			fmt.Fprintf(stderr, "pricewatch: %s holds no offers yet; run `pricewatch scrape` (or serve) first\n", cfg.DB)
		}
	}
	if *asJSON {
		b, err := json.Marshal(resp)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	printBest(stdout, resp)
	return nil
}

// daemonAddr is the address the daemon holding db recorded, else fallback.
func daemonAddr(db, fallback string) string {
	b, err := os.ReadFile(db + ".addr")
	if a := strings.TrimSpace(string(b)); err == nil && a != "" {
		return a
	}
	return fallback
}

// askDaemon asks a running daemon, so the CLI works while serve holds the
// database instead of hanging on the lock.
func askDaemon(ctx context.Context, addr string, q url.Values) (*httpapi.BestResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/best?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		var e struct{ Error string }
		_ = json.NewDecoder(res.Body).Decode(&e)
		return nil, fmt.Errorf("HTTP %d: %s", res.StatusCode, e.Error)
	}
	var out httpapi.BestResponse
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("decode answer: %w", err)
	}
	return &out, nil
}

func printBest(w io.Writer, r *httpapi.BestResponse) {
	fmt.Fprintf(w, "Best %s per card, cost per million tokens in %s (modes %v, ranking of %s)\n\n",
		r.Workload, r.Currency, r.Modes, r.GeneratedAt.Format(time.RFC3339))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tCARD\tCOST/MTOK\tPRICE/GPU-H\tTOKENS/S\tORIGIN\tMODE\tSOURCE\tREGION\tOFFER")
	for i, e := range r.Cards {
		region := e.Region
		if region == "" {
			region = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%.4f\t%.4f\t%.0f\t%s\t%s\t%s\t%s\t%s\n", i+1, e.Card, e.CostPerMillionTokens,
			e.PricePerGPUHour, e.TokensPerSecond, e.ThroughputOrigin, e.Mode, e.Source, region, e.OfferID)
	}
	tw.Flush()
	if len(r.Cards) == 0 {
		fmt.Fprintln(w, "(no eligible offer)")
	}
}
