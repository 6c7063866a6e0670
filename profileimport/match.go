package profileimport

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/pricewatch/pricewatch/rank"
)

// WorkloadKind is what a workload's profile measures: serving for a serving
// workload, training for full fine-tuning, LoRA and QLoRA.
func WorkloadKind(w rank.Workload) Kind {
	if w.Method == rank.MethodServe {
		return KindServing
	}
	return KindTraining
}

// Match checks an imported figure against the workload it is to be stored
// for. A log of the other kind is refused (an *OptionError of
// OptionWorkload): a serving benchmark counts generated tokens of a server,
// a training log trained tokens of a step, and neither stands for the
// other. A log that names a model other than the workload's — another size
// class or, where the workload names one, another family — is accepted
// with a warning naming both: the figure may still be what the user means
// (a stand-in measured on a sibling model), but it is the user's call.
func Match(res Result, w rank.Workload) ([]string, error) {
	if want := WorkloadKind(w); res.Kind != want {
		return nil, &OptionError{OptionWorkload, fmt.Sprintf("%s is a %s workload (%s), and the input is a %s log (%s); "+
			"import a %s log for it, or give a %s workload", w.Name, want, w.Method, res.Kind, res.Format, want, res.Kind)}
	}
	if res.Model == "" {
		return nil, nil
	}
	if warn := modelMismatch(res.Model, w); warn != "" {
		return []string{warn}, nil
	}
	return nil, nil
}

// sizeClass is how far a log's model may be from the workload's in
// parameters and still count as the same model size: 7B, 7.6B, 8B and 9B
// are one class, 13B and 70B others. Throughput per GPU goes about as
// 1/parameters (6 FLOPs per parameter per trained token, every weight read
// per decoding step), so a model 1.4× the size or more moves the figure by
// about 30% or more, beyond the 20% band the norm check tolerates.
const sizeClass = 1.4

// modelSizeRe finds a parameter count in a model name: "70B", "7b",
// "1.5B", "125m", or an expert count times a size ("8x7B", counted as
// 8 × 7 = 56 B, an upper bound of the total). The number must start a
// word and the unit end it, so "A3B" (Qwen's active parameters) and
// hexadecimal snapshot hashes do not count.
var modelSizeRe = regexp.MustCompile(`(?i)(?:^|[^a-z0-9.])(?:(\d+)x)?(\d+(?:\.\d+)?)([bm])(?:[^a-z0-9]|$)`)

// modelFamilies are the model families a name is recognised by (a word of
// the name); a workload's preset name starts with its family (llama3-8b,
// qwen2.5-7b).
var modelFamilies = []string{"llama", "qwen", "mistral", "mixtral", "gemma", "phi", "deepseek", "falcon", "gpt", "opt",
	"bloom", "baichuan", "glm", "chatglm", "internlm", "yi", "olmo", "granite", "mpt", "starcoder"}

// modelIdentity is a model as far as the check needs it: its parameter
// count in billions (0: not told) with the text it came from, and its
// family ("": not told).
type modelIdentity struct {
	paramsB float64
	size    string
	family  string
}

// parseModelName reads the identity of a model from its name (a Hugging
// Face id such as meta-llama/Llama-3.1-70B-Instruct, or a local path): the
// last size in it, and the first family word.
func parseModelName(name string) modelIdentity {
	var id modelIdentity
	for _, m := range modelSizeRe.FindAllStringSubmatch(name, -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil || v <= 0 {
			continue
		}
		if strings.EqualFold(m[3], "m") {
			v /= 1000
		}
		size := strings.ToUpper(m[2] + m[3])
		if m[1] != "" {
			n, _ := strconv.Atoi(m[1])
			v *= float64(n)
			size = m[1] + "x" + size
		}
		id.paramsB, id.size = v, size
	}
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r < 'a' || r > 'z' })
	for _, w := range words {
		for _, f := range modelFamilies {
			if w == f {
				id.family = f
				return id
			}
		}
	}
	return id
}

// workloadFamily is the family of the workload's model preset; "" for the
// generic 7B of the built-in workloads (any 7B model stands for it) and a
// custom shape.
func workloadFamily(m rank.Model) string {
	if m.Name == rank.Llama7B().Name || m.Name == "custom" {
		return ""
	}
	return parseModelName(m.Name).family
}

// modelMismatch is the warning for a log's model that is not the workload's,
// "" when it is (or the workload does not say).
func modelMismatch(logModel string, w rank.Workload) string {
	got := parseModelName(logModel)
	want := fmt.Sprintf("%s's model %s (%sB)", w.Name, w.Model.Name, strconv.FormatFloat(w.Model.ParamsB, 'f', -1, 64))
	if got.paramsB == 0 {
		return fmt.Sprintf("the size of the input's model %q cannot be read from its name; check that it is %s", logModel, want)
	}
	if r := got.paramsB / w.Model.ParamsB; math.Max(r, 1/r) >= sizeClass {
		return fmt.Sprintf("the input's model %q (%s) is not %s: it has %.3g× the parameters, another size class, so the figure is not this workload's; import it for a workload of that model",
			logModel, got.size, want, r)
	}
	if f := workloadFamily(w.Model); f != "" && got.family != "" && got.family != f {
		return fmt.Sprintf("the input's model %q (%s, %s) is not %s, of the %s family: the same size, another model",
			logModel, got.family, got.size, want, f)
	}
	return ""
}
