package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/rank"
)

func runBest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("best", stdout, stderr)
	var c common
	c.register(fs, false)
	workload := fs.String("workload", "", "workload: lora-7b, qlora-7b, full-ft-7b, serve-7b (required)")
	card := fs.String("card", "", "only this card (canonical id, e.g. A100-80GB-SXM)")
	mode := fs.String("mode", "", "billing modes, comma-separated (default ondemand,spot)")
	currency := fs.String("currency", "", "currency: USD, CNY or EUR (default: ranking.base_currency)")
	maxGPUs := fs.String("max-gpus", "", "only offers rentable with at most this many GPUs (1: a single card)")
	util := fs.String("utilization", "", "committed modes: share of the period used, 0..1 (default 1)")
	avail := fs.String("available", "", "yes (default: offers not known to be out of stock) or any")
	unfit := fs.Bool("include-unfit", false, "also list the cards whose offers cannot hold the job, and why in GiB")
	narrow := registerNarrowing(fs)
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
	if *workload == "" {
		return usageError{"best needs --workload W, the job to rank offers for: " + workloadList(cfg) +
			"; e.g. `pricewatch best --demo --workload lora-7b` (bundled prices, offline)"}
	}
	q := url.Values{}
	for k, v := range map[string]string{"workload": *workload, "card": *card, "mode": *mode, "currency": *currency,
		"max_gpus": *maxGPUs, "utilization": *util, "available": *avail} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if *unfit {
		q.Set("include_unfit", "true")
	}
	narrow(q)
	var resp *httpapi.BestResponse
	err = readOrAsk(ctx, cfg, *addr, stderr, func(p *pipeline.Pipeline) error {
		snap := p.View().Snapshot
		bq, err := httpapi.ParseBestQuery(q, snap, normalize.DefaultCatalog())
		if err != nil {
			return usageError{err.Error()}
		}
		if snap.OfferCount() == 0 {
			fmt.Fprintf(stderr, "pricewatch: %s holds no offers yet; run `pricewatch scrape` (or serve) first\n", cfg.DB)
		}
		if resp, err = httpapi.Best(snap, bq); err == nil && c.demo {
			resp.MarkDemo(httpapi.DemoFixtures())
		}
		return err
	}, func(addr string) error {
		resp = new(httpapi.BestResponse)
		return daemonJSON(ctx, http.MethodGet, addr, "/v1/best?"+q.Encode(), "", nil, resp)
	})
	if err != nil {
		return err
	}
	return printAnswer(stdout, *asJSON, resp, func() { printBest(stdout, resp) })
}

// daemonAddr is the address the daemon holding db recorded, once it
// proved it wrote the record, else (no record) fallback. A record that
// fails its checks or its proof is an error: nothing is sent there.
func daemonAddr(ctx context.Context, db, fallback string) (string, error) {
	addr, err := provenDaemon(ctx, db)
	if errors.Is(err, errNoRecord) {
		return fallback, nil
	}
	return addr, err
}

func printBest(w io.Writer, r *httpapi.BestResponse) {
	scope := fmt.Sprintf("modes %v", r.Modes)
	if r.MaxGPUs > 0 {
		scope += fmt.Sprintf(", at most %s", plural(r.MaxGPUs, "GPU"))
	}
	if r.Utilization > 0 {
		scope += fmt.Sprintf(", committed modes at %.0f%% use", r.Utilization*100)
	}
	if r.Available == "any" {
		scope += ", out-of-stock offers included"
	}
	// The data's own dates first: a ranking of a minute ago can price
	// fixtures of 2024 at rates of 2022.
	fmt.Fprintln(w, httpapi.DataLine(r.Demo, r.Data))
	fmt.Fprintf(w, "Best %s per card, cost per million tokens in %s (%s, ranking of %s)\n",
		r.Workload, r.Currency, scope, r.GeneratedAt.Format(time.RFC3339))
	if r.Filters != nil {
		fmt.Fprintf(w, "Narrowed to %s\n", narrowingLine(*r.Filters))
	}
	fmt.Fprintln(w, "Each offer is priced at its rentable unit: a fixed instance or bundle whole, a per-GPU offer at the GPUs the job needs.")
	fmt.Fprintln(w)
	cols := bestColumns(r)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = c.name
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for i, e := range r.Cards {
		row := make([]string, len(cols))
		for j, c := range cols {
			row[j] = c.value(i, e)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	if len(r.Cards) == 0 {
		fmt.Fprintln(w, "(no eligible offer)")
	}
	if len(r.Unfit) > 0 {
		fmt.Fprintln(w, "\nCards whose offers cannot hold the job:")
		for _, u := range r.Unfit {
			fmt.Fprintf(w, "  %s: %s\n", u.Card, u.Reason)
		}
	}
}

// registerNarrowing adds the narrowing flags (the /v1/best and /v1/offers
// parameters of the same names, with dashes) and returns what sets the
// given ones on a query.
func registerNarrowing(fs *flag.FlagSet) func(url.Values) {
	flags := []struct{ flag, param, usage string }{
		{"provider", "provider", "only these providers, comma-separated"},
		{"exclude-provider", "exclude_provider", "leave out these providers, comma-separated"},
		{"region", "region", "only these source regions, comma-separated (us-east-1, europe-west4)"},
		{"country", "country", "only offers in these countries, ISO 3166-1 alpha-2, comma-separated (US,DE)"},
		{"interconnect", "interconnect", "only these GPU link families: nvlink, pcie, infinity-fabric, roce, network"},
		{"min-gpu-memory", "min_gpu_memory", "only cards with at least this memory per GPU, GB"},
		{"min-vcpus-per-gpu", "min_vcpus_per_gpu", "only offers stating at least this many vCPUs per GPU"},
		{"min-ram-gb-per-gpu", "min_ram_gb_per_gpu", "only offers stating at least this much RAM per GPU, GB"},
	}
	vals := make([]*string, len(flags))
	for i, f := range flags {
		vals[i] = fs.String(f.flag, "", f.usage)
	}
	return func(q url.Values) {
		for i, f := range flags {
			if *vals[i] != "" {
				q.Set(f.param, *vals[i])
			}
		}
	}
}

// narrowingLine says a narrowing in its parameters' own words
// ("exclude_provider=vast; min_gpu_memory=48").
func narrowingLine(n rank.Narrowing) string {
	var parts []string
	for _, l := range []struct {
		name string
		vals []string
	}{{"provider", n.Providers}, {"exclude_provider", n.ExcludeProviders}, {"region", n.Regions}, {"country", n.Countries},
		{"interconnect", n.Interconnects}} {
		if len(l.vals) > 0 {
			parts = append(parts, l.name+"="+strings.Join(l.vals, ","))
		}
	}
	for _, m := range []struct {
		name string
		v    float64
	}{{"min_gpu_memory", n.MinGPUMemoryGB}, {"min_vcpus_per_gpu", n.MinVCPUsPerGPU}, {"min_ram_gb_per_gpu", n.MinRAMGBPerGPU}} {
		if m.v > 0 {
			parts = append(parts, m.name+"="+strconv.FormatFloat(m.v, 'g', -1, 64))
		}
	}
	return strings.Join(parts, "; ")
}

// workloadList names the workloads a config knows, built-in and its own:
// "one of full-ft-7b, lora-7b, …".
func workloadList(cfg *config.Config) string {
	ws, err := cfg.ResolveWorkloads()
	if err != nil || len(ws) == 0 {
		return "a workload name"
	}
	names := make([]string, len(ws))
	for i, w := range ws {
		names[i] = w.Name
	}
	slices.Sort(names)
	return "one of " + strings.Join(names, ", ")
}

// bestColumn is a column of best's table: its heading and its cell of the
// i-th card.
type bestColumn struct {
	name  string
	value func(i int, e httpapi.BestCard) string
}

// bestColumns are best's columns: the ranking's own, then one for each
// filter asked that the ranking does not show (the vCPUs and RAM per GPU,
// the country, the provider, the GPU link), and the page to rent the
// offer when an offer states one; so a narrowed answer shows what it was
// narrowed by.
func bestColumns(r *httpapi.BestResponse) []bestColumn {
	cols := []bestColumn{
		{"#", func(i int, _ httpapi.BestCard) string { return strconv.Itoa(i + 1) }},
		{"CARD", func(_ int, e httpapi.BestCard) string { return e.Card }},
		{"COST/MTOK", func(_ int, e httpapi.BestCard) string { return money(e.CostPerMillionTokens) }},
		{"UNIT", func(_ int, e httpapi.BestCard) string { return unitLabel(e.RentUnit, e.GPUs, e.GPUsUsed) }},
		{"UNIT PRICE/H", func(_ int, e httpapi.BestCard) string { return money(e.UnitPricePerHour) }},
		{"PRICE/GPU-H", func(_ int, e httpapi.BestCard) string { return money(e.PricePerGPUHour) }},
		{"TOKENS/S", func(_ int, e httpapi.BestCard) string { return strconv.FormatFloat(e.TokensPerSecond, 'f', 0, 64) }},
		{"ORIGIN", func(_ int, e httpapi.BestCard) string { return string(e.ThroughputOrigin) }},
		{"PRECISION", func(_ int, e httpapi.BestCard) string { return e.Precision }},
		{"MODE", func(_ int, e httpapi.BestCard) string { return e.ModeLabel() }},
		{"SOURCE", func(_ int, e httpapi.BestCard) string { return e.Source }},
	}
	var n rank.Narrowing
	if r.Filters != nil {
		n = *r.Filters
	}
	perGPU := func(v float64, e httpapi.BestCard) string {
		if e.GPUs < 1 {
			return offerQty(v)
		}
		return offerQty(v / float64(e.GPUs))
	}
	if len(n.Providers)+len(n.ExcludeProviders) > 0 {
		cols = append(cols, bestColumn{"PROVIDER", func(_ int, e httpapi.BestCard) string { return e.Provider }})
	}
	cols = append(cols, bestColumn{"REGION", func(_ int, e httpapi.BestCard) string { return dash(e.Region) }})
	if len(n.Countries) > 0 {
		cols = append(cols, bestColumn{"COUNTRY", func(_ int, e httpapi.BestCard) string { return dash(e.Country) }})
	}
	if n.MinVCPUsPerGPU > 0 {
		cols = append(cols, bestColumn{"VCPUS/GPU", func(_ int, e httpapi.BestCard) string { return perGPU(e.VCPUs, e) }})
	}
	if n.MinRAMGBPerGPU > 0 {
		cols = append(cols, bestColumn{"RAM GB/GPU", func(_ int, e httpapi.BestCard) string { return perGPU(e.RAMGB, e) }})
	}
	if len(n.Interconnects) > 0 {
		cols = append(cols, bestColumn{"INTERCONNECT", func(_ int, e httpapi.BestCard) string { return dash(e.Interconnect) }})
	}
	cols = append(cols,
		bestColumn{"OFFER", func(_ int, e httpapi.BestCard) string { return e.OfferID }},
		bestColumn{"REFERENCE", func(_ int, e httpapi.BestCard) string {
			if len(e.Reference) == 0 {
				return "-"
			}
			return fmt.Sprintf("%s/GPU-h (%s)", money(e.Reference[0].PricePerGPUHour), e.Reference[0].Source)
		}})
	if slices.ContainsFunc(r.Cards, func(e httpapi.BestCard) bool { return e.RentURL != "" }) {
		cols = append(cols, bestColumn{"RENT", func(_ int, e httpapi.BestCard) string { return dash(e.RentURL) }})
	}
	return cols
}
