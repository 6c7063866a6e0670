package rank

import (
	"fmt"
	"math"
	"strings"

	"github.com/pricewatch/pricewatch"
)

// SLO is a serving job's service level: time to first token and time per
// output token at a percentile of requests, or output tokens per second
// each user sees (0: no target). The estimate lowers the concurrency an
// engine instance runs until every target holds.
type SLO struct {
	TTFTms              float64 `json:"ttft_ms,omitempty" yaml:"ttft_ms"`
	TPOTms              float64 `json:"tpot_ms,omitempty" yaml:"tpot_ms"`
	Percentile          float64 `json:"percentile,omitempty" yaml:"percentile"`
	UserTokensPerSecond float64 `json:"user_tokens_per_second,omitempty" yaml:"user_tokens_per_second"`
}

// Set reports whether the SLO has a target.
func (s SLO) Set() bool { return s.TTFTms > 0 || s.TPOTms > 0 || s.UserTokensPerSecond > 0 }

// Bounds of a service level.
const (
	MaxSLOms                = 600000 // ten minutes
	MaxUserTokensPerSecond  = 10000
	MaxCachedPromptShare    = 0.99
	DefaultSLOPercentile    = 50
	minSLOPercentile        = 50
	maxSLOPercentile        = 99.9
	sloSearchMaxConcurrency = 1 << 16
)

// validate checks a service level, naming the field.
func (s SLO) validate() error {
	switch {
	case !within(s.TTFTms, 0, MaxSLOms):
		return invalid("slo.ttft_ms", "must be within 0..%d ms, got %g", MaxSLOms, s.TTFTms)
	case !within(s.TPOTms, 0, MaxSLOms):
		return invalid("slo.tpot_ms", "must be within 0..%d ms, got %g", MaxSLOms, s.TPOTms)
	case !within(s.UserTokensPerSecond, 0, MaxUserTokensPerSecond):
		return invalid("slo.user_tokens_per_second", "must be within 0..%d, got %g", MaxUserTokensPerSecond, s.UserTokensPerSecond)
	case s.Percentile != 0 && !within(s.Percentile, minSLOPercentile, maxSLOPercentile):
		return invalid("slo.percentile", "must be within %d..%g (0: the median), got %g", minSLOPercentile, maxSLOPercentile, s.Percentile)
	case s.Percentile != 0 && !s.Set():
		return invalid("slo.percentile", "goes with ttft_ms, tpot_ms or user_tokens_per_second")
	}
	return nil
}

// tailFactor is how much slower than the steady-state step the given
// percentile of requests sees. DEFAULT, stated by no page: the model gives
// a full engine's steady step (the median request's); batches that
// admit a prefill or run longer contexts are slower for a share of the
// tokens, taken as 1.25 × at p90, 1.35 × at p95 and 1.5 × at p99, linear
// between.
func tailFactor(p float64) float64 {
	pts := [][2]float64{{50, 1}, {90, 1.25}, {95, 1.35}, {99, 1.5}, {100, 1.5}}
	if p <= 50 {
		return 1
	}
	for i := 1; i < len(pts); i++ {
		if p <= pts[i][0] {
			a, b := pts[i-1], pts[i]
			return a[1] + (b[1]-a[1])*(p-a[0])/(b[0]-a[0])
		}
	}
	return 1.5
}

// sloLatency is a serving result's latencies at its concurrency, in
// seconds, at the SLO's percentile: TPOT is the time each sequence waits
// for its next token (the group's output rate shared by its sequences,
// prefills of others included); TTFT its own prompt's prefill on the
// group plus one step.
func sloLatency(r servingResult, s servingCase, g float64, p float64) (ttft, tpot float64) {
	if !(r.tps > 0) {
		return math.Inf(1), math.Inf(1)
	}
	tpot = r.seqs / (r.tps * g)
	ttft = r.prefillT*float64(s.osl) + tpot
	f := tailFactor(p)
	return ttft * f, tpot * f
}

// meetSLO lowers the concurrency of a serving case until its SLO holds:
// the largest number of sequences (at most what the engine would run)
// whose latencies meet every target. It returns the result there, or the
// reason no concurrency meets it (with the figures at one sequence).
func meetSLO(c pricewatch.Card, s servingCase, full servingResult, slo SLO) (servingResult, string) {
	lay := s.layout.norm()
	g := float64(lay.GPUs())
	p := slo.Percentile
	if p == 0 {
		p = DefaultSLOPercentile
	}
	at := func(b int) servingResult {
		t := s
		t.maxSeqs = float64(b) / float64(lay.DP)
		return servingRate(c, t)
	}
	ok := func(r servingResult) bool {
		if !r.fits {
			return false
		}
		ttft, tpot := sloLatency(r, s, g, p)
		return (slo.TTFTms <= 0 || ttft*1000 <= slo.TTFTms) && (slo.TPOTms <= 0 || tpot*1000 <= slo.TPOTms) &&
			(slo.UserTokensPerSecond <= 0 || 1/tpot >= slo.UserTokensPerSecond)
	}
	if ok(full) {
		return full, ""
	}
	hi := min(int(math.Floor(full.seqs)), sloSearchMaxConcurrency)
	lo := max(lay.DP, 1)
	one := at(lo)
	if !ok(one) {
		ttft, tpot := sloLatency(one, s, g, p)
		return one, sloMiss(slo, p, ttft, tpot, lay.GPUs())
	}
	// The largest b in [lo, hi) that meets it: latency grows with the
	// sequences sharing each step.
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if ok(at(mid)) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return at(lo), ""
}

// sloMiss says why no concurrency meets the SLO.
func sloMiss(slo SLO, p, ttft, tpot float64, gpus int) string {
	var miss []string
	if slo.TTFTms > 0 && ttft*1000 > slo.TTFTms {
		miss = append(miss, fmt.Sprintf("time to first token %.0f ms > %g ms", ttft*1000, slo.TTFTms))
	}
	if slo.TPOTms > 0 && tpot*1000 > slo.TPOTms {
		miss = append(miss, fmt.Sprintf("time per output token %.1f ms > %g ms", tpot*1000, slo.TPOTms))
	}
	if slo.UserTokensPerSecond > 0 && 1/tpot < slo.UserTokensPerSecond {
		miss = append(miss, fmt.Sprintf("%.1f tokens/s per user < %g", 1/tpot, slo.UserTokensPerSecond))
	}
	return fmt.Sprintf("cannot meet the service level at any concurrency: one sequence on %s already has %s (p%g)",
		gpus1(gpus), strings.Join(miss, ", "), p)
}
