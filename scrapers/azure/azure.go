// Package azure scrapes the public Azure Retail Prices API
// (https://prices.azure.com/api/retail/prices): per region, the GPU virtual
// machine sizes' Linux on-demand, Spot and reservation (1, 3 and 5 years)
// prices, in USD per instance-hour or, for reservations, per whole term.
//
// The API has no GPU model or count field: both come from the VM size name
// (armSkuName) through the static table below (sizes). Sizes the table does not
// know are reported as unknown, never guessed.
package azure

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// APIVersion is the Retail Prices API version requested; since
// 2023-01-01-preview filter values are case-sensitive.
const APIVersion = "2023-01-01-preview"

// DefaultMaxPages caps the pages walked per region.
const DefaultMaxPages = 50

// DefaultRegions are the regions scraped when config names none.
var DefaultRegions = []string{"eastus", "westeurope"}

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "azure",
		Description: "Azure Retail Prices API, GPU virtual machines (Linux)",
		Auth:        "none",
		Yields:      "ondemand, spot, reserved-1y, reserved-3y, reserved-5y; USD per instance-hour (reservations per term)",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://prices.azure.com/api/retail/prices",
			Schedule:   "0 */6 * * *",
			StaleAfter: 15 * time.Hour,
			Timeout:    60 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper {
			return &Scraper{Regions: append([]string(nil), DefaultRegions...), MaxPages: DefaultMaxPages}
		},
	})
}

// Scraper is the Azure source.
type Scraper struct {
	// Regions are ARM region names (eastus, westeurope, …); each is walked
	// with its own filtered, paged query.
	Regions []string `yaml:"regions"`
	// MaxPages caps the pages followed per region; a region with more
	// fails the run rather than silently losing offers.
	MaxPages int `yaml:"max_pages"`
}

var regionName = regexp.MustCompile(`^[a-z0-9]+$`)

// Filter is the OData $filter sent for a region: GPU (N-family) virtual
// machines only. The parser still applies every rule itself.
func Filter(region string) string {
	return "serviceName eq 'Virtual Machines' and armRegionName eq '" + region +
		"' and contains(armSkuName, 'Standard_N')"
}

// FirstPageURL is the URL of a region's first page on the endpoint base.
// Query values are percent-encoded with %20 for spaces, as the API's own
// NextPageLinks are.
func FirstPageURL(base, region string) string {
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "api-version=" + APIVersion + "&$filter=" + escape(Filter(region))
}

func escape(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }

// Scrape walks every configured region page by page with one collector.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	regions := s.Regions
	if len(regions) == 0 {
		regions = DefaultRegions
	}
	maxPages := s.MaxPages
	if maxPages <= 0 {
		maxPages = DefaultMaxPages
	}
	for _, r := range regions {
		if !regionName.MatchString(r) {
			return scrapers.Result{}, fmt.Errorf("azure: bad region name %q (want an ARM name such as eastus)", r)
		}
	}
	c, err := env.NewCollector(ctx)
	if err != nil {
		return scrapers.Result{}, err
	}
	hdr := http.Header{"Accept": {"application/json"}}
	var kept keeper
	for _, region := range regions {
		next := FirstPageURL(env.URL(), region)
		visited := map[string]bool{}
		for page := 1; next != ""; page++ {
			if err := ctx.Err(); err != nil {
				return scrapers.Result{}, err
			}
			if page > maxPages {
				return scrapers.Result{}, fmt.Errorf("azure region %s: more than %d pages (raise max_pages)", region, maxPages)
			}
			if visited[next] {
				return scrapers.Result{}, fmt.Errorf("azure region %s page %d: NextPageLink repeats an earlier page: %s", region, page, next)
			}
			visited[next] = true
			resp, err := env.Fetch(ctx, c, scrapers.Request{URL: next, Header: hdr})
			if err != nil {
				return scrapers.Result{}, fmt.Errorf("azure region %s page %d: %w", region, page, err)
			}
			obs, link, err := Parse(resp.Body)
			if err != nil {
				return scrapers.Result{}, fmt.Errorf("azure region %s page %d: %w", region, page, err)
			}
			for _, o := range obs {
				// The same size, region and mode on two pages (or under two
				// meters) keeps the first.
				kept.keep(o)
			}
			next = ""
			if link != "" {
				if next, err = resolve(resp.Request.URL, link); err != nil {
					return scrapers.Result{}, fmt.Errorf("azure region %s page %d: %w", region, page, err)
				}
			}
		}
	}
	if len(kept.out) == 0 {
		return scrapers.Result{}, scrapers.ErrNothingParsed
	}
	return scrapers.Result{Observations: kept.out}, nil
}

// resolve makes NextPageLink absolute against the page that carried it.
func resolve(base *url.URL, link string) (string, error) {
	u, err := url.Parse(link)
	if err != nil {
		return "", fmt.Errorf("bad NextPageLink %q: %w", link, err)
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("bad NextPageLink %q", link)
	}
	return u.String(), nil
}

// page is one answer of the Retail Prices API.
type page struct {
	BillingCurrency string  `json:"BillingCurrency"`
	Items           *[]item `json:"Items"`
	NextPageLink    *string `json:"NextPageLink"`
	Count           int     `json:"Count"`
	Error           *struct {
		Code    string `json:"Code"`
		Message string `json:"Message"`
	} `json:"Error"`
}

// item is one price row. Only the fields the parser reads are declared.
type item struct {
	CurrencyCode    string  `json:"currencyCode"`
	RetailPrice     float64 `json:"retailPrice"`
	ArmRegionName   string  `json:"armRegionName"`
	MeterName       string  `json:"meterName"`
	ProductName     string  `json:"productName"`
	SkuName         string  `json:"skuName"`
	ServiceName     string  `json:"serviceName"`
	UnitOfMeasure   string  `json:"unitOfMeasure"`
	Type            string  `json:"type"`
	ArmSkuName      string  `json:"armSkuName"`
	ReservationTerm string  `json:"reservationTerm"`
}

// Parse turns one page into observations and returns its NextPageLink
// ("" on the last page). A page without a usable GPU row is not an error
// here (Windows-only pages exist); Scrape fails a run that yields nothing.
func Parse(body []byte) (obs []pricewatch.Observation, next string, err error) {
	var p page
	if err := scrapers.UnmarshalJSON(body, "", &p); err != nil {
		return nil, "", err
	}
	if p.Error != nil && (p.Error.Code != "" || p.Error.Message != "") {
		return nil, "", fmt.Errorf("API error %s: %s", p.Error.Code, p.Error.Message)
	}
	if p.Items == nil {
		return nil, "", fmt.Errorf("%w: no Items array in the response", scrapers.ErrNothingParsed)
	}
	if p.NextPageLink != nil {
		next = strings.TrimSpace(*p.NextPageLink)
	}
	var k keeper
	for _, it := range *p.Items {
		if o, ok := observation(it, p.BillingCurrency); ok {
			k.keep(o)
		}
	}
	return k.out, next, nil
}

// Unmapped reports an observation of a size the table does not know.
func Unmapped(o pricewatch.Observation) bool {
	return o.RentUnit == "" && o.GPUName == o.OfferID
}

// keeper collects observations, the first of each size, region and mode.
// A size the table does not know keeps one row per mode as well: unknowns
// are counted by price rows (its Spot and reservation rows are prices a
// ranking misses just as much as its on-demand one), not one per size.
type keeper struct {
	out  []pricewatch.Observation
	seen map[string]bool // offer key
}

func (k *keeper) keep(o pricewatch.Observation) {
	if k.seen == nil {
		k.seen = map[string]bool{}
	}
	key := pricewatch.OfferKey(o.Source, o.OfferID, o.Region, o.Mode)
	if !k.seen[key] {
		k.seen[key] = true
		k.out = append(k.out, o)
	}
}

// observation applies the row rules of SOURCES.md 2.1 to one item.
func observation(it item, billingCurrency string) (pricewatch.Observation, bool) {
	if it.ServiceName != "Virtual Machines" || it.UnitOfMeasure != "1 Hour" {
		return pricewatch.Observation{}, false
	}
	if isWindows(it.ProductName) || strings.Contains(it.ProductName, "Cloud Services") ||
		strings.Contains(it.ProductName, "Dedicated Host") {
		return pricewatch.Observation{}, false
	}
	if hasSuffix(it, " Low Priority") {
		return pricewatch.Observation{}, false
	}
	if !(it.RetailPrice > 0) {
		return pricewatch.Observation{}, false
	}
	if _, gone := Retired(it.ArmSkuName); gone {
		return pricewatch.Observation{}, false
	}
	var mode pricewatch.Mode
	unit := pricewatch.PerHour
	switch it.Type {
	case "Consumption":
		mode = pricewatch.ModeOnDemand
		if hasSuffix(it, " Spot") {
			mode = pricewatch.ModeSpot
		}
	case "Reservation":
		// retailPrice is the total for the whole term although
		// unitOfMeasure still says "1 Hour"; normalize divides by the term.
		unit = pricewatch.PerTerm
		switch strings.TrimSpace(it.ReservationTerm) {
		case "1 Year":
			mode = pricewatch.ModeReserved1Y
		case "3 Years":
			mode = pricewatch.ModeReserved3Y
		case "5 Years":
			mode = pricewatch.ModeReserved5Y
		default:
			return pricewatch.Observation{}, false
		}
	default: // DevTestConsumption (Dev/Test subscriptions only) and anything new
		return pricewatch.Observation{}, false
	}
	sku := strings.TrimSpace(it.ArmSkuName)
	cur := it.CurrencyCode
	if cur == "" {
		cur = billingCurrency
	}
	o := pricewatch.Observation{
		Source: "azure", Provider: "azure", OfferID: sku, Region: it.ArmRegionName,
		Price: it.RetailPrice, Currency: cur, Unit: unit, Mode: mode,
	}
	size, known := Lookup(sku)
	switch {
	case known:
		// A VM size is rented whole: its GPUs (a fractional size: one
		// share of one GPU, count 1 with its fraction).
		o.GPUName, o.GPUCount, o.GPUFraction = size.Card, size.GPUs, size.Fraction
		o.RentUnit = pricewatch.RentFixed
		o.VCPUs, o.RentURL = SizeVCPUs(sku), RentURL
	case strings.HasPrefix(sku, "Standard_N"):
		// An N-family size the table does not know: keep it, named by the
		// size, so normalize reports it as unknown and someone extends the
		// table. Its GPU count is unknown, so it states no rent unit
		// either; each of its price rows is reported.
		o.GPUName, o.GPUCount = sku, 1
	default:
		return pricewatch.Observation{}, false
	}
	return o, true
}

// isWindows reports a Windows product: "… Series Windows", "… Windows"
// and the abbreviated "… Srs Win" some GPU series use.
func isWindows(product string) bool {
	for _, w := range strings.Fields(product) {
		if w == "Windows" || w == "Win" {
			return true
		}
	}
	return false
}

func hasSuffix(it item, suffix string) bool {
	return strings.HasSuffix(it.MeterName, suffix) || strings.HasSuffix(it.SkuName, suffix)
}

// Size is what a VM size carries: the canonical card id (cards.csv), the
// number of whole GPUs, and the share of one GPU for fractional sizes.
type Size struct {
	Card     string
	GPUs     int
	Fraction float64 // 0: whole GPUs
}

// sizes maps armSkuName to its GPUs. Only sizes whose GPU model, memory and
// count are documented publicly (Microsoft Learn size pages) are listed;
// anything else is reported as unknown.
var sizes = map[string]Size{
	// NC A100 v4: A100 80GB PCIe.
	"Standard_NC24ads_A100_v4": {"A100-80GB-PCIE", 1, 0},
	"Standard_NC48ads_A100_v4": {"A100-80GB-PCIE", 2, 0},
	"Standard_NC96ads_A100_v4": {"A100-80GB-PCIE", 4, 0},
	// ND A100 v4: 8× A100 40GB SXM4; NDm A100 v4: 8× A100 80GB SXM4.
	"Standard_ND96asr_v4":       {"A100-40GB-SXM", 8, 0},
	"Standard_ND96amsr_A100_v4": {"A100-80GB-SXM", 8, 0},
	// ND H100 v5 (with and without InfiniBand): 8× H100 80GB SXM5. The
	// isrf variant has no size page; public AKS and Azure ML configs run
	// it as 8× H100 80GB with RDMA, the isr size's shape.
	"Standard_ND96isr_H100_v5":  {"H100-80GB-SXM", 8, 0},
	"Standard_ND96is_H100_v5":   {"H100-80GB-SXM", 8, 0},
	"Standard_ND96isrf_H100_v5": {"H100-80GB-SXM", 8, 0},
	// ND96isnIB, ND96isfl and ND96isf H100 v5 have no size page either. The
	// Retail Prices API files them under the ND H100 v5 product ("Virtual
	// Machines NDsH100v5 Series", "NDsfH100v5 Series", "NDsrf H100 v5
	// Series") and, in every region of the real 2025-06-21 capture (github
	// Jumbo2020/gpu_prices azure_gpu_prices.json @ 54424a7, 65 Linux price
	// rows in 13 size-regions), prices them per hour exactly as
	// ND96is_H100_v5 (eastus 88.488, centralus 108.84, westeurope and
	// swedencentral 115.034); the series page
	// (https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndh100v5-series)
	// gives the series 8 H100 80GB per VM.
	"Standard_ND96isnIB_H100_v5": {"H100-80GB-SXM", 8, 0},
	"Standard_ND96isfl_H100_v5":  {"H100-80GB-SXM", 8, 0},
	"Standard_ND96isf_H100_v5":   {"H100-80GB-SXM", 8, 0},
	// NC H100 v5 and the confidential NCC H100 v5: H100 NVL 94GB.
	"Standard_NC40ads_H100_v5":  {"H100-94GB-NVL", 1, 0},
	"Standard_NC80adis_H100_v5": {"H100-94GB-NVL", 2, 0},
	"Standard_NCC40ads_H100_v5": {"H100-94GB-NVL", 1, 0},
	// ND H200 v5: 8× H200 141GB (isrf: no size page; public configs and
	// Azure ML samples map it to the same 8× H200 shape).
	"Standard_ND96isr_H200_v5":  {"H200-141GB-SXM", 8, 0},
	"Standard_ND96isrf_H200_v5": {"H200-141GB-SXM", 8, 0},
	// ND GB200 v6: 4 Blackwell GPUs of a GB200 NVL72 rack per VM.
	"Standard_ND128isr_NDR_GB200_v6": {"B200-186GB-GB200", 4, 0},
	// ND GB300 v6: 4 Blackwell Ultra GPUs (288 GB) of a GB300 NVL72 rack
	// per VM (nd-gb300-v6-series, accelerators tab), both sizes.
	"Standard_ND128isr_GB300_v6":   {"B300-288GB-GB300", 4, 0},
	"Standard_ND128isrG5_GB300_v6": {"B300-288GB-GB300", 4, 0},
	// NC RTX PRO 6000 BSE v6 (RTX PRO 6000 Blackwell Server Edition, 96 GB):
	// only the sizes whose GPU count the size page states (accelerators
	// tab: 128-vCPU sizes 1 GPU, 256 and 320 2). The smaller and the
	// GA-renamed sizes carry partial GPUs whose shares are not published:
	// reported as unknown.
	"Standard_NC128ds_xl_RTXPRO6000BSE_v6":  {"RTX-PRO-6000-SERVER", 1, 0},
	"Standard_NC128lds_xl_RTXPRO6000BSE_v6": {"RTX-PRO-6000-SERVER", 1, 0},
	"Standard_NC256ds_xl_RTXPRO6000BSE_v6":  {"RTX-PRO-6000-SERVER", 2, 0},
	"Standard_NC256lds_xl_RTXPRO6000BSE_v6": {"RTX-PRO-6000-SERVER", 2, 0},
	"Standard_NC320ds_xl_RTXPRO6000BSE_v6":  {"RTX-PRO-6000-SERVER", 2, 0},
	"Standard_NC320lds_xl_RTXPRO6000BSE_v6": {"RTX-PRO-6000-SERVER", 2, 0},
	// ND MI300X v5 (with and without InfiniBand, nd-mi300x-v5 specs: 8
	// GPUs, AMD MI300X 192 GiB; the isolated-sizes page lists both).
	"Standard_ND96isr_MI300X_v5": {"MI300X-192GB", 8, 0},
	"Standard_ND96is_MI300X_v5":  {"MI300X-192GB", 8, 0},
	// NC T4 v3.
	"Standard_NC4as_T4_v3":  {"T4", 1, 0},
	"Standard_NC8as_T4_v3":  {"T4", 1, 0},
	"Standard_NC16as_T4_v3": {"T4", 1, 0},
	"Standard_NC64as_T4_v3": {"T4", 4, 0},
	// NCv3: V100 16GB PCIe.
	"Standard_NC6s_v3":   {"V100-16GB-PCIE", 1, 0},
	"Standard_NC12s_v3":  {"V100-16GB-PCIE", 2, 0},
	"Standard_NC24s_v3":  {"V100-16GB-PCIE", 4, 0},
	"Standard_NC24rs_v3": {"V100-16GB-PCIE", 4, 0},
	// NDv2: 8× V100 32GB SXM2.
	"Standard_ND40rs_v2": {"V100-32GB-SXM2", 8, 0},
	// NC A10 v4 (NCads A10 v4): 1/2 of an A10 up to two whole A10s. No
	// Microsoft size page was found; counts per the SKU list AKS tooling
	// generates (NC8ads 1, NC16ads 1, NC32ads 2 "GPU(s)", partitions
	// counted as 1 as for NV6ads_A10_v5) and the share per gpuhunt's Azure
	// provider (24 GB × min(1, vCPUs / 16)): NC8ads is half an A10.
	"Standard_NC8ads_A10_v4":  {"A10", 1, 1.0 / 2},
	"Standard_NC16ads_A10_v4": {"A10", 1, 0},
	"Standard_NC32ads_A10_v4": {"A10", 2, 0},
	// NVads V710 v5: partitions of one AMD Radeon Pro V710 up to a whole one
	// (nvadsv710-v5-series, accelerators tab: NV4ads 1/6, NV8ads 1/3,
	// NV12ads 1/2, NV24ads and NV28adms 1; 4 to 24 GB of its memory).
	"Standard_NV4ads_V710_v5":   {"RADEON-PRO-V710", 1, 1.0 / 6},
	"Standard_NV8ads_V710_v5":   {"RADEON-PRO-V710", 1, 1.0 / 3},
	"Standard_NV12ads_V710_v5":  {"RADEON-PRO-V710", 1, 1.0 / 2},
	"Standard_NV24ads_V710_v5":  {"RADEON-PRO-V710", 1, 0},
	"Standard_NV28adms_V710_v5": {"RADEON-PRO-V710", 1, 0},
	// NVads A10 v5: partitions of one A10 up to two whole A10s.
	"Standard_NV6ads_A10_v5":   {"A10", 1, 1.0 / 6},
	"Standard_NV12ads_A10_v5":  {"A10", 1, 1.0 / 3},
	"Standard_NV18ads_A10_v5":  {"A10", 1, 1.0 / 2},
	"Standard_NV36ads_A10_v5":  {"A10", 1, 0},
	"Standard_NV36adms_A10_v5": {"A10", 1, 0},
	"Standard_NV72ads_A10_v5":  {"A10", 2, 0},
}

var sizesFolded = func() map[string]Size {
	m := make(map[string]Size, len(sizes))
	for k, v := range sizes {
		m[strings.ToLower(k)] = v
	}
	return m
}()

// Lookup returns the GPUs of a VM size (armSkuName, case-insensitive).
func Lookup(armSkuName string) (Size, bool) {
	s, ok := sizesFolded[strings.ToLower(strings.TrimSpace(armSkuName))]
	return s, ok
}

// Sizes returns a copy of the size table.
func Sizes() map[string]Size {
	m := make(map[string]Size, len(sizes))
	for k, v := range sizes {
		m[k] = v
	}
	return m
}

// RentURL is where an Azure VM is created (the portal's create page).
const RentURL = "https://portal.azure.com/#create/Microsoft.VirtualMachine"

// sizeVCPUs reads the vCPU count an Azure size name states: Microsoft's
// naming convention puts the number of vCPUs after the family letters
// (https://learn.microsoft.com/azure/virtual-machines/vm-naming-conventions:
// "Standard_NC24ads_A100_v4" 24, "Standard_ND96isr_H100_v5" 96). A
// constrained-vCPU size ("Standard_E8-4s_v5") states its active vCPUs
// after the dash.
var sizeVCPUs = regexp.MustCompile(`^Standard_[A-Z]+(\d+)(?:-(\d+))?`)

// SizeVCPUs is the vCPUs of an Azure size name, 0 when the name states
// none.
func SizeVCPUs(sku string) float64 {
	m := sizeVCPUs.FindStringSubmatch(sku)
	if m == nil {
		return 0
	}
	n := m[1]
	if m[2] != "" {
		n = m[2]
	}
	v, _ := strconv.ParseFloat(n, 64)
	return v
}
