//go:build !race

package rank

// raceDetector is whether the tests run under -race: the calibration's
// leave-one-publisher-out refits are single-goroutine arithmetic that
// the detector slows sevenfold (74 s against 10 s) without anything to
// watch, so under -race they are left to .ci/run's plain `go test` run.
const raceDetector = false
