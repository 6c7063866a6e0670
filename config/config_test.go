package config_test

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/scrapers"
	_ "github.com/pricewatch/pricewatch/scrapers/all"
	"github.com/pricewatch/pricewatch/scrapers/azure"
	"github.com/pricewatch/pricewatch/scrapers/vast"
)

// allSources are the registered sources; the first five must always be there.
var allSources = scrapers.Names()

func init() {
	for _, must := range []string{"azure", "ecb", "lambda", "runpod", "vast"} {
		if !slices.Contains(allSources, must) {
			panic("source " + must + " is not registered")
		}
	}
}

func workloadKnown(name string) bool { _, ok := rank.WorkloadByName(name); return ok }

func cardKnown(id string) bool { _, ok := normalize.DefaultCatalog().Card(id); return ok }

func decode(t *testing.T, yml string) (*config.Config, error) {
	t.Helper()
	c := config.Default()
	return c, c.Decode(strings.NewReader(yml))
}

func mustDecode(t *testing.T, yml string) *config.Config {
	t.Helper()
	c, err := decode(t, yml)
	if err != nil {
		t.Fatalf("Decode: %v\n%s", err, yml)
	}
	return c
}

func TestConfig_Default(t *testing.T) {
	c := config.Default()
	if got := c.SourceNames(); !slices.Equal(got, allSources) {
		t.Fatalf("SourceNames = %v, want %v", got, allSources)
	}
	if got := scrapers.Names(); !slices.Equal(got, allSources) {
		t.Fatalf("registered sources = %v, want %v", got, allSources)
	}
	for _, name := range allSources {
		t.Run(name, func(t *testing.T) {
			s := c.Sources[name]
			if s.Name != name {
				t.Errorf("Name = %q", s.Name)
			}
			if !s.Settings.Enabled {
				t.Error("not enabled")
			}
			if !strings.HasPrefix(s.Settings.URL, "https://") {
				t.Errorf("URL = %q, want an https URL", s.Settings.URL)
			}
			if s.Settings.Schedule == "" {
				t.Error("no schedule")
			}
			if s.Settings.StaleAfter <= 0 {
				t.Errorf("stale_after = %v, want positive", s.Settings.StaleAfter)
			}
			if s.Scraper == nil {
				t.Error("no scraper")
			}
		})
	}
	t.Run("TopLevel", func(t *testing.T) {
		if c.DB == "" || c.LogLevel == "" || c.UserAgent == "" || c.Server.Addr == "" ||
			c.Server.ReadHeaderTimeout <= 0 || c.Ranking.BaseCurrency != "USD" ||
			c.Ranking.ReliabilityFloor <= 0 || c.Ranking.ReliabilityFloor > 1 {
			t.Errorf("incomplete defaults: %+v", c)
		}
		if len(c.Alerts.Watches) != 0 || c.Slack.Token != "" || c.Slack.WebhookURL != "" {
			t.Errorf("defaults carry watches or secrets: %+v %+v", c.Alerts, c.Slack)
		}
	})
	t.Run("Validates", func(t *testing.T) {
		if err := c.Validate(workloadKnown, cardKnown); err != nil {
			t.Errorf("default config does not validate: %v", err)
		}
	})
	t.Run("IndependentScrapers", func(t *testing.T) {
		a, b := config.Default(), config.Default()
		if a.Sources["azure"].Scraper == b.Sources["azure"].Scraper {
			t.Fatal("two Default configs share the azure scraper")
		}
		mustDecodeInto(t, a, "sources:\n  azure:\n    regions: [westus2]\n")
		if got := b.Sources["azure"].Scraper.(*azure.Scraper).Regions; !slices.Equal(got, azure.DefaultRegions) {
			t.Errorf("decoding one config changed another's regions: %v", got)
		}
		if !slices.Equal(azure.DefaultRegions, []string{"eastus", "westeurope"}) {
			t.Errorf("decoding changed azure.DefaultRegions: %v", azure.DefaultRegions)
		}
	})
}

func mustDecodeInto(t *testing.T, c *config.Config, yml string) {
	t.Helper()
	if err := c.Decode(strings.NewReader(yml)); err != nil {
		t.Fatalf("Decode: %v", err)
	}
}

const fullYAML = `
db: /var/lib/pricewatch/pw.db
log_level: debug
user_agent: pricewatch-test/1.0
server:
  addr: 0.0.0.0:9090
  read_timeout: 20s
ranking:
  reliability_floor: 0.9
  base_currency: EUR
alerts:
  min_change_pct: 5
  watches:
    - name: cheap-lora
      workload: lora-7b
      card: H100-80GB-SXM
      modes: [ondemand, spot]
      currency: EUR
    - name: serve
      workload: serve-7b
slack:
  channel: "#gpu-prices"
  api_url: http://127.0.0.1:9999/api/
  token_file: /run/secrets/slack-token
sources:
  azure:
    schedule: "0 */3 * * *"
    stale_after: 8h
    regions: [eastus, swedencentral, westus3]
    max_pages: 7
  vast:
    enabled: false
    limit: 250
    delay: 2s
  runpod:
    url: https://runpod.example/graphql
    timeout: 45s
    max_body_mb: 12
`

func TestConfig_Decode(t *testing.T) {
	c := mustDecode(t, fullYAML)
	def := config.Default()

	tests := []struct {
		name      string
		got, want any
	}{
		{"DB", c.DB, "/var/lib/pricewatch/pw.db"},
		{"LogLevel", c.LogLevel, "debug"},
		{"UserAgent", c.UserAgent, "pricewatch-test/1.0"},
		{"ServerAddr", c.Server.Addr, "0.0.0.0:9090"},
		{"ServerReadTimeout", c.Server.ReadTimeout, 20 * time.Second},
		{"ServerWriteTimeoutDefault", c.Server.WriteTimeout, def.Server.WriteTimeout},
		{"ServerIdleTimeoutDefault", c.Server.IdleTimeout, def.Server.IdleTimeout},
		{"ServerReadHeaderTimeoutDefault", c.Server.ReadHeaderTimeout, def.Server.ReadHeaderTimeout},
		{"ReliabilityFloor", c.Ranking.ReliabilityFloor, 0.9},
		{"BaseCurrency", c.Ranking.BaseCurrency, "EUR"},
		{"MinChangePct", c.Alerts.MinChangePct, 5.0},
		{"Watches", c.Alerts.Watches, []config.Watch{
			{Name: "cheap-lora", Workload: "lora-7b", Card: "H100-80GB-SXM", Modes: []string{"ondemand", "spot"}, Currency: "EUR"},
			{Name: "serve", Workload: "serve-7b"},
		}},
		{"SlackChannel", c.Slack.Channel, "#gpu-prices"},
		{"SlackAPIURL", c.Slack.APIURL, "http://127.0.0.1:9999/api/"},
		{"SlackTokenFile", c.Slack.TokenFile, "/run/secrets/slack-token"},
		{"SlackWebhookFileDefault", c.Slack.WebhookURLFile, ""},
		{"SlackTokenNotLoadedByDecode", c.Slack.Token, ""},

		{"AzureSchedule", c.Sources["azure"].Settings.Schedule, "0 */3 * * *"},
		{"AzureStaleAfter", c.Sources["azure"].Settings.StaleAfter, 8 * time.Hour},
		{"AzureURLDefault", c.Sources["azure"].Settings.URL, def.Sources["azure"].Settings.URL},
		{"AzureEnabledDefault", c.Sources["azure"].Settings.Enabled, true},
		{"AzureTimeoutDefault", c.Sources["azure"].Settings.Timeout, def.Sources["azure"].Settings.Timeout},
		{"AzureDelayDefault", c.Sources["azure"].Settings.Delay, def.Sources["azure"].Settings.Delay},
		{"VastDisabled", c.Sources["vast"].Settings.Enabled, false},
		{"VastDelay", c.Sources["vast"].Settings.Delay, 2 * time.Second},
		{"VastScheduleDefault", c.Sources["vast"].Settings.Schedule, def.Sources["vast"].Settings.Schedule},
		{"RunPodURL", c.Sources["runpod"].Settings.URL, "https://runpod.example/graphql"},
		{"RunPodTimeout", c.Sources["runpod"].Settings.Timeout, 45 * time.Second},
		{"RunPodMaxBody", c.Sources["runpod"].Settings.MaxBodyMB, 12},
		{"RunPodStaleAfterDefault", c.Sources["runpod"].Settings.StaleAfter, def.Sources["runpod"].Settings.StaleAfter},
		{"LambdaUntouched", c.Sources["lambda"], def.Sources["lambda"]},
		{"ECBUntouched", c.Sources["ecb"].Settings, def.Sources["ecb"].Settings},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("got %#v, want %#v", tt.got, tt.want)
			}
		})
	}

	t.Run("AzureOwnOptions", func(t *testing.T) {
		az, ok := c.Sources["azure"].Scraper.(*azure.Scraper)
		if !ok {
			t.Fatalf("azure scraper is %T", c.Sources["azure"].Scraper)
		}
		if want := []string{"eastus", "swedencentral", "westus3"}; !slices.Equal(az.Regions, want) {
			t.Errorf("Regions = %v, want %v (replaced, not appended)", az.Regions, want)
		}
		if az.MaxPages != 7 {
			t.Errorf("MaxPages = %d, want 7", az.MaxPages)
		}
	})
	t.Run("VastOwnOptions", func(t *testing.T) {
		v, ok := c.Sources["vast"].Scraper.(*vast.Scraper)
		if !ok {
			t.Fatalf("vast scraper is %T", c.Sources["vast"].Scraper)
		}
		if v.Limit != 250 {
			t.Errorf("Limit = %d, want 250", v.Limit)
		}
	})
	t.Run("OwnOptionsDefaultWhenUnset", func(t *testing.T) {
		c := mustDecode(t, "sources:\n  azure:\n    max_pages: 3\n  vast:\n    timeout: 5s\n")
		az := c.Sources["azure"].Scraper.(*azure.Scraper)
		if !slices.Equal(az.Regions, azure.DefaultRegions) || az.MaxPages != 3 {
			t.Errorf("azure scraper = %+v, want default regions and 3 pages", az)
		}
		if v := c.Sources["vast"].Scraper.(*vast.Scraper); v.Limit != vast.DefaultLimit {
			t.Errorf("vast limit = %d, want the default %d", v.Limit, vast.DefaultLimit)
		}
	})
	t.Run("Validates", func(t *testing.T) {
		if err := c.Validate(workloadKnown, cardKnown); err != nil {
			t.Errorf("full config does not validate: %v", err)
		}
	})
	t.Run("DecodeTwiceLayers", func(t *testing.T) {
		c := mustDecode(t, "server:\n  addr: 127.0.0.1:1\nranking:\n  base_currency: CNY\n")
		mustDecodeInto(t, c, "server:\n  write_timeout: 1m\n")
		if c.Server.Addr != "127.0.0.1:1" || c.Server.WriteTimeout != time.Minute || c.Ranking.BaseCurrency != "CNY" {
			t.Errorf("second Decode lost the first: %+v %+v", c.Server, c.Ranking)
		}
	})
}

func TestConfig_DecodeEmpty(t *testing.T) {
	def := config.Default()
	tests := []struct{ name, yml string }{
		{"EmptyFile", ""},
		{"OnlyComment", "# nothing here\n"},
		{"EmptyDocument", "---\n# everything commented out\n"},
		{"NullDocument", "~\n"},
		{"NullSection", "server:\nslack:\n"},
		{"NullSources", "sources:\n"},
		{"NullSource", "sources:\n  vast:\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustDecode(t, tt.yml)
			if c.DB != def.DB || c.Server != def.Server || !reflect.DeepEqual(c.Ranking, def.Ranking) ||
				!reflect.DeepEqual(c.Sources["vast"].Settings, def.Sources["vast"].Settings) {
				t.Errorf("%q changed the defaults: %+v", tt.yml, c)
			}
		})
	}
}

func TestConfig_DecodeStrict(t *testing.T) {
	tests := []struct {
		name, yml string
		wantInErr []string
	}{
		{"UnknownTopLevel", "db: x.db\nlistn: :8080\n", []string{"listn"}},
		{"SecretsBlockAtTop", "secrets:\n  token: x\n", []string{"secrets"}},
		{"UnknownServerKey", "server:\n  addr: :1\n  adr: :2\n", []string{"adr", "server"}},
		{"UnknownRankingKey", "ranking:\n  reliability_flor: 0.5\n", []string{"reliability_flor", "ranking"}},
		{"UnknownAlertsKey", "alerts:\n  min_change: 2\n", []string{"min_change", "alerts"}},
		{"UnknownSlackKey", "slack:\n  chanel: '#x'\n", []string{"chanel", "slack"}},
		{"UnknownWatchKey", "alerts:\n  watches:\n    - name: a\n      workload: lora-7b\n      mode: spot\n", []string{"mode", "alerts"}},
		{"UnknownSourceKey", "sources:\n  runpod:\n    shedule: '* * * * *'\n", []string{"shedule", "sources.runpod"}},
		{"OtherSourcesOption", "sources:\n  runpod:\n    regions: [eastus]\n", []string{"regions", "sources.runpod"}},
		{"VastOptionOnAzure", "sources:\n  azure:\n    limit: 5\n", []string{"limit", "sources.azure"}},
		{"OptionOnECB", "sources:\n  ecb:\n    max_pages: 5\n", []string{"max_pages", "sources.ecb"}},
		{"UnknownSource", "sources:\n  nosuch:\n    enabled: true\n", []string{"nosuch"}},
		{"SourceNotMapping", "sources:\n  vast: yes\n", []string{"sources.vast"}},
		{"BadDuration", "sources:\n  vast:\n    stale_after: soon\n", []string{"sources.vast", "soon"}},
		{"BadRegionsType", "sources:\n  azure:\n    regions: eastus\n", []string{"sources.azure"}},
		{"TopLevelNotMapping", "- db: x\n", nil},
		{"DuplicateSourceKey", "sources:\n  vast:\n    limit: 1\n    limit: 2\n", []string{"limit"}},
		{"DuplicateServerKey", "server:\n  addr: :1\n  addr: :2\n", []string{"addr"}},
		// A repeated section or source would silently merge or override.
		{"DuplicateTopLevelKey", "server:\n  addr: :1\nranking:\n  base_currency: EUR\nserver:\n  read_timeout: 1s\n", []string{"server"}},
		{"DuplicateTopLevelScalar", "db: a.db\ndb: b.db\n", []string{"db"}},
		{"DuplicateSource", "sources:\n  vast:\n    limit: 1\n  vast:\n    delay: 1s\n", []string{"vast"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decode(t, tt.yml)
			if err == nil {
				t.Fatalf("Decode(%q) succeeded, want an error", tt.yml)
			}
			for _, s := range tt.wantInErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not name %q", err, s)
				}
			}
		})
	}
}

// Secrets never come from the config file: the keys do not exist there.
func TestConfig_DecodeRejectsSecrets(t *testing.T) {
	tests := []struct{ name, yml, key string }{
		{"SlackToken", "slack:\n  channel: '#x'\n  token: xoxb-123\n", "token"},
		{"SlackWebhookURL", "slack:\n  webhook_url: https://hooks.slack.com/services/T/B/X\n", "webhook_url"},
		{"SlackTokenCapitalized", "slack:\n  Token: xoxb-123\n", "Token"},
		{"SlackWebhookURLCamel", "slack:\n  WebhookURL: https://hooks.slack.com/x\n", "WebhookURL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := decode(t, tt.yml)
			if err == nil {
				t.Fatalf("Decode accepted a secret in the file: token %q webhook %q", c.Slack.Token, c.Slack.WebhookURL)
			}
			if !strings.Contains(err.Error(), tt.key) {
				t.Errorf("error %q does not name %q", err, tt.key)
			}
			if c.Slack.Token != "" || c.Slack.WebhookURL != "" {
				t.Errorf("secret reached the config: token %q webhook %q", c.Slack.Token, c.Slack.WebhookURL)
			}
		})
	}
}

func TestConfig_Validate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(c *config.Config)
		field  string // "" means valid
	}{
		{"Default", func(c *config.Config) {}, ""},
		{"DefaultWatches", func(c *config.Config) {
			c.Alerts.Watches = config.DefaultWatches([]string{"lora-7b", "qlora-7b", "full-ft-7b", "serve-7b"})
		}, ""},
		{"FloorBounds", func(c *config.Config) { c.Ranking.ReliabilityFloor = 1 }, ""},
		{"DisabledSourceNotValidated", func(c *config.Config) {
			c.Sources["vast"] = setSettings(c.Sources["vast"], func(s *scrapers.Settings) {
				s.Enabled, s.URL, s.Schedule, s.StaleAfter = false, "", "not a schedule", 0
			})
		}, ""},
		{"DescriptorSchedule", func(c *config.Config) {
			c.Sources["ecb"] = setSettings(c.Sources["ecb"], func(s *scrapers.Settings) { s.Schedule = "@daily" })
		}, ""},

		{"EmptyDB", func(c *config.Config) { c.DB = "" }, "db"},
		{"BadSchedule", func(c *config.Config) {
			c.Sources["runpod"] = setSettings(c.Sources["runpod"], func(s *scrapers.Settings) { s.Schedule = "every 5 minutes" })
		}, "sources.runpod.schedule"},
		{"SixFieldSchedule", func(c *config.Config) {
			c.Sources["azure"] = setSettings(c.Sources["azure"], func(s *scrapers.Settings) { s.Schedule = "0 0 */6 * * *" })
		}, "sources.azure.schedule"},
		{"EmptySchedule", func(c *config.Config) {
			c.Sources["lambda"] = setSettings(c.Sources["lambda"], func(s *scrapers.Settings) { s.Schedule = "" })
		}, "sources.lambda.schedule"},
		{"NonHTTPURL", func(c *config.Config) {
			c.Sources["vast"] = setSettings(c.Sources["vast"], func(s *scrapers.Settings) { s.URL = "ftp://console.vast.ai/" })
		}, "sources.vast.url"},
		{"EmptyURL", func(c *config.Config) {
			c.Sources["ecb"] = setSettings(c.Sources["ecb"], func(s *scrapers.Settings) { s.URL = "" })
		}, "sources.ecb.url"},
		{"StaleAfterZero", func(c *config.Config) {
			c.Sources["azure"] = setSettings(c.Sources["azure"], func(s *scrapers.Settings) { s.StaleAfter = 0 })
		}, "sources.azure.stale_after"},
		{"NegativeTimeout", func(c *config.Config) {
			c.Sources["runpod"] = setSettings(c.Sources["runpod"], func(s *scrapers.Settings) { s.Timeout = -time.Second })
		}, "sources.runpod"},
		{"ReliabilityFloorAboveOne", func(c *config.Config) { c.Ranking.ReliabilityFloor = 1.5 }, "ranking.reliability_floor"},
		{"ReliabilityFloorNegative", func(c *config.Config) { c.Ranking.ReliabilityFloor = -0.1 }, "ranking.reliability_floor"},
		{"BadBaseCurrency", func(c *config.Config) { c.Ranking.BaseCurrency = "GBP" }, "ranking.base_currency"},
		{"NegativeMinChange", func(c *config.Config) { c.Alerts.MinChangePct = -1 }, "alerts.min_change_pct"},
		{"UnknownWorkload", func(c *config.Config) {
			c.Alerts.Watches = []config.Watch{{Name: "w", Workload: "lora-70b"}}
		}, "alerts.watches[0].workload"},
		{"MissingWorkload", func(c *config.Config) {
			c.Alerts.Watches = []config.Watch{{Name: "w"}}
		}, "alerts.watches[0].workload"},
		{"UnknownCard", func(c *config.Config) {
			c.Alerts.Watches = []config.Watch{{Name: "w", Workload: "lora-7b", Card: "H100"}}
		}, "alerts.watches[0].card"},
		{"UnknownMode", func(c *config.Config) {
			c.Alerts.Watches = []config.Watch{{Name: "w", Workload: "lora-7b", Modes: []string{"spot", "hourly"}}}
		}, "alerts.watches[0].modes"},
		{"DuplicateWatchNames", func(c *config.Config) {
			c.Alerts.Watches = []config.Watch{{Name: "w", Workload: "lora-7b"}, {Name: "w", Workload: "serve-7b"}}
		}, "alerts.watches[1].name"},
		{"MissingWatchName", func(c *config.Config) {
			c.Alerts.Watches = []config.Watch{{Workload: "lora-7b"}}
		}, "alerts.watches[0].name"},
		{"BadWatchCurrency", func(c *config.Config) {
			c.Alerts.Watches = []config.Watch{{Name: "w", Workload: "lora-7b", Currency: "JPY"}}
		}, "alerts.watches[0].currency"},
		{"BotTokenWithoutChannel", func(c *config.Config) { c.Slack.Token = "xoxb-1" }, "slack.channel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Default()
			tt.modify(c)
			err := c.Validate(workloadKnown, cardKnown)
			if tt.field == "" {
				if err != nil {
					t.Errorf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate succeeded, want an error naming %q", tt.field)
			}
			if !strings.Contains(err.Error(), tt.field+":") {
				t.Errorf("error %q does not name %q", err, tt.field)
			}
		})
	}

	t.Run("EveryProblemReported", func(t *testing.T) {
		c := config.Default()
		c.Ranking.ReliabilityFloor = 2
		c.Slack.Token = "xoxb-1"
		c.Sources["vast"] = setSettings(c.Sources["vast"], func(s *scrapers.Settings) { s.StaleAfter = -1 })
		err := c.Validate(workloadKnown, cardKnown)
		if err == nil {
			t.Fatal("Validate succeeded")
		}
		for _, f := range []string{"ranking.reliability_floor", "slack.channel", "sources.vast.stale_after"} {
			if !strings.Contains(err.Error(), f) {
				t.Errorf("error %q does not name %q", err, f)
			}
		}
	})
	t.Run("WebhookWithoutChannel", func(t *testing.T) {
		c := config.Default()
		c.Slack.WebhookURL = "https://hooks.slack.com/x"
		if err := c.Validate(workloadKnown, cardKnown); err != nil {
			t.Errorf("a webhook needs no channel: %v", err)
		}
	})
}

func setSettings(s config.Source, f func(*scrapers.Settings)) config.Source {
	f(&s.Settings)
	return s
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfig_LoadSecrets(t *testing.T) {
	tokenFile := writeFile(t, "token", "  xoxb-from-file\n")
	hookFile := writeFile(t, "hook", "https://hooks.slack.com/from-file\n\n")
	missing := filepath.Join(t.TempDir(), "missing")

	tests := []struct {
		name                string
		envToken, envHook   string
		tokenFile, hookFile string
		wantToken, wantHook string
		wantErr             bool
	}{
		{name: "None"},
		{name: "EnvOnly", envToken: "xoxb-env", envHook: "https://hooks.slack.com/env",
			wantToken: "xoxb-env", wantHook: "https://hooks.slack.com/env"},
		{name: "EnvTrimmed", envToken: " xoxb-env\n", wantToken: "xoxb-env"},
		{name: "EnvWinsOverFiles", envToken: "xoxb-env", envHook: "https://hooks.slack.com/env",
			tokenFile: tokenFile, hookFile: hookFile,
			wantToken: "xoxb-env", wantHook: "https://hooks.slack.com/env"},
		{name: "FilesWhenEnvEmpty", tokenFile: tokenFile, hookFile: hookFile,
			wantToken: "xoxb-from-file", wantHook: "https://hooks.slack.com/from-file"},
		{name: "BlankEnvFallsBackToFile", envToken: "   ", tokenFile: tokenFile, wantToken: "xoxb-from-file"},
		{name: "MixedSources", envHook: "https://hooks.slack.com/env", tokenFile: tokenFile,
			wantToken: "xoxb-from-file", wantHook: "https://hooks.slack.com/env"},
		{name: "MissingTokenFile", tokenFile: missing, wantErr: true},
		{name: "MissingWebhookFile", envToken: "xoxb-env", hookFile: missing, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(config.EnvSlackToken, tt.envToken)
			t.Setenv(config.EnvSlackWebhook, tt.envHook)
			c := config.Default()
			c.Slack.TokenFile, c.Slack.WebhookURLFile = tt.tokenFile, tt.hookFile
			err := c.LoadSecrets()
			if tt.wantErr {
				if err == nil {
					t.Fatalf("LoadSecrets succeeded with a missing file (token %q, webhook %q)", c.Slack.Token, c.Slack.WebhookURL)
				}
				if !strings.Contains(err.Error(), "missing") {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadSecrets: %v", err)
			}
			if c.Slack.Token != tt.wantToken || c.Slack.WebhookURL != tt.wantHook {
				t.Errorf("token %q webhook %q, want %q %q", c.Slack.Token, c.Slack.WebhookURL, tt.wantToken, tt.wantHook)
			}
		})
	}
}

func TestConfig_Load(t *testing.T) {
	tokenFile := writeFile(t, "token", "xoxb-file\n")
	tests := []struct {
		name      string
		yml       *string // nil: no file
		envToken  string
		wantToken string
		wantErr   string
	}{
		{name: "NoFile"},
		{name: "FileWithTokenFile", yml: ptr("slack:\n  channel: '#c'\n  token_file: " + tokenFile + "\n"), wantToken: "xoxb-file"},
		{name: "EnvWins", yml: ptr("slack:\n  channel: '#c'\n  token_file: " + tokenFile + "\n"), envToken: "xoxb-env", wantToken: "xoxb-env"},
		{name: "TokenInFileRejected", yml: ptr("slack:\n  token: xoxb-inline\n"), wantErr: "token"},
		{name: "UnknownKeyNamesFile", yml: ptr("nope: 1\n"), wantErr: "config.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(config.EnvSlackToken, tt.envToken)
			t.Setenv(config.EnvSlackWebhook, "")
			path := ""
			if tt.yml != nil {
				path = writeFile(t, "config.yaml", *tt.yml)
			}
			c, err := config.Load(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if c.Slack.Token != tt.wantToken {
				t.Errorf("token %q, want %q", c.Slack.Token, tt.wantToken)
			}
		})
	}
	t.Run("MissingConfigFile", func(t *testing.T) {
		if _, err := config.Load(filepath.Join(t.TempDir(), "absent.yaml")); err == nil {
			t.Error("Load of a missing file succeeded")
		}
	})
}

func ptr(s string) *string { return &s }

func TestConfig_PointAt(t *testing.T) {
	c := config.Default()
	def := config.Default()
	c.PointAt(map[string]string{
		"azure":  "http://127.0.0.1:1/azure",
		"vast":   "http://127.0.0.1:1/vast",
		"nosuch": "http://127.0.0.1:1/none",
	}, nil)
	tests := []struct {
		name, source, url string
		delay             time.Duration
	}{
		{"AzureRewritten", "azure", "http://127.0.0.1:1/azure", 0},
		{"VastRewritten", "vast", "http://127.0.0.1:1/vast", 0},
		{"LambdaKept", "lambda", def.Sources["lambda"].Settings.URL, def.Sources["lambda"].Settings.Delay},
		{"RunPodKept", "runpod", def.Sources["runpod"].Settings.URL, def.Sources["runpod"].Settings.Delay},
		{"ECBKept", "ecb", def.Sources["ecb"].Settings.URL, def.Sources["ecb"].Settings.Delay},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := c.Sources[tt.source].Settings
			if s.URL != tt.url || s.Delay != tt.delay {
				t.Errorf("%s: url %q delay %v, want %q %v", tt.source, s.URL, s.Delay, tt.url, tt.delay)
			}
			d := def.Sources[tt.source].Settings
			if s.Schedule != d.Schedule || s.StaleAfter != d.StaleAfter || s.Timeout != d.Timeout || s.Enabled != d.Enabled {
				t.Errorf("%s: PointAt changed more than URL and delay: %+v", tt.source, s)
			}
		})
	}
	if def.Sources["lambda"].Settings.Delay == 0 || def.Sources["azure"].Settings.Delay == 0 {
		t.Fatal("test needs sources with a non-zero default delay")
	}
	if _, ok := c.Sources["nosuch"]; ok {
		t.Error("PointAt added a source it does not know")
	}
	if len(c.Sources) != len(allSources) {
		t.Errorf("%d sources after PointAt, want %d", len(c.Sources), len(allSources))
	}
	if az := c.Sources["azure"].Scraper.(*azure.Scraper); !slices.Equal(az.Regions, azure.DefaultRegions) {
		t.Errorf("PointAt changed azure options: %+v", az)
	}
}

func TestDefaultWatches(t *testing.T) {
	tests := []struct {
		name      string
		workloads []string
		want      []config.Watch
	}{
		{"None", nil, nil},
		{"One", []string{"lora-7b"}, []config.Watch{
			{Name: "lora-7b/ondemand", Workload: "lora-7b", Modes: []string{"ondemand"}},
			{Name: "lora-7b/spot", Workload: "lora-7b", Modes: []string{"spot"}},
		}},
		{"Two", []string{"serve-7b", "qlora-7b"}, []config.Watch{
			{Name: "serve-7b/ondemand", Workload: "serve-7b", Modes: []string{"ondemand"}, IncludeAPI: true}, // a serving workload: compared with APIs
			{Name: "serve-7b/spot", Workload: "serve-7b", Modes: []string{"spot"}},
			{Name: "qlora-7b/ondemand", Workload: "qlora-7b", Modes: []string{"ondemand"}},
			{Name: "qlora-7b/spot", Workload: "qlora-7b", Modes: []string{"spot"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := config.DefaultWatches(tt.workloads)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DefaultWatches(%v) = %+v, want %+v", tt.workloads, got, tt.want)
			}
		})
	}
	t.Run("BuiltinWorkloadsValidate", func(t *testing.T) {
		var names []string
		for _, w := range rank.BuiltinWorkloads() {
			names = append(names, w.Name)
		}
		ws := config.DefaultWatches(names)
		if len(ws) != 2*len(names) || len(names) != 6 { // 4 dense, 2 mixture-of-experts
			t.Fatalf("%d watches for %d workloads", len(ws), len(names))
		}
		c := config.Default()
		c.Alerts.Watches = ws
		if err := c.Validate(workloadKnown, cardKnown); err != nil {
			t.Errorf("default watches do not validate: %v", err)
		}
	})
}

// ranking.engine_efficiency scales one engine's serving estimates; an
// unknown engine or a factor out of range is an error naming the field.
func TestEngineEfficiency(t *testing.T) {
	c := mustDecode(t, "ranking:\n  engine_efficiency:\n    vllm: 1.2\n")
	ws, err := c.ResolveWorkloads()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		want := 0.0
		if w.Method == rank.MethodServe {
			want = 1.2
		}
		if w.EngineEfficiency != want {
			t.Errorf("%s: engine efficiency %v, want %v", w.Name, w.EngineEfficiency, want)
		}
	}
	for yml, field := range map[string]string{
		"ranking:\n  engine_efficiency:\n    lmdeploy: 1.2\n": "ranking.engine_efficiency.lmdeploy: unknown engine",
		"ranking:\n  engine_efficiency:\n    vllm: 9\n":       "ranking.engine_efficiency.vllm: must be a factor",
	} {
		c := mustDecode(t, yml)
		err := c.Validate(func(string) bool { return true }, func(string) bool { return true })
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%q: %v, want an error naming %s", yml, err, field)
		}
	}
}

// A config workload takes a model as its config.json, written as YAML in
// the file: Qwen3-30B-A3B's shape (48 layers, hidden 2048, 128 experts of
// 768, top-8) comes out a mixture-of-experts of 30.5B parameters, 3.35B
// active (rank/hfconfig_test.go counts it by hand); a missing field is an
// error naming the workload and the field.
func TestWorkloads_ModelConfig(t *testing.T) {
	const cfg = `
workloads:
  - name: serve-my-moe
    method: serve
    model:
      config:
        architectures: [Qwen3MoeForCausalLM]
        hidden_size: 2048
        num_hidden_layers: 48
        num_attention_heads: 32
        num_key_value_heads: 4
        head_dim: 128
        vocab_size: 151936
        intermediate_size: 6144
        moe_intermediate_size: 768
        num_experts: 128
        num_experts_per_tok: 8
        tie_word_embeddings: false
`
	c := mustDecode(t, cfg)
	ws, err := c.ResolveWorkloads()
	if err != nil {
		t.Fatal(err)
	}
	w := ws[len(ws)-1]
	if w.Name != "serve-my-moe" || !w.Model.MoE() || math.Abs(w.Model.ParamsB-30.53) > 0.01 || math.Abs(w.Model.ActiveParams()/1e9-3.35) > 0.01 {
		t.Errorf("workload %s: %v", w.Name, w.Model)
	}
	bad := mustDecode(t, strings.Replace(cfg, "        num_experts: 128\n", "", 1))
	if _, err := bad.ResolveWorkloads(); err == nil || !strings.Contains(err.Error(), "workloads[0]: model.config.num_experts") {
		t.Errorf("err = %v, want one naming workloads[0] and model.config.num_experts", err)
	}
}
