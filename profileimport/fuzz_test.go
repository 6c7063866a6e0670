package profileimport_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/profileimport"
	"github.com/pricewatch/pricewatch/rank"
)

// FuzzImport feeds arbitrary bytes and options to Import, seeded from the
// fixtures. Import must not panic, and must either fail with a classified
// error or return a usable figure.
func FuzzImport(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, ".md") {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "", "", 0, 0, 0)
		f.Add(b, "", "", 2048, 4, -1)
	}
	f.Add([]byte("{'train_runtime': 1.0, 'train_tokens_per_second': tensor(5.0, device='cuda:0')}"), profileimport.FormatHFTrainer, "", 0, 0, 0)
	f.Add([]byte("Step 1 | tokens_per_second_per_gpu:1e308 \nStep 1 | tokens_per_second_per_gpu:nan \n"), "", "", 0, 0, -1)
	f.Add([]byte(`{"output_throughput": NaN, "tensor_parallel_size": "0"}`), "", profileimport.Fields(profileimport.FormatVLLMServing)[1], 0, 0, 0)

	f.Fuzz(func(t *testing.T, data []byte, format, field string, seqLen, gpus, warmup int) {
		opt := profileimport.Options{Format: format, Name: "fuzz.log", SeqLen: seqLen, GPUs: gpus, Field: field, WarmupSteps: warmup}
		got, err := profileimport.Import(data, opt)
		if err != nil {
			var oe *profileimport.OptionError
			classified := errors.As(err, &oe)
			for _, s := range []error{profileimport.ErrUnknownFormat, profileimport.ErrTooLarge, profileimport.ErrEmpty,
				profileimport.ErrMalformed, profileimport.ErrNoFigure, profileimport.ErrBadFigure} {
				classified = classified || errors.Is(err, s)
			}
			if !classified {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		v := got.TokensPerSecondPerGPU
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			t.Fatalf("figure %v accepted", v)
		}
		if !slices.Contains(profileimport.Formats(), got.Format) {
			t.Fatalf("format %q unknown", got.Format)
		}
		if !slices.Contains(profileimport.Fields(got.Format), got.Field) {
			t.Fatalf("field %q not a field of %s", got.Field, got.Format)
		}
		if !strings.HasPrefix(got.Note, "fuzz.log: ") {
			t.Fatalf("note does not name the input: %q", got.Note)
		}
		// Every result has a kind, and matches exactly the workloads of it.
		for _, w := range rank.BuiltinWorkloads() {
			warnings, err := profileimport.Match(got, w)
			if (err == nil) != (profileimport.WorkloadKind(w) == got.Kind) || (err != nil && len(warnings) > 0) {
				t.Fatalf("%s (%s) for %s: %v, %q", got.Format, got.Kind, w.Name, err, warnings)
			}
		}
	})
}
