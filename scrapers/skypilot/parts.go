package skypilot

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"sync"

	"github.com/pricewatch/pricewatch/normalize"
)

// partsCSV is the per-provider table of instance types whose GPU part the
// provider's own description decides where the catalog's fields do not
// (data/parts.csv: one row per rule, with the page that states it).
//
//go:embed data/parts.csv
var partsCSV []byte

// Part is one row of the table.
type Part struct {
	Cloud        string
	InstanceType *regexp.Regexp
	GPUName      string
	Description  string
	Source       string
	Basis        string
}

var parts = sync.OnceValue(func() []Part {
	p, err := parseParts(bytes.NewReader(partsCSV))
	if err != nil {
		panic(fmt.Sprintf("skypilot: embedded parts table: %v", err))
	}
	return p
})

// Parts returns the table, in its order.
func Parts() []Part { return append([]Part(nil), parts()...) }

// PartName is the GPU name the provider's description gives the cloud's
// instance type, if the table has a rule for it.
func PartName(cloud, instanceType string) (string, bool) {
	for _, p := range parts() {
		if p.Cloud == cloud && p.InstanceType.MatchString(instanceType) {
			return p.GPUName, true
		}
	}
	return "", false
}

func parseParts(r io.Reader) ([]Part, error) {
	rows, err := normalize.ReadTable(r)
	if err != nil {
		return nil, err
	}
	var out []Part
	for i, row := range rows {
		line := i + 2 // data rows after the header, comments not counted
		for _, c := range []string{"cloud", "instance_type", "gpu_name", "description", "source", "basis"} {
			if _, ok := row[c]; !ok {
				return nil, fmt.Errorf("row %d: no column %q", line, c)
			}
		}
		re, err := regexp.Compile("^(?:" + row["instance_type"] + ")$")
		if err != nil {
			return nil, fmt.Errorf("row %d: instance_type: %w", line, err)
		}
		p := Part{Cloud: row["cloud"], InstanceType: re, GPUName: row["gpu_name"],
			Description: row["description"], Source: row["source"], Basis: row["basis"]}
		if p.Cloud == "" || p.GPUName == "" || p.Description == "" {
			return nil, fmt.Errorf("row %d: cloud, gpu_name and description are required", line)
		}
		if FormFactor(p.GPUName) == "" {
			return nil, fmt.Errorf("row %d: gpu_name %q states no form factor", line, p.GPUName)
		}
		if u, err := url.Parse(p.Source); err != nil || u.Scheme != "https" || u.Host == "" {
			return nil, fmt.Errorf("row %d: source %q is not an https link", line, p.Source)
		}
		if p.Basis != "parser" && p.Basis != "secondary" {
			return nil, fmt.Errorf("row %d: basis %q (parser or secondary)", line, p.Basis)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no rows")
	}
	return out, nil
}
