package rank

import (
	"fmt"
	"math"
	"os"
	"sync"
	"testing"
)

// The kernel tables' points by size: up to decodeMaxTokens a point is a
// decode step (every table has them); from prefillMinTokens it is a
// prefill-sized, compute-bound step. 2,048 is a DEFAULT for "prefill-
// sized", no engine page states one.
const (
	decodeMaxTokens  = 64
	prefillMinTokens = 2048
)

// kernelPoint is one row of data/moe_kernels.csv: a MoE layer's expert
// kernels at m tokens took us µs, for the model shape the row names.
type kernelPoint struct {
	table, card, family          string
	experts, n, hidden, k, bytes float64 // bytes: per weight
	m, us                        float64
}

// kernelPoints reads data/moe_kernels.csv once, refusing a row whose card
// is not in the catalog or whose numbers cannot be a timing.
var kernelPoints = sync.OnceValues(func() ([]kernelPoint, error) {
	b, err := os.ReadFile("data/moe_kernels.csv")
	if err != nil {
		return nil, err
	}
	var out []kernelPoint
	for _, r := range readTable(b) {
		if len(r) != 13 {
			return nil, fmt.Errorf("moe_kernels.csv row %v: %d columns", r[:1], len(r))
		}
		p := kernelPoint{table: r[0], card: r[1], family: r[12], experts: tableNum(r[4]), n: tableNum(r[5]), hidden: tableNum(r[6]),
			k: tableNum(r[7]), bytes: tableNum(r[8]), m: tableNum(r[10]), us: tableNum(r[11])}
		if _, ok := catalog().Card(p.card); !ok || p.us <= 0 || p.m < 1 || p.k > p.experts || !moeKernelFamilies()[p.family] {
			return nil, fmt.Errorf("moe_kernels.csv row %v: card %q, family %q, m %g, %g µs", p.table, p.card, p.family, p.m, p.us)
		}
		out = append(out, p)
	}
	return out, nil
})

// kernelTable is one published timing table of data/moe_kernels.csv.
type kernelTable struct {
	card          string
	bytes, micros []float64 // per point: expert bytes read (MB), kernel time
}

// kernelTables groups the Triton family's tables of data/moe_kernels.csv:
// per table, the decode points reading at least minMB of experts (the
// estimator's own touched share, Model.TouchedShare, of E experts of
// 3·N·hidden weights each).
func kernelTables(t *testing.T, minMB float64) map[string]*kernelTable {
	t.Helper()
	pts, err := kernelPoints()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*kernelTable{}
	for _, p := range pts {
		shape := Model{Experts: int(p.experts), ExpertsPerToken: int(p.k)}
		mb := shape.TouchedShare(p.m) * p.experts * 3 * p.n * p.hidden * p.bytes / 1e6
		if mb < minMB || p.m > decodeMaxTokens || p.family != MoEKernelTriton {
			continue
		}
		tb := out[p.table]
		if tb == nil {
			tb = &kernelTable{card: p.card}
			out[p.table] = tb
		}
		tb.bytes, tb.micros = append(tb.bytes, mb), append(tb.micros, p.us)
	}
	return out
}

// line is the least-squares fit y = a + s·x.
func line(x, y []float64) (a, s float64) {
	var mx, my float64
	for i := range x {
		mx, my = mx+x[i], my+y[i]
	}
	mx, my = mx/float64(len(x)), my/float64(len(y))
	var sxy, sxx float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
	}
	s = sxy / sxx
	return my - s*mx, s
}

// The Triton fused-MoE family's decode constants are its kernel timings,
// not a fit on throughput rows. Per table, time = T0 + MB read / rate over
// the points reading 100 MB or more; the family's fixed time per MoE layer
// is the median T0 and its experts pay no slice penalty when the median
// rate is at least the dense ETA_BW of the card's bandwidth.
//
// By hand (touched experts E·(1 − (1 − k/E)^M), 3·N·hidden weights each),
// the eight tables' intercepts come out at 34 (H100 Mixtral bf16 TP2), 38
// (H100 Qwen3-30B-A3B fp8), 14 (H200 Qwen3-235B fp8 TP8), 28 (B200
// Qwen3-Omni bf16, two points), 60 (A100 PCIe Qwen3-30B-A3B bf16), 106
// (A100 SXM GLM-4.5-Air shape), 15 and 1 µs (L40S Qwen3.5 and Qwen3-VL
// fp8): median (28 + 34) / 2 = 31 µs. Their rates are 0.94, 0.79, 0.49,
// 0.75, 0.90, 0.95, 0.79 and 0.76 of the cards' bandwidth: median 0.79.
func TestMoEKernels_TritonFromTheTimings(t *testing.T) {
	tables := kernelTables(t, 100)
	if len(tables) != 8 {
		t.Fatalf("%d tables with two points or more reading 100 MB, want 8", len(tables))
	}
	var t0s, rates []float64
	for name, tb := range tables {
		if len(tb.bytes) < 2 {
			t.Fatalf("%s: %d points", name, len(tb.bytes))
		}
		a, s := line(tb.bytes, tb.micros)
		c, _ := catalog().Card(tb.card)
		rate := 1e3 / s // s is µs per MB: 1/s MB/µs = 1000/s GB/s
		t0s, rates = append(t0s, a), append(rates, rate/c.BandwidthGBs)
		t.Logf("%-42s T0 %6.1f µs, reads at %.2f of %g GB/s", name, a, rate/c.BandwidthGBs, c.BandwidthGBs)
	}
	if got := math.Round(Median(t0s)); got != MoETritonLayerMicros || calibrated.moeLayerUS[MoEKernelTriton] != got {
		t.Errorf("median T0 %.1f µs; production %v (MoETritonLayerMicros %v)", Median(t0s), calibrated.moeLayerUS[MoEKernelTriton], MoETritonLayerMicros)
	}
	if r := Median(rates); r < calibrated.etaBW || calibrated.moeHalf(MoEKernelTriton) != 0 {
		t.Errorf("median read rate %.2f of the bandwidth (ETA_BW %.2f); production slice %v MB", r, calibrated.etaBW, calibrated.moeHalf(MoEKernelTriton))
	}
}

// Out of sample: each table's points priced with the medians of the other
// seven tables (leave one table out), and with what the estimator uses
// (31 µs, the touched experts read at ETA_BW of the bandwidth). Measured
// when written: 42 of 43 points within ±35% either way, medians 1.04 and
// 1.15 (ETA_BW, 0.70, is below the tables' 0.79); the one miss is the
// A100 SXM table's smallest read.
func TestMoEKernels_OutOfSample(t *testing.T) {
	tables := kernelTables(t, 100)
	type fitted struct{ t0, eff float64 }
	fits := map[string]fitted{}
	for name, tb := range tables {
		a, s := line(tb.bytes, tb.micros)
		c, _ := catalog().Card(tb.card)
		fits[name] = fitted{a, 1e3 / s / c.BandwidthGBs}
	}
	var loto, prod []float64
	for name, tb := range tables {
		var t0s, effs []float64
		for other, f := range fits {
			if other != name {
				t0s, effs = append(t0s, f.t0), append(effs, f.eff)
			}
		}
		c, _ := catalog().Card(tb.card)
		t0, eff := Median(t0s), Median(effs)
		for i, mb := range tb.bytes {
			// MB over GB/s is ms: × 1000 for µs.
			loto = append(loto, (t0+mb/(eff*c.BandwidthGBs)*1e3)/tb.micros[i])
			prod = append(prod, (calibrated.moeLayerUS[MoEKernelTriton]+mb/(calibrated.etaBW*c.BandwidthGBs)*1e3)/tb.micros[i])
		}
	}
	for _, set := range []struct {
		name   string
		ratios []float64
	}{{"leave one table out", loto}, {"production constants", prod}} {
		n := 0
		for _, r := range set.ratios {
			if within35(r) {
				n++
			}
		}
		t.Logf("%s: %d of %d kernel timings within ±35%%, median estimate/measured %.2f", set.name, n, len(set.ratios), Median(set.ratios))
		if share(n, len(set.ratios)) < 0.9 {
			t.Errorf("%s: %d of %d within ±35%%", set.name, n, len(set.ratios))
		}
	}
}

// prefillPoint is a prefill-sized point of a kernel table: the FLOPs of
// its M tokens' expert GEMMs (2 · M · top-k · 3 · N · hidden) and the
// time they took, in the precision of the table's weights.
type prefillPoint struct {
	table, card, family string
	flops, us           float64
	fp8                 bool
}

// prefillPoints are the kernel tables' points of prefillMinTokens or more.
func prefillPoints() ([]prefillPoint, error) {
	pts, err := kernelPoints()
	if err != nil {
		return nil, err
	}
	var out []prefillPoint
	for _, p := range pts {
		if p.m >= prefillMinTokens {
			out = append(out, prefillPoint{table: p.table, card: p.card, family: p.family, flops: 2 * p.m * p.k * 3 * p.n * p.hidden, us: p.us, fp8: p.bytes == 1})
		}
	}
	return out, nil
}

// efficiency is the point's rate as a share of the dense rate the
// estimator gives the card under k: ETA_C of its class × its peak in the
// weights' precision (FP8 for FP8 tables, else 16 bits).
func (p prefillPoint) efficiency(k constants) float64 {
	c, ok := catalog().Card(p.card)
	if !ok {
		return 0
	}
	peak := c.TrainPeakTFLOPS()
	if p.fp8 {
		peak = c.FP8TFLOPS
	}
	eta, _ := k.computeEff(c.EstimatorClass)
	if peak <= 0 || eta <= 0 || p.us <= 0 {
		return 0
	}
	return p.flops / (p.us * 1e-6) / (eta * peak * 1e12)
}

// checkPrefillEfficiencies holds a kernel family's prefill-sized points
// to the efficiencies computed by hand, per table in the file's order, and
// its tables with such points to want's.
func checkPrefillEfficiencies(t *testing.T, family string, want map[string][]float64) {
	t.Helper()
	pts, err := prefillPoints()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]float64{}
	for _, p := range pts {
		if p.family == family {
			got[p.table] = append(got[p.table], p.efficiency(calibrated))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d %s tables with prefill-sized points, want %d", len(got), family, len(want))
	}
	for table, w := range want {
		if len(got[table]) != len(w) {
			t.Fatalf("%s: %d prefill-sized points, want %d", table, len(got[table]), len(w))
		}
		for i := range w {
			if math.Abs(got[table][i]-w[i]) > 0.0015 {
				t.Errorf("%s point %d: efficiency %.4f, by hand %.3f", table, i, got[table][i], w[i])
			}
		}
	}
}

// tritonGEMMFloor is the lowest GEMM efficiency, relative to the dense
// kernels', that the Triton fused MoE's own prefill-sized timings show
// (0 without any): a fit of the family's GEMM efficiency on throughput
// rows does not go below it. Rows slower than that are slow for a reason
// the experts' kernels do not show, and loading it onto them prices every
// other row of the family wrong.
func tritonGEMMFloor(k constants) float64 {
	pts, err := prefillPoints()
	if err != nil {
		return 0
	}
	floor := 0.0
	for _, p := range pts {
		if p.family != MoEKernelTriton {
			continue
		}
		if e := p.efficiency(k); e > 0 && (floor == 0 || e < floor) {
			floor = e
		}
	}
	return floor
}

// The Triton fused MoE's prefill-sized timings, against the dense rate the
// estimator gives the card. By hand:
//
//	H100 Qwen3-30B-A3B FP8 (vLLM #24700, main): 2 × M × 8 × 3 × 768 × 2048
//	  = 75,497,472 FLOPs per token; at M = 2048, 154.6 GFLOP in 911.64 µs
//	  = 169.6 TFLOPS against 0.48 × 1,979 = 949.9: 0.179; at 3072, 181.3
//	  TFLOPS: 0.191; at 4096, 187.7 TFLOPS: 0.198.
//	A100 SXM, E=64 N=1408 hidden 2048 top-6 BF16 (vLLM #40542, default):
//	  2 × 4096 × 6 × 3 × 1408 × 2048 = 425.2 GFLOP in 2,919.0 µs = 145.7
//	  TFLOPS against 0.55 × 312 = 171.6: 0.849.
//
// The floor is the smallest, 0.179; the production Triton GEMM efficiency
// (0.24, fitted on rows) lies above it.
func TestMoEKernels_PrefillGEMMFloor(t *testing.T) {
	checkPrefillEfficiencies(t, MoEKernelTriton, map[string][]float64{
		"vllm24700-h100-qwen3-30b-a3b-fp8": {0.179, 0.191, 0.198},
		"vllm40542-a100sxm-glm45air-bf16":  {0.849},
	})
	floor := tritonGEMMFloor(calibrated)
	if math.Abs(floor-0.179) > 0.0015 {
		t.Errorf("floor %.4f, by hand 0.179", floor)
	}
	if g := calibrated.moeGemmEff(MoEKernelTriton); g < floor {
		t.Errorf("production Triton GEMM efficiency %.2f below its kernels' floor %.3f", g, floor)
	}
}

// kernelGEMMPriors are the GEMM efficiencies the kernel families' own
// prefill-sized timings show against the dense rate under k: per family,
// the median of its points, at most 1 (the experts' GEMMs are priced no
// faster than the dense kernels). A family without enough throughput rows
// of its own takes it (fit), not the all-row value other families' rows
// set.
func kernelGEMMPriors(k constants) map[string]float64 {
	pts, err := prefillPoints()
	if err != nil {
		return nil
	}
	by := map[string][]float64{}
	for _, p := range pts {
		if e := p.efficiency(k); e > 0 {
			by[p.family] = append(by[p.family], e)
		}
	}
	out := map[string]float64{}
	for f, es := range by {
		out[f] = math.Min(1, Median(es))
	}
	return out
}

// The CUTLASS family's prefill-sized timings, against the dense rate the
// estimator gives each card (ETA_C of its class × its 16-bit peak: the
// BF16 table and the two W4A16 tables all compute in 16 bits). By hand:
//
//	L40S, Qwen3.6-35B-A3B shape (hidden 2048, intermediate 512, 256
//	  experts, top-8), FlashInfer #4646: 2 × 8 × 3 × 512 × 2048 =
//	  50,331,648 FLOPs per token; at 2,048 tokens 103.08 GFLOP in
//	  2,947.68 µs = 34.97 TFLOPS against 0.397 × 362.05 = 143.73: 0.243;
//	  at 4,096, 61.20 TFLOPS: 0.426; at 8,192, 91.04: 0.633.
//	H20 141 GB, hidden 4096, intermediate 2048, 256 experts, top-6,
//	  SGLang #34967: 2 × 6 × 3 × 2048 × 4096 = 301,989,888 FLOPs per
//	  token; at 2,048 tokens 618.5 GFLOP in 6,973 µs = 88.70 TFLOPS
//	  against 0.48 × 148 = 71.04: 1.249; at 4,096, 1.338; at 8,192, 1.359.
//	H20 96 GB, the same shape, SGLang #34682: 1.086, 1.179, 1.325, 1.434,
//	  1.489, 1.519, 1.536 at 2,048 to 131,072 tokens.
//
// The median of the thirteen is the seventh, 1.325: the family's prior is
// 1 (no GEMM penalty). The H20s run these GEMMs faster than the dense rate
// the estimator gives them (its Hopper ETA_C, set on H100 and H200 rows),
// the L40S's small experts slower.
func TestMoEKernels_CUTLASSPrior(t *testing.T) {
	checkPrefillEfficiencies(t, MoEKernelCUTLASS, map[string][]float64{
		"flashinfer4646-l40s-qwen36-bf16": {0.243, 0.426, 0.633},
		"sglang34967-h20141-w4a16":        {1.249, 1.338, 1.359},
		"sglang34682-h2096-w4a16":         {1.086, 1.179, 1.325, 1.434, 1.489, 1.519, 1.536},
	})
	priors := kernelGEMMPriors(calibrated)
	if g := priors[MoEKernelCUTLASS]; g != 1 {
		t.Errorf("CUTLASS prior %.3f, by hand 1 (median 1.325, capped)", g)
	}
	// The Triton family's four points (0.179, 0.191, 0.198, 0.849): median
	// (0.191 + 0.198) / 2 = 0.195, near the 0.24 its rows fit.
	if g := priors[MoEKernelTriton]; math.Abs(g-0.195) > 0.002 {
		t.Errorf("Triton prior %.3f, by hand 0.195", g)
	}
	// A fit without TensorRT-LLM's perf page leaves the CUTLASS family too
	// few rows of its own: it takes the prior, not the all-row value.
	k := fit(filter(fitRows(), func(m Measurement) bool { return m.Publisher != "nvidia-trtllm-perf" }))
	if g := k.moeGemmEff(MoEKernelCUTLASS); g != 1 {
		t.Errorf("CUTLASS GEMM efficiency without TensorRT-LLM's perf page: %.2f, want its kernels' 1", g)
	}
}
