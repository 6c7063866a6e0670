package rank

import "testing"

// Each estimate names the kind of published runs its accuracy was
// measured on: the same split TestCalibration_OutOfSample counts.
func TestAccuracyOf_Kinds(t *testing.T) {
	serve := func(preset string) Workload {
		return Workload{Name: "s", Model: Presets()[preset], Method: MethodServe, WeightBytes: 2, Precision: PrecisionBF16,
			InputTokens: 1024, OutputTokens: 256}
	}
	for _, tc := range []struct {
		w    Workload
		card string
		gpus int
		want string
	}{
		{serve("qwen3-30b-a3b"), "H100-80GB-SXM", 1, "moe-serving"},
		{serve("gpt-oss-120b"), "H200-141GB-SXM", 8, "moe-serving"},
		{serve("gpt-oss-120b"), "MI300X-192GB", 1, "moe-serving-amd"},
		{serve("llama3.1-70b"), "MI300X-192GB", 8, "serving-multi-gpu"},
		{serve("llama3.1-8b"), "H100-80GB-SXM", 1, "serving-1gpu"},
		{serve("llama3.1-70b"), "H100-80GB-SXM", 8, "serving-multi-gpu"},
		{serve("qwen3-30b-a3b"), "RTX-4090", 1, "consumer-serving"},
		{workload(t, "lora-7b"), "A100-80GB-SXM", 1, "training"},
	} {
		a, ok := AccuracyOf(tc.w, card(t, tc.card), tc.gpus)
		if !ok || a.Subset != tc.want || a.Rows == 0 || a.Within > a.Rows {
			t.Errorf("%s on %d × %s: %+v, want subset %s", tc.w.Model.Name, tc.gpus, tc.card, a, tc.want)
		}
	}
}
