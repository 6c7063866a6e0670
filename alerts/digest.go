package alerts

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// Digest limits: Slack allows 50 blocks and about 12,000 characters of
// block text per message (the undocumented msg_blocks_too_long), one table
// per message, and 1–6 series per line chart.
const (
	digestMaxBlocks = 45
	digestMaxChars  = 10000
	maxChartSeries  = 6
)

// WatchDigest is one watch's line in the digest.
type WatchDigest struct {
	Watch     string    `json:"watch"`
	Best      *Choice   `json:"best"`
	RunnersUp []*Choice `json:"runners_up"`
	// Change24h and Change7d are the change of the best cost in percent
	// (nil when the series does not reach back that far).
	Change24h *float64 `json:"change_24h,omitempty"`
	Change7d  *float64 `json:"change_7d,omitempty"`
	// Daily is the lowest best cost of each of the last 7 days (NaN: no data).
	Daily []float64 `json:"daily"`
	// Reference is the cheapest reference price (an index, a median) of the
	// best's card, for comparison: never ranked.
	Reference *ReferenceLine `json:"reference,omitempty"`
	// API is, for a watch that includes APIs, the cheapest API selling the
	// workload's model beside the best self-hosted option.
	API *APIComparison `json:"api,omitempty"`
}

// ReferenceLine is a reference price of a card in the digest's currency.
type ReferenceLine struct {
	Card            string  `json:"card"`
	Source          string  `json:"source"`
	OfferID         string  `json:"offer_id"`
	PricePerGPUHour float64 `json:"price_per_gpu_hour"`
	Currency        string  `json:"currency"`
}

// Move is a price change of one offer in the last 24 hours.
type Move struct {
	Key       string  `json:"key"`
	Card      string  `json:"card"`
	Source    string  `json:"source"`
	Old, New  float64 `json:"-"`
	ChangePct float64 `json:"change_pct"`
	Currency  string  `json:"currency"`
}

// SourceLine is a source's health in the digest.
type SourceLine struct {
	Name, Status, Note string
	Offers             int
}

// DigestData is everything a digest shows.
type DigestData struct {
	Now      time.Time
	Currency string
	Watches  []WatchDigest
	Moves    []Move
	New      int
	Vanished int
	Sources  []SourceLine
	// Data dates the data the digest ranks (the caller fills it).
	Data DataDates
}

// DataDates says how old a digest's data is: a ranking computed this
// morning can price offers scraped days ago, at rates the ECB gave last
// week, or the bundled fixtures of a demo.
type DataDates struct {
	// Demo: the prices are the bundled fixtures (serve --demo, --fixtures),
	// captured from CapturedFrom to CapturedTo (dates, "" where unknown).
	Demo                     bool
	CapturedFrom, CapturedTo string
	// OffersFrom and OffersTo are the oldest and the newest last successful
	// run of the sources holding offers (zero: none yet).
	OffersFrom, OffersTo time.Time
	// FXDate is the date of the ECB reference rates ("" before any).
	FXDate string
}

// Line is the digest's line dating its data: "Data: offers as of
// 2026-11-29 06:00 UTC; ECB exchange rates of 2026-11-27", or in a demo
// "DEMO DATA, not today's market: prices from the bundled fixtures
// (captured 2024-05-01 to 2025-06-21), scraped …; ECB exchange rates of …".
func (d DataDates) Line() string {
	const stamp = "2006-01-02 15:04 UTC"
	when := ""
	switch {
	case d.OffersTo.IsZero():
	case d.OffersTo.Sub(d.OffersFrom) > time.Hour:
		when = fmt.Sprintf("%s (the oldest source's of %s)", d.OffersTo.UTC().Format(stamp), d.OffersFrom.UTC().Format(stamp))
	default:
		when = d.OffersTo.UTC().Format(stamp)
	}
	fx := "no exchange rates yet"
	if d.FXDate != "" {
		fx = "ECB exchange rates of " + d.FXDate
	}
	if !d.Demo {
		if when == "" {
			return "Data: no successful scrape yet; " + fx
		}
		return "Data: offers as of " + when + "; " + fx
	}
	line := "DEMO DATA, not today's market: prices from the bundled fixtures"
	switch {
	case d.CapturedFrom != "" && d.CapturedFrom != d.CapturedTo:
		line += fmt.Sprintf(" (captured %s to %s)", d.CapturedFrom, d.CapturedTo)
	case d.CapturedFrom != "":
		line += " (captured " + d.CapturedFrom + ")"
	}
	if when != "" {
		line += ", scraped " + when
	}
	return line + "; " + fx
}

// CollectDigest gathers the digest's data: per watch the best and the
// runners-up now, the change over 24 h and 7 days and the daily lows from
// the watch's series; the biggest moves and the new and vanished offers of
// the last 24 h from the change log.
func CollectDigest(snap *rank.Snapshot, watches []Watch, series func(string, time.Time) ([]store.Sample, error),
	changes []store.Change, sources []SourceLine, runnersUp int, now time.Time) (DigestData, error) {
	d := DigestData{Now: now, Sources: sources}
	if len(watches) > 0 {
		d.Currency = watches[0].Currency
	}
	for _, w := range watches {
		wd := WatchDigest{Watch: w.Name}
		top, err := topChoices(snap, w, 1+runnersUp, now)
		if err != nil {
			return d, err
		}
		if len(top) > 0 {
			wd.Best, wd.RunnersUp = top[0], top[1:]
			wd.Reference = reference(snap, top[0].Card, w.Currency)
		}
		ss, err := series(w.Name, now.Add(-8*24*time.Hour))
		if err != nil {
			return d, err
		}
		if wd.Best != nil {
			cur := wd.Best.CostPerMillionTokens
			wd.Change24h = changeSince(ss, now.Add(-24*time.Hour), cur)
			wd.Change7d = changeSince(ss, now.Add(-7*24*time.Hour), cur)
		}
		wd.Daily = dailyLows(ss, now)
		if c, ok := compareAPI(snap, w, wd.Best); ok {
			wd.API = &c
		}
		d.Watches = append(d.Watches, wd)
	}
	for _, c := range changes {
		switch c.Event {
		case store.Appeared:
			d.New++
		case store.Vanished:
			d.Vanished++
		case store.Changed:
			if c.OldPrice > 0 {
				d.Moves = append(d.Moves, Move{Key: c.Key, Card: c.Card, Source: c.Source, Old: c.OldPrice, New: c.NewPrice,
					ChangePct: (c.NewPrice - c.OldPrice) / c.OldPrice * 100, Currency: c.Currency})
			}
		}
	}
	sort.SliceStable(d.Moves, func(i, j int) bool { return math.Abs(d.Moves[i].ChangePct) > math.Abs(d.Moves[j].ChangePct) })
	if len(d.Moves) > 5 {
		d.Moves = d.Moves[:5]
	}
	return d, nil
}

// reference is the cheapest fresh reference price of a card in cur, nil
// when there is none (or no rate to convert it).
func reference(snap *rank.Snapshot, card, cur string) *ReferenceLine {
	var best *ReferenceLine
	for _, o := range snap.References(card) {
		p, err := snap.Rates.Convert(o.PricePerGPUHour, o.Currency, cur)
		if err != nil {
			continue
		}
		if best == nil || p < best.PricePerGPUHour {
			best = &ReferenceLine{Card: card, Source: o.Source, OfferID: o.OfferID, PricePerGPUHour: p, Currency: cur}
		}
	}
	return best
}

// topChoices are the watch's n best offers, one per card (a job or
// single-card watch has only its best).
func topChoices(snap *rank.Snapshot, w Watch, n int, now time.Time) ([]*Choice, error) {
	best, _, err := Current(snap, w, now)
	if err != nil || best == nil {
		return nil, err
	}
	out := []*Choice{best}
	if w.Job != nil || w.Card != "" {
		return out, nil
	}
	seen := map[string]bool{best.Card: true}
	for _, e := range filtered(snap, w) {
		if len(out) >= n {
			break
		}
		if seen[e.Card] {
			continue
		}
		seen[e.Card] = true
		c, err := toChoice(snap, e, w.Currency, now)
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

// changeSince is the change in percent from the last sample at or before t
// to cur; nil when the series starts after t.
func changeSince(ss []store.Sample, t time.Time, cur float64) *float64 {
	var base *store.Sample
	for i := range ss {
		if ss[i].At.After(t) {
			break
		}
		base = &ss[i]
	}
	if base == nil || base.Cost <= 0 {
		return nil
	}
	v := (cur - base.Cost) / base.Cost * 100
	return &v
}

// dailyLows are the lowest best cost of each of the 7 days ending now:
// the lowest of the samples taken that day and the value in force when
// the day began (the last sample before it). A day before the first
// sample has no data: NaN, and no point is drawn for it.
func dailyLows(ss []store.Sample, now time.Time) []float64 {
	lows := make([]float64, 7)
	day0 := now.Truncate(24 * time.Hour).Add(-6 * 24 * time.Hour)
	for i := range lows {
		start, end := day0.Add(time.Duration(i)*24*time.Hour), day0.Add(time.Duration(i+1)*24*time.Hour)
		lows[i] = math.NaN()
		for _, s := range ss {
			if !s.At.Before(end) {
				break
			}
			if s.At.Before(start) {
				lows[i] = s.Cost // in force when the day began (samples are oldest first)
				continue
			}
			if math.IsNaN(lows[i]) || s.Cost < lows[i] {
				lows[i] = s.Cost
			}
		}
	}
	return lows
}

func pct(p *float64) string {
	if p == nil {
		return "—"
	}
	return fmt.Sprintf("%+.1f%%", *p)
}

// DigestMessages renders the digest as Block Kit messages within Slack's
// limits — a table of the best per watch, a line chart of the best cost
// over 7 days, runners-up, moves and source health — each with a readable
// plain-text fallback. It is sent even when nothing changed.
func DigestMessages(d DigestData) []Message {
	date := d.Now.Format("Mon 2 Jan 2006")
	title := "pricewatch daily digest"
	if d.Data.Demo {
		title += " (demo data)"
	}
	var text []string
	text = append(text, title+", "+date, d.Data.Line())

	table := slack.NewTableBlock("best").WithColumnSettings(
		slack.ColumnSetting{Align: slack.ColumnAlignmentLeft, IsWrapped: true},
		slack.ColumnSetting{Align: slack.ColumnAlignmentLeft}, slack.ColumnSetting{Align: slack.ColumnAlignmentLeft},
		slack.ColumnSetting{Align: slack.ColumnAlignmentRight}, slack.ColumnSetting{Align: slack.ColumnAlignmentRight},
		slack.ColumnSetting{Align: slack.ColumnAlignmentRight}, slack.ColumnSetting{Align: slack.ColumnAlignmentRight})
	hdr := func(s string) slack.TableCell { return slack.NewTableRawTextCell(s) }
	table.AddRow(hdr("Watch"), hdr("Best"), hdr("Source"), hdr("Price/GPU-h"), hdr("Cost/Mtok"), hdr("24 h"), hdr("7 days"))
	var runners, refs, apis []string
	for _, w := range d.Watches {
		if c := w.API; c != nil {
			line := apiLine(w.Watch, *c)
			apis = append(apis, esc(line))
			text = append(text, line)
		}
		if w.Best == nil {
			table.AddRow(hdr(w.Watch), hdr("no offer"), hdr("—"), hdr("—"), hdr("—"), hdr("—"), hdr("—"))
			text = append(text, fmt.Sprintf("%s: no eligible offer", w.Watch))
			continue
		}
		b := w.Best
		table.AddRow(hdr(w.Watch), hdr(b.Card), hdr(b.Source+" "+string(b.Mode)), hdr(Money(b.PricePerGPUHour, b.Currency)),
			hdr(Money(b.CostPerMillionTokens, b.Currency)), hdr(pct(w.Change24h)), hdr(pct(w.Change7d)))
		text = append(text, fmt.Sprintf("%s: %s at %s per million tokens (%s, %s; 24 h %s, 7 days %s)", w.Watch,
			b.Card, Money(b.CostPerMillionTokens, b.Currency), b.Source, b.OfferID, pct(w.Change24h), pct(w.Change7d)))
		if len(w.RunnersUp) > 0 {
			var rs []string
			for i, r := range w.RunnersUp {
				rs = append(rs, fmt.Sprintf("%d. %s on %s %s", i+2, esc(r.Card), esc(r.Source), Money(r.CostPerMillionTokens, r.Currency)))
			}
			runners = append(runners, fmt.Sprintf("*%s*: %s", esc(w.Watch), strings.Join(rs, " · ")))
		}
		if r := w.Reference; r != nil {
			line := fmt.Sprintf("%s: %s per GPU-hour (%s, %s)", r.Card, Money(r.PricePerGPUHour, r.Currency), r.Source, r.OfferID)
			if !slices.Contains(refs, esc(line)) {
				refs = append(refs, esc(line))
				text = append(text, "Reference "+line)
			}
		}
	}
	blocks := []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, title, false, false)),
		slack.NewContextBlock("", md(fmt.Sprintf("%s · best cost per million tokens per watch, change over 24 h and 7 days", date))),
		slack.NewContextBlock("", md(esc(d.Data.Line()))),
		table,
	}
	charts := dailyCharts(d)
	if len(charts) > 0 {
		blocks = append(blocks, charts[0])
	}
	var sections []string
	if len(runners) > 0 {
		sections = append(sections, "*Runners-up*\n"+strings.Join(runners, "\n"))
	}
	if len(apis) > 0 {
		sections = append(sections, "*Self-hosted or API* (per million output tokens)\n• "+strings.Join(apis, "\n• "))
	}
	if len(refs) > 0 {
		sections = append(sections, "*Reference prices* (indexes and medians: shown, never ranked)\n• "+strings.Join(refs, "\n• "))
	}
	moves := fmt.Sprintf("*Last 24 h*: %d new offers, %d vanished", d.New, d.Vanished)
	text = append(text, fmt.Sprintf("Last 24 h: %d new offers, %d vanished", d.New, d.Vanished))
	for _, m := range d.Moves {
		line := fmt.Sprintf("%s on %s: %s → %s (%+.1f%%)", m.Card, m.Source, Money(m.Old, m.Currency), Money(m.New, m.Currency), m.ChangePct)
		moves += "\n• " + esc(line)
		text = append(text, "  "+line)
	}
	sections = append(sections, moves)
	var bad, ok []string
	for _, s := range d.Sources {
		switch s.Status {
		case "ok":
			ok = append(ok, s.Name)
		default:
			line := fmt.Sprintf("%s %s", s.Name, s.Status)
			if s.Note != "" {
				line += ": " + truncate(s.Note, 140)
			}
			bad = append(bad, line)
		}
	}
	health := fmt.Sprintf("*Sources*: %d ok", len(ok))
	text = append(text, fmt.Sprintf("Sources: %d ok", len(ok)))
	for _, b := range bad {
		health += "\n• " + esc(b)
		text = append(text, "  "+b)
	}
	sections = append(sections, health)

	// Lay the sections out, splitting long ones and whole messages at the
	// limits; later messages carry the remaining charts.
	var msgs []Message
	cur, chars := blocks, blockChars(blocks)
	flush := func() {
		msgs = append(msgs, Message{Blocks: cur})
		cur, chars = nil, 0
	}
	for _, sec := range sections {
		for _, part := range splitText(sec, MaxSectionText) {
			b := slack.NewSectionBlock(md(part), nil, nil)
			b.Text.Text = part // md truncates at the field limit; sections allow 3000
			if len(cur)+1 > digestMaxBlocks || chars+len(part) > digestMaxChars {
				flush()
			}
			cur = append(cur, b)
			chars += len(part)
		}
	}
	// One chart per message: a later chart starts a message of its own.
	for _, c := range charts[min(1, len(charts)):] {
		flush()
		cur = append(cur, c)
	}
	cur = append(cur, slack.NewContextBlock("", md("pricewatch · sent daily even when nothing changed · "+d.Now.UTC().Format(time.RFC3339))))
	flush()
	fallback := esc(strings.Join(text, "\n"))
	for i := range msgs {
		msgs[i].Text = fallback
		if len(msgs) > 1 {
			msgs[i].Text = fmt.Sprintf("(%d/%d) ", i+1, len(msgs)) + fallback
		}
	}
	return msgs
}

// dailyCharts are line charts of each watch's daily best cost, at most
// six series each. Slack wants a point in every category of a chart, and
// a day without data gets none: so a chart's days start after the last
// day without data of its watches (watches whose data starts on another
// day go to another chart). dailyLows gives every day after the first
// sample a value (the one in force when it began).
func dailyCharts(d DigestData) []slack.Block {
	var cats []string
	day0 := d.Now.Truncate(24 * time.Hour).Add(-6 * 24 * time.Hour)
	for i := range 7 {
		cats = append(cats, day0.Add(time.Duration(i)*24*time.Hour).Format("Jan 2"))
	}
	type group struct {
		first  int
		series []slack.DataVisualizationDataSeries
	}
	var groups []*group
	byFirst := map[int]*group{}
	for _, w := range d.Watches {
		// The chart starts after the watch's last day without data.
		first := 0
		for i, v := range w.Daily {
			if math.IsNaN(v) {
				first = i + 1
			}
		}
		var pts []slack.DataVisualizationDataPoint
		for i := first; i < len(w.Daily) && i < len(cats); i++ {
			pts = append(pts, slack.NewDataVisualizationDataPoint(cats[i], math.Round(w.Daily[i]*1e4)/1e4))
		}
		if len(pts) == 0 {
			continue
		}
		g := byFirst[first]
		if g == nil || len(g.series) == maxChartSeries {
			g = &group{first: first}
			byFirst[first] = g
			groups = append(groups, g)
		}
		g.series = append(g.series, slack.NewDataVisualizationDataSeries(truncate(w.Watch, 20), pts...))
	}
	var out []slack.Block
	for _, g := range groups {
		title := "Best cost per million tokens, 7 days"
		if g.first > 0 {
			title = fmt.Sprintf("Best cost per million tokens, %d day(s) with data", len(cats)-g.first)
		}
		axis := slack.NewDataVisualizationAxisConfig(cats[g.first:]...).WithYLabel(truncate("cost/Mtok "+d.Currency, 50))
		out = append(out, slack.NewDataVisualizationBlock(title, slack.NewDataVisualizationLineChart(axis, g.series...)))
	}
	return out
}

func splitText(s string, n int) []string {
	if len(s) <= n {
		return []string{s}
	}
	var out []string
	for len(s) > n {
		cut := strings.LastIndex(s[:n], "\n")
		if cut <= 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = strings.TrimLeft(s[cut:], "\n")
	}
	return append(out, s)
}

func blockChars(bs []slack.Block) int {
	n := 0
	for _, b := range bs {
		if sec, ok := b.(*slack.SectionBlock); ok && sec.Text != nil {
			n += len(sec.Text.Text)
		}
	}
	return n
}

// apiLine is a watch's self-hosted-or-API line: both costs per million
// output tokens, which is cheaper, and the break-even load.
func apiLine(watch string, c APIComparison) string {
	self := "no self-hosted option"
	if c.Self != nil {
		self = fmt.Sprintf("self-hosted %s on %s at %s", c.Self.Card, c.Self.Source, Money(c.Self.CostPerMillionTokens, c.Self.Currency))
	}
	line := fmt.Sprintf("%s: %s; API %s via %s at %s; cheaper: %s", watch, self, c.API.Model, c.API.Provider,
		Money(c.API.CostPerMillionTokens, c.API.Currency), c.Cheaper)
	if c.BreakEvenTokensPerDay != nil {
		line += fmt.Sprintf("; renting pays from %s output tokens a day", TokenCount(*c.BreakEvenTokensPerDay))
	} else if c.Self != nil {
		line += "; renting never pays at these prices"
	}
	return line
}
