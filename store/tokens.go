package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/pricewatch/pricewatch"
)

// Token prices (per-token API prices) are few (hundreds a source) and kept
// as JSON:
//
//	tokens/    <source> 0x00 <key>       → pricewatch.TokenPrice (the accepted price)
//	tokenhist/ <key> 0x00 <time>         → TokenChange (a row when a price appears,
//	                                        changes or vanishes from a successful run)
var (
	bTokens    = []byte("tokens")
	bTokenHist = []byte("tokenhist")
)

// TokenChange is one row of a token price's history.
type TokenChange struct {
	At    time.Time `json:"at"`
	Event string    `json:"event"` // new, changed, vanished
	// Prices per million tokens (absent for a vanished price).
	InputPerMillion  float64 `json:"input_per_million,omitempty"`
	OutputPerMillion float64 `json:"output_per_million,omitempty"`
	Currency         string  `json:"currency,omitempty"`
}

// applyTokens makes prices the source's current token prices: a history
// row for every price that appears, changes its terms or vanishes; every
// record rewritten (its observed-at moves with the run).
func applyTokens(tx *bolt.Tx, source string, at time.Time, prices []pricewatch.TokenPrice) (int, error) {
	tb, hb := bucket(tx, bTokens), bucket(tx, bTokenHist)
	prefix := append([]byte(source), 0)
	old := map[string]pricewatch.TokenPrice{}
	c := tb.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var t pricewatch.TokenPrice
		if err := json.Unmarshal(v, &t); err != nil {
			return 0, fmt.Errorf("decode token price %q: %w", k, err)
		}
		old[t.Key] = t
	}
	changes := 0
	row := func(key string, ch TokenChange) error {
		changes++
		return putJSON(hb, join([]byte(key), timeKey(at)), ch)
	}
	seen := map[string]bool{}
	for _, t := range prices {
		seen[t.Key] = true
		prev, ok := old[t.Key]
		switch {
		case !ok:
			t.FirstSeen = at
			if err := row(t.Key, TokenChange{At: at, Event: "new", InputPerMillion: t.InputPerMillion, OutputPerMillion: t.OutputPerMillion, Currency: t.Currency}); err != nil {
				return 0, err
			}
		case !prev.SamePrice(t):
			t.FirstSeen = prev.FirstSeen
			if err := row(t.Key, TokenChange{At: at, Event: "changed", InputPerMillion: t.InputPerMillion, OutputPerMillion: t.OutputPerMillion, Currency: t.Currency}); err != nil {
				return 0, err
			}
		default:
			t.FirstSeen = prev.FirstSeen
		}
		t.ObservedAt = at
		if err := putJSON(tb, append(append([]byte(nil), prefix...), t.Key...), t); err != nil {
			return 0, err
		}
	}
	for key := range old {
		if seen[key] {
			continue
		}
		if err := tb.Delete(append(append([]byte(nil), prefix...), key...)); err != nil {
			return 0, err
		}
		if err := row(key, TokenChange{At: at, Event: "vanished"}); err != nil {
			return 0, err
		}
	}
	return changes, nil
}

// TokenPrices returns the stored token prices of a source ("" for every
// source), in key order.
func (s *Store) TokenPrices(source string) ([]pricewatch.TokenPrice, error) {
	var out []pricewatch.TokenPrice
	err := s.view(func(tx *bolt.Tx) error {
		tb := bucket(tx, bTokens)
		if tb == nil { // a file written before token prices, opened read-only
			return nil
		}
		var prefix []byte
		if source != "" {
			prefix = append([]byte(source), 0)
		}
		c := tb.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var t pricewatch.TokenPrice
			if err := json.Unmarshal(v, &t); err != nil {
				return fmt.Errorf("decode token price %q: %w", k, err)
			}
			out = append(out, t)
		}
		return nil
	})
	return out, err
}

// TokenHistory returns a token price's history rows from since on, oldest
// first, at most limit of them (the newest when cut).
func (s *Store) TokenHistory(key string, since time.Time, limit int) ([]TokenChange, error) {
	if since.IsZero() {
		since = time.Unix(0, 0) // a zero time has no Unix nanoseconds
	}
	var out []TokenChange
	err := s.view(func(tx *bolt.Tx) error {
		hb := bucket(tx, bTokenHist)
		if hb == nil {
			return nil
		}
		prefix := append([]byte(key), 0)
		c := hb.Cursor()
		for k, v := c.Seek(append(append([]byte(nil), prefix...), timeKey(since)...)); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var ch TokenChange
			if err := json.Unmarshal(v, &ch); err != nil {
				return fmt.Errorf("decode token history %q: %w", k, err)
			}
			out = append(out, ch)
		}
		return nil
	})
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, err
}
