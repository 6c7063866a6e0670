package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"go.yaml.in/yaml/v3"

	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/rank"
)

func runPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs, false)
	specFile := fs.String("spec", "", "job spec file (YAML or JSON, the body of POST /v1/plan); flags override it")
	workload := fs.String("workload", "", "start from a named workload: lora-7b, qlora-7b, full-ft-7b, serve-7b")
	preset := fs.String("preset", "", "model preset: llama-7b, llama3-8b, qwen2.5-7b, llama-13b, llama3-70b")
	method := fs.String("method", "", "full, lora, qlora or serve")
	precision := fs.String("precision", "", "weights: bf16, fp16, fp8, int8, nf4, int4")
	optimizer := fs.String("optimizer-state", "", "optimizer state: bf16 (default) or fp32")
	tokens := fs.Float64("tokens", 0, "tokens to process (training)")
	seqLen := fs.Int("seq-len", 0, "sequence length (training)")
	microBatch := fs.Int("micro-batch", 0, "micro-batch per GPU (training)")
	ckpt := fs.String("checkpointing", "", "activation checkpointing: true or false")
	ctxTokens := fs.Int("context", 0, "tokens per request, in + out (serving)")
	concurrency := fs.Int("concurrency", 0, "concurrent requests to hold (serving)")
	peak := fs.Float64("peak-tps", 0, "peak generated tokens/s to serve (serving capacity)")
	hoursMonth := fs.Float64("hours-per-month", 0, "serving hours a month (default 730)")
	modes := fs.String("modes", "", "billing modes, comma-separated (default ondemand,spot)")
	util := fs.Float64("utilization", 0, "expected utilization of period rentals, 0..1 (default 1)")
	maxGPUs := fs.Int("max-gpus", 0, "largest GPU count (default 8)")
	currency := fs.String("currency", "", "USD, CNY or EUR")
	card := fs.String("card", "", "only this card")
	unfit := fs.Bool("include-unfit", false, "list options that cannot hold the job, with the reason")
	limit := fs.Int("limit", 0, "options to list (default 50)")
	asJSON := fs.Bool("json", false, "print the JSON the /v1/plan endpoint answers")
	addr := fs.String("addr", "", "when a running daemon holds the database, ask it at this address")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("plan takes no arguments, got %q", fs.Args())}
	}
	var spec rank.JobSpec
	if *specFile != "" {
		var err error
		if spec, err = readSpec(*specFile); err != nil {
			return err
		}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	str := func(name string, dst *string, v string) {
		if set[name] {
			*dst = v
		}
	}
	str("workload", &spec.Workload, *workload)
	str("method", &spec.Method, *method)
	str("precision", &spec.Precision, *precision)
	str("optimizer-state", &spec.OptimizerState, *optimizer)
	str("currency", &spec.Currency, *currency)
	str("card", &spec.Card, *card)
	if set["preset"] {
		spec.Model = &rank.ModelSpec{Preset: *preset}
	}
	if set["tokens"] {
		spec.Tokens = *tokens
	}
	for _, f := range []struct {
		name string
		dst  *int
		v    int
	}{
		{"seq-len", &spec.SeqLen, *seqLen}, {"micro-batch", &spec.MicroBatch, *microBatch}, {"context", &spec.Context, *ctxTokens},
		{"concurrency", &spec.Concurrency, *concurrency}, {"max-gpus", &spec.MaxGPUs, *maxGPUs}, {"limit", &spec.Limit, *limit},
	} {
		if set[f.name] {
			*f.dst = f.v
		}
	}
	if set["peak-tps"] {
		spec.PeakTokensPerSecond = *peak
	}
	if set["hours-per-month"] {
		spec.HoursPerMonth = *hoursMonth
	}
	if set["utilization"] {
		spec.Utilization = *util
	}
	if set["modes"] {
		spec.Modes = strings.Split(*modes, ",")
	}
	if set["include-unfit"] {
		spec.IncludeUnfit = *unfit
	}
	if set["checkpointing"] {
		b := *ckpt == "true"
		if *ckpt != "true" && *ckpt != "false" {
			return usageError{"--checkpointing takes true or false"}
		}
		spec.ActivationCheckpointing = &b
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	var res *rank.PlanResult
	err = readOrAsk(cfg, *addr, stderr, func(p *pipeline.Pipeline) error {
		var err error
		res, err = httpapi.Plan(p.View().Snapshot, spec, cfg.Owned)
		return err
	}, func(addr string) error {
		res = new(rank.PlanResult)
		return daemonJSON(ctx, http.MethodPost, addr, "/v1/plan", "", spec, res)
	})
	if err != nil {
		return err
	}
	if *asJSON {
		b, err := json.Marshal(res)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	printPlan(stdout, res)
	return nil
}

// readSpec reads a job spec from YAML or JSON, strictly: YAML goes through
// the same JSON decoder as the endpoint, so both name unknown fields alike.
func readSpec(file string) (rank.JobSpec, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return rank.JobSpec{}, fmt.Errorf("--spec: %w", err)
	}
	ext := strings.ToLower(filepath.Ext(file))
	if ext == ".yml" || ext == ".yaml" {
		var v any
		if err := yaml.Unmarshal(b, &v); err != nil {
			return rank.JobSpec{}, fmt.Errorf("--spec %s: %w", file, err)
		}
		if b, err = json.Marshal(v); err != nil {
			return rank.JobSpec{}, fmt.Errorf("--spec %s: %w", file, err)
		}
	}
	spec, err := httpapi.DecodeSpec(bytes.NewReader(b))
	if err != nil {
		return spec, fmt.Errorf("--spec %s: %w", file, err)
	}
	return spec, nil
}

func printPlan(w io.Writer, r *rank.PlanResult) {
	j := r.Job
	what := fmt.Sprintf("%s of %s (%.2gB params, %s)", j.Method, j.Model.Name, j.Model.ParamsB, j.Precision)
	if j.FromWorkload != "" {
		what = j.FromWorkload + ": " + what
	}
	fmt.Fprintf(w, "Plan for %s", what)
	if j.Tokens > 0 {
		fmt.Fprintf(w, ", %.4g tokens", j.Tokens)
	}
	if j.PeakTokensPerSecond > 0 {
		fmt.Fprintf(w, ", %g tokens/s peak for %g h/month", j.PeakTokensPerSecond, j.HoursPerMonth)
	}
	fmt.Fprintf(w, "; modes %v; costs in %s\n", j.Modes, r.Currency)
	m := r.Memory
	fmt.Fprintf(w, "Memory on one GPU: weights %.1f + gradients %.1f + optimizer %.1f + activations %.1f + KV cache %.1f = %.1f GB (a card holds 80%% of its memory)\n\n",
		m.WeightsGB, m.GradientsGB, m.OptimizerGB, m.ActivationsGB, m.KVCacheGB, m.TotalGB)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	serving := j.Method == rank.MethodServe && j.Tokens == 0
	if serving {
		fmt.Fprintln(tw, "#\tCARD\tSOURCE\tMODE\tGPUS\tTOK/S\tORIGIN\tPRICE/GPU-H\tCOST/MTOK\tGPUS NEEDED\tMONTHLY\tOFFER")
	} else {
		fmt.Fprintln(tw, "#\tCARD\tSOURCE\tMODE\tGPUS\tTOK/S\tORIGIN\tPRICE/GPU-H\tHOURS\tCOMPUTE\tHIDDEN\tTOTAL\tPESSIMISTIC\tCOST/MTOK\tOFFER")
	}
	for i, o := range r.Options {
		fit := ""
		if !o.Fits {
			fit = " (does not fit: " + o.Reason + ")"
		}
		if serving {
			needed, monthly := "-", "-"
			if o.Serving != nil {
				needed, monthly = fmt.Sprint(o.Serving.GPUsNeeded), fmt.Sprintf("%.2f", o.Serving.MonthlyCost)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%.0f\t%s\t%.4f\t%.4f\t%s\t%s\t%s%s\n", i+1, o.Card, o.Source, o.Mode, o.GPUs,
				o.TokensPerSecond, o.ThroughputOrigin, o.PricePerGPUHour, o.CostPerMillionTokens, needed, monthly, o.Offer, fit)
			continue
		}
		hidden := 0.0
		for _, v := range o.HiddenCosts {
			hidden += v
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%.0f\t%s\t%.4f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.4f\t%s%s\n", i+1, o.Card, o.Source, o.Mode, o.GPUs,
			o.TokensPerSecond, o.ThroughputOrigin, o.PricePerGPUHour, o.Hours, o.ComputeCost, hidden, o.TotalCost,
			o.PessimisticTotalCost, o.CostPerMillionTokens, o.Offer, fit)
	}
	tw.Flush()
	if len(r.Options) == 0 {
		fmt.Fprintln(w, "(no option: no eligible offer can hold this job; try --include-unfit or a larger --max-gpus)")
		return
	}
	if r.Considered > len(r.Options) {
		fmt.Fprintf(w, "\n%d of %d options shown (--limit).\n", len(r.Options), r.Considered)
	}
	// Explain the first option's numbers: every part, not only the total.
	o := r.Options[0]
	keys := make([]string, 0, len(o.HiddenCosts))
	for k := range o.HiddenCosts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, o.HiddenCosts[k]))
	}
	fmt.Fprintf(w, "\nBest: %s × %d on %s (%s, %s): %.0f tokens/s = %d × %.0f (%s) × scaling %.2f",
		o.Card, o.GPUs, o.Source, o.Offer, o.Mode, o.TokensPerSecond, o.GPUs, o.TokensPerSecondPerGPU, o.ThroughputOrigin, o.ScalingEfficiency)
	if o.Utilization > 0 {
		fmt.Fprintf(w, "; period price per used hour at %.0f%% use", o.Utilization*100)
		if o.BreakEvenUtilization != nil {
			fmt.Fprintf(w, " (on-demand is cheaper below %.0f%%)", *o.BreakEvenUtilization*100)
		}
	}
	if j.Tokens > 0 {
		fmt.Fprintf(w, "\n  %.2f h × %.4f %s/GPU-h × %d GPUs = %.2f compute; hidden: %s; total %.2f, pessimistic %.2f (30%% slower and one restart)\n",
			o.Hours, o.PricePerGPUHour, r.Currency, o.GPUs, o.ComputeCost, strings.Join(parts, ", "), o.TotalCost, o.PessimisticTotalCost)
	} else {
		fmt.Fprintln(w)
	}
	if o.OwnedBreakEvenMonthlyHours != nil {
		fmt.Fprintf(w, "  owning beats the cheapest rental of this card above %.0f used hours a month\n", *o.OwnedBreakEvenMonthlyHours)
	}
}
