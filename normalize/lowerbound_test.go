package normalize_test

import (
	"encoding/csv"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
)

// The real model strings that named a family and its memory but not its
// form factor or edition (issue 33's mapping bar), each as the capture
// gives it: name and the memory the source states with it (0: none). They
// were unknown; they now resolve to the family's lower-bound card. Where a
// source's own rows decide the part, those rows still win; a name that
// leaves the memory open too stays unknown.
func TestCatalog_ResolveFormNotStated(t *testing.T) {
	checkResolve(t, []resolveCase{
		// fixtures/skypilot (SkyPilot catalog v8): Paperspace's bare GpuInfo
		// names, Lambda gpu_8x_v100 / Verda 1V100.6V / Cudo "V100" with
		// 16 GB, SkyPilot's Vast "Tesla V100" group median, Verda's
		// <n>RTXPRO6000.* "RTX-PRO-6000" with 96 GB.
		{"SkyPilotPaperspaceA100_80GB", "skypilot", "A100-80GB", 0, "A100-80GB"},
		{"SkyPilotPaperspaceH100", "skypilot", "H100", 0, "H100-80GB"},
		{"SkyPilotPaperspaceV100_32GB", "skypilot", "V100-32GB", 0, "V100-32GB"},
		{"SkyPilotLambdaV100At16", "skypilot", "V100", 16, "V100-16GB"},
		{"SkyPilotVastTeslaV100At16", "skypilot", "Tesla V100", 16, "V100-16GB"},
		{"SkyPilotVerdaRTXPRO6000", "skypilot", "RTX-PRO-6000", 96, "RTX-PRO-6000-96GB"},
		// fixtures/cny-index (rentgpu's index, real): the name with its memory.
		{"CNYIndexA100_80GB", "cny-index", "A100 80GB", 80, "A100-80GB"},
		{"CNYIndexA800_80GB", "cny-index", "A800 80GB", 80, "A800-80GB"},
		{"CNYIndexH100_80GB", "cny-index", "H100 80GB", 80, "H100-80GB"},
		{"CNYIndexV100_16GB", "cny-index", "V100 16GB", 16, "V100-16GB"},
		{"CNYIndexRTXPRO6000_96GB", "cny-index", "RTX PRO 6000 96GB", 96, "RTX-PRO-6000-96GB"},
		// fixtures/oracle (real price list): B112613 BM.GPU.RTXPRO.8, and
		// B109480 BM.GPU.H100T.8 named "H100" with no memory (scrapers/oracle).
		{"OracleRTXPRO6000", "oracle", "RTX PRO 6000", 96, "RTX-PRO-6000-96GB"},
		{"OracleH100T", "oracle", "H100", 0, "H100-80GB"},
		// Other sources' strings the same rows reach (AutoDL, OVHcloud, Lambda).
		{"AutoDLA800_80G", "autodl", "A800-80G", 80, "A800-80GB"},
		{"AutoDLV100At32", "autodl", "V100", 32, "V100-32GB"},
		{"OVHA100At80", "ovhcloud", "A100", 80, "A100-80GB"},
		{"LambdaPageTeslaV100", "lambda", "NVIDIA Tesla V100", 16, "V100-16GB"},
		{"RTXPRO6000BlackwellNoEdition", "anysource", "NVIDIA RTX PRO 6000 Blackwell", 96, "RTX-PRO-6000-96GB"},

		// A source's own rows still decide the part.
		{"RunPodRTXPRO6000IsWS", "runpod", "RTX PRO 6000", 96, "RTX-PRO-6000-WS"},
		{"RunPodTeslaV100IsPCIe", "runpod", "Tesla V100", 16, "V100-16GB-PCIE"},
		{"GCPA100_80GBIsSXM", "gcp", "Nvidia Tesla A100 80GB", 80, "A100-80GB-SXM"},
		{"GCPH100_80GBIsSXM", "gcp", "Nvidia H100 80GB", 80, "H100-80GB-SXM"},
		{"GCPTeslaV100IsSXM2", "gcp", "Nvidia Tesla V100", 16, "V100-16GB-SXM2"},
		{"VultrA100IsPCIe", "vultr", "NVIDIA_A100", 80, "A100-80GB-PCIE"},
		{"ScalewayH100PCIeStated", "scaleway", "H100-PCIe", 80, "H100-80GB-PCIE"},

		// The memory open too (or not a bound card's): unknown, never guessed.
		{"BareA100NoMemory", "ovhcloud", "A100", 0, ""},
		{"BareV100NoMemory", "skypilot", "V100", 0, ""},
		{"TeslaV100NoMemory", "lambda", "Tesla V100", 0, ""},
		{"A100At40NoBoundCard", "ovhcloud", "A100", 40, ""},
		{"V100At24Neither", "ovhcloud", "V100", 24, ""},
		// 94 GB is not the 80 GB bound's memory: an "H100" stating it is
		// not decided (the NVL, or a 94/96 GB SXM board) and stays unknown.
		{"H100At94", "ovhcloud", "H100", 94, ""},
		{"A100_80GBAt40Contradicts", "skypilot", "A100-80GB", 40, ""},
	})
}

// lowerBoundVariants are the parts each lower-bound card stands for. The
// card's notes must name exactly these, and its figures must be those of
// one of them (the slowest) and at or below every one's, so its throughput
// is a floor and its cost per token an upper bound as the data changes.
var lowerBoundVariants = map[string][]string{
	"A100-80GB":         {"A100-80GB-PCIE", "A100-80GB-SXM"},
	"A800-80GB":         {"A800-80GB-PCIE", "A800-80GB-SXM"},
	"H100-80GB":         {"H100-80GB-PCIE", "H100-80GB-SXM", "H100-94GB-NVL"},
	"V100-16GB":         {"V100-16GB-FHHL", "V100-16GB-PCIE", "V100-16GB-SXM2"},
	"V100-32GB":         {"V100-32GB-PCIE", "V100-32GB-SXM2", "V100-32GB-SXM3"},
	"RTX-PRO-6000-96GB": {"RTX-PRO-6000-MAXQ", "RTX-PRO-6000-SERVER", "RTX-PRO-6000-WS"},
}

// cardNotes reads canonical_id → notes from data/cards.csv (Card has no
// notes field).
func cardNotes(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("data/cards.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	recs, err := r.ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("cards.csv: %d records, %v", len(recs), err)
	}
	id, notes := slices.Index(recs[0], "canonical_id"), slices.Index(recs[0], "notes")
	if id < 0 || notes < 0 {
		t.Fatalf("cards.csv header %v", recs[0])
	}
	out := map[string]string{}
	for _, rec := range recs[1:] {
		out[rec[id]] = rec[notes]
	}
	return out
}

func TestCatalog_LowerBoundCards(t *testing.T) {
	notes := cardNotes(t)
	idRE := regexp.MustCompile(`[A-Z0-9]+(?:-[A-Z0-9]+)+`)
	bound := 0
	for _, id := range catalog.IDs() {
		if !strings.HasPrefix(notes[id], "LOWER BOUND:") {
			continue
		}
		bound++
		want, ok := lowerBoundVariants[id]
		if !ok {
			t.Errorf("%s is a LOWER BOUND card missing from lowerBoundVariants", id)
			continue
		}
		var named []string
		for _, m := range idRE.FindAllString(notes[id], -1) {
			if _, known := catalog.Card(m); known && m != id && !slices.Contains(named, m) {
				named = append(named, m)
			}
		}
		slices.Sort(named)
		if !slices.Equal(named, want) {
			t.Errorf("%s: notes name %v, want the variants %v", id, named, want)
		}
		c, _ := catalog.Card(id)
		if !strings.HasPrefix(c.FormFactor, "not stated") {
			t.Errorf("%s: form factor %q, want it to say the form is not stated", id, c.FormFactor)
		}
		slowest := false
		for _, v := range want {
			vc, ok := catalog.Card(v)
			if !ok {
				t.Fatalf("%s: variant %s not in the catalog", id, v)
			}
			for _, f := range []struct {
				what       string
				got, their float64
			}{
				{"memory", c.MemoryGB, vc.MemoryGB},
				{"bandwidth", c.BandwidthGBs, vc.BandwidthGBs},
				{"training TFLOPS", c.TrainPeakTFLOPS(), vc.TrainPeakTFLOPS()},
				{"BF16", c.BF16TFLOPS, vc.BF16TFLOPS},
				{"FP16", c.FP16TFLOPS, vc.FP16TFLOPS},
				{"FP8", c.FP8TFLOPS, vc.FP8TFLOPS},
				{"FP4", c.FP4TFLOPS, vc.FP4TFLOPS},
				{"FP32", c.FP32TFLOPS, vc.FP32TFLOPS},
			} {
				if f.got > f.their {
					t.Errorf("%s: %s %g above %s's %g: not a lower bound", id, f.what, f.got, v, f.their)
				}
			}
			// The link a group of g GPUs crosses (a bridged pair's NVLink,
			// then PCIe, then the network) is no faster than the part's.
			for _, g := range []int{2, 4, 8, 16, 64} {
				lb, okb := c.LinkFor(g)
				lv, okv := vc.LinkFor(g)
				if okb && (!okv || lb.GBsPerDirection > lv.GBsPerDirection) {
					t.Errorf("%s × %d: link %s (%g GB/s) above %s's %s (%v, %g GB/s)", id, g, lb.Name, lb.GBsPerDirection, v, lv.Name, okv, lv.GBsPerDirection)
				}
			}
			if c.HasBF16() && !vc.HasBF16() || c.FP16Slow != vc.FP16Slow || c.EstimatorClass != vc.EstimatorClass {
				t.Errorf("%s: precision or estimator class differs from %s", id, v)
			}
			if sameFigures(c, vc) {
				slowest = true
			}
		}
		if !slowest {
			t.Errorf("%s: figures are no variant's own (want the slowest one's, not a blend)", id)
		}
	}
	if bound != len(lowerBoundVariants) {
		t.Errorf("%d LOWER BOUND cards in cards.csv, want the %d of lowerBoundVariants", bound, len(lowerBoundVariants))
	}
}

// sameFigures: the figures the estimator reads are one part's.
func sameFigures(a, b pricewatch.Card) bool {
	return a.MemoryGB == b.MemoryGB && a.BandwidthGBs == b.BandwidthGBs && a.BF16TFLOPS == b.BF16TFLOPS &&
		a.FP16TFLOPS == b.FP16TFLOPS && a.FP8TFLOPS == b.FP8TFLOPS && a.FP4TFLOPS == b.FP4TFLOPS &&
		a.FP32TFLOPS == b.FP32TFLOPS && a.TDPWatts == b.TDPWatts && a.Link.Name == b.Link.Name
}
