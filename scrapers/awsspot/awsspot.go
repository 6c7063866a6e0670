// Package awsspot scrapes the AWS EC2 Spot price feed of the Spot pricing
// page (spot.json, or the older JSONP spot.js) for Linux spot prices of GPU
// instances, per region, in USD per instance-hour, and joins the Spot
// Instance Advisor data to give each offer its interruption-frequency band
// (ReclaimRisk, e.g. "<5%" or ">20%").
//
// The feed has no GPU model or count: both come from the instance type
// through the static table in instances.go. Instance types of the feed's GPU
// blocks that the table does not know are kept under their own name so that
// normalize reports them as unknown; non-GPU accelerators (Inferentia,
// Trainium, the VT1 video transcoder, FPGAs) are left out entirely.
package awsspot

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// Name is the source name.
const Name = "aws-spot"

// DefaultAdvisorURL is the Spot Instance Advisor data file.
const DefaultAdvisorURL = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json"

// advisorPath is the advisor file's path on its host (and on a fixture server).
const advisorPath = "/spot-advisor-data.json"

// PageURL is the public page the prices are shown on.
const PageURL = "https://aws.amazon.com/ec2/spot/pricing/"

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        Name,
		Description: "AWS EC2 Spot price feed (spot.json) with Spot Instance Advisor interruption bands, GPU instances (Linux)",
		Auth:        "none",
		Yields:      "spot (with reclaim-risk band); USD per instance-hour",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://website.spot.ec2.aws.a2z.com/spot.json",
			Schedule:   "0 * * * *",
			StaleAfter: 150 * time.Minute,
			Timeout:    60 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{AdvisorURL: DefaultAdvisorURL} },
	})
}

// Scraper is the AWS Spot source.
type Scraper struct {
	// AdvisorURL is the Spot Instance Advisor data file; empty leaves
	// ReclaimRisk empty without fetching it.
	AdvisorURL string `yaml:"advisor_url"`
	// Regions are region codes (us-east-1, eu-west-1, …) to keep; empty
	// keeps every region of the feed.
	Regions []string `yaml:"regions"`
}

// Rebase points the advisor file at base (a fixture server), on its real path.
func (s *Scraper) Rebase(base string) {
	s.AdvisorURL = strings.TrimRight(base, "/") + advisorPath
}

// Scrape fetches the price feed, then the advisor data. The advisor only
// adds the reclaim-risk band: when it cannot be fetched or parsed the run
// still succeeds, with ReclaimRisk left empty (failing the run would drop
// every spot price for want of an annotation, and a non-nil error fails the
// run, so the advisor's failure is not returned).
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	var extra []string
	if s.AdvisorURL != "" {
		extra = append(extra, s.AdvisorURL)
	}
	c, err := env.NewCollector(ctx, extra...)
	if err != nil {
		return scrapers.Result{}, err
	}
	hdr := http.Header{"Accept": {"application/json, application/javascript"}}
	resp, err := env.Fetch(ctx, c, scrapers.Request{URL: env.URL(), Header: hdr})
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("spot prices: %w", err)
	}
	obs, err := Parse(resp.Body, s.Regions...)
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("spot prices: %w", err)
	}
	env.AddOffers(len(obs))
	if s.AdvisorURL != "" {
		if ar, err := env.Fetch(ctx, c, scrapers.Request{URL: s.AdvisorURL, Header: http.Header{"Accept": {"application/json"}}}); err == nil {
			if adv, err := ParseAdvisor(ar.Body); err == nil {
				adv.Annotate(obs)
			}
		}
	}
	return scrapers.Result{Observations: obs}, nil
}

// feed is spot.json (or spot.js without its callback wrapper).
type feed struct {
	Config *struct {
		Regions []struct {
			Region        string `json:"region"`
			InstanceTypes []struct {
				Type  string `json:"type"`
				Sizes []struct {
					Size         string `json:"size"`
					ValueColumns []struct {
						Name   string            `json:"name"`
						Prices map[string]string `json:"prices"`
					} `json:"valueColumns"`
				} `json:"sizes"`
			} `json:"instanceTypes"`
		} `json:"regions"`
	} `json:"config"`
}

// Parse turns the spot price feed (plain JSON, or JSONP "callback({...});",
// told apart by content) into Linux spot observations of GPU instances.
// regions, if given, keeps only those region codes. Legacy region names of
// the old feed are mapped to codes; unknown ones are skipped (and named in
// the error if nothing parses). Sizes listed twice in a region keep the
// first entry; "N/A*" and other non-prices are skipped.
func Parse(body []byte, regions ...string) ([]pricewatch.Observation, error) {
	regions = slices.Clone(regions)
	for i, r := range regions {
		regions[i] = strings.ToLower(strings.TrimSpace(r))
	}
	js, err := unwrapJSONP(body)
	if err != nil {
		return nil, err
	}
	var f feed
	if err := scrapers.UnmarshalJSON(js, "", &f); err != nil {
		return nil, err
	}
	if f.Config == nil || len(f.Config.Regions) == 0 {
		return nil, fmt.Errorf("%w: no config.regions in the feed", scrapers.ErrNothingParsed)
	}
	var (
		out       []pricewatch.Observation
		seen      = map[string]bool{}
		unknownRg = map[string]bool{}
		kept      int
	)
	for _, r := range f.Config.Regions {
		code, ok := RegionCode(r.Region)
		if !ok {
			unknownRg[r.Region] = true
			continue
		}
		if len(regions) > 0 && !slices.Contains(regions, code) {
			continue
		}
		kept++
		for _, it := range r.InstanceTypes {
			gpuBlock := strings.HasPrefix(strings.ToLower(it.Type), "gpu")
			for _, sz := range it.Sizes {
				typ := strings.TrimSpace(sz.Size)
				o, ok := observation(typ, gpuBlock)
				if !ok {
					continue
				}
				price, ok := linuxPrice(sz.ValueColumns)
				if !ok {
					continue
				}
				k := code + "/" + typ
				if seen[k] {
					continue // the feed lists some sizes twice, with the same price
				}
				seen[k] = true
				o.Region, o.Price = code, price
				out = append(out, o)
			}
		}
	}
	if len(out) == 0 {
		why := "no Linux spot price of a GPU instance"
		if len(regions) > 0 && kept == 0 {
			why = "none of the regions " + strings.Join(regions, ", ") + " is in the feed"
		}
		if len(unknownRg) > 0 {
			why += "; unknown region names skipped: " + strings.Join(sortedKeys(unknownRg), ", ")
		}
		return nil, fmt.Errorf("%w: %s", scrapers.ErrNothingParsed, why)
	}
	return out, nil
}

func observation(typ string, gpuBlock bool) (pricewatch.Observation, bool) {
	if typ == "" || NonGPU(typ) {
		return pricewatch.Observation{}, false
	}
	o := pricewatch.Observation{
		Source: Name, Provider: "aws", OfferID: typ, Currency: "USD",
		Unit: pricewatch.PerHour, Mode: pricewatch.ModeSpot, URL: PageURL,
	}
	if g, ok := Lookup(typ); ok {
		// A spot instance is rented whole, with its size's GPUs.
		o.GPUName, o.GPUCount, o.GPUMemoryGB, o.GPUFraction = g.Name, g.Count, g.MemoryGB, g.Fraction
		o.RentUnit = pricewatch.RentFixed
		return o, true
	}
	if !gpuBlock {
		return pricewatch.Observation{}, false
	}
	// A GPU-block type the table does not know: kept under its own name so
	// that normalize reports it and someone extends the table. Its count is
	// unknown; 1 keeps the price per instance, and no card (and no rent
	// unit: the count is not known) means it is never ranked.
	o.GPUName, o.GPUCount = typ, 1
	return o, true
}

// linuxPrice is the USD price of the "linux" column, if it is a price.
func linuxPrice(cols []struct {
	Name   string            `json:"name"`
	Prices map[string]string `json:"prices"`
}) (float64, bool) {
	for _, c := range cols {
		if !strings.EqualFold(strings.TrimSpace(c.Name), "linux") {
			continue
		}
		s := strings.TrimSpace(c.Prices["USD"])
		if s == "" || strings.HasPrefix(s, "N/A") {
			return 0, false
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return 0, false
		}
		return v, true
	}
	return 0, false
}

var (
	jsonpHead = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$.]*\s*\(`)
	jsonpTail = regexp.MustCompile(`\)\s*;?\s*$`)
)

// unwrapJSONP returns the JSON inside "callback(...);" (leading /* */
// comments allowed), or the body itself when it is not JSONP.
func unwrapJSONP(body []byte) ([]byte, error) {
	b := bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	for bytes.HasPrefix(b, []byte("/*")) {
		end := bytes.Index(b[2:], []byte("*/"))
		if end < 0 {
			return nil, fmt.Errorf("unterminated comment before the feed")
		}
		b = bytes.TrimSpace(b[2+end+2:])
	}
	loc := jsonpHead.FindIndex(b)
	if loc == nil {
		return b, nil
	}
	tail := jsonpTail.FindIndex(b)
	if tail == nil || tail[0] < loc[1] {
		return nil, fmt.Errorf("JSONP callback without its closing parenthesis (truncated body?)")
	}
	return b[loc[1]:tail[0]], nil
}

// legacyRegions maps the region names of the old spot.js feed to region
// codes. Names that already are codes (us-east-2, us-west-2, sa-east-1,
// eu-central-1, …) pass through RegionCode unchanged.
var legacyRegions = map[string]string{
	"us-east":      "us-east-1",
	"us-west":      "us-west-1",
	"eu-ireland":   "eu-west-1",
	"eu-west":      "eu-west-1",
	"eu-frankfurt": "eu-central-1",
	"apac-sin":     "ap-southeast-1",
	"apac-syd":     "ap-southeast-2",
	"apac-tokyo":   "ap-northeast-1",
}

// regionCode matches AWS region codes, Local Zones included
// (us-east-1, us-gov-west-1, us-east-1-iah-1).
var regionCode = regexp.MustCompile(`^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]+(-[a-z]+-[0-9]+[a-z]?)?$`)

// RegionCode returns the region code of a feed region name: a code as is,
// a legacy name through the table, anything else not ok.
func RegionCode(name string) (string, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	if c, ok := legacyRegions[n]; ok {
		return c, true
	}
	if regionCode.MatchString(n) {
		return n, true
	}
	return "", false
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, fmt.Sprintf("%q", k))
	}
	sort.Strings(out)
	return out
}
