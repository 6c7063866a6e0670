package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pricewatch/pricewatch"
)

// plural writes a count with its noun: "1 GPU", "8 GPUs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// money writes an amount with digits that mean something: whole units from
// 100 up, one decimal from 10, two from 1, three significant digits below 1.
// A non-zero amount never prints as 0.00.
func money(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case math.IsInf(v, 0) || math.IsNaN(v):
		return "-"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	// Three significant digits: 0.0841, 0.00123.
	decimals := 2 - int(math.Floor(math.Log10(a)))
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// tokenCount writes a token count the way people say it: 15M, 1.5B, 200k.
func tokenCount(v float64) string {
	for _, u := range []struct {
		div float64
		suf string
	}{{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(v) >= u.div {
			s := strconv.FormatFloat(v/u.div, 'f', 2, 64)
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
			return s + u.suf
		}
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// unitLabel says what is rented and what the job uses: "8 GPUs fixed",
// "4 GPUs per-GPU", "8 GPUs fixed, 6 used".
func unitLabel(unit pricewatch.RentUnit, rented, used int) string {
	kind := "fixed"
	if unit == pricewatch.RentPerGPU {
		kind = "per-GPU"
	}
	s := plural(rented, "GPU") + " " + kind
	if used > 0 && used < rented {
		s += fmt.Sprintf(", %d used", used)
	}
	return s
}
