package awsspot

import (
	"regexp"
	"strings"
)

// GPUs is what an instance type carries: the GPU name (a canonical card id
// of cards.csv where one exists, else the model as AWS names it, which
// normalize then reports as unknown), the number of GPUs, the memory of
// one whole GPU, and for a fractional size the share of one GPU (Count 1).
type GPUs struct {
	Name     string
	Count    int
	MemoryGB float64
	Fraction float64
}

type family struct {
	name     string
	memoryGB float64
	sizes    map[string]int // size suffix → GPU count
	// fractions: size suffix → share of one GPU, for fractional families
	// (their sizes hold one GPU share each).
	fractions map[string]float64
}

// families maps an instance family to its GPU model and the GPU count of
// each size, from AWS's public instance-type specifications (EC2
// "Accelerated computing" instance types). Only sizes whose count is
// documented are listed; another size of a listed family is reported as
// unknown, never guessed.
var families = map[string]family{
	// NVIDIA Tesla V100 16GB SXM2 (P3) and 32GB (P3dn).
	"p3":   {"V100-16GB-SXM2", 16, map[string]int{"2xlarge": 1, "8xlarge": 4, "16xlarge": 8}, nil},
	"p3dn": {"V100-32GB-SXM2", 32, map[string]int{"24xlarge": 8}, nil},
	// NVIDIA A100 40GB SXM4 (P4d) and 80GB (P4de).
	"p4d":  {"A100-40GB-SXM", 40, map[string]int{"24xlarge": 8}, nil},
	"p4de": {"A100-80GB-SXM", 80, map[string]int{"24xlarge": 8}, nil},
	// NVIDIA H100 80GB SXM5 (P5; p5.4xlarge is the single-GPU size).
	"p5": {"H100-80GB-SXM", 80, map[string]int{"4xlarge": 1, "48xlarge": 8}, nil},
	// NVIDIA H200 141GB (P5e, P5en).
	"p5e":  {"H200-141GB-SXM", 141, map[string]int{"48xlarge": 8}, nil},
	"p5en": {"H200-141GB-SXM", 141, map[string]int{"48xlarge": 8}, nil},
	// NVIDIA B200 (P6-B200) and B300 (P6-B300), 8 per HGX board.
	"p6-b200": {"B200-180GB-SXM", 180, map[string]int{"48xlarge": 8}, nil},
	"p6-b300": {"B300-288GB-SXM", 288, map[string]int{"48xlarge": 8}, nil},
	// NVIDIA T4 (G4dn).
	"g4dn": {"T4", 16, map[string]int{"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "16xlarge": 1, "12xlarge": 4, "metal": 8}, nil},
	// NVIDIA A10G (G5).
	"g5": {"A10G", 24, map[string]int{"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "16xlarge": 1, "12xlarge": 4, "24xlarge": 4, "48xlarge": 8}, nil},
	// NVIDIA L4 (G6, and Gr6 with more memory per vCPU).
	"g6":  {"L4", 24, map[string]int{"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "16xlarge": 1, "12xlarge": 4, "24xlarge": 4, "48xlarge": 8}, nil},
	"gr6": {"L4", 24, map[string]int{"4xlarge": 1, "8xlarge": 1}, nil},
	// NVIDIA L40S (G6e).
	"g6e": {"L40S", 48, map[string]int{"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "16xlarge": 1, "12xlarge": 4, "24xlarge": 4, "48xlarge": 8}, nil},
	// Fractions of one NVIDIA L4 (G6f, and Gr6f with more memory per
	// vCPU): vGPU profiles L4-3Q (1/8), L4-6Q (1/4), L4-12Q (1/2).
	"g6f":  {"L4", 24, nil, map[string]float64{"large": 1.0 / 8, "xlarge": 1.0 / 8, "2xlarge": 1.0 / 4, "4xlarge": 1.0 / 2}},
	"gr6f": {"L4", 24, nil, map[string]float64{"4xlarge": 1.0 / 2}},
	// NVIDIA RTX PRO 4500 Blackwell Server Edition, 32 GB (G7; sizes from
	// kubernetes/autoscaler issue 9854: 1, 1, 2, 4, 4, 8 GPUs).
	"g7": {"RTX-PRO-4500-SERVER", 32, map[string]int{"2xlarge": 1, "4xlarge": 1, "8xlarge": 2, "12xlarge": 4, "24xlarge": 4, "48xlarge": 8}, nil},
	// NVIDIA RTX PRO 6000 Blackwell Server Edition, 96 GB (G7e).
	"g7e": {"RTX-PRO-6000-SERVER", 96, map[string]int{"2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "12xlarge": 2, "24xlarge": 4, "48xlarge": 8}, nil},
	// P6e-GB200: 4 B200 GPUs (two GB200 superchips, 185 GiB each) per
	// instance, a slice of an UltraServer.
	"p6e-gb200": {"B200-186GB-GB200", 186, map[string]int{"36xlarge": 4}, nil},
	// GPUs without a card in cards.csv: kept, reported as unknown.
	// NVIDIA T4G (G5g, Graviton).
	"g5g": {"T4G", 16, map[string]int{"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "16xlarge": 2, "metal": 2}, nil},
	// AMD Radeon Pro V520 (G4ad).
	"g4ad": {"Radeon Pro V520", 8, map[string]int{"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 2, "16xlarge": 4}, nil},
	// Previous generations in the old spot.js: NVIDIA Tesla M60 (G3, G3s),
	// GRID K520 (G2), Tesla K80 (P2, counted per GK210 GPU as AWS does).
	"g3":  {"Tesla M60", 8, map[string]int{"4xlarge": 1, "8xlarge": 2, "16xlarge": 4}, nil},
	"g3s": {"Tesla M60", 8, map[string]int{"xlarge": 1}, nil},
	"g2":  {"GRID K520", 4, map[string]int{"2xlarge": 1, "8xlarge": 4}, nil},
	"p2":  {"Tesla K80", 12, map[string]int{"xlarge": 1, "8xlarge": 8, "16xlarge": 16}, nil},
}

// Lookup returns the GPUs of an instance type ("p5.48xlarge").
func Lookup(instanceType string) (GPUs, bool) {
	fam, size, ok := strings.Cut(strings.ToLower(strings.TrimSpace(instanceType)), ".")
	if !ok {
		return GPUs{}, false
	}
	f, ok := families[fam]
	if !ok {
		return GPUs{}, false
	}
	if fr, ok := f.fractions[size]; ok {
		return GPUs{Name: f.name, Count: 1, MemoryGB: f.memoryGB, Fraction: fr}, true
	}
	n, ok := f.sizes[size]
	if !ok {
		return GPUs{}, false
	}
	return GPUs{Name: f.name, Count: n, MemoryGB: f.memoryGB}, true
}

// nonGPU matches accelerator families that are not GPUs: AWS Inferentia
// (inf1, inf2) and Trainium (trn1, trn1n, trn2), the Xilinx video
// transcoder (vt1), FPGAs (f1, f2) and Gaudi/Qualcomm (dl1, dl2q).
var nonGPU = regexp.MustCompile(`^(inf|trn|vt|f|dl)[0-9]`)

// NonGPU reports an instance type whose accelerators are not GPUs.
func NonGPU(instanceType string) bool {
	return nonGPU.MatchString(strings.ToLower(strings.TrimSpace(instanceType)))
}
