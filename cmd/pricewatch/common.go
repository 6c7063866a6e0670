package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/store"
)

// common flags of the commands that load config and open the database.
type common struct {
	config   string
	db       string
	demo     bool
	fixtures string
}

func (c *common) register(fs *flag.FlagSet, withFixtures bool) {
	fs.StringVar(&c.config, "config", "", "YAML config file (default: built-in defaults)")
	fs.StringVar(&c.db, "db", "", "bbolt database file (default: config db, pricewatch.db)")
	if withFixtures {
		fs.BoolVar(&c.demo, "demo", false, "point every source at the embedded fixtures on a loopback server (offline); the database lives in the user's state or cache directory unless --db says otherwise")
		fs.StringVar(&c.fixtures, "fixtures", "", "like --demo, serving fixtures from this folder (same layout as fixtures/)")
	} else {
		fs.BoolVar(&c.demo, "demo", false, "read the demo database (the one serve --demo and scrape --demo keep in the user's state or cache directory)")
	}
}

// demoDB is where --demo (and --fixtures) keep their database and the
// daemon's .addr file: $XDG_STATE_HOME/pricewatch, else the user's cache
// directory, else a folder under the temp directory; never the checkout.
func demoDB(name string) (string, error) {
	var dirs []string
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		dirs = append(dirs, filepath.Join(d, "pricewatch"))
	}
	if d, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(d, "pricewatch"))
	}
	var last error
	for _, d := range dirs {
		if last = os.MkdirAll(d, 0o700); last == nil {
			return filepath.Join(d, name), nil
		}
	}
	d := filepath.Join(os.TempDir(), fmt.Sprintf("pricewatch-%d", os.Getuid()))
	if err := privateTempDir(d); err != nil {
		return "", fmt.Errorf("no directory for the demo database (%v): %w", last, err)
	}
	return filepath.Join(d, name), nil
}

// privateTempDir makes dir, a folder in the shared temp directory, or
// accepts it only as the user's own: a real folder (Lstat, no symlink),
// owned by the user, mode 0700. Another user could otherwise have made it
// first and read or replace the database and the daemon's record in it.
func privateTempDir(dir string) error {
	err := os.Mkdir(dir, 0o700)
	if err == nil || !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("refusing %s: not a folder (a symlink?)", dir)
	}
	if err := ownedByUser(fi); err != nil {
		return fmt.Errorf("refusing %s: %w", dir, err)
	}
	if fi.Mode().Perm() != 0o700 {
		return fmt.Errorf("refusing %s: mode %v, want 0700 (others could read or replace the database)", dir, fi.Mode().Perm())
	}
	return nil
}

// parse parses a command's flags wherever they stand among its arguments
// ("silence remove 3 --db x" as "--db x 3", "scrape runpod --demo"), so
// every command takes them in any position; fs.Args() are then the
// positional arguments in their order. "--" ends the flags.
func parse(fs *flag.FlagSet, args []string) error {
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	// A leading "--" stops this parse at once: fs.Args() become pos.
	return fs.Parse(append([]string{"--"}, pos...))
}

// parseInterspersed parses flags wherever they stand among the positional
// arguments and returns the positional ones; "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// parseFlags parses the flags up to the first positional argument.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if wantsHelp(args) {
		if w, ok := helpOut.Load(fs); ok {
			fs.SetOutput(w.(io.Writer))
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	return nil
}

func (c *common) load() (*config.Config, error) {
	if c.demo && c.fixtures != "" {
		return nil, usageError{"--demo and --fixtures exclude each other"}
	}
	cfg, err := config.Load(c.config)
	if err != nil {
		return nil, asInput(err)
	}
	switch {
	case c.db != "":
		cfg.DB = c.db
	case (c.demo || c.fixtures != "") && cfg.DB == config.Default().DB:
		name := "demo.db"
		if c.fixtures != "" {
			name = "fixtures.db"
		}
		if cfg.DB, err = demoDB(name); err != nil {
			return nil, err
		}
	}
	// Every command checks the config as serve does, so a bad value is
	// named by its key (ranking.base_currency: GBP read as 'unknown
	// currency ""' in best and plan).
	if err := validate(cfg); err != nil {
		return nil, asInput(err)
	}
	// The CLI accepts a record shared with this group; a group that does
	// not resolve shares nothing (serve refuses to start with it).
	if gid, err := resolveGroup(cfg.Server.RecordGroup); err == nil {
		recordGID = gid
	}
	return cfg, nil
}

func validate(cfg *config.Config) error {
	cat := normalize.DefaultCatalog()
	ws, err := cfg.ResolveWorkloads()
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	known := map[string]bool{}
	for _, w := range ws {
		known[w.Name] = true
	}
	err = cfg.Validate(func(w string) bool { return known[w] },
		func(id string) bool { _, ok := cat.Card(id); return ok })
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

// startFixtures serves the embedded fixtures (--demo) or a folder
// (--fixtures) on loopback and points every source at it.
func (c *common) startFixtures(cfg *config.Config, log *slog.Logger) (*fixtures.Server, error) {
	var fsys fs.FS
	switch {
	case c.demo:
		fsys = fixtures.FS()
	case c.fixtures != "":
		st, err := os.Stat(c.fixtures)
		if err != nil || !st.IsDir() {
			return nil, inputf("--fixtures %s: not a folder", c.fixtures)
		}
		fsys = os.DirFS(c.fixtures)
	default:
		return nil, nil
	}
	srv, err := fixtures.Start(fixtures.Handler(fsys))
	if err != nil {
		return nil, err
	}
	cfg.PointAt(fixtures.URLs(srv.URL), fixtures.Bases(srv.URL))
	log.Info("sources point at the fixture server", "url", srv.URL, "sources", strings.Join(fixtures.Sources(), ","))
	return srv, nil
}

// lockWait bounds the wait for the database's lock (a variable for tests).
var lockWait = 2 * time.Second

// openStore opens the database, or returns store.ErrLocked at once when
// the daemon that recorded its address beside it answers there: the CLI
// then asks that daemon instead of waiting out the file lock.
func openStore(path string, readOnly bool) (*store.Store, error) {
	if addr, err := provenDaemon(context.Background(), path); err == nil {
		return nil, fmt.Errorf("%w: %s is held by the daemon at %s", store.ErrLocked, path, addr)
	}
	// Read-only, a missing file is a first run (or a typo): say how to
	// start rather than "open pricewatch.db: no such file".
	if _, err := os.Stat(path); readOnly && isNotExist(err) {
		return nil, noDatabase(path)
	}
	st, err := store.Open(path, store.Options{ReadOnly: readOnly, Timeout: lockWait})
	if errors.Is(err, store.ErrLocked) {
		return nil, fmt.Errorf("%w: %s is in use by a running pricewatch (serve); stop it, or query it over HTTP (GET /v1/best)", err, path)
	}
	return st, err
}

// noDatabase is the input error of a command that reads a database that
// is not there: what to run first, or which flag points at one.
func noDatabase(path string) error {
	return inputf("no database at %s: nothing was scraped there yet. Start with `pricewatch serve` (scrapes every source now, "+
		"then on its schedule) or `pricewatch scrape`; to try it offline on bundled prices, `pricewatch scrape --demo` and add --demo "+
		"to this command; or point at an existing database with --db FILE (or the config's db)", path)
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// getenv reads the sources' keys from the environment. Against fixtures
// (--demo, --fixtures) a missing key reads as "demo", so that sources that
// need one run against their fixtures too; real endpoints never see it.
func (c *common) getenv() func(string) string {
	if !c.demo && c.fixtures == "" {
		return os.Getenv
	}
	return func(k string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return "demo"
	}
}

// session is what serve and scrape share: the fixture server (--demo,
// --fixtures), the open store and an initialized pipeline.
type session struct {
	fx    *fixtures.Server
	store *store.Store
	pipe  *pipeline.Pipeline
}

// open starts the fixture server if asked, validates the config, opens the
// store and builds the pipeline. Close releases them, the store last.
func (c *common) open(cfg *config.Config, log *slog.Logger, reg prometheus.Registerer, onProgress func(scrapers.Progress)) (*session, error) {
	s, err := c.openUninitialized(cfg, log, reg, onProgress)
	if err != nil {
		return nil, err
	}
	if err := s.pipe.Init(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// openUninitialized is open without the pipeline's Init (seeding profiles,
// reading the stored offers, the first ranking): serve listens first and
// answers 503 until Init has run.
func (c *common) openUninitialized(cfg *config.Config, log *slog.Logger, reg prometheus.Registerer, onProgress func(scrapers.Progress)) (*session, error) {
	s := &session{}
	var err error
	if s.fx, err = c.startFixtures(cfg, log); err != nil {
		return nil, err
	}
	fail := func(err error) (*session, error) {
		s.Close()
		return nil, err
	}
	if err := validate(cfg); err != nil {
		return fail(err)
	}
	if s.store, err = openStore(cfg.DB, false); err != nil {
		return fail(err)
	}
	// The memory limit is sized from the stored catalog, and again as runs
	// change it (memlimit.go).
	stored := 0
	if h, err := s.store.Health(); err == nil {
		for _, sh := range h {
			stored += sh.Offers
		}
	}
	memLimit.size(log, stored)
	s.pipe, err = pipeline.New(cfg, s.store, pipeline.Options{
		Notifier: notifier(cfg), Logger: log, Registry: reg, Getenv: c.getenv(), OnProgress: onProgress,
		OnOffers: func(n int) { memLimit.size(log, n) }, Demo: c.demo || c.fixtures != "",
	})
	if err != nil {
		return fail(err)
	}
	return s, nil
}

// Close closes the store and stops the fixture server.
func (s *session) Close() {
	if s.store != nil {
		s.store.Close()
	}
	if s.fx != nil {
		s.fx.Close()
	}
}

// printAnswer prints a command's answer: the endpoint's JSON with --json,
// else the table.
func printAnswer(w io.Writer, asJSON bool, v any, table func()) error {
	if !asJSON {
		table()
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, string(b))
	return nil
}

// subFirst moves a command group's subcommand to the front when flags
// stand before it ("profile --db x list", "sources --demo accept runpod"),
// so that flags go anywhere in a group's commands too. The subcommand is
// the first argument that is neither a flag nor a flag's value; args are
// returned as they are when it is none of subs. register adds the group's
// flags to a flag set (to tell flags that take a value from bool ones).
func subFirst(args, subs []string, register ...func(*flag.FlagSet)) []string {
	valued := map[string]bool{}
	for _, r := range register {
		fs := flag.NewFlagSet("", flag.ContinueOnError)
		r(fs)
		fs.VisitAll(func(f *flag.Flag) {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
				valued[f.Name] = true
			}
		})
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return args
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if name := strings.TrimLeft(a, "-"); !strings.Contains(name, "=") && valued[name] {
				i++ // its value
			}
		case slices.Contains(subs, a):
			return append(append([]string{a}, args[:i]...), args[i+1:]...)
		default:
			return args
		}
	}
	return args
}
