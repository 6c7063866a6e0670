package alerts

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackutilsx"

	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// Message is one Slack message: Block Kit blocks and the plain-text
// fallback shown in notifications and to screen readers.
type Message struct {
	Text   string        `json:"text"`
	Blocks []slack.Block `json:"blocks"`
}

// Slack's documented limits, checked by the message tests.
const (
	MaxBlocks      = 50
	MaxSectionText = 3000
	MaxHeaderText  = 150
	MaxFieldText   = 2000
	MaxFields      = 10
)

func esc(s string) string { return slackutilsx.EscapeMessage(s) }

// Money formats an amount with sensible precision for prices and costs:
// whole units from 100, cents from 1, else three significant digits, so a
// non-zero amount never reads as 0.0000 and zero reads as 0.
func Money(v float64, cur string) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0 " + cur
	case a >= 100:
		return money(v, 0, cur)
	case a >= 1:
		return money(v, 2, cur)
	}
	return money(v, 2-int(math.Floor(math.Log10(a))), cur)
}

// money is v with prec decimals and the currency (what fmt's "%.*f %s"
// prints, without fmt: the dashboard prints three a row).
func money(v float64, prec int, cur string) string {
	var buf [40]byte
	b := strconv.AppendFloat(buf[:0], v, 'f', prec, 64)
	b = append(b, ' ')
	return string(append(b, cur...))
}

// ChangeMessage renders a posted decision for a watch: the workload, last
// notified → current offer and card, cost per million tokens old → new and
// the change, how many checks confirmed it, and an "unusual" label.
func ChangeMessage(watch string, o Outcome) Message {
	old, cur := o.Old, o.New
	var title, text string
	switch {
	case o.Kind == Cheaper:
		title = "Cheaper GPU option for " + watch
		text = fmt.Sprintf("%s: new best %s at %s per million tokens (was %s with %s, %+.1f%%)",
			watch, cur.Label(), Money(cur.CostPerMillionTokens, cur.Currency), Money(old.CostPerMillionTokens, old.Currency), old.Label(), o.ChangePct)
	case cur == nil:
		title = "Best GPU option for " + watch + " is gone"
		text = fmt.Sprintf("%s: the best offer %s (%s per million tokens) vanished and no offer is left",
			watch, old.Label(), Money(old.CostPerMillionTokens, old.Currency))
	default:
		title = "GPU prices rose for " + watch
		what := "rose"
		if o.Vanished {
			what = "vanished"
		}
		text = fmt.Sprintf("%s: the best offer %s %s; now %s at %s per million tokens (was %s, %+.1f%%)",
			watch, old.Label(), what, cur.Label(), Money(cur.CostPerMillionTokens, cur.Currency), Money(old.CostPerMillionTokens, old.Currency), o.ChangePct)
	}
	if o.Unusual {
		title = "Unusual drop: " + title
		text += " — unusual: more than the usual drop, confirmed over " + fmt.Sprint(o.Confirmations) + " checks; check before acting"
	}
	blocks := []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, truncate(title, MaxHeaderText), false, false)),
	}
	fields := []*slack.TextBlockObject{
		md("*Watch*\n" + esc(watch)),
		md(fmt.Sprintf("*Cost per million tokens*\n%s → %s", costOf(old), costOf(cur))),
		md("*Was*\n" + esc(old.Label())),
		md("*Now*\n" + nowLabel(cur)),
	}
	if cur != nil {
		fields = append(fields,
			md(fmt.Sprintf("*Change*\n%+.1f%%", o.ChangePct)),
			md(fmt.Sprintf("*Price per GPU-hour*\n%s → %s", Money(old.PricePerGPUHour, old.Currency), Money(cur.PricePerGPUHour, cur.Currency))))
	}
	blocks = append(blocks, slack.NewSectionBlock(nil, fields, nil))
	note := fmt.Sprintf("confirmed over %d checks · pricewatch · cost = price per GPU-hour × 10⁶ / (tokens/s × 3600)", o.Confirmations)
	if o.Unusual {
		note = ":warning: *unusual* — a drop this large is often a parser or unit error; " + note
	}
	blocks = append(blocks, slack.NewContextBlock("", md(note)))
	return Message{Text: esc(text), Blocks: blocks}
}

// HealthMessage tells that a source has been failing (or recovered).
func HealthMessage(source string, h store.Health, recovered bool) Message {
	var title, text string
	if recovered {
		title = "Source " + source + " recovered"
		text = fmt.Sprintf("Source %s recovered: %d offers in the last run", source, h.Offers)
	} else {
		title = "Source " + source + " is failing"
		text = fmt.Sprintf("Source %s has failed %d runs in a row; its last good offers stay until they go stale, and their vanishing posts nothing. Last error: %s",
			source, h.ConsecutiveFailures, h.LastError)
	}
	return Message{Text: esc(text), Blocks: []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, truncate(title, MaxHeaderText), false, false)),
		slack.NewSectionBlock(md(truncate(esc(text), MaxSectionText)), nil, nil),
	}}
}

// HoldMessage tells, once, that a source's runs are held at a level that
// waits for an operator: what moved, and how to accept it.
func HoldMessage(source string, h store.Health) Message {
	title := "Source " + source + " is held"
	// The reason says what moved and how to accept it from the CLI.
	label := ""
	if h.Pending != nil {
		label = h.Pending.Label()
	}
	text := fmt.Sprintf("Source %s is held: %s (they go stale if this lasts). Over the API: POST /v1/sources/%s/accept?level=%s with the API token; a level that moved since this message is refused and announced again.",
		source, h.HoldReason, source, url.QueryEscape(label))
	return Message{Text: esc(text), Blocks: []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, truncate(title, MaxHeaderText), false, false)),
		slack.NewSectionBlock(md(truncate(esc(text), MaxSectionText)), nil, nil),
	}}
}

// DisputeMessage tells, once, that a source's applied level lies beyond
// the band against the market that formed since it was anchored: its
// offers stay ranked; how to accept the level, or what to do if it is
// wrong.
func DisputeMessage(source string, d store.Dispute) Message {
	title := "Source " + source + " disagrees with the market"
	text := fmt.Sprintf("Source %s disagrees with the market: %s. Over the API: POST /v1/sources/%s/accept?level=%s with the API token.",
		source, d.Reason(source), source, url.QueryEscape(d.Level().Label()))
	return Message{Text: esc(text), Blocks: []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, truncate(title, MaxHeaderText), false, false)),
		slack.NewSectionBlock(md(truncate(esc(text), MaxSectionText)), nil, nil),
	}}
}

// NormMessage tells that a measurement on a provider (or one offer) fell
// more than 20% below the card's norm: the sign of a throttled, shared or
// refurbished card. The offer stays ranked, at the throughput measured.
func NormMessage(c rank.NormCheck) Message {
	where := c.Provider
	if c.Offer != "" {
		where += " offer " + c.Offer
	}
	title := fmt.Sprintf("%s on %s measured below norm", c.Card, where)
	text := fmt.Sprintf("%s on %s runs %s at %.0f tok/s per GPU, %.0f%% of the card's norm of %.0f (%s). "+
		"A throttled, shared or refurbished card looks like this; check the rental. Its offers stay ranked at the measured figure.",
		c.Card, where, c.Workload, c.TokensPerSecond, 100*c.Ratio, c.Norm, c.NormFrom)
	return Message{Text: esc(text), Blocks: []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, truncate(title, MaxHeaderText), false, false)),
		slack.NewSectionBlock(md(truncate(esc(text), MaxSectionText)), nil, nil),
	}}
}

// NewNamesMessage tells that a source reported GPU names no alias maps and
// no run of it reported before: each with its offers, when the run that
// first reported them started, and what to do so that they are ranked.
// All names of one run go in one message (at most maxNamesListed named).
func NewNamesMessage(source string, names []NewName) Message {
	var b strings.Builder
	for i, n := range names {
		if i == maxNamesListed {
			fmt.Fprintf(&b, "; and %d more (GET /v1/sources)", len(names)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(n.Name)
		if n.Offers == 1 {
			b.WriteString(", 1 offer")
		} else {
			fmt.Fprintf(&b, ", %d offers", n.Offers)
		}
	}
	title, subject := "New GPU name at "+source, "it"
	if len(names) > 1 {
		title, subject = "New GPU names at "+source, "they"
	}
	first := ""
	if len(names) > 0 {
		first = names[0].FirstSeen.UTC().Format("2006-01-02 15:04 UTC")
	}
	text := fmt.Sprintf("%s: %s, first seen %s; add an alias or a card so %s can be ranked", title, b.String(), first, subject)
	return Message{Text: esc(text), Blocks: []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, truncate(title, MaxHeaderText), false, false)),
		slack.NewSectionBlock(md(truncate(esc(text), MaxSectionText)), nil, nil),
	}}
}

// DegradedMessage tells that more than half the sources fail (change posts
// pause) or that it ended.
func DegradedMessage(failing, total int, degraded bool) Message {
	text := fmt.Sprintf("Data quality degraded: %d of %d sources failing; change alerts are paused until most sources recover", failing, total)
	title := "Data quality degraded"
	if !degraded {
		text = fmt.Sprintf("Data quality restored: %d of %d sources failing; change alerts resume", failing, total)
		title = "Data quality restored"
	}
	return Message{Text: text, Blocks: []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, title, false, false)),
		slack.NewSectionBlock(md(text), nil, nil),
	}}
}

func nowLabel(c *Choice) string {
	if c == nil {
		return "no offer left"
	}
	return esc(c.Label())
}

func costOf(c *Choice) string {
	if c == nil {
		return "—"
	}
	return Money(c.CostPerMillionTokens, c.Currency)
}

func md(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, truncate(s, MaxFieldText), false, false)
}

func truncate(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
