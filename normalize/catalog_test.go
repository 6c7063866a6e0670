package normalize_test

import (
	"encoding/csv"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/normalize"
)

// catalog is shared by the tests: DefaultCatalog is read-only after loading.
var catalog = normalize.DefaultCatalog()

func TestCatalog_Resolve(t *testing.T) {
	tests := []struct {
		name     string
		source   string
		gpu      string
		memoryGB float64
		want     string // "" means unknown
	}{
		// Generic ("*") aliases, for any source.
		{"GenericT4", "azure", "T4", 16, "T4"},
		{"GenericA6000", "lambda", "A6000", 0, "RTX-A6000"},
		{"GenericRTX4090D", "vast", "RTX 4090 D", 24, "RTX-4090D"},
		{"GenericH100NVL", "azure", "H100 NVL", 94, "H100-94GB-NVL"},
		{"GenericMI300XOAM", "azure", "AMD Instinct MI300X OAM", 192, "MI300X-192GB"},
		{"GenericNoSource", "", "L40S", 0, "L40S"},

		// A source-specific row wins over "*": lambda's "GH200" has no
		// memory, the generic one needs it to tell 96 from 144 GB.
		{"LambdaGH200WithoutMemory", "lambda", "GH200", 0, "GH200-96GB"},
		{"GenericGH200WithoutMemoryAmbiguous", "runpod", "GH200", 0, ""},
		{"GenericGH200At96", "runpod", "GH200", 96, "GH200-96GB"},
		{"GenericGH200At144", "vast", "GH200", 144, "GH200-144GB"},
		// Names only a source knows stay unknown elsewhere.
		{"VastRTX6000ADA", "vast", "RTX 6000ADA", 48, "RTX-6000-ADA"},
		{"RTX6000ADAOnlyForVast", "runpod", "RTX 6000ADA", 48, ""},
		{"LambdaB200SXM6", "lambda", "NVIDIA B200 SXM6", 180, "B200-180GB-SXM"},
		{"B200SXM6OnlyForLambda", "azure", "B200 SXM6", 180, ""},
		{"LambdaV100At16", "lambda", "Tesla V100", 16, "V100-16GB-SXM2"},

		// Memory disambiguation (within 15% of the alias's memory).
		{"VastA100SXM4At40", "vast", "A100 SXM4", 40, "A100-40GB-SXM"},
		{"VastA100SXM4At80", "vast", "A100 SXM4", 80, "A100-80GB-SXM"},
		{"VastA100SXM4At79_6", "vast", "A100 SXM4", 79.6, "A100-80GB-SXM"},
		{"VastA100SXM4At0Ambiguous", "vast", "A100 SXM4", 0, ""},
		{"VastA100SXM4At60Neither", "vast", "A100 SXM4", 60, ""},
		{"VastA100PCIEAt40", "vast", "A100 PCIE", 40, "A100-40GB-PCIE"},
		{"VastA100PCIEAt80", "vast", "A100 PCIe", 80, "A100-80GB-PCIE"},
		{"LambdaA100SXMAt40", "lambda", "A100 SXM", 40, "A100-40GB-SXM"},
		{"LambdaA100SXMAt80", "lambda", "A100 SXM", 80, "A100-80GB-SXM"},
		{"LambdaV100At32NoAlias", "lambda", "V100", 32, ""},

		// Names that must stay unknown, never guessed.
		{"VastTeslaV100At16", "vast", "Tesla V100", 16, ""},
		{"RTXA5000", "vast", "RTX A5000", 24, ""},
		{"A30", "azure", "A30", 24, ""},
		{"LambdaQuadroRTX6000", "lambda", "NVIDIA Quadro RTX 6000", 24, ""},
		{"A100WithoutVariant", "runpod", "A100", 80, ""},
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
	}
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
	if strings.Join(header, ",") != "source,name,memory_gb,card" {
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
			if _, ok := catalog.Card(a.card); !ok {
				t.Fatalf("line %d: card %q is not in cards.csv", a.line, a.card)
			}
			src := a.source
			if src == "*" {
				src = "anysource"
			}
			mem := a.memoryGB
			if mem == 0 {
				// An alias without memory matches whatever the source states.
				if c, _ := catalog.Card(a.card); c.MemoryGB > 0 {
					mem = c.MemoryGB
				}
			}
			for _, m := range []float64{mem, a.memoryGB} {
				if got, ok := catalog.Resolve(src, a.name, m); !ok || got != a.card {
					t.Errorf("line %d: Resolve(%q, %q, %v) = %q, %v; want %q",
						a.line, src, a.name, m, got, ok, a.card)
				}
			}
		})
	}
}

func TestDefaultCatalog_Cards(t *testing.T) {
	ids := catalog.IDs()
	if len(ids) != 43 {
		t.Fatalf("DefaultCatalog has %d cards, want the 43 of cards.csv", len(ids))
	}
	for i := 1; i < len(ids); i++ {
		if ids[i-1] >= ids[i] {
			t.Errorf("IDs not sorted and unique: %q before %q", ids[i-1], ids[i])
		}
	}
	tests := []struct {
		name, id, formFactorClass string
		memoryGB, trainTFLOPS     float64
	}{
		{"T4UsesFP16", "T4", "pcie", 16, 65},
		{"V100UsesFP16", "V100-16GB-SXM2", "sxm", 16, 125},
		{"H100SXM", "H100-80GB-SXM", "sxm", 80, 989},
		{"MI300XIsOAM", "MI300X-192GB", "sxm", 192, 1307.4},
		{"H100NVLIsPCIe", "H100-94GB-NVL", "pcie", 94, 0},
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
			if got := c.InterconnectClass(); got != tt.formFactorClass {
				t.Errorf("InterconnectClass = %q, want %q", got, tt.formFactorClass)
			}
		})
	}
	if _, ok := catalog.Card("t4"); ok {
		t.Error("Card is case-sensitive on canonical ids, but Card(\"t4\") was found")
	}
	for _, id := range ids {
		c, _ := catalog.Card(id)
		if c.MemoryGB <= 0 || c.TrainPeakTFLOPS() <= 0 || c.BandwidthGBs <= 0 {
			t.Errorf("card %s: memory %v, train TFLOPS %v, bandwidth %v; want all positive",
				id, c.MemoryGB, c.TrainPeakTFLOPS(), c.BandwidthGBs)
		}
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
