package azure

import (
	"regexp"
	"strings"
)

// RetiredSeries is a GPU VM series Microsoft has retired: its sizes are no
// longer sold, so a price row that still names one is dropped rather than
// reported as an unknown GPU (the older K80, P100, P40, M60 and MI25 sizes
// have no card in cards.csv and never will be rentable again).
type RetiredSeries struct {
	Series  string // Microsoft's series name
	GPU     string // the GPU the series carried
	Retired string // retirement date, as Microsoft states it
	Link    string // Microsoft's retirement notice
	sizes   *regexp.Regexp
}

// retired lists each series with its sizes (armSkuName, case-insensitive)
// and the notice that retires them.
var retired = []RetiredSeries{
	{"NC", "K80", "2023-08-31", "https://learn.microsoft.com/azure/virtual-machines/nc-series-retirement",
		regexp.MustCompile(`(?i)^standard_nc(6|12|24|24r)(_promo)?$`)},
	{"NCv2", "P100", "2023-08-31", "https://learn.microsoft.com/azure/virtual-machines/ncv2-series-retirement",
		regexp.MustCompile(`(?i)^standard_nc(6|12|24|24r)s_v2$`)},
	{"ND", "P40", "2023-08-31", "https://learn.microsoft.com/azure/virtual-machines/nd-series-retirement",
		regexp.MustCompile(`(?i)^standard_nd(6|12|24|24r)s$`)},
	{"NV and NV_Promo", "M60", "2023-09-06", "https://learn.microsoft.com/azure/virtual-machines/nv-series-retirement",
		regexp.MustCompile(`(?i)^standard_nv(6|12|24)(_promo)?$`)},
	{"NVv3", "M60", "2026-09-30", "https://azure.microsoft.com/updates?id=500573",
		regexp.MustCompile(`(?i)^standard_nv(12s|12hs|24s|24ms|32ms|48s)_v3$`)},
	{"NVv4", "MI25", "2026-09-30", "https://azure.microsoft.com/updates?id=500578",
		regexp.MustCompile(`(?i)^standard_nv(4|8|16|32)a(h)?s_v4$`)},
}

// Retired returns the retired series a VM size belongs to.
func Retired(armSkuName string) (RetiredSeries, bool) {
	sku := strings.TrimSpace(armSkuName)
	for _, r := range retired {
		if r.sizes.MatchString(sku) {
			return r, true
		}
	}
	return RetiredSeries{}, false
}

// RetiredList returns the retired series, in table order.
func RetiredList() []RetiredSeries { return append([]RetiredSeries(nil), retired...) }
