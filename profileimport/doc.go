// Package profileimport reads a measured throughput figure out of the logs
// and result files that training and serving tools already write, so that a
// team's own run can become a measured profile (issue 13, item 2).
//
// Three formats are known (see Formats and testdata/PROVENANCE.md for where
// each comes from in the tool's source):
//
//   - FormatHFTrainer: Hugging Face transformers Trainer final train metrics,
//     from trainer_state.json (the last train summary entry of its
//     log_history), train_results.json / all_results.json, the
//     "***** train metrics *****" block that log_metrics prints, or the dict
//     the Trainer prints when training ends. The figure is
//     train_tokens_per_second where it was logged, which transformers counts
//     per device (one process's dataloader), so it is used as is; else
//     train_samples_per_second, which transformers counts over all processes,
//     × the sequence length the caller gives ÷ the GPUs the run used.
//   - FormatTorchtune: torchtune metric logs (DiskLogger text lines
//     "Step N | name:value ..." as DiskLogger and StdoutLogger write them,
//     and DiskLogger JSON lines). tokens_per_second_per_gpu is already per
//     GPU (the recipes divide by the world size); the figure is the median
//     over the logged steps after the first warm-up steps of each run.
//   - FormatVLLMServing: vLLM benchmark_serving (vllm bench serve) result
//     JSON. The figure is output_throughput (or total_token_throughput on
//     request), which the benchmark measures for the whole server, divided by
//     the GPUs the server used (the tensor-parallel size).
//
// Each format is of a kind (Result.Kind): the Trainer and torchtune logs
// are training, the vLLM result is serving; the vLLM result also names its
// model (Result.Model). Match checks a result against the workload it is
// imported for: the other kind is refused, another model (size class or
// family) is a warning naming both.
//
// Invariants:
//   - The result is always tokens per second per GPU, finite and > 0
//     (trained tokens for training formats, output tokens for serving unless
//     total_token_throughput is asked for); zero, negative, NaN or infinite
//     figures are errors, never results.
//   - The note names the input (Options.Name), the format, the field and
//     value used and every conversion (per GPU as logged, or ÷ GPUs, and
//     whether the GPU count was given or assumed).
//   - Pure: Import reads only the bytes it is given (at most MaxInputBytes),
//     keeps no state and is safe for concurrent use. Every error it returns
//     is a fault of the input or the options (an "invalid" error for the
//     HTTP layer); errors wrap ErrUnknownFormat, ErrTooLarge, ErrEmpty,
//     ErrMalformed, ErrNoFigure or ErrBadFigure, or are an *OptionError.
package profileimport
