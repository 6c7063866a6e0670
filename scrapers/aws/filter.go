package aws

import (
	"math"
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
	// Families are the instance families kept; empty means DefaultFamilies.
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
	// NoGPUCount counts rows of a kept family and shape whose GPU column is
	// not a whole positive number (they are skipped).
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
	families map[string]bool
	seen     map[string]bool
	stats    Stats
}

func newMatcher(f Filter) *matcher {
	fams := f.Families
	if len(fams) == 0 {
		fams = DefaultFamilies
	}
	m := &matcher{f: f, families: map[string]bool{}, seen: map[string]bool{}}
	for _, x := range fams {
		m.families[strings.ToLower(strings.TrimSpace(x))] = true
	}
	return m
}

// familyOK is the cheap first test every row goes through.
func (m *matcher) familyOK(instanceType string) bool {
	return instanceType != "" && m.families[Family(instanceType)]
}

// productOK applies the plain-Linux, shared-tenancy, used-capacity,
// on-demand-market filters public parsers use. Capacity Blocks
// (MarketOption "CapacityBlock", operation "RunInstances:CB"), Windows,
// RHEL, SQL images, dedicated hosts and capacity-reservation rows fail.
// It returns the GPU count.
func (m *matcher) productOK(p *product) (int, bool) {
	if !m.familyOK(p.instanceType) || !strings.HasPrefix(p.productFamily, "Compute Instance") ||
		p.tenancy != "Shared" || p.os != "Linux" ||
		(p.preInstalledSw != "" && p.preInstalledSw != "NA") ||
		(p.capacityStatus != "" && p.capacityStatus != "Used") ||
		(p.marketOption != "" && p.marketOption != "OnDemand") ||
		(p.locationType != "" && p.locationType != "AWS Region") ||
		(p.operation != "" && p.operation != "RunInstances") ||
		(p.regionCode != "" && m.f.Region != "" && p.regionCode != m.f.Region) {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(p.gpu))
	if err != nil || n <= 0 {
		m.stats.NoGPUCount++
		return 0, false
	}
	return n, true
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

// observation builds one observation, or reports a duplicate.
func (m *matcher) observation(instanceType string, gpus int, md pricewatch.Mode, p float64, currency string) (pricewatch.Observation, bool) {
	key := instanceType + "/" + string(md)
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
	return pricewatch.Observation{
		Source: m.f.Source, Provider: "aws", OfferID: instanceType, Region: m.f.Region,
		GPUName: g.Name, GPUCount: gpus, GPUMemoryGB: g.MemoryGB,
		Price: p, Currency: strings.ToUpper(currency), Unit: pricewatch.PerHour, PerGPU: false,
		Mode: md, URL: m.f.URL,
		// An instance type is rented whole, with the GPU count its row states.
		RentUnit: pricewatch.RentFixed,
	}, true
}
