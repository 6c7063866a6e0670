package rank_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
)

// extremeFloats and extremeInts are the values every numeric field of a
// job spec is tried with.
var (
	extremeFloats = []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e300, -1e300, math.MaxFloat64, -1, 0, 5e-324, 1e-300, 1e16, 1e9}
	extremeInts   = []int{math.MinInt64, math.MaxInt64, -1, 0, 1, 1 << 40, 1 << 62, 1 << 21, 100000}
)

// specField sets one numeric field of a spec that starts from base.
type specField struct {
	name  string
	base  func() rank.JobSpec
	float func(*rank.JobSpec, float64)
	int   func(*rank.JobSpec, int)
}

func serveSpec() rank.JobSpec { return rank.JobSpec{Workload: "serve-7b", PeakTokensPerSecond: 300} }
func trainSpec() rank.JobSpec { return rank.JobSpec{Workload: "lora-7b", Tokens: 1e7} }
func modelSpec() rank.JobSpec {
	return rank.JobSpec{Model: &rank.ModelSpec{ParamsB: 7, Layers: 32, Hidden: 4096, Heads: 32}, Tokens: 1e7}
}
func hidden(s *rank.JobSpec) *rank.HiddenSpec {
	if s.Hidden == nil {
		s.Hidden = &rank.HiddenSpec{}
	}
	return s.Hidden
}
func ptr(v float64) *float64 { return &v }

var specFields = []specField{
	{name: "tokens", base: trainSpec, float: func(s *rank.JobSpec, v float64) { s.Tokens = v }},
	{name: "peak_tokens_per_second", base: serveSpec, float: func(s *rank.JobSpec, v float64) { s.PeakTokensPerSecond = v }},
	{name: "hours_per_month", base: serveSpec, float: func(s *rank.JobSpec, v float64) { s.HoursPerMonth = v }},
	{name: "request_rate", base: serveSpec, float: func(s *rank.JobSpec, v float64) { s.RequestRate = v }},
	{name: "utilization", base: trainSpec, float: func(s *rank.JobSpec, v float64) { s.Utilization = v }},
	{name: "seq_len", base: trainSpec, int: func(s *rank.JobSpec, v int) { s.SeqLen = v }},
	{name: "micro_batch", base: trainSpec, int: func(s *rank.JobSpec, v int) { s.MicroBatch = v }},
	{name: "context", base: serveSpec, int: func(s *rank.JobSpec, v int) { s.Context = v }},
	{name: "output_tokens", base: serveSpec, int: func(s *rank.JobSpec, v int) { s.OutputTokens = v }},
	{name: "concurrency", base: serveSpec, int: func(s *rank.JobSpec, v int) { s.Concurrency = v }},
	{name: "max_gpus", base: serveSpec, int: func(s *rank.JobSpec, v int) { s.MaxGPUs = v }},
	{name: "limit", base: trainSpec, int: func(s *rank.JobSpec, v int) { s.Limit = v }},
	{name: "model.params_b", base: modelSpec, float: func(s *rank.JobSpec, v float64) { s.Model.ParamsB = v }},
	{name: "model.layers", base: modelSpec, int: func(s *rank.JobSpec, v int) { s.Model.Layers = v }},
	{name: "model.hidden", base: modelSpec, int: func(s *rank.JobSpec, v int) { s.Model.Hidden = v }},
	{name: "model.heads", base: modelSpec, int: func(s *rank.JobSpec, v int) { s.Model.Heads = v }},
	{name: "model.kv_heads", base: modelSpec, int: func(s *rank.JobSpec, v int) { s.Model.KVHeads = v }},
	{name: "model.head_dim", base: modelSpec, int: func(s *rank.JobSpec, v int) { s.Model.HeadDim = v }},
	{name: "hidden.startup_minutes", base: trainSpec, float: func(s *rank.JobSpec, v float64) { hidden(s).StartupMinutes = ptr(v) }},
	{name: "hidden.storage_gb", base: trainSpec, float: func(s *rank.JobSpec, v float64) { hidden(s).StorageGB = ptr(v) }},
	{name: "hidden.storage_days", base: trainSpec, float: func(s *rank.JobSpec, v float64) { hidden(s).StorageDays = ptr(v) }},
	{name: "hidden.egress_gb", base: trainSpec, float: func(s *rank.JobSpec, v float64) { hidden(s).EgressGB = ptr(v) }},
	{name: "hidden.checkpoint_minutes", base: trainSpec, float: func(s *rank.JobSpec, v float64) { hidden(s).CheckpointMinutes = ptr(v) }},
	{name: "hidden.restart_minutes", base: trainSpec, float: func(s *rank.JobSpec, v float64) { hidden(s).RestartMinutes = ptr(v) }},
	{name: "hidden.storage_price_gb_month", base: trainSpec, float: func(s *rank.JobSpec, v float64) { hidden(s).StoragePricePerGBMonth = ptr(v) }},
	{name: "hidden.egress_price_gb", base: trainSpec, float: func(s *rank.JobSpec, v float64) { hidden(s).EgressPricePerGB = ptr(v) }},
	{name: "hidden.reclaims_per_hour", base: trainSpec, float: func(s *rank.JobSpec, v float64) { hidden(s).ReclaimsPerHour = ptr(v) }},
}

// extremeSnap has a per-GPU 4090 (spot and on-demand) and a fixed 8×H100,
// so serving and training plans both have options, sharded and not.
func extremeSnap(t *testing.T) *rank.Snapshot {
	return planSnap(t,
		perGPU(off("p", "p", "4090", "RTX-4090", pricewatch.ModeOnDemand, 0.4, "USD"), 1, 2, 4, 8),
		perGPU(off("p", "p", "4090s", "RTX-4090", pricewatch.ModeSpot, 0.2, "USD"), 1, 2, 4, 8),
		fixed(off("q", "q", "h100x8", "H100-80GB-SXM", pricewatch.ModeOnDemand, 2.5, "USD"), 8),
		fixed(off("q", "q", "h100m", "H100-80GB-SXM", pricewatch.ModeMonthly, 1500, "USD"), 8))
}

// checkExtreme resolves and plans spec: either an invalid error whose
// message starts with the field, or a plan whose every number is finite and
// whose counts and costs are not negative.
func checkExtreme(t *testing.T, snap *rank.Snapshot, field string, spec rank.JobSpec) {
	t.Helper()
	job, err := spec.Resolve(rank.WorkloadByName, normalize.KnownCurrency, "USD")
	if err != nil {
		if pricewatch.ErrorCode(err) != pricewatch.EInvalid || !strings.HasPrefix(err.Error(), field+":") {
			t.Errorf("%s: err = %v, want an invalid error naming %s", field, err, field)
		}
		return
	}
	res, err := snap.Plan(job, nil, normalize.DefaultCatalog())
	if err != nil {
		if pricewatch.ErrorCode(err) != pricewatch.EInvalid || !strings.HasPrefix(err.Error(), field+":") {
			t.Errorf("%s: plan err = %v", field, err)
		}
		return
	}
	if _, err := json.Marshal(res); err != nil {
		t.Errorf("%s: plan has a number JSON cannot carry (NaN or ±Inf): %v %s", field, err, rank.NonFinite(res))
	}
	for _, o := range res.Options {
		bad := o.TotalCost < 0 || o.Hours < 0 || o.CostPerMillionTokens < 0 || o.GPUs < 0 || o.PeriodsBilled < 0
		if s := o.Serving; s != nil {
			bad = bad || s.GPUsNeeded < 0 || s.Instances < 0 || s.MonthlyCost < 0
		}
		if bad {
			t.Errorf("%s: option %s/%s has a negative number: total %v hours %v cost/Mtok %v serving %+v",
				field, o.Source, o.Offer, o.TotalCost, o.Hours, o.CostPerMillionTokens, o.Serving)
		}
	}
}

func TestJobSpec_ResolveExtremeValues(t *testing.T) {
	snap := extremeSnap(t)
	for _, f := range specFields {
		t.Run(f.name, func(t *testing.T) {
			if f.float != nil {
				for _, v := range extremeFloats {
					s := f.base()
					f.float(&s, v)
					checkExtreme(t, snap, f.name, s)
				}
			}
			if f.int != nil {
				for _, v := range extremeInts {
					s := f.base()
					f.int(&s, v)
					checkExtreme(t, snap, f.name, s)
				}
			}
		})
	}
}

// FuzzJobSpec_Resolve: whatever the numbers, Resolve and Plan never panic,
// and a spec either fails naming a field or plans with finite numbers.
func FuzzJobSpec_Resolve(f *testing.F) {
	f.Add(300.0, 0.0, 0, 0, 0, 0.0, 0.0)
	f.Add(1e300, 1e300, math.MaxInt64, math.MaxInt64, math.MaxInt64, 1e300, 1e300)
	f.Add(math.NaN(), math.Inf(1), -1, -1, -1, math.Inf(-1), math.NaN())
	f.Add(1e8, 744.0, 1<<20, 4096, 1<<16, 1e6, 1e4)
	f.Fuzz(func(t *testing.T, peak, hours float64, context, output, concurrency int, rate, storage float64) {
		snap := extremeSnap(t)
		s := rank.JobSpec{Workload: "serve-7b", PeakTokensPerSecond: peak, HoursPerMonth: hours, Context: context,
			OutputTokens: output, Concurrency: concurrency, RequestRate: rate, Hidden: &rank.HiddenSpec{StorageGB: &storage}}
		job, err := s.Resolve(rank.WorkloadByName, normalize.KnownCurrency, "USD")
		if err != nil {
			if pricewatch.ErrorCode(err) != pricewatch.EInvalid || !strings.Contains(err.Error(), ":") {
				t.Fatalf("err = %v, want an invalid error naming a field", err)
			}
			return
		}
		res, err := snap.Plan(job, nil, normalize.DefaultCatalog())
		if err != nil {
			return
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatalf("not finite: %v (%+v)", err, job)
		}
		for _, o := range res.Options {
			if sp := o.Serving; sp != nil && (sp.GPUsNeeded < 0 || sp.MonthlyCost < 0) {
				t.Fatalf("serving %+v for %+v", sp, job)
			}
		}
	})
}
