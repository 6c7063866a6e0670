package pipeline

import (
	"context"
	"fmt"

	"github.com/pricewatch/pricewatch"
)

// SourceCheck is what one source's run yields, as the source check prints
// it: offers, the share mapped to a card, the unknown names with their
// counts, reference rows, offers out of stock and offers whose rentable
// unit is not stated. A token source's per-token prices are no GPU
// offers: they are counted apart (Tokens, TokensMapped to a model preset,
// TokensUnknown the models without one) and stay out of the mapping share.
type SourceCheck struct {
	Source        string         `json:"source"`
	Capture       string         `json:"capture,omitempty"`
	Offers        int            `json:"offers"`
	Mapped        int            `json:"mapped"`
	MappedShare   float64        `json:"mapped_share"`
	Unknown       map[string]int `json:"unknown,omitempty"`
	Tokens        int            `json:"tokens,omitempty"`
	TokensMapped  int            `json:"tokens_mapped,omitempty"`
	TokensUnknown int            `json:"tokens_unknown,omitempty"`
	References    int            `json:"references"`
	Unavailable   int            `json:"unavailable"`
	NoUnit        int            `json:"no_unit"`
	Disabled      string         `json:"disabled,omitempty"`
	Error         string         `json:"error,omitempty"`
}

// Check runs every enabled source once (against whatever the sources point
// at: the bundled fixtures for `sources --check`) and reports what each
// yielded; capture names what a source's fixture is ("" when unknown).
func (p *Pipeline) Check(ctx context.Context, capture func(string) string) ([]SourceCheck, error) {
	sums := p.RunAll(ctx, nil)
	offers, err := p.store.Offers()
	if err != nil {
		return nil, fmt.Errorf("source check: %w", err)
	}
	by := map[string][]pricewatch.Offer{}
	for _, o := range offers {
		by[o.Source] = append(by[o.Source], o)
	}
	var out []SourceCheck
	for _, s := range sums {
		c := SourceCheck{Source: s.Source, Unknown: s.Unknown, Disabled: s.Disabled}
		if capture != nil {
			c.Capture = capture(s.Source)
		}
		if s.Err != nil {
			c.Error = s.Err.Error()
		}
		for _, o := range by[s.Source] {
			c.Offers++
			if o.Card != "" {
				c.Mapped++
			}
			if o.Reference() {
				c.References++
			} else if o.RentUnit == "" {
				c.NoUnit++
			}
			if o.Unavailable() {
				c.Unavailable++
			}
		}
		tokens, err := p.store.TokenPrices(s.Source)
		if err != nil {
			return nil, fmt.Errorf("source check: %w", err)
		}
		for _, t := range tokens {
			// A token price maps to a model preset, as an offer to a card;
			// it is counted apart from the GPU offers.
			c.Tokens++
			if t.Preset != "" {
				c.TokensMapped++
			}
		}
		if c.Tokens > 0 && c.Offers == 0 {
			// The run's unknown names are its models without a preset.
			for _, n := range c.Unknown {
				c.TokensUnknown += n
			}
			c.Unknown = nil
		}
		if c.Offers > 0 {
			c.MappedShare = float64(c.Mapped) / float64(c.Offers)
		}
		out = append(out, c)
	}
	for name, why := range p.disabled {
		out = append(out, SourceCheck{Source: name, Disabled: why})
	}
	return out, nil
}
