package lambda

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// The instance-types API (Lambda's OpenAPI spec 1.10.0, operation
// listInstanceTypes): GET /api/v1/instance-types with
// "Authorization: Bearer <key>" answers {"data": {<name>: item}}, where an
// item is
//
//	{"instance_type": {"name", "description", "gpu_description",
//	   "price_cents_per_hour", "specs": {"vcpus", "memory_gib", "storage_gib", "gpus"}},
//	 "regions_with_capacity_available": [{"name", "description"}]}
//
// price_cents_per_hour is "the price of the instance type in US cents per
// hour" (the spec's words): the whole instance, all specs.gpus GPUs, as
// gpuhunt's and SkyPilot's Lambda parsers read it (÷ 100 for USD). An
// error is {"error": {"code", "message", "suggestion"}}.

// APIKeyEnv holds the Lambda Cloud API key (or APIKeyEnv+"_FILE" a file
// holding it). It is sent as a Bearer token and never logged.
const APIKeyEnv = "PRICEWATCH_LAMBDA_API_KEY"

type apiRegion struct {
	Name string `json:"name"`
}

type apiItem struct {
	InstanceType *struct {
		Name           string          `json:"name"`
		Description    string          `json:"description"`
		GPUDescription string          `json:"gpu_description"`
		PriceCents     scrapers.Number `json:"price_cents_per_hour"`
		Specs          struct {
			VCPUs      float64 `json:"vcpus"`
			MemoryGiB  float64 `json:"memory_gib"`
			StorageGiB float64 `json:"storage_gib"`
			GPUs       int     `json:"gpus"`
		} `json:"specs"`
	} `json:"instance_type"`
	Regions []apiRegion `json:"regions_with_capacity_available"`
}

type apiResponse struct {
	Data  *map[string]apiItem `json:"data"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// gpuDescRe reads a gpu_description: the model, its memory in GB, and the
// form factor when stated ("H100 (80 GB SXM5)", "A10 (24 GB PCIe)",
// "GH200 (96 GB)", "Tesla V100 (16 GB)").
var gpuDescRe = regexp.MustCompile(`^\s*(.*?)\s*\(\s*([0-9]+(?:\.[0-9]+)?)\s*GB\s*([^)]*?)\s*\)\s*$`)

// countPrefixRe is the "8x " that starts a description.
var countPrefixRe = regexp.MustCompile(`^\s*[0-9]+x\s+`)

// GPUOf reads the GPU of an instance type from its gpu_description (the
// description without its count when there is none): the name Lambda
// writes, the form factor kept as a word of it ("H100 SXM5", "A10 PCIe",
// "GH200"), and the memory of one GPU in GB. ok is false when neither
// states a "(<n> GB …)" part.
func GPUOf(gpuDescription, description string) (name string, memGB float64, ok bool) {
	d := strings.TrimSpace(gpuDescription)
	if d == "" {
		d = countPrefixRe.ReplaceAllString(description, "")
	}
	m := gpuDescRe.FindStringSubmatch(d)
	if m == nil || m[1] == "" {
		return "", 0, false
	}
	memGB, _ = strconv.ParseFloat(m[2], 64)
	name = m[1]
	if ff := strings.TrimSpace(m[3]); ff != "" {
		name += " " + ff
	}
	return name, memGB, true
}

// ParseAPI turns an instance-types answer into observations: one per
// instance type and region with capacity (available), or one with no
// region, not available, for a type no region has capacity for. A type
// without GPUs (cpu_4x_general) is left out; a GPU type whose description
// cannot be read keeps its price under its name, with no rent unit.
func ParseAPI(body []byte, src string) ([]pricewatch.Observation, error) {
	var r apiResponse
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, err
	}
	if r.Error != nil {
		return nil, fmt.Errorf("API error %s: %s", r.Error.Code, r.Error.Message)
	}
	if r.Data == nil {
		return nil, fmt.Errorf("%w: no data object in the instance-types answer", scrapers.ErrNothingParsed)
	}
	keys := make([]string, 0, len(*r.Data))
	for k := range *r.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []pricewatch.Observation
	for _, k := range keys {
		it := (*r.Data)[k].InstanceType
		if it == nil {
			continue
		}
		name := strings.TrimSpace(it.Name)
		if name == "" {
			name = k
		}
		cents, ok := it.PriceCents.Get()
		if !ok || !(cents > 0) || math.IsInf(cents, 0) || it.Specs.GPUs <= 0 {
			continue
		}
		o := pricewatch.Observation{
			Source: "lambda", Provider: "lambda", OfferID: name,
			Price: cents / 100, Currency: "USD", Unit: pricewatch.PerHour, Mode: pricewatch.ModeOnDemand, URL: src,
			GPUCount: it.Specs.GPUs, RentUnit: pricewatch.RentFixed,
			Machine: pricewatch.Machine{RentURL: RentURL},
		}
		if gpu, mem, ok := GPUOf(it.GPUDescription, it.Description); ok {
			o.GPUName, o.GPUMemoryGB = gpu, mem
			// The specs are the whole instance's (GiB, as the spec says).
			o.VCPUs, o.RAMGB, o.DiskGB = max(it.Specs.VCPUs, 0), max(it.Specs.MemoryGiB, 0), max(it.Specs.StorageGiB, 0)
		} else {
			// Unreadable description: reported under the type's name, never
			// ranked (no card, no unit), the price per instance kept.
			o.GPUName, o.GPUCount, o.RentUnit = name, 1, ""
		}
		seen := map[string]bool{}
		for _, reg := range (*r.Data)[k].Regions {
			rn := strings.TrimSpace(reg.Name)
			if rn == "" || seen[rn] {
				continue
			}
			seen[rn] = true
			ro := o
			ro.Region, ro.Available, ro.Stock = rn, pricewatch.AvailableYes, "capacity available"
			out = append(out, ro)
		}
		if len(seen) == 0 {
			o.Available, o.Stock = pricewatch.AvailableNo, "no region with capacity"
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		return nil, scrapers.ErrNothingParsed
	}
	return out, nil
}
