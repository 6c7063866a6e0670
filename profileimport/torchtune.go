package profileimport

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/pricewatch/pricewatch/rank"
)

// fieldTorchtune is the per-step figure torchtune's recipes log: the step's
// unmasked tokens across all ranks ÷ (step time × world size).
const fieldTorchtune = "tokens_per_second_per_gpu"

var (
	// ttStep: the head of a DiskLogger/StdoutLogger txt line, "Step N | ".
	ttStep = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])Step (\d+) \| `)
	// ttValue: "tokens_per_second_per_gpu:value" in such a line; the value
	// may be a tensor repr (tensor(1234.5, device='cuda:0')), cut at the
	// space, which parseScalar reads.
	ttValue = regexp.MustCompile(`(?:^|\s)` + fieldTorchtune + `:(\S+)`)
)

type ttEntry struct {
	line int
	step int
	v    float64
}

// parseTorchtune takes the median tokens_per_second_per_gpu over the logged
// steps of a torchtune metric log, leaving out the first warm-up steps of
// each run (a run restarts where the step number does not increase, as when
// a resumed job appends to the same DiskLogger file).
func parseTorchtune(data []byte, opt Options) (figure, error) {
	var (
		entries       []ttEntry
		txt, jsonl    bool
		skippedFinal  bool
		err           error
		maxStepDigits = 12
	)
	lines(data, func(n int, line []byte, unterminated bool) bool {
		t := bytes.TrimSpace(line)
		if bytes.HasPrefix(t, []byte(`{"`)) {
			if !bytes.Contains(t, []byte(fieldTorchtune)) {
				return true // another metric or another JSON line
			}
			obj, derr := decodeObject(t)
			if derr != nil {
				if unterminated {
					skippedFinal = true // a line still being written
					return true
				}
				err = fmt.Errorf("%w: line %d is not valid JSON: %v", ErrMalformed, n, derr)
				return false
			}
			raw, ok := obj[fieldTorchtune]
			if !ok {
				return true
			}
			sv, _, sok := jsonScalar(obj["step"])
			if !sok || sv < 0 || sv > 1e12 || sv != math.Trunc(sv) {
				err = fmt.Errorf("%w: line %d has %s but no whole step number", ErrMalformed, n, fieldTorchtune)
				return false
			}
			v, _, vok := jsonScalar(raw)
			if !vok {
				err = fmt.Errorf("%w: line %d (step %d): %s is %s, not a number", ErrBadFigure, n, int(sv), fieldTorchtune, clean(string(raw), 40))
				return false
			}
			jsonl = true
			entries = append(entries, ttEntry{n, int(sv), v})
			return true
		}
		loc := ttStep.FindSubmatchIndex(line)
		if loc == nil {
			return true
		}
		if unterminated { // DiskLogger ends every line: this one was cut off
			skippedFinal = true
			return true
		}
		vm := ttValue.FindSubmatch(line[loc[1]:])
		if vm == nil {
			return true
		}
		digits := line[loc[2]:loc[3]]
		if len(digits) > maxStepDigits {
			err = fmt.Errorf("%w: line %d: step number %s is too large", ErrMalformed, n, digits)
			return false
		}
		step, _ := strconv.Atoi(string(digits))
		v, ok := parseScalar(string(vm[1]))
		if !ok {
			err = fmt.Errorf("%w: line %d (step %d): %s is %q, not a number", ErrBadFigure, n, step, fieldTorchtune, clean(string(vm[1]), 40))
			return false
		}
		txt = true
		entries = append(entries, ttEntry{n, step, v})
		return true
	})
	if err != nil {
		return figure{}, err
	}
	if len(entries) == 0 {
		return figure{}, fmt.Errorf("%w: no logged step has %s", ErrNoFigure, fieldTorchtune)
	}
	for _, e := range entries {
		if err := checkFigure(fmt.Sprintf("%s at line %d (step %d)", fieldTorchtune, e.line, e.step), e.v); err != nil {
			return figure{}, err
		}
	}

	warmup := opt.WarmupSteps
	switch {
	case warmup == 0:
		warmup = DefaultWarmupSteps
	case warmup < 0:
		warmup = 0
	}
	var kept []ttEntry
	runs, inRun := 0, 0
	for i, e := range entries {
		if i == 0 || e.step <= entries[i-1].step {
			runs++
			inRun = 0
		}
		inRun++
		if inRun > warmup {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return figure{}, &OptionError{OptionWarmup, fmt.Sprintf("all %s fall within the warm-up (the first %s of each run); log more steps or lower the %s option",
			plural(len(entries), "logged step", "logged steps"), plural(warmup, "step", "steps"), OptionWarmup)}
	}
	vals := make([]float64, len(kept))
	for i, e := range kept {
		vals[i] = e.v
	}
	med := rank.Median(vals)

	var kind []string
	if txt {
		kind = append(kind, "txt")
	}
	if jsonl {
		kind = append(kind, "jsonl")
	}
	left := "the first " + plural(warmup, "logged step", "logged steps")
	if runs > 1 {
		left += " of each run"
	}
	d := fmt.Sprintf("torchtune metric log (%s): median %s over %s of %d (steps %d–%d; %s left out as warm-up) = %s tokens/s per GPU",
		strings.Join(kind, "+"), fieldTorchtune,
		plural(len(kept), "logged step", "logged steps"), len(entries),
		kept[0].step, kept[len(kept)-1].step, left, num2(med))
	if runs > 1 {
		d += fmt.Sprintf("; the log holds %d runs (the step number restarts where a resumed job appended to it)", runs)
	}
	d += "; torchtune already divides by the world size, so no " + OptionGPUs + " conversion"
	if skippedFinal {
		d += "; the last line was incomplete and was skipped"
	}
	return figure{value: med, field: fieldTorchtune, detail: d}, nil
}
