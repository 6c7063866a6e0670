package skypilot

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// Placeholder is the price SkyPilot writes for locations where an
// accelerator is not really offered (GCP TPUs); it is never a price.
const Placeholder = 700.0

// required are the columns every vms.csv has, in whatever order.
var required = []string{"InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region"}

// memoryIsTotal lists the catalogs whose GpuInfo MemoryInfo.SizeInMiB is the
// memory of all the instance's GPUs together (fetch_vast.py writes Vast's
// gpu_total_ram there); every other catalog states it per GPU.
var memoryIsTotal = map[string]bool{"vast": true}

// aggregated lists the catalogs whose rows are not offers but aggregates
// over many offers: SkyPilot's Vast fetcher (fetch_vast.py) groups the
// marketplace's offers by GPU count, model, vCPUs and RAM and writes the
// group's median price (ceil(n/2)-th lowest) and highest min_bid, which no
// single machine need ask. Such rows are reference prices.
var aggregated = map[string]bool{"vast": true}

// Parse turns one cloud's vms.csv into observations in the catalog's own
// terms: per instance-hour prices for AcceleratorCount GPUs, in currency.
//
// Columns are found by header name. Rows without an accelerator (CPU
// machines, GCP's A2/A3 machine rows that exclude the GPU), TPUs, empty,
// zero and placeholder (700.0) prices are skipped. Price gives the
// on-demand observation and SpotPrice, when positive, the spot one (kept
// where it equals Price, as RunPod's catalog has it, but then not
// available: no spot capacity is listed at a price of its own). A spot price
// that differs between the availability zones of one region makes the zone
// part of the offer's region (AWS); otherwise the region alone is used and
// identical rows of several zones collapse into one offer.
func Parse(body []byte, cloud, currency, url string) ([]pricewatch.Observation, error) {
	b := bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return nil, errors.New("empty response body")
	}
	if t[0] == '<' {
		return nil, fmt.Errorf("expected CSV, got markup: %s", snippet(t))
	}
	if b[len(b)-1] != '\n' {
		// Every published catalog ends with a newline; a body cut short
		// would otherwise parse as fewer rows or a cut price.
		return nil, errors.New("catalog truncated (no final newline)")
	}
	r := csv.NewReader(bytes.NewReader(b))
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("read CSV header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	var missing []string
	for _, c := range required {
		if _, ok := col[c]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("layout change: missing column(s) %s (header: %s)",
			strings.Join(missing, ", "), snippet([]byte(strings.Join(header, ","))))
	}
	get := func(rec []string, name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	var cands []candidate
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("parse CSV: %w", err)
		}
		cands = append(cands, row(cloud, currency, url, func(name string) string { return get(rec, name) })...)
	}
	out := placeZones(cands)
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no GPU row with a price", scrapers.ErrNothingParsed)
	}
	return out, nil
}

// candidate is an observation before its region is settled.
type candidate struct {
	obs          pricewatch.Observation
	region, zone string
}

// row turns one CSV record into zero, one or two candidates.
func row(cloud, currency, url string, get func(string) string) []candidate {
	accel := get("AcceleratorName")
	if accel == "" || strings.HasPrefix(strings.ToLower(accel), "tpu") {
		return nil // CPU machine, GPU-less machine row, or a TPU
	}
	count, err := strconv.ParseFloat(get("AcceleratorCount"), 64)
	if err != nil || !(count > 0) || math.IsInf(count, 0) {
		return nil
	}
	gpus, fraction := 0, 0.0
	switch {
	case count < 1:
		gpus, fraction = 1, count // a share of one GPU
	case count == math.Trunc(count) && count <= 1024:
		gpus = int(count)
	default:
		return nil
	}
	info := gpuInfo(get("GpuInfo"))
	if cloud == "vast" {
		accel = VastName(accel, get("InstanceType"))
	}
	name := GPUName(accel, info.name, get("InstanceType"))
	if n, ok := PartName(cloud, get("InstanceType")); ok {
		name = n // the provider's own description decides the part
	}
	mem := info.memoryGB(cloud, count)
	id := get("InstanceType")
	if id == "" {
		// GCP lists attachable accelerators without a machine type.
		id = accel + "x" + get("AcceleratorCount")
	}
	base := pricewatch.Observation{
		Source: "skypilot", Provider: cloud, OfferID: cloud + "/" + id,
		GPUName: name, GPUCount: gpus, GPUMemoryGB: mem, GPUFraction: fraction,
		Currency: currency, Unit: pricewatch.PerHour, URL: url,
	}
	if aggregated[cloud] {
		base.Kind = pricewatch.KindReference
	} else {
		// A row is one instance type (or one attachable GPU count), rented
		// whole with its AcceleratorCount GPUs.
		base.RentUnit = pricewatch.RentFixed
	}
	region := strings.Trim(get("Region"), " ,")
	zone := get("AvailabilityZone")
	var out []candidate
	for _, m := range []struct {
		mode pricewatch.Mode
		col  string
	}{{pricewatch.ModeOnDemand, "Price"}, {pricewatch.ModeSpot, "SpotPrice"}} {
		p, ok := price(get(m.col))
		if !ok {
			continue
		}
		o := base
		o.Mode, o.Price = m.mode, p
		if m.mode == pricewatch.ModeSpot && cloud == "runpod" {
			// SkyPilot's RunPod catalog repeats the on-demand price as the
			// spot price where RunPod lists no spot capacity: kept, not
			// available (a real spot price differs from the on-demand one).
			if od, ok := price(get("Price")); ok && od == p {
				o.Available, o.Stock = pricewatch.AvailableNo, "no spot price listed (spot = on-demand)"
			}
		}
		out = append(out, candidate{obs: o, region: region, zone: zone})
	}
	return out
}

// price reads a catalog price: empty, zero (Vast's SpotPrice 0.00 = none),
// negative, non-finite and the 700.0 placeholder are no price.
func price(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	p, err := strconv.ParseFloat(s, 64)
	if err != nil || !(p > 0) || math.IsInf(p, 0) || p == Placeholder {
		return 0, false
	}
	return p, true
}

// placeZones settles regions: rows of one offer, region and mode that agree
// on the price are one offer in the region; rows that disagree (AWS spot per
// availability zone) are one offer per zone, "region/zone". Rows that still
// share a key keep the lowest price.
func placeZones(cands []candidate) []pricewatch.Observation {
	type gk struct {
		id, region string
		mode       pricewatch.Mode
	}
	groups := map[gk][]int{}
	var order []gk
	for i, c := range cands {
		k := gk{c.obs.OfferID, c.region, c.obs.Mode}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	var out []pricewatch.Observation
	at := map[string]int{}
	add := func(o pricewatch.Observation) {
		k := pricewatch.OfferKey(o.Source, o.OfferID, o.Region, o.Mode)
		if j, ok := at[k]; ok {
			if o.Price < out[j].Price {
				out[j] = o
			}
			return
		}
		at[k] = len(out)
		out = append(out, o)
	}
	for _, k := range order {
		idx := groups[k]
		same := true
		for _, i := range idx[1:] {
			if cands[i].obs.Price != cands[idx[0]].obs.Price {
				same = false
			}
		}
		for _, i := range idx {
			c := cands[i]
			o := c.obs
			o.Region = c.region
			if !same && c.zone != "" {
				if o.Region == "" {
					o.Region = c.zone
				} else {
					o.Region += "/" + c.zone
				}
			}
			add(o)
			if same {
				break
			}
		}
	}
	return out
}

// info is what pricewatch reads from GpuInfo.
type info struct {
	name string
	mib  float64
}

// gpuInfo reads the GPU name and MemoryInfo.SizeInMiB of the first GPU
// entry. A GpuInfo that does not parse (Paperspace writes just "H100")
// yields nothing: the row keeps its price, without a memory size.
func gpuInfo(s string) info {
	if s == "" {
		return info{}
	}
	v, err := ParseLiteral(s)
	if err != nil {
		return info{}
	}
	m, _ := v.(map[string]any)
	gpus, _ := m["Gpus"].([]any)
	if len(gpus) == 0 {
		return info{}
	}
	g, _ := gpus[0].(map[string]any)
	var out info
	out.name, _ = g["Name"].(string)
	if mi, ok := g["MemoryInfo"].(map[string]any); ok {
		if f, ok := number(mi["SizeInMiB"]); ok && f > 0 && !math.IsInf(f, 0) {
			out.mib = f
		}
	}
	return out
}

// memoryGB is the memory of one GPU in GB. RunPod's catalog writes GB into
// SizeInMiB (80 for an 80 GB card): no GPU has less than 1024 MiB, so a
// value below that is taken as GB.
func (i info) memoryGB(cloud string, count float64) float64 {
	mib := i.mib
	if mib <= 0 {
		return 0
	}
	if memoryIsTotal[cloud] && count >= 1 {
		mib /= count
	}
	if mib < 1024 {
		return math.Round(mib*10) / 10
	}
	return math.Round(mib/1024*10) / 10
}

// formTokens are the form-factor words a GPU's description may carry.
var formTokens = map[string]string{
	"SXM": "SXM", "SXM2": "SXM2", "SXM3": "SXM3", "SXM4": "SXM4", "SXM5": "SXM5", "SXM6": "SXM6",
	"PCIE": "PCIE", "PCI": "PCIE", "NVL": "NVL",
}

// FormFactor finds the one form-factor word (SXM, SXM4, PCIE, NVL, …) in a
// name or instance type; "" if there is none or two disagree.
func FormFactor(s string) string {
	words := strings.FieldsFunc(strings.ToUpper(s), func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	found := ""
	for _, w := range words {
		f, ok := formTokens[w]
		if !ok {
			continue
		}
		if found != "" && found != f {
			return ""
		}
		found = f
	}
	return found
}

// GPUName is the catalog's AcceleratorName, with the form factor the row
// states elsewhere appended when the name itself lacks one: SkyPilot names
// both Lambda's gpu_1x_h100_pcie and gpu_1x_h100_sxm5 "H100", and Vast's
// H100 SXM and H100 NVL alike, while the GpuInfo name ("A100 PCIe") or the
// instance type ("gpu_8x_a100_80gb_sxm4", "1x-H100_SXM-32-65536") says which
// card it is. Without such a word the name stays as written (an ambiguous
// one maps to its family's lower-bound card when the memory is known, else
// stays unknown: normalize/data/aliases.csv).
func GPUName(accel, infoName, instanceType string) string {
	if FormFactor(accel) != "" {
		return accel
	}
	for _, s := range []string{infoName, instanceType} {
		if f := FormFactor(s); f != "" {
			return accel + " " + f
		}
	}
	return accel
}

// vastInstance is a SkyPilot Vast instance type: "<count>x-<Vast gpu_name,
// spaces as underscores>-<vCPUs>-<RAM MiB>" ("2x-RTX_3060_Ti-32-65536").
var vastInstance = regexp.MustCompile(`^[0-9]+x-(.+)-[0-9]+-[0-9]+$`)

// VastName is the Vast gpu_name a SkyPilot Vast row's instance type carries
// when it extends the row's AcceleratorName, else the AcceleratorName.
// SkyPilot's Vast fetcher shortens the name and drops its suffix ("RTX3060"
// for the RTX 3060 Ti, "RTX4070" for Vast's "RTX 4070S Ti", "RTX4060" for
// the 4060 Ti); the instance type keeps Vast's own spelling, which the
// aliases know (the 48 GB RTX 4090 is then told apart by its memory).
func VastName(accel, instanceType string) string {
	m := vastInstance.FindStringSubmatch(instanceType)
	if m == nil {
		return accel
	}
	name := strings.ReplaceAll(m[1], "_", " ")
	if a := compact(accel); a == "" || !strings.HasPrefix(compact(name), a) {
		return accel
	}
	return name
}

// compact is a GPU name upper-cased with everything but letters and digits
// removed and a leading vendor word dropped ("Tesla_V100" → "V100").
func compact(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return -1
	}, s)
	for _, v := range []string{"NVIDIA", "GEFORCE", "TESLA", "QUADRO", "AMD"} {
		s = strings.TrimPrefix(s, v)
	}
	return s
}

func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	return s
}
