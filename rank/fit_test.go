package rank

// How the constants are fitted on throughput.csv's rows, and the leave one
// publisher out refit (calibration_test.go runs the rows and holds the
// results to the bars).

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Fitting. The constants are fitted on rows in a fixed order, each step a
// one-dimensional search that keeps the others:
//
//  1. U per estimator class: the value whose 16-bit training rows of that
//     class have a median estimate/measured of 1 (a class without such
//     rows keeps its assumed U, utilizationByClass);
//  2. FP8Share: the same over every fp8 training row;
//  3. Overlap: the least mean absolute log error over multi-GPU training
//     rows;
//  4. ETA_BW and the ETA_C factor: the least mean absolute log error over
//     batched serving rows on one GPU (a grid);
//  5. LinkEfficiency: the same over multi-GPU serving rows.
//
// Steps 1–3 run twice (they interact through the multi-GPU rows).

func isTraining(m Measurement) bool { return m.Category == "training" }
func isServing(m Measurement) bool  { return m.Category == "inference" }

// groupGPUs is how many GPUs one serving instance of a row spans: a
// system running one instance per GPU (tensor parallelism 1 stated, no
// pipeline or expert parallelism) serves on one GPU however many it has,
// so its row counts with the single-GPU rows, not the multi-GPU ones.
func groupGPUs(m Measurement) int {
	if m.TP == 1 && m.PP <= 1 && m.EP <= 1 {
		return 1
	}
	return m.GPUs
}

func batchedServing(m Measurement) bool {
	return isServing(m) && m.Workload != "decode_batch1"
}
func isFP8(m Measurement) bool {
	p := strings.ToLower(m.Precision)
	return strings.HasPrefix(p, "fp8") || p == "mxfp8"
}

// medianRatio is the median estimate/measured of rows under k (rows the
// estimator cannot price are left out).
func medianRatio(rows []Measurement, k constants) float64 {
	var v []float64
	for _, r := range ratios(rows, k) {
		if r > 0 {
			v = append(v, r)
		}
	}
	if len(v) == 0 {
		return 1
	}
	return Median(v)
}

// male is the mean absolute log error of rows under k (an unpriced row
// counts as a factor of e off).
func male(rows []Measurement, k constants) float64 {
	if len(rows) == 0 {
		return 0
	}
	var s float64
	for _, r := range ratios(rows, k) {
		if r <= 0 {
			s++
			continue
		}
		s += math.Abs(math.Log(r))
	}
	return s / float64(len(rows))
}

// bisect finds x in [lo, hi] where f(x) = 1 for an f that grows with x,
// to 1e-3.
func bisect(lo, hi float64, f func(float64) float64) float64 {
	for hi-lo > 1e-3 {
		mid := (lo + hi) / 2
		if f(mid) < 1 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Round((lo+hi)/2*1000) / 1000
}

// shrink is the weight of a constant's distance from its prior in the fit:
// each search minimizes the rows' mean absolute log error plus shrink ×
// |ln(x / prior)|. A constant few rows speak to stays near its physical
// default (THROUGHPUT.md section 2, links.csv); many rows move it where
// they agree. 0.02 is a 2% error for a factor of e.
const shrink = 0.02

// argmin is the grid point of [lo, hi] in steps of step with the least
// f plus the pull toward prior (the first on ties).
func argmin(lo, hi, step, prior float64, f func(float64) float64) float64 {
	best, bv := lo, math.Inf(1)
	for x := lo; x <= hi+1e-9; x += step {
		v := f(x)
		if prior > 0 && x > 0 {
			v += shrink * math.Abs(math.Log(x/prior))
		}
		if v < bv-1e-12 {
			best, bv = x, v
		}
	}
	return math.Round(best*1000) / 1000
}

func filter(rows []Measurement, keep func(Measurement) bool) []Measurement {
	var out []Measurement
	for _, m := range rows {
		if keep(m) {
			out = append(out, m)
		}
	}
	return out
}

// fitStart is where the fit starts: the reference model's constants
// (THROUGHPUT.md section 2) and assumed defaults, never the production
// ones, so that the fit does not depend on what it produced before
// (AttentionDPBalance is a measurement the fit never moves, not a fitted
// constant).
var fitStart = constants{adpBalance: AttentionDPBalance, etaBW: 0.70, etaCScale: 1, fp4Eff: 1, linkEff: 0.7, ppEff: 0.9, fp8Share: 0.77, overlap: 0.8, qlora: 0.8, moeHalfMB: 5}

// fit fits the constants on rows (which should be split=fit rows only):
// the dense model's on the dense rows, then the two mixture-of-experts
// constants on the MoE rows with the dense ones fixed.
func fit(all []Measurement) constants {
	rows := filter(all, func(m Measurement) bool { return !isMoE(m) })
	k := fitStart
	k.util = map[string]float64{}
	byClass := map[string][]Measurement{}
	for _, m := range rows {
		if isTraining(m) {
			c, _ := catalog().Card(m.Card)
			byClass[c.EstimatorClass] = append(byClass[c.EstimatorClass], m)
		}
	}
	fp8 := filter(rows, func(m Measurement) bool { return isTraining(m) && isFP8(m) })
	multi := filter(rows, func(m Measurement) bool { return m.GPUs > 1 && (isTraining(m) || batchedServing(m)) })
	multiTrain := filter(multi, isTraining)
	for range 3 {
		fitClasses(&k, func(k *constants) *map[string]float64 { return &k.util }, byClass, utilizationByClass)
		if len(fp8) > 0 {
			k.fp8Share = argmin(0, 1, 0.02, fitStart.fp8Share, func(f float64) float64 { kk := k; kk.fp8Share = f; return male(fp8, kk) })
		}
		if q := filter(rows, func(m Measurement) bool { return isTraining(m) && m.Workload == "qlora" }); len(q) > 0 {
			k.qlora = argmin(0.5, 1, 0.02, fitStart.qlora, func(f float64) float64 { kk := k; kk.qlora = f; return male(q, kk) })
		}
		if len(multiTrain) > 0 {
			k.overlap = argmin(0, 0.95, 0.05, fitStart.overlap, func(o float64) float64 { kk := k; kk.overlap = o; return male(multiTrain, kk) })
		}
	}
	// Serving: ETA_BW over every batched serving row; ETA_C per class as
	// U above (own value from two publishers or more, else the assumed one
	// moved as the fitted classes moved); FP4's factor over FP4 rows; the
	// link efficiency over every multi-GPU row, training's too.
	serve := filter(rows, batchedServing)
	serveByClass := map[string][]Measurement{}
	for _, m := range serve {
		c, _ := catalog().Card(m.Card)
		serveByClass[c.EstimatorClass] = append(serveByClass[c.EstimatorClass], m)
	}
	fp4 := filter(serve, func(m Measurement) bool { return strings.Contains(strings.ToLower(m.Precision), "fp4") })
	k.etaC = map[string]float64{}
	for range 2 {
		// ETA_BW on enough rows only (ownFamily's rule), else the
		// reference's 0.70: with TensorRT-LLM's perf page left out nine
		// batched-serving rows remain, and they had put it at the search's
		// floor (0.50). The layer step and the FP4 factor keep fitting on
		// any rows: their priors are "no such term", not measurements, and
		// gated the same way they cost more rows than they saved
		// (THROUGHPUT.md).
		if ownFamily(serve) {
			k.etaBW = argmin(0.5, 0.9, 0.02, fitStart.etaBW, func(b float64) float64 { kk := k; kk.etaBW = b; return male(serve, kk) })
		}
		fitClasses(&k, func(k *constants) *map[string]float64 { return &k.etaC }, serveByClass, computeEfficiencyByClass)
		if len(fp4) > 0 {
			k.fp4Eff = argmin(0.3, 1, 0.05, fitStart.fp4Eff, func(f float64) float64 { kk := k; kk.fp4Eff = f; return male(fp4, kk) })
		}
		if publishers(multi) >= 2 {
			k.linkEff = argmin(0.1, 1, 0.05, fitStart.linkEff, func(e float64) float64 { kk := k; kk.linkEff = e; return male(multi, kk) })
		}
		if len(serve) > 0 {
			// From 0: no overhead is the model without the term.
			k.layerStepUS = argmin(0, 200, 5, 0, func(e float64) float64 { kk := k; kk.layerStepUS = e; return male(serve, kk) })
		}
		if pp := filter(serve, func(m Measurement) bool { return m.PP > 1 }); len(pp) > 0 {
			k.ppEff = argmin(0.5, 1, 0.02, fitStart.ppEff, func(e float64) float64 { kk := k; kk.ppEff = e; return male(pp, kk) })
		}
	}
	if moe := filter(all, isMoE); len(moe) > 0 {
		// The extra fixed time of a latent-attention layer is fitted on
		// the MLA rows of one sequence, where a step's fixed time is most
		// of what it costs beside its reads, from two publishers or more
		// (else none); each round after the kernel families' constants.
		b1 := filter(moe, func(m Measurement) bool {
			rs, err := rowJob(m)
			return err == nil && Presets()[m.Preset].mla() && rs.w.maxSequences() == 1
		})
		k.mlaLayerUS = 0
		// Rows by the MoE kernel family their engine runs for their format
		// on their card (engines.csv and formats.csv moe_kernel; llama.cpp
		// runs no grouped GEMMs).
		byKernel := map[string][]Measurement{}
		for _, m := range moe {
			rs, err := rowJob(m)
			c, ok := catalog().Card(m.Card)
			if e := engineFor(rs.w.Engine); err == nil && ok && e.groupedMoE {
				kernel := rs.w.moeKernelOn(e, c)
				byKernel[kernel] = append(byKernel[kernel], m)
			}
		}
		// The experts' GEMM efficiency (global, then per kernel family), then
		// the slice efficiency (global, then per kernel family), three rounds:
		// each moves the other's optimum a little. A family whose constants
		// come from its kernel timings (kernelFixedHalf: the Triton fused MoE,
		// data/moe_kernels.csv) keeps them; the globals serve the families
		// without values of their own (rows of the others do not move them;
		// with none, they stay at their priors).
		k.moeGemm = 1
		k.moeLayerUS = maps.Clone(calibrated.moeLayerUS)
		priors := kernelGEMMPriors(k)
		for range 3 {
			// The globals are fitted on every MoE row as if no family had a
			// value of its own, so that a family without enough rows gets
			// what all MoE rows say, not a prior the other families' rows
			// cannot move.
			k.moeGemmByKernel = map[string]float64{}
			k.moeGemm = argmin(0.2, 1, 0.02, 1, func(x float64) float64 { kk := k; kk.moeGemm = x; return male(moe, kk) })
			for _, e := range slices.Sorted(maps.Keys(byKernel)) {
				if rows := byKernel[e]; ownFamily(rows) {
					k.moeGemmByKernel[e] = argmin(gemmFloor(e, k), 1, 0.02, k.moeGemm, func(x float64) float64 {
						kk := k
						kk.moeGemmByKernel = map[string]float64{e: x}
						return male(rows, kk)
					})
				}
			}
			// A family without enough rows of its own takes what its own
			// kernel timings show at prefill sizes, where they are
			// published (kernelGEMMPriors), not the all-row value: with
			// TensorRT-LLM's perf page left out the CUTLASS family had
			// taken 0.20, set by the Triton family's rows.
			for _, e := range slices.Sorted(maps.Keys(priors)) {
				if _, own := k.moeGemmByKernel[e]; !own {
					k.moeGemmByKernel[e] = priors[e]
				}
			}
			if publishers(b1) >= 2 {
				k.mlaLayerUS = argmin(0, 200, 5, 0, func(e float64) float64 { kk := k; kk.mlaLayerUS = e; return male(b1, kk) })
			}
			k.moeHalfByKernel = maps.Clone(kernelFixedHalf)
			k.moeHalfMB = argmin(0.5, 50, 0.5, fitStart.moeHalfMB, func(e float64) float64 { kk := k; kk.moeHalfMB = e; return male(moe, kk) })
			for _, e := range slices.Sorted(maps.Keys(byKernel)) {
				if _, fixed := kernelFixedHalf[e]; fixed {
					continue
				}
				if rows := byKernel[e]; ownFamily(rows) {
					k.moeHalfByKernel[e] = argmin(0.5, 80, 0.5, k.moeHalfMB, func(x float64) float64 {
						kk := k
						kk.moeHalfByKernel = map[string]float64{e: x}
						return male(rows, kk)
					})
				}
			}
		}
	}
	return k
}

// gemmFloor is where the search for a kernel family's GEMM efficiency
// starts: for the Triton fused MoE the slowest prefill-sized timing of its
// own kernels (tritonGEMMFloor), rounded up to the search's 0.02 steps;
// 0.1 for the others. Without it the Triton family fitted 0.10 with
// GPUStack's rows left out, below anything its kernels measure.
func gemmFloor(family string, k constants) float64 {
	if family != MoEKernelTriton {
		return 0.1
	}
	f := tritonGEMMFloor(k)
	if f <= 0.1 {
		return 0.1
	}
	return math.Ceil(f/0.02-1e-9) * 0.02
}

// ownFamily reports whether rows may fit a constant of their own: rows of
// two publishers or more (one publisher's stack is not the family's), and
// at least minFamilyRows of them. With fewer, a MoE kernel family takes
// the global values (three rows of two publishers had moved the CUTLASS
// family's GEMM efficiency to 0.14 when TensorRT-LLM's own perf page was
// left out, and with it 22 of that page's rows), and ETA_BW its prior.
func ownFamily(rows []Measurement) bool {
	return publishers(rows) >= 2 && len(rows) >= minFamilyRows
}

// minFamilyRows is the fewest rows a constant is fitted on (a MoE kernel
// family's, ETA_BW). A DEFAULT (no page states one): about one row per
// card and model pair a kernel family is priced for.
const minFamilyRows = 10

// kernelFixedHalf are the MoE kernel families whose slice efficiency
// comes from their kernel timings, not from the throughput rows: the
// Triton fused MoE reads its touched experts at the dense rate
// (TestMoEKernels_TritonFromTheTimings).
var kernelFixedHalf = map[string]float64{MoEKernelTriton: 0}

// fitClasses fits a per-class constant (U or ETA_C, the map field names)
// on each class's rows. A class gets a value of its own only from ten rows
// or more of two publishers or more (ownFamily, the rule ETA_BW and the MoE
// kernel families follow: one publisher's stack is not the class's, and a
// handful of rows is one stack's); the others keep their prior, moved by
// the median factor the fitted classes moved by from theirs. With AMD's
// MLPerf rows left out, two rows (Oracle's and AMD's ROCm docs') had set
// CDNA3's ETA_C at 0.20.
func fitClasses(k *constants, field func(*constants) *map[string]float64, byClass map[string][]Measurement, priors map[string]float64) {
	vals := *field(k)
	var moved []float64
	for _, class := range slices.Sorted(maps.Keys(byClass)) {
		rs := byClass[class]
		if !ownFamily(rs) {
			continue
		}
		prior := priors[class]
		vals[class] = argmin(0.1, 0.95, 0.01, prior, func(x float64) float64 {
			kk := *k
			m := maps.Clone(vals)
			m[class] = x
			*field(&kk) = m
			return male(rs, kk)
		})
		moved = append(moved, vals[class]/prior)
	}
	if len(moved) == 0 {
		return
	}
	f := Median(moved)
	for class, prior := range priors {
		if !ownFamily(byClass[class]) {
			vals[class] = math.Round(prior*f*1000) / 1000
		}
	}
}

// publishers counts the publishers of rows.
func publishers(rows []Measurement) int {
	seen := map[string]bool{}
	for _, m := range rows {
		seen[m.Publisher] = true
	}
	return len(seen)
}

func (k constants) String() string {
	list := func(m map[string]float64) string {
		var out []string
		for _, c := range slices.Sorted(maps.Keys(m)) {
			out = append(out, fmt.Sprintf("%s %.3f", c, m[c]))
		}
		return strings.Join(out, ", ")
	}
	return fmt.Sprintf("layer step %.0f µs (MLA +%.0f), ", k.layerStepUS, k.mlaLayerUS) + fmt.Sprintf("U {%s}, QLoRA %.2f, fp8 share %.3f, overlap %.2f, ETA_BW %.2f, ETA_C {%s} × %.2f (fp4 × %.2f), link efficiency %.2f, pipeline %.2f, MoE half-efficiency slice %.1f MB, MoE GEMM %.2f",
		list(k.util), k.qlora, k.fp8Share, k.overlap, k.etaBW, list(k.etaC), k.etaCScale, k.fp4Eff, k.linkEff, k.ppEff, k.moeHalfMB, k.moeGemm) + fmt.Sprintf("; by kernel family: slice %v, GEMM %v, fixed µs per MoE layer %v", k.moeHalfByKernel, k.moeGemmByKernel, k.moeLayerUS)
}

// isMoE reports a row of a mixture-of-experts preset.
func isMoE(m Measurement) bool { return m.Preset != "" && Presets()[m.Preset].MoE() }

// fitRows are the rows marked split=fit. fit keeps the dense constants to
// the dense rows and fits only the MoE slice efficiency on the MoE rows:
// fitting the shared constants on them would move every dense estimate to
// absorb terms the MoE model lacks (THROUGHPUT.md "Mixture-of-experts").
func fitRows() []Measurement {
	return filter(priced(), func(m Measurement) bool { return m.Split == SplitFit })
}

// count is how many of rows are within ±35% under k.
func count(rows []Measurement, k constants) int {
	n := 0
	for _, r := range ratios(rows, k) {
		if within35(r) {
			n++
		}
	}
	return n
}

// lopo prices every row under the constants fitted without its publisher
// (estimate/measured by row id).
func lopo() map[string]float64 {
	all := priced()
	pubs := map[string]bool{}
	for _, m := range all {
		pubs[m.Publisher] = true
	}
	out := map[string]float64{}
	for p := range pubs {
		k := fit(filter(fitRows(), func(m Measurement) bool { return m.Publisher != p }))
		maps.Copy(out, ratios(filter(all, func(m Measurement) bool { return m.Publisher == p }), k))
	}
	return out
}
