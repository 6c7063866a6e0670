package main

import "testing"

// The limit follows the catalog, bounded by the floor and the machine.
// With the constant 160 MiB it replaced, 7 of these 11 rows failed.
func TestMemoryLimit(t *testing.T) {
	const mib, gib = 1 << 20, 1 << 30
	for _, c := range []struct {
		name    string
		offers  int
		machine int64
		want    int64
	}{
		// 64 MiB + 100 × 1.5 KiB is below the floor.
		{"small catalog", 100, 24 * gib, 160 * mib},
		{"small catalog, unknown machine", 100, 0, 160 * mib},
		// 64 MiB + 100,000 × 1536 B = 64 + 146.48 MiB.
		{"100k offers", 100_000, 24 * gib, 64*mib + 100_000*1536},
		// 64 MiB + 1,000,000 × 1536 B = 1528.8 MiB.
		{"1M offers", 1_000_000, 24 * gib, 64*mib + 1_000_000*1536},
		// Half of a 2 GiB cgroup: 1 GiB, below the 1529 MiB the catalog asks.
		{"1M offers in a 2 GiB cgroup", 1_000_000, 2 * gib, gib},
		{"1M offers, unknown machine", 1_000_000, 0, 64*mib + 1_000_000*1536},
		// Nothing stored: a quarter of 24 GiB.
		{"first scrape", 0, 24 * gib, 6 * gib},
		{"first scrape, unknown machine", 0, 0, 160 * mib},
		// A quarter of 512 MiB is 128, below the floor; half is 256.
		{"first scrape on a small machine", 0, 512 * mib, 160 * mib},
		// Half of 256 MiB is 128 MiB: below the floor, the machine wins.
		{"tiny machine", 100_000, 256 * mib, 128 * mib},
		{"tinier machine", 100_000, 64 * mib, 80 * mib},
	} {
		if got := memoryLimit(c.offers, c.machine); got != c.want {
			t.Errorf("%s: memoryLimit(%d, %d MiB) = %d MiB, want %d MiB", c.name, c.offers, c.machine/mib, got/mib, c.want/mib)
		}
	}
}

// This machine's memory is read (a cgroup limit or /proc/meminfo).
func TestMachineMemory(t *testing.T) {
	if m := machineMemory(); m < 64<<20 {
		t.Errorf("machineMemory() = %d bytes", m)
	}
}
