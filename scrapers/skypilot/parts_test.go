package skypilot

import (
	"strings"
	"testing"
)

func TestParts_Table(t *testing.T) {
	if len(Parts()) == 0 {
		t.Fatal("empty parts table")
	}
	for _, c := range []struct {
		cloud, instanceType, want string
	}{
		{"lambda", "gpu_1x_a100", "A100 PCIE"},
		{"verda", "1A100.22V", "A100 SXM4"},
		{"verda", "4A100.88V", "A100 SXM4"},
		{"verda", "1H100.80S.32V", "H100 SXM5"},
	} {
		if got, ok := PartName(c.cloud, c.instanceType); !ok || got != c.want {
			t.Errorf("PartName(%s, %s) = %q, %v; want %q", c.cloud, c.instanceType, got, ok, c.want)
		}
	}
	// Whole-name matches only, and per cloud: no rule for these.
	for _, c := range [][2]string{
		{"lambda", "gpu_1x_a100_sxm4"}, {"lambda", "gpu_8x_v100"}, {"verda", "1V100.6V"},
		{"verda", "1RTXPRO6000.30V"}, {"paperspace", "H100"}, {"lambda", "1A100.22V"},
	} {
		if got, ok := PartName(c[0], c[1]); ok {
			t.Errorf("PartName(%s, %s) = %q; want no rule", c[0], c[1], got)
		}
	}
}

func TestParseParts_Rejects(t *testing.T) {
	const head = "cloud,instance_type,gpu_name,description,source,basis\n"
	for name, body := range map[string]string{
		"no form factor": "lambda,gpu_1x_a100,A100,desc,https://example.com/x,parser\n",
		"no link":        "lambda,gpu_1x_a100,A100 PCIE,desc,,parser\n",
		"http link":      "lambda,gpu_1x_a100,A100 PCIE,desc,http://example.com/x,parser\n",
		"bad regexp":     "lambda,gpu_1x_(,A100 PCIE,desc,https://example.com/x,parser\n",
		"bad basis":      "lambda,gpu_1x_a100,A100 PCIE,desc,https://example.com/x,guess\n",
		"no description": "lambda,gpu_1x_a100,A100 PCIE,,https://example.com/x,parser\n",
	} {
		if _, err := parseParts(strings.NewReader(head + body)); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	if _, err := parseParts(strings.NewReader("cloud,gpu_name\n")); err == nil {
		t.Error("missing columns: loaded")
	}
}
