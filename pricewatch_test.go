package pricewatch_test

import (
	"math"
	"testing"

	"github.com/pricewatch/pricewatch"
)

// ecb20220708 are the ECB reference rates of 2022-07-08 (per 1 EUR).
var ecb20220708 = &pricewatch.Rates{Base: "EUR", Date: "2022-07-08",
	Rates: map[string]float64{"USD": 1.0163, "CNY": 6.8095, "JPY": 138.35, "XXX": 0}}

func TestRates_Convert(t *testing.T) {
	tests := []struct {
		name     string
		rates    *pricewatch.Rates
		amount   float64
		from, to string
		want     float64
		wantCode string // "" means success
	}{
		{"USDToCNY", ecb20220708, 1, "USD", "CNY", 6.8095 / 1.0163, ""},
		{"CNYToUSD", ecb20220708, 6.8095, "CNY", "USD", 1.0163, ""},
		{"EURToUSD", ecb20220708, 2, "EUR", "USD", 2.0326, ""},
		{"USDToEUR", ecb20220708, 1.0163, "USD", "EUR", 1, ""},
		{"LowerCaseCodes", ecb20220708, 1, "usd", "eur", 1 / 1.0163, ""},
		{"SameCurrency", ecb20220708, 3.5, "USD", "USD", 3.5, ""},
		{"SameCurrencyOtherCase", ecb20220708, 3.5, "cny", "CNY", 3.5, ""},
		{"SameUnknownCurrency", ecb20220708, 3.5, "GBP", "GBP", 3.5, ""},
		{"NilRatesSameCurrency", nil, 7, "EUR", "eur", 7, ""},
		{"Zero", ecb20220708, 0, "USD", "CNY", 0, ""},

		{"NilRates", nil, 1, "USD", "CNY", 0, pricewatch.EUnavailable},
		{"MissingFrom", ecb20220708, 1, "GBP", "USD", 0, pricewatch.EInvalid},
		{"MissingTo", ecb20220708, 1, "USD", "GBP", 0, pricewatch.EInvalid},
		{"ZeroRateIsMissing", ecb20220708, 1, "XXX", "USD", 0, pricewatch.EInvalid},
		{"EmptyRates", &pricewatch.Rates{Base: "EUR"}, 1, "EUR", "USD", 0, pricewatch.EInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.rates.Convert(tt.amount, tt.from, tt.to)
			if tt.wantCode != "" {
				if err == nil {
					t.Fatalf("Convert(%v %s→%s) = %v, want a %s error", tt.amount, tt.from, tt.to, got, tt.wantCode)
				}
				if code := pricewatch.ErrorCode(err); code != tt.wantCode {
					t.Errorf("error %q has code %q, want %q", err, code, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			if math.Abs(got-tt.want) > 1e-12*math.Max(1, math.Abs(tt.want)) {
				t.Errorf("Convert(%v %s→%s) = %.10g, want %.10g", tt.amount, tt.from, tt.to, got, tt.want)
			}
		})
	}
	// The published cross rate, to the digits the ECB quotes.
	if got, _ := ecb20220708.Convert(1, "USD", "CNY"); math.Round(got*1e5)/1e5 != 6.70029 {
		t.Errorf("1 USD = %v CNY on 2022-07-08, want 6.70029", got)
	}
	// A round trip comes back.
	there, _ := ecb20220708.Convert(123.45, "CNY", "JPY")
	if back, err := ecb20220708.Convert(there, "JPY", "CNY"); err != nil || math.Abs(back-123.45) > 1e-9 {
		t.Errorf("CNY→JPY→CNY round trip = %v, %v", back, err)
	}
}

func TestRates_Has(t *testing.T) {
	var none *pricewatch.Rates
	tests := []struct {
		name  string
		rates *pricewatch.Rates
		cur   string
		want  bool
	}{
		{"Base", ecb20220708, "EUR", true},
		{"Listed", ecb20220708, "USD", true},
		{"LowerCase", ecb20220708, "cny", true},
		{"Missing", ecb20220708, "GBP", false},
		{"ZeroRate", ecb20220708, "XXX", false},
		{"NilRates", none, "USD", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rates.Has(tt.cur); got != tt.want {
				t.Errorf("Has(%q) = %v, want %v", tt.cur, got, tt.want)
			}
		})
	}
}
