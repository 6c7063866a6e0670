package profileimport

import (
	"bytes"
	"fmt"
	"math"
	"strings"
)

// The vLLM benchmark_serving result fields (benchmarks/benchmark_serving.py
// calculate_metrics: output tokens ÷ benchmark duration, and input + output
// tokens ÷ duration, for the whole server as the client saw it).
const (
	fieldVLLMOutput = "output_throughput"
	fieldVLLMTotal  = "total_token_throughput"
	// vllmTPKey is the --metadata key a result may carry the server's
	// tensor-parallel size under (vLLM's own argument name).
	vllmTPKey = "tensor_parallel_size"
)

// parseVLLM reads a benchmark_serving result JSON and divides the server's
// throughput by the GPUs the server used.
func parseVLLM(data []byte, opt Options) (figure, error) {
	t := bytes.TrimSpace(data)
	if len(t) == 0 || t[0] != '{' {
		return figure{}, fmt.Errorf("%w: a benchmark_serving result is a JSON object", ErrMalformed)
	}
	obj, err := decodeObject(t)
	if err != nil {
		return figure{}, fmt.Errorf("%w: not valid JSON (truncated?): %v", ErrMalformed, err)
	}
	field := opt.Field
	if field == "" {
		field = fieldVLLMOutput
	}
	raw, ok := obj[field]
	if !ok {
		hint := ""
		if _, total := obj[fieldVLLMTotal]; total && field == fieldVLLMOutput {
			hint = "; the result has only " + fieldVLLMTotal + " (a pooling benchmark?): set the " + OptionField + " option to " + fieldVLLMTotal + " to use it"
		}
		return figure{}, fmt.Errorf("%w: the result has no %s%s", ErrNoFigure, field, hint)
	}
	v, _, ok := jsonScalar(raw)
	if !ok {
		return figure{}, fmt.Errorf("%w: %s is %s, not a number", ErrBadFigure, field, clean(string(raw), 40))
	}
	if c, present, ok := jsonScalar(obj["completed"]); present && ok && c == 0 {
		return figure{}, fmt.Errorf("%w: no request completed, so %s says nothing about the server", ErrBadFigure, field)
	}
	if err := checkFigure(field, v); err != nil {
		return figure{}, err
	}

	gpus, gpuNote := opt.GPUs, "the "+OptionGPUs+" option"
	if gpus == 0 {
		tp, present, ok := jsonScalar(obj[vllmTPKey])
		switch {
		case present && ok && tp >= 1 && tp <= 1<<16 && tp == math.Trunc(tp):
			gpus, gpuNote = int(tp), vllmTPKey+" in the result's metadata"
		case present:
			gpus, gpuNote = 1, "assumed: no "+OptionGPUs+" option, and the "+vllmTPKey+" metadata "+clean(string(obj[vllmTPKey]), 20)+" is not a GPU count"
		default:
			gpus, gpuNote = 1, "assumed: no "+OptionGPUs+" option and no "+vllmTPKey+" metadata"
		}
	}
	per := v / float64(gpus)

	unit := "output tokens/s"
	if field == fieldVLLMTotal {
		unit = "tokens/s (input + output)"
	}
	d := "vLLM benchmark_serving result"
	var about []string
	model := jsonString(obj, "model_id")
	if model != "" {
		about = append(about, "model "+model)
	}
	if c, _, ok := jsonScalar(obj["completed"]); ok && c >= 1 && c == math.Trunc(c) && c < 1e12 {
		about = append(about, plural(int(c), "completed request", "completed requests"))
	}
	if len(about) > 0 {
		d += " (" + strings.Join(about, ", ") + ")"
	}
	d += ": " + field + " = " + clean(string(raw), 40) + " " + unit + " for the whole server ÷ " +
		plural(gpus, "GPU", "GPUs") + " (" + gpuNote + ") = " + num2(per) + " " + unit + " per GPU"
	other := fieldVLLMTotal
	if field == fieldVLLMTotal {
		other = fieldVLLMOutput
	}
	if _, _, ok := jsonScalar(obj[other]); ok {
		d += "; " + other + " was " + clean(string(obj[other]), 40)
	}
	if field == fieldVLLMTotal {
		d += "; note that pricewatch ranks serving by output tokens, which this figure does not separate from input tokens"
	}
	return figure{value: per, field: field, detail: d, model: model}, nil
}
