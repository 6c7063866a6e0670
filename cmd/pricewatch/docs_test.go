package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The documentation's commands are run, and what they are shown to print is
// checked. The convention, for README.md and docs/*.md:
//
//   - A fenced block marked ```console is a walkthrough this test runs. A line
//     starting with "$ " is a command (a trailing " \" continues it; a
//     heredoc <<'EOF' takes the lines up to EOF); the lines after it, up to
//     the next command, are its output as shown. Each shown line must match
//     a line of the command's output (stdout, stderr, and "pricewatch: ERR"
//     when it fails), in order: its words appear in that line in the same
//     order, each a whole word, where "…" inside a word stands for any
//     characters and a lone "…" for anything (left-out lines or columns). A
//     command fails the test when it fails, unless its shown output has the
//     "pricewatch: …" line of the error.
//   - A block marked ```sh not-run (or bash, shell) is never run: commands
//     that change the machine (systemctl, useradd) or run the test suite.
//     Any other sh/bash/shell block fails the test, as does a "$ " line in a
//     block of another kind: every command shown is run or marked.
//   - Every `pricewatch CMD …` in the text and every "pricewatch CMD" line
//     of a block that is not run names a command that exists and only flags
//     its -h lists.
//   - Every link to the demo daemon (<http://127.0.0.1:8080/…> or
//     (http://127.0.0.1:8080/…)) answers 200 while a page's daemon runs.
//
// Each page runs from the repository root with an empty state directory
// (the demo database and the daemon's record) and its own folder standing
// for /tmp/, so a page's walkthrough is whole: it scrapes or serves the demo
// before it reads it. `pricewatch` and `go run ./cmd/pricewatch` run the
// CLI in process; `serve` starts the test daemon on a free port, which the
// page's http://127.0.0.1:8080 then names; curl, rm -rf, cp -r, sed -i 's/…/…/',
// cat > FILE <<'EOF' and export VAR=value are done by the test. The first
// `pricewatch scrape --demo --db FILE` into a new file is run; the same
// command on a later page gets a copy of its database and its output (the
// same embedded fixtures into an empty file), which keeps the test fast.

// docPages are the pages whose commands are run, README first.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(pages)
	return append([]string{"README.md"}, pages...)
}

type docCommand struct {
	line  int      // line of the "$ " in the page
	text  string   // the command, continuations joined
	stdin string   // a heredoc's body
	want  []string // the output lines shown
}

type docBlock struct {
	line int    // line of the opening fence
	info string // the fence's info string
	body []string
}

// fencedBlocks returns the page's fenced blocks and its text outside them.
func fencedBlocks(src string) (blocks []docBlock, prose string, err error) {
	var out strings.Builder
	var cur *docBlock
	indent := ""
	for i, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if cur == nil {
			if strings.HasPrefix(trimmed, "```") {
				cur = &docBlock{line: i + 1, info: strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))}
				indent = line[:len(line)-len(strings.TrimLeft(line, " "))]
				continue
			}
			out.WriteString(line + "\n")
			continue
		}
		if trimmed == "```" {
			blocks = append(blocks, *cur)
			cur = nil
			continue
		}
		cur.body = append(cur.body, strings.TrimPrefix(line, indent))
	}
	if cur != nil {
		return nil, "", fmt.Errorf("line %d: the block is not closed", cur.line)
	}
	return blocks, out.String(), nil
}

var envAssignRe = regexp.MustCompile(`^[A-Z_]+=`)

var heredocRe = regexp.MustCompile(`<<-?'?([A-Z]+)'?`)

// consoleCommands reads a console block's commands and shown output.
func consoleCommands(b docBlock) ([]docCommand, error) {
	var cmds []docCommand
	for i := 0; i < len(b.body); i++ {
		line := b.body[i]
		if !strings.HasPrefix(line, "$ ") {
			if len(cmds) == 0 {
				if strings.TrimSpace(line) == "" {
					continue
				}
				return nil, fmt.Errorf("line %d: output before any command", b.line+1+i)
			}
			cmds[len(cmds)-1].want = append(cmds[len(cmds)-1].want, line)
			continue
		}
		c := docCommand{line: b.line + 1 + i, text: strings.TrimPrefix(line, "$ ")}
		for strings.HasSuffix(c.text, " \\") && i+1 < len(b.body) {
			i++
			c.text = strings.TrimSuffix(c.text, "\\") + strings.TrimSpace(b.body[i])
		}
		if m := heredocRe.FindStringSubmatch(c.text); m != nil {
			c.text = strings.TrimSpace(strings.Replace(c.text, m[0], "", 1))
			var body []string
			for i++; i < len(b.body) && b.body[i] != m[1]; i++ {
				body = append(body, b.body[i])
			}
			if i == len(b.body) {
				return nil, fmt.Errorf("line %d: heredoc %s is not closed", c.line, m[1])
			}
			c.stdin = strings.Join(body, "\n") + "\n"
		}
		cmds = append(cmds, c)
	}
	return cmds, nil
}

// splitWords splits a command line into words: single and double quotes
// group (the quoting the pages use), nothing else is interpreted.
func splitWords(line string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	started := false
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, started = r, true
		case r == ' ' || r == '\t':
			if started {
				out = append(out, cur.String())
				cur.Reset()
				started = false
			}
		default:
			cur.WriteRune(r)
			started = true
		}
	}
	if started {
		out = append(out, cur.String())
	}
	return out
}

// linePattern is the regexp of a shown line: its words in order, each a
// whole word of the output line, with any words between them; "…" in a
// word stands for any characters (spaces too: a JSON answer's strings hold
// spaces), a lone "…" for anything.
func linePattern(shown string) *regexp.Regexp {
	var words []string
	for _, w := range strings.Fields(shown) {
		if w == "…" {
			continue
		}
		parts := strings.Split(w, "…")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		words = append(words, strings.Join(parts, ".*"))
	}
	return regexp.MustCompile(`(?:^| )` + strings.Join(words, `(?: | .* )`) + `(?: |$)`)
}

// lineMatches reports whether the shown line matches the output line
// (its runs of white space read as one space).
func lineMatches(shown, got string) bool {
	return linePattern(shown).MatchString(strings.Join(strings.Fields(got), " "))
}

// missingLine returns the first shown line that no output line after the
// previous match matches, or "".
func missingLine(shown []string, output string) string {
	got := strings.Split(output, "\n")
	for i, g := range got {
		got[i] = strings.Join(strings.Fields(g), " ")
	}
	k := 0
	for _, s := range shown {
		if strings.TrimSpace(s) == "" || strings.TrimSpace(s) == "…" {
			continue
		}
		re := linePattern(s)
		for k < len(got) && !re.MatchString(got[k]) {
			k++
		}
		if k == len(got) {
			return s
		}
		k++
	}
	return ""
}

func TestDocs_MatchingRules(t *testing.T) {
	for _, c := range []struct {
		shown, got string
		want       bool
	}{
		{"1 L40S 0.590", "1   L40S   0.0433  1 GPU  0.590", true},
		{"1 L40S 0.59", "1   L40S   0.0433  1 GPU  0.590", false}, // whole words
		{"L40S 1", "1 L40S", false},                               // in order
		{`{"status":"ready"…`, `{"status":"ready","x":1}`, true},
		{`{…"status":"ready"}`, `{"a":1,"status":"ready"}`, true},
		{`{…"status":"ready"}`, `{"a":1,"status":"readyz"}`, false},
		{"Fits: … yes", "Fits:         yes", true},
		{`{"a":…"b":"x y"…`, `{"a":1,"b":"x y","c":2}`, true}, // … spans spaces
		{"a … b", "a x y b", true},
		{"a b", "ab", false},
	} {
		if got := lineMatches(c.shown, c.got); got != c.want {
			t.Errorf("lineMatches(%q, %q) = %v", c.shown, c.got, got)
		}
	}
	if m := missingLine([]string{"b", "a"}, "a\nb\n"); m != "a" {
		t.Errorf("lines out of order: missing %q", m)
	}
}

// The parts of the convention that judge a page: a heredoc and a
// continued line are read as one command, an unknown flag or command is
// caught, a synopsis line names several commands.
func TestDocs_ConventionParts(t *testing.T) {
	cmds, err := consoleCommands(docBlock{line: 1, info: "console", body: []string{
		"$ cat > /tmp/a.json <<'JSON'",
		`{"a": 1}`,
		"JSON",
		"$ pricewatch best --demo \\",
		"    --workload lora-7b",
		"Demo: …",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 2 || cmds[0].text != "cat > /tmp/a.json" || cmds[0].stdin != "{\"a\": 1}\n" ||
		cmds[1].text != "pricewatch best --demo --workload lora-7b" || !slices.Equal(cmds[1].want, []string{"Demo: …"}) {
		t.Errorf("commands read as %+v", cmds)
	}
	if _, err := consoleCommands(docBlock{body: []string{"output first"}}); err == nil {
		t.Error("output before any command is not refused")
	}
	if got := splitWords(`a 'b c' "d e" f`); !slices.Equal(got, []string{"a", "b c", "d e", "f"}) {
		t.Errorf("splitWords: %q", got)
	}
	fc := &flagChecker{flags: map[string]map[string]bool{}}
	for text, bad := range map[string]bool{
		"pricewatch best --workload W [--card C] [--db FILE | --demo]": false,
		"pricewatch sources accept runpod --level factor:x10/ondemand": false,
		"pricewatch best --no-such-flag":                               true,
		"pricewatch nosuch --demo":                                     true,
		"pricewatch silence add --watch W --for 6h --reason TEXT":      false,
		"pricewatch silence add --card C":                              true,
	} {
		if msg := fc.check(text); (msg != "") != bad {
			t.Errorf("check(%q) = %q", text, msg)
		}
	}
	if got := commandMentions("pricewatch silence add --watch W | silence list | silence remove ID"); len(got) != 3 {
		t.Errorf("commandMentions: %q", got)
	}
	if got := commandMentions("pricewatch best [--db FILE | --demo]"); len(got) != 1 {
		t.Errorf("commandMentions: %q", got)
	}
}

// docRunner runs one page's commands.
type docRunner struct {
	t      *testing.T
	page   string
	tmp    string // stands for /tmp/
	daemon *daemon
	ran    int
	demo   *demoScrape
}

// demoScrape keeps the first `pricewatch scrape --demo --db FILE` into a
// new file: the same command on another page (same embedded fixtures, an
// empty file) gets a copy of that database and its output instead of a
// second scrape, which keeps the test fast.
type demoScrape struct {
	db     string
	output string
}

// local maps the page's /tmp/ and daemon address to the test's.
func (r *docRunner) local(s string) string {
	s = strings.ReplaceAll(s, "/tmp/", r.tmp+"/")
	if r.daemon != nil {
		s = strings.ReplaceAll(s, "http://127.0.0.1:8080", r.daemon.base)
		s = strings.ReplaceAll(s, "127.0.0.1:8080", strings.TrimPrefix(r.daemon.base, "http://"))
	}
	return s
}

func (r *docRunner) fail(c docCommand, format string, args ...any) {
	r.t.Helper()
	r.t.Errorf("%s:%d: $ %s\n%s", r.page, c.line, c.text, fmt.Sprintf(format, args...))
}

// run runs one command and checks its shown output.
func (r *docRunner) run(c docCommand) {
	r.t.Helper()
	var output strings.Builder
	failed := false
	began := time.Now()
	defer func() {
		if d := time.Since(began); d > 500*time.Millisecond {
			r.t.Logf("%s:%d: %.1fs: $ %s", r.page, c.line, d.Seconds(), c.text)
		}
	}()
	for _, part := range strings.Split(c.text, " && ") {
		out, err := r.runOne(c, splitWords(part))
		output.WriteString(out)
		if err != nil {
			if !strings.HasSuffix(out, "\n") && out != "" {
				output.WriteString("\n")
			}
			fmt.Fprintf(&output, "pricewatch: %v\n", err)
			failed = true
			break
		}
	}
	r.ran++
	shown := make([]string, len(c.want))
	for i, w := range c.want {
		shown[i] = r.local(w)
	}
	showsError := slices.ContainsFunc(c.want, func(w string) bool { return strings.HasPrefix(w, "pricewatch: ") })
	switch {
	case failed && !showsError:
		r.fail(c, "failed:\n%s", excerpt(output.String()))
	case !failed && showsError:
		r.fail(c, "the page shows an error; the command succeeded:\n%s", excerpt(output.String()))
	default:
		if m := missingLine(shown, output.String()); m != "" {
			r.fail(c, "the shown line\n\t%s\nis not in the output (in order):\n%s", m, excerpt(output.String()))
		}
	}
}

// excerpt is a command's output cut for a failure message: 60 lines of
// at most 240 characters.
func excerpt(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 60 {
		lines = append(lines[:60], fmt.Sprintf("… %d more lines", len(lines)-60))
	}
	for i, l := range lines {
		if r := []rune(l); len(r) > 240 {
			lines[i] = string(r[:240]) + "…"
		}
	}
	return strings.Join(lines, "\n")
}

// runOne runs one simple command: the CLI, or one of the few shell tools
// the pages use.
func (r *docRunner) runOne(c docCommand, w []string) (string, error) {
	t := r.t
	t.Helper()
	for len(w) > 0 && envAssignRe.MatchString(w[0]) {
		k, v, _ := strings.Cut(w[0], "=")
		old, had := os.LookupEnv(k)
		os.Setenv(k, r.local(v))
		defer func() {
			if had {
				os.Setenv(k, old)
			} else {
				os.Unsetenv(k)
			}
		}()
		w = w[1:]
	}
	for i := range w {
		w[i] = r.local(w[i])
	}
	switch {
	case len(w) == 0:
		return "", fmt.Errorf("empty command")
	case w[0] == "pricewatch":
		return r.cli(w[1:])
	case len(w) > 3 && w[0] == "go" && w[1] == "run" && w[2] == "./cmd/pricewatch":
		return r.cli(w[3:])
	case w[0] == "curl":
		return r.curl(w[1:])
	case len(w) >= 3 && w[0] == "rm" && w[1] == "-rf":
		for _, p := range w[2:] {
			if !strings.HasPrefix(p, r.tmp) {
				return "", fmt.Errorf("rm -rf outside /tmp/: %s", p)
			}
			os.RemoveAll(p)
		}
		return "", nil
	case len(w) == 4 && w[0] == "cp" && w[1] == "-r":
		return "", os.CopyFS(w[3], os.DirFS(w[2]))
	case len(w) == 4 && w[0] == "sed" && w[1] == "-i" && strings.HasPrefix(w[2], "s/"):
		from, to, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(w[2], "s/"), "/"), "/")
		edit(t, w[3], from, to)
		return "", nil
	case len(w) == 3 && w[0] == "cat" && w[1] == ">":
		return "", os.WriteFile(w[2], []byte(r.local(c.stdin)), 0o600)
	case len(w) == 2 && w[0] == "export" && strings.Contains(w[1], "="):
		k, v, _ := strings.Cut(w[1], "=")
		t.Setenv(k, v)
		return "", nil
	}
	t.Fatalf("%s:%d: this test cannot run %q: show it in a `sh not-run` block or teach docs_test.go", r.page, c.line, w)
	return "", nil
}

// cli runs pricewatch in process; serve starts the page's daemon.
func (r *docRunner) cli(args []string) (string, error) {
	r.t.Helper()
	if len(args) > 0 && args[0] == "serve" {
		if r.daemon != nil {
			r.daemon.stop(r.t)
		}
		if !slices.Contains(args, "--addr") {
			args = append(args, "--addr", "127.0.0.1:0")
		}
		r.daemon = startServe(r.t, args[1:]...)
		waitFor(r.t, 30*time.Second, "the daemon's first round", func() bool {
			return strings.Contains(r.daemon.errOut.String(), "first round done")
		})
		return r.daemon.out.String(), nil
	}
	fresh := len(args) == 4 && args[0] == "scrape" && args[1] == "--demo" && args[2] == "--db"
	if fresh {
		if _, err := os.Stat(args[3]); err == nil {
			fresh = false
		}
	}
	if fresh && r.demo.db != "" {
		b, err := os.ReadFile(r.demo.db)
		if err != nil {
			return "", err
		}
		return r.demo.output, os.WriteFile(args[3], b, 0o600)
	}
	var out bytes.Buffer
	err := Run(r.t.Context(), args, &out, &out)
	if fresh && err == nil {
		r.demo.db = filepath.Join(r.t.TempDir(), "demo-scrape.db")
		b, rerr := os.ReadFile(args[3])
		if rerr != nil {
			return "", rerr
		}
		r.demo.output = out.String()
		if werr := os.WriteFile(r.demo.db, b, 0o600); werr != nil {
			return "", werr
		}
	}
	return out.String(), err
}

// curl does what the pages' curl lines ask: -s, -S, -f, -X, -H, -d/--data
// (@FILE reads the file), a URL.
func (r *docRunner) curl(args []string) (string, error) {
	method, url := "", ""
	var body io.Reader
	header := http.Header{}
	failOnError := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-X" || a == "-H" || a == "-d" || a == "--data" || a == "--data-binary":
			if i+1 == len(args) {
				return "", fmt.Errorf("curl: %s needs a value", a)
			}
			i++
			switch a {
			case "-X":
				method = args[i]
			case "-H":
				k, v, _ := strings.Cut(args[i], ":")
				header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
			default:
				d := args[i]
				if f, ok := strings.CutPrefix(d, "@"); ok {
					b, err := os.ReadFile(f)
					if err != nil {
						return "", err
					}
					d = string(b)
				}
				body = strings.NewReader(d)
				if method == "" {
					method = http.MethodPost
				}
			}
		case strings.HasPrefix(a, "-") && strings.Trim(a, "-sSf") == "":
			failOnError = failOnError || strings.Contains(a, "f")
		case strings.HasPrefix(a, "http://"):
			url = a
		default:
			return "", fmt.Errorf("curl: this test does not know %q", a)
		}
	}
	if method == "" {
		method = http.MethodGet
	}
	if r.daemon == nil {
		return "", fmt.Errorf("curl %s: no daemon runs on this page (start one with pricewatch serve --demo)", url)
	}
	req, err := http.NewRequestWithContext(r.t.Context(), method, url, body)
	if err != nil {
		return "", err
	}
	req.Header = header
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return "", err
	}
	if failOnError && res.StatusCode >= 400 {
		return "", fmt.Errorf("curl: (22) The requested URL returned error: %d", res.StatusCode)
	}
	return string(b), nil
}

var demoLinkRe = regexp.MustCompile(`[<(](http://127\.0\.0\.1:8080/[^\s>)]*)[>)]`)

// checkLinks fetches every link to the demo daemon on the page: each must
// answer 200.
func (r *docRunner) checkLinks(src string) int {
	links := demoLinkRe.FindAllStringSubmatch(src, -1)
	if len(links) == 0 {
		return 0
	}
	if r.daemon == nil {
		r.cli([]string{"serve", "--demo"})
	}
	for _, m := range links {
		res, err := http.Get(r.local(m[1]))
		if err != nil {
			r.t.Errorf("%s: %s: %v", r.page, m[1], err)
			continue
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			r.t.Errorf("%s: %s answers %d", r.page, m[1], res.StatusCode)
		}
	}
	return len(links)
}

// The commands and their sub-commands (pricewatch -h), to check that a
// command named in the text exists and takes the flags it is shown with.
var docSubcommands = map[string][]string{
	"profile": {"set", "import", "list", "delete"},
	"sources": {"accept"},
	"silence": {"add", "list", "remove"},
}

var flagLineRe = regexp.MustCompile(`(?m)^\s+-([a-z0-9-]+)`)

type flagChecker struct {
	flags map[string]map[string]bool // by command path; nil: no such command
}

// check returns what is wrong with `pricewatch …` as written: an unknown
// command or a flag its -h does not list.
func (fc *flagChecker) check(text string) string {
	words := strings.Fields(text)
	if len(words) < 2 || words[0] != "pricewatch" || strings.HasPrefix(words[1], "-") {
		return ""
	}
	path := []string{strings.Trim(words[1], "`")}
	if subs, ok := docSubcommands[path[0]]; ok && len(words) > 2 && slices.Contains(subs, words[2]) {
		path = append(path, words[2])
	}
	key := strings.Join(path, " ")
	flags, ok := fc.flags[key]
	if !ok {
		var out bytes.Buffer
		if err := Run(context.Background(), append(slices.Clone(path), "-h"), &out, &out); err == nil {
			flags = map[string]bool{"h": true, "help": true}
			for _, m := range flagLineRe.FindAllStringSubmatch(out.String(), -1) {
				flags[m[1]] = true
			}
		}
		fc.flags[key] = flags
	}
	if flags == nil {
		return fmt.Sprintf("no command %q", key)
	}
	for _, w := range words[len(path)+1:] {
		w = strings.Trim(w, "[](){}…,|`'\"")
		name, ok := strings.CutPrefix(w, "--")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, "=")
		if name != "" && !flags[name] {
			return fmt.Sprintf("%q has no flag --%s", key, name)
		}
	}
	return ""
}

// commandMentions splits a synopsis line or a span into the commands it
// names: "pricewatch silence add … | silence list" names two.
func commandMentions(text string) []string {
	var out []string
	for _, part := range strings.Split(text, " | ") {
		f := strings.Fields(part)
		switch {
		case len(f) > 0 && f[0] == "pricewatch":
			out = append(out, part)
		case len(f) > 0 && docSubcommands[f[0]] != nil && len(f) > 1 && slices.Contains(docSubcommands[f[0]], f[1]):
			out = append(out, "pricewatch "+part)
		case len(out) > 0:
			out[len(out)-1] += " | " + part
		}
	}
	return out
}

var inlineCommandRe = regexp.MustCompile("`(pricewatch [a-z][^`]*)`")

var relativeLinkRe = regexp.MustCompile(`\]\(([^)\s#]+)(?:#[^)\s]*)?\)`)

// brokenLinks returns the page's links to files of the repository that do
// not exist.
func brokenLinks(page, prose string) []string {
	var out []string
	for _, m := range relativeLinkRe.FindAllStringSubmatch(prose, -1) {
		if strings.Contains(m[1], "://") {
			continue
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(page), m[1])); err != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// TestDocs_Commands runs every console block of README.md and docs/*.md
// against the demo data and checks what each command is shown to print; it
// checks that every other command named is marked not run, and that the
// commands and flags named in the text exist. See the convention above.
func TestDocs_Commands(t *testing.T) {
	t.Chdir("../..")
	_, statErr := os.Stat("pricewatch.db")
	strayDB := statErr == nil
	fc := &flagChecker{flags: map[string]map[string]bool{}}
	total, notRun, links := 0, 0, 0
	demo := &demoScrape{}
	for _, page := range docPages(t) {
		start := time.Now()
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		blocks, prose, err := fencedBlocks(string(src))
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		t.Setenv("XDG_STATE_HOME", t.TempDir())
		r := &docRunner{t: t, page: page, tmp: t.TempDir(), demo: demo}
		for _, b := range blocks {
			kind, _, _ := strings.Cut(b.info, " ")
			switch {
			case kind == "console":
				cmds, err := consoleCommands(b)
				if err != nil {
					t.Errorf("%s: %v", page, err)
					continue
				}
				for _, c := range cmds {
					r.run(c)
				}
			case slices.Contains([]string{"sh", "bash", "shell", "zsh"}, kind):
				if !strings.Contains(b.info, "not-run") {
					t.Errorf("%s:%d: a %s block: mark it console (run by TestDocs_Commands) or `sh not-run`", page, b.line, kind)
				}
				for _, l := range b.body {
					if strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "#") {
						notRun++
					}
				}
			default:
				for i, l := range b.body {
					if strings.HasPrefix(l, "$ ") {
						t.Errorf("%s:%d: a command in a %q block, which is not run: mark the block console", page, b.line+1+i, b.info)
					}
					if strings.HasPrefix(l, "pricewatch ") {
						for _, m := range commandMentions(l) {
							if fc.check(m) != "" && !strings.HasPrefix(fc.check(m), "no command") {
								t.Errorf("%s:%d: %s: %s", page, b.line+1+i, m, fc.check(m))
							}
						}
					}
				}
			}
		}
		for _, l := range brokenLinks(page, prose) {
			t.Errorf("%s: the link %s names no file", page, l)
		}
		for _, m := range inlineCommandRe.FindAllStringSubmatch(prose, -1) {
			for _, c := range commandMentions(m[1]) {
				if msg := fc.check(c); msg != "" {
					t.Errorf("%s: `%s`: %s", page, m[1], msg)
				}
			}
		}
		links += r.checkLinks(string(src))
		if r.daemon != nil {
			r.daemon.stop(t)
		}
		total += r.ran
		t.Logf("%s: %d commands, %d links, %.1fs", page, r.ran, len(demoLinkRe.FindAllString(string(src), -1)), time.Since(start).Seconds())
	}
	if _, err := os.Stat("pricewatch.db"); err == nil && !strayDB {
		os.Remove("pricewatch.db")
		t.Error("a command wrote pricewatch.db in the checkout: give it --demo or --db /tmp/…")
	}
	t.Logf("ran %d commands of the documentation, fetched %d demo links; %d command lines are marked not run", total, links, notRun)
	if total < 60 {
		t.Errorf("only %d commands ran: the walkthroughs are missing", total)
	}
}
