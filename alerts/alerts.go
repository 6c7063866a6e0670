// Package alerts decides when to tell Slack that the best offer of a watch
// changed, and delivers what it decided through a durable outbox.
//
// Rules (CONVENTIONS.md alert rules): a new best must win ConfirmRuns
// evaluations in a row; it is posted only when it beats the last *notified*
// best by MinChangePct per million tokens or MinChangeAbs per GPU-hour, at
// most once per Cooldown (changes inside the window merge into the next
// post, which reports last notified → current); a drop of more than
// UnusualDropPct against the watch's 7-day median, or a price below Floor,
// needs UnusualConfirmRuns and is labelled unusual; a worse best is posted
// only when Worse is "post", and otherwise becomes the reference silently
// (the digest shows it), so the next real change is measured from the
// real level, not from one that no longer exists. A best that returns
// near a level the reference silently moved away from (within
// RevertWindow) is a revert, not news: it moves the reference back
// silently. So a glitch that reverts never stays the reference and lets
// the next real change through. Silenced watches advance silently. Vanished
// offers of a source failing for 3 runs cause no post; while more than half
// the sources fail, change posts pause. Decide is pure: state and inputs in,
// state and outcome out; the engine commits the new state and the messages
// it enqueues in one store transaction, so a restart never repeats a post.
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
	// GPUs is the GPUs the choice rents (a fixed instance whole).
	GPUs int `json:"gpus,omitempty"`
	// PricePerGPUHour and CostPerMillionTokens are in Currency.
	PricePerGPUHour      float64 `json:"price_per_gpu_hour"`
	CostPerMillionTokens float64 `json:"cost_per_million_tokens"`
	// UnitPricePerHour and TokensPerSecond are the rental's (a ranked
	// entry's; 0 for a plan's choice): what a break-even load needs.
	UnitPricePerHour float64   `json:"unit_price_per_hour,omitempty"`
	TokensPerSecond  float64   `json:"tokens_per_second,omitempty"`
	Currency         string    `json:"currency"`
	At               time.Time `json:"at"`
}

// Label names the choice for people: card (with the GPUs rented when more
// than one), source, offer and region.
func (c Choice) Label() string {
	card := c.Card
	if c.GPUs > 1 {
		card = fmt.Sprintf("%d × %s", c.GPUs, c.Card)
	}
	s := fmt.Sprintf("%s on %s (%s", card, c.Source, c.OfferID)
	if c.Region != "" {
		s += ", " + c.Region
	}
	return s + ", " + string(c.Mode) + ")"
}

// Worse policies.
const (
	WorseDigest = "digest" // a worse best shows in the digest only
	WorsePost   = "post"   // a worse best beyond the margin is posted
)

// Rules are a watch's thresholds.
type Rules struct {
	ConfirmRuns        int           `yaml:"confirm_runs" json:"confirm_runs"`
	MinChangePct       float64       `yaml:"min_change_pct" json:"min_change_pct"`
	MinChangeAbs       float64       `yaml:"min_change_abs" json:"min_change_abs"`
	Cooldown           time.Duration `yaml:"cooldown" json:"cooldown"`
	Worse              string        `yaml:"worse" json:"worse"`
	UnusualDropPct     float64       `yaml:"unusual_drop_pct" json:"unusual_drop_pct"`
	UnusualConfirmRuns int           `yaml:"unusual_confirm_runs" json:"unusual_confirm_runs"`
	// Floor is a price per GPU-hour (watch currency) below which a new
	// best is unusual; 0: none.
	Floor float64 `yaml:"floor" json:"floor"`
}

// DefaultRules are the recommended defaults.
func DefaultRules() Rules {
	return Rules{ConfirmRuns: 2, MinChangePct: 3, MinChangeAbs: 0.05, Cooldown: 30 * time.Minute,
		Worse: WorseDigest, UnusualDropPct: 50, UnusualConfirmRuns: 3}
}

// State is what is stored per watch.
type State struct {
	Version int `json:"version"`
	// Notified is the reference a change is measured from: the last best
	// announced, the silent start-up baseline, or the level a worse best
	// held for the digest or a revert moved it to silently.
	Notified *Choice `json:"notified,omitempty"`
	// Posted is the last best announced (or the start-up baseline) while
	// Notified has silently moved away from it; Prior is the reference
	// before the last silent move; Moved is when that move was. A best that
	// returns near either within RevertWindow of Moved is a revert.
	Posted *Choice   `json:"posted,omitempty"`
	Prior  *Choice   `json:"prior,omitempty"`
	Moved  time.Time `json:"moved,omitzero"`
	// Candidate is the best whose change (CandidateDir: better or worse
	// than Notified, beyond the margin) has qualified Wins evaluations in a
	// row; a change must keep qualifying to be confirmed, so neither a
	// flapping best nor a one-scrape glitch of the incumbent ever posts.
	Candidate    *Choice `json:"candidate,omitempty"`
	CandidateDir string  `json:"candidate_dir,omitempty"`
	Wins         int     `json:"wins"`
	// WonAt is the latest run, of the candidate's source or the
	// reference's, that the last win counted: a win counts only when one of
	// those sources ran again, so other sources' runs (which re-evaluate
	// every watch) never confirm a one-scrape glitch.
	WonAt      time.Time `json:"won_at,omitzero"`
	LastPosted time.Time `json:"last_posted,omitzero"`
}

// Input is what one evaluation knows besides the state.
type Input struct {
	Now     time.Time
	Current *Choice
	// Present reports whether an offer key is still in the watch's ranking.
	Present func(key string) bool
	// Median7d is the watch's median best cost over 7 days (0: unknown).
	Median7d float64
	// Silenced: a silence covers the watch. Inhibited: the notified best's
	// source has failed 3 runs in a row. Paused: data quality is degraded.
	Silenced, Inhibited, Paused bool
	// LastRun is when a source's last run started (nil: every evaluation
	// counts as a run).
	LastRun func(source string) time.Time
}

// runMark is the latest run of the sources that produced a change: the
// current best's and the reference's.
func (in Input) runMark(ref, cur *Choice) time.Time {
	if in.LastRun == nil {
		return in.Now
	}
	var t time.Time
	for _, c := range []*Choice{ref, cur} {
		if c != nil {
			if r := in.LastRun(c.Source); r.After(t) {
				t = r
			}
		}
	}
	return t
}

// Kind is the outcome of a decision.
type Kind string

// Outcome kinds.
const (
	Nothing     Kind = "nothing"     // no change worth a post
	Baseline    Kind = "baseline"    // first best, recorded silently
	Unconfirmed Kind = "unconfirmed" // a change that has not won enough runs yet
	Cheaper     Kind = "cheaper"     // posted: a better best
	Worse       Kind = "worse"       // posted: the best got worse (Worse = post)
	Held        Kind = "held"        // a worse best kept for the digest; it becomes the reference
	Reverted    Kind = "reverted"    // the best returned near a level it left silently; no post
	Silenced    Kind = "silenced"    // state advanced, no post
	Cooling     Kind = "cooldown"    // a post waits for the cooldown to end
	Inhibited   Kind = "inhibited"   // vanished offers of a failing source
	Paused      Kind = "paused"      // data quality degraded
)

// Outcome is a decision.
type Outcome struct {
	Kind  Kind
	State State
	// For posts: last notified → current, the change of cost per million
	// tokens in percent, whether the drop is unusual and how many
	// evaluations confirmed it.
	Old, New      *Choice
	ChangePct     float64
	Unusual       bool
	Confirmations int
	Vanished      bool
}

// Post reports whether the outcome is a Slack post.
func (o Outcome) Post() bool { return o.Kind == Cheaper || o.Kind == Worse }

// RevertWindow is how long after a silent move of the reference a return
// near the level it left counts as a revert (the 7 days of the median).
const RevertWindow = 7 * 24 * time.Hour

// compare says whether cur is better or worse than ref beyond the margin
// (a vanished ref makes any dearer best worse) and by how many percent of
// the cost per million tokens it changed.
func compare(ref, cur *Choice, r Rules, vanished bool) (pct float64, better, worse bool) {
	if ref.CostPerMillionTokens > 0 {
		pct = (cur.CostPerMillionTokens - ref.CostPerMillionTokens) / ref.CostPerMillionTokens * 100
	}
	absDrop := ref.PricePerGPUHour - cur.PricePerGPUHour
	better = cur.CostPerMillionTokens < ref.CostPerMillionTokens &&
		(-pct >= r.MinChangePct || r.MinChangeAbs > 0 && absDrop >= r.MinChangeAbs)
	worse = !better && cur.CostPerMillionTokens > ref.CostPerMillionTokens &&
		(vanished || pct >= r.MinChangePct || r.MinChangeAbs > 0 && -absDrop >= r.MinChangeAbs)
	return pct, better, worse
}

// near reports whether cur is within the margin of a level (nil: no).
func near(level, cur *Choice, r Rules) bool {
	if level == nil || cur == nil {
		return false
	}
	_, better, worse := compare(level, cur, r, false)
	return !better && !worse
}

// settle makes cur the reference after a post (or a silenced one): the
// levels left silently are forgotten.
func settle(st *State, cur *Choice) {
	st.Notified, st.Posted, st.Prior, st.Moved = cur, nil, nil, time.Time{}
	st.Candidate, st.CandidateDir, st.Wins = nil, "", 0
}

// Decide applies the rules to one evaluation of a watch.
func Decide(st State, in Input, r Rules) Outcome {
	st.Version = 1
	cur := in.Current
	out := Outcome{State: st}
	last := st.Notified
	if last == nil {
		out.State.Candidate, out.State.CandidateDir, out.State.Wins = nil, "", 0
		if cur == nil {
			out.Kind = Nothing
			return out
		}
		settle(&out.State, cur)
		out.Kind, out.New = Baseline, cur
		return out
	}
	vanished := in.Present != nil && !in.Present(last.Key)
	out.Old, out.New, out.Vanished = last, cur, vanished
	var better, worse bool
	if cur != nil {
		out.ChangePct, better, worse = compare(last, cur, r, vanished)
	} else {
		worse = vanished
	}
	if !better && !worse {
		out.State.Candidate, out.State.CandidateDir, out.State.Wins = nil, "", 0
		out.Kind = Nothing
		return out
	}
	// Confirmation: the same change qualifying in consecutive evaluations.
	dir, key := "better", ""
	if worse {
		dir = "worse"
	}
	if cur != nil {
		key = cur.Key
	}
	wins, mark := 1, in.runMark(last, cur)
	if st.Candidate != nil && st.Candidate.Key == key && st.CandidateDir == dir {
		wins = st.Wins
		if mark.After(st.WonAt) {
			wins++ // a new run of the sources behind the change
		}
	}
	cand := cur
	if cand == nil {
		cand = &Choice{}
	}
	out.State.Candidate, out.State.CandidateDir, out.State.Wins, out.State.WonAt = cand, dir, wins, mark
	need := max(r.ConfirmRuns, 1)
	if better {
		out.Unusual = in.Median7d > 0 && cur.CostPerMillionTokens < in.Median7d*(1-r.UnusualDropPct/100) ||
			r.Floor > 0 && cur.PricePerGPUHour < r.Floor
		if out.Unusual {
			need = max(r.UnusualConfirmRuns, need)
		}
	}
	if wins < need {
		out.Kind = Unconfirmed
		return out
	}
	out.Confirmations = wins
	switch {
	case worse && vanished && in.Inhibited:
		out.Kind = Inhibited
		return out
	case in.Paused:
		out.Kind = Paused
		return out
	case cur != nil && in.Now.Sub(st.Moved) <= RevertWindow && (near(st.Posted, cur, r) || near(st.Prior, cur, r)):
		// Back near a level the reference left silently: the move it
		// made (a glitch, a vanished offer) reverted; nothing is news.
		out.Kind = Reverted
		if near(st.Posted, cur, r) {
			settle(&out.State, cur)
			return out
		}
		out.State.Notified, out.State.Prior, out.State.Moved = cur, nil, in.Now
		out.State.Candidate, out.State.CandidateDir, out.State.Wins = nil, "", 0
		return out
	case worse && r.Worse != WorsePost:
		// Shown in the digest only, and from now on the reference: a
		// reference that no longer exists (the incumbent vanished or a
		// glitch ended) would otherwise swallow every real change above it.
		out.Kind = Held
		if cur != nil {
			if st.Posted == nil || in.Now.Sub(st.Moved) > RevertWindow {
				out.State.Posted = last
			}
			out.State.Notified, out.State.Prior, out.State.Moved = cur, last, in.Now
			out.State.Candidate, out.State.CandidateDir, out.State.Wins = nil, "", 0
		}
		return out
	case in.Silenced:
		out.Kind = Silenced
		settle(&out.State, cur)
		return out
	case !st.LastPosted.IsZero() && in.Now.Sub(st.LastPosted) < r.Cooldown:
		out.Kind = Cooling
		return out
	}
	out.Kind = Cheaper
	if worse {
		out.Kind = Worse
	}
	settle(&out.State, cur)
	out.State.LastPosted = in.Now
	return out
}
