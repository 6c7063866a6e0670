// Package rank prices named jobs on GPU cards: built-in workloads (model
// shape, method, precision, sequence, batch), the memory a workload needs per
// GPU and whether a card holds it, throughput profiles, and the cost per
// million tokens.
//
// A throughput profile comes from one of three origins (DESIGN.md "Which
// throughput applies"): a user's own measurement (OriginMeasured, supplied
// from outside this package), a published measurement from the embedded
// reference data/throughput.csv (OriginPublished), or the estimation model of
// reference THROUGHPUT.md section 2 applied to the card's specifications
// (OriginEstimated).
//
// Invariants:
//   - Throughput is always tokens per second per GPU. Training counts trained
//     tokens; serving counts generated (output) tokens, so a serving cost is
//     per million output tokens.
//   - Memory is per GPU in decimal GB (1 GB = 1e9 bytes); usable memory is
//     0.8 × the card's memory.
//   - Prices are per GPU-hour in the caller's currency; a cost comes back in
//     the same currency.
//   - Pure: no I/O besides the embedded data (parsed once at start-up into
//     read-only tables), no clock, no randomness; the same inputs always give
//     the same outputs. Functions are safe for concurrent use.
//   - Estimates are labelled OriginEstimated and published figures
//     OriginPublished; rows of category seed_example are never used as
//     published measurements.
package rank
