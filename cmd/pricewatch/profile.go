package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"text/tabwriter"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

func runProfile(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && wantsHelp(args[:1]) {
		groupHelp(stdout, "profile", "set", "list")
		return nil
	}
	if len(args) == 0 || (args[0] != "set" && args[0] != "list") {
		return usageError{"usage: pricewatch profile set --card C --workload W --tps N [--note TEXT] | pricewatch profile list [--card C] [--workload W] [--json]"}
	}
	sub := args[0]
	fs := newFlags("profile "+sub, stdout, stderr)
	var c common
	c.register(fs, false)
	card := fs.String("card", "", "canonical card id, e.g. A100-80GB-SXM")
	workload := fs.String("workload", "", "workload: lora-7b, qlora-7b, full-ft-7b, serve-7b")
	tps := fs.Float64("tps", 0, "measured tokens per second per GPU (set)")
	note := fs.String("note", "", "how it was measured (set)")
	asJSON := fs.Bool("json", false, "print JSON (list)")
	addr := fs.String("addr", "", "when a running daemon holds the database, ask it at this address")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	if sub == "set" {
		return setProfile(ctx, cfg, *card, *workload, *tps, *note, *addr, stdout)
	}
	var ps []rank.Profile
	err = readOrAsk(cfg, *addr, stderr, func(p *pipeline.Pipeline) error {
		var err error
		ps, err = p.Profiles()
		return err
	}, func(addr string) error {
		var out struct{ Profiles []rank.Profile }
		err := daemonJSON(ctx, http.MethodGet, addr, "/v1/profiles", "", nil, &out)
		ps = out.Profiles
		return err
	})
	if err != nil {
		return err
	}
	var out []rank.Profile
	for _, p := range ps {
		if (*card == "" || p.Card == *card) && (*workload == "" || p.Workload == *workload) {
			out = append(out, p)
		}
	}
	if *asJSON {
		b, _ := json.Marshal(map[string]any{"profiles": out})
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CARD\tWORKLOAD\tTOKENS/S\tORIGIN\tNOTE")
	for _, p := range out {
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%s\t%s\n", p.Card, p.Workload, p.TokensPerSecond, p.Origin, p.Note)
	}
	return tw.Flush()
}

func setProfile(ctx context.Context, cfg *config.Config, card, workload string, tps float64, note, addr string, stdout io.Writer) error {
	if _, ok := normalize.DefaultCatalog().Card(card); !ok {
		return usageError{fmt.Sprintf("--card: unknown card %q", card)}
	}
	ws, err := cfg.ResolveWorkloads()
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(ws, func(w rank.Workload) bool { return w.Name == workload }) {
		return usageError{fmt.Sprintf("--workload: unknown workload %q", workload)}
	}
	if !(tps >= rank.MinProfileTokensPerSecond && tps <= rank.MaxProfileTokensPerSecond) {
		return usageError{fmt.Sprintf("--tps: must be a tokens-per-second figure within %g..%g", rank.MinProfileTokensPerSecond, rank.MaxProfileTokensPerSecond)}
	}
	p := rank.Profile{Card: card, Workload: workload, TokensPerSecond: tps, Origin: rank.OriginMeasured, Note: "measured: " + note}
	st, err := openStore(cfg.DB, false)
	switch {
	case errors.Is(err, store.ErrLocked):
		// The daemon holds the file: write through its API (needs the token).
		if addr == "" {
			addr = daemonAddr(cfg.DB, cfg.Server.Addr)
		}
		if err := putProfile(ctx, addr, cfg.Server.APIToken, card, workload, tps, note); err != nil {
			return fmt.Errorf("%s is held by a running daemon; setting the profile through it at %s: %w", cfg.DB, addr, err)
		}
	case err != nil:
		return err
	default:
		defer st.Close()
		if err := st.PutProfile(p); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "measured profile set: %s %s %.0f tokens/s per GPU\n", card, workload, tps)
	return nil
}

func putProfile(ctx context.Context, addr, token, card, workload string, tps float64, note string) error {
	if token == "" {
		return fmt.Errorf("no API token: set %s to the daemon's token", config.EnvAPIToken)
	}
	return daemonJSON(ctx, http.MethodPut, addr, "/v1/profiles/"+card+"/"+workload, token,
		httpapi.ProfileBody{TokensPerSecond: tps, Note: note}, nil)
}
