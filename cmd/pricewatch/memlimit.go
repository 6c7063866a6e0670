package main

import (
	"os"
	"runtime/debug"
)

// defaultMemoryLimit is the soft memory limit of every pricewatch process
// unless GOMEMLIMIT sets one: the garbage collector works harder as the
// heap nears it, instead of letting a 100k-offer run's garbage double the
// heap. It is soft: a larger live heap still fits, at more GC work.
const defaultMemoryLimit = 160 << 20

func init() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
}
