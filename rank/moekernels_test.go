package rank

import (
	"math"
	"os"
	"testing"
)

// kernelTable is one published timing table of data/moe_kernels.csv.
type kernelTable struct {
	card          string
	bytes, micros []float64 // per point: expert bytes read (MB), kernel time
}

// kernelTables reads data/moe_kernels.csv: per table, the points reading at
// least minMB of experts.
func kernelTables(t *testing.T, minMB float64) map[string]*kernelTable {
	t.Helper()
	b, err := os.ReadFile("data/moe_kernels.csv")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*kernelTable{}
	for _, r := range readTable(b) {
		if len(r) != 12 {
			t.Fatalf("moe_kernels.csv row %v: %d columns", r[:1], len(r))
		}
		e, n, hidden, k, wb := tableNum(r[4]), tableNum(r[5]), tableNum(r[6]), tableNum(r[7]), tableNum(r[8])
		m, us := tableNum(r[10]), tableNum(r[11])
		if _, ok := catalog().Card(r[1]); !ok || us <= 0 || m < 1 || k > e {
			t.Fatalf("moe_kernels.csv row %v: card %q, m %g, %g µs", r[0], r[1], m, us)
		}
		touched := e * (1 - math.Pow(1-k/e, m))
		mb := touched * 3 * n * hidden * wb / 1e6
		if mb < minMB {
			continue
		}
		tb := out[r[0]]
		if tb == nil {
			tb = &kernelTable{card: r[1]}
			out[r[0]] = tb
		}
		tb.bytes, tb.micros = append(tb.bytes, mb), append(tb.micros, us)
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
