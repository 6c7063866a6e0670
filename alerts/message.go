package alerts

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackutilsx"
)

// Message is one Slack message: Block Kit blocks and the plain-text
// fallback shown in notifications and to screen readers.
type Message struct {
	Text   string        `json:"text"`
	Blocks []slack.Block `json:"blocks"`
}

func esc(s string) string { return slackutilsx.EscapeMessage(s) }

func money(v float64, cur string) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f %s", v, cur)
	case v >= 1:
		return fmt.Sprintf("%.2f %s", v, cur)
	case v >= 0.1:
		return fmt.Sprintf("%.3f %s", v, cur)
	default:
		return fmt.Sprintf("%.4f %s", v, cur)
	}
}

// ChangeMessage renders a posted decision for a watch.
func ChangeMessage(watch string, d Decision) Message {
	var title, text string
	old := d.Old
	switch d.Kind {
	case Cheaper:
		title = fmt.Sprintf("Cheaper GPU option for %s", watch)
		text = fmt.Sprintf("%s: new best %s at %s per million tokens (was %s with %s, %+.1f%%)",
			watch, d.New.Label(), money(d.New.CostPerMillionTokens, d.New.Currency),
			money(old.CostPerMillionTokens, old.Currency), old.Label(), d.ChangePct)
	case Vanished:
		title = fmt.Sprintf("Best GPU option for %s is gone", watch)
		if d.New == nil {
			text = fmt.Sprintf("%s: the best offer %s (%s per million tokens) vanished and no offer is left",
				watch, old.Label(), money(old.CostPerMillionTokens, old.Currency))
		} else {
			text = fmt.Sprintf("%s: the best offer %s vanished; new best %s at %s per million tokens (was %s, %+.1f%%)",
				watch, old.Label(), d.New.Label(), money(d.New.CostPerMillionTokens, d.New.Currency),
				money(old.CostPerMillionTokens, old.Currency), d.ChangePct)
		}
	default:
		return Message{}
	}
	blocks := []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, truncate(title, 150), false, false)),
	}
	fields := []*slack.TextBlockObject{
		md("*Workload*\n" + esc(watch)),
		md(fmt.Sprintf("*Cost per million tokens*\n%s → %s", costOf(old), costOf(d.New))),
		md("*Was*\n" + esc(old.Label())),
		md("*Now*\n" + nowLabel(d)),
	}
	if d.New != nil {
		fields = append(fields,
			md(fmt.Sprintf("*Change*\n%+.1f%%", d.ChangePct)),
			md(fmt.Sprintf("*Price per GPU-hour*\n%s → %s", money(old.PricePerGPUHour, old.Currency), money(d.New.PricePerGPUHour, d.New.Currency))))
	}
	blocks = append(blocks, slack.NewSectionBlock(nil, fields, nil))
	blocks = append(blocks, slack.NewContextBlock("", md("pricewatch · cost = price per GPU-hour × 10⁶ / (tokens/s × 3600)")))
	// The fallback text is rendered as mrkdwn in notifications: escape it.
	return Message{Text: esc(text), Blocks: blocks}
}

func nowLabel(d Decision) string {
	if d.New == nil {
		return "no offer left"
	}
	return esc(d.New.Label())
}

func costOf(c *Choice) string {
	if c == nil {
		return "—"
	}
	return money(c.CostPerMillionTokens, c.Currency)
}

func md(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, truncate(s, 2000), false, false)
}

func truncate(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
