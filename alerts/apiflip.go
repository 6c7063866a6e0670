package alerts

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/slack-go/slack"

	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// Ways to serve a workload: the cheapest inference API selling its model,
// or the cheapest self-hosted option.
const (
	ServeAPI  = "api"
	ServeSelf = "self-hosted"
)

// flipState is an API watch's notification state: the way announced (or
// recorded silently as the baseline) and a candidate flip with the runs
// that confirmed it.
type flipState struct {
	Choice    string    `json:"choice"`
	Candidate string    `json:"candidate,omitempty"`
	Wins      int       `json:"wins,omitempty"`
	WonAt     time.Time `json:"won_at,omitempty"`
}

// APIComparison is a serving workload's cheapest self-hosted option beside
// the cheapest API, in the watch's currency.
type APIComparison struct {
	Self *Choice
	API  rank.APIOption
	// Cheaper is ServeAPI or ServeSelf; BreakEvenTokensPerDay is where
	// the best self-hosted unit starts to pay (nil: never).
	Cheaper               string
	BreakEvenTokensPerDay *float64
}

// compareAPI is the comparison for a watch that includes APIs, or ok false
// when its workload is not a model an API sells.
func compareAPI(snap *rank.Snapshot, w Watch, self *Choice) (APIComparison, bool) {
	if !w.IncludeAPI || w.Job != nil {
		return APIComparison{}, false
	}
	wl, ok := snap.Workload(w.Workload)
	if !ok {
		return APIComparison{}, false
	}
	api, ok := snap.CheapestAPI(wl, w.Currency)
	if !ok {
		return APIComparison{}, false
	}
	c := APIComparison{Self: self, API: api, Cheaper: ServeAPI}
	if self != nil {
		if self.CostPerMillionTokens < api.CostPerMillionTokens {
			c.Cheaper = ServeSelf
		}
		if self.TokensPerSecond > 0 {
			if d, ok := rank.BreakEvenTokensPerDay(self.UnitPricePerHour, self.TokensPerSecond, api.CostPerMillionTokens); ok {
				c.BreakEvenTokensPerDay = &d
			}
		}
	}
	return c, true
}

// evaluateFlip posts once when the cheapest way to serve a watched
// workload moves between an API and self-hosting, after the move held for
// ConfirmRuns evaluations of newer data in a row; the first comparison is
// recorded silently. It returns the messages enqueued.
func (e *Engine) evaluateFlip(snap *rank.Snapshot, w Watch, self *Choice, silenced bool, now time.Time) (int, error) {
	c, ok := compareAPI(snap, w, self)
	if !ok {
		return 0, nil
	}
	ids, err := e.Store.Decide("apiflip:"+w.Name, func(raw []byte) (any, []store.Message, error) {
		var st flipState
		if raw != nil {
			if err := json.Unmarshal(raw, &st); err != nil {
				return nil, nil, fmt.Errorf("decode flip state: %w", err)
			}
		}
		switch {
		case st.Choice == "":
			return flipState{Choice: c.Cheaper}, nil, nil // baseline
		case c.Cheaper == st.Choice:
			if st.Candidate == "" {
				return nil, nil, nil
			}
			return flipState{Choice: st.Choice}, nil, nil // the move reverted
		}
		wins := 1
		if st.Candidate == c.Cheaper {
			wins = st.Wins
			if snap.GeneratedAt.After(st.WonAt) {
				wins++
			}
		}
		if wins < max(w.Rules.ConfirmRuns, 1) {
			return flipState{Choice: st.Choice, Candidate: c.Cheaper, Wins: wins, WonAt: snap.GeneratedAt}, nil, nil
		}
		if silenced {
			return flipState{Choice: c.Cheaper}, nil, nil
		}
		m, err := encode("apiflip", w.Name, FlipMessage(w.Name, c), now)
		return flipState{Choice: c.Cheaper}, []store.Message{m}, err
	})
	return len(ids), err
}

// FlipMessage says that the cheapest way to serve a workload flipped, with
// both figures and the break-even load.
func FlipMessage(watch string, c APIComparison) Message {
	self := "no self-hosted option"
	if c.Self != nil {
		self = fmt.Sprintf("%s at %s", c.Self.Label(), Money(c.Self.CostPerMillionTokens, c.Self.Currency))
	}
	api := fmt.Sprintf("%s (%s via %s) at %s", c.API.Model, c.API.Provider, c.API.Source, Money(c.API.CostPerMillionTokens, c.API.Currency))
	var title, text string
	if c.Cheaper == ServeSelf {
		title = "Self-hosting is now cheaper than the API for " + watch
		text = fmt.Sprintf("%s: self-hosting now costs less per million output tokens than the cheapest API: %s against %s", watch, self, api)
	} else {
		title = "The API is now cheaper than self-hosting for " + watch
		text = fmt.Sprintf("%s: the cheapest API now costs less per million output tokens than self-hosting: %s against %s", watch, api, self)
	}
	if c.BreakEvenTokensPerDay != nil {
		text += fmt.Sprintf("; renting pays from %s output tokens a day", TokenCount(*c.BreakEvenTokensPerDay))
	} else if c.Self != nil {
		text += "; at these prices a full GPU never serves cheaper than the API"
	}
	text += " (" + c.API.Note + ")"
	return Message{Text: esc(text), Blocks: []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, truncate(title, MaxHeaderText), false, false)),
		slack.NewSectionBlock(md(truncate(esc(text), MaxSectionText)), nil, nil),
	}}
}

// TokenCount writes a token count briefly: 950, 12.5k, 3.2M, 1.1B.
func TokenCount(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.3gB", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
