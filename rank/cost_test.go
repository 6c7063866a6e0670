package rank

import (
	"math"
	"testing"
)

func TestCostPerMillionTokens_DesignExamples(t *testing.T) {
	for _, tc := range []struct {
		name       string
		price, tps float64
		want       float64 // to the cent
	}{
		{"3 at 800", 3, 800, 1.04},
		{"12 at 2500", 12, 2500, 1.33},
		{"28 at 5000", 28, 5000, 1.56},
		{"THROUGHPUT.md H100 profile", 2.50, 8211, 0.08},
		{"THROUGHPUT.md H100 seed", 2.50, 5000, 0.14},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CostPerMillionTokens(tc.price, tc.tps)
			if math.Round(got*100)/100 != tc.want {
				t.Errorf("CostPerMillionTokens(%g, %g) = %.4f, want %.2f", tc.price, tc.tps, got, tc.want)
			}
		})
	}
}

func TestCostPerMillionTokens_Exact(t *testing.T) {
	if got, want := CostPerMillionTokens(3, 800), 3e6/(800*3600.0); got != want {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestCostPerMillionTokens_NoThroughput(t *testing.T) {
	for _, tps := range []float64{0, -1} {
		t.Run("tps", func(t *testing.T) {
			if got := CostPerMillionTokens(3, tps); !math.IsInf(got, 1) {
				t.Errorf("CostPerMillionTokens(3, %g) = %v, want +Inf", tps, got)
			}
		})
	}
}

func TestTrainFLOPsSeconds_DesignExample(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		paramsB, tokens, peak, util float64
		want                        float64
	}{
		// 6 × 7e9 × 100e9 = 4.2e21 FLOPs at 312 TFLOPS × 0.4: 3.4e7 s.
		{"7B 100B tokens A100", 7, 100e9, 312, 0.4, 4.2e21 / (312e12 * 0.4)},
		{"tiny", 1, 1e6, 100, 0.5, 6e15 / 5e13},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := TrainFLOPsSeconds(tc.paramsB, tc.tokens, tc.peak, tc.util)
			if math.Abs(got-tc.want) > 1e-9*tc.want {
				t.Errorf("TrainFLOPsSeconds = %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("rounds to 3.4e7 seconds", func(t *testing.T) {
		got := TrainFLOPsSeconds(7, 100e9, 312, 0.4)
		if r := math.Round(got/1e6) / 10; r != 3.4 {
			t.Errorf("got %.4g s, want ≈ 3.4e7 s", got)
		}
	})
	t.Run("no rate", func(t *testing.T) {
		if got := TrainFLOPsSeconds(7, 1e9, 0, 0.4); !math.IsInf(got, 1) {
			t.Errorf("got %v, want +Inf", got)
		}
	})
}
