package lambda

import (
	"strconv"
	"strings"
)

// The page prices each instance shape per GPU-hour but states no GPU count;
// Lambda sells a shape whole (an instance type gpu_<N>x_<model>…, billed
// for all N GPUs). The count comes from this table, keyed by the row's
// model (Model) and vCPUs. It is built from the real SkyPilot Lambda
// catalog (skypilot-org/skypilot-catalog catalogs/v8/lambda/vms.csv @
// 0f40703, reference/catalogs/skypilot-lambda-vms-excerpt.csv), whose
// fetcher (sky/catalog/data_fetchers/fetch_lambda_cloud.py) reads the
// count from the instance type name and the vCPUs from Lambda's
// instance-types API. A row whose shape is not listed keeps no GPU count
// and no rent unit: it is kept for its price and never ranked.
var shapes = map[shape]int{
	{"H100", 26}:    1, // gpu_1x_h100_pcie, gpu_1x_h100_sxm5
	{"A100", 30}:    1, // gpu_1x_a100 (40 GB)
	{"A100", 240}:   8, // gpu_8x_a100_80gb_sxm4
	{"A10", 30}:     1, // gpu_1x_a10
	{"A6000", 14}:   1, // gpu_1x_a6000
	{"A6000", 28}:   2, // gpu_2x_a6000
	{"A6000", 56}:   4, // gpu_4x_a6000
	{"V100", 88}:    8, // gpu_8x_v100_n
	{"V100", 92}:    8, // gpu_8x_v100
	{"RTX6000", 14}: 1, // gpu_1x_rtx6000 (Quadro RTX 6000)
}

// shape is a page row's model and vCPUs.
type shape struct {
	model string
	vcpus int
}

// Shapes returns a copy of the shape table: model and vCPUs → GPUs.
func Shapes() map[string]int {
	m := make(map[string]int, len(shapes))
	for k, v := range shapes {
		m[k.model+"/"+strconv.Itoa(k.vcpus)] = v
	}
	return m
}

// GPUs is the GPU count of the shape of a page row (plan as written,
// vCPUs); ok is false for a shape the table does not know.
func GPUs(plan string, vcpus int) (int, bool) {
	n, ok := shapes[shape{Model(plan), vcpus}]
	return n, ok
}

// Model is the model a plan name names, as SkyPilot's catalog spells it
// (memory and form factor aside): the first word with a digit ("NVIDIA H100
// SXM" → H100, "NVIDIA RTX A6000" → A6000, "NVIDIA Tesla V100" → V100), a
// bare number joined to a preceding "RTX" ("NVIDIA Quadro RTX 6000" →
// RTX6000).
func Model(plan string) string {
	words := strings.Fields(strings.ToUpper(plan))
	for i, w := range words {
		if !strings.ContainsAny(w, "0123456789") {
			continue
		}
		if strings.Trim(w, "0123456789") == "" && i > 0 && words[i-1] == "RTX" {
			return "RTX" + w
		}
		return w
	}
	return ""
}
