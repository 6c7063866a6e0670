// Package openrouter reads OpenRouter's public model list
// (GET https://openrouter.ai/api/v1/models, no key): each model's price
// per prompt (input) and completion (output) token in USD, and the
// Hugging Face repository it serves where it names one. It yields token
// prices, never GPU offers.
package openrouter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// Provider names OpenRouter's own list price: the router picks the
// endpoint that serves a request.
const Provider = "openrouter"

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "openrouter",
		Description: "OpenRouter model list (public): per-token API prices of the models it routes",
		Auth:        "none",
		Yields:      "token prices: USD per prompt and completion token (strings) × 1e6 per million; the Hugging Face repository served; no GPU offers",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://openrouter.ai/api/v1/models",
			Schedule:   "25 */3 * * *",
			StaleAfter: 8 * time.Hour,
			Timeout:    30 * time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the OpenRouter source.
type Scraper struct{}

// Scrape fetches the model list once and parses it.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	c, err := env.NewCollector(ctx)
	if err != nil {
		return scrapers.Result{}, err
	}
	resp, err := env.Fetch(ctx, c, scrapers.Request{Method: http.MethodGet, URL: env.URL(), Header: http.Header{"Accept": {"application/json"}}})
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("openrouter: %w", err)
	}
	prices, err := Parse(resp.Body, env.URL())
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("openrouter: %w", err)
	}
	env.AddOffers(len(prices))
	return scrapers.Result{TokenPrices: prices}, nil
}

// model is the part of a list entry pricewatch reads.
type model struct {
	ID            string  `json:"id"`
	HFID          *string `json:"hugging_face_id"`
	ContextLength int     `json:"context_length"`
	Pricing       struct {
		Prompt         *string `json:"prompt"`
		Completion     *string `json:"completion"`
		InputCacheRead *string `json:"input_cache_read"`
	} `json:"pricing"`
}

// Parse reads a model list: {"data": [...]}. A model is kept when it has a
// prompt and a completion price per token, both at least 0 and the
// completion above 0. Left out: ":free" variants (free, rate-limited: not
// a price a load can be bought at), ":batch" ones (asynchronous batches,
// not serving), "~" aliases (a "latest" pointer to another entry), and
// "-1" prices (a router whose price depends on the model it picks).
// Entries without an id are skipped, not guessed; a list that does not
// decode, or has no priced model, is an error (a layout change).
func Parse(body []byte, url string) ([]pricewatch.TokenPrice, error) {
	var doc struct {
		Data *[]model `json:"data"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("decode JSON: %w", err)
	}
	if doc.Data == nil {
		return nil, errors.New(`no "data" list: layout change`)
	}
	var out []pricewatch.TokenPrice
	bad := 0
	for _, m := range *doc.Data {
		if m.ID == "" {
			bad++
			continue
		}
		if skipped(m.ID) {
			continue
		}
		in, ok1 := perMillion(m.Pricing.Prompt)
		outP, ok2 := perMillion(m.Pricing.Completion)
		if !ok1 || !ok2 || outP <= 0 {
			continue
		}
		t := pricewatch.TokenPrice{Source: "openrouter", Provider: Provider, Model: m.ID, InputPerMillion: in,
			OutputPerMillion: outP, Currency: "USD", ContextLength: m.ContextLength, URL: url}
		if c, ok := perMillion(m.Pricing.InputCacheRead); ok {
			t.CachedInputPerMillion = c
		}
		if m.HFID != nil {
			t.HFID = strings.TrimSpace(*m.HFID)
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no priced model among %d entries (%d unreadable): layout change", len(*doc.Data), bad)
	}
	return out, nil
}

// skipped reports whether a model id is a variant or alias that is not a
// price to serve a load at.
func skipped(id string) bool {
	return strings.HasSuffix(id, ":free") || strings.HasSuffix(id, ":batch") || strings.HasPrefix(id, "~")
}

// perMillion reads a price per token (a decimal string, USD) as a price
// per million tokens; false when absent, unreadable or negative.
func perMillion(s *string) (float64, bool) {
	if s == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(shift6(strings.TrimSpace(*s)), 64)
	if err != nil || v < 0 || v != v {
		return 0, false
	}
	return v, true
}

// shift6 multiplies a plain decimal string by 1e6 by moving its point, so
// "0.00000017" reads as exactly 0.17 per million (a float multiply would
// give 0.16999999999999998). Other forms are left to ParseFloat's
// exponent: "1.7e-7" becomes "1.7e-7e6"-free "1.7e-1".
func shift6(s string) string {
	if s == "" || strings.ContainsAny(s, "eE") {
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			return strconv.FormatFloat(v*1e6, 'g', -1, 64)
		}
		return s
	}
	sign := ""
	if s[0] == '-' || s[0] == '+' {
		sign, s = s[:1], s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	for len(frac) < 6 {
		frac += "0"
	}
	return sign + whole + frac[:6] + "." + frac[6:] + "0"
}
