package httpapi_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/rank"
)

// The card and workload the tests measure: A100-80GB-SXM lora-7b has a
// published figure, 3526.386 tok/s per GPU (the median of the
// qwen7b-lora-2k and -4k rows scaled to 7B, rank/data), and offers on
// runpod and vast in the fixtures.
const (
	normCard     = "A100-80GB-SXM"
	normWorkload = "lora-7b"
	published    = 3526.386
)

// hfMetrics is the dict a Hugging Face Trainer prints at the end of
// train(), with train_tokens_per_second as given.
func hfMetrics(tps string) string {
	return "{'train_runtime': 600.0, 'train_samples_per_second': 1.29, 'train_steps_per_second': 0.1, " +
		"'train_tokens_per_second': " + tps + ", 'train_loss': 1.5, 'epoch': 1.0}\n"
}

func decodeProfile(t *testing.T, body []byte) httpapi.ProfileResponse {
	t.Helper()
	var r httpapi.ProfileResponse
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return r
}

// A run measured on runpod applies to runpod's offers of the card only:
// vast's keep the published figure, and the origin says which.
func TestProfile_ProviderScopeRanks(t *testing.T) {
	h := newPlanHarness(t, "tok")
	code, body := h.do(t, http.MethodPut, "/v1/profiles/"+normCard+"/"+normWorkload+"?provider=runpod", `{"tokens_per_second": 3200, "note": "1h run"}`, "tok")
	if code != 200 {
		t.Fatalf("PUT: %d %s", code, body)
	}
	r := decodeProfile(t, body)
	// 3200 / 3526.386 = 0.907: within the 20% band.
	if r.Scope != "provider" || r.Label != "measured@runpod" || r.Norm == nil || r.Norm.BelowNorm ||
		r.Norm.Ratio < 0.906 || r.Norm.Ratio > 0.908 || r.Norm.NormFrom != "published" {
		t.Fatalf("answer: %+v norm %+v", r.ProfileEntry, r.Norm)
	}
	var runpod, vast int
	for _, e := range h.env.Pipeline.View().Snapshot.Entries(normWorkload) {
		if e.Card != normCard {
			continue
		}
		switch e.Provider {
		case "runpod":
			runpod++
			if e.TokensPerSecondPerGPU != 3200 || e.ThroughputOrigin != "measured@runpod" {
				t.Errorf("runpod %s: %.1f tok/s from %s, want 3200 measured@runpod", e.OfferID, e.TokensPerSecondPerGPU, e.ThroughputOrigin)
			}
		case "vast":
			vast++
			if e.TokensPerSecondPerGPU < published-0.01 || e.TokensPerSecondPerGPU > published+0.01 || e.ThroughputOrigin != rank.OriginPublished {
				t.Errorf("vast %s: %.1f tok/s from %s, want the published %.1f", e.OfferID, e.TokensPerSecondPerGPU, e.ThroughputOrigin, published)
			}
		}
	}
	if runpod == 0 || vast == 0 {
		t.Fatalf("precondition: %d runpod and %d vast entries of %s", runpod, vast, normCard)
	}
	// The card-wide profile is untouched, the provider one listed beside it.
	code, body = h.do(t, http.MethodGet, "/v1/profiles?card="+normCard+"&workload="+normWorkload, "", "")
	var list struct{ Profiles []httpapi.ProfileEntry }
	if err := json.Unmarshal(body, &list); code != 200 || err != nil || len(list.Profiles) != 2 {
		t.Fatalf("list: %d %v %s", code, err, body)
	}
	if list.Profiles[0].Scope != "card" || list.Profiles[0].Origin != rank.OriginPublished || list.Profiles[1].Label != "measured@runpod" {
		t.Errorf("list: %+v", list.Profiles)
	}
}

// An import 25% below the published figure is flagged below norm, shown
// on runpod's /v1/sources entry, and posts one Slack message; importing it
// again posts nothing more; a later figure within the norm clears the flag
// silently and a new fall posts again.
func TestProfileImport_BelowNormFlagsOnce(t *testing.T) {
	h := newPlanHarness(t, "tok")
	imp := "/v1/profiles/import?card=" + normCard + "&workload=" + normWorkload + "&provider=runpod&name=run1.log"
	// 2645 / 3526.386 = 0.7501: 25% below, under the 0.8 line.
	code, body := h.do(t, http.MethodPost, imp, hfMetrics("2645.0"), "tok")
	if code != 200 {
		t.Fatalf("import: %d %s", code, body)
	}
	r := decodeProfile(t, body)
	if r.Import == nil || r.Import.Format != "hf-trainer" || r.Import.Field != "train_tokens_per_second" || r.TokensPerSecond != 2645 ||
		!strings.Contains(r.Note, "run1.log") {
		t.Fatalf("import answer: %+v %+v", r.ProfileEntry, r.Import)
	}
	if r.Norm == nil || !r.Norm.BelowNorm || r.Norm.Ratio < 0.750 || r.Norm.Ratio > 0.7502 {
		t.Fatalf("norm: %+v", r.Norm)
	}
	deliver := func() int {
		t.Helper()
		if err := h.env.Pipeline.Deliver(t.Context()); err != nil {
			t.Fatal(err)
		}
		return h.env.Notifier.Count()
	}
	if n := deliver(); n != 1 {
		t.Fatalf("messages after the flag: %d, want 1", n)
	}
	msg := h.env.Notifier.Messages[0].Text
	if !strings.Contains(msg, normCard) || !strings.Contains(msg, "runpod") || !strings.Contains(msg, "75%") {
		t.Errorf("message %q does not say card, provider and ratio", msg)
	}

	var src struct {
		Sources   []httpapi.SourceStatus
		BelowNorm []rank.NormCheck `json:"below_norm"`
	}
	code, body = h.do(t, http.MethodGet, "/v1/sources", "", "")
	if err := json.Unmarshal(body, &src); code != 200 || err != nil {
		t.Fatalf("sources: %d %v", code, err)
	}
	flagged := map[string]int{}
	for _, s := range src.Sources {
		flagged[s.Name] = len(s.BelowNorm)
	}
	if flagged["runpod"] != 1 || flagged["vast"] != 0 || len(src.BelowNorm) != 1 {
		t.Errorf("below_norm per source %v, top-level %d", flagged, len(src.BelowNorm))
	}
	// The flag explains the figure; it never hides the offers.
	found := false
	for _, e := range h.env.Pipeline.View().Snapshot.Entries(normWorkload) {
		if e.Card == normCard && e.Provider == "runpod" {
			found = true
			if e.TokensPerSecondPerGPU != 2645 || !strings.Contains(e.ThroughputNote, "below norm") {
				t.Errorf("runpod entry: %.0f tok/s, note %q", e.TokensPerSecondPerGPU, e.ThroughputNote)
			}
		}
	}
	if !found {
		t.Error("runpod's offers left the ranking")
	}

	if code, body = h.do(t, http.MethodPost, imp, hfMetrics("2650.0"), "tok"); code != 200 {
		t.Fatalf("second import: %d %s", code, body)
	}
	if n := deliver(); n != 1 {
		t.Errorf("messages after importing a flagged figure again: %d, want still 1", n)
	}
	// 3300 / 3526.386 = 0.936: back within the norm, cleared without a post.
	if code, body = h.do(t, http.MethodPost, imp, hfMetrics("3300.0"), "tok"); code != 200 || decodeProfile(t, body).Norm.BelowNorm {
		t.Fatalf("recovery: %d %s", code, body)
	}
	if n := deliver(); n != 1 {
		t.Errorf("messages after the recovery: %d, want still 1", n)
	}
	// 2000 / 3526.386 = 0.567: a new fall is a new message.
	if code, body = h.do(t, http.MethodPost, imp, hfMetrics("2000.0"), "tok"); code != 200 {
		t.Fatalf("new fall: %d %s", code, body)
	}
	if n := deliver(); n != 2 {
		t.Errorf("messages after a new fall: %d, want 2", n)
	}
}

// A second provider's measurement makes the norm the median of the other
// measurements: with runpod at 3000 and vast at 2000, vast is
// 2000/3000 = 0.667 of its norm (flagged) and runpod 3000/2000 = 1.5.
func TestProfile_NormIsOtherMeasurements(t *testing.T) {
	h := newPlanHarness(t, "tok")
	put := func(provider string, tps string) httpapi.ProfileResponse {
		t.Helper()
		code, body := h.do(t, http.MethodPut, "/v1/profiles/"+normCard+"/"+normWorkload+"?provider="+provider, `{"tokens_per_second": `+tps+`}`, "tok")
		if code != 200 {
			t.Fatalf("PUT %s: %d %s", provider, code, body)
		}
		return decodeProfile(t, body)
	}
	put("runpod", "3000")
	v := put("vast", "2000")
	if v.Norm == nil || !v.Norm.BelowNorm || v.Norm.Norm != 3000 || v.Norm.NormFrom != "median of 1 other measurement" {
		t.Fatalf("vast norm: %+v", v.Norm)
	}
	code, body := h.do(t, http.MethodGet, "/v1/profiles?below_norm=true", "", "")
	var list struct{ Profiles []httpapi.ProfileEntry }
	if err := json.Unmarshal(body, &list); code != 200 || err != nil || len(list.Profiles) != 1 || list.Profiles[0].Provider != "vast" {
		t.Fatalf("below_norm list: %d %s", code, body)
	}
	// Deleting vast's figure leaves runpod compared with the published one
	// again: 3000 / 3526.386 = 0.851.
	if code, body := h.do(t, http.MethodDelete, "/v1/profiles/"+normCard+"/"+normWorkload+"?provider=vast", "", "tok"); code != 200 {
		t.Fatalf("DELETE: %d %s", code, body)
	}
	for _, c := range h.env.Pipeline.NormChecks() {
		if c.Provider == "vast" {
			t.Errorf("deleted measurement still checked: %+v", c)
		}
		if c.Provider == "runpod" && (c.NormFrom != "published" || c.Ratio < 0.850 || c.Ratio > 0.851) {
			t.Errorf("runpod after the delete: %+v", c)
		}
	}
	if code, _ := h.do(t, http.MethodDelete, "/v1/profiles/"+normCard+"/"+normWorkload+"?provider=vast", "", "tok"); code != 404 {
		t.Errorf("second DELETE: %d, want 404", code)
	}
}

// Bad writes are 4xx naming the field, and store nothing.
func TestProfileWrites_BadInput(t *testing.T) {
	h := newPlanHarness(t, "tok")
	base := "/v1/profiles/import?card=" + normCard + "&workload=" + normWorkload
	samples := "{'train_runtime': 600.0, 'train_samples_per_second': 1.29, 'train_loss': 1.5, 'epoch': 1.0}\n"
	for _, c := range []struct {
		name, method, target, body, token string
		code                              int
		want                              string
	}{
		{"NoToken", http.MethodPost, base, hfMetrics("2000"), "", 401, "token"},
		{"UnknownFormatListsKnown", http.MethodPost, base, "epoch 1 loss 2.0\n", "tok", 400, "hf-trainer"},
		{"NamedUnknownFormat", http.MethodPost, base + "&format=wandb", hfMetrics("2000"), "tok", 400, "format"},
		{"SamplesNeedSeqLen", http.MethodPost, base, samples, "tok", 400, "seq-len"},
		{"BadGPUs", http.MethodPost, base + "&gpus=0", hfMetrics("2000"), "tok", 400, "gpus"},
		{"TooManyGPUs", http.MethodPost, base + "&gpus=999", hfMetrics("2000"), "tok", 400, "gpus"},
		{"OfferNeedsProvider", http.MethodPost, base + "&offer=x", hfMetrics("2000"), "tok", 400, "offer"},
		{"UnknownProvider", http.MethodPost, base + "&provider=nosuchcloud", hfMetrics("2000"), "tok", 400, "provider"},
		{"BadProviderName", http.MethodPost, base + "&provider=Run%20Pod", hfMetrics("2000"), "tok", 400, "provider"},
		{"UnknownOffer", http.MethodPost, base + "&provider=runpod&offer=nope", hfMetrics("2000"), "tok", 400, "offer"},
		{"UnknownCard", http.MethodPost, "/v1/profiles/import?card=H999&workload=lora-7b", hfMetrics("2000"), "tok", 400, "card"},
		{"NoWorkload", http.MethodPost, "/v1/profiles/import?card=" + normCard, hfMetrics("2000"), "tok", 400, "workload"},
		{"UnknownParam", http.MethodPost, base + "&tps=5", hfMetrics("2000"), "tok", 400, "tps"},
		{"Empty", http.MethodPost, base, "", "tok", 400, "body"},
		{"ZeroFigure", http.MethodPost, base, hfMetrics("0.0"), "tok", 400, "body"},
		{"TooLarge", http.MethodPost, base, strings.Repeat(" ", 16<<20+1), "tok", 413, "body"},
		{"PutProviderUnknown", http.MethodPut, "/v1/profiles/" + normCard + "/lora-7b?provider=nosuchcloud", `{"tokens_per_second": 3000}`, "tok", 400, "provider"},
		{"PutBadGPUs", http.MethodPut, "/v1/profiles/" + normCard + "/lora-7b", `{"tokens_per_second": 3000, "gpus": -1}`, "tok", 400, "gpus"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := h.do(t, c.method, c.target, c.body, c.token)
			var e struct{ Error string }
			if err := json.Unmarshal(body, &e); code != c.code || err != nil || !strings.Contains(e.Error, c.want) {
				t.Errorf("%d %s, want %d naming %q", code, body, c.code, c.want)
			}
		})
	}
	if ps, _ := h.env.Store.Profiles(); countMeasured(ps) != 0 {
		t.Errorf("%d measured profiles stored by bad writes", countMeasured(ps))
	}
}

// Issue 19 item 10, through POST /v1/profiles/import: a log whose kind
// (training or serving) is not the workload's is a 400 naming the
// workload, and stores nothing; a serving benchmark of a 70B model for
// serve-7b (a 7B model) is stored with a warning naming both models, in the
// answer and in the stored note; a 7B benchmark has none. Before the fix
// the vLLM result was stored as a lora-7b training profile (200) and the
// 70B one for serve-7b without a word.
func TestProfileImport_KindAndModelChecked(t *testing.T) {
	h := newPlanHarness(t, "tok")
	vllm70 := string(mustReadFile(t, "../profileimport/testdata/vllm_benchmark_serving.json"))
	tt := string(mustReadFile(t, "../profileimport/testdata/torchtune_log_1714000000.txt"))
	imp := func(workload string) string {
		return "/v1/profiles/import?card=" + normCard + "&workload=" + workload + "&name=run.json"
	}
	for _, c := range []struct{ name, workload, body, format string }{
		{"ServingForLoRA", "lora-7b", vllm70, "vllm-bench-serving"},
		{"ServingForFullFT", "full-ft-7b", vllm70, "vllm-bench-serving"},
		{"TrainerForServing", "serve-7b", hfMetrics("2000"), "hf-trainer"},
		{"TorchtuneForServing", "serve-7b", tt, "torchtune"},
	} {
		code, body := h.do(t, http.MethodPost, imp(c.workload), c.body, "tok")
		var e struct{ Error string }
		if err := json.Unmarshal(body, &e); code != 400 || err != nil || !strings.HasPrefix(e.Error, "workload: ") ||
			!strings.Contains(e.Error, c.format) || !strings.Contains(e.Error, c.workload) ||
			!strings.Contains(e.Error, "serving") || !strings.Contains(e.Error, "training") {
			t.Errorf("%s: %d %s, want 400 naming the workload, %s and both kinds", c.name, code, body, c.format)
		}
	}
	if ps, _ := h.env.Store.Profiles(); countMeasured(ps) != 0 {
		t.Fatalf("%d measured profiles stored by refused imports", countMeasured(ps))
	}

	// 70B for serve-7b: stored, with the warning. The figure is the
	// fixture's 1600 output tok/s ÷ its tensor_parallel_size 4 = 400.
	code, body := h.do(t, http.MethodPost, imp("serve-7b"), vllm70, "tok")
	if code != 200 {
		t.Fatalf("70B for serve-7b: %d %s", code, body)
	}
	r := decodeProfile(t, body)
	if r.TokensPerSecond != 400 || len(r.Warnings) != 1 {
		t.Fatalf("70B for serve-7b: %v tok/s, warnings %q", r.TokensPerSecond, r.Warnings)
	}
	for _, s := range []string{"meta-llama/Llama-3.1-70B-Instruct", "70B", "serve-7b", "llama-7b", "7B"} {
		if !strings.Contains(r.Warnings[0], s) || !strings.Contains(r.Note, s) {
			t.Errorf("warning %q / note %q does not say %q", r.Warnings[0], r.Note, s)
		}
	}
	if r.Import == nil || r.Import.Model != "meta-llama/Llama-3.1-70B-Instruct" || r.Import.Kind != "serving" {
		t.Errorf("import: %+v", r.Import)
	}
	// The same result for a 7B model: no warning.
	vllm7 := strings.Replace(vllm70, "Llama-3.1-70B-Instruct", "Llama-2-7b-chat-hf", 2)
	code, body = h.do(t, http.MethodPost, imp("serve-7b"), vllm7, "tok")
	if r := decodeProfile(t, body); code != 200 || len(r.Warnings) != 0 || strings.Contains(r.Note, "warning") {
		t.Errorf("7B for serve-7b: %d, warnings %q, note %q", code, r.Warnings, r.Note)
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
