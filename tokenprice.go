package pricewatch

import "time"

// TokenPrice is an inference API's price for one model: what a request
// costs per million input (prompt) and output (completion) tokens, as the
// source lists it, and the model preset it is the same weights as where
// that is known.
type TokenPrice struct {
	// Key is TokenKey(Source, Provider, Model).
	Key    string `json:"key"`
	Source string `json:"source"`
	// Provider sells the tokens: the router itself ("openrouter") for its
	// list price, or the endpoint's provider where the source names one.
	Provider string `json:"provider"`
	// Model is the API's model id ("openai/gpt-oss-120b"); HFID the
	// Hugging Face repository the source says it serves; Preset the model
	// preset with those weights ("" when none: counted as unknown).
	Model  string `json:"model"`
	HFID   string `json:"hugging_face_id,omitempty"`
	Preset string `json:"preset,omitempty"`
	// Quantization is the weights' format as the source states it ("fp8",
	// "bf16"); empty when it does not say.
	Quantization string `json:"quantization,omitempty"`
	// Prices per million tokens in Currency; CachedInputPerMillion is the
	// price of an input token read from the provider's prompt cache (0:
	// no cache price listed).
	InputPerMillion       float64 `json:"input_per_million"`
	OutputPerMillion      float64 `json:"output_per_million"`
	CachedInputPerMillion float64 `json:"cached_input_per_million,omitempty"`
	Currency              string  `json:"currency"`
	ContextLength         int     `json:"context_length,omitempty"`
	URL                   string  `json:"url,omitempty"`
	// Held is a price that moved beyond the ingest band and waits for
	// the runs that confirm it; the listed prices stay the accepted ones.
	Held *TokenHeld `json:"held,omitempty"`
	// FirstSeen is when the price first appeared; ObservedAt when it was
	// last confirmed by a successful run.
	FirstSeen  time.Time `json:"first_seen"`
	ObservedAt time.Time `json:"observed_at"`
}

// TokenHeld is a token price held back as implausible, with the runs in a
// row that brought it.
type TokenHeld struct {
	InputPerMillion  float64 `json:"input_per_million"`
	OutputPerMillion float64 `json:"output_per_million"`
	Runs             int     `json:"runs"`
}

// TokenKey is the stable key of a token price: source/provider/model.
func TokenKey(source, provider, model string) string {
	return source + "/" + provider + "/" + model
}

// SamePrice reports whether two token prices bill the same.
func (t TokenPrice) SamePrice(o TokenPrice) bool {
	return t.InputPerMillion == o.InputPerMillion && t.OutputPerMillion == o.OutputPerMillion &&
		t.CachedInputPerMillion == o.CachedInputPerMillion && t.Currency == o.Currency && t.Preset == o.Preset &&
		t.Quantization == o.Quantization
}
