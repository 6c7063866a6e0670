package gcp

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pricewatch/pricewatch"
)

// The machine table (data/machines.csv) says what one rental of each GPU
// machine type holds and how the Billing Catalog prices it; its header
// comments cite the source of every row.
//
//go:embed data/machines.csv
var machinesCSV []byte

// Pricing says how a machine type's price is built from SKUs of one region
// and one usage type.
type Pricing string

// The pricing rules.
const (
	// PricingParts is GPUs × GPU SKU + vCPUs × core SKU + GiB × RAM SKU
	// (+ bundled Local SSD GiB × Local SSD SKU), for the whole machine.
	PricingParts Pricing = "parts"
	// PricingSlice is GPUs × the "(1 gpu slice)" SKU, which prices one GPU's
	// share of the whole machine, vCPUs, memory and Local SSD included.
	PricingSlice Pricing = "slice"
	// PricingPerGPU is, per GPU, the GPU SKU + the N1 share priced with it
	// (an n1-standard-4 per GPU): the renter attaches 1, 2, 4 (or 8) GPUs
	// to an N1 VM of their choice.
	PricingPerGPU Pricing = "per_gpu"
)

// Machine is one row of the machine table.
type Machine struct {
	// Type is the machine type ("a2-highgpu-1g"); for GPUs attached to N1,
	// "n1+<accelerator type>".
	Type string
	// Series is the family word of the vCPU and RAM SKUs that bill it ("A2",
	// "N1 Predefined"); empty for slice pricing.
	Series string
	// GPUSKUs are the GPU SKU names (as ParseDescription reads them) that
	// bill its GPUs.
	GPUSKUs []string
	// GPUs is the GPUs of one rental; for PricingPerGPU the largest of
	// Counts, the GPU counts one N1 VM may take.
	GPUs   int
	Counts []int
	// Card is the canonical card id; empty when no card exists yet.
	Card        string
	GPUMemoryGB float64
	// VCPUs, MemoryGB and LocalSSDGB are the shape's (PricingPerGPU: the
	// N1 share priced per GPU).
	VCPUs      float64
	MemoryGB   float64
	LocalSSDGB float64
	Pricing    Pricing
	// Sold are the modes Google sells the shape in.
	Sold   []pricewatch.Mode
	Source string
}

// SoldIn reports whether Google sells the shape in the mode.
func (m Machine) SoldIn(mode pricewatch.Mode) bool { return slices.Contains(m.Sold, mode) }

// allModes are the modes a Billing Catalog usage type maps to ("all" in the
// table).
var allModes = []pricewatch.Mode{pricewatch.ModeOnDemand, pricewatch.ModeSpot, pricewatch.ModeReserved1Y, pricewatch.ModeReserved3Y}

type machineTable struct {
	list  []Machine
	bySKU map[string][]int // fold(GPU SKU name) → indexes into list
}

var machines = sync.OnceValue(func() *machineTable {
	t, err := parseMachines(bytes.NewReader(machinesCSV))
	if err != nil {
		panic(fmt.Sprintf("gcp: embedded machine table: %v", err))
	}
	return t
})

// Machines returns a copy of the machine table, in its order.
func Machines() []Machine {
	list := machines().list
	out := make([]Machine, len(list))
	for i, m := range list {
		out[i] = m.clone()
	}
	return out
}

// MachinesFor returns the machine types billed by the GPU SKU name (as
// ParseDescription reads it), in table order; none for a GPU the table
// does not know.
func MachinesFor(gpuSKU string) []Machine {
	t := machines()
	var out []Machine
	for _, i := range t.bySKU[fold(gpuSKU)] {
		out = append(out, t.list[i].clone())
	}
	return out
}

// clone copies the slices too: the table is shared.
func (m Machine) clone() Machine {
	m.GPUSKUs, m.Counts, m.Sold = slices.Clone(m.GPUSKUs), slices.Clone(m.Counts), slices.Clone(m.Sold)
	return m
}

// fold is the matching key of a SKU name or series: lower case, single
// spaces.
func fold(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

func parseMachines(r io.Reader) (*machineTable, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	header, err := cr.Read()
	if err != nil {
		return nil, err
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, c := range []string{"machine_type", "series", "gpu_sku", "gpus", "card", "gpu_memory_gb", "vcpus", "memory_gb", "local_ssd_gb", "pricing", "sold", "source"} {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("no column %q", c)
		}
	}
	t := &machineTable{bySKU: map[string][]int{}}
	seen := map[string]bool{}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		get := func(c string) string { return strings.TrimSpace(rec[col[c]]) }
		m := Machine{Type: get("machine_type"), Series: get("series"), Card: get("card"),
			Pricing: Pricing(get("pricing")), Source: get("source")}
		if m.Type == "" || seen[m.Type] {
			return nil, fmt.Errorf("row %d: empty or repeated machine type %q", line, m.Type)
		}
		seen[m.Type] = true
		for _, n := range strings.Split(get("gpu_sku"), "|") {
			if n = strings.TrimSpace(n); n != "" {
				m.GPUSKUs = append(m.GPUSKUs, n)
			}
		}
		for _, f := range strings.Fields(get("gpus")) {
			n, err := strconv.Atoi(f)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("row %d (%s): gpus %q", line, m.Type, get("gpus"))
			}
			m.Counts = append(m.Counts, n)
		}
		for _, f := range []struct {
			dst *float64
			col string
		}{{&m.GPUMemoryGB, "gpu_memory_gb"}, {&m.VCPUs, "vcpus"}, {&m.MemoryGB, "memory_gb"}, {&m.LocalSSDGB, "local_ssd_gb"}} {
			if *f.dst, err = strconv.ParseFloat(get(f.col), 64); err != nil || *f.dst < 0 {
				return nil, fmt.Errorf("row %d (%s): %s %q", line, m.Type, f.col, get(f.col))
			}
		}
		if s := get("sold"); s == "all" {
			m.Sold = slices.Clone(allModes)
		} else {
			for _, f := range strings.Fields(s) {
				mode, err := pricewatch.ParseMode(f)
				if err != nil || !slices.Contains(allModes, mode) {
					return nil, fmt.Errorf("row %d (%s): sold %q", line, m.Type, s)
				}
				m.Sold = append(m.Sold, mode)
			}
		}
		if err := m.check(); err != nil {
			return nil, fmt.Errorf("row %d (%s): %w", line, m.Type, err)
		}
		if m.Pricing != PricingPerGPU {
			m.Counts = nil
		}
		for _, n := range m.GPUSKUs {
			t.bySKU[fold(n)] = append(t.bySKU[fold(n)], len(t.list))
		}
		t.list = append(t.list, m)
	}
	return t, nil
}

func (m *Machine) check() error {
	switch {
	case len(m.GPUSKUs) == 0:
		return errors.New("no GPU SKU")
	case len(m.Counts) == 0 || !slices.IsSorted(m.Counts):
		return errors.New("gpus must be ascending counts")
	case len(m.Sold) == 0:
		return errors.New("sold in no mode")
	case m.GPUMemoryGB <= 0 || m.Source == "":
		return errors.New("GPU memory and source are required")
	}
	slice := strings.HasSuffix(fold(m.GPUSKUs[0]), sliceSuffix)
	for _, n := range m.GPUSKUs {
		if strings.HasSuffix(fold(n), sliceSuffix) != slice {
			return errors.New("GPU SKUs mix slices and whole GPUs")
		}
	}
	switch m.Pricing {
	case PricingParts, PricingPerGPU:
		if slice || m.Series == "" || m.VCPUs <= 0 || m.MemoryGB <= 0 {
			return fmt.Errorf("%s pricing needs whole-GPU SKUs, a series, vCPUs and memory", m.Pricing)
		}
		if m.Pricing == PricingPerGPU && m.LocalSSDGB != 0 {
			return errors.New("per_gpu pricing bundles no Local SSD")
		}
	case PricingSlice:
		if !slice || m.Series != "" {
			return errors.New("slice pricing needs \"(1 gpu slice)\" SKUs and no series")
		}
	default:
		return fmt.Errorf("unknown pricing %q", m.Pricing)
	}
	if m.Pricing != PricingPerGPU && len(m.Counts) != 1 {
		return errors.New("a fixed shape has one GPU count")
	}
	m.GPUs = m.Counts[len(m.Counts)-1]
	return nil
}
