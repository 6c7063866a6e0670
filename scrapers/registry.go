// Package scrapers defines how a price source is fetched and parsed, keeps
// the registry of sources (each registers itself from its own package's
// init), and builds the polite, cancellable colly collector every run uses.
//
// A scraper turns one source's response into pricewatch.Observations in the
// source's own terms (name as written, price in its unit and currency);
// normalize does the rest. A run that parses nothing is an error: a layout
// change must never look like "every offer vanished".
package scrapers

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/pricewatch/pricewatch"
)

// Scraper fetches and parses one source. Scrape returns what parsed along
// with an error describing what did not; a non-nil error fails the run.
type Scraper interface {
	Scrape(ctx context.Context, env *Env) (Result, error)
}

// Result is what one run of a source yields: offers, or (the ECB) rates.
type Result struct {
	Observations []pricewatch.Observation
	Rates        *pricewatch.Rates
	// TokenPrices are an inference API's per-token prices (a token
	// source's whole list; Key, Preset and times are set by the pipeline).
	TokenPrices []pricewatch.TokenPrice
}

// Settings are the options every source has, from config
// (sources.<name>.*) over the registration's defaults.
type Settings struct {
	Enabled  bool   `yaml:"enabled"`
	URL      string `yaml:"url"`
	Schedule string `yaml:"schedule"`
	// StaleAfter is how long a source's offers stay in rankings without a
	// successful run (default 2.5 × the schedule's interval).
	StaleAfter time.Duration `yaml:"stale_after"`
	Timeout    time.Duration `yaml:"timeout"`
	// Delay is the politeness pause between requests to one domain, and
	// Parallelism how many requests may be in flight to it at once.
	Delay       time.Duration `yaml:"delay"`
	Parallelism int           `yaml:"parallelism"`
	MaxBodyMB   int           `yaml:"max_body_mb"`
	// Retries is how many times a failed request (5xx, 429, timeout) is
	// tried again, RetryBackoff the first wait (doubling each time).
	Retries      int           `yaml:"retries"`
	RetryBackoff time.Duration `yaml:"retry_backoff"`
}

// Registration describes a source: its name, what it yields, and its defaults.
type Registration struct {
	Name        string
	Description string
	// Auth says what credentials the source needs ("none" for public ones).
	Auth string
	// Yields says which billing modes and currency the source produces.
	Yields   string
	Defaults Settings
	// New returns a scraper with default options; config decodes its
	// source-specific options (yaml tags) over it.
	New func() Scraper
}

var (
	mu       sync.RWMutex
	registry = map[string]Registration{}
)

// Add registers a source. Called from init; a duplicate name panics.
func Add(r Registration) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[r.Name]; dup {
		panic(fmt.Sprintf("scrapers: source %q registered twice", r.Name))
	}
	if r.New == nil || r.Defaults.URL == "" || r.Defaults.Schedule == "" {
		panic(fmt.Sprintf("scrapers: source %q needs New, a default URL and schedule", r.Name))
	}
	if r.Defaults.Retries == 0 {
		r.Defaults.Retries = DefaultRetries
	}
	registry[r.Name] = r
}

// Get returns a registration by name.
func Get(name string) (Registration, bool) {
	mu.RLock()
	defer mu.RUnlock()
	r, ok := registry[name]
	return r, ok
}

// Names lists the registered sources, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Rebaser is implemented by scrapers that fetch from more than one endpoint:
// Rebase points every extra endpoint at base (a fixture server) the way
// config's url points the main one.
type Rebaser interface {
	Rebase(base string)
}
