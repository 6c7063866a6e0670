//go:build race

package rank

// raceDetector is whether the tests run under -race (see race_off_test.go).
const raceDetector = true
