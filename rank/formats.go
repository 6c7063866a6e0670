package rank

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/pricewatch/pricewatch"
)

// How an engine runs a weight format on a card (data/formats.csv).
const (
	modeNative     = "native"
	modeWeightOnly = "weight-only"
	modeNo         = "no"
)

//go:embed data/formats.csv
var formatsCSV []byte

// formatRow is one row of data/formats.csv; moeKernel is the MoE kernel
// family the engine runs for the format there ("": the engine's own),
// for models of the config.json architectures listed (none: every model).
type formatRow struct {
	mode, url, note, moeKernel string
	architectures              []string
}

var formatRows = sync.OnceValue(func() map[[3]string]formatRow {
	m := map[[3]string]formatRow{}
	for _, r := range readTable(formatsCSV) {
		if r[3] != modeNative && r[3] != modeWeightOnly && r[3] != modeNo {
			panic(fmt.Sprintf("rank: formats.csv %v: mode %q", r[:3], r[3]))
		}
		row := formatRow{mode: r[3], url: r[4], note: r[5], moeKernel: r[6]}
		if r[7] != "" {
			if r[6] == "" {
				panic(fmt.Sprintf("rank: formats.csv %v: architectures without a moe_kernel", r[:3]))
			}
			row.architectures = strings.Split(r[7], ";")
		}
		if r[1] == "*" && r[6] == "" {
			// A row for every format only names the engine's MoE kernels
			// on the architecture; how a format runs needs a row of its own.
			panic(fmt.Sprintf("rank: formats.csv %v: every format but no moe_kernel", r[:3]))
		}
		key := [3]string{r[0], r[1], r[2]}
		if _, dup := m[key]; dup {
			panic(fmt.Sprintf("rank: formats.csv %v: two rows", r[:3]))
		}
		m[key] = row
	}
	return m
})

// ArchFamily is a card's architecture as formats.csv names it: ampere,
// ada, hopper, blackwell, cdna3, … (the first word of cards.csv
// architecture, lower case, CDNA with its number).
func ArchFamily(c pricewatch.Card) string {
	a := strings.ToLower(c.Architecture)
	if i := strings.IndexAny(a, "(+"); i >= 0 {
		a = a[:i]
	}
	f := strings.Fields(a)
	switch {
	case len(f) == 0:
		return ""
	case f[0] == "cdna" && len(f) > 1:
		return "cdna" + f[1]
	}
	return f[0]
}

// formatKeys are the formats.csv rows that speak to an engine's format on
// an architecture, the most specific first: the engine's own (this
// architecture, then any), then every engine's.
func formatKeys(eng, format, arch string) [][3]string {
	return [][3]string{{eng, format, arch}, {eng, format, "*"}, {"*", format, arch}, {"*", format, "*"}}
}

// formatMode is how the engine runs weights of format on the card (native
// is whether the card has the format's tensor rate), and why, for notes
// and refusals.
func formatMode(eng, format string, c pricewatch.Card, native bool) (string, string) {
	if eng == "" {
		eng = EngineVLLM
	}
	arch := ArchFamily(c)
	rows := formatRows()
	for _, key := range formatKeys(eng, format, arch) {
		if r, ok := rows[key]; ok {
			if r.mode == modeNative && !native {
				break // a row cannot give a card a rate it lacks
			}
			switch r.mode {
			case modeNo:
				return modeNo, fmt.Sprintf("%s does not run %s weights on %s (%s): %s (%s)", eng, format, c.ID, arch, r.note, r.url)
			case modeWeightOnly:
				if native {
					return modeNative, ""
				}
				return modeWeightOnly, fmt.Sprintf("%s has no %s tensor cores; %s (%s)", c.ID, computeName(format), r.note, r.url)
			}
			return modeNative, ""
		}
	}
	if native {
		return modeNative, ""
	}
	if !weightOnlyArch[arch] {
		return modeNo, fmt.Sprintf("%s does not run %s weights on %s (%s): the weight-only kernels (Marlin, Triton MoE) need Ampere or CDNA3 and newer (default: no engine page states it for this architecture)", eng, format, c.ID, arch)
	}
	return modeWeightOnly, fmt.Sprintf("%s has no %s tensor cores (default: weight-only kernels)", c.ID, computeName(format))
}

// moeKernelFamilies are the MoE kernel families the engines run: their
// own (engines.csv moe_kernel), Marlin's, which an engine runs only for
// some formats on some cards (formats.csv), and AITER's, which runs state
// (throughput.csv moe_kernel).
var moeKernelFamilies = sync.OnceValue(func() map[string]bool {
	known := map[string]bool{MoEKernelMarlin: true, MoEKernelAITER: true}
	for _, e := range engines() {
		known[e.moeKernel] = true
	}
	return known
})

// moeKernelFor is the MoE kernel family eng runs for weights of format on
// the card, for a model of the config.json architecture arch: a formats.csv
// row's moe_kernel where one names it for that model, else the engine's
// own (engines.csv).
func moeKernelFor(eng engine, format string, c pricewatch.Card, arch string) string {
	// Only the engine's own rows: a row for every engine ("*") says how a
	// format runs, not which engine's kernels run it. After the format's
	// own rows, the engine's row for every format on the architecture
	// (SGLang's ROCm images run AITER's MoE whatever the weights).
	family := ArchFamily(c)
	own := formatKeys(eng.name, format, family)
	keys := [][3]string{own[0], own[1], {eng.name, "*", family}}
	for _, key := range keys {
		r, ok := formatRows()[key]
		if ok && r.moeKernel != "" && (len(r.architectures) == 0 || slices.Contains(r.architectures, arch)) {
			return r.moeKernel
		}
	}
	return eng.moeKernel
}

// weightOnlyArch are the architectures the DEFAULT rule lets run fp8 and
// fp4 weights weight-only: the Marlin kernels vLLM uses need compute
// capability 8.0 (Ampere) or newer, and ROCm's need CDNA3. Older cards
// (Volta, Turing, Pascal, CDNA2) run them only where a formats.csv row
// says so (llama.cpp's MXFP4).
var weightOnlyArch = map[string]bool{"ampere": true, "ada": true, "hopper": true, "blackwell": true, "cdna3": true, "cdna4": true}

// computeName is the tensor precision a weight format computes in.
func computeName(format string) string {
	if q, ok := quantFormats()[format]; ok {
		return q.compute
	}
	return format
}
