package profileimport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// MaxInputBytes is the largest input Import reads: a trainer_state.json of a
// long run or a vLLM result saved with --save-detailed stays well below it.
// Callers reading a file or a request body should stop at this size too
// (e.g. http.MaxBytesReader(w, r.Body, MaxInputBytes+1)).
const MaxInputBytes = 16 << 20

// The formats Import knows, as named by Options.Format and Result.Format.
const (
	// FormatHFTrainer is Hugging Face transformers Trainer's final train
	// metrics: trainer_state.json, train_results.json / all_results.json, the
	// "***** train metrics *****" block or the dict printed at the end.
	FormatHFTrainer = "hf-trainer"
	// FormatTorchtune is torchtune's metric log (DiskLogger txt or jsonl,
	// StdoutLogger output).
	FormatTorchtune = "torchtune"
	// FormatVLLMServing is vLLM's benchmark_serving (vllm bench serve)
	// result JSON.
	FormatVLLMServing = "vllm-bench-serving"
)

// DefaultWarmupSteps is how many logged steps at the start of each torchtune
// run are left out of the median when Options.WarmupSteps is 0: the first
// steps carry compilation, allocator and data-loader warm-up.
const DefaultWarmupSteps = 3

// The option names an *OptionError names; the CLI flags and HTTP fields
// should use the same words.
const (
	OptionFormat = "format"
	OptionSeqLen = "seq-len"
	OptionGPUs   = "gpus"
	OptionField  = "field"
	OptionWarmup = "warmup"
	// OptionWorkload is the workload a figure is imported for (Match).
	OptionWorkload = "workload"
)

// Kind is what a log measured: a training run or a serving benchmark.
type Kind string

// The kinds of the known formats.
const (
	// KindTraining: trained tokens per second (Hugging Face Trainer,
	// torchtune).
	KindTraining Kind = "training"
	// KindServing: generated tokens per second of an inference server
	// (vLLM's serving benchmark).
	KindServing Kind = "serving"
)

// Options says how to read one input. The zero value detects the format and
// uses every default.
type Options struct {
	// Format is one of Formats(); empty detects it from the content.
	Format string
	// Name is what the note calls the input, usually the file name; empty
	// is "input".
	Name string
	// SeqLen is the tokens per training sample, needed only when a Hugging
	// Face run logged train_samples_per_second but not
	// train_tokens_per_second.
	SeqLen int
	// GPUs is how many GPUs the measured run used: the processes of a
	// training run, the tensor-parallel size of a vLLM server. It divides
	// figures that tools report for all GPUs together; 0 means not given
	// (one GPU is assumed where a division is needed, and the note says so).
	GPUs int
	// Field picks the figure where a format offers more than one (see
	// Fields); empty takes the format's default.
	Field string
	// WarmupSteps is how many logged steps of each torchtune run to leave
	// out: 0 is DefaultWarmupSteps, a negative value leaves none out.
	WarmupSteps int
}

// Result is one imported throughput figure.
type Result struct {
	// TokensPerSecondPerGPU is the figure, finite and > 0: trained tokens
	// for training formats, output tokens for serving (total tokens when
	// Field total_token_throughput was asked for).
	TokensPerSecondPerGPU float64
	// Format is the format read, one of Formats().
	Format string
	// Kind is what the format measures, training or serving.
	Kind Kind
	// Model is the model the input says it ran, as written (vLLM's
	// model_id); empty when the format records none (the Trainer's
	// metrics, torchtune's metric log).
	Model string
	// Field is the field of the input the figure comes from.
	Field string
	// Note names the input and the figure used and says how it became per
	// GPU; it is meant to be stored with the profile.
	Note string
}

// Errors Import wraps; every one is the input's or the options' fault.
var (
	// ErrUnknownFormat: the format option names no known format, or the
	// content matches none (or more than one) of them.
	ErrUnknownFormat = errors.New("unknown format")
	// ErrTooLarge: the input is over MaxInputBytes.
	ErrTooLarge = errors.New("input too large")
	// ErrEmpty: the input is empty or blank.
	ErrEmpty = errors.New("empty input")
	// ErrMalformed: the input is of the format but cannot be read (e.g.
	// truncated JSON).
	ErrMalformed = errors.New("malformed input")
	// ErrNoFigure: the input holds no throughput figure Import can use.
	ErrNoFigure = errors.New("no throughput figure")
	// ErrBadFigure: the figure is zero, negative, NaN, infinite or not a
	// number.
	ErrBadFigure = errors.New("invalid throughput figure")
)

// OptionError is a missing or invalid option; Option is one of the Option*
// names.
type OptionError struct {
	Option string
	Reason string
}

func (e *OptionError) Error() string { return "option " + e.Option + ": " + e.Reason }

// figure is what a format's parser finds: the per-GPU value, the field it
// comes from, and the note's text after the input's name.
type figure struct {
	value  float64
	field  string
	detail string
	model  string
}

type format struct {
	name     string
	kind     Kind
	describe string
	// markers: the content is taken for this format when it holds any.
	markers []string
	// fields: the Field values allowed; the first is the default.
	fields []string
	parse  func(data []byte, opt Options) (figure, error)
}

var formats = []format{
	{
		name:     FormatHFTrainer,
		kind:     KindTraining,
		describe: "Hugging Face Trainer trainer_state.json, train_results.json or printed train metrics",
		markers:  []string{`"log_history"`, "***** train metrics *****", "train_tokens_per_second", "train_samples_per_second"},
		fields:   []string{fieldHFTokens, fieldHFSamples},
		parse:    parseHF,
	},
	{
		name:     FormatTorchtune,
		kind:     KindTraining,
		describe: "torchtune DiskLogger/StdoutLogger metric log, txt or jsonl",
		markers:  []string{fieldTorchtune},
		fields:   []string{fieldTorchtune},
		parse:    parseTorchtune,
	},
	{
		name:     FormatVLLMServing,
		kind:     KindServing,
		describe: "vLLM benchmark_serving / vllm bench serve result JSON",
		markers:  []string{`"` + fieldVLLMOutput + `"`, `"` + fieldVLLMTotal + `"`},
		fields:   []string{fieldVLLMOutput, fieldVLLMTotal},
		parse:    parseVLLM,
	},
}

// Formats lists the names of the known formats.
func Formats() []string {
	out := make([]string, len(formats))
	for i, f := range formats {
		out[i] = f.name
	}
	return out
}

// Fields lists the Field values a format accepts, its default first; nil for
// an unknown format.
func Fields(format string) []string {
	for _, f := range formats {
		if f.name == format {
			return slices.Clone(f.fields)
		}
	}
	return nil
}

func knownFormats() string {
	parts := make([]string, len(formats))
	for i, f := range formats {
		parts[i] = f.name + " (" + f.describe + ")"
	}
	return "known formats: " + strings.Join(parts, "; ")
}

// Import reads one throughput figure from data, a log or result file of one
// of the known formats, and returns it per GPU with a note saying where it
// came from. It reads nothing but data.
func Import(data []byte, opt Options) (Result, error) {
	if len(data) > MaxInputBytes {
		return Result{}, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, len(data), MaxInputBytes)
	}
	if opt.GPUs < 0 {
		return Result{}, &OptionError{OptionGPUs, fmt.Sprintf("%d GPUs; give a count of 1 or more", opt.GPUs)}
	}
	if opt.SeqLen < 0 {
		return Result{}, &OptionError{OptionSeqLen, fmt.Sprintf("%d tokens per sample; give a length of 1 or more", opt.SeqLen)}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(data)) == 0 {
		return Result{}, ErrEmpty
	}
	f, err := pick(data, opt.Format)
	if err != nil {
		return Result{}, err
	}
	if opt.Field != "" && !slices.Contains(f.fields, opt.Field) {
		return Result{}, &OptionError{OptionField, fmt.Sprintf("%s has no field %q; its fields: %s", f.name, opt.Field, strings.Join(f.fields, ", "))}
	}
	fig, err := f.parse(data, opt)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", f.name, err)
	}
	if err := checkFigure("per-GPU figure", fig.value); err != nil {
		return Result{}, fmt.Errorf("%s: %w", f.name, err)
	}
	return Result{
		TokensPerSecondPerGPU: fig.value,
		Format:                f.name,
		Kind:                  f.kind,
		Model:                 fig.model,
		Field:                 fig.field,
		Note:                  displayName(opt.Name) + ": " + fig.detail,
	}, nil
}

// pick returns the format named, or else the one format whose markers the
// content holds.
func pick(data []byte, name string) (format, error) {
	if name != "" {
		for _, f := range formats {
			if f.name == name {
				return f, nil
			}
		}
		return format{}, fmt.Errorf("%w %q; %s", ErrUnknownFormat, name, knownFormats())
	}
	var hits []format
	for _, f := range formats {
		for _, m := range f.markers {
			if bytes.Contains(data, []byte(m)) {
				hits = append(hits, f)
				break
			}
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return format{}, fmt.Errorf("%w: the content matches none of the known formats; %s", ErrUnknownFormat, knownFormats())
	default:
		names := make([]string, len(hits))
		for i, f := range hits {
			names[i] = f.name
		}
		return format{}, fmt.Errorf("%w: the content looks like more than one format (%s); set the %s option", ErrUnknownFormat, strings.Join(names, ", "), OptionFormat)
	}
}

// checkFigure rejects what cannot be a throughput.
func checkFigure(field string, v float64) error {
	switch {
	case math.IsNaN(v):
		return fmt.Errorf("%w: %s is NaN", ErrBadFigure, field)
	case math.IsInf(v, 0):
		return fmt.Errorf("%w: %s is infinite", ErrBadFigure, field)
	case v <= 0:
		return fmt.Errorf("%w: %s is %s, not above zero", ErrBadFigure, field, num(v))
	}
	return nil
}

// parseScalar reads a number as Python prints one: 1234.5, 1e-05, nan, inf,
// a quoted string of one, or a wrapper such as tensor(1234.5,
// device='cuda:0') or np.float64(1234.5) of which only the first argument
// counts.
func parseScalar(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '('); i > 0 {
		s = s[i+1:]
		if j := strings.IndexAny(s, ",)"); j >= 0 {
			s = s[:j]
		}
		s = strings.TrimSpace(s)
	}
	s = strings.Trim(s, `'"`)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

// jsonScalar reads a JSON value as a number: a number, a numeric string, or
// the NaN / Infinity literals Python's json module writes (see pyJSON).
// present is false for null.
func jsonScalar(raw json.RawMessage) (v float64, present, ok bool) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return 0, false, false
	case raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, true, false
		}
		v, ok := parseScalar(s)
		return v, true, ok
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	return v, true, err == nil
}

// pyJSON rewrites the bare NaN, Infinity and -Infinity that Python's json
// module writes by default (allow_nan=True) into strings, so that
// encoding/json accepts the document and the figure can be reported as NaN
// rather than as a syntax error.
func pyJSON(b []byte) []byte {
	if !bytes.Contains(b, []byte("NaN")) && !bytes.Contains(b, []byte("Infinity")) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			out = append(out, c)
			continue
		}
		replaced := false
		for _, lit := range []string{"NaN", "Infinity", "-Infinity"} {
			if bytes.HasPrefix(b[i:], []byte(lit)) {
				out = append(out, '"')
				out = append(out, lit...)
				out = append(out, '"')
				i += len(lit) - 1
				replaced = true
				break
			}
		}
		if !replaced {
			out = append(out, c)
		}
	}
	return out
}

// decodeObject decodes a JSON object (after pyJSON) into its members.
func decodeObject(b []byte) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(pyJSON(b), &obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, errors.New("not a JSON object")
	}
	return obj, nil
}

// jsonString returns a JSON string member, cleaned for a note; "" when
// absent or not a string.
func jsonString(obj map[string]json.RawMessage, key string) string {
	var s string
	if json.Unmarshal(obj[key], &s) != nil {
		return ""
	}
	return clean(s, 80)
}

// num formats a figure as it was logged: the shortest exact form.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// num2 formats a derived figure to two decimals.
func num2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func displayName(name string) string {
	if s := clean(name, 200); s != "" {
		return s
	}
	return "input"
}

// clean makes a string from the input fit for a note: valid UTF-8, no
// control characters, at most max runes.
func clean(s string, max int) string {
	s = strings.ToValidUTF8(s, "?")
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == max {
			b.WriteString("…")
			break
		}
		if unicode.IsControl(r) {
			r = ' '
		}
		b.WriteRune(r)
		n++
	}
	return strings.TrimSpace(b.String())
}

// lines calls fn for each line of data (without its end of line) with its
// 1-based number; unterminated reports whether it is the final line and lacks a
// newline. fn returns false to stop.
func lines(data []byte, fn func(n int, line []byte, unterminated bool) bool) {
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		var line []byte
		unterminated := i < 0
		if unterminated {
			line, data = data, nil
		} else {
			line, data = data[:i], data[i+1:]
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if !fn(n, line, unterminated) {
			return
		}
	}
}
