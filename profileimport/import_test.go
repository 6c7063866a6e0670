package profileimport_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/profileimport"
)

func mustRead(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// fixtureCase imports one fixture and checks the figure, format, field and
// the pieces the note must say.
type fixtureCase struct {
	name   string
	file   string
	opt    profileimport.Options
	want   float64
	format string
	field  string
	note   []string
}

func runFixtureCases(t *testing.T, cases []fixtureCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opt := tc.opt
			opt.Name = tc.file
			got, err := profileimport.Import(mustRead(t, tc.file), opt)
			if err != nil {
				t.Fatalf("Import: %v", err)
			}
			if !near(got.TokensPerSecondPerGPU, tc.want) {
				t.Errorf("TokensPerSecondPerGPU = %v, want %v", got.TokensPerSecondPerGPU, tc.want)
			}
			if got.Format != tc.format || got.Field != tc.field {
				t.Errorf("Format, Field = %q, %q, want %q, %q", got.Format, got.Field, tc.format, tc.field)
			}
			if !strings.HasPrefix(got.Note, tc.file+": ") {
				t.Errorf("note does not start with the file name: %q", got.Note)
			}
			for _, s := range append([]string{tc.field}, tc.note...) {
				if !strings.Contains(got.Note, s) {
					t.Errorf("note lacks %q: %s", s, got.Note)
				}
			}
		})
	}
}

func TestImport_HFTrainer(t *testing.T) {
	runFixtureCases(t, []fixtureCase{
		{
			// train_tokens_per_second = 4 × 1024 × 60 steps × 4 accumulation
			// / 600 s = 983040 / 600 = 1638.4, per device: used as is.
			name: "StateTokensPerDevice", file: "hf_trainer_state.json",
			want: 1638.4, format: profileimport.FormatHFTrainer, field: "train_tokens_per_second",
			note: []string{"log_history entry 5 of 5 (step 60)", "= 1638.4", "per device", "used as is", "1638.40 tokens/s per GPU"},
		},
		{
			// The gpus option does not divide a per-device figure.
			name: "StateTokensIgnoresGPUs", file: "hf_trainer_state.json", opt: profileimport.Options{GPUs: 2},
			want: 1638.4, format: profileimport.FormatHFTrainer, field: "train_tokens_per_second",
			note: []string{"not applied"},
		},
		{
			// Asking for the samples: 3.2 samples/s over both GPUs × 1024
			// tokens ÷ 2 GPUs = 1638.4, the same as the tokens figure.
			name: "StateSamplesAsked", file: "hf_trainer_state.json",
			opt:  profileimport.Options{Field: "train_samples_per_second", SeqLen: 1024, GPUs: 2},
			want: 1638.4, format: profileimport.FormatHFTrainer, field: "train_samples_per_second",
			note: []string{"= 3.2", "all processes", "× seq-len 1024 tokens ÷ 2 GPUs (the gpus option)"},
		},
		{
			// No tokens figure: 5.0 samples/s × 2048 tokens ÷ 4 GPUs = 2560.
			name: "StateSamplesWithGPUs", file: "hf_trainer_state_samples.json",
			opt:  profileimport.Options{SeqLen: 2048, GPUs: 4},
			want: 2560, format: profileimport.FormatHFTrainer, field: "train_samples_per_second",
			note: []string{"log_history entry 3 of 3 (step 100)", "÷ 4 GPUs (the gpus option)", "2560.00 tokens/s per GPU"},
		},
		{
			// Without the gpus option one GPU is assumed and the note says
			// so: 5.0 × 2048 ÷ 1 = 10240.
			name: "StateSamplesAssumedOneGPU", file: "hf_trainer_state_samples.json",
			opt:  profileimport.Options{SeqLen: 2048},
			want: 10240, format: profileimport.FormatHFTrainer, field: "train_samples_per_second",
			note: []string{"÷ 1 GPU (assumed: no gpus option given)"},
		},
		{
			// train_results.json: 12.8 samples/s × 256 tokens ÷ 1 GPU = 3276.8.
			name: "TrainResultsJSON", file: "hf_train_results.json",
			opt:  profileimport.Options{SeqLen: 256, GPUs: 1},
			want: 3276.8, format: profileimport.FormatHFTrainer, field: "train_samples_per_second",
			note: []string{"train_results.json", "÷ 1 GPU (the gpus option)"},
		},
		{
			// The console's last summary is the log_metrics block (after the
			// printed dict): train_tokens_per_second = 8 × 256 × 125 × 4 /
			// 312.5 = 1024000 / 312.5 = 3276.8.
			name: "ConsoleBlock", file: "hf_train_console.log",
			want: 3276.8, format: profileimport.FormatHFTrainer, field: "train_tokens_per_second",
			note: []string{"***** train metrics ***** block", "= 3276.8"},
		},
	})
}

func TestImport_HFTrainerText(t *testing.T) {
	dict := "{'train_runtime': 100.0, 'train_samples_per_second': 4.0, 'train_steps_per_second': 0.5, 'train_loss': 1.2, 'epoch': 1.0}\n"
	tests := []struct {
		name string
		data string
		opt  profileimport.Options
		want float64
		note string
	}{
		// The dict Trainer prints, without a tokens figure: 4.0 samples/s ×
		// 512 ÷ 2 GPUs = 1024.
		{"PrintedDict", "100%|██████████| 50/50 [01:40<00:00]\n" + dict, profileimport.Options{SeqLen: 512, GPUs: 2}, 1024, "dict printed at the end"},
		// A tensor or numpy wrapper around a value: 2500.5 as is.
		{"PrintedDictWrapped", "{'train_runtime': 10.0, 'train_tokens_per_second': np.float64(2500.5), 'epoch': 1.0}\n", profileimport.Options{}, 2500.5, "= 2500.5"},
		// log_metrics through a logger prefix (older transformers): 777.25.
		{"BlockWithLoggerPrefix", "05/01/2024 10:00:00 - INFO - __main__ - ***** train metrics *****\n" +
			"05/01/2024 10:00:00 - INFO - __main__ -   epoch                   =        1.0\n" +
			"05/01/2024 10:00:00 - INFO - __main__ -   train_runtime           = 0:01:40.00\n" +
			"05/01/2024 10:00:00 - INFO - __main__ -   train_tokens_per_second =     777.25\n" +
			"05/01/2024 10:00:01 - INFO - __main__ - *** Evaluate ***\n", profileimport.Options{}, 777.25, "block"},
		// The dict printed after an earlier block wins: it is the later summary.
		{"LaterSummaryWins", "***** train metrics *****\n  train_tokens_per_second = 10.0\n\n" +
			"{'train_runtime': 1.0, 'train_tokens_per_second': 20.0}\n", profileimport.Options{}, 20, "dict"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := profileimport.Import([]byte(tc.data), tc.opt)
			if err != nil {
				t.Fatalf("Import: %v", err)
			}
			if !near(got.TokensPerSecondPerGPU, tc.want) || got.Format != profileimport.FormatHFTrainer {
				t.Errorf("got %v (%s), want %v (hf-trainer)", got.TokensPerSecondPerGPU, got.Format, tc.want)
			}
			if !strings.Contains(got.Note, tc.note) {
				t.Errorf("note lacks %q: %s", tc.note, got.Note)
			}
		})
	}
}

func TestImport_Torchtune(t *testing.T) {
	runFixtureCases(t, []fixtureCase{
		{
			// Warm-up 3: steps 4–10 = 1210.5 1198.25 1225.0 1187.75 1240.5
			// 1201.0 1219.0; sorted 1187.75 1198.25 1201.0 [1210.5] 1219.0
			// 1225.0 1240.5: median 1210.5.
			name: "TxtDefaultWarmup", file: "torchtune_log_1714000000.txt",
			want: 1210.5, format: profileimport.FormatTorchtune, field: "tokens_per_second_per_gpu",
			note: []string{"(txt)", "over 7 logged steps of 10", "steps 4–10", "the first 3 logged steps left out as warm-up", "1210.50 tokens/s per GPU", "no gpus conversion"},
		},
		{
			// Warm-up 1: steps 2–10, nine values; sorted 405.0 655.9
			// 1187.75 1198.25 [1201.0] 1210.5 1219.0 1225.0 1240.5: 1201.0.
			name: "TxtWarmupOne", file: "torchtune_log_1714000000.txt", opt: profileimport.Options{WarmupSteps: 1},
			want: 1201.0, format: profileimport.FormatTorchtune, field: "tokens_per_second_per_gpu",
			note: []string{"over 9 logged steps of 10"},
		},
		{
			// No warm-up: all ten; the middle two sorted are 1198.25 and
			// 1201.0: (1198.25 + 1201.0) / 2 = 1199.625.
			name: "TxtNoWarmup", file: "torchtune_log_1714000000.txt", opt: profileimport.Options{WarmupSteps: -1},
			want: 1199.625, format: profileimport.FormatTorchtune, field: "tokens_per_second_per_gpu",
			note: []string{"over 10 logged steps of 10", "the first 0 logged steps left out"},
		},
		{
			// Two runs (steps fall from 6 to 5: a resumed job appended); the
			// first 3 of each are warm-up. Kept: run 1 steps 4–6 = 3020.5
			// 2990.0 3005.0, run 2 steps 8–9 = 3000.0 3015.5; sorted 2990.0
			// 3000.0 [3005.0] 3015.5 3020.5: median 3005.0. The val_loss line
			// has no figure and is skipped. The gpus option changes nothing.
			name: "JSONLResumedRun", file: "torchtune_log_1714003600.jsonl", opt: profileimport.Options{GPUs: 8},
			want: 3005.0, format: profileimport.FormatTorchtune, field: "tokens_per_second_per_gpu",
			note: []string{"(jsonl)", "over 5 logged steps of 11", "first 3 logged steps of each run", "the log holds 2 runs", "3005.00 tokens/s per GPU"},
		},
		{
			// No warm-up: 11 values sorted 120.5 140.0 2800.0 2950.0 2985.0
			// [2990.0] 3000.0 3005.0 3010.0 3015.5 3020.5: 2990.0.
			name: "JSONLNoWarmup", file: "torchtune_log_1714003600.jsonl", opt: profileimport.Options{WarmupSteps: -1},
			want: 2990.0, format: profileimport.FormatTorchtune, field: "tokens_per_second_per_gpu",
		},
	})
}

func TestImport_TorchtuneLines(t *testing.T) {
	// StdoutLogger output mixed with other lines; a tensor repr value as a
	// recipe's tensor prints in txt; a final line cut off mid-write.
	log := "INFO:torchtune.utils._logging:Model is initialized with precision torch.bfloat16.\n" +
		"Writing logs to /tmp/out/logs/log_1.txt\n" +
		"{'batch_size': 4, 'seed': 42}\n" +
		"{\"step\": 1, \"val_loss\": 2.5}\n" +
		"Step 1 | loss:2.0 lr:2e-05 tokens_per_second_per_gpu:tensor(100.0, device='cuda:0') \n" +
		"Step 2 | loss:1.9 lr:2e-05 tokens_per_second_per_gpu:tensor(900.5, device='cuda:0') \n" +
		"1|2|Loss: 1.9: 100%|██████████| 2/2 [00:04<00:00]Step 3 | loss:1.8 lr:2e-05 tokens_per_second_per_gpu:1000.5 \n" +
		"Step 4 | val_loss:1.7 \n" +
		"Step 4 | loss:1.7 lr:2e-05 tokens_per_second_per_gpu:12"
	// Warm-up 1: steps 2 and 3 = 900.5, 1000.5: median (900.5 + 1000.5) / 2
	// = 950.5; step 4's line has no newline and is skipped.
	got, err := profileimport.Import([]byte(log), profileimport.Options{WarmupSteps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !near(got.TokensPerSecondPerGPU, 950.5) {
		t.Errorf("got %v, want 950.5", got.TokensPerSecondPerGPU)
	}
	if !strings.Contains(got.Note, "last line was incomplete") {
		t.Errorf("note does not mention the skipped line: %s", got.Note)
	}
}

func TestImport_VLLMServing(t *testing.T) {
	runFixtureCases(t, []fixtureCase{
		{
			// 200000 output tokens / 125 s = 1600.0 for the server ÷ 4 GPUs
			// (tensor_parallel_size metadata) = 400.0.
			name: "TensorParallelFromMetadata", file: "vllm_benchmark_serving.json",
			want: 400, format: profileimport.FormatVLLMServing, field: "output_throughput",
			note: []string{"model meta-llama/Llama-3.1-70B-Instruct", "1000 completed requests", "= 1600.0 output tokens/s for the whole server ÷ 4 GPUs (tensor_parallel_size in the result's metadata)", "400.00 output tokens/s per GPU", "total_token_throughput was 3320.0"},
		},
		{
			// The gpus option wins over the metadata: 1600 ÷ 2 = 800.
			name: "GPUsOption", file: "vllm_benchmark_serving.json", opt: profileimport.Options{GPUs: 2},
			want: 800, format: profileimport.FormatVLLMServing, field: "output_throughput",
			note: []string{"÷ 2 GPUs (the gpus option)"},
		},
		{
			// total_token_throughput on request: 415000 / 125 = 3320 ÷ 4 = 830.
			name: "TotalTokens", file: "vllm_benchmark_serving.json", opt: profileimport.Options{Field: "total_token_throughput"},
			want: 830, format: profileimport.FormatVLLMServing, field: "total_token_throughput",
			note: []string{"input + output", "output_throughput was 1600.0", "ranks serving by output tokens"},
		},
	})

	t.Run("UnusableMetadata", func(t *testing.T) {
		data := `{"completed": 10, "output_throughput": 512.5, "tensor_parallel_size": "two"}`
		got, err := profileimport.Import([]byte(data), profileimport.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got.TokensPerSecondPerGPU != 512.5 || !strings.Contains(got.Note, `metadata "two" is not a GPU count`) {
			t.Errorf("got %v, note %s", got.TokensPerSecondPerGPU, got.Note)
		}
	})

	t.Run("AssumedOneGPU", func(t *testing.T) {
		data := `{"backend": "vllm", "model_id": "m", "completed": 10, "output_throughput": 512.5, "total_token_throughput": 900.0}`
		got, err := profileimport.Import([]byte(data), profileimport.Options{Name: "r.json"})
		if err != nil {
			t.Fatal(err)
		}
		if got.TokensPerSecondPerGPU != 512.5 || !strings.Contains(got.Note, "÷ 1 GPU (assumed: no gpus option and no tensor_parallel_size metadata)") {
			t.Errorf("got %v, note %s", got.TokensPerSecondPerGPU, got.Note)
		}
	})
}

func TestImport_FormatOption(t *testing.T) {
	data := mustRead(t, "vllm_benchmark_serving.json")
	if _, err := profileimport.Import(data, profileimport.Options{Format: profileimport.FormatVLLMServing}); err != nil {
		t.Errorf("explicit matching format: %v", err)
	}
	// The option overrides detection: the file is not a Trainer summary.
	_, err := profileimport.Import(data, profileimport.Options{Format: profileimport.FormatHFTrainer})
	if !errors.Is(err, profileimport.ErrNoFigure) {
		t.Errorf("vLLM file read as hf-trainer: err = %v, want ErrNoFigure", err)
	}
	// Content matching two formats needs the option, which then decides.
	both := []byte(`{"log_history": [{"train_runtime": 1, "train_tokens_per_second": 50}], "note": "tokens_per_second_per_gpu"}`)
	if _, err := profileimport.Import(both, profileimport.Options{}); !errors.Is(err, profileimport.ErrUnknownFormat) || !strings.Contains(err.Error(), "more than one format") {
		t.Errorf("ambiguous content: err = %v", err)
	}
	got, err := profileimport.Import(both, profileimport.Options{Format: profileimport.FormatHFTrainer})
	if err != nil || got.TokensPerSecondPerGPU != 50 {
		t.Errorf("ambiguous content with format: %v, %v", got, err)
	}
}

func TestImport_Errors(t *testing.T) {
	state := mustRead(t, "hf_trainer_state.json")
	vllm := mustRead(t, "vllm_benchmark_serving.json")
	jsonl := mustRead(t, "torchtune_log_1714003600.jsonl")
	tests := []struct {
		name   string
		data   []byte
		opt    profileimport.Options
		is     error  // a sentinel the error wraps, or nil
		option string // the OptionError's option, or ""
		msg    []string
	}{
		{name: "Empty", data: []byte(" \n\t"), is: profileimport.ErrEmpty},
		{name: "UnknownContent", data: []byte("epoch 1 loss 2.0 speed 300 tok/s\n"), is: profileimport.ErrUnknownFormat,
			msg: []string{"hf-trainer", "torchtune", "vllm-bench-serving"}},
		{name: "BinaryJunk", data: []byte{0, 1, 2, 0xff, 0xfe, '{'}, is: profileimport.ErrUnknownFormat},
		{name: "UnknownFormatOption", data: vllm, opt: profileimport.Options{Format: "mlperf"}, is: profileimport.ErrUnknownFormat,
			msg: []string{`"mlperf"`, "hf-trainer", "torchtune", "vllm-bench-serving"}},
		{name: "MissingSeqLen", data: mustRead(t, "hf_trainer_state_samples.json"), option: profileimport.OptionSeqLen,
			msg: []string{"train_tokens_per_second is not logged", "train_samples_per_second needs the sequence length"}},
		{name: "NegativeGPUs", data: vllm, opt: profileimport.Options{GPUs: -2}, option: profileimport.OptionGPUs},
		{name: "NegativeSeqLen", data: state, opt: profileimport.Options{SeqLen: -1}, option: profileimport.OptionSeqLen},
		{name: "UnknownField", data: vllm, opt: profileimport.Options{Field: "request_throughput"}, option: profileimport.OptionField,
			msg: []string{"output_throughput, total_token_throughput"}},
		{name: "TokensFieldAbsent", data: mustRead(t, "hf_trainer_state_samples.json"), opt: profileimport.Options{Field: "train_tokens_per_second"},
			is: profileimport.ErrNoFigure, msg: []string{"include_tokens_per_second"}},
		{name: "UnfinishedRun", data: []byte(`{"global_step": 20, "log_history": [{"loss": 2.0, "step": 20}]}`), is: profileimport.ErrNoFigure,
			msg: []string{"no final train summary"}},
		{name: "HFZeroTokens", data: []byte(`{"log_history": [{"train_runtime": 9.0, "train_tokens_per_second": 0.0, "train_samples_per_second": 2.0}]}`),
			is: profileimport.ErrBadFigure, msg: []string{"not above zero", "cannot count"}},
		// Python's json writes NaN and Infinity bare.
		{name: "HFNaN", data: []byte("{\"log_history\": [{\"train_runtime\": 9.0, \"train_tokens_per_second\": NaN}]}\n"), is: profileimport.ErrBadFigure,
			msg: []string{"NaN"}},
		{name: "HFInfinity", data: []byte(`{"train_runtime": 0.1, "train_tokens_per_second": Infinity}`), is: profileimport.ErrBadFigure,
			msg: []string{"infinite"}},
		{name: "HFString", data: []byte(`{"train_runtime": 1, "train_tokens_per_second": "fast"}`), is: profileimport.ErrBadFigure,
			msg: []string{`"\"fast\""`}},
		{name: "HFTruncatedState", data: state[:len(state)/2], is: profileimport.ErrMalformed, msg: []string{"truncated"}},
		{name: "HFDictCutOff", data: []byte("{'train_runtime': 10.0, 'train_tokens_per_second': 25"), is: profileimport.ErrMalformed,
			msg: []string{"cut off"}},
		{name: "HFSamplesOverflow", data: []byte(`{"train_runtime": 1, "train_samples_per_second": 1e308}`), opt: profileimport.Options{SeqLen: 4096},
			is: profileimport.ErrBadFigure, msg: []string{"overflows"}},
		{name: "TorchtuneNegative", data: []byte("Step 1 | loss:1.0 tokens_per_second_per_gpu:-5.0 \n"), is: profileimport.ErrBadFigure,
			msg: []string{"line 1 (step 1)", "not above zero"}},
		{name: "TorchtuneNaN", data: []byte("Step 1 | tokens_per_second_per_gpu:100.0 \nStep 2 | tokens_per_second_per_gpu:nan \n"), is: profileimport.ErrBadFigure,
			msg: []string{"line 2 (step 2)", "NaN"}},
		{name: "TorchtuneNotNumber", data: []byte("Step 7 | tokens_per_second_per_gpu:fast \n"), is: profileimport.ErrBadFigure,
			msg: []string{"line 1 (step 7)"}},
		{name: "TorchtuneTruncatedMiddleLine", data: append(append([]byte{}, jsonl[:100]...), append([]byte("\n"), jsonl...)...),
			is: profileimport.ErrMalformed, msg: []string{"line 1 is not valid JSON"}},
		{name: "TorchtuneJSONNaN", data: []byte("{\"step\": 1, \"tokens_per_second_per_gpu\": NaN}\n"), is: profileimport.ErrBadFigure, msg: []string{"NaN"}},
		{name: "TorchtuneAllWarmup", data: []byte("Step 1 | tokens_per_second_per_gpu:10.0 \nStep 2 | tokens_per_second_per_gpu:20.0 \n"),
			option: profileimport.OptionWarmup, msg: []string{"all 2 logged steps fall within the warm-up"}},
		{name: "TorchtuneJSONWithoutStep", data: []byte("Step 1 | loss:1.0 \n{\"tokens_per_second_per_gpu\": 5}\n"), is: profileimport.ErrMalformed,
			msg: []string{"no whole step number"}},
		{name: "VLLMTruncated", data: vllm[:len(vllm)-20], is: profileimport.ErrMalformed, msg: []string{"truncated"}},
		{name: "VLLMZero", data: []byte(`{"completed": 5, "output_throughput": 0.0, "total_token_throughput": 10.0}`), is: profileimport.ErrBadFigure,
			msg: []string{"output_throughput is 0"}},
		{name: "VLLMNegative", data: []byte(`{"completed": 5, "output_throughput": -3.5}`), is: profileimport.ErrBadFigure},
		{name: "VLLMNaN", data: []byte(`{"completed": 5, "output_throughput": NaN}`), is: profileimport.ErrBadFigure, msg: []string{"NaN"}},
		{name: "VLLMNoneCompleted", data: []byte(`{"completed": 0, "output_throughput": 0.0}`), is: profileimport.ErrBadFigure,
			msg: []string{"no request completed"}},
		{name: "VLLMOnlyTotal", data: []byte(`{"completed": 5, "total_token_throughput": 10.0}`), is: profileimport.ErrNoFigure,
			msg: []string{"set the field option to total_token_throughput"}},
		{name: "VLLMNotObject", data: []byte(`["output_throughput", 5]`), is: profileimport.ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := profileimport.Import(tc.data, tc.opt)
			if err == nil {
				t.Fatalf("Import = %+v, want an error", got)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want it to wrap %v", err, tc.is)
			}
			if tc.option != "" {
				var oe *profileimport.OptionError
				if !errors.As(err, &oe) || oe.Option != tc.option {
					t.Errorf("err = %v, want an OptionError for %q", err, tc.option)
				}
			}
			for _, s := range tc.msg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
}

func TestImport_SizeBound(t *testing.T) {
	t.Run("OverCap", func(t *testing.T) {
		huge := bytes.Repeat([]byte("Step 1 | tokens_per_second_per_gpu:1.0 \n"), profileimport.MaxInputBytes/40+1)
		if len(huge) <= profileimport.MaxInputBytes {
			t.Fatalf("test input of %d bytes is not over the cap", len(huge))
		}
		if _, err := profileimport.Import(huge, profileimport.Options{}); !errors.Is(err, profileimport.ErrTooLarge) {
			t.Errorf("err = %v, want ErrTooLarge", err)
		}
	})
	t.Run("LargeLogUnderCap", func(t *testing.T) {
		// 100000 steps: three warm-up steps of 1, then 3000 where the step
		// is a multiple of 3 and 1000 elsewhere. Kept: steps 4–100000, 99997
		// values, 33332 of 3000 (6, 9, …, 99999) and 66665 of 1000; the
		// median, the 49999th smallest, is 1000.
		var b bytes.Buffer
		for i := 1; i <= 100000; i++ {
			v := 1000.0
			switch {
			case i <= 3:
				v = 1
			case i%3 == 0:
				v = 3000
			}
			fmt.Fprintf(&b, "Step %d | loss:1.0 lr:2e-05 tokens_per_second_per_gpu:%g \n", i, v)
		}
		if b.Len() > profileimport.MaxInputBytes {
			t.Fatalf("test input of %d bytes is over the cap", b.Len())
		}
		got, err := profileimport.Import(b.Bytes(), profileimport.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got.TokensPerSecondPerGPU != 1000 {
			t.Errorf("median = %v, want 1000", got.TokensPerSecondPerGPU)
		}
	})
}

func TestFormats(t *testing.T) {
	want := []string{profileimport.FormatHFTrainer, profileimport.FormatTorchtune, profileimport.FormatVLLMServing}
	if got := profileimport.Formats(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Formats() = %v, want %v", got, want)
	}
	if got := profileimport.Fields(profileimport.FormatVLLMServing); len(got) != 2 || got[0] != "output_throughput" {
		t.Errorf("Fields(vllm) = %v", got)
	}
	if profileimport.Fields("nope") != nil {
		t.Error("Fields of an unknown format is not nil")
	}
}
