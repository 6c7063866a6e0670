package gcp

import (
	"slices"
	"strings"

	"github.com/pricewatch/pricewatch"
)

// UnmappedName is the GPU name given to a GPU or slice SKU that no machine
// type in the table uses, so that the unknown report names the SKU.
func UnmappedName(gpuSKU string) string { return "unmapped GCP GPU SKU " + gpuSKU }

// UnpricedName is the GPU name given to a GPU SKU whose machine types could
// not all be priced in its region and mode, with the SKUs they lack.
func UnpricedName(gpuSKU string, missing []string) string {
	return "unpriced GCP GPU SKU " + gpuSKU + " (missing " + strings.Join(missing, ", ") + ")"
}

type rateKey struct {
	resource Resource
	name     string // folded series; "" for Local SSD
	region   string
	mode     pricewatch.Mode
}

// Build prices every machine type the GPU and slice rates bill, from the
// vCPU, RAM and Local SSD rates of the same region, mode and currency (the
// first rate of a kind wins). It returns one observation per machine type,
// region and mode, in the order of the GPU rates; a GPU rate no machine
// type uses, or whose machine types lack a component, adds one observation
// under UnmappedName or UnpricedName at the SKU's own per-GPU price,
// without a rent unit.
func Build(rates []Rate) []pricewatch.Observation {
	parts := map[rateKey]Rate{}
	var gpus []Rate
	for _, r := range rates {
		switch r.Resource {
		case ResourceGPU, ResourceSlice:
			gpus = append(gpus, r)
		default:
			k := rateKey{r.Resource, fold(r.Name), r.Region, r.Mode}
			if _, dup := parts[k]; !dup {
				parts[k] = r
			}
		}
	}
	var out []pricewatch.Observation
	seen := map[string]bool{}
	for _, g := range gpus {
		var ms []Machine
		for _, m := range MachinesFor(g.Name) {
			if (m.Pricing == PricingSlice) == (g.Resource == ResourceSlice) {
				ms = append(ms, m)
			}
		}
		if len(ms) == 0 {
			out = append(out, skuObservation(g, UnmappedName(g.Name)))
			continue
		}
		var missing []string // in the order machines lack them: core, RAM, Local SSD
		for _, m := range ms {
			o, lack := price(m, g, parts)
			for _, l := range lack {
				if !slices.Contains(missing, l) {
					missing = append(missing, l)
				}
			}
			if len(lack) > 0 {
				continue
			}
			if k := pricewatch.OfferKey(o.Source, o.OfferID, o.Region, o.Mode); !seen[k] {
				seen[k] = true
				out = append(out, o)
			}
		}
		if len(missing) > 0 {
			out = append(out, skuObservation(g, UnpricedName(g.Name, missing)))
		}
	}
	return out
}

// price is the machine type's observation from the GPU rate g and the
// component rates, or the components it lacks.
func price(m Machine, g Rate, parts map[rateKey]Rate) (pricewatch.Observation, []string) {
	var lack []string
	get := func(res Resource, series, what string) float64 {
		r, ok := parts[rateKey{res, fold(series), g.Region, g.Mode}]
		if !ok || r.Currency != g.Currency {
			lack = append(lack, what)
			return 0
		}
		return r.Price
	}
	o := pricewatch.Observation{
		Source: Name, Provider: "gcp", OfferID: m.Type, Region: g.Region,
		GPUName: m.Card, GPUCount: m.GPUs, GPUMemoryGB: m.GPUMemoryGB,
		Currency: g.Currency, Unit: pricewatch.PerHour, Mode: g.Mode, URL: PageURL,
		RentUnit: pricewatch.RentFixed,
		// The shape's vCPUs, memory (GiB, as Google prices it) and bundled
		// Local SSD (machines.csv, per GPU for an N1 share: scaled below).
		Machine: pricewatch.Machine{VCPUs: m.VCPUs, RAMGB: m.MemoryGB, DiskGB: m.LocalSSDGB, RentURL: RentURL},
	}
	if o.GPUName == "" {
		o.GPUName = g.Name // no card yet: the unknown report names the GPU
	}
	switch m.Pricing {
	case PricingSlice:
		o.Price = float64(m.GPUs) * g.Price
	case PricingParts:
		o.Price = float64(m.GPUs)*g.Price +
			m.VCPUs*get(ResourceCore, m.Series, m.Series+" core") +
			m.MemoryGB*get(ResourceRAM, m.Series, m.Series+" RAM")
		if m.LocalSSDGB > 0 {
			o.Price += m.LocalSSDGB * get(ResourceLocalSSD, "", "Local SSD")
		}
	case PricingPerGPU:
		o.Price = g.Price +
			m.VCPUs*get(ResourceCore, m.Series, m.Series+" core") +
			m.MemoryGB*get(ResourceRAM, m.Series, m.Series+" RAM")
		o.PerGPU, o.RentUnit, o.GPUCounts = true, pricewatch.RentPerGPU, slices.Clone(m.Counts)
		// machines.csv states the N1 share of one GPU; the observation
		// describes its GPUCount GPUs.
		n := float64(max(m.GPUs, 1))
		o.VCPUs, o.RAMGB, o.DiskGB = m.VCPUs*n, m.MemoryGB*n, m.LocalSSDGB*n
	}
	if !m.SoldIn(g.Mode) {
		o.Available = pricewatch.AvailableNo
	}
	return o, lack
}

// skuObservation keeps a GPU or slice SKU that no machine price could be
// built from, at its own per-GPU price, under a name normalize reports.
func skuObservation(g Rate, name string) pricewatch.Observation {
	return pricewatch.Observation{
		Source: Name, Provider: "gcp", OfferID: g.SKU, Region: g.Region,
		GPUName: name, GPUCount: 1, GPUMemoryGB: g.MemoryGB,
		Price: g.Price, Currency: g.Currency, Unit: pricewatch.PerHour, PerGPU: true,
		Mode: g.Mode, URL: PageURL,
	}
}
