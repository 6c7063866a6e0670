package rank

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

//go:embed data/throughput.csv
var throughputCSV []byte

// Measurement is one row of the reference throughput.csv: a published
// throughput with the estimation model's figure for the same setting.
type Measurement struct {
	ID string
	// Category is training, inference or seed_example.
	Category string
	// Workload is pretrain, full_finetune, lora, qlora, decode_batch1,
	// serve_offline_max, serve_online, serve_concurrency, mlperf_offline or
	// serve_decode_only (the decode GPUs of a disaggregated deployment,
	// whose prompts are prefilled elsewhere).
	Workload  string
	Model     string
	ParamsB   float64
	Framework string
	// Precision is the compute precision as published (bf16, fp16, fp8,
	// "fp8 linear", fp4, "bf16 + int4", "bf16 + nf4", q4_k_m).
	Precision string
	SeqLen    int
	// ISL and OSL are the inference tokens in and out per request.
	ISL, OSL int
	// Batch is batch, concurrency or request rate as published (free text).
	Batch string
	// Card is the canonical card id.
	Card string
	GPUs int
	// TokensPerSecond is the measurement, per GPU.
	TokensPerSecond float64
	// Recompute is activation recomputation: yes, partial, no or unknown.
	Recompute string
	// K is the FLOPs per parameter per token the reference estimate used
	// (training rows).
	K float64
	// EstimateTokensPerSecond is the reference estimation model's figure.
	EstimateTokensPerSecond float64
	// Calibration is the reference's vetting (use_in_calibration): only
	// vetted rows apply as published profiles. Rows added after the
	// reference say no: they are calibration data, not profiles.
	Calibration bool
	SourceURL   string
	Notes       string
	// Publisher is who published the figure (one publication series:
	// "nvidia-trtllm-perf", "mosaicml-llm-foundry"); the calibration
	// leaves one publisher out at a time.
	Publisher string
	// Shape is the model's (layers, hidden, heads, KV heads, head dim).
	Shape Model
	// TP and PP are the serving layout published (0: not stated);
	// MicroBatch and GradAccum the training micro-batch and accumulation.
	TP, PP, MicroBatch, GradAccum int
	// VP and CP are a training run's virtual pipeline stages and context
	// parallelism (0: not stated).
	VP, CP int
	// EngineVersion is the software as published; KVPrecision the KV
	// cache's precision where stated.
	EngineVersion, KVPrecision string
	// Split is what the calibration does with the row: "fit" (the
	// constants are fitted on it), "holdout" (never fitted on: the
	// out-of-sample check) or "no-fit" (not a clean measurement of its
	// setting, SplitNote says why; priced, never fitted on).
	Split, SplitNote string
	// Preset is the model preset the row ran (its shape, experts and
	// attention from the model's config.json); "" for rows given by shape.
	Preset string
	// EP is the expert parallelism published ("ep=N" opening notes; 0:
	// none stated).
	EP int
	// MoEKernel is the MoE kernel family the run states its engine ran,
	// where that is not what the engine runs by default today (an older
	// version, a backend chosen by flag); "": the default.
	MoEKernel string
}

// Row splits of throughput.csv (Measurement.Split).
const (
	SplitFit     = "fit"
	SplitHoldout = "holdout"
	SplitNoFit   = "no-fit"
)

// measurements is the embedded throughput.csv, parsed once; read-only.
var measurements = mustParseMeasurements(throughputCSV)

// measurementsByCard indexes measurements by canonical card id (Published
// runs for every card × workload when profiles are seeded).
var measurementsByCard = func() map[string][]Measurement {
	m := map[string][]Measurement{}
	for _, r := range measurements {
		m[r.Card] = append(m[r.Card], r)
	}
	return m
}()

func mustParseMeasurements(b []byte) []Measurement {
	ms, err := parseMeasurements(bytes.NewReader(b))
	if err != nil {
		panic(fmt.Sprintf("rank: embedded throughput.csv: %v", err))
	}
	return ms
}

func parseMeasurements(r io.Reader) ([]Measurement, error) {
	cr := csv.NewReader(r)
	header, err := cr.Read()
	if err != nil {
		return nil, err
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, h := range []string{"id", "category", "workload", "params_b", "precision", "canonical_id",
		"tokens_per_sec_per_gpu", "estimate_tokens_per_sec_per_gpu", "use_in_calibration"} {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("missing column %q", h)
		}
	}
	var out []Measurement
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		get := func(h string) string {
			if i, ok := col[h]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		var perr error
		num := func(h string) float64 {
			s := get(h)
			if s == "" || perr != nil {
				return 0
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				perr = fmt.Errorf("line %d: %s: %w", line, h, err)
			}
			return v
		}
		m := Measurement{
			ID: get("id"), Category: get("category"), Workload: get("workload"), Model: get("model"),
			ParamsB: num("params_b"), Framework: get("framework"), Precision: get("precision"),
			SeqLen: int(num("seq_len")), ISL: int(num("isl")), OSL: int(num("osl")),
			Batch: get("batch"), Card: get("canonical_id"), GPUs: int(num("num_gpus")),
			TokensPerSecond: num("tokens_per_sec_per_gpu"), Recompute: get("activation_recompute"),
			K: num("flops_per_token_factor_k"), EstimateTokensPerSecond: num("estimate_tokens_per_sec_per_gpu"),
			Calibration: get("use_in_calibration") == "yes", SourceURL: get("source_url"), Notes: get("notes"),
			Publisher: get("publisher"), EngineVersion: get("engine_version"), KVPrecision: get("kv_cache_precision"),
			Split: get("split"), SplitNote: get("split_note"), Preset: get("preset"), MoEKernel: get("moe_kernel"),
			TP: int(num("tp")), PP: int(num("pp")), MicroBatch: int(num("micro_batch")), GradAccum: int(num("grad_accum")),
			VP: int(num("vp")), CP: int(num("cp")),
			Shape: Model{Name: get("model"), ParamsB: num("params_b"), Layers: int(num("layers")), Hidden: int(num("hidden")),
				Heads: int(num("heads")), KVHeads: int(num("kv_heads")), HeadDim: int(num("head_dim"))},
		}
		if n, ok := strings.CutPrefix(m.Notes, "ep="); ok {
			end := strings.IndexFunc(n, func(r rune) bool { return r < '0' || r > '9' })
			if end > 0 {
				m.EP, _ = strconv.Atoi(n[:end])
			}
		}
		if m.MoEKernel != "" && !moeKernelFamilies()[m.MoEKernel] {
			return nil, fmt.Errorf("line %d: moe_kernel %q: not a MoE kernel family (engines.csv moe_kernel, %s or %s)", line, m.MoEKernel, MoEKernelMarlin, MoEKernelAITER)
		}
		switch m.Split {
		case SplitFit, SplitHoldout, SplitNoFit, "":
		default:
			return nil, fmt.Errorf("line %d: split %q: want fit, holdout or no-fit", line, m.Split)
		}
		if perr != nil {
			return nil, perr
		}
		if m.ID == "" || m.Card == "" || m.ParamsB <= 0 || m.TokensPerSecond <= 0 {
			return nil, fmt.Errorf("line %d: id, canonical_id, params_b and tokens_per_sec_per_gpu are required", line)
		}
		out = append(out, m)
	}
}

// Measurements returns every row of the embedded throughput.csv in file
// order, seed examples included (a fresh copy).
func Measurements() []Measurement { return slices.Clone(measurements) }

// CategorySeedExample marks throughput.csv rows that are worked examples, not
// measurements; they never apply as published profiles.
const CategorySeedExample = "seed_example"

// Published is the published throughput for the workload on the card, from
// throughput.csv (DESIGN.md "Which throughput applies"). A row applies when
//   - its category is training and its workload matches the method (full:
//     full_finetune or pretrain; lora: lora; qlora: qlora), or its category
//     is inference with workload serve_offline_max for serving, with the
//     same tokens in and out per request;
//   - its compute precision is the workload's: 16-bit (bf16/fp16) for
//     16-bit workloads, fp8 for fp8 training or serving, fp4 for fp4
//     serving, "bf16 + int4"/"bf16 + nf4" for QLoRA on a 4-bit base; fp8
//     and fp4 rows never apply to a 16-bit workload;
//   - its parameter count is within ±25% of the workload's;
//   - it is not a seed_example. Whether the row was used for calibration
//     does not matter: it is a published measurement all the same.
//
// Each row's tokens/s is scaled by row params / workload params; several
// rows give their median, and Note lists the row ids. Origin is published.
func Published(w Workload, cardID string) (Profile, bool) {
	p := Profile{Card: cardID, Workload: w.Name, Origin: OriginPublished}
	if w.Model.ParamsB <= 0 {
		return p, false
	}
	var ids []string
	var vals []float64
	var rows []Measurement
	for _, m := range measurementsByCard[cardID] {
		if !applies(m, w) {
			continue
		}
		rows = append(rows, m)
		ids = append(ids, m.ID)
		vals = append(vals, m.TokensPerSecond*m.ParamsB/w.Model.ParamsB)
	}
	if len(vals) == 0 {
		return p, false
	}
	p.TokensPerSecond = Median(vals)
	if len(ids) == 1 {
		m := rows[0]
		p.Note = fmt.Sprintf("published: %s (%s %gB, %s, %d GPU)", m.ID, m.Model, m.ParamsB, m.Framework, m.GPUs)
	} else {
		p.Note = fmt.Sprintf("published: median of %d rows: %s", len(ids), strings.Join(ids, ", "))
	}
	p.Note += fmt.Sprintf("; tokens/s scaled by parameter count to %gB", w.Model.ParamsB)
	return p, true
}

// applies reports whether a measurement matches the workload (card aside).
func applies(m Measurement, w Workload) bool {
	// Only rows THROUGHPUT.md vetted for calibration count: the others
	// carry caveats (torchtune rows above the dense peak, token bases not
	// stated, quantized decode), and seed examples are not measurements.
	if m.Category == CategorySeedExample || !m.Calibration {
		return false
	}
	// A mixture-of-experts is priced only by rows of the same model: its
	// parameter count says nothing of its speed.
	if w.Model.MoE() && m.Preset != w.Model.Name || m.Preset != "" && Presets()[m.Preset].MoE() && m.Preset != w.Model.Name {
		return false
	}
	if math.Abs(m.ParamsB-w.Model.ParamsB) > 0.25*w.Model.ParamsB {
		return false
	}
	prec := strings.ToLower(m.Precision)
	sixteen := prec == "bf16" || prec == "fp16"
	// The row's compute precision must be the job's.
	var samePrecision bool
	switch w.computePrecision() {
	case PrecisionFP8:
		samePrecision = strings.HasPrefix(prec, "fp8")
	case PrecisionFP4:
		samePrecision = prec == "fp4"
	default:
		samePrecision = sixteen && w.WeightBytes == 2
	}
	switch w.Method {
	case MethodFull:
		return m.Category == "training" && (m.Workload == "full_finetune" || m.Workload == "pretrain") && samePrecision
	case MethodLoRA:
		return m.Category == "training" && m.Workload == "lora" && samePrecision
	case MethodQLoRA:
		return m.Category == "training" && m.Workload == "qlora" && w.WeightBytes < 1 &&
			(prec == "bf16 + int4" || prec == "bf16 + nf4")
	case MethodServe:
		// Serving throughput depends on the KV-cache footprint per token, so
		// a row applies only to a model with the same KV shape (THROUGHPUT.md:
		// run the formula for another shape rather than scale by params),
		// and only to a saturated engine.
		return m.Category == "inference" && m.Workload == "serve_offline_max" &&
			m.ISL == w.InputTokens && m.OSL == w.OutputTokens && sameKVShape(m, w) &&
			w.RequestRate == 0 && (w.Engine == "" || w.Engine == EngineVLLM || w.Engine == EngineTRT) &&
			(prec == "fp8" && w.computePrecision() == PrecisionFP8 || prec == "fp4" && w.computePrecision() == PrecisionFP4 ||
				sixteen && w.computePrecision() == PrecisionBF16 && w.WeightBytes == 2)
	}
	return false
}

// Median of a non-empty slice (the mean of the middle two for an even
// count); v is not changed.
func Median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// kvShapes are the KV-cache shapes (layers × KV heads × head dim) of the
// models whose serving rows throughput.csv holds.
var kvShapes = map[string]int{
	"Llama-3-8B":    32 * 8 * 128,
	"Llama-3.1-8B":  32 * 8 * 128,
	"Llama-2-70B":   80 * 8 * 128,
	"Llama-3.1-70B": 80 * 8 * 128,
}

func sameKVShape(m Measurement, w Workload) bool {
	shape, ok := kvShapes[m.Model]
	return ok && shape == w.Model.Layers*w.Model.kvHeads()*w.Model.headDim()
}
