package main

import (
	"testing"

	"github.com/pricewatch/pricewatch"
)

func TestFormat_Money(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 0.0841: "0.0841", 0.000123456: "0.000123", 0.004: "0.00400", 0.999: "0.999",
		1.264: "1.26", 11.06: "11.1", 123.4: "123", 6250.4: "6250", -2.5: "-2.50",
	} {
		if got := money(v); got != want {
			t.Errorf("money(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestFormat_TokensAndUnits(t *testing.T) {
	for v, want := range map[float64]string{15e6: "15M", 1.5e9: "1.5B", 2e5: "200k", 999: "999", 1e12: "1T", 36.25e6: "36.25M"} {
		if got := tokenCount(v); got != want {
			t.Errorf("tokenCount(%v) = %q, want %q", v, got, want)
		}
	}
	for _, c := range []struct {
		unit         pricewatch.RentUnit
		rented, used int
		want         string
	}{
		{pricewatch.RentFixed, 8, 8, "8 GPUs fixed"},
		{pricewatch.RentPerGPU, 1, 1, "1 GPU per-GPU"},
		{pricewatch.RentFixed, 8, 6, "8 GPUs fixed, 6 used"},
	} {
		if got := unitLabel(c.unit, c.rented, c.used); got != c.want {
			t.Errorf("unitLabel = %q, want %q", got, c.want)
		}
	}
}
