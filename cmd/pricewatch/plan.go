package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"go.yaml.in/yaml/v3"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/rank"
)

func runPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plan", stdout, stderr)
	var c common
	c.register(fs, false)
	specFile := fs.String("spec", "", "job spec file (YAML or JSON, the body of POST /v1/plan); flags override it")
	workload := fs.String("workload", "", "start from a named workload: lora-7b, qlora-7b, full-ft-7b, serve-7b")
	preset := fs.String("preset", "", "model preset ("+strings.Join(rank.PresetNames(), ", ")+")")
	modelConfig := fs.String("model-config", "", "the model as a Hugging Face config.json `FILE` (at most 1 MiB), read as published")
	method := fs.String("method", "", "full, lora, qlora or serve")
	precision := fs.String("precision", "", "bf16 (default), fp16, fp8 (compute; training keeps 16-bit weights), fp4 (serving), int8, nf4, int4 (weights)")
	optimizer := fs.String("optimizer-state", "", "optimizer state: bf16 (default) or fp32")
	tokens := fs.Float64("tokens", 0, "tokens to process (training)")
	seqLen := fs.Int("seq-len", 0, "sequence length (training)")
	microBatch := fs.Int("micro-batch", 0, "micro-batch per GPU (training)")
	ckpt := fs.String("checkpointing", "", "activation checkpointing: true or false")
	ctxTokens := fs.Int("context", 0, "tokens per request, in + out (serving)")
	concurrency := fs.Int("concurrency", 0, "concurrent requests to hold (serving)")
	peak := fs.Float64("peak-tps", 0, "peak generated tokens/s to serve (serving capacity)")
	base := fs.Float64("base-tps", 0, "serving: generated tokens/s all day (with --peak-tps: a fleet mixing committed and on-demand rentals)")
	peakHours := fs.Float64("peak-hours", 0, "serving: hours a day at the peak (default 8 with --base-tps)")
	ckptWrite := fs.Float64("checkpoint-write-seconds", 0, "training: seconds to write one checkpoint (default: the trained state at 1 GB/s)")
	hoursMonth := fs.Float64("hours-per-month", 0, "serving hours a month (default 730)")
	modes := fs.String("modes", "", "billing modes, comma-separated (default ondemand,spot); bid: marketplace bids, which a serving plan takes only when named")
	months := fs.Float64("months", 0, "serving: months the plan's total bills (default 1)")
	ttft := fs.Float64("ttft-ms", 0, "serving service level: time to first token, ms")
	tpot := fs.Float64("tpot-ms", 0, "serving service level: time per output token, ms")
	pct := fs.Float64("percentile", 0, "serving service level: the percentile of requests the targets hold for (50..99.9, default the median)")
	userTPS := fs.Float64("user-tps", 0, "serving service level: output tokens per second each user sees")
	cached := fs.Float64("cached-share", 0, "serving: share of each prompt already in the prefix cache, 0..0.99 (prefill is charged for the rest)")
	adpBalance := fs.Bool("attention-dp-balance", false, "serving: the engine's attention data-parallel balancer is on (TensorRT-LLM attention_dp_config.enable_balance)")
	expertA2A := fs.Bool("expert-all-to-all", false, "serving: expert-parallel tokens move by all-to-all (DeepEP, pplx, TensorRT-LLM MNNVL), not the engine's default gather")
	util := fs.Float64("utilization", 0, "committed modes: share of the period left after the job used for other work, 0..1 (shown as a credit, not deducted)")
	requireBF16 := fs.Bool("require-bf16", false, "leave out cards without bf16 (V100, T4) instead of training them in fp16")
	engine := fs.String("engine", "", "serving engine: "+strings.Join(rank.Engines(), ", ")+" (default vllm)")
	rate := fs.Float64("request-rate", 0, "serving: requests per second received (caps throughput at rate × output tokens)")
	avail := fs.String("available", "", "yes (default: offers not known to be out of stock) or any")
	maxGPUs := fs.Int("max-gpus", 0, "largest GPU count (default 8)")
	currency := fs.String("currency", "", "USD, CNY or EUR")
	card := fs.String("card", "", "only this card")
	unfit := fs.Bool("include-unfit", false, "list options that cannot hold the job, with the reason")
	limit := fs.Int("limit", 0, "options to list (default 50)")
	deadline := fs.String("deadline", "", "training: finish within this many wall-clock hours (48) or by this date (2027-03-01); a per-GPU offer then rents as many GPUs as that takes")
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
			return asInput(err)
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
	if set["preset"] && set["model-config"] {
		return usageError{"give --preset or --model-config, not both"}
	}
	if set["preset"] {
		spec.Model = &rank.ModelSpec{Preset: *preset}
	}
	if set["model-config"] {
		raw, err := readModelConfig(*modelConfig)
		if err != nil {
			return err
		}
		spec.Model = &rank.ModelSpec{Config: raw}
	}
	if set["tokens"] {
		spec.Tokens = *tokens
	}
	if set["deadline"] {
		raw := *deadline
		if _, err := strconv.ParseFloat(raw, 64); err != nil {
			raw = strconv.Quote(raw) // a date
		}
		var d rank.Deadline
		if err := json.Unmarshal([]byte(raw), &d); err != nil {
			return usageError{"--deadline: " + err.Error()}
		}
		spec.Deadline = &d
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
	if set["base-tps"] {
		spec.BaseTokensPerSecond = *base
	}
	if set["months"] {
		spec.Months = *months
	}
	if set["ttft-ms"] || set["tpot-ms"] || set["percentile"] || set["user-tps"] {
		slo := rank.SLO{}
		if spec.SLO != nil {
			slo = *spec.SLO
		}
		for _, f := range []struct {
			name string
			dst  *float64
			v    float64
		}{{"ttft-ms", &slo.TTFTms, *ttft}, {"tpot-ms", &slo.TPOTms, *tpot}, {"percentile", &slo.Percentile, *pct}, {"user-tps", &slo.UserTokensPerSecond, *userTPS}} {
			if set[f.name] {
				*f.dst = f.v
			}
		}
		spec.SLO = &slo
	}
	if set["cached-share"] {
		spec.CachedPromptShare = *cached
	}
	if set["attention-dp-balance"] {
		spec.AttentionDPBalance = *adpBalance
	}
	if set["expert-all-to-all"] {
		spec.ExpertAllToAll = *expertA2A
	}
	if set["peak-hours"] {
		spec.PeakHoursPerDay = *peakHours
	}
	if set["checkpoint-write-seconds"] {
		spec.CheckpointWriteSeconds = *ckptWrite
	}
	if set["utilization"] {
		spec.Utilization = *util
	}
	if set["modes"] {
		spec.Modes = strings.Split(*modes, ",")
	}
	if set["require-bf16"] {
		spec.RequireBF16 = *requireBF16
	}
	str("engine", &spec.Engine, *engine)
	str("available", &spec.Available, *avail)
	if set["request-rate"] {
		spec.RequestRate = *rate
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
	if spec.Workload == "" && spec.Model == nil {
		return usageError{"plan needs a job: --workload W (" + workloadList(cfg) + "), or a model (--preset P or --model-config FILE) " +
			"with --method, or --spec FILE; e.g. `pricewatch plan --demo --workload lora-7b --tokens 15e6` (bundled prices, offline)"}
	}
	var res *rank.PlanResult
	err = readOrAsk(ctx, cfg, *addr, stderr, func(p *pipeline.Pipeline) error {
		var err error
		res, err = httpapi.Plan(p.View().Snapshot, spec, cfg.Owned)
		return err
	}, func(addr string) error {
		// The daemon knows its own config's owned hardware, not this one's:
		// send it along (an entry of the same name replaces the daemon's).
		spec.Owned = cfg.Owned
		res = new(rank.PlanResult)
		return daemonJSON(ctx, http.MethodPost, addr, "/v1/plan", "", spec, res)
	})
	if err != nil {
		return err
	}
	if p := rank.NonFinite(res); p != "" {
		return fmt.Errorf("the plan has a number that is not finite (%s): a bug, please report it", p)
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
	what := fmt.Sprintf("%s of %s (%sB params, %s)", j.Method, j.Model.Name,
		strconv.FormatFloat(j.Model.ParamsB, 'g', 3, 64), j.Precision)
	if j.FromWorkload != "" {
		what = j.FromWorkload + ": " + what
	}
	fmt.Fprintf(w, "Plan for %s", what)
	if j.Tokens > 0 {
		fmt.Fprintf(w, ", %s tokens", tokenCount(j.Tokens))
	}
	if j.PeakTokensPerSecond > 0 {
		fmt.Fprintf(w, ", %g tokens/s peak for %g h/month", j.PeakTokensPerSecond, j.HoursPerMonth)
		if j.Months != 1 {
			fmt.Fprintf(w, " over %g months", j.Months)
		}
	}
	if slo := j.SLO; slo != nil {
		var t []string
		if slo.TTFTms > 0 {
			t = append(t, fmt.Sprintf("time to first token ≤ %g ms", slo.TTFTms))
		}
		if slo.TPOTms > 0 {
			t = append(t, fmt.Sprintf("per output token ≤ %g ms", slo.TPOTms))
		}
		if slo.UserTokensPerSecond > 0 {
			t = append(t, fmt.Sprintf("≥ %g tokens/s per user", slo.UserTokensPerSecond))
		}
		fmt.Fprintf(w, ", %s at p%g", strings.Join(t, ", "), max(slo.Percentile, rank.DefaultSLOPercentile))
	}
	if j.CachedPromptShare > 0 {
		fmt.Fprintf(w, ", %.0f%% of each prompt cached", j.CachedPromptShare*100)
	}
	if j.AttentionDPBalance {
		fmt.Fprint(w, ", attention-DP balancer on")
	}
	if j.RequireBF16 {
		fmt.Fprint(w, ", bf16 required")
	}
	fmt.Fprintf(w, "; modes %v; costs in %s\n", j.Modes, r.Currency)
	m := r.Memory
	if j.Method == rank.MethodServe {
		fmt.Fprintf(w, "Memory on one GPU: weights %.1f + KV cache %.1f + runtime reserve %.1f = %.1f GiB (the engine's share of the card holds it; more buys a larger batch)\n",
			m.WeightsGiB, m.KVCacheGiB, m.ReserveGiB, m.TotalGiB)
	} else {
		fmt.Fprintf(w, "Memory on one GPU: weights %.1f + gradients %.1f + optimizer %.1f + activations %.1f = %.1f GiB (a card holds 80%% of its capacity)\n",
			m.WeightsGiB, m.GradientsGiB, m.OptimizerGiB, m.ActivationsGiB, m.TotalGiB)
	}
	fmt.Fprintln(w, "Each option rents its offer's unit: a fixed instance or bundle whole, a per-GPU offer at the GPUs the job needs; identical offers are one row.")
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	serving := j.Method == rank.MethodServe && j.Tokens == 0
	if serving {
		fmt.Fprintln(tw, "#\tCARD\tSOURCE\tREGION\tMODE\tRENTED\tUSED\tMEMORY/GPU\tPRECISION\tTOK/S\tORIGIN\tPRICE/GPU-H\tUNIT/H\tCOST/MTOK\tGPUS NEEDED\tHEADROOM\tMONTHLY\tCOMPUTE\tHIDDEN\tTOTAL\tOFFER")
	} else {
		fmt.Fprintln(tw, "#\tCARD\tSOURCE\tREGION\tMODE\tRENTED\tUSED\tMEMORY/GPU\tPRECISION\tTOK/S\tORIGIN\tPRICE/GPU-H\tUNIT/H\tHOURS\tWALL\tBILLED\tCOMPUTE\tHIDDEN\tTOTAL\tPESSIMISTIC\tCOST/MTOK\tOFFER")
	}
	for i, o := range r.Options {
		offer := o.Offer
		if o.IdenticalOffers > 1 {
			offer += fmt.Sprintf(" (+%d identical)", o.IdenticalOffers-1)
		}
		if !o.Fits {
			offer += " (does not fit: " + o.Reason + ")"
		}
		region := o.Region
		if region == "" {
			region = "-"
		}
		head := fmt.Sprintf("%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%.0f\t%s\t%s\t%s", i+1, o.Card, o.Source, region, o.ModeLabel(),
			unitLabel(o.RentUnit, o.GPUs, 0), o.GPUsUsed, memoryLabel(o), o.Precision, o.TokensPerSecond, o.ThroughputOrigin,
			money(o.PricePerGPUHour), money(o.UnitPricePerHour))
		hidden := 0.0
		for _, v := range o.HiddenCosts {
			hidden += v
		}
		if serving {
			needed, headroom, monthly := "-", "-", "-"
			if sv := o.Serving; sv != nil && o.Fits {
				needed, monthly = plural(sv.GPUsNeeded, "GPU"), money(sv.MonthlyCost)
				if j.PeakTokensPerSecond > 0 {
					headroom = fmt.Sprintf("%.0f%%", sv.HeadroomPct)
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", head, money(o.CostPerMillionTokens), needed, headroom, monthly,
				money(o.ComputeCost), money(hidden), money(o.TotalCost), offer)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", head, money(o.Hours), money(o.WallClockHours)+" h", billedLabel(o), money(o.ComputeCost),
			money(hidden), money(o.TotalCost), money(o.PessimisticTotalCost), money(o.CostPerMillionTokens), offer)
	}
	tw.Flush()
	if len(r.Options) == 0 {
		where := "any card"
		if j.Card != "" {
			where = j.Card
		}
		if r.LateOffers > 0 {
			fmt.Fprintf(w, "(no option finishes within the deadline of %.4g h: %s of %s take longer; try a later --deadline or a larger --max-gpus)\n",
				j.DeadlineHours, plural(r.LateOffers, "offer"), where)
			return
		}
		if r.UnfitOffers > 0 {
			fmt.Fprintf(w, "(no option: %s of %s in modes %v cannot hold this job; try --include-unfit or a larger --max-gpus)\n",
				plural(r.UnfitOffers, "offer"), where, j.Modes)
		} else {
			fmt.Fprintf(w, "(no option: no available offer of %s in modes %v; try other --modes or --available any)\n", where, j.Modes)
		}
		return
	}
	if r.Considered > len(r.Options) {
		fmt.Fprintf(w, "\n%d of %d options shown (--limit).\n", len(r.Options), r.Considered)
	}
	fmt.Fprintln(w, "\nColumns are the JSON fields of --json: rented = gpus (rent_unit), used = gpus_used, memory_per_gpu_gib (memory_total_gib, layout), precision, tokens_per_second,")
	fmt.Fprintln(w, "throughput_origin, price_per_gpu_hour, unit_price_per_hour, hours, wall_clock_hours, billed_hours (periods_billed × period_hours), compute_cost, hidden_costs, total_cost,")
	fmt.Fprintln(w, "pessimistic_total_cost, cost_per_million_tokens, offer (identical_offers).")
	if serving {
		fmt.Fprintln(w, "Serving: gpus needed = serving.gpus_needed, headroom = serving.headroom_pct, monthly = serving.monthly_cost; compute + hidden = total_cost, the bill for serving.months.")
	}
	explainBest(w, r)
	printAPI(w, r)
	printFleets(w, r)
}

// printAPI shows the cheapest inference API selling a served model beside
// the self-hosted options, and the load where renting starts to pay.
func printAPI(w io.Writer, r *rank.PlanResult) {
	a := r.API
	if a == nil {
		return
	}
	fmt.Fprintf(w, "\nAPI: %s via %s (%s): %s in, %s out per million tokens", a.Model, a.Provider, a.Source,
		money(a.InputPricePerMillion), money(a.OutputPricePerMillion))
	if a.CachedInputPricePerMillion > 0 {
		fmt.Fprintf(w, ", %s cached", money(a.CachedInputPricePerMillion))
	}
	fmt.Fprintf(w, " = %s %s per million output tokens at this job's mix", money(a.CostPerMillionTokens), a.Currency)
	if a.MonthlyCost > 0 {
		fmt.Fprintf(w, "; %s a month at the load", money(a.MonthlyCost))
	}
	if a.Quantization != "" {
		fmt.Fprintf(w, "; served in %s", a.Quantization)
	}
	fmt.Fprintln(w)
	switch {
	case r.BreakEvenTokensPerDay != nil:
		fmt.Fprintf(w, "  self-hosting costs less above %s output tokens a day (%s, start-up and storage included)\n",
			tokenCount(*r.BreakEvenTokensPerDay), r.BreakEvenOption)
	case r.BreakEven == "never":
		fmt.Fprintln(w, "  no self-hosted option here costs less per token than the API, even fully used")
	}
	fmt.Fprintf(w, "  %s\n", a.Note)
}

// printFleets shows each card's cheapest mix of committed and on-demand
// rentals for a serving load with a base and a peak.
func printFleets(w io.Writer, r *rank.PlanResult) {
	if len(r.Fleets) == 0 {
		return
	}
	j := r.Job
	fmt.Fprintf(w, "\nServing fleets for %g tokens/s all day, %g for %g h a day (with 20%% headroom), per month in %s:\n",
		j.BaseTokensPerSecond, j.PeakTokensPerSecond, j.PeakHoursPerDay, r.Currency)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tCARD\tCOMMITTED\tON DEMAND (OFF PEAK/PEAK)\tMIX\tALL ON DEMAND\tALL COMMITTED\tSAVING")
	opt := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return money(*v)
	}
	for i, f := range r.Fleets {
		c, od := "-", "-"
		if f.Committed != nil {
			c = fmt.Sprintf("%d × %s %s (%s)", f.CommittedUnits, plural(f.Committed.GPUs, "GPU"), f.Committed.Mode, f.Committed.Source)
		}
		if f.OnDemand != nil {
			od = fmt.Sprintf("%d/%d × %s (%s)", f.OnDemandOffPeakUnits, f.OnDemandPeakUnits, plural(f.OnDemand.GPUs, "GPU"), f.OnDemand.Source)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s (%.0f%%)\n", i+1, f.Card, c, od, money(f.MonthlyCost),
			opt(f.AllOnDemandMonthly), opt(f.AllCommittedMonthly), money(f.Saving), f.SavingPct)
	}
	tw.Flush()
	if r.FleetsConsidered > len(r.Fleets) {
		fmt.Fprintf(w, "%d of %d fleets shown (--limit).\n", len(r.Fleets), r.FleetsConsidered)
	}
}

// memoryLabel is the memory per GPU of one copy of the model, with the
// total when it is sharded: "15.2 GiB", "71.0 GiB × 8 = 568 GiB", and a
// serving group's layout: "35.3 GiB × 4 = 141 GiB TP4".
func memoryLabel(o rank.Option) string {
	if o.MemoryPerGPUGiB == 0 {
		return "-"
	}
	group := 1
	if o.MemoryPerGPUGiB > 0 {
		group = int(math.Round(o.MemoryTotalGiB / o.MemoryPerGPUGiB))
	}
	if group <= 1 {
		return fmt.Sprintf("%.1f GiB", o.MemoryPerGPUGiB)
	}
	l := fmt.Sprintf("%.1f GiB × %d = %.0f GiB", o.MemoryPerGPUGiB, group, o.MemoryTotalGiB)
	if o.Layout != "" {
		l += " " + o.Layout
	}
	return l
}

// billedLabel is what the provider bills: hours, or whole periods.
func billedLabel(o rank.Option) string {
	if p := o.Periods(); p != "" {
		return p
	}
	return money(o.BilledHours) + " h"
}

// explainBest spells out the first option's numbers: every part, not only
// the total.
func explainBest(w io.Writer, r *rank.PlanResult) {
	j, o := r.Job, r.Options[0]
	if !o.Fits {
		return
	}
	keys := make([]string, 0, len(o.HiddenCosts))
	for k := range o.HiddenCosts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %s", k, money(o.HiddenCosts[k])))
	}
	region := o.Region
	if region == "" {
		region = "no region"
	}
	fmt.Fprintf(w, "\nBest: %s on %s (%s, %s, %s): rents %s (%s", o.Card, o.Source, o.Offer, o.ModeLabel(), region,
		plural(o.GPUs, "GPU"), o.RentUnit)
	if o.RentUnit == pricewatch.RentPerGPU {
		fmt.Fprintf(w, ", %s allowed", countsLabel(o.GPUCounts))
	}
	fmt.Fprintf(w, "), runs on %d", o.GPUsUsed)
	if o.Replicas > 1 {
		fmt.Fprintf(w, " as %d copies of the model", o.Replicas)
	}
	fmt.Fprintf(w, ": %.0f tokens/s = %d × %.0f (%s) × scaling %.2f; %s", o.TokensPerSecond, o.GPUsUsed,
		o.TokensPerSecondPerGPU, o.ThroughputOrigin, o.ScalingEfficiency, o.Precision)
	if o.PrecisionNote != "" {
		fmt.Fprintf(w, " (%s)", o.PrecisionNote)
	}
	fmt.Fprintln(w)
	if j.Tokens > 0 {
		if o.PeriodsBilled > 0 {
			fmt.Fprintf(w, "  %s h of work bills %d × %g h (%s) at %s = %s compute; %s h of the periods unused",
				money(o.Hours), o.PeriodsBilled, o.PeriodHours, o.Mode, money(o.PeriodPrice), money(o.ComputeCost), money(o.UnusedHours))
			if o.OtherWorkCredit > 0 {
				fmt.Fprintf(w, "; at %.0f%% other use they are worth %s (not deducted)", o.Utilization*100, money(o.OtherWorkCredit))
			}
			fmt.Fprintln(w)
		} else {
			fmt.Fprintf(w, "  %s h × %s %s/h for %s = %s compute\n", money(o.Hours), money(o.UnitPricePerHour), r.Currency,
				plural(o.GPUs, "GPU"), money(o.ComputeCost))
		}
		fmt.Fprintf(w, "  hidden: %s; total %s, pessimistic %s (30%% slower and one restart)\n",
			strings.Join(parts, ", "), money(o.TotalCost), money(o.PessimisticTotalCost))
	}
	if sv := o.Serving; sv != nil && j.Tokens == 0 {
		fmt.Fprintf(w, "  %s × %s at %s %s/h, %s h a month each = %s a month (storage and egress included); over %g month(s): compute %s + hidden %s = total %s; first invoice %s\n",
			plural(sv.Instances, "instance"), plural(o.GPUs, "GPU"), money(o.UnitPricePerHour), r.Currency, money(sv.BilledHoursPerMonth),
			money(sv.MonthlyCost), sv.Months, money(o.ComputeCost), money(o.TotalCost-o.ComputeCost), money(o.TotalCost), money(sv.FirstInvoice))
		if j.PeakTokensPerSecond > 0 {
			fmt.Fprintf(w, "  carries %.0f tokens/s against a %g peak (%.0f%% headroom); %s per million tokens at the expected load\n",
				sv.CapacityTokensPerSecond, j.PeakTokensPerSecond, sv.HeadroomPct, money(sv.CostPerMillionTokensAtLoad))
		}
		if sv.SequencesPerInstance > 0 {
			fmt.Fprintf(w, "  each instance runs %.0f sequences: time to first token %.0f ms, per output token %.1f ms (estimated", sv.SequencesPerInstance, sv.TTFTms, sv.TPOTms)
			if j.SLO != nil {
				fmt.Fprintf(w, ", at p%g", max(j.SLO.Percentile, rank.DefaultSLOPercentile))
			}
			fmt.Fprintln(w, ")")
		}
	} else if o.FirstInvoice > 0 && o.FirstInvoice < o.TotalCost {
		fmt.Fprintf(w, "  first invoice (the first 730 h): %s\n", money(o.FirstInvoice))
	}
	if o.DeadlineRisk != "" {
		fmt.Fprintf(w, "  %s\n", o.DeadlineRisk)
	}
	if o.OnDemandTotalCost != nil {
		fmt.Fprintf(w, "  the same job on demand: %s %s", money(*o.OnDemandTotalCost), r.Currency)
		if o.CommitmentNote != "" {
			fmt.Fprintf(w, "; %s", o.CommitmentNote)
		}
		fmt.Fprintln(w)
	}
	switch {
	case o.BreakEvenUtilization != nil:
		fmt.Fprintf(w, "  beats the cheapest on-demand offer of %s (%s %s/GPU-h) when at least %.0f%% of each period is used\n",
			o.Card, money(*o.OnDemandPerGPUHour), r.Currency, *o.BreakEvenUtilization*100)
	case o.BreakEven == "never":
		fmt.Fprintf(w, "  never beats the cheapest on-demand offer of %s: %s %s/GPU-h on demand, %s committed, even at full use\n",
			o.Card, money(*o.OnDemandPerGPUHour), r.Currency, money(o.PricePerGPUHour))
	}
	if b := o.Billing; b != nil {
		fmt.Fprintf(w, "  billed %s (%s)\n", billingLabel(*b), b.Terms["increment_seconds"])
	}
	if o.Bid {
		fmt.Fprintln(w, "  the spot price is a bid (the market's minimum, disk included): kept only until someone bids more")
	}
	if sp := o.Spot; sp != nil && o.Serving != nil && sp.Availability > 0 {
		fmt.Fprintf(w, "  spot: %.3g reclaims/h (%s): %.3g restarts a month over %s, each down %s min; up %.2f%% of the time, so %s to carry the peak\n",
			o.ReclaimsPerHour, sp.ReclaimBasis, o.Serving.RestartsPerMonth, plural(o.Serving.Instances, "instance"),
			money(j.Hidden.RestartMinutes), sp.Availability*100, plural(o.Serving.Instances, "instance"))
	} else if sp != nil {
		if sp.CheckpointIntervalMinutes > 0 {
			fmt.Fprintf(w, "  spot: %.3g reclaims/h (%s); checkpoint every %s min (%s s to write, Young/Daly): %s h writing, %.2g restarts, %s h of work lost\n",
				o.ReclaimsPerHour, sp.ReclaimBasis, money(sp.CheckpointIntervalMinutes), money(sp.CheckpointWriteSeconds), money(sp.CheckpointHours),
				sp.ExpectedRestarts, money(sp.ExpectedLostHours))
		} else {
			fmt.Fprintf(w, "  spot: %.3g reclaims/h (%s); no checkpoint needed before the job's end, %.2g restarts expected\n", o.ReclaimsPerHour, sp.ReclaimBasis, sp.ExpectedRestarts)
		}
		if sp.BreakEven == "any" {
			fmt.Fprintf(w, "  beats the cheapest on-demand offer of %s at any reclaim rate (a reclaim costs nothing here)\n", o.Card)
		}
		if sp.BreakEvenReclaimsPerHour != nil {
			fmt.Fprintf(w, "  beats the cheapest on-demand offer of %s below %.3g reclaims an hour\n", o.Card, *sp.BreakEvenReclaimsPerHour)
		}
	}
	switch {
	case o.OwnedBreakEvenMonthlyHours != nil:
		fmt.Fprintf(w, "  owning beats the cheapest hourly rental of this card above %.0f used hours a month\n", *o.OwnedBreakEvenMonthlyHours)
	case o.OwnedBreakEven == "never":
		fmt.Fprintln(w, "  owning never beats the cheapest hourly rental of this card within its write-off period")
	}
}

// countsLabel writes allowed GPU counts: "1-8", "1, 2, 4, 8".
func countsLabel(c []int) string {
	if len(c) == 0 {
		return "-"
	}
	if c[len(c)-1]-c[0] == len(c)-1 {
		if len(c) == 1 {
			return strconv.Itoa(c[0])
		}
		return fmt.Sprintf("%d-%d", c[0], c[len(c)-1])
	}
	s := make([]string, len(c))
	for i, n := range c {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// billingLabel writes a billing rule: "per second, 60 s minimum",
// "per hour, 1 h minimum, at most 672 h a month".
func billingLabel(b rank.BillingRule) string {
	var s string
	switch inc := b.IncrementSeconds; {
	case inc == 1:
		s = "per second"
	case inc == 60:
		s = "per minute"
	case inc == 3600:
		s = "per hour"
	default:
		s = fmt.Sprintf("per %g s", inc)
	}
	if b.RoundDown {
		s += " (part increments free)"
	}
	if b.MinimumSeconds > 0 {
		s += fmt.Sprintf(", %g s minimum", b.MinimumSeconds)
	}
	if b.MonthlyCapHours > 0 {
		s += fmt.Sprintf(", at most %g h a month", b.MonthlyCapHours)
	}
	if b.FreeEgressGB > 0 {
		s += fmt.Sprintf(", %g GB egress free a month", b.FreeEgressGB)
	}
	return s
}
