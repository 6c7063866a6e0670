package rank

import "math"

// CostPerMillionTokens is price per GPU-hour × 1e6 / (tokens per second per
// GPU × 3600), in the price's currency. A throughput of zero or less gives
// +Inf: the job never finishes.
func CostPerMillionTokens(pricePerGPUHour, tokensPerSecond float64) float64 {
	if tokensPerSecond <= 0 {
		return math.Inf(1)
	}
	return pricePerGPUHour * 1e6 / (tokensPerSecond * 3600)
}

// TrainFLOPsSeconds is the time in seconds one card needs to train tokens
// tokens of a paramsB-billion-parameter model: 6 × N × tokens /
// (peak TFLOPS × 1e12 × utilization). A peak or utilization of zero or less
// gives +Inf.
func TrainFLOPsSeconds(paramsB, tokens, peakTFLOPS, utilization float64) float64 {
	rate := peakTFLOPS * 1e12 * utilization
	if rate <= 0 {
		return math.Inf(1)
	}
	return 6 * paramsB * 1e9 * tokens / rate
}
