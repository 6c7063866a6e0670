// Package alerts decides when the best offer of a watch has changed enough to
// tell Slack, and tells it.
//
// A watch's state is the last best offer that was alerted (or silently
// recorded as the baseline on the first run). Decisions compare the current
// best with that state, never with the last observation, so small moves
// accumulate until they cross the threshold. The order is decide → post →
// record: a failed post leaves the state untouched and the next run decides
// again; a restart reads the recorded state and never repeats a post.
package alerts

import (
	"fmt"
	"time"

	"github.com/pricewatch/pricewatch"
)

// Choice is a watch's best offer at one evaluation.
type Choice struct {
	Key     string          `json:"key"`
	Card    string          `json:"card"`
	Source  string          `json:"source"`
	OfferID string          `json:"offer_id"`
	Region  string          `json:"region,omitempty"`
	Mode    pricewatch.Mode `json:"mode"`
	// PricePerGPUHour and CostPerMillionTokens are in Currency.
	PricePerGPUHour      float64   `json:"price_per_gpu_hour"`
	CostPerMillionTokens float64   `json:"cost_per_million_tokens"`
	Currency             string    `json:"currency"`
	At                   time.Time `json:"at"`
}

// Label names the choice for people: card, source, offer and region.
func (c Choice) Label() string {
	s := fmt.Sprintf("%s on %s (%s", c.Card, c.Source, c.OfferID)
	if c.Region != "" {
		s += ", " + c.Region
	}
	return s + ", " + string(c.Mode) + ")"
}

// State is what is stored per watch.
type State struct {
	Version int     `json:"version"`
	Last    *Choice `json:"last,omitempty"`
	// LastPosted is when Slack last accepted a post for the watch.
	LastPosted time.Time `json:"last_posted,omitzero"`
}

// Kind is the outcome of a decision.
type Kind string

// Decision kinds.
const (
	// Nothing: no baseline to set and nothing worth a post.
	Nothing Kind = "nothing"
	// Baseline: the first best ever seen, recorded silently.
	Baseline Kind = "baseline"
	// Cheaper: a different offer beats the last alerted one by the threshold.
	Cheaper Kind = "cheaper"
	// Vanished: the last alerted offer is gone from the watch's ranking.
	Vanished Kind = "vanished"
)

// Decision says what to do for one watch.
type Decision struct {
	Kind     Kind
	Old, New *Choice
	// ChangePct is the change of cost per million tokens, negative = cheaper.
	ChangePct float64
}

// Post reports whether the decision calls for a Slack message.
func (d Decision) Post() bool { return d.Kind == Cheaper || d.Kind == Vanished }

// Decide compares the current best (nil when the watch has no eligible
// offer) with the last alerted choice. present reports whether an offer key
// is still in the watch's ranking. Both costs are in the same currency.
func Decide(last, cur *Choice, present func(key string) bool, minChangePct float64) Decision {
	switch {
	case last == nil && cur == nil:
		return Decision{Kind: Nothing}
	case last == nil:
		return Decision{Kind: Baseline, New: cur}
	}
	d := Decision{Old: last, New: cur}
	if cur != nil && last.CostPerMillionTokens > 0 {
		d.ChangePct = (cur.CostPerMillionTokens - last.CostPerMillionTokens) / last.CostPerMillionTokens * 100
	}
	if !present(last.Key) {
		if cur != nil && cur.Key == last.Key {
			return Decision{Kind: Nothing}
		}
		d.Kind = Vanished
		return d
	}
	if cur == nil || cur.Key == last.Key {
		d.Kind = Nothing
		return d
	}
	if d.ChangePct <= -minChangePct {
		d.Kind = Cheaper
		return d
	}
	d.Kind = Nothing
	return d
}
