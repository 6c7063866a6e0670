package profileimport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// The Hugging Face Trainer fields (transformers trainer_utils.py
// speed_metrics with split "train").
const (
	fieldHFTokens  = "train_tokens_per_second"
	fieldHFSamples = "train_samples_per_second"
	hfRuntime      = "train_runtime"
	hfBlockHeader  = "***** train metrics *****"
)

// hfValue is one metric as found: its text and, when it is a number, its
// value.
type hfValue struct {
	raw string
	v   float64
	ok  bool
}

// hfSummary is the final train metrics of a run and where they were found.
type hfSummary struct {
	metrics map[string]hfValue
	where   string
}

// parseHF reads the final train metrics of a Hugging Face Trainer run and
// turns them into tokens per second per GPU.
func parseHF(data []byte, opt Options) (figure, error) {
	s, err := hfFind(data)
	if err != nil {
		return figure{}, err
	}
	return hfFigure(s, opt)
}

// hfFind finds the final train summary: in a JSON document
// (trainer_state.json, train_results.json, all_results.json), else in text
// (the last log_metrics block or printed dict, whichever comes later).
func hfFind(data []byte) (hfSummary, error) {
	t := bytes.TrimSpace(data)
	if isJSONObject(t) {
		obj, err := decodeObject(t)
		if err != nil {
			return hfSummary{}, fmt.Errorf("%w: not valid JSON (truncated?): %v", ErrMalformed, err)
		}
		if lh, ok := obj["log_history"]; ok {
			return hfFromState(lh)
		}
		m := hfFromObject(obj)
		if !hfHasSpeed(m) {
			return hfSummary{}, fmt.Errorf("%w: the JSON object has neither log_history (trainer_state.json) nor %s / %s (train_results.json)", ErrNoFigure, fieldHFTokens, fieldHFSamples)
		}
		return hfSummary{m, "train metrics JSON (train_results.json / all_results.json)"}, nil
	}
	block := bytes.LastIndex(data, []byte(hfBlockHeader))
	dict := bytes.LastIndex(data, []byte("'"+hfRuntime+"'"))
	switch {
	case block < 0 && dict < 0:
		return hfSummary{}, fmt.Errorf("%w: no final train summary; expected trainer_state.json, train_results.json, a %q block or the dict the Trainer prints when training ends", ErrNoFigure, hfBlockHeader)
	case block > dict:
		return hfFromBlock(data[block+len(hfBlockHeader):])
	default:
		return hfFromDict(data, dict)
	}
}

// isJSONObject: the text opens a JSON object ({ then a quote or the end), as
// opposed to a Python dict ({').
func isJSONObject(t []byte) bool {
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	rest := bytes.TrimSpace(t[1:])
	return len(rest) == 0 || rest[0] == '"' || rest[0] == '}'
}

// hfFromState takes the last train summary entry of trainer_state.json's
// log_history: the entry Trainer logs once train() ends, the only one with
// train_runtime.
func hfFromState(raw json.RawMessage) (hfSummary, error) {
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return hfSummary{}, fmt.Errorf("%w: log_history is not a list: %v", ErrMalformed, err)
	}
	for i := len(entries) - 1; i >= 0; i-- {
		var e map[string]json.RawMessage
		if json.Unmarshal(entries[i], &e) != nil || e == nil {
			continue
		}
		m := hfFromObject(e)
		if _, ok := m[hfRuntime]; !ok && !hfHasSpeed(m) {
			continue
		}
		where := fmt.Sprintf("trainer_state.json log_history entry %d of %d", i+1, len(entries))
		if step, ok := m["step"]; ok && step.ok {
			where += " (step " + num(step.v) + ")"
		}
		return hfSummary{m, where}, nil
	}
	return hfSummary{}, fmt.Errorf("%w: trainer_state.json's log_history (%d entries) has no final train summary (the entry with %s that Trainer logs when train() ends): was the run finished?", ErrNoFigure, len(entries), hfRuntime)
}

func hfFromObject(obj map[string]json.RawMessage) map[string]hfValue {
	m := make(map[string]hfValue, len(obj))
	for k, raw := range obj {
		v, _, ok := jsonScalar(raw)
		m[k] = hfValue{raw: clean(string(raw), 40), v: v, ok: ok}
	}
	return m
}

func hfHasSpeed(m map[string]hfValue) bool {
	_, tok := m[fieldHFTokens]
	_, smp := m[fieldHFSamples]
	return tok || smp
}

var (
	hfBlockLine = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(\S+)\s*$`)
	hfDictPair  = regexp.MustCompile(`'([^'\\]+)'\s*:\s*([^,}]*)`)
)

// hfFromBlock reads the lines after a "***** train metrics *****" header
// (Trainer.log_metrics: "  key = value", aligned, maybe behind a logger
// prefix) up to the first line of another shape.
func hfFromBlock(rest []byte) (hfSummary, error) {
	m := map[string]hfValue{}
	first := true
	lines(rest, func(_ int, line []byte, _ bool) bool {
		if first { // the remainder of the header's own line
			first = false
			return true
		}
		if bytes.Contains(line, []byte("*****")) {
			return false
		}
		sm := hfBlockLine.FindSubmatch(line)
		if sm == nil {
			return len(m) == 0 && len(bytes.TrimSpace(line)) == 0
		}
		raw := string(sm[2])
		v, ok := parseScalar(raw)
		m[string(sm[1])] = hfValue{raw: clean(raw, 40), v: v, ok: ok}
		return true
	})
	if !hfHasSpeed(m) {
		return hfSummary{}, fmt.Errorf("%w: the %q block has neither %s nor %s", ErrNoFigure, hfBlockHeader, fieldHFTokens, fieldHFSamples)
	}
	return hfSummary{m, "the " + hfBlockHeader + " block"}, nil
}

// hfFromDict reads the Python dict around data[at:] (Trainer.log's final
// speed metrics as the progress or printer callback prints them: {'key':
// value, ...} on one line).
func hfFromDict(data []byte, at int) (hfSummary, error) {
	start := bytes.LastIndexByte(data[:at], '{')
	if nl := bytes.LastIndexByte(data[:at], '\n'); start < 0 || nl > start {
		return hfSummary{}, fmt.Errorf("%w: the printed train metrics dict has no opening brace on its line", ErrMalformed)
	}
	end := bytes.IndexByte(data[at:], '}')
	if nl := bytes.IndexByte(data[at:], '\n'); end < 0 || (nl >= 0 && nl < end) {
		return hfSummary{}, fmt.Errorf("%w: the printed train metrics dict is cut off (no closing brace on its line)", ErrMalformed)
	}
	m := map[string]hfValue{}
	for _, sm := range hfDictPair.FindAllSubmatch(data[start:at+end], -1) {
		raw := strings.TrimSpace(string(sm[2]))
		v, ok := parseScalar(raw)
		m[string(sm[1])] = hfValue{raw: clean(raw, 40), v: v, ok: ok}
	}
	if !hfHasSpeed(m) {
		return hfSummary{}, fmt.Errorf("%w: the printed train metrics dict has neither %s nor %s", ErrNoFigure, fieldHFTokens, fieldHFSamples)
	}
	return hfSummary{m, "the train metrics dict printed at the end of training"}, nil
}

// hfFigure picks the figure: train_tokens_per_second (per device) where
// logged, else train_samples_per_second (all processes) × sequence length ÷
// GPUs.
func hfFigure(s hfSummary, opt Options) (figure, error) {
	_, hasTok := s.metrics[fieldHFTokens]
	field := opt.Field
	if field == "" {
		field = fieldHFSamples
		if hasTok {
			field = fieldHFTokens
		}
	}
	val, ok := s.metrics[field]
	if !ok {
		hint := ""
		if field == fieldHFTokens {
			hint = " (transformers logs it only with TrainingArguments include_tokens_per_second=True; field " + fieldHFSamples + " with " + OptionSeqLen + " uses the samples instead)"
		}
		return figure{}, fmt.Errorf("%w: %s is not in %s%s", ErrNoFigure, field, s.where, hint)
	}
	if !val.ok {
		return figure{}, fmt.Errorf("%w: %s in %s is %q, not a number", ErrBadFigure, field, s.where, val.raw)
	}
	if err := checkFigure(field, val.v); err != nil {
		if field == fieldHFTokens && val.v == 0 {
			err = fmt.Errorf("%w (transformers logs 0 when it cannot count the dataloader's input_ids; field %s with %s uses the samples instead)", err, fieldHFSamples, OptionSeqLen)
		}
		return figure{}, err
	}
	head := "Hugging Face Trainer final train metrics, " + s.where + ": "
	if field == fieldHFTokens {
		d := head + field + " = " + asLogged(val) +
			", which transformers counts per device (the tokens of one process's dataloader ÷ train_runtime), so it is used as is"
		if opt.GPUs > 1 {
			d += " (the " + OptionGPUs + " option, " + plural(opt.GPUs, "GPU", "GPUs") + ", is not applied)"
		}
		return figure{value: val.v, field: field, detail: d + ": " + num2(val.v) + " tokens/s per GPU"}, nil
	}
	if opt.SeqLen <= 0 {
		why := fieldHFTokens + " is not logged"
		if hasTok {
			why = "field " + fieldHFSamples + " was asked for"
		}
		return figure{}, &OptionError{OptionSeqLen, why + " in " + s.where + "; " + fieldHFSamples + " needs the sequence length (tokens per sample) to become tokens per second"}
	}
	gpus, gpuNote := opt.GPUs, "the "+OptionGPUs+" option"
	if gpus == 0 {
		gpus, gpuNote = 1, "assumed: no "+OptionGPUs+" option given"
	}
	v := val.v * float64(opt.SeqLen) / float64(gpus)
	if math.IsInf(v, 0) {
		return figure{}, fmt.Errorf("%w: %s × %d overflows", ErrBadFigure, field, opt.SeqLen)
	}
	d := head + field + " = " + asLogged(val) +
		", which transformers counts over all processes (per-device batch × gradient accumulation × world size), × " +
		OptionSeqLen + " " + plural(opt.SeqLen, "token", "tokens") + " ÷ " + plural(gpus, "GPU", "GPUs") + " (" + gpuNote + ")" +
		": " + num2(v) + " tokens/s per GPU"
	return figure{value: v, field: field, detail: d}, nil
}

// asLogged shows a value as the input wrote it when that is a plain number,
// else as parsed (e.g. 2500.5 for np.float64(2500.5)).
func asLogged(v hfValue) string {
	if _, err := strconv.ParseFloat(v.raw, 64); err == nil {
		return v.raw
	}
	return num(v.v)
}
