package main

import (
	"bufio"
	"bytes"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

// The soft memory limit (runtime/debug.SetMemoryLimit) makes the garbage
// collector work harder as the heap nears it, instead of letting a big
// run's garbage double the heap. A constant (160 MiB, until issue 20) is
// wrong at both ends: below a 1M-offer catalog's live heap the collector
// runs all the time (a 1M scrape took 2.2× as long: 417 GC cycles against
// 29), and above a small one's it bounds nothing. So it is sized from the
// catalog: room for the process itself plus a budget per stored offer, at
// least the old 160 MiB, at most half the machine's memory (its cgroup
// limit, or its RAM). With nothing stored yet (a first scrape of unknown
// size) it is a quarter of the machine. GOMEMLIMIT, when set, always wins:
// the runtime reads it and pricewatch leaves it alone.
const (
	memBase     = 64 << 20  // the process with an empty catalog
	memPerOffer = 1536      // per stored offer: its pack, its parse and diff in a run
	memFloor    = 160 << 20 // never below the limit that held at 100k
)

// memoryLimit is the soft limit for offers stored on a machine with
// machine bytes of memory (0: unknown).
func memoryLimit(offers int, machine int64) int64 {
	var l int64
	if offers > 0 {
		l = memBase + memPerOffer*int64(offers)
	} else {
		l = machine / 4
	}
	l = max(l, memFloor)
	if machine > 0 {
		l = min(l, max(machine/2, memFloor/2))
	}
	return l
}

// memLimiter applies the limit as the catalog grows.
type memLimiter struct {
	mu      sync.Mutex
	log     *slog.Logger
	machine int64
	set     int64 // the limit applied; 0: none yet
	user    bool  // GOMEMLIMIT is set: never touched
}

var memLimit = &memLimiter{}

// size applies the limit for offers stored, logging it when it changes
// by more than a tenth (a run's churn does not move it back and forth).
func (m *memLimiter) size(log *slog.Logger, offers int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.log == nil {
		m.log = log
		m.user = os.Getenv("GOMEMLIMIT") != ""
		m.machine = machineMemory()
		if m.user {
			log.Debug("memory limit from GOMEMLIMIT", "limit_mib", debug.SetMemoryLimit(-1)>>20)
			return
		}
	}
	if m.user {
		return
	}
	l := memoryLimit(offers, m.machine)
	if m.set > 0 && math.Abs(float64(l)/float64(m.set)-1) < 0.1 {
		return
	}
	m.set = l
	debug.SetMemoryLimit(l)
	m.log.Info("memory limit", "limit_mib", l>>20, "offers", offers, "machine_mib", m.machine>>20)
}

// machineMemory is the memory this process may use: the least of its
// cgroup's limit (v2 memory.max, v1 memory.limit_in_bytes) and the
// machine's RAM; 0 when none can be read.
func machineMemory() int64 {
	var least int64
	take := func(n int64) {
		if n > 0 && (least == 0 || n < least) {
			least = n
		}
	}
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(f); err == nil {
			// "max" (v2) or a page-rounded 2^63 (v1) mean no limit.
			if n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64); err == nil && n < 1<<62 {
				take(n)
			}
		}
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				if kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64); err == nil {
					take(kb << 10)
				}
				break
			}
		}
	}
	return least
}
