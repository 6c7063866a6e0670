// Package config reads pricewatch's YAML configuration: defaults in code, the
// file decoded over them strictly (an unknown key is an error naming it),
// secrets from the environment or files only, validated before anything
// starts. Precedence: flag > environment > file > default.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"go.yaml.in/yaml/v3"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/store"
)

// Environment variables that carry secrets. They are never logged.
const (
	EnvSlackToken   = "PRICEWATCH_SLACK_TOKEN"
	EnvSlackWebhook = "PRICEWATCH_SLACK_WEBHOOK_URL"
	// EnvSlackSigningSecret verifies slash-command requests.
	EnvSlackSigningSecret = "PRICEWATCH_SLACK_SIGNING_SECRET"
	// EnvAPIToken is the bearer token of the HTTP API's write endpoints;
	// without one they are off.
	EnvAPIToken = "PRICEWATCH_API_TOKEN"
)

// Config is the whole configuration.
type Config struct {
	DB        string  `yaml:"db"`
	LogLevel  string  `yaml:"log_level"`
	UserAgent string  `yaml:"user_agent"`
	Server    Server  `yaml:"server"`
	Ranking   Ranking `yaml:"ranking"`
	Ingest    Ingest  `yaml:"ingest"`
	Alerts    Alerts  `yaml:"alerts"`
	Digest    Digest  `yaml:"digest"`
	History   History `yaml:"history"`
	Slack     Slack   `yaml:"slack"`
	// Owned is hardware the user owns or could buy, priced beside rentals
	// in plans.
	Owned []rank.Owned `yaml:"owned"`
	// Workloads are named job specs ranked beside the built-in ones.
	Workloads []map[string]any  `yaml:"workloads"`
	Sources   map[string]Source `yaml:"-"`
}

// Server configures the HTTP API.
type Server struct {
	Addr              string        `yaml:"addr"`
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout"`
	ReadTimeout       time.Duration `yaml:"read_timeout"`
	WriteTimeout      time.Duration `yaml:"write_timeout"`
	IdleTimeout       time.Duration `yaml:"idle_timeout"`
	// APITokenFile holds the write endpoints' bearer token when
	// PRICEWATCH_API_TOKEN is not set; APIToken is filled from either.
	APITokenFile string `yaml:"api_token_file"`
	APIToken     string `yaml:"-"`
	// Pprof serves Go's profiles under /debug/pprof/ (off by default):
	// with the API token when one is configured, else to loopback only.
	Pprof bool `yaml:"pprof"`
	// RecordGroup (a group name or numeric gid) shares the daemon record
	// <db>.addr with the operators in that group: serve writes it 0640 to
	// that group, and the CLI of a member accepts a record of another
	// user's only then (the systemd layout: deploy/pricewatch.service).
	RecordGroup string `yaml:"record_group"`
}

// Ranking configures which offers rank.
type Ranking struct {
	// ReliabilityFloor keeps marketplace offers below it out of rankings.
	ReliabilityFloor float64 `yaml:"reliability_floor"`
	// BaseCurrency is the currency offers are compared in.
	BaseCurrency string `yaml:"base_currency"`
	// EngineEfficiency scales the serving estimates of an engine (vllm,
	// tensorrt-llm, llama.cpp) by a factor, for a team that measured its
	// engine faster or slower than the calibrated software generation
	// (rank/THROUGHPUT.md). Absent: 1.
	EngineEfficiency map[string]float64 `yaml:"engine_efficiency"`
}

// Alerts configures change alerts.
type Alerts struct {
	// The rules every watch follows unless it overrides them.
	alerts.Rules `yaml:",inline"`
	Watches      []Watch `yaml:"watches"`
	// OutboxRetention is how long sent and failed Slack messages stay in
	// the outbox (and /v1/alerts) before they are pruned.
	OutboxRetention time.Duration `yaml:"outbox_retention"`
}

// Watch is a ranking whose best offer is watched for changes: a workload,
// or a job spec (`job`, the body of POST /v1/plan) whose best plan option
// is watched.
type Watch struct {
	Name     string         `yaml:"name"`
	Workload string         `yaml:"workload"`
	Job      map[string]any `yaml:"job"`
	Card     string         `yaml:"card"`
	Modes    []string       `yaml:"modes"`
	// MaxGPUs keeps offers rentable with at most this many GPUs (0: any).
	MaxGPUs int `yaml:"max_gpus"`
	// Available "any" watches offers the source says are out of stock too
	// (default: only offers not known to be out).
	Available string   `yaml:"available"`
	Currency  string   `yaml:"currency"`
	Regions   []string `yaml:"regions"`
	Providers []string `yaml:"providers"`
	// IncludeAPI compares a serving workload's best self-hosted option
	// with the cheapest inference API selling its model (token sources):
	// a flip between the two is posted, and the digest has a line for it.
	IncludeAPI bool `yaml:"include_api"`
	// Overrides of the alerts-wide rules.
	MinChangePct       *float64       `yaml:"min_change_pct"`
	MinChangeAbs       *float64       `yaml:"min_change_abs"`
	ConfirmRuns        *int           `yaml:"confirm_runs"`
	Cooldown           *time.Duration `yaml:"cooldown"`
	Worse              *string        `yaml:"worse"`
	UnusualDropPct     *float64       `yaml:"unusual_drop_pct"`
	UnusualConfirmRuns *int           `yaml:"unusual_confirm_runs"`
	Floor              *float64       `yaml:"floor"`
}

// RulesOver returns the watch's rules: its overrides over the defaults.
func (w Watch) RulesOver(def alerts.Rules) alerts.Rules {
	r := def
	setF := func(dst *float64, v *float64) {
		if v != nil {
			*dst = *v
		}
	}
	setI := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	setF(&r.MinChangePct, w.MinChangePct)
	setF(&r.MinChangeAbs, w.MinChangeAbs)
	setF(&r.UnusualDropPct, w.UnusualDropPct)
	setF(&r.Floor, w.Floor)
	setI(&r.ConfirmRuns, w.ConfirmRuns)
	setI(&r.UnusualConfirmRuns, w.UnusualConfirmRuns)
	if w.Cooldown != nil {
		r.Cooldown = *w.Cooldown
	}
	if w.Worse != nil {
		r.Worse = *w.Worse
	}
	return r
}

// Digest configures the daily digest.
type Digest struct {
	Enabled bool `yaml:"enabled"`
	// Schedule is a cron spec; a CRON_TZ= prefix sets its time zone
	// (e.g. "CRON_TZ=Asia/Shanghai 0 9 * * *").
	Schedule  string `yaml:"schedule"`
	RunnersUp int    `yaml:"runners_up"`
}

// History configures how long price history stays raw.
type History struct {
	// RawWindow is how long every change is kept as it happened; older
	// changes are rolled into one open/min/max/close row per offer and
	// day (at least 8 days: the digest, alert medians and availability
	// read a week of raw rows).
	RawWindow time.Duration `yaml:"raw_window"`
	// CompactSchedule is the cron spec on which the daemon rolls up the
	// changes that left the window ("" turns it off; pricewatch compact
	// does it by hand).
	CompactSchedule string `yaml:"compact_schedule"`
	// PageCheckSchedule is the cron spec on which the daemon checks every
	// page of the database file (bbolt's own check; "" turns it off). Open
	// checks a file of up to 64 MiB whole at start-up; this finds damage
	// in a larger one, or one that came later, before a read meets it.
	// Runs wait while it reads the file.
	PageCheckSchedule string `yaml:"page_check_schedule"`
}

// Slack configures delivery. Secrets come from the environment or files.
type Slack struct {
	Channel string `yaml:"channel"`
	// APIURL overrides the Slack Web API base (tests point it at a fake).
	APIURL            string `yaml:"api_url"`
	TokenFile         string `yaml:"token_file"`
	WebhookURLFile    string `yaml:"webhook_url_file"`
	SigningSecretFile string `yaml:"signing_secret_file"`
	// Token and WebhookURL are filled from the environment or the files.
	Token         string `yaml:"-"`
	WebhookURL    string `yaml:"-"`
	SigningSecret string `yaml:"-"`
}

// Source is one source's settings plus its scraper with its own options.
type Source struct {
	Name     string
	Settings scrapers.Settings
	Scraper  scrapers.Scraper
}

// Default returns the configuration used when no file is given.
func Default() *Config {
	c := &Config{
		DB:        "pricewatch.db",
		LogLevel:  "info",
		UserAgent: scrapers.DefaultUserAgent,
		Server: Server{
			Addr:              "127.0.0.1:8080",
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       10 * time.Second,
			WriteTimeout:      15 * time.Second,
			IdleTimeout:       60 * time.Second,
		},
		Ranking: Ranking{ReliabilityFloor: 0.95, BaseCurrency: "USD"},
		Ingest:  DefaultIngest(),
		Alerts:  Alerts{Rules: alerts.DefaultRules(), OutboxRetention: alerts.DefaultOutboxRetention},
		Digest:  Digest{Enabled: true, Schedule: "0 9 * * *", RunnersUp: 3},
		History: History{RawWindow: store.DefaultRawWindow, CompactSchedule: "40 3 * * *", PageCheckSchedule: "50 4 * * 0"},
		Sources: map[string]Source{},
	}
	for _, name := range scrapers.Names() {
		reg, _ := scrapers.Get(name)
		c.Sources[name] = Source{Name: name, Settings: reg.Defaults, Scraper: reg.New()}
	}
	return c
}

// DefaultWatches are the watches used when the config names none: every
// built-in workload, best on-demand and best spot; a serving workload's
// on-demand watch also compares it with the APIs selling its model.
func DefaultWatches(workloads []string) []Watch {
	var ws []Watch
	for _, w := range workloads {
		for _, m := range pricewatch.DefaultModes() {
			ws = append(ws, Watch{Name: w + "/" + string(m), Workload: w, Modes: []string{string(m)},
				IncludeAPI: strings.HasPrefix(w, "serve-") && m == pricewatch.ModeOnDemand})
		}
	}
	return ws
}

// EffectiveWatches are the watches alerts evaluate: alerts.watches, or
// without any the default watches of every workload.
func (c *Config) EffectiveWatches() ([]Watch, error) {
	if len(c.Alerts.Watches) > 0 {
		return c.Alerts.Watches, nil
	}
	ws, err := c.ResolveWorkloads()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ws))
	for i, w := range ws {
		names[i] = w.Name
	}
	return DefaultWatches(names), nil
}

// Load reads a config file over the defaults (path "" = defaults only) and
// fills secrets from the environment.
func Load(path string) (*Config, error) {
	c := Default()
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		defer f.Close()
		if err := c.Decode(f); err != nil {
			return nil, fmt.Errorf("config %s: %w", path, err)
		}
	}
	if err := c.LoadSecrets(); err != nil {
		return nil, err
	}
	c.normalizeCase()
	return c, nil
}

// normalizeCase upper-cases currency codes, which users write either way.
func (c *Config) normalizeCase() {
	c.Ranking.BaseCurrency = strings.ToUpper(c.Ranking.BaseCurrency)
	for i := range c.Owned {
		c.Owned[i].Currency = strings.ToUpper(c.Owned[i].Currency)
	}
	for i := range c.Alerts.Watches {
		c.Alerts.Watches[i].Currency = strings.ToUpper(c.Alerts.Watches[i].Currency)
	}
}

// Decode reads YAML over c. Unknown keys anywhere are errors naming the key;
// each source's mapping is decoded by that source (common settings plus the
// scraper's own options).
func (c *Config) Decode(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return err
	}
	if len(doc.Content) == 0 {
		return nil // an empty file: defaults
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil // "---" or "~" alone: defaults
	}
	if root.Kind != yaml.MappingNode {
		return errors.New("the top level must be a mapping")
	}
	scalars := map[string]*string{"db": &c.DB, "log_level": &c.LogLevel, "user_agent": &c.UserAgent}
	parts := map[string]any{"server": &c.Server, "ranking": &c.Ranking, "ingest": &c.Ingest, "alerts": &c.Alerts, "slack": &c.Slack, "owned": &c.Owned,
		"digest": &c.Digest, "workloads": &c.Workloads}
	if err := noDuplicateKeys(root, ""); err != nil {
		return err
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i], root.Content[i+1]
		switch {
		case scalars[key.Value] != nil:
			if err := val.Decode(scalars[key.Value]); err != nil {
				return fmt.Errorf("%s: %w", key.Value, err)
			}
		case parts[key.Value] != nil:
			if err := decodeNode(val, parts[key.Value]); err != nil {
				return fmt.Errorf("%s: %w", key.Value, err)
			}
		case key.Value == "sources":
			if err := c.decodeSources(val); err != nil {
				return err
			}
		default:
			return fmt.Errorf("line %d: unknown key %q", key.Line, key.Value)
		}
	}
	return nil
}

func (c *Config) decodeSources(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		if n.Tag == "!!null" {
			return nil
		}
		return errors.New("sources: must be a mapping of source names")
	}
	if err := noDuplicateKeys(n, "sources: "); err != nil {
		return err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name := n.Content[i].Value
		src, ok := c.Sources[name]
		if !ok {
			return fmt.Errorf("sources: line %d: unknown source %q (known: %s)", n.Content[i].Line, name, strings.Join(c.SourceNames(), ", "))
		}
		if err := decodeSource(n.Content[i+1], &src); err != nil {
			return fmt.Errorf("sources.%s: %w", name, err)
		}
		c.Sources[name] = src
	}
	return nil
}

// noDuplicateKeys rejects a mapping that repeats a key, which decoding
// through yaml.Node would otherwise merge or let the last one win.
func noDuplicateKeys(n *yaml.Node, prefix string) error {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if seen[k.Value] {
			return fmt.Errorf("%sline %d: duplicate key %q", prefix, k.Line, k.Value)
		}
		seen[k.Value] = true
	}
	return nil
}

func strictDecode(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

func decodeNode(n *yaml.Node, v any) error {
	data, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	return strictDecode(data, v)
}

// decodeSource decodes the common settings and the scraper's own options
// from one mapping; a key neither knows is an error.
func decodeSource(n *yaml.Node, src *Source) error {
	if n.Kind != yaml.MappingNode {
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return nil
		}
		return errors.New("must be a mapping")
	}
	known := map[string]bool{}
	for _, k := range yamlKeys(src.Settings) {
		known[k] = true
	}
	for _, k := range yamlKeys(src.Scraper) {
		known[k] = true
	}
	common := &yaml.Node{Kind: yaml.MappingNode}
	own := &yaml.Node{Kind: yaml.MappingNode}
	settingKeys := map[string]bool{}
	for _, k := range yamlKeys(src.Settings) {
		settingKeys[k] = true
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i].Value
		if !known[key] {
			return fmt.Errorf("line %d: unknown key %q", n.Content[i].Line, key)
		}
		dst := own
		if settingKeys[key] {
			dst = common
		}
		dst.Content = append(dst.Content, n.Content[i], n.Content[i+1])
	}
	if err := decodeNode(common, &src.Settings); err != nil {
		return err
	}
	if len(own.Content) > 0 {
		return decodeNode(own, src.Scraper)
	}
	return nil
}

// yamlKeys lists the yaml keys of a struct (or pointer to one).
func yamlKeys(v any) []string {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if tag == "-" || !f.IsExported() {
			continue
		}
		if tag == "" {
			tag = strings.ToLower(f.Name)
		}
		keys = append(keys, tag)
	}
	return keys
}

// LoadSecrets fills the Slack token and webhook URL from the environment,
// else from the configured files.
func (c *Config) LoadSecrets() error {
	read := func(env, file string) (string, error) {
		if v := strings.TrimSpace(os.Getenv(env)); v != "" {
			return v, nil
		}
		if file == "" {
			return "", nil
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("config: read secret file: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	var err error
	if c.Slack.Token, err = read(EnvSlackToken, c.Slack.TokenFile); err != nil {
		return err
	}
	if c.Slack.WebhookURL, err = read(EnvSlackWebhook, c.Slack.WebhookURLFile); err != nil {
		return err
	}
	if c.Server.APIToken, err = read(EnvAPIToken, c.Server.APITokenFile); err != nil {
		return err
	}
	if c.Slack.SigningSecret, err = read(EnvSlackSigningSecret, c.Slack.SigningSecretFile); err != nil {
		return err
	}
	return nil
}

// Validate checks the configuration, returning every problem with its field.
func (c *Config) Validate(workloadKnown func(string) bool, cardKnown func(string) bool) error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if c.DB == "" {
		bad("db", "must not be empty")
	}
	if c.Ranking.ReliabilityFloor < 0 || c.Ranking.ReliabilityFloor > 1 {
		bad("ranking.reliability_floor", "must be within 0..1")
	}
	if c.Ranking.BaseCurrency != "USD" && c.Ranking.BaseCurrency != "EUR" && c.Ranking.BaseCurrency != "CNY" {
		bad("ranking.base_currency", "must be USD, EUR or CNY")
	}
	for _, e := range slices.Sorted(maps.Keys(c.Ranking.EngineEfficiency)) {
		f := c.Ranking.EngineEfficiency[e]
		switch {
		case !slices.Contains(rank.Engines(), e):
			bad("ranking.engine_efficiency."+e, "unknown engine (one of %s)", strings.Join(rank.Engines(), ", "))
		case !(f >= 0.1 && f <= 3):
			bad("ranking.engine_efficiency."+e, "must be a factor within 0.1..3, got %v", f)
		}
	}
	c.Ingest.validate(bad)
	checkRules := func(f string, r alerts.Rules) {
		switch {
		case r.MinChangePct < 0:
			bad(f+".min_change_pct", "must not be negative")
		case r.MinChangeAbs < 0:
			bad(f+".min_change_abs", "must not be negative")
		case r.ConfirmRuns < 1 || r.UnusualConfirmRuns < 1:
			bad(f+".confirm_runs", "confirm_runs and unusual_confirm_runs must be at least 1")
		case r.Cooldown < 0:
			bad(f+".cooldown", "must not be negative")
		case r.Worse != alerts.WorseDigest && r.Worse != alerts.WorsePost:
			bad(f+".worse", "must be %q or %q", alerts.WorseDigest, alerts.WorsePost)
		case r.UnusualDropPct <= 0 || r.UnusualDropPct > 100:
			bad(f+".unusual_drop_pct", "must be within (0, 100]")
		case r.Floor < 0:
			bad(f+".floor", "must not be negative")
		}
	}
	checkRules("alerts", c.Alerts.Rules)
	if c.Alerts.OutboxRetention < time.Hour {
		bad("alerts.outbox_retention", "must be at least 1h, got %s", c.Alerts.OutboxRetention)
	}
	if c.Digest.Enabled {
		if _, err := cron.ParseStandard(c.Digest.Schedule); err != nil {
			bad("digest.schedule", "%v", err)
		}
	}
	if c.History.RawWindow < store.MinRawWindow {
		bad("history.raw_window", "must be at least %s, got %s", store.MinRawWindow, c.History.RawWindow)
	}
	if c.History.CompactSchedule != "" {
		if _, err := cron.ParseStandard(c.History.CompactSchedule); err != nil {
			bad("history.compact_schedule", "%v", err)
		}
	}
	if c.History.PageCheckSchedule != "" {
		if _, err := cron.ParseStandard(c.History.PageCheckSchedule); err != nil {
			bad("history.page_check_schedule", "%v", err)
		}
	}
	seen := map[string]bool{}
	for i, w := range c.Alerts.Watches {
		f := fmt.Sprintf("alerts.watches[%d]", i)
		if w.Name == "" {
			bad(f+".name", "is required")
		} else if seen[w.Name] {
			bad(f+".name", "duplicate %q", w.Name)
		}
		seen[w.Name] = true
		switch {
		case w.Job != nil && w.Workload != "":
			bad(f, "give a workload or a job, not both")
		case w.Job == nil && !workloadKnown(w.Workload):
			bad(f+".workload", "unknown workload %q", w.Workload)
		}
		checkRules(f, w.RulesOver(c.Alerts.Rules))
		if w.Card != "" && !cardKnown(w.Card) {
			bad(f+".card", "unknown card %q", w.Card)
		}
		for _, m := range w.Modes {
			if _, err := pricewatch.ParseMode(m); err != nil {
				bad(f+".modes", "%v", err)
			}
		}
		if w.Currency != "" && w.Currency != "USD" && w.Currency != "EUR" && w.Currency != "CNY" {
			bad(f+".currency", "must be USD, EUR or CNY")
		}
		if w.MaxGPUs < 0 || w.MaxGPUs > rank.MaxMaxGPUs {
			bad(f+".max_gpus", "must be within 0..%d", rank.MaxMaxGPUs)
		}
		if w.Available != "" && w.Available != "yes" && w.Available != "any" {
			bad(f+".available", "must be yes (the default) or any")
		}
	}
	parser := cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
	for _, name := range c.SourceNames() {
		s := c.Sources[name].Settings
		f := "sources." + name
		if !s.Enabled {
			continue
		}
		if !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
			bad(f+".url", "must be an http(s) URL, got %q", s.URL)
		}
		if _, err := parser.Parse(s.Schedule); err != nil {
			bad(f+".schedule", "%v", err)
		}
		if s.StaleAfter <= 0 {
			bad(f+".stale_after", "must be positive")
		}
		if s.Timeout < 0 || s.Delay < 0 {
			bad(f, "timeout and delay must not be negative")
		}
	}
	for i, o := range c.Owned {
		if err := o.Validate(fmt.Sprintf("owned[%d]", i), cardKnown, func(cur string) bool {
			return cur == "USD" || cur == "EUR" || cur == "CNY"
		}); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Slack.Token != "" && c.Slack.Channel == "" {
		bad("slack.channel", "is required with a bot token ("+EnvSlackToken+")")
	}
	return errors.Join(errs...)
}

// ResolveWorkloads returns the built-in workloads and those the config
// defines. Each definition goes through the job-spec decoder of
// POST /v1/plan, so an unknown field is an error naming it.
func (c *Config) ResolveWorkloads() ([]rank.Workload, error) {
	specs := make([]rank.NamedSpec, 0, len(c.Workloads))
	for i, raw := range c.Workloads {
		b, err := json.Marshal(raw)
		if err != nil {
			return nil, fmt.Errorf("workloads[%d]: %w", i, err)
		}
		var s rank.NamedSpec
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("workloads[%d]: %w", i, err)
		}
		specs = append(specs, s)
	}
	ws, err := rank.Workloads(specs)
	if err != nil {
		return nil, err
	}
	for i := range ws {
		if ws[i].Method != rank.MethodServe {
			continue
		}
		e := ws[i].Engine
		if e == "" {
			e = rank.EngineVLLM
		}
		if f, ok := c.Ranking.EngineEfficiency[e]; ok {
			ws[i].EngineEfficiency = f
		}
	}
	return ws, nil
}

// SourceNames lists configured sources, sorted.
func (c *Config) SourceNames() []string {
	names := make([]string, 0, len(c.Sources))
	for n := range c.Sources {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// PointAt rewrites the URL of every source named in urls to a fixture
// server (demo and --fixtures), its extra endpoints to the source's base
// there if it has any, and drops the politeness delay, which loopback does
// not need.
func (c *Config) PointAt(urls, bases map[string]string) {
	for name, src := range c.Sources {
		if u, ok := urls[name]; ok {
			src.Settings.URL = u
			src.Settings.Delay = 0
			if rb, ok := src.Scraper.(scrapers.Rebaser); ok && bases[name] != "" {
				rb.Rebase(bases[name])
			}
			c.Sources[name] = src
		}
	}
}
