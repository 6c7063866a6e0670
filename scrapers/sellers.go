package scrapers

import "strings"

// sellerNames maps the spellings aggregators use for the clouds they resell
// (Shadeform's "cloud", Prime Intellect's and Spheron's "provider") to the
// names pricewatch's own sources go by, so that a resold machine names the
// same seller as the cloud's own source and the market counts it once
// (pipeline's sellerVotes). Spellings are those the aggregators' documents
// and independent parsers show: Shadeform's cloud enum (docs.shadeform.ai
// instances-info: lambdalabs, datacrunch, massedcompute, …), Prime
// Intellect's providers (its availability docs: runpod, hyperstack; SkyPilot's
// fetch_primeintellect: datacrunch, lambdalabs), Spheron's (a third-party
// parser of app.spheron.ai/api/gpu-offers: data-crunch, massed-compute,
// spheron-ai, spheron-es).
var sellerNames = map[string]string{
	"lambdalabs":    "lambda",
	"lambda":        "lambda",
	"datacrunch":    "verda", // DataCrunch renamed itself Verda; scrapers/verda is its source
	"verda":         "verda",
	"massedcompute": "massedcompute",
	"voltagepark":   "voltagepark",
	"hyperstack":    "hyperstack",
	"runpod":        "runpod",
	"vast":          "vast",
	"vastai":        "vast",
	"tensordock":    "tensordock",
	"jarvislabs":    "jarvislabs",
	"paperspace":    "paperspace",
	"nebius":        "nebius",
	"crusoe":        "crusoe",
	"cudo":          "cudo",
	"cudocompute":   "cudo",
	"fluidstack":    "fluidstack",
	"latitude":      "latitude",
	"oblivus":       "oblivus",
	"denvr":         "denvr",
	"vultr":         "vultr",
	"digitalocean":  "digitalocean",
	"scaleway":      "scaleway",
	"aws":           "aws",
	"azure":         "azure",
	"gcp":           "gcp",
	"google":        "gcp",
	"oci":           "oracle",
	"oracle":        "oracle",
}

// Seller is the seller name of a cloud an aggregator names: its pricewatch
// source name where one is known (table above), else the name lower-cased
// with spaces, "-" and "_" dropped ("Massed Compute", "massed-compute" and
// "massed_compute" are one seller). Empty in, empty out.
func Seller(name string) string {
	k := strings.ToLower(strings.TrimSpace(name))
	k = strings.NewReplacer(" ", "", "-", "", "_", "").Replace(k)
	if s, ok := sellerNames[k]; ok {
		return s
	}
	return k
}

// twoForms are the GPU families sold both as SXM and as PCIe parts, whose
// name alone does not decide the card.
var twoForms = map[string]bool{"A100": true, "H100": true, "V100": true, "P100": true, "A800": true, "H800": true}

// WithForm adds to a GPU name the form factor a source's own field states
// ("SXM5", "PCIe"; upper-cased) where the name's family is sold in both
// forms and the name does not already say one: "H100" and "sxm5" give
// "H100 SXM5", "A100_80G" and "pcie" "A100_80G PCIE"; "L40S" stays "L40S".
// A form other than SXM… or PCIe is not added.
func WithForm(name, form string) string {
	name = strings.TrimSpace(name)
	f := strings.ToUpper(strings.TrimSpace(form))
	if !strings.HasPrefix(f, "SXM") && f != "PCIE" {
		return name
	}
	up := strings.ToUpper(name)
	if strings.Contains(up, "SXM") || strings.Contains(up, "PCIE") {
		return name
	}
	family := strings.FieldsFunc(up, func(r rune) bool { return r == '_' || r == ' ' || r == '-' })
	if len(family) == 0 || !twoForms[family[0]] {
		return name
	}
	return name + " " + f
}
