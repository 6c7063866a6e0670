package alerts_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	file := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read golden (go test -update creates it): %v", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs (go test -update and review the diff):\n%s", file, got)
	}
}

// checkLimits validates every block of a message against Slack's limits.
func checkLimits(t *testing.T, m alerts.Message) {
	t.Helper()
	if m.Text == "" {
		t.Error("no plain-text fallback")
	}
	if len(m.Blocks) > alerts.MaxBlocks {
		t.Errorf("%d blocks, Slack allows %d", len(m.Blocks), alerts.MaxBlocks)
	}
	tables, charts, chars := 0, 0, 0
	for _, b := range m.Blocks {
		switch b := b.(type) {
		case *slack.HeaderBlock:
			if len([]rune(b.Text.Text)) > alerts.MaxHeaderText {
				t.Errorf("header of %d characters", len(b.Text.Text))
			}
		case *slack.SectionBlock:
			if b.Text != nil {
				if err := b.Text.Validate(); err != nil {
					t.Errorf("section text: %v", err)
				}
				chars += len(b.Text.Text)
			}
			if len(b.Fields) > alerts.MaxFields {
				t.Errorf("%d fields", len(b.Fields))
			}
			for _, f := range b.Fields {
				if len([]rune(f.Text)) > alerts.MaxFieldText {
					t.Errorf("field of %d characters", len(f.Text))
				}
				if strings.ContainsAny(f.Text, "<>") {
					t.Errorf("unescaped markup in %q", f.Text)
				}
			}
		case *slack.TableBlock:
			tables++
			if len(b.Rows) > 100 {
				t.Errorf("table of %d rows", len(b.Rows))
			}
		case *slack.DataVisualizationBlock:
			charts++
			if err := b.Validate(); err != nil {
				t.Errorf("chart: %v", err)
			}
		}
	}
	if tables > 1 || charts > 1 {
		t.Errorf("%d tables and %d charts in one message", tables, charts)
	}
	if chars > 12000 {
		t.Errorf("%d characters of block text (msg_blocks_too_long above ~12k)", chars)
	}
	// Every message survives the outbox: stored as JSON and read back.
	sm, err := alerts.EncodeMessage("test", m, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Blocks slack.Blocks `json:"blocks"`
	}
	if err := json.Unmarshal(sm.Payload, &p); err != nil || len(p.Blocks.BlockSet) != len(m.Blocks) {
		t.Errorf("blocks do not survive the outbox: %v (%d of %d)", err, len(p.Blocks.BlockSet), len(m.Blocks))
	}
}

func TestChangeMessage_Golden(t *testing.T) {
	old := &alerts.Choice{Key: "runpod/NVIDIA A100-SXM4-80GB/secure/-/ondemand", Card: "A100-80GB-SXM", Source: "runpod",
		OfferID: "NVIDIA A100-SXM4-80GB/secure", Mode: pricewatch.ModeOnDemand, PricePerGPUHour: 1.74, CostPerMillionTokens: 0.1183, Currency: "USD"}
	cur := &alerts.Choice{Key: "vast/123/Texas, US/ondemand", Card: "RTX-4090", Source: "vast", OfferID: "123", Region: "Texas, US <&>",
		Mode: pricewatch.ModeOnDemand, PricePerGPUHour: 0.29, CostPerMillionTokens: 0.0455, Currency: "USD"}
	for _, c := range []struct {
		name string
		o    alerts.Outcome
	}{
		{"cheaper", alerts.Outcome{Kind: alerts.Cheaper, Old: old, New: cur, ChangePct: -61.54, Confirmations: 2}},
		{"unusual", alerts.Outcome{Kind: alerts.Cheaper, Old: old, New: cur, ChangePct: -61.54, Confirmations: 3, Unusual: true}},
		{"worse", alerts.Outcome{Kind: alerts.Worse, Old: cur, New: old, ChangePct: 160, Confirmations: 2, Vanished: true}},
		{"vanished", alerts.Outcome{Kind: alerts.Worse, Old: old, Confirmations: 2, Vanished: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := alerts.ChangeMessage("lora-7b/ondemand", c.o)
			checkLimits(t, m)
			if strings.ContainsAny(m.Text, "<>") {
				t.Errorf("fallback text not escaped: %q", m.Text)
			}
			golden(t, "change-"+c.name+".json", m)
		})
	}
	h := alerts.HealthMessage("vast", store.Health{ConsecutiveFailures: 3, LastError: "vast: HTTP 500"}, false)
	checkLimits(t, h)
	golden(t, "health.json", h)
	checkLimits(t, alerts.DegradedMessage(9, 16, true))
}

func digestData(watches int) alerts.DigestData {
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	d := alerts.DigestData{Now: now, Currency: "USD", New: 12, Vanished: 3,
		Data: alerts.DataDates{OffersFrom: now.Add(-3 * time.Hour), OffersTo: now.Add(-time.Hour), FXDate: "2026-11-27"}}
	for i := range watches {
		best := &alerts.Choice{Key: fmt.Sprintf("vast/%d", i), Card: "RTX-4090", Source: "vast", OfferID: fmt.Sprint(13489095 + i),
			Mode: pricewatch.ModeOnDemand, PricePerGPUHour: 0.168, CostPerMillionTokens: 0.0264 + float64(i)/1000, Currency: "USD"}
		wd := alerts.WatchDigest{Watch: fmt.Sprintf("lora-7b/w%02d", i), Best: best,
			// The CNY index's 1.98 CNY at 6.8095 CNY/EUR and 1.0163 USD/EUR.
			Reference: &alerts.ReferenceLine{Card: "RTX-4090", Source: "cny-index", OfferID: "RTX 4090@autodl", PricePerGPUHour: 1.98 / 6.8095 * 1.0163, Currency: "USD"}}
		for j := range 3 {
			r := *best
			r.Card, r.CostPerMillionTokens = []string{"RTX-3090", "A40", "L40S"}[j], best.CostPerMillionTokens*(1.1+float64(j)/10)
			wd.RunnersUp = append(wd.RunnersUp, &r)
		}
		c24, c7 := -1.5, -4.25
		wd.Change24h, wd.Change7d = &c24, &c7
		for k := range 7 {
			v := 0.03 - float64(k)/1000
			if k == 2 {
				v = math.NaN() // a day without data
			}
			wd.Daily = append(wd.Daily, v)
		}
		d.Watches = append(d.Watches, wd)
	}
	d.Moves = []alerts.Move{{Key: "runpod/x", Card: "H100-80GB-SXM", Source: "runpod", Old: 2.99, New: 2.49, ChangePct: -16.7, Currency: "USD"}}
	d.Sources = []alerts.SourceLine{{Name: "runpod", Status: "ok"}, {Name: "vast", Status: "failing", Note: "vast: HTTP 500 <html>"},
		{Name: "gcp", Status: "disabled", Note: "needs PRICEWATCH_GCP_API_KEY"}}
	return d
}

func TestDigestMessages_GoldenAndLimits(t *testing.T) {
	msgs := alerts.DigestMessages(digestData(3))
	if len(msgs) != 1 {
		t.Fatalf("a small digest takes %d messages", len(msgs))
	}
	checkLimits(t, msgs[0])
	for _, want := range []string{"lora-7b/w00: RTX-4090 at 0.0264 USD per million tokens", "24 h -1.5%", "12 new offers, 3 vanished",
		"H100-80GB-SXM on runpod: 2.99 USD → 2.49 USD", "vast failing",
		// Shown once however many watches share the card.
		"Reference RTX-4090: 0.296 USD per GPU-hour (cny-index, RTX 4090@autodl)"} {
		if !strings.Contains(msgs[0].Text, want) {
			t.Errorf("fallback lacks %q:\n%s", want, msgs[0].Text)
		}
	}
	if n := strings.Count(msgs[0].Text, "Reference RTX-4090"); n != 1 {
		t.Errorf("reference line %d times", n)
	}
	golden(t, "digest.json", msgs)

	// Forty watches: still within every limit, split over several messages,
	// one table and at most six chart series per message.
	big := alerts.DigestMessages(digestData(40))
	if len(big) < 2 {
		t.Fatalf("a 40-watch digest fits one message?")
	}
	for i, m := range big {
		checkLimits(t, m)
		if !strings.HasPrefix(m.Text, fmt.Sprintf("(%d/%d) ", i+1, len(big))) {
			t.Errorf("message %d is not numbered: %.40q", i, m.Text)
		}
	}
}

// The below-norm message names the card, where it was measured and the
// ratio, escapes what an offer ID may hold, and stays within Slack's
// limits whatever the offer ID's length.
func TestNormMessage(t *testing.T) {
	c := rank.NormCheck{Card: "A100-80GB-SXM", Workload: "lora-7b", Provider: "runpod", Offer: "NVIDIA A100 <SXM4>/community",
		TokensPerSecond: 2645, Norm: 3526.386, NormFrom: "published", Ratio: 2645 / 3526.386, BelowNorm: true}
	m := alerts.NormMessage(c)
	checkLimits(t, m)
	// 2645 / 3526.386 = 0.750: "75%".
	for _, want := range []string{"A100-80GB-SXM", "runpod", "75%", "3526", "published", "&lt;SXM4&gt;"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("text %q lacks %q", m.Text, want)
		}
	}
	c.Offer = strings.Repeat("x", 5000)
	checkLimits(t, alerts.NormMessage(c))
}

// Amounts keep three significant digits below one unit, so no non-zero
// cost reads as zero; zero is written plainly.
func TestMoney(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0 USD"},
		{1234.4, "1234 USD"},
		{12.345, "12.35 USD"},
		{0.5, "0.500 USD"},
		{0.0841, "0.0841 USD"},
		{0.000034, "0.0000340 USD"},
		{-0.0123, "-0.0123 USD"},
		{-2.5, "-2.50 USD"},
	} {
		if got := alerts.Money(c.v, "USD"); got != c.want {
			t.Errorf("Money(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}
