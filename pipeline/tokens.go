package pipeline

import (
	"fmt"
	"math"
	"sort"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/store"
)

// checkTokens judges a token-price run against the source's stored prices
// with the ingest gate's band, as outlier offers are judged: a price moved
// by the band or more (×3 or ×⅓ by default; a unit slip, per token read as
// per thousand, is ×1000) is held back at its accepted level until
// ConfirmRuns runs in a row bring it, and the run says how many are held.
//
// Each price gets its key and the preset whose weights it serves (from the
// Hugging Face id it names; rank.APIPreset), or none: counted as unknown.
func (p *Pipeline) checkTokens(name string, res *scrapers.Result) (store.RunResult, error) {
	rr := store.RunResult{}
	stored, err := p.store.TokenPrices(name)
	if err != nil {
		return rr, err
	}
	prev := make(map[string]pricewatch.TokenPrice, len(stored))
	for _, t := range stored {
		prev[t.Key] = t
	}
	band := p.cfg.Ingest.Band
	confirm := max(p.cfg.Ingest.ConfirmRuns, 1)
	unknown := map[string]int{}
	var out []pricewatch.TokenPrice
	held := 0
	seen := map[string]bool{}
	for _, t := range res.TokenPrices {
		if !validTokenPrice(t) {
			rr.Run.Invalid++
			continue
		}
		t.Source = name
		t.Key = pricewatch.TokenKey(name, t.Provider, t.Model)
		if seen[t.Key] {
			continue
		}
		seen[t.Key] = true
		t.Preset = rank.APIPreset(t.HFID, t.Model)
		if t.Preset == "" {
			unknown[t.Model]++
		}
		old, ok := prev[t.Key]
		if ok && old.Currency == t.Currency {
			if outside(old.OutputPerMillion, t.OutputPerMillion, band) || outside(old.InputPerMillion, t.InputPerMillion, band) {
				runs := 1
				if h := old.Held; h != nil && h.InputPerMillion == t.InputPerMillion && h.OutputPerMillion == t.OutputPerMillion {
					runs = h.Runs + 1
				}
				if runs < confirm {
					held++
					keep := old
					keep.Held = &pricewatch.TokenHeld{InputPerMillion: t.InputPerMillion, OutputPerMillion: t.OutputPerMillion, Runs: runs}
					out = append(out, keep)
					continue
				}
			}
		}
		t.Held = nil
		out = append(out, t)
	}
	if len(out) == 0 {
		return rr, fmt.Errorf("no valid token price among %d parsed", len(res.TokenPrices))
	}
	rr.Run.Unknown = unknown
	rr.Run.Offers = len(out)
	if held > 0 {
		rr.Run.Reason = fmt.Sprintf("%d token price(s) moved by %g× or more: held at their accepted level until %d runs in a row bring them", held, band, confirm)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	rr.Tokens = out
	return rr, nil
}

// outside reports whether v moved from ref by the band or more.
func outside(ref, v, band float64) bool {
	if ref <= 0 || v <= 0 || band <= 1 {
		return ref != v && (ref == 0) != (v == 0)
	}
	r := v / ref
	return r >= band || r <= 1/band
}

// validTokenPrice: prices finite and within reason (no API sells a million
// tokens for more than 10,000).
func validTokenPrice(t pricewatch.TokenPrice) bool {
	ok := func(v float64) bool { return !math.IsNaN(v) && v >= 0 && v <= maxTokenPricePerMillion }
	return t.Model != "" && t.Provider != "" && t.Currency != "" && ok(t.InputPerMillion) && ok(t.OutputPerMillion) &&
		ok(t.CachedInputPerMillion) && t.OutputPerMillion > 0
}

// maxTokenPricePerMillion bounds a plausible token price (USD per million).
const maxTokenPricePerMillion = 10000

// liveTokenPrices are the stored token prices of enabled sources that are
// not stale (a source's StaleAfter since the price was last confirmed).
func (p *Pipeline) liveTokenPrices() ([]pricewatch.TokenPrice, error) {
	cached := p.tokens.Load()
	if cached == nil {
		all, err := p.store.TokenPrices("")
		if err != nil {
			return nil, err
		}
		p.tokens.Store(&all)
		cached = &all
	}
	all := *cached
	now := p.now()
	var out []pricewatch.TokenPrice
	for _, t := range all {
		src, ok := p.cfg.Sources[t.Source]
		if _, off := p.disabled[t.Source]; !ok || !src.Settings.Enabled || off {
			continue
		}
		if lim := src.Settings.StaleAfter; lim > 0 && now.Sub(t.ObservedAt) > lim {
			continue
		}
		out = append(out, t)
	}
	return out, nil
}
