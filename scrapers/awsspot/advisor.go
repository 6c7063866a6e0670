package awsspot

import (
	"fmt"
	"strings"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// Advisor holds the Spot Instance Advisor's interruption-frequency band
// labels for Linux, per region code and instance type.
type Advisor struct {
	labels map[string]map[string]string // region → instance type → label
}

type advisorFile struct {
	Ranges []struct {
		Index *int   `json:"index"`
		Label string `json:"label"`
	} `json:"ranges"`
	SpotAdvisor map[string]map[string]map[string]struct {
		S *float64 `json:"s"`
		R *int     `json:"r"`
	} `json:"spot_advisor"`
}

// ParseAdvisor reads spot-advisor-data.json: spot_advisor.<region>.Linux.
// <type>.r is an index into ranges[], whose label ("<5%", "5-10%", …,
// ">20%") is the band.
func ParseAdvisor(body []byte) (*Advisor, error) {
	var f advisorFile
	if err := scrapers.UnmarshalJSON(body, "", &f); err != nil {
		return nil, fmt.Errorf("spot advisor: %w", err)
	}
	if len(f.Ranges) == 0 || len(f.SpotAdvisor) == 0 {
		return nil, fmt.Errorf("spot advisor: no ranges or spot_advisor in the file")
	}
	bands := map[int]string{}
	for i, r := range f.Ranges {
		idx := i
		if r.Index != nil {
			idx = *r.Index
		}
		if l := strings.TrimSpace(r.Label); l != "" {
			bands[idx] = l
		}
	}
	a := &Advisor{labels: map[string]map[string]string{}}
	for region, oses := range f.SpotAdvisor {
		for os, types := range oses {
			if !strings.EqualFold(os, "Linux") {
				continue
			}
			for typ, v := range types {
				if v.R == nil {
					continue
				}
				if l, ok := bands[*v.R]; ok {
					if a.labels[region] == nil {
						a.labels[region] = map[string]string{}
					}
					a.labels[region][typ] = l
				}
			}
		}
	}
	if len(a.labels) == 0 {
		return nil, fmt.Errorf("spot advisor: no Linux entry with a known band")
	}
	return a, nil
}

// Risk is the band label for a region code and instance type ("" when the
// advisor has no entry).
func (a *Advisor) Risk(region, instanceType string) string {
	if a == nil {
		return ""
	}
	return a.labels[region][instanceType]
}

// Annotate sets ReclaimRisk on every observation the advisor knows.
func (a *Advisor) Annotate(obs []pricewatch.Observation) {
	for i := range obs {
		obs[i].ReclaimRisk = a.Risk(obs[i].Region, obs[i].OfferID)
	}
}
