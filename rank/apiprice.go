package rank

import (
	_ "embed"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/pricewatch/pricewatch"
)

//go:embed data/api_models.csv
var apiModelsCSV []byte

// apiPresets maps a Hugging Face repository id (lower case) to its preset:
// every preset's own repository, then data/api_models.csv's rows.
var apiPresets = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for _, s := range presetSources() {
		m[strings.ToLower(s.Repo)] = s.Preset
	}
	rows, err := readCSV(apiModelsCSV)
	if err != nil {
		panic(fmt.Sprintf("rank: data/api_models.csv: %v", err))
	}
	for _, r := range rows[1:] {
		if len(r) < 4 || r[0] == "" || r[3] == "" {
			panic(fmt.Sprintf("rank: data/api_models.csv: row %v needs hf_id, preset, relation and source", r))
		}
		if _, ok := presets()[r[1]]; !ok {
			panic(fmt.Sprintf("rank: data/api_models.csv: unknown preset %q", r[1]))
		}
		m[strings.ToLower(r[0])] = r[1]
	}
	return m
})

// APIPreset is the preset whose weights an API model serves, from the
// Hugging Face repository the API names (exactly, or by a row of
// data/api_models.csv); "" when it names none or an unknown one. The
// model id alone never maps: names are not weights.
func APIPreset(hfID, model string) string {
	if hfID == "" {
		return ""
	}
	return apiPresets()[strings.ToLower(strings.TrimSpace(hfID))]
}

// APIOption is the cheapest inference API selling a job's model, priced
// for the job's mix of input and output tokens.
type APIOption struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Source   string `json:"source"`
	Key      string `json:"key"`
	// Quantization is the served format where the source states it.
	Quantization string `json:"quantization,omitempty"`
	// Prices per million tokens in the job's currency.
	InputPricePerMillion       float64 `json:"input_price_per_million"`
	OutputPricePerMillion      float64 `json:"output_price_per_million"`
	CachedInputPricePerMillion float64 `json:"cached_input_price_per_million,omitempty"`
	// CostPerMillionTokens is per million output tokens, with the input
	// each of them needs at the job's mix (its prompt, the cached share
	// at the cache price): comparable with a self-hosted option's cost
	// per million output tokens.
	CostPerMillionTokens float64 `json:"cost_per_million_tokens"`
	// MonthlyCost is the job's load a month at that cost (0 without a
	// load).
	MonthlyCost float64 `json:"monthly_cost,omitempty"`
	Currency    string  `json:"currency"`
	// Note says what the price leaves out.
	Note string `json:"note"`
}

// apiNote is what an API price leaves out, said on every API row.
const apiNote = "list price per token; not included: rate limits, data and retention terms, latency, availability of the named provider"

// apiCostPerMillion is the cost of a million output tokens at a mix of
// in input tokens per out output tokens, a share cached of the input read
// from the provider's cache where it prices one (else at the input price).
func apiCostPerMillion(t pricewatch.TokenPrice, in, out int, cached float64) float64 {
	if out <= 0 {
		return math.Inf(1)
	}
	cachePrice := t.InputPerMillion
	if t.CachedInputPerMillion > 0 {
		cachePrice = t.CachedInputPerMillion
	}
	ratio := float64(in) / float64(out)
	return t.OutputPerMillion + ratio*((1-cached)*t.InputPerMillion+cached*cachePrice)
}

// CheapestAPI is the cheapest API price of a preset for a job's mix (in
// input, out output tokens per request, a share cached), converted to
// currency; ok is false when no price of the preset converts.
func CheapestAPI(prices []pricewatch.TokenPrice, preset string, in, out int, cached float64, rates *pricewatch.Rates, currency string) (APIOption, bool) {
	var best APIOption
	found := false
	keys := make([]int, 0, len(prices))
	for i := range prices {
		keys = append(keys, i)
	}
	sort.SliceStable(keys, func(a, b int) bool { return prices[keys[a]].Key < prices[keys[b]].Key })
	for _, i := range keys {
		t := prices[i]
		if t.Preset != preset || preset == "" {
			continue
		}
		f, err := rates.Convert(1, t.Currency, currency)
		if err != nil || !(f > 0) {
			continue
		}
		c := apiCostPerMillion(t, in, out, cached) * f
		if found && c >= best.CostPerMillionTokens {
			continue
		}
		best = APIOption{Provider: t.Provider, Model: t.Model, Source: t.Source, Key: t.Key, Quantization: t.Quantization,
			InputPricePerMillion: t.InputPerMillion * f, OutputPricePerMillion: t.OutputPerMillion * f,
			CachedInputPricePerMillion: t.CachedInputPerMillion * f, CostPerMillionTokens: c, Currency: currency, Note: apiNote}
		found = true
	}
	return best, found
}

// planAPI sets a serving plan's API comparison: the cheapest API selling
// the job's model at the job's mix, its month at the job's load, and the
// load at which the cheapest self-hosted option becomes cheaper.
func (s *Snapshot) planAPI(res *PlanResult, job Job, opts []Option) {
	if job.Method != MethodServe || job.Tokens > 0 {
		return
	}
	api, ok := s.CheapestAPI(job.Workload, job.Currency)
	if !ok {
		return
	}
	if t := loadTokensPerMonth(job); t > 0 {
		api.MonthlyCost = t / 1e6 * api.CostPerMillionTokens
	}
	res.API = &api
	best, key := math.Inf(1), ""
	for _, o := range opts {
		if l, ok := breakEvenLoad(o, job, api); ok && l < best {
			best, key = l, o.Key
		}
	}
	if math.IsInf(best, 1) {
		res.BreakEven = "never"
		return
	}
	perDay := best * 3600 * 24 * job.HoursPerMonth / pricewatch.HoursPerMonth
	res.BreakEvenTokensPerDay, res.BreakEvenOption = &perDay, key
}

// breakEvenLoad is the least steady load (output tokens/s, over the job's
// hours a month) at which a self-hosted option's month costs no more than
// the API's for the same tokens: with n instances of capacity T, each
// billing U a month, and F a month of storage and egress plus one
// start-up, self-hosting costs n·U + F and the API a × L (a: the API's
// cost per output token, over a month's seconds). The first crossing is
// L = (n·U + F) / a with the fewest n that carry it (n·T ≥ 1.2 L); none
// when even full instances cost more per token than the API.
func breakEvenLoad(o Option, job Job, api APIOption) (float64, bool) {
	sv := o.Serving
	if !o.Fits || sv == nil || !(o.TokensPerSecond > 0) || sv.Instances < 1 {
		return 0, false
	}
	inst := float64(sv.Instances)
	avail := sv.CapacityTokensPerSecond / (inst * o.TokensPerSecond)
	if !(avail > 0) {
		avail = 1
	}
	capacity := o.TokensPerSecond * avail / ServingHeadroom // load one instance carries
	u := o.UnitPricePerHour * sv.BilledHoursPerMonth
	fixed := sv.MonthlyCost - inst*u + o.HiddenCosts["startup"]/inst/max(job.Months, 1)
	a := api.CostPerMillionTokens / 1e6 * 3600 * job.HoursPerMonth // per (token/s) a month
	if !(a > 0) || a*capacity <= u {
		return 0, false // a full instance costs more per token than the API
	}
	n := math.Max(1, math.Ceil(fixed/(a*capacity-u)-1e-9))
	return (n*u + fixed) / a, true
}

// BreakEvenTokensPerDay is the output tokens a day above which renting a
// unit at unitPerHour that serves tokensPerSecond all month costs less than
// an API at apiPerMillion (per million output tokens, the same currency):
// the month of one unit over the API's price, the unit carrying the load
// with ServingHeadroom; ok is false when a full unit costs more per token
// than the API (self-hosting never pays).
func BreakEvenTokensPerDay(unitPerHour, tokensPerSecond, apiPerMillion float64) (float64, bool) {
	month := unitPerHour * pricewatch.HoursPerMonth
	a := apiPerMillion / 1e6 * 3600 * pricewatch.HoursPerMonth // a month of one token/s
	capacity := tokensPerSecond / ServingHeadroom
	if !(a > 0) || !(capacity > 0) || a*capacity <= month {
		return 0, false
	}
	return month / a * 86400, true
}
