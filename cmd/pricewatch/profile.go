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
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/profileimport"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

var profileSubs = []string{"set", "import", "list", "delete"}

func runProfile(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	regs := []func(*flag.FlagSet){func(fs *flag.FlagSet) { new(common).register(fs, false) }}
	for _, sub := range profileSubs {
		regs = append(regs, func(fs *flag.FlagSet) { new(profileFlags).register(fs, sub) })
	}
	args = subFirst(args, profileSubs, regs...)
	if len(args) > 0 && wantsHelp(args[:1]) {
		groupHelp(stdout, "profile", profileSubs...)
		return nil
	}
	if len(args) == 0 || !slices.Contains(profileSubs, args[0]) {
		return usageError{"usage: pricewatch profile set --card C --workload W --tps N [--provider P [--offer O]] [--note TEXT]" +
			" | profile import FILE --card C --workload W [--provider P [--offer O]] [--gpus N] [--seq-len N] [--format F] [--field F]" +
			" | profile list [--card C] [--workload W] [--provider P] [--below-norm] [--json]" +
			" | profile delete --card C --workload W [--provider P [--offer O]]"}
	}
	sub := args[0]
	fs := newFlags("profile "+sub, stdout, stderr)
	var c common
	c.register(fs, false)
	var f profileFlags
	f.register(fs, sub)
	rest := args[1:]
	var file string
	if sub == "import" && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		file, rest = rest[0], rest[1:] // FILE before the flags
	}
	if err := parse(fs, rest); err != nil {
		return err
	}
	if sub == "import" && file == "" && fs.NArg() > 0 {
		file = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	switch sub {
	case "set":
		if !(f.tps >= rank.MinProfileTokensPerSecond && f.tps < rank.MaxProfileTokensPerSecond) {
			return usageError{fmt.Sprintf("--tps: must be a tokens-per-second figure within %g..%g", rank.MinProfileTokensPerSecond, rank.MaxProfileTokensPerSecond)}
		}
		return writeProfile(ctx, cfg, f, nil, "", stdout, stderr)
	case "import":
		if file == "" {
			return usageError{"profile import: give the log or result FILE to read"}
		}
		data, err := readLimited(file, profileimport.MaxInputBytes)
		if err != nil {
			return asInput(err)
		}
		return writeProfile(ctx, cfg, f, data, filepath.Base(file), stdout, stderr)
	case "delete":
		return deleteProfile(ctx, cfg, f, stdout, stderr)
	}
	return listProfiles(ctx, cfg, f, stdout, stderr)
}

// profileFlags are the flags of the profile subcommands.
type profileFlags struct {
	card, workload, provider, offer, note string
	tps                                   float64
	gpus, seqLen, warmup                  int
	format, field                         string
	belowNorm, asJSON                     bool
	addr                                  string
}

func (f *profileFlags) register(fs *flag.FlagSet, sub string) {
	fs.StringVar(&f.card, "card", "", "canonical card id, e.g. A100-80GB-SXM")
	fs.StringVar(&f.workload, "workload", "", "workload: lora-7b, qlora-7b, full-ft-7b, serve-7b, …")
	fs.StringVar(&f.provider, "provider", "", "the provider the run was measured on (as offers name it, e.g. runpod): applies to its offers only")
	fs.StringVar(&f.addr, "addr", "", "when a running daemon holds the database, ask it at this address")
	switch sub {
	case "set", "import", "delete":
		fs.StringVar(&f.offer, "offer", "", "the offer ID it was measured on (needs --provider)")
	}
	switch sub {
	case "set":
		fs.Float64Var(&f.tps, "tps", 0, "measured tokens per second per GPU")
		fs.StringVar(&f.note, "note", "", "how it was measured")
		fs.IntVar(&f.gpus, "gpus", 0, "serving: the tensor-parallel group the figure was measured on")
	case "import":
		fs.IntVar(&f.gpus, "gpus", 0, "GPUs of the measured run (training processes, vLLM tensor-parallel size): divides whole-run figures")
		fs.IntVar(&f.seqLen, "seq-len", 0, "tokens per sample, when a Hugging Face run logged samples/s only")
		fs.StringVar(&f.format, "format", "", "input format: "+strings.Join(profileimport.Formats(), ", ")+" (default: detected)")
		fs.StringVar(&f.field, "field", "", "which figure, where a format has several (vLLM: output_throughput or total_token_throughput)")
		fs.IntVar(&f.warmup, "warmup", 0, "torchtune: logged steps per run left out as warm-up (default 3; -1 none)")
	case "list":
		fs.BoolVar(&f.belowNorm, "below-norm", false, "only measurements flagged below their card's norm")
		fs.BoolVar(&f.asJSON, "json", false, "print JSON")
	}
}

// query is the scope of a write as query parameters.
func (f profileFlags) query() url.Values {
	q := url.Values{}
	if f.provider != "" {
		q.Set("provider", f.provider)
	}
	if f.offer != "" {
		q.Set("offer", f.offer)
	}
	return q
}

// daemon is the address of the daemon to write through (the API token
// goes there): --addr (which then proves it holds the token), else the
// one it recorded beside the database once it proved the record.
func (f profileFlags) daemon(ctx context.Context, cfg *config.Config) (string, error) {
	if f.addr != "" {
		return f.addr, nil
	}
	addr, err := tokenDaemonAddr(ctx, cfg.DB)
	if err != nil {
		return "", fmt.Errorf("%s is held by a running daemon: %w", cfg.DB, err)
	}
	return addr, nil
}

func (f profileFlags) importOptions(name string) profileimport.Options {
	return profileimport.Options{Format: f.format, Name: name, SeqLen: f.seqLen, GPUs: f.gpus, Field: f.field, WarmupSteps: f.warmup}
}

func readLimited(file string, limit int64) ([]byte, error) {
	fh, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", file, limit)
	}
	return data, nil
}

// writeProfile stores a measured profile (set: --tps; import: the figure
// read from data) in the database, or through the daemon that holds it.
func writeProfile(ctx context.Context, cfg *config.Config, f profileFlags, data []byte, name string, stdout, stderr io.Writer) error {
	var res httpapi.ProfileResponse
	err := withPipeline(cfg, true, stderr, func(p *pipeline.Pipeline) error {
		v := p.View()
		t, err := httpapi.ResolveProfileTarget(v.Snapshot, f.card, f.workload, f.provider, f.offer)
		if err != nil {
			return usageError{"--" + err.Error()}
		}
		if f.gpus < 0 || f.gpus > httpapi.MaxProfileGPUs {
			return usageError{fmt.Sprintf("--gpus: must be within 0..%d", httpapi.MaxProfileGPUs)}
		}
		pr := t.Profile(f.tps, f.gpus, strings.TrimSpace("measured: "+f.note))
		if data != nil {
			var r profileimport.Result
			pr, r, res.Warnings, err = t.ImportProfile(data, f.importOptions(name))
			var oe *profileimport.OptionError
			if errors.As(err, &oe) {
				return usageError{"--" + oe.Option + ": " + oe.Reason} // a refused kind: --workload
			}
			if err != nil {
				return err
			}
			res.Import = &r
		}
		c, err := p.SetProfile(ctx, pr)
		if err != nil {
			return err
		}
		res.ProfileEntry = httpapi.NewProfileEntry(pr, c)
		return nil
	})
	if errors.Is(err, store.ErrLocked) {
		addr, err := f.daemon(ctx, cfg)
		if err != nil {
			return err
		}
		if err := writeThroughDaemon(ctx, addr, cfg.Server.APIToken, f, data, name, &res); err != nil {
			return daemonFailed(cfg.DB, addr, err)
		}
	} else if err != nil {
		return err
	}
	printStored(stdout, res)
	return nil
}

func writeThroughDaemon(ctx context.Context, addr, token string, f profileFlags, data []byte, name string, out *httpapi.ProfileResponse) error {
	if token == "" {
		return fmt.Errorf("no API token: set %s to the daemon's token", config.EnvAPIToken)
	}
	q := f.query()
	if data == nil {
		return daemonJSON(ctx, http.MethodPut, addr, "/v1/profiles/"+url.PathEscape(f.card)+"/"+url.PathEscape(f.workload)+"?"+q.Encode(), token,
			httpapi.ProfileBody{TokensPerSecond: f.tps, Note: f.note, GPUs: f.gpus}, out)
	}
	q.Set("card", f.card)
	q.Set("workload", f.workload)
	q.Set("name", name)
	for k, v := range map[string]string{"format": f.format, profileimport.OptionField: f.field} {
		if v != "" {
			q.Set(k, v)
		}
	}
	for k, v := range map[string]int{profileimport.OptionGPUs: f.gpus, profileimport.OptionSeqLen: f.seqLen, profileimport.OptionWarmup: f.warmup} {
		if v != 0 {
			q.Set(k, strconv.Itoa(v))
		}
	}
	return daemonCall(ctx, http.MethodPost, addr, "/v1/profiles/import?"+q.Encode(), token, "application/octet-stream", data, out)
}

func printStored(w io.Writer, res httpapi.ProfileResponse) {
	p := res.Profile
	fmt.Fprintf(w, "measured profile set: %s %s %.0f tokens/s per GPU (%s)\n", p.Card, p.Workload, p.TokensPerSecond, p.Label())
	if res.Import != nil {
		fmt.Fprintf(w, "  read %s: %s\n", res.Import.Format, res.Import.Note)
	}
	for _, warn := range res.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
	if c := res.Norm; c != nil {
		if c.BelowNorm {
			fmt.Fprintf(w, "  %s (queued for Slack, once)\n", c.Note)
		} else {
			fmt.Fprintf(w, "  within norm: %.0f%% of %.0f tok/s (%s)\n", 100*c.Ratio, c.Norm, c.NormFrom)
		}
	}
}

func deleteProfile(ctx context.Context, cfg *config.Config, f profileFlags, stdout, stderr io.Writer) error {
	if f.card == "" || f.workload == "" {
		return usageError{"profile delete: --card and --workload are required"}
	}
	if err := httpapi.CheckScope(f.provider, f.offer); err != nil {
		return usageError{"--" + err.Error()}
	}
	found := false
	err := withPipeline(cfg, true, stderr, func(p *pipeline.Pipeline) error {
		var err error
		found, err = p.DeleteProfile(ctx, f.card, f.workload, f.provider, f.offer)
		return err
	})
	if errors.Is(err, store.ErrLocked) {
		var addr string
		if addr, err = f.daemon(ctx, cfg); err != nil {
			return err
		}
		if cfg.Server.APIToken == "" {
			return fmt.Errorf("%s is held by a running daemon: set %s to its token to delete through it", cfg.DB, config.EnvAPIToken)
		}
		err = daemonJSON(ctx, http.MethodDelete, addr, "/v1/profiles/"+url.PathEscape(f.card)+"/"+url.PathEscape(f.workload)+"?"+f.query().Encode(),
			cfg.Server.APIToken, nil, nil)
		found = err == nil
		if err != nil && strings.HasPrefix(err.Error(), "HTTP 404") {
			err = nil
		}
	}
	if err != nil {
		return err
	}
	if !found {
		return inputf("no measured profile of %s %s at that scope", f.card, f.workload)
	}
	fmt.Fprintf(stdout, "measured profile deleted: %s %s %s\n", f.card, f.workload, rank.Profile{Origin: rank.OriginMeasured, Provider: f.provider, Offer: f.offer}.Label())
	return nil
}

func listProfiles(ctx context.Context, cfg *config.Config, f profileFlags, stdout, stderr io.Writer) error {
	var entries []httpapi.ProfileEntry
	err := readOrAsk(ctx, cfg, f.addr, stderr, func(p *pipeline.Pipeline) error {
		ps, err := p.Profiles()
		entries = httpapi.ProfileEntries(ps, p.NormChecks())
		return err
	}, func(addr string) error {
		var out struct{ Profiles []httpapi.ProfileEntry }
		err := daemonJSON(ctx, http.MethodGet, addr, "/v1/profiles", "", nil, &out)
		entries = out.Profiles
		return err
	})
	if err != nil {
		return err
	}
	out := []httpapi.ProfileEntry{}
	for _, e := range entries {
		if (f.card == "" || e.Card == f.card) && (f.workload == "" || e.Workload == f.workload) &&
			(f.provider == "" || e.Provider == f.provider) && (!f.belowNorm || e.Norm != nil && e.Norm.BelowNorm) {
			out = append(out, e)
		}
	}
	if f.asJSON {
		b, _ := json.Marshal(map[string]any{"profiles": out})
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CARD\tWORKLOAD\tTOKENS/S\tORIGIN\tNORM\tNOTE")
	for _, e := range out {
		norm := "-"
		if c := e.Norm; c != nil {
			norm = fmt.Sprintf("%.0f%% of %.0f", 100*c.Ratio, c.Norm)
			if c.BelowNorm {
				norm = "BELOW " + norm
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%s\t%s\t%s\n", e.Card, e.Workload, e.TokensPerSecond, e.Label, norm, e.Note)
	}
	return tw.Flush()
}
