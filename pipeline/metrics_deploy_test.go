package pipeline_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pb33f/jsonschema/v6"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.yaml.in/yaml/v3"

	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
)

// deployDir is the repository's deploy/ (tests run in the package's
// directory).
const deployDir = "../deploy"

// schemaURL is the $id of deploy/grafana-dashboard.schema.json.
const schemaURL = "https://github.com/pricewatch/pricewatch/deploy/grafana-dashboard.schema.json"

// promtool is Prometheus's promtool: $PROMTOOL or on the PATH. .ci/run
// installs it (Debian's prometheus package); without it the test fails,
// saying how to get it, rather than skipping the checks.
func promtool(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PROMTOOL"); p != "" {
		return p
	}
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool not found (%v): install Debian's prometheus package (apt-get install prometheus; .ci/run does) or set PROMTOOL", err)
	}
	return p
}

func runPromtool(t *testing.T, dir string, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command(promtool(t), args...)
	cmd.Dir = dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Issue 32, done means: `promtool check rules deploy/*.rules.yml` in the
// tests. The rules are also unit-tested with `promtool test rules`
// (deploy/pricewatch.rules.test.yml): each alert fires on the series it
// is about, and not before.
func TestDeploy_PromtoolChecksRules(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(deployDir, "*.rules.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no deploy/*.rules.yml: %v", err)
	}
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	out := runPromtool(t, deployDir, nil, append([]string{"check", "rules"}, files...)...)
	t.Logf("promtool check rules %s:\n%s", strings.Join(files, " "), out)
	tests, err := filepath.Glob(filepath.Join(deployDir, "*.rules.test.yml"))
	if err != nil || len(tests) == 0 {
		t.Fatalf("no deploy/*.rules.test.yml: %v", err)
	}
	for _, f := range tests {
		out := runPromtool(t, deployDir, nil, "test", "rules", filepath.Base(f))
		t.Logf("promtool test rules %s:\n%s", filepath.Base(f), out)
	}
}

// liveExport runs every source once against the fixtures, with the
// collectors serve registers, an API request, an alert evaluation and a
// delivered Slack message, so that every metric the daemon exports has a
// series; it returns GET /metrics and the sample names in it.
func liveExport(t *testing.T) ([]byte, map[string]bool) {
	t.Helper()
	env := pipelinetest.New(t, nil, nil)
	// As cmd/pricewatch/serve.go does.
	env.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	scrape, api := metricsScraper(t, env)
	env.Round(t)
	if err := env.Pipeline.Enqueue("digest", alerts.Message{Text: "metrics test"}); err != nil {
		t.Fatal(err)
	}
	if err := env.Pipeline.Deliver(t.Context()); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/best?workload=lora-7b", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /v1/best: %d %s", rec.Code, rec.Body)
	}
	body := scrape()
	names := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			names[line[:i]] = true
		}
	}
	return body, names
}

var (
	promqlString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promqlBraces   = regexp.MustCompile(`\{[^{}]*\}`)
	promqlBrackets = regexp.MustCompile(`\[[^\[\]]*\]`)
	promqlGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
	promqlVar      = regexp.MustCompile(`\$\{?\w+\}?`)
	promqlToken    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?|[0-9][0-9A-Za-z_.]*`)
	promqlKeywords = []string{"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring",
		"group_left", "group_right", "inf", "Inf", "nan", "NaN", "atan2", "start", "end"}
)

// metricNames are the metric names a PromQL expression (or a Grafana
// label_values query) selects: what is left once strings, label
// matchers, ranges, groupings, variables, functions, keywords and numbers
// are taken out.
func metricNames(expr string) []string {
	s := promqlString.ReplaceAllString(expr, `""`)
	s = promqlVar.ReplaceAllString(s, " ")
	s = promqlBraces.ReplaceAllString(s, " ")
	s = promqlBrackets.ReplaceAllString(s, " ")
	s = promqlGrouping.ReplaceAllString(s, " ")
	var out []string
	for _, m := range promqlToken.FindAllStringSubmatch(s, -1) {
		tok := m[0]
		switch {
		case m[1] != "": // a function or an aggregation
		case tok[0] >= '0' && tok[0] <= '9':
		case slices.Contains(promqlKeywords, tok):
		default:
			out = append(out, tok)
		}
	}
	return out
}

func TestMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`sum by (source, result) (increase(pricewatch_scrape_runs_total{job=~"$job", source=~"a|b"}[$__rate_interval]))`: {"pricewatch_scrape_runs_total"},
		`abs(min without (card) (a) - min without (card) (a offset 1h)) / min without (card) (a offset 1h) > 0.10`:       {"a", "a", "a"},
		`(time() - x) > y and y > 0`:                                      {"x", "y", "y"},
		`x > bool 1 unless on (a) y{b="c"} offset 5m`:                     {"x", "y"},
		`histogram_quantile(0.9, sum by (le) (rate(h_bucket[5m]))) * 1e3`: {"h_bucket"},
		`z > 15 * 60`: {"z"},
	} {
		if got := metricNames(expr); !slices.Equal(got, want) {
			t.Errorf("metricNames(%s) = %v, want %v", expr, got, want)
		}
	}
}

// labelValuesMetric is the metric of a Grafana label_values(metric, label)
// query ("" for other queries).
func labelValuesMetric(q string) string {
	m := regexp.MustCompile(`^label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)`).FindStringSubmatch(q)
	if m == nil {
		return ""
	}
	return m[1]
}

type dashboard struct {
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID      int    `json:"id"`
		Type    string `json:"type"`
		Title   string `json:"title"`
		GridPos struct {
			H, W, X, Y int
		} `json:"gridPos"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// Issue 32, done means: the dashboard check in the tests. The dashboard is
// valid JSON, valid against deploy/grafana-dashboard.schema.json (what a
// provisioned dashboard over a datasource variable needs), its panels do
// not overlap, and every panel's and variable's query names only metrics
// a live /metrics of the daemon exports. The alert rules' expressions are
// held to the same scrape, the scrape passes `promtool check metrics`,
// and docs/metrics.md describes every pricewatch_ metric and alert.
func TestDeploy_DashboardAndRulesUseExportedMetrics(t *testing.T) {
	body, exported := liveExport(t)
	for _, must := range []string{"pricewatch_source_held", "pricewatch_best_cost_per_million_tokens", "pricewatch_outbox_oldest_pending_age_seconds",
		"pricewatch_http_requests_total", "pricewatch_slack_deliveries_total", "process_resident_memory_bytes"} {
		if !exported[must] {
			t.Fatalf("the live scrape lacks %s: the test's daemon is not complete", must)
		}
	}
	t.Run("PromtoolCheckMetrics", func(t *testing.T) {
		// Any lint problem (a counter without _total, a missing HELP, a
		// unit outside the name) makes promtool exit non-zero.
		if out := runPromtool(t, ".", body, "check", "metrics"); out != "" {
			t.Logf("promtool check metrics:\n%s", out)
		}
	})

	raw, err := os.ReadFile(filepath.Join(deployDir, "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("DashboardSchema", func(t *testing.T) {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("deploy/grafana-dashboard.json is not valid JSON: %v", err)
		}
		schemaFile, err := os.Open(filepath.Join(deployDir, "grafana-dashboard.schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		defer schemaFile.Close()
		schemaDoc, err := jsonschema.UnmarshalJSON(schemaFile)
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(schemaURL, schemaDoc); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile(schemaURL)
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(doc); err != nil {
			t.Errorf("deploy/grafana-dashboard.json: %v", err)
		}
	})

	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	t.Run("DashboardPanels", func(t *testing.T) {
		ids := map[int]bool{}
		cells := map[[2]int]string{}
		queries := 0
		for _, p := range d.Panels {
			if ids[p.ID] {
				t.Errorf("panel id %d twice", p.ID)
			}
			ids[p.ID] = true
			if p.GridPos.X+p.GridPos.W > 24 {
				t.Errorf("%q is wider than the grid: %+v", p.Title, p.GridPos)
			}
			for x := p.GridPos.X; x < p.GridPos.X+p.GridPos.W; x++ {
				for y := p.GridPos.Y; y < p.GridPos.Y+p.GridPos.H; y++ {
					if other, ok := cells[[2]int{x, y}]; ok {
						t.Errorf("%q overlaps %q at %d,%d", p.Title, other, x, y)
					}
					cells[[2]int{x, y}] = p.Title
				}
			}
			if p.Type == "row" {
				continue
			}
			refs := map[string]bool{}
			for _, q := range p.Targets {
				if refs[q.RefID] {
					t.Errorf("%q: refId %s twice", p.Title, q.RefID)
				}
				refs[q.RefID] = true
				names := metricNames(q.Expr)
				if len(names) == 0 {
					t.Errorf("%q: %s selects no metric", p.Title, q.Expr)
				}
				for _, n := range names {
					if !exported[n] {
						t.Errorf("panel %q: %s: the daemon exports no %s", p.Title, q.Expr, n)
					}
				}
				queries++
			}
		}
		vars := 0
		for _, v := range d.Templating.List {
			if v.Type != "query" {
				continue
			}
			n := labelValuesMetric(v.Definition)
			if n == "" || !exported[n] {
				t.Errorf("variable %s: %q: want label_values over a metric the daemon exports", v.Name, v.Definition)
			}
			vars++
		}
		t.Logf("%d panels, %d queries and %d query variables over %d exported sample names", len(d.Panels), queries, vars, len(exported))
	})

	rulesRaw, err := os.ReadFile(filepath.Join(deployDir, "pricewatch.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(rulesRaw, &rules); err != nil {
		t.Fatal(err)
	}
	var alertNames []string
	t.Run("RulesNameExportedMetrics", func(t *testing.T) {
		for _, g := range rules.Groups {
			for _, r := range g.Rules {
				alertNames = append(alertNames, r.Alert)
				for _, n := range metricNames(r.Expr) {
					if !exported[n] {
						t.Errorf("rule %s: the daemon exports no %s", r.Alert, n)
					}
				}
			}
		}
		for _, want := range []string{"PricewatchSourceStale", "PricewatchSourceHeld", "PricewatchOutboxStuck", "PricewatchBestCostChanged"} {
			if !slices.Contains(alertNames, want) {
				t.Errorf("no alert %s in deploy/pricewatch.rules.yml", want)
			}
		}
	})

	t.Run("DocsDescribeEveryMetric", func(t *testing.T) {
		doc, err := os.ReadFile("../docs/metrics.md")
		if err != nil {
			t.Fatal(err)
		}
		var families []string
		for n := range exported {
			if !strings.HasPrefix(n, "pricewatch_") {
				continue
			}
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if base, ok := strings.CutSuffix(n, suffix); ok && exported[base+"_bucket"] {
					n = base
				}
			}
			if !slices.Contains(families, n) {
				families = append(families, n)
			}
		}
		sort.Strings(families)
		for _, n := range append(families, alertNames...) {
			if !bytes.Contains(doc, []byte("`"+n+"`")) {
				t.Errorf("docs/metrics.md does not describe `%s`", n)
			}
		}
		t.Logf("docs/metrics.md describes %d pricewatch_ metrics and %d alerts", len(families), len(alertNames))
	})
}
