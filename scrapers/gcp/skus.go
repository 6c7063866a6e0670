package gcp

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// Page is one answer of the skus endpoint.
type Page struct {
	// Rates are the priced SKUs the machine table can use, one per service
	// region.
	Rates         []Rate
	NextPageToken string
	// SKUs counts the SKU objects on the page; NoRegion the GPU SKUs
	// skipped because they name no service region.
	SKUs     int
	NoRegion int
}

// Resource is what a rate prices.
type Resource string

// The resources a machine price is built from.
const (
	// ResourceGPU is one whole GPU, per hour.
	ResourceGPU Resource = "gpu"
	// ResourceSlice is one GPU's slice of a machine (its share of the
	// vCPUs, memory and Local SSD included), per hour.
	ResourceSlice Resource = "slice"
	// ResourceCore is one vCPU of a series, per hour.
	ResourceCore Resource = "core"
	// ResourceRAM is one GiB of a series' memory, per hour.
	ResourceRAM Resource = "ram"
	// ResourceLocalSSD is one GiB of Local SSD, per hour: the SKU's
	// GiB-month price ÷ 730 (Google's hours per month).
	ResourceLocalSSD Resource = "local_ssd"
)

// Rate is one SKU's price in one service region.
type Rate struct {
	SKU      string
	Resource Resource
	// Name is the GPU as the SKU names it ("Nvidia Tesla A100", "A4 Nvidia
	// B200 (1 gpu slice)", "RTX 6000 96GB") for GPUs and slices, the series
	// ("A2", "N1 Predefined", "A3Plus") for cores and RAM, empty for Local
	// SSD.
	Name string
	// MemoryGB is the memory a GPU SKU's name states ("80GB"), 0 if none.
	MemoryGB float64
	Region   string
	Mode     pricewatch.Mode
	// Price is per hour of the resource's unit, in Currency.
	Price    float64
	Currency string
}

type response struct {
	SKUs          *[]sku `json:"skus"`
	NextPageToken string `json:"nextPageToken"`
	Error         *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Details []struct {
			Reason string `json:"reason"`
		} `json:"details"`
	} `json:"error"`
}

type sku struct {
	SkuID       string `json:"skuId"`
	Description string `json:"description"`
	Category    *struct {
		ResourceFamily string `json:"resourceFamily"`
		ResourceGroup  string `json:"resourceGroup"`
		UsageType      string `json:"usageType"`
	} `json:"category"`
	ServiceRegions []string `json:"serviceRegions"`
	PricingInfo    []struct {
		PricingExpression struct {
			UsageUnit   string `json:"usageUnit"`
			TieredRates []struct {
				StartUsageAmount float64 `json:"startUsageAmount"`
				UnitPrice        money   `json:"unitPrice"`
			} `json:"tieredRates"`
		} `json:"pricingExpression"`
	} `json:"pricingInfo"`
	GeoTaxonomy *struct {
		Type    string   `json:"type"`
		Regions []string `json:"regions"`
	} `json:"geoTaxonomy"`
}

// money is google.type.Money: units is an int64, which JSON carries as a
// string (a number is accepted too).
type money struct {
	CurrencyCode string          `json:"currencyCode"`
	Units        json.RawMessage `json:"units"`
	Nanos        int64           `json:"nanos"`
}

// Amount is units + nanos/1e9; ok is false for malformed or mixed-sign values.
func (m money) Amount() (float64, bool) {
	u := strings.Trim(strings.TrimSpace(string(m.Units)), `"`)
	var units int64
	if u != "" && u != "null" {
		var err error
		if units, err = strconv.ParseInt(u, 10, 64); err != nil {
			return 0, false
		}
	}
	if m.Nanos <= -1e9 || m.Nanos >= 1e9 || (units > 0 && m.Nanos < 0) || (units < 0 && m.Nanos > 0) {
		return 0, false
	}
	return float64(units) + float64(m.Nanos)/1e9, true
}

// Parse reads one page of SKUs. A page without usable SKUs is not an error
// (the catalog pages through every Compute Engine SKU); a body with neither
// SKUs nor a next page is ErrNothingParsed.
func Parse(body []byte) (Page, error) {
	var r response
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return Page{}, err
	}
	if r.Error != nil {
		reason := r.Error.Status
		for _, d := range r.Error.Details {
			if d.Reason != "" {
				reason = d.Reason
			}
		}
		return Page{}, fmt.Errorf("API error %d %s: %s", r.Error.Code, reason, r.Error.Message)
	}
	p := Page{NextPageToken: strings.TrimSpace(r.NextPageToken)}
	if r.SKUs == nil && p.NextPageToken == "" {
		return p, fmt.Errorf("%w: no skus in the response", scrapers.ErrNothingParsed)
	}
	if r.SKUs == nil {
		return p, nil
	}
	p.SKUs = len(*r.SKUs)
	for _, s := range *r.SKUs {
		rates, noRegion := skuRates(s)
		if noRegion {
			p.NoRegion++
		}
		p.Rates = append(p.Rates, rates...)
	}
	return p, nil
}

var usageModes = map[string]pricewatch.Mode{
	"ondemand":    pricewatch.ModeOnDemand,
	"preemptible": pricewatch.ModeSpot,
	"commit1yr":   pricewatch.ModeReserved1Y,
	"commit3yr":   pricewatch.ModeReserved3Y,
}

// hoursPerMonth converts a Local SSD SKU's GiB-month price to GiB-hours,
// as Google's own price pages do (730 hours a month).
const hoursPerMonth = 730

// skuRates applies the SKU rules: a usage type that is a mode, a
// description that names a plain price (no reservation, DWS, sole tenancy
// or custom shape) in that mode, a positive price in the resource's unit
// for the first hours of use, and one rate per service region. noRegion is
// set for a GPU SKU that would be used but names no region.
func skuRates(s sku) (rates []Rate, noRegion bool) {
	if s.Category == nil || s.SkuID == "" {
		return nil, false
	}
	usage, ok := usageModes[strings.ToLower(s.Category.UsageType)]
	if !ok {
		return nil, false
	}
	r := Rate{SKU: s.SkuID}
	var units []string
	if strings.EqualFold(s.Category.ResourceGroup, "GPU") {
		d, ok := ParseDescription(s.Description)
		if !ok {
			return nil, false
		}
		if r.Mode, ok = d.mode(usage); !ok {
			return nil, false
		}
		r.Resource, r.Name, r.MemoryGB, units = ResourceGPU, d.GPU, d.MemoryGB, []string{"h"}
		if d.Slice {
			r.Resource = ResourceSlice
		}
	} else {
		c, ok := parseComponent(s.Description)
		if !ok {
			return nil, false
		}
		if r.Mode, ok = c.mode(usage); !ok {
			return nil, false
		}
		r.Resource, r.Name = c.resource, c.series
		switch c.resource {
		case ResourceCore:
			units = []string{"h"}
		case ResourceRAM:
			units = []string{"GiBy.h"}
		case ResourceLocalSSD:
			units = []string{"GiBy.mo", "GiBy.h"}
		}
	}
	price, cur, unit, ok := unitPrice(s, units)
	if !ok {
		return nil, false
	}
	if unit == "GiBy.mo" {
		price /= hoursPerMonth
	}
	r.Price, r.Currency = price, cur
	regions := s.ServiceRegions
	if len(regions) == 0 && s.GeoTaxonomy != nil {
		regions = s.GeoTaxonomy.Regions
	}
	seen := map[string]bool{}
	for _, region := range regions {
		region = strings.TrimSpace(region)
		if region == "" || seen[region] {
			continue
		}
		seen[region] = true
		rr := r
		rr.Region = region
		rates = append(rates, rr)
	}
	return rates, len(rates) == 0 && r.Resource != ResourceCore && r.Resource != ResourceRAM && r.Resource != ResourceLocalSSD
}

// unitPrice is the current (last) pricing info's rate for the first hours
// of use, in one of units: the last tiered rate whose startUsageAmount is
// 0. Tiers are in ascending order of startUsageAmount; later tiers are
// volume prices that apply only past their threshold, so they would
// understate what a renter pays. A SKU with no tier at 0 has no price for
// the first hour and is skipped, as are zero prices and other units.
func unitPrice(s sku, units []string) (price float64, cur, unit string, ok bool) {
	if len(s.PricingInfo) == 0 {
		return 0, "", "", false
	}
	pe := s.PricingInfo[len(s.PricingInfo)-1].PricingExpression
	for _, u := range units {
		if strings.EqualFold(pe.UsageUnit, u) {
			unit = u
		}
	}
	if unit == "" {
		return 0, "", "", false
	}
	found := false
	for _, t := range pe.TieredRates {
		if t.StartUsageAmount != 0 {
			continue
		}
		v, ok := t.UnitPrice.Amount()
		if !ok {
			return 0, "", "", false
		}
		price, cur, found = v, t.UnitPrice.CurrencyCode, true
	}
	if !found || !(price > 0) || math.IsInf(price, 0) {
		return 0, "", "", false
	}
	if cur == "" {
		cur = "USD"
	}
	return price, strings.ToUpper(cur), unit, true
}

// terms is what a description says about the usage it prices.
type terms struct {
	// VMs is the "attached to … VMs" qualifier ("Spot Preemptible", "DWS
	// Defined Duration"), empty for plain SKUs.
	VMs string
	// Spot is set when the description says Spot ("Spot Preemptible …" or
	// "attached to Spot Preemptible VMs").
	Spot bool
	// Commitment is set for "Commitment v1: …"; TermYears is its "for N
	// Year(s)".
	Commitment bool
	TermYears  int
	// Location is the text after "running in" or "in" ("Americas",
	// "Virginia"), empty when the description names none.
	Location string
}

// mode is the mode a SKU of the usage type prices: the usage type's, when
// the description agrees with it. A description that says Spot under the
// OnDemand usage type is a spot price (Google tags a few Spot SKUs OnDemand;
// seen by independent parsers, not in our captures); any other disagreement
// skips the SKU, as do "attached to" qualifiers other than Spot (DWS
// Defined Duration, sole tenancy).
func (t terms) mode(usage pricewatch.Mode) (pricewatch.Mode, bool) {
	switch {
	case t.VMs != "" && t.VMs != "Spot Preemptible":
		return "", false
	case t.Commitment != usage.Committed():
		return "", false // "Commitment" text and usage type disagree
	case t.Commitment && usage.CommitmentHours() != float64(t.TermYears)*8760:
		return "", false // "for N Years" that is not the usage type's term
	case usage == pricewatch.ModeSpot && !t.Spot:
		return "", false // a Preemptible usage type for a plain price: inconsistent
	case t.Spot && usage.Committed():
		return "", false
	case t.Spot:
		return pricewatch.ModeSpot, true
	}
	return usage, true
}

// Description is what a GPU SKU's description says.
type Description struct {
	terms
	// GPU is the GPU as named: "Nvidia Tesla A100", "Nvidia H100 80GB
	// Plus", "H200 141GB", "RTX 6000 96GB", "A4 Nvidia B200 (1 gpu slice)".
	GPU      string
	MemoryGB float64
	// Slice is set for "(1 gpu slice)" SKUs, which price one GPU's share
	// of a whole machine.
	Slice bool
}

// splitRE splits a description body (after the "Commitment v1: " and
// "Spot Preemptible " prefixes) into what it prices, the "attached to …
// VMs" qualifier, the location and the commitment term:
//
//	<what>[ attached to <kind> VMs][[ running] in <location>][ for <n> Year(s)]
var (
	splitRE    = regexp.MustCompile(`^(.+?)(?: attached to (.+?) VMs)?(?:(?: running)? in (.+?))?(?: for ([0-9]+) Years?)?$`)
	gpuNameRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 ()]*$`)
	memoryWord = regexp.MustCompile(`\b([0-9]+)GB\b`)
)

// sliceSuffix ends the name of a GPU-slice SKU ("A4 Nvidia B200 (1 gpu
// slice)"), folded.
const sliceSuffix = "(1 gpu slice)"

// splitDescription reads the usage terms off a description; ok is false
// for reservations ("Reserved …", "… in Calendar Mode", "DWS Calendar Mode
// …") and custom or sole-tenant shapes, which are no on-demand, spot or
// committed price of a predefined machine. DWS Defined Duration SKUs are
// read ("attached to DWS Defined Duration VMs") and refused by mode.
func splitDescription(desc string) (what string, t terms, ok bool) {
	desc = strings.Join(strings.Fields(desc), " ")
	lower := strings.ToLower(desc)
	for _, w := range []string{"reserved ", "calendar mode", "sole tenancy", "custom", "premium", "extended", "licens"} {
		if strings.Contains(lower, w) {
			return "", terms{}, false
		}
	}
	for _, p := range []string{"Commitment v1: ", "Commitment: "} {
		if rest, found := strings.CutPrefix(desc, p); found {
			desc, t.Commitment = rest, true
			break
		}
	}
	for _, p := range []string{"Spot Preemptible ", "Preemptible "} {
		if rest, found := strings.CutPrefix(desc, p); found {
			desc, t.Spot = rest, true
			break
		}
	}
	m := splitRE.FindStringSubmatch(desc)
	if m == nil {
		return "", terms{}, false
	}
	what, t.VMs, t.Location = strings.TrimSpace(m[1]), m[2], m[3]
	if t.VMs == "Spot Preemptible" {
		t.Spot = true
	}
	if m[4] != "" {
		t.TermYears, _ = strconv.Atoi(m[4])
	}
	return what, t, what != ""
}

// ParseDescription applies the GPU-name rule to a GPU SKU's description:
//
//	[Commitment v1: ][Spot Preemptible ]<GPU>[ GPU][ attached to <kind> VMs][[ running] in <location>][ for <n> Year(s)]
//
// where <GPU> is letters, digits, spaces and parentheses and names a model
// (it has a digit): "Nvidia Tesla A100", "RTX 6000 96GB" (the G4 SKU says
// no "GPU"), "A4 Nvidia B200 (1 gpu slice)". Reservations ("Reserved …",
// calendar mode, DWS), fractional "1/8 vGPU …" SKUs, virtual workstation
// and licence fees do not match.
func ParseDescription(desc string) (Description, bool) {
	what, t, ok := splitDescription(desc)
	if !ok {
		return Description{}, false
	}
	name := strings.TrimSpace(strings.TrimSuffix(what, " GPU"))
	lower := strings.ToLower(name)
	if !gpuNameRE.MatchString(name) || !strings.ContainsAny(name, "0123456789") ||
		strings.Contains(lower, "vgpu") || strings.Contains(lower, "workstation") || strings.Contains(lower, "instance") {
		return Description{}, false
	}
	d := Description{terms: t, GPU: name, Slice: strings.HasSuffix(fold(name), sliceSuffix)}
	if g := memoryWord.FindStringSubmatch(name); g != nil {
		d.MemoryGB, _ = strconv.ParseFloat(g[1], 64)
	}
	return d, true
}

// component is a vCPU, RAM or Local SSD SKU's description.
type component struct {
	terms
	resource Resource
	series   string
}

// coreRAMRE reads "<series>[ Instance] Core|Cpu|Ram": "A2 Instance Core",
// "N1 Predefined Instance Ram", "A3Plus Instance Core", "A2 Cpu" (the
// commitment SKUs' form).
var coreRAMRE = regexp.MustCompile(`^(.+?)(?: Instance)? (Core|Cpu|Ram)$`)

// parseComponent reads a vCPU, RAM or Local SSD SKU's description
// ("Spot Preemptible A3 Instance Core running in Americas", "SSD backed
// Local Storage attached to Spot Preemptible VMs", "Commitment v1: A2 Ram
// in Americas for 1 Year").
func parseComponent(desc string) (component, bool) {
	what, t, ok := splitDescription(desc)
	if !ok {
		return component{}, false
	}
	c := component{terms: t}
	switch {
	case what == "SSD backed Local Storage" || what == "Local SSD":
		c.resource = ResourceLocalSSD
	default:
		m := coreRAMRE.FindStringSubmatch(what)
		if m == nil {
			return component{}, false
		}
		c.series = m[1]
		c.resource = ResourceCore
		if m[2] == "Ram" {
			c.resource = ResourceRAM
		}
	}
	return c, true
}
