package normalize_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
)

func TestPerGPUHour(t *testing.T) {
	obs := func(price float64, unit pricewatch.PriceUnit, mode pricewatch.Mode, perGPU bool, gpus int) pricewatch.Observation {
		return pricewatch.Observation{Price: price, Unit: unit, Mode: mode, PerGPU: perGPU, GPUCount: gpus}
	}
	tests := []struct {
		name    string
		obs     pricewatch.Observation
		want    float64
		wantErr string // substring; "" means success
	}{
		{"HourPerGPU", obs(2.49, pricewatch.PerHour, pricewatch.ModeOnDemand, true, 0), 2.49, ""},
		{"EmptyUnitIsHour", obs(1.5, "", pricewatch.ModeSpot, true, 1), 1.5, ""},
		{"HourPerInstance", obs(32.77, pricewatch.PerHour, pricewatch.ModeOnDemand, false, 8), 32.77 / 8, ""},
		{"PerGPUIgnoresCount", obs(3, pricewatch.PerHour, pricewatch.ModeOnDemand, true, 8), 3, ""},
		{"DayPerGPU", obs(48, pricewatch.PerDay, pricewatch.ModeOnDemand, true, 0), 2, ""},
		{"DayPerInstance", obs(96, pricewatch.PerDay, pricewatch.ModeOnDemand, false, 4), 1, ""},
		{"WeekPerGPU", obs(168, pricewatch.PerWeek, pricewatch.ModeWeekly, true, 0), 1, ""},
		{"MonthIs730Hours", obs(1460, pricewatch.PerMonth, pricewatch.ModeMonthly, true, 1), 2, ""},
		{"MonthPerInstance", obs(7300, pricewatch.PerMonth, pricewatch.ModeMonthly, false, 2), 5, ""},
		{"TermReserved1YAzure8GPUs", obs(551221, pricewatch.PerTerm, pricewatch.ModeReserved1Y, false, 8), 551221.0 / 8760 / 8, ""},
		{"TermReserved3Y", obs(26280, pricewatch.PerTerm, pricewatch.ModeReserved3Y, true, 0), 1, ""},
		{"TermReserved5Y", obs(43800*2, pricewatch.PerTerm, pricewatch.ModeReserved5Y, false, 2), 1, ""},
		{"TermReserved3M", obs(2190, pricewatch.PerTerm, pricewatch.ModeReserved3M, true, 0), 1, ""},
		{"HourlyPriceForCommittedMode", obs(1.25, pricewatch.PerHour, pricewatch.ModeReserved3Y, true, 0), 1.25, ""},

		{"ZeroPrice", obs(0, pricewatch.PerHour, pricewatch.ModeOnDemand, true, 1), 0, "not a positive number"},
		{"NegativePrice", obs(-1, pricewatch.PerHour, pricewatch.ModeOnDemand, true, 1), 0, "not a positive number"},
		{"NaNPrice", obs(math.NaN(), pricewatch.PerHour, pricewatch.ModeOnDemand, true, 1), 0, "not a positive number"},
		{"InfPrice", obs(math.Inf(1), pricewatch.PerHour, pricewatch.ModeOnDemand, true, 1), 0, "not a positive number"},
		{"NegInfPrice", obs(math.Inf(-1), pricewatch.PerHour, pricewatch.ModeOnDemand, true, 1), 0, "not a positive number"},
		{"InstanceWithoutCount", obs(10, pricewatch.PerHour, pricewatch.ModeOnDemand, false, 0), 0, "GPU count"},
		{"InstanceNegativeCount", obs(10, pricewatch.PerHour, pricewatch.ModeOnDemand, false, -2), 0, "GPU count"},
		{"TermForOnDemand", obs(8760, pricewatch.PerTerm, pricewatch.ModeOnDemand, true, 1), 0, "no term"},
		{"TermForSpot", obs(8760, pricewatch.PerTerm, pricewatch.ModeSpot, true, 1), 0, "no term"},
		{"TermForUnknownMode", obs(8760, pricewatch.PerTerm, "forever", true, 1), 0, "no term"},
		{"UnknownUnit", obs(10, "fortnight", pricewatch.ModeOnDemand, true, 1), 0, "unknown price unit"},
		{"UnitIsCaseSensitive", obs(10, "Hour", pricewatch.ModeOnDemand, true, 1), 0, "unknown price unit"},
		// A price so small it vanishes when spread over the hours must not
		// become a free offer.
		{"UnderflowToZero", obs(5e-324, pricewatch.PerTerm, pricewatch.ModeReserved1Y, false, 8), 0, "positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := normalize.PerGPUHour(tt.obs)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("PerGPUHour = %v, want an error containing %q", got, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %q does not contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("PerGPUHour: %v", err)
			}
			if math.Abs(got-tt.want) > 1e-12*tt.want {
				t.Errorf("PerGPUHour = %.12g, want %.12g", got, tt.want)
			}
		})
	}
	// The worked example of the Azure reservation, to the digit.
	got, err := normalize.PerGPUHour(obs(551221, pricewatch.PerTerm, pricewatch.ModeReserved1Y, false, 8))
	if err != nil || math.Abs(got-7.865596) > 5e-7 {
		t.Errorf("Azure 551221 per 1y term for 8 GPUs = %v, %v; want 7.865596…", got, err)
	}
}

func FuzzPerGPUHour(f *testing.F) {
	seeds := []struct {
		price  float64
		unit   string
		mode   string
		perGPU bool
		gpus   int
	}{
		{2.49, "hour", "ondemand", true, 1},
		{32.77, "hour", "spot", false, 8},
		{48, "day", "ondemand", true, 0},
		{168, "week", "weekly", false, 2},
		{1460, "month", "monthly", true, 0},
		{551221, "term", "reserved-1y", false, 8},
		{26280, "term", "reserved-3y", true, 0},
		{1, "term", "ondemand", true, 1},
		{1, "", "", true, 0},
		{0, "hour", "ondemand", true, 1},
		{-3, "hour", "ondemand", true, 1},
		{math.NaN(), "hour", "ondemand", true, 1},
		{math.Inf(1), "day", "ondemand", false, 2},
		{math.MaxFloat64, "hour", "ondemand", false, 1},
		{math.SmallestNonzeroFloat64, "day", "ondemand", true, 1},
		{1e-300, "term", "reserved-5y", false, math.MaxInt},
		{10, "hour", "ondemand", false, 0},
		{10, "hour", "ondemand", false, -1},
		{10, "fortnight", "ondemand", true, 1},
	}
	for _, s := range seeds {
		f.Add(s.price, s.unit, s.mode, s.perGPU, s.gpus)
	}
	f.Fuzz(func(t *testing.T, price float64, unit, mode string, perGPU bool, gpus int) {
		o := pricewatch.Observation{Price: price, Unit: pricewatch.PriceUnit(unit),
			Mode: pricewatch.Mode(mode), PerGPU: perGPU, GPUCount: gpus}
		got, err := normalize.PerGPUHour(o)
		if err != nil {
			if got != 0 {
				t.Errorf("PerGPUHour(%+v) = %v with error %v; want 0 on error", o, got, err)
			}
			return
		}
		if math.IsNaN(got) || math.IsInf(got, 0) || got <= 0 {
			t.Errorf("PerGPUHour(%+v) = %v, want a finite positive price", o, got)
		}
		if !perGPU && gpus <= 0 {
			t.Errorf("PerGPUHour(%+v) succeeded for an instance price without a GPU count", o)
		}
		if got > price {
			t.Errorf("PerGPUHour(%+v) = %v, more than the stated price %v", o, got, price)
		}
	})
}

// at is the time of the normalized run in the Normalize tests.
var at = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// ob builds a valid on-demand hourly per-GPU observation; tests change it.
func ob(offerID, gpu string, memGB, price float64) pricewatch.Observation {
	return pricewatch.Observation{Source: "vast", OfferID: offerID, GPUName: gpu, GPUMemoryGB: memGB,
		GPUCount: 1, Price: price, Currency: "USD", Unit: pricewatch.PerHour, PerGPU: true,
		Mode: pricewatch.ModeOnDemand}
}

func with(o pricewatch.Observation, f func(*pricewatch.Observation)) pricewatch.Observation {
	f(&o)
	return o
}

func TestCatalog_Normalize(t *testing.T) {
	rel := 0.991
	obs := []pricewatch.Observation{
		with(ob("1001", "A100 SXM4", 80, 1.2), func(o *pricewatch.Observation) {
			o.Reliability = &rel
			o.URL = "https://vast.ai/offer/1001"
		}),
		// Same key as the first: the first one is kept.
		ob("1001", "A100 SXM4", 80, 9.99),
		// Same offer, another mode: another key.
		with(ob("1001", "A100 SXM4", 80, 0.5), func(o *pricewatch.Observation) { o.Mode = pricewatch.ModeSpot }),
		with(ob("azure-nd", "A100 80GB SXM", 80, 551221), func(o *pricewatch.Observation) {
			o.Source, o.Provider, o.Region = "azure", "microsoft", "eastus"
			o.Unit, o.Mode, o.PerGPU, o.GPUCount = pricewatch.PerTerm, pricewatch.ModeReserved1Y, false, 8
			o.Currency = "usd"
		}),
		// Shared and fractional GPUs.
		// A share states the memory of the whole GPU, as every fractional source does.
		with(ob("vgpu", "A10", 24, 0.5), func(o *pricewatch.Observation) { o.GPUFraction = 1.0 / 6 }),
		with(ob("whole", "A10", 24, 1.1), func(o *pricewatch.Observation) { o.GPUFraction = 1 }),
		// Unknown names are kept and counted, with memory rounded.
		ob("2001", "RTX 3060 laptop", 12.1, 0.3),
		ob("2002", "RTX 3060 laptop", 11.9, 0.31),
		ob("2003", "A100 SXM4", 0, 1.1),
		ob("2004", "Mystery GPU", 0, 2),
		// Invalid observations are reported without dropping the others.
		ob("3001", "H100 SXM", 80, 0),
		with(ob("3002", "H100 SXM", 80, 2), func(o *pricewatch.Observation) { o.Currency = "GBP" }),
		with(ob("3003", "H100 SXM", 80, 2), func(o *pricewatch.Observation) { o.Mode = "lifetime" }),
		with(ob("", "H100 SXM", 80, 2), func(o *pricewatch.Observation) {}),
		with(ob("3005", "H100 SXM", 80, 2), func(o *pricewatch.Observation) { o.PerGPU, o.GPUCount = false, 0 }),
		with(ob("3006", "H100 SXM", 80, 2), func(o *pricewatch.Observation) { o.Unit = pricewatch.PerTerm }),
	}
	res := catalog.Normalize(obs, at)

	wantKeys := []string{
		"azure/azure-nd/eastus/reserved-1y",
		"vast/1001/-/ondemand",
		"vast/1001/-/spot",
		"vast/2001/-/ondemand",
		"vast/2002/-/ondemand",
		"vast/2003/-/ondemand",
		"vast/2004/-/ondemand",
		"vast/vgpu/-/ondemand",
		"vast/whole/-/ondemand",
	}
	byKey := map[string]pricewatch.Offer{}
	var keys []string
	for _, o := range res.Offers {
		keys = append(keys, o.Key)
		byKey[o.Key] = o
	}
	if strings.Join(keys, "\n") != strings.Join(wantKeys, "\n") {
		t.Fatalf("offer keys (in order):\n%s\nwant:\n%s", strings.Join(keys, "\n"), strings.Join(wantKeys, "\n"))
	}

	tests := []struct {
		name, key, card, currency, provider string
		price, commitment                   float64
		gpus                                int
		shared                              bool
	}{
		{"DuplicateKeepsFirst", "vast/1001/-/ondemand", "A100-80GB-SXM", "USD", "vast", 1.2, 0, 1, false},
		{"OtherModeOtherKey", "vast/1001/-/spot", "A100-80GB-SXM", "USD", "vast", 0.5, 0, 1, false},
		{"AzureTermLowerCaseCurrency", "azure/azure-nd/eastus/reserved-1y", "A100-80GB-SXM", "USD", "microsoft", 551221.0 / 8760 / 8, 8760, 8, false},
		{"FractionSharedGPU", "vast/vgpu/-/ondemand", "A10", "USD", "vast", 0.5, 0, 1, true},
		{"WholeFractionNotShared", "vast/whole/-/ondemand", "A10", "USD", "vast", 1.1, 0, 1, false},
		{"UnknownKeptWithEmptyCard", "vast/2001/-/ondemand", "", "USD", "vast", 0.3, 0, 1, false},
		{"AmbiguousKeptWithEmptyCard", "vast/2003/-/ondemand", "", "USD", "vast", 1.1, 0, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, ok := byKey[tt.key]
			if !ok {
				t.Fatalf("no offer %s", tt.key)
			}
			if o.Card != tt.card || o.Currency != tt.currency || o.Provider != tt.provider ||
				o.GPUs != tt.gpus || o.Shared != tt.shared || o.CommitmentHours != tt.commitment {
				t.Errorf("offer %s = card %q currency %q provider %q gpus %d shared %v commitment %v; "+
					"want %q %q %q %d %v %v", tt.key, o.Card, o.Currency, o.Provider, o.GPUs, o.Shared,
					o.CommitmentHours, tt.card, tt.currency, tt.provider, tt.gpus, tt.shared, tt.commitment)
			}
			if math.Abs(o.PricePerGPUHour-tt.price) > 1e-12 {
				t.Errorf("offer %s price = %v, want %v", tt.key, o.PricePerGPUHour, tt.price)
			}
			if !o.FirstSeen.Equal(at) || !o.ObservedAt.Equal(at) {
				t.Errorf("offer %s first seen %v observed %v, want both %v", tt.key, o.FirstSeen, o.ObservedAt, at)
			}
		})
	}

	t.Run("FieldsCopied", func(t *testing.T) {
		o := byKey["vast/1001/-/ondemand"]
		if o.Source != "vast" || o.OfferID != "1001" || o.Region != "" || o.GPUName != "A100 SXM4" ||
			o.Mode != pricewatch.ModeOnDemand || o.URL != "https://vast.ai/offer/1001" ||
			o.Reliability == nil || *o.Reliability != rel {
			t.Errorf("offer fields not copied: %+v", o)
		}
		if a := byKey["azure/azure-nd/eastus/reserved-1y"]; a.Region != "eastus" || a.GPUFraction != 0 {
			t.Errorf("azure offer region %q fraction %v", a.Region, a.GPUFraction)
		}
		if v := byKey["vast/vgpu/-/ondemand"]; v.GPUFraction != 1.0/6 {
			t.Errorf("vgpu fraction = %v", v.GPUFraction)
		}
	})

	t.Run("UnknownCounted", func(t *testing.T) {
		want := map[string]int{"RTX 3060 laptop (12 GB)": 2, "A100 SXM4": 1, "Mystery GPU": 1}
		if len(res.Unknown) != len(want) {
			t.Errorf("Unknown = %v, want %v", res.Unknown, want)
		}
		for k, n := range want {
			if res.Unknown[k] != n {
				t.Errorf("Unknown[%q] = %d, want %d (all: %v)", k, res.Unknown[k], n, res.Unknown)
			}
		}
	})

	t.Run("InvalidReported", func(t *testing.T) {
		if res.Invalid == nil {
			t.Fatal("Invalid is nil, want the six invalid observations")
		}
		msg := res.Invalid.Error()
		for _, s := range []string{
			"offer 3001//ondemand", "not a positive number",
			"offer 3002//ondemand", `unknown currency "GBP"`,
			"offer 3003//lifetime", "unknown mode",
			"missing source or offer id",
			"offer 3005//ondemand", "GPU count",
			"offer 3006//ondemand", "no term",
		} {
			if !strings.Contains(msg, s) {
				t.Errorf("Invalid %q does not mention %q", msg, s)
			}
		}
		var joined interface{ Unwrap() []error }
		if !errors.As(res.Invalid, &joined) || len(joined.Unwrap()) != 6 {
			t.Errorf("Invalid holds %v errors, want 6", res.Invalid)
		}
	})
}

func TestCatalog_NormalizeEdgeCases(t *testing.T) {
	tests := []struct {
		name        string
		obs         []pricewatch.Observation
		wantOffers  int
		wantUnknown map[string]int
		wantInvalid bool
	}{
		{"Nil", nil, 0, map[string]int{}, false},
		{"AllInvalid", []pricewatch.Observation{ob("1", "H100 SXM", 80, -1), ob("2", "H100 SXM", 80, math.NaN())}, 0, map[string]int{}, true},
		{"MissingSource", []pricewatch.Observation{with(ob("1", "H100 SXM", 80, 1), func(o *pricewatch.Observation) { o.Source = "" })}, 0, map[string]int{}, true},
		{"CurrencyCaseFolded", []pricewatch.Observation{with(ob("1", "H100 SXM", 80, 1), func(o *pricewatch.Observation) { o.Currency = "cny" })}, 1, map[string]int{}, false},
		{"EmptyCurrency", []pricewatch.Observation{with(ob("1", "H100 SXM", 80, 1), func(o *pricewatch.Observation) { o.Currency = "" })}, 0, map[string]int{}, true},
		// A duplicated unknown offer is one offer: it is counted once.
		{"DuplicateUnknownCountedOnce", []pricewatch.Observation{ob("1", "RTX 3060 laptop", 12, 1), ob("1", "RTX 3060 laptop", 12, 1)}, 1, map[string]int{"RTX 3060 laptop (12 GB)": 1}, false},
		{"SameIDOtherRegions", []pricewatch.Observation{
			with(ob("1", "T4", 16, 1), func(o *pricewatch.Observation) { o.Region = "eastus" }),
			with(ob("1", "T4", 16, 1), func(o *pricewatch.Observation) { o.Region = "westeurope" }),
			ob("1", "T4", 16, 1),
		}, 3, map[string]int{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := catalog.Normalize(tt.obs, at)
			if len(res.Offers) != tt.wantOffers {
				t.Errorf("%d offers, want %d: %+v", len(res.Offers), tt.wantOffers, res.Offers)
			}
			if res.Unknown == nil {
				t.Fatal("Unknown is nil, want an empty map")
			}
			if len(res.Unknown) != len(tt.wantUnknown) {
				t.Errorf("Unknown = %v, want %v", res.Unknown, tt.wantUnknown)
			}
			for k, n := range tt.wantUnknown {
				if res.Unknown[k] != n {
					t.Errorf("Unknown[%q] = %d, want %d", k, res.Unknown[k], n)
				}
			}
			if (res.Invalid != nil) != tt.wantInvalid {
				t.Errorf("Invalid = %v, want invalid %v", res.Invalid, tt.wantInvalid)
			}
		})
	}
}

// A mode written in another case is valid (ParseMode folds it) and must be
// normalized to the canonical mode, or the offer's key, commitment and
// ranking filter disagree with the same offer written in lower case.
func TestCatalog_NormalizeModeCase(t *testing.T) {
	tests := []struct {
		name       string
		mode       pricewatch.Mode
		unit       pricewatch.PriceUnit
		price      float64
		want       pricewatch.Mode
		commitment float64
	}{
		{"OnDemandUpper", "OnDemand", pricewatch.PerHour, 2, pricewatch.ModeOnDemand, 0},
		{"Reserved1YHourly", "Reserved-1Y", pricewatch.PerHour, 2, pricewatch.ModeReserved1Y, 8760},
		{"Reserved1YTerm", " RESERVED-1Y ", pricewatch.PerTerm, 2 * 8760, pricewatch.ModeReserved1Y, 8760},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := with(ob("1", "H100 SXM", 80, tt.price), func(o *pricewatch.Observation) { o.Mode, o.Unit = tt.mode, tt.unit })
			res := catalog.Normalize([]pricewatch.Observation{o}, at)
			if res.Invalid != nil || len(res.Offers) != 1 {
				t.Fatalf("Normalize: %d offers, invalid %v", len(res.Offers), res.Invalid)
			}
			got := res.Offers[0]
			if got.Mode != tt.want || got.CommitmentHours != tt.commitment ||
				got.Key != pricewatch.OfferKey("vast", "1", "", tt.want) || got.PricePerGPUHour != 2 {
				t.Errorf("offer mode %q key %q commitment %v price %v; want %q, %v, 2",
					got.Mode, got.Key, got.CommitmentHours, got.PricePerGPUHour, tt.want, tt.commitment)
			}
		})
	}
}

func TestKnownCurrency(t *testing.T) {
	for _, tt := range []struct {
		name string
		cur  string
		want bool
	}{{"USD", "USD", true}, {"LowerEUR", "eur", true}, {"CNY", "CNY", true}, {"GBP", "GBP", false}, {"Empty", "", false}} {
		t.Run(tt.name, func(t *testing.T) {
			if got := normalize.KnownCurrency(tt.cur); got != tt.want {
				t.Errorf("KnownCurrency(%q) = %v, want %v", tt.cur, got, tt.want)
			}
		})
	}
}
