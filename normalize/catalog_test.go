package normalize_test

import (
	"encoding/csv"
	"errors"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/normalize"
)

// catalog is shared by the tests: DefaultCatalog is read-only after loading.
var catalog = normalize.DefaultCatalog()

// resolveCase is a name as a source writes it and the card it must
// resolve to ("" means unknown, never guessed).
type resolveCase struct {
	name     string
	source   string
	gpu      string
	memoryGB float64
	want     string
}

func checkResolve(t *testing.T, tests []resolveCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := catalog.Resolve(tt.source, tt.gpu, tt.memoryGB)
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("Resolve(%q, %q, %v) = %q, %v; want %q, %v",
					tt.source, tt.gpu, tt.memoryGB, got, ok, tt.want, tt.want != "")
			}
		})
	}
}

func TestCatalog_Resolve(t *testing.T) {
	checkResolve(t, []resolveCase{
		// Generic ("*") aliases, for any source.
		{"GenericT4", "azure", "T4", 16, "T4"},
		{"GenericA6000", "lambda", "A6000", 0, "RTX-A6000"},
		{"GenericRTX4090D", "vast", "RTX 4090 D", 24, "RTX-4090D"},
		{"GenericH100NVL", "azure", "H100 NVL", 94, "H100-94GB-NVL"},
		{"GenericMI300XOAM", "azure", "AMD Instinct MI300X OAM", 192, "MI300X-192GB"},
		{"GenericNoSource", "", "L40S", 0, "L40S"},

		// A source-specific row wins over "*": lambda's "GH200" needs no
		// memory, the generic ones need it to tell 96 from 144 GB.
		{"LambdaGH200WithoutMemory", "lambda", "GH200", 0, "GH200-96GB"},
		{"GenericGH200WithoutMemoryAmbiguous", "runpod", "GH200", 0, ""},
		{"GenericGH200At96", "runpod", "GH200", 96, "GH200-96GB"},
		{"GenericGH200At144", "vast", "GH200", 144, "GH200-144GB"},
		// Names only a source knows stay unknown elsewhere.
		{"VastRTXPRO6000S", "vast", "RTX PRO 6000 S", 95.6, "RTX-PRO-6000-SERVER"},
		{"RTXPRO6000SOnlyForVastAndSkyPilot", "runpod", "RTX PRO 6000 S", 96, ""},
		{"LambdaB200SXM6", "lambda", "NVIDIA B200 SXM6", 180, "B200-180GB-SXM"},
		{"B200SXM6OnlyForLambda", "azure", "B200 SXM6", 180, ""},
		// No Lambda page or response states its V100's form factor: the
		// lower-bound card, as under SkyPilot (V100-16GB-SXM2 once, then unknown).
		{"LambdaV100At16", "lambda", "Tesla V100", 16, "V100-16GB"},
		{"CNYIndexH200IsSXM", "cny-index", "H200 141GB", 141, "H200-141GB-SXM"},

		// Memory disambiguation: within MemoryTolerance (10%) of the card's memory.
		{"VastA100SXM4At40", "vast", "A100 SXM4", 40, "A100-40GB-SXM"},
		{"VastA100SXM4At80", "vast", "A100 SXM4", 80, "A100-80GB-SXM"},
		{"VastA100SXM4At79_6", "vast", "A100 SXM4", 79.6, "A100-80GB-SXM"},
		{"VastA100SXM4At0Ambiguous", "vast", "A100 SXM4", 0, ""},
		{"VastA100SXM4At60Neither", "vast", "A100 SXM4", 60, ""},
		{"VastA100PCIEAt40", "vast", "A100 PCIE", 40, "A100-40GB-PCIE"},
		{"VastA100PCIEAt80", "vast", "A100 PCIe", 80, "A100-80GB-PCIE"},
		{"LambdaA100SXMAt40", "lambda", "A100 SXM", 40, "A100-40GB-SXM"},
		{"LambdaA100SXMAt80", "lambda", "A100 SXM", 80, "A100-80GB-SXM"},
		{"LambdaV100At32NoAlias", "lambda", "V100", 32, "V100-32GB"},
		{"ECCUsableMemory", "vast", "A40", 45, "A40"},
		{"GiBOfDecimalGB", "verda", "B300 SXM6", 262, "B300-288GB-SXM"},
		{"StatedAboveCard", "vultr", "NVIDIA_B200", 192, "B200-180GB-SXM"},

		// Variants with their own memory are their own cards; the base card
		// is the one a name without memory means.
		{"RTX4090At48", "vast", "RTX 4090", 48, "RTX-4090-48GB"},
		{"RTX4090At24", "vast", "RTX 4090", 24, "RTX-4090"},
		{"RTX4090WithoutMemory", "matpool", "RTX 4090", 0, "RTX-4090"},
		{"RTX4090At36Neither", "vast", "RTX 4090", 36, ""},
		{"H20At141", "autodl", "H20-NVLink", 141, "H20-141GB"},
		{"H20At96", "autodl", "H20-NVLink", 96, "H20-96GB"},
		{"GenericH20At141", "runpod", "NVIDIA H20", 141, "H20-141GB"},
		{"RTX3080At12", "vast", "RTX 3080", 12, "RTX-3080-12GB"},
		{"RTX3080At10", "runpod", "NVIDIA GeForce RTX 3080", 10, "RTX-3080"},
		{"RTX3060At8NoCard", "vast", "RTX 3060", 8, ""},
		{"QuadroRTX6000At24", "lambda", "NVIDIA Quadro RTX 6000", 24, "QUADRO-RTX-6000"},
		{"RTX6000At48IsAda", "vast", "RTX 6000", 48, "RTX-6000-ADA"},
		{"RTX6000At32Neither", "vast", "RTX 6000", 32, ""},

		// The memory and the form factor a name states must be the card's.
		{"NameMemoryDisagrees", "runpod", "NVIDIA A100 80GB PCIe", 40, ""},
		{"NameMemoryAgrees", "runpod", "NVIDIA A100 80GB PCIe", 80, "A100-80GB-PCIE"},
		{"CanonicalNameMemoryDisagrees", "azure", "A100-80GB-SXM", 40, ""},
		{"FHHLIsPCIe", "runpod", "Tesla V100-FHHL-16GB", 16, "V100-16GB-FHHL"},
		{"VastSXM2FromFields", "vast", "Tesla V100 SXM2", 16, "V100-16GB-SXM2"},
		{"VastSXM2At32", "vast", "Tesla V100 SXM2", 32, "V100-32GB-SXM2"},

		// The real market's cards.
		{"RunPodRTXPRO6000WS", "runpod", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 96, "RTX-PRO-6000-WS"},
		{"CoreWeaveRTXPRO6000Server", "coreweave", "NVIDIA RTX PRO 6000 Blackwell Server Edition", 96, "RTX-PRO-6000-SERVER"},
		{"VastRTX4070STi", "vast", "RTX 4070S Ti", 16, "RTX-4070-TI-SUPER"},
		{"SkyPilotRTX3060Ti", "skypilot", "RTX 3060 Ti", 8, "RTX-3060-TI"},
		{"RunPodRTX2000Ada", "runpod", "NVIDIA RTX 2000 Ada Generation", 16, "RTX-2000-ADA"},
		{"VastQuadroRTX6000ECC", "vast", "Q RTX 6000", 22.5, "QUADRO-RTX-6000"},
		{"VastGTX1060At3", "vast", "GTX 1060", 3, "GTX-1060-3GB"},
		{"GTX1060At6NoCard", "vast", "GTX 1060", 6, ""},
		{"AWST4G", "aws", "NVIDIA T4G", 16, "T4G"},
		{"VultrMI355X", "vultr", "AMD_MI355X", 288, "MI355X-288GB"},

		// Family and memory stated, form factor or edition not: the
		// lower-bound card (TestCatalog_LowerBoundCards), never a guess.
		{"VastTeslaV100At16", "vast", "Tesla V100", 16, "V100-16GB"},
		{"RTXPRO6000WithoutEdition", "verda", "RTX PRO 6000", 96, "RTX-PRO-6000-96GB"},
		{"SkyPilotA100_80GB", "skypilot", "A100-80GB", 80, "A100-80GB"},
		{"A100WithoutVariant", "runpod", "A100", 80, "A100-80GB"},

		// Names that must stay unknown, never guessed.
		{"A100WithoutMemory", "runpod", "A100", 0, ""},
		{"VastRTX3060Laptop", "vast", "RTX 3060 laptop", 12, ""},
		{"Empty", "vast", "", 0, ""},
		{"OnlyVendorWords", "vast", "NVIDIA GeForce", 0, ""},

		// Folding: case, hyphens, underscores, slashes, vendor words.
		{"FoldLowerCase", "azure", "h100 sxm", 80, "H100-80GB-SXM"},
		{"FoldHyphens", "azure", "RTX-4090", 24, "RTX-4090"},
		{"FoldUnderscores", "vast", "RTX_3090", 24, "RTX-3090"},
		{"FoldGeForce", "vast", "NVIDIA GeForce RTX 5090", 32, "RTX-5090"},
		{"FoldTesla", "azure", "Tesla T4", 16, "T4"},
		{"FoldMixed", "runpod", "nvidia-a100_sxm4-80gb", 80, "A100-80GB-SXM"},
		{"FoldExtraSpaces", "runpod", "  H100   PCIe  ", 80, "H100-80GB-PCIE"},
		{"FoldRunPodID", "runpod", "NVIDIA H100 80GB HBM3", 80, "H100-80GB-SXM"},

		// Canonical ids resolve to themselves.
		{"CanonicalForVast", "vast", "A100-40GB-SXM", 0, "A100-40GB-SXM"},
		{"CanonicalForLambda", "lambda", "GH200-144GB", 0, "GH200-144GB"},
		{"CanonicalLowerCase", "azure", "h200-141gb-nvl", 141, "H200-141GB-NVL"},
	})
}

// Real model strings of providers that were unknown (issue 33), each with
// where it was read; every case failed before its alias or card existed.
// The memory is what the source states with the name (0: none).
func TestCatalog_ResolveProviderNames(t *testing.T) {
	checkResolve(t, []resolveCase{
		// DigitalOcean gpu_info.model: dstackai/gpuhunt
		// src/gpuhunt/providers/digitalocean.py @ 35841515 names
		// "nvidia_rtx6000_ada" among the API's model ids; "nvidia_rtx4000_ada"
		// (slug gpu-4000adax1-20gb, 20 GiB) and "nvidia_rtx6000_ada"
		// (gpu-6000adax1-48gb, 48 GiB) as public code reading the live
		// sizes API records them (repository not resolved by our search).
		{"DigitalOceanRTX4000Ada", "digitalocean", "nvidia_rtx4000_ada", 20, "RTX-4000-ADA"},
		{"DigitalOceanRTX6000Ada", "digitalocean", "nvidia_rtx6000_ada", 48, "RTX-6000-ADA"},
		{"DigitalOceanH100NoForm", "digitalocean", "nvidia_h100", 80, "H100-80GB"},
		// Scaleway gpu_info.gpu_name of B300-SXM-2-288G / B300-SXM-8-288G,
		// gpu_memory 309237645312 bytes = 288 GiB (capture of 2026-10-01,
		// fixtures/scaleway/servers-2026-10-01-gpu.json).
		{"ScalewayB300SXM", "scaleway", "B300-SXM", 288, "B300-288GB-SXM"},
		{"ScalewayH100SXM", "scaleway", "H100-SXM", 80, "H100-80GB-SXM"},
		{"ScalewayH100PCIe", "scaleway", "H100-PCIe", 80, "H100-80GB-PCIE"},
		// Hetzner GEX44 "NVIDIA RTX 4000 SFF Ada Generation", 20 GB
		// (www.hetzner.com/dedicated-rootserver/gex44), as the scraper's
		// product table names it; nvidia-smi's name of the card.
		{"HetznerGEX44", "hetzner", "RTX 4000 SFF Ada", 20, "RTX-4000-SFF-ADA"},
		{"NvidiaSMIName", "runpod", "NVIDIA RTX 4000 SFF Ada Generation", 20, "RTX-4000-SFF-ADA"},
		{"PlainNameIsThe130WCard", "hetzner", "RTX 4000 Ada", 20, "RTX-4000-ADA"},
		// OVHcloud blobs.technical.gpu.model in the FR book captured
		// 2026-08-22 (github getcomputable/gpu-index
		// tests/unit/test_observatory_source_ovh.py @ 055204a pins both labels).
		{"OVHTeslaV100S", "ovhcloud", "Tesla V100S", 32, "V100S-32GB-PCIE"},
		{"OVHTeslaV100SNoMemory", "ovhcloud", "Tesla V100S", 0, "V100S-32GB-PCIE"},
		{"OVHQuadroRTX5000", "ovhcloud", "Quadro-RTX5000", 16, "QUADRO-RTX-5000"},
		{"OVHQuadroRTX5000Not32GB", "ovhcloud", "Quadro-RTX5000", 32, ""},
		{"OVHTeslaV100NoForm", "ovhcloud", "Tesla V100", 16, "V100-16GB"},
		// CloudRift brand_short "V100 SXM3" (32 GB; a CloudRift renter's
		// profile of the ustx1a_a01/usny01_a01 listing, and the live listing
		// as a third party read it 2026-10-06: fixtures/cloudrift/PROVENANCE.md);
		// "A100 SXM4" is decided by the variant's vram only.
		{"CloudRiftV100SXM3", "cloudrift", "V100 SXM3", 32, "V100-32GB-SXM3"},
		{"CloudRiftV100SXM3NoMemory", "cloudrift", "V100 SXM3", 0, "V100-32GB-SXM3"},
		{"CloudRiftV100SXM3Not16GB", "cloudrift", "V100 SXM3", 16, ""},
		{"CloudRiftA100SXM4At80", "cloudrift", "A100 SXM4", 80, "A100-80GB-SXM"},
		{"CloudRiftA100SXM4At40", "cloudrift", "A100 SXM4", 40, "A100-40GB-SXM"},
		{"CloudRiftA100SXM4NoMemory", "cloudrift", "A100 SXM4", 0, ""},
		// Azure NVads V710 v5: the scraper names the card by its size table.
		{"AzureV710", "azure", "RADEON-PRO-V710", 0, "RADEON-PRO-V710"},
		{"AMDFullName", "azure", "AMD Radeon Pro V710", 28, "RADEON-PRO-V710"},
	})
}

func TestCatalog_ResolveCanonicalIDs(t *testing.T) {
	sources := []string{"runpod", "vast", "azure", "lambda", "ecb", "*", "", "someday"}
	for _, id := range catalog.IDs() {
		t.Run(id, func(t *testing.T) {
			for _, src := range sources {
				for _, name := range []string{id, strings.ToLower(id), "NVIDIA " + id} {
					if got, ok := catalog.Resolve(src, name, 0); !ok || got != id {
						t.Errorf("Resolve(%q, %q, 0) = %q, %v; want %q", src, name, got, ok, id)
					}
				}
			}
		})
	}
}

// aliasRow is one data row of data/aliases.csv.
type aliasRow struct {
	line     int
	source   string
	name     string
	memoryGB float64
	card     string
}

// readAliases parses data/aliases.csv from the package directory (the
// working directory of the test); the package exposes no accessor for its
// embedded copy, which is built from the same file.
func readAliases(t *testing.T) []aliasRow {
	t.Helper()
	f, err := os.Open("data/aliases.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	header, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(header, ",") != "source,name,memory_gb,card,link" {
		t.Fatalf("aliases.csv header = %q", header)
	}
	var rows []aliasRow
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		line, _ := r.FieldPos(0)
		row := aliasRow{line: line, source: rec[0], name: rec[1], card: rec[3]}
		if rec[2] != "" {
			if row.memoryGB, err = strconv.ParseFloat(rec[2], 64); err != nil {
				t.Fatalf("aliases.csv line %d: %v", line, err)
			}
		}
		rows = append(rows, row)
	}
	if len(rows) < 50 {
		t.Fatalf("read only %d alias rows", len(rows))
	}
	return rows
}

func TestCatalog_ResolveEveryAlias(t *testing.T) {
	for _, a := range readAliases(t) {
		t.Run(strconv.Itoa(a.line), func(t *testing.T) {
			c, ok := catalog.Card(a.card)
			if !ok {
				t.Fatalf("line %d: card %q is not in cards.csv", a.line, a.card)
			}
			src := a.source
			if src == "*" {
				src = "anysource"
			}
			// At its card's memory, and at the memory_gb it names.
			for _, m := range []float64{c.MemoryGB, a.memoryGB} {
				if m == 0 {
					continue
				}
				if got, ok := catalog.Resolve(src, a.name, m); !ok || got != a.card {
					t.Errorf("line %d: Resolve(%q, %q, %v) = %q, %v; want %q",
						a.line, src, a.name, m, got, ok, a.card)
				}
			}
		})
	}
}

// statedMemory is the memory size a GPU name writes ("80GB", "80G",
// "A100-40GB"), 0 if none: parsed here on its own, not with the code under
// test.
var statedMemoryRE = regexp.MustCompile(`(?i)(?:^|[^0-9A-Z.])([0-9]+(?:\.[0-9]+)?)\s?(?:GB|G|GIB)(?:$|[^0-9A-Z])`)

func statedMemory(name string) float64 {
	m := statedMemoryRE.FindStringSubmatch(strings.NewReplacer("_", " ", "-", " ").Replace(name))
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// Every alias at every card's memory: a name resolves only to a card whose
// memory agrees with the memory stated (within 10%, the tolerance of
// MemoryTolerance) and with the memory the name itself states, and only to
// a card the name is an alias of; and no alias row maps a name that states
// a memory its card does not have.
func TestCatalog_AliasMemoryGuard(t *testing.T) {
	if normalize.MemoryTolerance != 0.10 {
		t.Fatalf("MemoryTolerance = %v; this table is written for 0.10", normalize.MemoryTolerance)
	}
	agrees := func(card, stated float64) bool { return stated <= 0 || math.Abs(stated-card) <= 0.10*card }
	rows := readAliases(t)
	// The cards each (source, folded name) may name: its alias rows, and
	// the card whose canonical id folds to the name.
	named := map[[2]string][]string{}
	for _, a := range rows {
		k := [2]string{a.source, normalize.Fold(a.name)}
		named[k] = append(named[k], a.card)
	}
	for _, id := range catalog.IDs() {
		rows = append(rows, aliasRow{source: "*", name: id, card: id})
		k := [2]string{"*", normalize.Fold(id)}
		named[k] = append(named[k], id)
	}
	ids := catalog.IDs()
	for _, a := range rows {
		card, _ := catalog.Card(a.card)
		if m := statedMemory(a.name); m > 0 && !agrees(card.MemoryGB, m) {
			t.Errorf("alias %s,%q states %g GB but maps to %s (%g GB)", a.source, a.name, m, a.card, card.MemoryGB)
		}
		if a.memoryGB > 0 && !agrees(card.MemoryGB, a.memoryGB) {
			t.Errorf("alias %s,%q memory_gb %g disagrees with %s (%g GB)", a.source, a.name, a.memoryGB, a.card, card.MemoryGB)
		}
		src := a.source
		if src == "*" {
			src = "anysource"
		}
		for _, other := range ids {
			oc, _ := catalog.Card(other)
			for _, mem := range []float64{oc.MemoryGB, oc.MemoryGB * 0.93, oc.MemoryGB * 1.07} {
				got, ok := catalog.Resolve(src, a.name, mem)
				if !ok {
					continue
				}
				gc, _ := catalog.Card(got)
				if !agrees(gc.MemoryGB, mem) {
					t.Errorf("Resolve(%q, %q, %g) = %s with %g GB: memory disagrees", src, a.name, mem, got, gc.MemoryGB)
				}
				if m := statedMemory(a.name); m > 0 && !agrees(gc.MemoryGB, m) {
					t.Errorf("Resolve(%q, %q, %g) = %s with %g GB: the name states %g GB", src, a.name, mem, got, gc.MemoryGB, m)
				}
				k := [2]string{a.source, normalize.Fold(a.name)}
				if !slices.Contains(named[k], got) && !slices.Contains(named[[2]string{"*", k[1]}], got) {
					t.Errorf("Resolve(%q, %q, %g) = %s, not a card the name is an alias of (%v)", src, a.name, mem, got, named[k])
				}
			}
		}
	}
}

func TestDefaultCatalog_Cards(t *testing.T) {
	ids := catalog.IDs()
	if len(ids) != 123 {
		t.Fatalf("DefaultCatalog has %d cards, want the 123 of cards.csv", len(ids))
	}
	for i := 1; i < len(ids); i++ {
		if ids[i-1] >= ids[i] {
			t.Errorf("IDs not sorted and unique: %q before %q", ids[i-1], ids[i])
		}
	}
	tests := []struct {
		name, id, link        string
		memoryGB, trainTFLOPS float64
	}{
		{"T4UsesFP16", "T4", "pcie3-p2p", 16, 65},
		{"V100UsesFP16", "V100-16GB-SXM2", "nvlink2-cube", 16, 125},
		{"H100SXM", "H100-80GB-SXM", "nvlink4-switch", 80, 989},
		{"MI300XIsOAM", "MI300X-192GB", "ifabric-cdna3", 192, 1307.4},
		{"H100NVLIsBridgedPairs", "H100-94GB-NVL", "nvlink4-bridge-pair", 94, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := catalog.Card(tt.id)
			if !ok {
				t.Fatalf("Card(%q) missing", tt.id)
			}
			if c.ID != tt.id || c.MemoryGB != tt.memoryGB {
				t.Errorf("Card(%q) = id %q, %v GB; want %v GB", tt.id, c.ID, c.MemoryGB, tt.memoryGB)
			}
			if tt.trainTFLOPS > 0 && c.TrainPeakTFLOPS() != tt.trainTFLOPS {
				t.Errorf("TrainPeakTFLOPS = %v, want %v", c.TrainPeakTFLOPS(), tt.trainTFLOPS)
			}
			if c.Link.Name != tt.link {
				t.Errorf("link = %q, want %q", c.Link.Name, tt.link)
			}
		})
	}
	if _, ok := catalog.Card("t4"); ok {
		t.Error("Card is case-sensitive on canonical ids, but Card(\"t4\") was found")
	}
	for _, id := range ids {
		c, _ := catalog.Card(id)
		if c.MemoryGB <= 0 || c.TrainPeakTFLOPS() <= 0 && c.FP32TFLOPS <= 0 || c.BandwidthGBs <= 0 {
			t.Errorf("card %s: memory %v, train TFLOPS %v, FP32 %v, bandwidth %v; want memory, bandwidth and a rate",
				id, c.MemoryGB, c.TrainPeakTFLOPS(), c.FP32TFLOPS, c.BandwidthGBs)
		}
		if c.HasBF16() != (c.BF16TFLOPS > 0) {
			t.Errorf("card %s: HasBF16 %v with a BF16 rate of %v", id, c.HasBF16(), c.BF16TFLOPS)
		}
		if c.TrainPeakTFLOPS() <= 0 && !c.FP16Slow {
			t.Errorf("card %s: no 16-bit rate but fp16_slow is not set", id)
		}
	}
}

// The bf16 and fp16_slow columns: cards without BF16 train in FP16, and
// GeForce and tensor-less cards say their FP16 path is slow.
func TestDefaultCatalog_Precision(t *testing.T) {
	tests := []struct {
		id             string
		bf16, fp16Slow bool
		train          float64 // TrainPeakTFLOPS
	}{
		{"T4", false, false, 65},
		{"V100-16GB-SXM2", false, false, 125},
		{"A100-80GB-SXM", true, false, 312},
		{"RTX-4090", true, true, 165.2},
		{"RTX-3080-TI", true, true, 68.2},
		// GeForce Turing: 107.6 is the FP16-accumulate rate; training
		// accumulates in FP32 at half of it.
		{"RTX-2080-TI", false, true, 107.6 / 2},
		{"QUADRO-RTX-6000", false, false, 130.5},
		// No tensor cores: FP16 at twice FP32, training at the FP32 rate.
		{"GTX-1660-TI", false, true, 10.87 / 2},
		{"P100-16GB-PCIE", false, true, 18.7 / 2},
		{"GTX-1080-TI", false, true, 0},
		{"RTX-A5000", true, false, 111.1},
		{"RTX-PRO-6000-WS", true, false, 500},
		{"RADEON-PRO-V520", false, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			c, ok := catalog.Card(tt.id)
			if !ok {
				t.Fatalf("no card %s", tt.id)
			}
			if c.HasBF16() != tt.bf16 || c.FP16Slow != tt.fp16Slow || c.TrainPeakTFLOPS() != tt.train {
				t.Errorf("%s: bf16 %v, fp16 slow %v, train %v; want %v, %v, %v",
					tt.id, c.HasBF16(), c.FP16Slow, c.TrainPeakTFLOPS(), tt.bf16, tt.fp16Slow, tt.train)
			}
		})
	}
}

const testCards = `card_id,canonical_id,vendor,model,memory_gb,bf16_dense_tflops,fp16_dense_tflops,form_factor
x-a,CARD-A,NVIDIA,A,40,100,100,SXM4
x-b,CARD-B,NVIDIA,B,80,,200,PCIe
`

func TestLoadCatalog(t *testing.T) {
	tests := []struct {
		name    string
		cards   string
		aliases string
		wantErr []string // substrings of the error; nil: no error
	}{
		{
			name:    "Valid",
			cards:   testCards,
			aliases: "source,name,memory_gb,card\n# comment\n*,Alpha,,CARD-A\nvast,Beta,80,CARD-B\n",
		},
		{
			name:    "UnknownCardInAlias",
			cards:   testCards,
			aliases: "source,name,memory_gb,card\n*,Alpha,,CARD-A\n*,Gamma,,CARD-C\n",
			wantErr: []string{"aliases row 3", "CARD-C"},
		},
		{
			name:    "BadAliasMemory",
			cards:   testCards,
			aliases: "source,name,memory_gb,card\n*,Alpha,forty,CARD-A\n",
			wantErr: []string{"aliases row 2", "memory_gb"},
		},
		{
			name:    "DuplicateID",
			cards:   testCards + "x-c,CARD-A,NVIDIA,A2,48,100,100,PCIe\n",
			aliases: "source,name,memory_gb,card\n",
			wantErr: []string{"cards row 4", "duplicate", "CARD-A"},
		},
		{
			name:    "BadNumber",
			cards:   testCards + "x-c,CARD-C,NVIDIA,C,4O,100,100,PCIe\n",
			aliases: "source,name,memory_gb,card\n",
			wantErr: []string{"cards row 4", "memory_gb"},
		},
		{
			name:    "BadTFLOPS",
			cards:   "card_id,canonical_id,memory_gb,bf16_dense_tflops\nx,CARD-X,16,fast\n",
			aliases: "source,name,memory_gb,card\n",
			wantErr: []string{"cards row 2", "bf16_dense_tflops"},
		},
		{
			name:    "MissingTensorRate",
			cards:   "card_id,canonical_id,memory_gb,bf16_dense_tflops\nx,CARD-X,16,\n",
			aliases: "source,name,memory_gb,card\n",
			wantErr: []string{"cards row 2", "CARD-X"},
		},
		{
			name:    "AliasNameStatesOtherMemory",
			cards:   testCards,
			aliases: "source,name,memory_gb,card\n*,Alpha 80GB,,CARD-A\n",
			wantErr: []string{"aliases row 2", "80 GB", "CARD-A"},
		},
		{
			name:    "AliasNameStatesOtherForm",
			cards:   testCards,
			aliases: "source,name,memory_gb,card\n*,Alpha PCIe,,CARD-A\n",
			wantErr: []string{"aliases row 2", "PCIE", "CARD-A"},
		},
		{
			name:    "AliasMemoryNotTheCards",
			cards:   testCards,
			aliases: "source,name,memory_gb,card\n*,Alpha,80,CARD-A\n",
			wantErr: []string{"aliases row 2", "memory_gb 80", "CARD-A"},
		},
		{
			name:    "BF16ColumnDisagreesWithRate",
			cards:   "card_id,canonical_id,memory_gb,bf16_dense_tflops,fp16_dense_tflops,bf16\nx,CARD-X,16,,65,yes\n",
			aliases: "source,name,memory_gb,card\n",
			wantErr: []string{"cards row 2", "CARD-X", "bf16"},
		},
		{
			name:    "BadFP16Slow",
			cards:   "card_id,canonical_id,memory_gb,fp16_dense_tflops,fp16_slow\nx,CARD-X,16,65,maybe\n",
			aliases: "source,name,memory_gb,card\n",
			wantErr: []string{"cards row 2", "fp16_slow"},
		},
		{
			name:    "IDContradictsCard",
			cards:   "card_id,canonical_id,memory_gb,fp16_dense_tflops,form_factor\nx,CARD-80GB,16,65,PCIe\n",
			aliases: "source,name,memory_gb,card\n",
			wantErr: []string{"cards row 2", "CARD-80GB", "80 GB"},
		},
		{
			name:    "EmptyID",
			cards:   "card_id,canonical_id,memory_gb,bf16_dense_tflops\nx,,16,10\n",
			aliases: "source,name,memory_gb,card\n",
			wantErr: []string{"cards row 2", "canonical_id"},
		},
		{
			name:    "EmptyCards",
			cards:   "",
			aliases: "source,name,memory_gb,card\n",
			wantErr: []string{"cards"},
		},
		{
			name:    "AliasLinkNotHTTPS",
			cards:   testCards,
			aliases: "source,name,memory_gb,card,link\n*,Alpha,,CARD-A,www.example.com/page\n",
			wantErr: []string{"aliases row 2", "link"},
		},
		{
			name:    "MalformedAliasesCSV",
			cards:   testCards,
			aliases: "source,name,memory_gb,card\n*,\"Alpha,,CARD-A\n",
			wantErr: []string{"aliases"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := normalize.LoadCatalog(strings.NewReader(tt.cards), strings.NewReader(tt.aliases))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("LoadCatalog: %v", err)
				}
				if got := c.IDs(); strings.Join(got, ",") != "CARD-A,CARD-B" {
					t.Errorf("IDs = %q", got)
				}
				if got, ok := c.Resolve("runpod", "alpha", 0); !ok || got != "CARD-A" {
					t.Errorf("Resolve(alpha) = %q, %v", got, ok)
				}
				if got, ok := c.Resolve("vast", "beta", 79); !ok || got != "CARD-B" {
					t.Errorf("Resolve(vast, beta, 79) = %q, %v", got, ok)
				}
				if got, ok := c.Resolve("runpod", "beta", 80); ok {
					t.Errorf("Resolve(runpod, beta) = %q, want unknown (vast-only alias)", got)
				}
				return
			}
			if err == nil {
				t.Fatalf("LoadCatalog succeeded, want an error containing %q", tt.wantErr)
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

func TestFold(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"Upper", "a100 sxm4", "A100 SXM4"},
		{"Separators", "a100-sxm4_80gb/pcie,x", "A100 SXM4 80GB PCIE X"},
		{"VendorWords", "NVIDIA GeForce RTX 4090", "RTX 4090"},
		{"TeslaAMDQuadro", "Tesla T4 amd Quadro", "T4"},
		{"VendorWordInsideNameKept", "NVIDIAX", "NVIDIAX"},
		{"Spaces", "  H100\t PCIe ", "H100 PCIE"},
		{"Empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := normalize.Fold(tt.in); got != tt.want {
				t.Errorf("Fold(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzCatalog_Resolve(f *testing.F) {
	for _, s := range []struct {
		source, name string
		mem          float64
	}{
		{"vast", "A100 SXM4", 80}, {"vast", "A100 SXM4", 0}, {"lambda", "GH200", 0},
		{"runpod", "NVIDIA H100 80GB HBM3", 80}, {"azure", "nvidia-a100_sxm4-80gb", -1},
		{"", "", 0}, {"*", "NVIDIA", 0}, {"vast", "Tesla V100", 16}, {"x", "h200-141gb-nvl", 1e308},
	} {
		f.Add(s.source, s.name, s.mem)
	}
	f.Fuzz(func(t *testing.T, source, name string, mem float64) {
		folded := normalize.Fold(name)
		if again := normalize.Fold(folded); again != folded {
			t.Errorf("Fold not idempotent: Fold(%q) = %q, Fold of that = %q", name, folded, again)
		}
		card, ok := catalog.Resolve(source, name, mem)
		if ok != (card != "") {
			t.Errorf("Resolve(%q, %q, %v) = %q, %v", source, name, mem, card, ok)
		}
		if ok {
			if _, known := catalog.Card(card); !known {
				t.Errorf("Resolve(%q, %q, %v) = %q, not a catalog card", source, name, mem, card)
			}
			// Resolution depends on the folded name only.
			if c2, ok2 := catalog.Resolve(source, folded, mem); c2 != card || !ok2 {
				t.Errorf("Resolve of folded %q = %q, %v; of %q = %q", folded, c2, ok2, name, card)
			}
		}
	})
}

// A card with only an FP32 rate (consumer Pascal) loads, has no 16-bit
// training rate and resolves like any other.
func TestLoadCatalog_FP32OnlyCard(t *testing.T) {
	cards := "card_id,canonical_id,memory_gb,fp32_tflops,bf16,fp16_slow\nx,GTX-X,8,8.9,no,yes\n"
	c, err := normalize.LoadCatalog(strings.NewReader(cards), strings.NewReader("source,name,memory_gb,card\n"))
	if err != nil {
		t.Fatal(err)
	}
	card, _ := c.Card("GTX-X")
	if card.TrainPeakTFLOPS() != 0 || card.FP32TFLOPS != 8.9 || card.HasBF16() || !card.FP16Slow {
		t.Errorf("card = %+v", card)
	}
	if got, ok := c.Resolve("vast", "GTX X", 8); !ok || got != "GTX-X" {
		t.Errorf("Resolve = %q, %v", got, ok)
	}
}

// Every card names a link of links.csv, every link states its source, and
// a group larger than a link's domain crosses the link beyond it.
func TestCatalog_Links(t *testing.T) {
	cat := normalize.DefaultCatalog()
	for _, id := range cat.IDs() {
		c, _ := cat.Card(id)
		if c.Link.Name == "" || c.Link.GBsPerDirection <= 0 || c.Link.DomainGPUs < 1 {
			t.Errorf("%s: link %+v", id, c.Link)
		}
	}
	for name, l := range normalize.Links() {
		if l.SourceURL == "" || !strings.HasPrefix(l.SourceURL, "https://") {
			t.Errorf("link %s: source %q", name, l.SourceURL)
		}
	}
	for _, tc := range []struct {
		card string
		g    int
		want string
	}{
		{"H100-80GB-SXM", 8, "nvlink4-switch"}, {"H100-80GB-SXM", 16, "network-ib400"},
		{"H100-94GB-NVL", 2, "nvlink4-bridge-pair"}, {"H100-94GB-NVL", 4, "pcie5-p2p"},
		{"RTX-4090", 4, "pcie4-host"}, {"L40S", 8, "pcie4-p2p"}, {"MI300X-192GB", 8, "ifabric-cdna3"},
		{"B200-186GB-GB200", 64, "nvlink5-nvl72"},
	} {
		c, _ := cat.Card(tc.card)
		if l, ok := c.LinkFor(tc.g); !ok || l.Name != tc.want {
			t.Errorf("%s × %d: link %q (%v), want %s", tc.card, tc.g, l.Name, ok, tc.want)
		}
	}
	// H100 SXM: the datasheet's 900 GB/s NVLink is 450 each way; PCIe 4.0
	// x16 is 16 GT/s × 16 lanes × 128/130 / 8 = 31.5 GB/s each way.
	if h, _ := cat.Card("H100-80GB-SXM"); h.Link.GBsPerDirection != 450 || !h.Link.P2P {
		t.Errorf("H100 link %+v", h.Link)
	}
	if g, _ := cat.Card("RTX-4090"); g.Link.GBsPerDirection != 31.5 || g.Link.P2P {
		t.Errorf("RTX 4090 link %+v: want PCIe 4.0 without peer-to-peer", g.Link)
	}
}
