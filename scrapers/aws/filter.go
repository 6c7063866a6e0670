package aws

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/pricewatch/pricewatch"
)

// Filter says which rows of one region's offer file become observations
// and how they are labelled.
type Filter struct {
	// Source is the registration name ("aws" or "aws-china").
	Source string
	// Region is the region code of the file; rows stating another region
	// code (Local Zones, a misplaced file) are skipped.
	Region string
	// Families are the instance families kept; empty means every GPU
	// family (the table's, and any other whose GPU column states GPUs).
	Families []string
	// URL is recorded on every observation.
	URL string
}

// Stats counts what a parse saw.
type Stats struct {
	// Rows is the number of CSV data rows, or JSON products, read.
	Rows int
	// Observations is the number emitted.
	Observations int
	// NoGPUCount counts rows of a known GPU family whose GPU count cannot
	// be told (the GPU column is not a whole positive number and the size
	// is not in Fractions): they are reported under their instance type.
	NoGPUCount int
	// Duplicates counts rows repeating an instance type and mode already
	// emitted (the first wins).
	Duplicates int
	// Version and Published are the file's own version and publication date.
	Version, Published string
}

// product holds the attributes the filters look at.
type product struct {
	instanceType, productFamily, tenancy, os, preInstalledSw   string
	capacityStatus, marketOption, locationType, operation, gpu string
	regionCode                                                 string
}

type matcher struct {
	f        Filter
	families map[string]bool // nil: every GPU family
	seen     map[string]bool
	stats    Stats
}

func newMatcher(f Filter) *matcher {
	m := &matcher{f: f, seen: map[string]bool{}}
	for _, x := range f.Families {
		if x = strings.ToLower(strings.TrimSpace(x)); x != "" {
			if m.families == nil {
				m.families = map[string]bool{}
			}
			m.families[x] = true
		}
	}
	return m
}

// familyOK is the cheap first test every row goes through.
func (m *matcher) familyOK(instanceType string) bool {
	if instanceType == "" {
		return false
	}
	if m.families == nil {
		return !nonGPU.MatchString(strings.ToLower(instanceType))
	}
	return m.families[Family(instanceType)]
}

// count is what a row says about its GPUs.
type count struct {
	n    int     // whole GPUs; 1 for a fraction
	frac float64 // the share of one GPU of a fractional size
	told bool    // false: the count cannot be told (reported, no rent unit)
}

// productOK applies the plain-Linux, shared-tenancy, used-capacity,
// on-demand-market filters public parsers use. Capacity Blocks
// (MarketOption "CapacityBlock", operation "RunInstances:CB"), Windows,
// RHEL, SQL images, dedicated hosts and capacity-reservation rows fail.
// It returns the GPU count: the fraction of a fractional family's size,
// else the GPU column; a known GPU family whose count cannot be told is
// kept with told false; a row of no known family without GPUs is no GPU
// row.
func (m *matcher) productOK(p *product) (count, bool) {
	if !m.familyOK(p.instanceType) || !strings.HasPrefix(p.productFamily, "Compute Instance") ||
		p.tenancy != "Shared" || p.os != "Linux" ||
		(p.preInstalledSw != "" && p.preInstalledSw != "NA") ||
		(p.capacityStatus != "" && p.capacityStatus != "Used") ||
		(p.marketOption != "" && p.marketOption != "OnDemand") ||
		(p.locationType != "" && p.locationType != "AWS Region") ||
		(p.operation != "" && p.operation != "RunInstances") ||
		(p.regionCode != "" && m.f.Region != "" && p.regionCode != m.f.Region) {
		return count{}, false
	}
	fam, size, _ := strings.Cut(p.instanceType, ".")
	if fr, ok := Fractions[fam]; ok {
		if f, ok := fr[size]; ok {
			return count{n: 1, frac: f, told: true}, true
		}
		m.stats.NoGPUCount++
		return count{n: 1}, true
	}
	n, err := strconv.Atoi(strings.TrimSpace(p.gpu))
	if err == nil && n > 0 {
		return count{n: n, told: true}, true
	}
	if _, known := Families[fam]; known || m.families[fam] {
		// A GPU family, but its row does not say how many: reported.
		m.stats.NoGPUCount++
		return count{n: 1}, true
	}
	return count{}, false // not a GPU row
}

// mode maps a term to a billing mode: OnDemand, or a standard No Upfront
// reservation of 1 or 3 years. Other reservations (upfront payments,
// convertible) have no plain hourly rate and are skipped.
func mode(termType, lease, purchase, class string) (pricewatch.Mode, bool) {
	switch termType {
	case "OnDemand":
		return pricewatch.ModeOnDemand, true
	case "Reserved":
		if purchase != "No Upfront" || !strings.EqualFold(class, "standard") {
			return "", false
		}
		switch lease {
		case "1yr":
			return pricewatch.ModeReserved1Y, true
		case "3yr":
			return pricewatch.ModeReserved3Y, true
		}
	}
	return "", false
}

// price parses a price per unit; only positive finite prices count (the
// Capacity Block rows and many placeholders are 0).
func price(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return 0, false
	}
	return v, true
}

// observation builds one observation, or reports a duplicate. A row whose
// GPU count cannot be told is kept once per instance type (its first
// mode), under the instance type, with one GPU and no rent unit, so that
// normalize reports it.
func (m *matcher) observation(instanceType string, c count, mc machine, md pricewatch.Mode, p float64, currency string) (pricewatch.Observation, bool) {
	key := instanceType + "/" + string(md)
	if !c.told {
		key = instanceType + "/untold"
	}
	if m.seen[key] {
		m.stats.Duplicates++
		return pricewatch.Observation{}, false
	}
	m.seen[key] = true
	fam := Family(instanceType)
	g, ok := Families[fam]
	if !ok {
		g = GPU{Name: UnmappedName(fam)}
	}
	m.stats.Observations++
	o := pricewatch.Observation{
		Source: m.f.Source, Provider: providerOf(m.f.Source), OfferID: instanceType, Region: m.f.Region,
		GPUName: g.Name, GPUCount: c.n, GPUFraction: c.frac, GPUMemoryGB: g.MemoryGB,
		Price: p, Currency: strings.ToUpper(currency), Unit: pricewatch.PerHour, PerGPU: false,
		Mode: md, URL: m.f.URL,
		// An instance type is rented whole, with the GPU count its row
		// states (a fractional size: one share of one GPU).
		RentUnit: pricewatch.RentFixed,
		Machine:  pricewatch.Machine{VCPUs: mc.vcpus, RAMGB: mc.ramGiB, DiskGB: mc.diskGB, RentURL: rentURL(m.f.Source)},
	}
	if !c.told {
		o.GPUName, o.GPUCount, o.GPUMemoryGB, o.RentUnit = instanceType, 1, 0, ""
	}
	return o, true
}

// providerOf is the provider a source's offers are sold by: AWS China's
// regions are run by their own operators (Sinnet in Beijing, NWCD in
// Ningxia) under their own accounts and prices, so they are provider
// aws-china, not copies of the global aws offers.
func providerOf(source string) string {
	if source == SourceChina {
		return SourceChina
	}
	return "aws"
}

// machine is what an instance type comes with beyond its GPUs, from the
// offer file's vCPU, Memory ("1152 GiB") and Storage ("8 x 1000 SSD", "EBS
// only") attributes: the instance's whole (GiB as AWS states memory; GB as
// it states instance storage). An attribute that does not parse is 0, not
// stated.
type machine struct{ vcpus, ramGiB, diskGB float64 }

var storageRe = regexp.MustCompile(`^\s*(?:(\d+)\s*x\s*)?([\d.,]+)\b`)

func parseMachine(vcpu, memory, storage string) machine {
	var mc machine
	if v, err := strconv.ParseFloat(strings.TrimSpace(vcpu), 64); err == nil && v > 0 && v < 1e5 {
		mc.vcpus = v
	}
	if f := strings.Fields(strings.ReplaceAll(memory, ",", "")); len(f) == 2 && f[1] == "GiB" {
		if v, err := strconv.ParseFloat(f[0], 64); err == nil && v > 0 && v < 1e6 {
			mc.ramGiB = v
		}
	}
	if g := storageRe.FindStringSubmatch(storage); g != nil {
		n := 1.0
		if g[1] != "" {
			n, _ = strconv.ParseFloat(g[1], 64)
		}
		if v, err := strconv.ParseFloat(strings.ReplaceAll(g[2], ",", ""), 64); err == nil && v > 0 && n*v < 1e7 {
			mc.diskGB = n * v
		}
	}
	return mc
}

// rentURL is where an instance is launched: the EC2 console's launch page,
// of the China partition for the China regions.
func rentURL(source string) string {
	if providerOf(source) == SourceChina {
		return "https://console.amazonaws.cn/ec2/home#LaunchInstances:"
	}
	return "https://console.aws.amazon.com/ec2/home#LaunchInstances:"
}
