package gcp

import (
	"strings"

	"github.com/pricewatch/pricewatch"
)

// A GPU SKU prices one GPU; a VM gets its GPUs in the counts Compute Engine
// allows for the model: attached to an N1 VM (T4, P4, P100, V100, K80), or
// fixed by the accelerator-optimized machine type that carries them (A2,
// A3, A4, G2: one machine type per count). So every GPU SKU is rented per
// GPU, in one of these counts (GPUCounts), with GPUCount the largest.
//
// Sources, read 2026 (see fixtures/gcp/PROVENANCE.md):
//   - dstackai/gpuhunt src/gpuhunt/providers/gcp.py: N1 counts zip
//     [1, 2, 4, 8, 16] with the per-count vCPU/RAM limits of each GPU
//     (P4, P100, T4: three limits, so 1, 2, 4; V100, K80: four, so 1, 2,
//     4, 8); the other GPUs come with the machine types; on-demand offers of
//     a3-highgpu with fewer than 8 GPUs (and of a3-ultragpu, a4) are dropped
//     as not available on demand (citing Compute Engine's
//     accelerator-optimized machines page, consumption options by machine
//     type).
//   - skypilot-org/skypilot sky/catalog/data_fetchers/fetch_gcp.py: counts
//     are the powers of two up to the zone's maximumCardsPerInstance, and
//     H100 Mega, H200 and B200 only in 8; "H100 80GB Mega", "H100 Mega
//     80GB" and "H100 80GB Plus" name the same A3 Mega GPU.
//   - Compute Engine machine types: a2-highgpu-1g/2g/4g/8g and
//     a2-megagpu-16g (A100 40GB), a2-ultragpu-1g/2g/4g/8g (A100 80GB),
//     a3-highgpu-1g/2g/4g/8g (H100 80GB), a3-megagpu-8g, a3-ultragpu-8g
//     (H200), a4-highgpu-8g (B200), g2-standard-4…96 (L4 in 1, 2, 4, 8).
type attachCounts struct {
	// counts are the GPU counts one VM may have.
	counts []int
	// onDemand, when set, are the counts on-demand and committed-use VMs
	// may have (A3 High's 1-, 2- and 4-GPU types are Spot or Flex-start
	// only).
	onDemand []int
}

var gpuCounts = map[string]attachCounts{
	// N1 general-purpose VMs with attached GPUs.
	"t4":   {counts: []int{1, 2, 4}},
	"p4":   {counts: []int{1, 2, 4}},
	"p100": {counts: []int{1, 2, 4}},
	"v100": {counts: []int{1, 2, 4, 8}},
	"k80":  {counts: []int{1, 2, 4, 8}},
	// A2 Standard (A100 40GB) and A2 Ultra (A100 80GB).
	"a100":      {counts: []int{1, 2, 4, 8, 16}},
	"a100 80gb": {counts: []int{1, 2, 4, 8}},
	// A3 High / Edge (H100 80GB): 1, 2 and 4 only as Spot (or Flex-start).
	"h100 80gb": {counts: []int{1, 2, 4, 8}, onDemand: []int{8}},
	// A3 Mega, A3 Ultra (H200), A4 (B200): 8 only.
	"h100 80gb mega": {counts: []int{8}},
	"h100 mega 80gb": {counts: []int{8}},
	"h100 80gb plus": {counts: []int{8}},
	"h200 141gb":     {counts: []int{8}},
	"b200":           {counts: []int{8}},
	// G2 (L4).
	"l4": {counts: []int{1, 2, 4, 8}},
}

// GPUCounts returns the GPU counts one VM may have of the GPU a SKU names
// ("Nvidia Tesla T4", "H200 141GB") in the mode; ok is false for a GPU the
// table does not know (its offers state no rent unit).
func GPUCounts(gpu string, mode pricewatch.Mode) ([]int, bool) {
	k := strings.ToLower(strings.Join(strings.Fields(gpu), " "))
	k = strings.TrimPrefix(k, "nvidia ")
	k = strings.TrimPrefix(k, "tesla ")
	c, ok := gpuCounts[k]
	if !ok {
		return nil, false
	}
	if c.onDemand != nil && mode != pricewatch.ModeSpot {
		return c.onDemand, true
	}
	return c.counts, true
}
