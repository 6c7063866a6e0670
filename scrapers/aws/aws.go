// Package aws scrapes the public AWS Price List bulk offer files of Amazon
// EC2, one file per region, for GPU instance families: plain Linux, shared
// tenancy, on-demand and standard reserved (1 and 3 years, No Upfront, the
// hourly rate) prices per instance-hour. It registers two sources over the
// same code: "aws" (the global regions, USD) and "aws-china" (the China
// regions cn-north-1 and cn-northwest-1 on the separate .com.cn endpoint,
// CNY).
//
// A region's file is hundreds of MB. It is never held in memory: the body is
// streamed (scrapers.Env.Stream) into a parser that reads one CSV row (or one
// JSON product or term) at a time and calls back per observation; only the
// few GPU products of a JSON file are remembered between its products and
// terms sections.
//
// The files carry no GPU model: it comes from the instance family through
// the static table Families (GPU count from the file's GPU column; the
// fractional L4 families g6f and gr6f from the table Fractions, since the
// column does not hold a whole count for them). Every GPU row is kept by
// default: a family the table does not know is reported under its own
// name, and a row of a known family whose GPU count cannot be told is
// reported under its instance type; nothing is guessed or dropped.
package aws

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// Source names of the two registrations.
const (
	SourceGlobal = "aws"
	SourceChina  = "aws-china"
)

// Default endpoints: the region index of the EC2 offer. The region files
// sit beside it: <folder of the index>/<region>/index.csv (or .json).
const (
	GlobalIndexURL = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/region_index.json"
	ChinaIndexURL  = "https://pricing.cn-north-1.amazonaws.com.cn/offers/v1.0/cn/AmazonEC2/current/region_index.json"
)

// Default options.
var (
	DefaultGlobalRegions = []string{"us-east-1", "us-west-2", "eu-central-1", "ap-northeast-1"}
	DefaultChinaRegions  = []string{"cn-north-1", "cn-northwest-1"}
	// DefaultFamilies is empty: with no families configured every GPU row
	// is kept, the families of the table and any other family whose GPU
	// column states GPUs (reported under its own name). A configured list
	// keeps only its families.
	DefaultFamilies []string
)

// GPU is what an instance family carries, as NVIDIA names the card.
type GPU struct {
	Name     string
	MemoryGB float64
}

// Families maps an instance family (the instance type before the dot) to
// its GPU, from AWS's instance type documentation ("Specifications for
// Amazon EC2 accelerated computing instances"). Only families whose GPU is
// certain are listed; older or newer families are reported under their
// own name. Names are NVIDIA's, or the canonical card id where NVIDIA's
// name does not tell the variant (RTX PRO 6000 Blackwell Server Edition,
// the GB200 superchip's B200).
var Families = map[string]GPU{
	"p3":      {"Tesla V100-SXM2-16GB", 16},
	"p3dn":    {"Tesla V100-SXM2-32GB", 32},
	"p4d":     {"NVIDIA A100-SXM4-40GB", 40},
	"p4de":    {"NVIDIA A100-SXM4-80GB", 80},
	"p5":      {"NVIDIA H100 80GB HBM3", 80},
	"p5e":     {"NVIDIA H200", 141},
	"p5en":    {"NVIDIA H200", 141},
	"p6-b200": {"NVIDIA B200", 180},
	"p6-b300": {"NVIDIA B300", 288},
	"g4dn":    {"Tesla T4", 16},
	"g5":      {"NVIDIA A10G", 24},
	"g5g":     {"NVIDIA T4G", 16},
	"g6":      {"NVIDIA L4", 24},
	"gr6":     {"NVIDIA L4", 24},
	"g6e":     {"NVIDIA L40S", 48},
	// G6f and Gr6f: fractions of one L4 (see Fractions).
	"g6f":  {"NVIDIA L4", 24},
	"gr6f": {"NVIDIA L4", 24},
	// G7e: RTX PRO 6000 Blackwell Server Edition, 96 GB (1, 2, 4, 8 GPUs).
	"g7e": {"RTX-PRO-6000-SERVER", 96},
	// G7: RTX PRO 4500 Blackwell Server Edition, 32 GB (kubernetes/
	// autoscaler issue 9854; GA 2026-06-18).
	"g7": {"RTX-PRO-4500-SERVER", 32},
	// P6e-GB200: 4 B200 GPUs of two GB200 superchips per instance
	// (p6e-gb200.36xlarge, 185 GiB each), an UltraServer slice.
	"p6e-gb200": {"B200-186GB-GB200", 186},
	// G4ad: AMD Radeon Pro V520 (no card: reported as unknown).
	"g4ad": {"AMD Radeon Pro V520", 8},
}

// Fractions gives the share of one GPU of each size of the fractional
// families (NVIDIA vGPU profiles L4-3Q, L4-6Q, L4-12Q: 1/8, 1/4, 1/2 of an
// L4). Such a size is one GPU with its fraction, rented whole; a size not
// listed is reported under its instance type.
var Fractions = map[string]map[string]float64{
	"g6f":  {"large": 1.0 / 8, "xlarge": 1.0 / 8, "2xlarge": 1.0 / 4, "4xlarge": 1.0 / 2},
	"gr6f": {"4xlarge": 1.0 / 2},
}

// nonGPU matches accelerator families that are not GPUs: AWS Inferentia
// and Trainium, the Xilinx video transcoder, FPGAs and Gaudi/Qualcomm.
var nonGPU = regexp.MustCompile(`^(inf|trn|vt|f|dl)[0-9]`)

// UnmappedName is the GPU name given to a configured family the table does
// not know, so that the unknown report names the family.
func UnmappedName(family string) string { return "unmapped AWS instance family " + family }

// Family is the instance family of an instance type: "p4d" for
// "p4d.24xlarge", "p6-b200" for "p6-b200.48xlarge".
func Family(instanceType string) string {
	f, _, _ := strings.Cut(instanceType, ".")
	return f
}

func init() {
	for _, r := range []struct {
		name, desc, url, cur, schedule string
		regions                        []string
	}{
		{SourceGlobal, "AWS Price List bulk offer files, EC2 GPU instances (Linux, shared tenancy)",
			GlobalIndexURL, "USD", "17 3 * * *", DefaultGlobalRegions},
		{SourceChina, "AWS China Price List bulk offer files (cn-north-1, cn-northwest-1), EC2 GPU instances (Linux, shared tenancy)",
			ChinaIndexURL, "CNY", "47 3 * * *", DefaultChinaRegions},
	} {
		scrapers.Add(scrapers.Registration{
			Name:        r.name,
			Description: r.desc,
			Auth:        "none",
			Yields:      "ondemand, reserved-1y, reserved-3y (standard, No Upfront hourly rate); " + r.cur + " per instance-hour",
			Defaults: scrapers.Settings{
				Enabled:    true,
				URL:        r.url,
				Schedule:   r.schedule, // daily: the files change a few times a month
				StaleAfter: 60 * time.Hour,
				Timeout:    15 * time.Minute, // one region file, streamed whole
				Delay:      time.Second,
				MaxBodyMB:  4096,
			},
			New: func() scrapers.Scraper {
				return &Scraper{source: r.name, Regions: slices.Clone(r.regions), Format: "csv"}
			},
		})
	}
}

// Scraper is one of the two AWS sources.
type Scraper struct {
	// Regions are region codes (us-east-1, cn-northwest-1, …); each is one
	// file. Every one must be listed in the region index.
	Regions []string `yaml:"regions"`
	// Format is "csv" (default) or "json", the file fetched per region.
	Format string `yaml:"format"`
	// Families are the instance families kept (the instance type before the
	// dot, matched exactly: "g5" does not include "g5g"). Empty: every GPU
	// family.
	Families []string `yaml:"families"`

	source string
}

var regionCode = regexp.MustCompile(`^[a-z]{2}(-[a-z0-9]+)*-[0-9]+$`)

// Scrape reads the region index at the configured URL, then streams each
// configured region's offer file from beside it.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	source := s.source
	if source == "" {
		source = env.Name
	}
	format := strings.ToLower(strings.TrimSpace(s.Format))
	if format == "" {
		format = "csv"
	}
	if format != "csv" && format != "json" {
		return scrapers.Result{}, fmt.Errorf("format %q: want csv or json", s.Format)
	}
	regions := s.Regions
	if len(regions) == 0 {
		regions = DefaultGlobalRegions
		if source == SourceChina {
			regions = DefaultChinaRegions
		}
	}
	for _, r := range regions {
		if !regionCode.MatchString(r) {
			return scrapers.Result{}, fmt.Errorf("bad region code %q (want e.g. us-east-1)", r)
		}
	}
	indexURL, base := Endpoints(env.URL())
	c, err := env.NewCollector(ctx)
	if err != nil {
		return scrapers.Result{}, err
	}
	resp, err := env.Fetch(ctx, c, scrapers.Request{URL: indexURL, Header: http.Header{"Accept": {"application/json"}}})
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("region index: %w", err)
	}
	listed, err := ParseRegionIndex(resp.Body)
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("region index %s: %w", indexURL, err)
	}
	for _, r := range regions {
		if !listed[r] {
			return scrapers.Result{}, fmt.Errorf("region %s is not in the region index %s (%d regions listed)", r, indexURL, len(listed))
		}
	}
	parse, accept := ParseCSV, "text/csv"
	if format == "json" {
		parse, accept = ParseJSON, "application/json"
	}
	var out []pricewatch.Observation
	for _, region := range regions {
		fileURL := base + region + "/index." + format
		f := Filter{Source: source, Region: region, Families: s.Families, URL: fileURL}
		err := env.Stream(ctx, c, scrapers.Request{URL: fileURL, Header: http.Header{"Accept": {accept}}},
			func(r io.Reader) error {
				_, err := parse(r, f, func(o pricewatch.Observation) error {
					out = append(out, o)
					env.AddOffers(1)
					return nil
				})
				return err
			})
		if err != nil {
			return scrapers.Result{Observations: out}, fmt.Errorf("region %s (%s): %w", region, fileURL, err)
		}
	}
	if len(out) == 0 {
		fams := "any GPU family"
		if len(s.Families) > 0 {
			fams = fmt.Sprintf("families %v", s.Families)
		}
		return scrapers.Result{}, fmt.Errorf("%w: no GPU rows of %s in regions %v",
			scrapers.ErrNothingParsed, fams, regions)
	}
	return scrapers.Result{Observations: out}, nil
}

// Endpoints derives the region index URL and the folder of the region
// files from the configured URL: either the region index itself
// (…/current/region_index.json) or the folder (…/current/).
func Endpoints(u string) (indexURL, base string) {
	if strings.HasSuffix(u, "/") {
		return u + "region_index.json", u
	}
	return u, u[:strings.LastIndex(u, "/")+1]
}

// ParseRegionIndex reads region_index.json ({"regions": {"us-east-1":
// {"regionCode": …, "currentVersionUrl": …}, …}}) and returns the region
// codes it lists.
func ParseRegionIndex(body []byte) (map[string]bool, error) {
	var idx struct {
		Regions map[string]struct {
			RegionCode string `json:"regionCode"`
		} `json:"regions"`
	}
	if err := scrapers.UnmarshalJSON(body, "", &idx); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for k, v := range idx.Regions {
		code := v.RegionCode
		if code == "" {
			code = k
		}
		out[code] = true
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: region index lists no regions", scrapers.ErrNothingParsed)
	}
	return out, nil
}

// Parse parses a whole region offer file held in memory, CSV or JSON (told
// apart by the first non-blank byte), with the same streaming parsers
// Scrape uses.
func Parse(body []byte, f Filter) ([]pricewatch.Observation, error) {
	var out []pricewatch.Observation
	emit := func(o pricewatch.Observation) error { out = append(out, o); return nil }
	var err error
	if t := bytes.TrimLeft(body, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '{' {
		_, err = ParseJSON(bytes.NewReader(body), f, emit)
	} else {
		_, err = ParseCSV(bytes.NewReader(body), f, emit)
	}
	if err != nil {
		return out, err
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}
