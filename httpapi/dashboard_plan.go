package httpapi

// The plan page: a form whose fields are the job spec's, read from and
// written to the query string, and the plan it asks for.

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/rank"
)

// planPage is the plan form and, once submitted, the plan.
type planPage struct {
	page
	Card, Tokens                                                    string
	Workloads, Currencies, GPUs, Models, Methods, Precisions, Modes []option
	// Sets are the form's fieldsets of inputs named as the job spec's
	// fields; Modes are its checkboxes (Selected: checked).
	Sets   []planSet
	Result *rank.PlanResult
	Shown  []rank.Option
	// Serving (a serving job without tokens) is each option's fleet for
	// the load, billed for the job's months; TotalHead names the period.
	Serving   []servingRow
	TotalHead string
}

// planKind is how a plan form parameter becomes a job spec value.
type planKind int

const (
	kindText    planKind = iota
	kindNumber           // a finite number
	kindInteger          // an integer
	kindWhen             // the deadline: hours (a number) or a date
)

// planField is a parameter of the plan form, named as the job spec's field
// (Path is where it goes in the spec's JSON, "model.params_b") so that a
// plan is a shareable link that reads as the spec. A field with a Set is
// an input of that fieldset; the others are the form's selectors.
type planField struct {
	Name, Path, Set, Label, Title string
	Kind                          planKind
	// Value is the field's value as given (the form shows it).
	Value string
}

// Type, Step and DataKind are the field's input attributes; app.js reads
// data-path and data-kind to post the same spec to POST /v1/plan.
func (f planField) Type() string {
	if f.Kind == kindNumber || f.Kind == kindInteger {
		return "number"
	}
	return "text"
}

func (f planField) Step() string {
	if f.Kind == kindInteger {
		return "1"
	}
	return "any"
}

func (f planField) DataKind() string {
	return [...]string{kindText: "text", kindNumber: "number", kindInteger: "integer", kindWhen: "when"}[f.Kind]
}

// planSet is a fieldset of the plan form.
type planSet struct {
	ID, Legend string
	Fields     []planField
}

var planSets = []planSet{
	{ID: "plan-length", Legend: "Length and deadline"},
	{ID: "plan-shape", Legend: "Model by its shape (instead of a preset)"},
	{ID: "plan-load", Legend: "Serving load"},
	{ID: "plan-slo", Legend: "Service level (serving)"},
	{ID: "plan-hidden", Legend: "Hidden costs (empty: the provider's default)"},
}

// planFieldsDeclared are the plan form's parameters; planFields are those
// the job spec takes (a field still being added to it shows once it is).
var planFieldsDeclared = []planField{
	{Name: "workload", Path: "workload"},
	{Name: "tokens", Path: "tokens", Kind: kindNumber},
	{Name: "currency", Path: "currency"},
	{Name: "max_gpus", Path: "max_gpus", Kind: kindInteger},
	{Name: "card", Path: "card"},
	{Name: "limit", Path: "limit", Kind: kindInteger},
	{Name: "model", Path: "model.preset"},
	{Name: "method", Path: "method"},
	{Name: "precision", Path: "precision"},

	{Name: "seq_len", Path: "seq_len", Kind: kindInteger, Set: "plan-length", Label: "Sequence length", Title: "Training: tokens per sample (default 2048)"},
	{Name: "context", Path: "context", Kind: kindInteger, Set: "plan-length", Label: "Context", Title: "Serving: prompt and output tokens per request (default 1024 + 256)"},
	{Name: "output_tokens", Path: "output_tokens", Kind: kindInteger, Set: "plan-length", Label: "Output tokens", Title: "Serving: generated tokens per request (default a fifth of the context)"},
	{Name: "deadline", Path: "deadline", Kind: kindWhen, Set: "plan-length", Label: "Deadline", Title: "Training: hours from now (48) or a date (2027-03-01); only options done in time"},

	{Name: "params_b", Path: "model.params_b", Kind: kindNumber, Set: "plan-shape", Label: "Params (B)", Title: "Total parameters, billions"},
	{Name: "layers", Path: "model.layers", Kind: kindInteger, Set: "plan-shape", Label: "Layers", Title: "Transformer layers"},
	{Name: "hidden", Path: "model.hidden", Kind: kindInteger, Set: "plan-shape", Label: "Hidden size", Title: "The model's width (hidden_size)"},
	{Name: "heads", Path: "model.heads", Kind: kindInteger, Set: "plan-shape", Label: "Heads", Title: "Attention heads"},
	{Name: "kv_heads", Path: "model.kv_heads", Kind: kindInteger, Set: "plan-shape", Label: "KV heads", Title: "Key/value heads (grouped-query attention)"},
	{Name: "active_params_b", Path: "model.active_params_b", Kind: kindNumber, Set: "plan-shape", Label: "Active params (B)", Title: "Mixture-of-experts: parameters a token runs through, billions"},
	{Name: "experts", Path: "model.experts", Kind: kindInteger, Set: "plan-shape", Label: "Experts", Title: "Mixture-of-experts: experts per layer"},
	{Name: "experts_per_token", Path: "model.experts_per_token", Kind: kindInteger, Set: "plan-shape", Label: "Experts/token", Title: "Mixture-of-experts: experts each token runs through"},

	{Name: "peak_tokens_per_second", Path: "peak_tokens_per_second", Kind: kindNumber, Set: "plan-load", Label: "Peak tokens/s", Title: "Serving: output tokens per second at the peak"},
	{Name: "base_tokens_per_second", Path: "base_tokens_per_second", Kind: kindNumber, Set: "plan-load", Label: "Base tokens/s", Title: "Serving: the load outside the peak (committed GPUs carry it)"},
	{Name: "peak_hours_per_day", Path: "peak_hours_per_day", Kind: kindNumber, Set: "plan-load", Label: "Peak h/day", Title: "Serving: hours a day at the peak (0..24)"},
	{Name: "hours_per_month", Path: "hours_per_month", Kind: kindNumber, Set: "plan-load", Label: "Hours/month", Title: "Serving: hours a month the service runs (default 730)"},
	{Name: "months", Path: "months", Kind: kindNumber, Set: "plan-load", Label: "Months", Title: "Serving: the period the plan bills (default 1)"},

	{Name: "ttft_ms", Path: "slo.ttft_ms", Kind: kindNumber, Set: "plan-slo", Label: "TTFT ms", Title: "Serving: time to first token, milliseconds"},
	{Name: "tpot_ms", Path: "slo.tpot_ms", Kind: kindNumber, Set: "plan-slo", Label: "TPOT ms", Title: "Serving: time per output token, milliseconds"},
	{Name: "percentile", Path: "slo.percentile", Kind: kindNumber, Set: "plan-slo", Label: "Percentile", Title: "Serving: the percentile the latencies hold at"},
	{Name: "user_tokens_per_second", Path: "slo.user_tokens_per_second", Kind: kindNumber, Set: "plan-slo", Label: "User tokens/s", Title: "Serving: output tokens per second each user sees"},
	{Name: "cached_prompt_share", Path: "cached_prompt_share", Kind: kindNumber, Set: "plan-slo", Label: "Cached prompt share", Title: "Serving: share of prompt tokens served from the prefix cache (0..1)"},

	{Name: "startup_minutes", Path: "hidden.startup_minutes", Kind: kindNumber, Set: "plan-hidden", Label: "Start-up min", Title: "Billed minutes before work starts (default 15)"},
	{Name: "storage_gb", Path: "hidden.storage_gb", Kind: kindNumber, Set: "plan-hidden", Label: "Storage GB", Title: "Disk kept for the job"},
	{Name: "storage_days", Path: "hidden.storage_days", Kind: kindNumber, Set: "plan-hidden", Label: "Storage days", Title: "Days the disk is kept"},
	{Name: "egress_gb", Path: "hidden.egress_gb", Kind: kindNumber, Set: "plan-hidden", Label: "Egress GB", Title: "Data moved out (checkpoints, results)"},
	{Name: "checkpoint_minutes", Path: "hidden.checkpoint_minutes", Kind: kindNumber, Set: "plan-hidden", Label: "Checkpoint min", Title: "Minutes between checkpoints on spot (default 30)"},
	{Name: "restart_minutes", Path: "hidden.restart_minutes", Kind: kindNumber, Set: "plan-hidden", Label: "Restart min", Title: "Minutes lost per spot reclaim (default 10)"},
	{Name: "storage_price_gb_month", Path: "hidden.storage_price_gb_month", Kind: kindNumber, Set: "plan-hidden", Label: "Storage price/GB-month", Title: "In the job's currency; default per provider"},
	{Name: "egress_price_gb", Path: "hidden.egress_price_gb", Kind: kindNumber, Set: "plan-hidden", Label: "Egress price/GB", Title: "In the job's currency; default per provider"},
}

var planFields = slices.DeleteFunc(slices.Clone(planFieldsDeclared), func(f planField) bool { return !specTakes(f) })

// specTakes reports whether the job spec has the field: a value at its
// path decodes as POST /v1/plan decodes a body.
func specTakes(f planField) bool {
	var v any = 1
	if f.Kind == kindText {
		v = ""
	}
	doc := map[string]any{}
	putPath(doc, f.Path, v)
	b, _ := json.Marshal(doc)
	var spec rank.JobSpec
	return decodeStrict(bytes.NewReader(b), &spec, "a job spec") == nil
}

// putPath sets doc's value at a dotted path, making the objects on the way.
func putPath(doc map[string]any, path string, v any) {
	head, rest, nested := strings.Cut(path, ".")
	if !nested {
		doc[head] = v
		return
	}
	sub, _ := doc[head].(map[string]any)
	if sub == nil {
		sub = map[string]any{}
		doc[head] = sub
	}
	putPath(sub, rest, v)
}

// planParams are the plan page's parameters: the fields, modes (a
// checkbox each, so given once per mode) and mode, the other pages'
// comma-separated modes, which the navigation carries.
var planParams = func() []string {
	ps := []string{"modes", "mode"}
	for _, f := range planFields {
		ps = append(ps, f.Name)
	}
	return ps
}()

// checkPlanParams is checkParams for the plan page: modes may repeat.
func checkPlanParams(q url.Values) error {
	once := maps.Clone(q)
	delete(once, "modes")
	return checkParams(once, planParams...)
}

// queryModes are the modes a plan query names: modes (each checkbox, or a
// comma-separated list) and mode.
func queryModes(q url.Values) []string {
	var out []string
	for _, v := range slices.Concat(q["modes"], q["mode"]) {
		for _, m := range strings.Split(v, ",") {
			if m = strings.TrimSpace(m); m != "" && !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// PlanSpecFromQuery builds a job spec from the dashboard's plan form (a
// query string, so a plan is a shareable link): each parameter is the
// spec's field of the same name, decoded as POST /v1/plan decodes a body,
// and the spec then goes through the same checks.
func PlanSpecFromQuery(q url.Values) (rank.JobSpec, error) {
	if err := checkPlanParams(q); err != nil {
		return rank.JobSpec{}, err
	}
	doc := map[string]any{}
	for _, f := range planFields {
		v := strings.TrimSpace(q.Get(f.Name))
		if v == "" {
			continue
		}
		var val any = v
		n, err := strconv.ParseFloat(v, 64)
		number := err == nil && !math.IsNaN(n) && !math.IsInf(n, 0)
		switch f.Kind {
		case kindInteger:
			i, err := strconv.Atoi(v)
			if err != nil {
				return rank.JobSpec{}, pricewatch.Errorf(pricewatch.EInvalid, "%s: an integer, got %q", f.Name, v)
			}
			val = i
		case kindNumber:
			if !number {
				return rank.JobSpec{}, pricewatch.Errorf(pricewatch.EInvalid, "%s: a number, got %q", f.Name, v)
			}
			val = n
		case kindWhen:
			if number {
				val = n
			}
		}
		putPath(doc, f.Path, val)
	}
	if ms := queryModes(q); len(ms) > 0 {
		doc["modes"] = ms
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return rank.JobSpec{}, err
	}
	var spec rank.JobSpec
	if err := decodeStrict(bytes.NewReader(b), &spec, "a job spec"); err != nil {
		return spec, err
	}
	switch {
	case spec.Limit == 0:
		spec.Limit = 20
	case spec.Limit < 1 || spec.Limit > 200:
		return spec, pricewatch.Errorf(pricewatch.EInvalid, "limit: an integer within 1..200, got %d", spec.Limit)
	}
	return spec, nil
}

func (s *Server) dashboardPlan(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	v, err := s.view()
	if err != nil {
		return renderError(w, "plan", q, err)
	}
	snap := v.Snapshot
	if err := checkPlanParams(q); err != nil {
		return renderError(w, "plan", q, err)
	}
	st := planPage{page: page{Title: "Price a job", Nav: "plan", GeneratedAt: snap.GeneratedAt, Query: q, Data: s.dataNote()},
		Card: q.Get("card"), Tokens: q.Get("tokens")}
	// The form always sends a workload (empty: none, the model below); a
	// link may name only a model.
	_, submitted := q["workload"]
	submitted = submitted || q.Get("model") != "" || q.Get("params_b") != ""
	workload, modes := q.Get("workload"), queryModes(q)
	if !submitted {
		workload, st.Tokens = "lora-7b", "15000000"
	}
	if len(modes) == 0 {
		for _, m := range pricewatch.DefaultModes() {
			modes = append(modes, string(m))
		}
	}
	for _, set := range planSets {
		for _, f := range planFields {
			if f.Set == set.ID {
				f.Value = q.Get(f.Name)
				set.Fields = append(set.Fields, f)
			}
		}
		if len(set.Fields) > 0 {
			st.Sets = append(st.Sets, set)
		}
	}
	st.Workloads = options(workload, "", "none: the model below")
	for _, n := range snap.WorkloadNames() {
		st.Workloads = append(st.Workloads, option{Value: n, Label: n, Selected: n == workload})
	}
	st.Models = options(q.Get("model"), append([]string{"", "the workload's"}, pairs(rank.PresetNames())...)...)
	st.Methods = options(q.Get("method"), "", "the workload's", "full", "full fine-tune", "lora", "LoRA", "qlora", "QLoRA", "serve", "serve (inference)")
	st.Precisions = options(strings.ToLower(q.Get("precision")), append([]string{"", "the workload's"}, pairs([]string{
		rank.PrecisionBF16, rank.PrecisionFP16, rank.PrecisionFP8, rank.PrecisionFP4, rank.PrecisionMXFP4, rank.PrecisionInt8,
		rank.PrecisionNF4, rank.PrecisionInt4, rank.PrecisionAWQ, rank.PrecisionGPTQ, rank.PrecisionQ4KM, rank.PrecisionQ40})...)...)
	for _, m := range append(pricewatch.Modes(), rank.ModeBid) {
		st.Modes = append(st.Modes, option{Value: string(m), Label: string(m), Selected: slices.Contains(modes, string(m))})
	}
	cur := strings.ToUpper(q.Get("currency"))
	if cur == "" {
		cur = snap.Base
	}
	st.Currencies = options(cur, "USD", "USD", "CNY", "CNY", "EUR", "EUR")
	st.GPUs = options(q.Get("max_gpus"), "", "any", "1", "1", "2", "2", "4", "4", "8", "8")
	if !submitted {
		return render(w, "plan", http.StatusOK, st)
	}
	spec, err := PlanSpecFromQuery(q)
	if err == nil {
		st.Result, err = Plan(snap, spec, s.backend.Config().Owned)
	}
	if err != nil {
		pe, ok := err.(*pricewatch.Error)
		if !ok {
			return err
		}
		st.Error = pe.Message
		return render(w, "plan", statusOf(err), st)
	}
	st.Shown = st.Result.Options
	if job := st.Result.Job; job.Method == rank.MethodServe && job.Tokens == 0 {
		st.TotalHead = "= Total, " + monthsText(job.Months)
		for i, o := range st.Result.Options {
			st.Serving = append(st.Serving, servingRowOf(i+1, o))
		}
	}
	return render(w, "plan", http.StatusOK, st)
}
