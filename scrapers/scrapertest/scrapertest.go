// Package scrapertest runs a registered scraper against fixture servers and
// compares its normalized result with the golden expected.json of its
// fixture folder. go test ./scrapers/... -update rewrites the golden files;
// review the diff before committing.
package scrapertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/scrapers"
)

var update = flag.Bool("update", false, "rewrite golden expected.json files")

// At is the fixed run time golden results are stamped with.
var At = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// Env returns a run environment for the named source pointed at a fixture
// server at base (its URL is fixtures.URLs(base)[name]), with no
// politeness delay and a short timeout.
func Env(t testing.TB, name, base string) *scrapers.Env {
	t.Helper()
	reg, ok := scrapers.Get(name)
	if !ok {
		t.Fatalf("source %q is not registered", name)
	}
	s := reg.Defaults
	s.URL = fixtures.URLs(base)[name]
	if s.URL == "" {
		t.Fatalf("no fixture route for %q", name)
	}
	s.Delay = 0
	s.Timeout = 2 * time.Second
	s.RetryBackoff = 10 * time.Millisecond
	return &scrapers.Env{Name: name, Settings: s, Getenv: TestSecret}
}

// TestSecret stands in for every key and token a source asks for.
func TestSecret(string) string { return "test-secret" }

// Scraper returns a new scraper for the named source with its extra
// endpoints (scrapers.Rebaser) pointed at a fixture server at base, and its
// run environment.
func Scraper(t testing.TB, name, base string) (scrapers.Scraper, *scrapers.Env) {
	t.Helper()
	reg, ok := scrapers.Get(name)
	if !ok {
		t.Fatalf("source %q is not registered", name)
	}
	s := reg.New()
	if rb, ok := s.(scrapers.Rebaser); ok {
		rb.Rebase(fixtures.Base(base, name))
	}
	return s, Env(t, name, base)
}

// Scrape serves h on loopback and runs the named scraper against it.
func Scrape(t testing.TB, name string, h http.Handler) (scrapers.Result, error) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	s, env := Scraper(t, name, srv.URL)
	return s.Scrape(t.Context(), env)
}

// NoSecret stands in for an environment where no key or token is set.
func NoSecret(string) string { return "" }

// ScrapeWith serves h on loopback and runs the named scraper against it
// with getenv reading its secrets (NoSecret: a source's keyless mode).
func ScrapeWith(t testing.TB, name string, h http.Handler, getenv func(string) string) (scrapers.Result, error) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	s, env := Scraper(t, name, srv.URL)
	env.Getenv = getenv
	return s.Scrape(t.Context(), env)
}

// ScrapeFixtures runs the named scraper against the embedded fixtures.
func ScrapeFixtures(t testing.TB, name string) scrapers.Result {
	t.Helper()
	res, err := Scrape(t, name, fixtures.Handler(fixtures.FS()))
	if err != nil {
		t.Fatalf("scrape %s from fixtures: %v", name, err)
	}
	return res
}

// CheckFixture normalizes res with the default catalog, compares the summary
// with the source's checked-in expected.json and fails on any invalid
// observation: the common start of every scraper's fixture test.
func CheckFixture(t testing.TB, name string, res scrapers.Result) (normalize.Result, Golden) {
	t.Helper()
	nr, g := Normalize(name, res)
	CheckGolden(t, g)
	if nr.Invalid != nil {
		t.Errorf("invalid observations: %v", nr.Invalid)
	}
	return nr, g
}

// SameAsScrape checks that parse, over the raw fixture file (a path in
// fixtures.FS()), yields what the named scraper's collector callbacks yield
// from the fixture server; URLs are left out of the comparison.
func SameAsScrape(t *testing.T, name, file string, parse func([]byte) ([]pricewatch.Observation, error)) {
	t.Helper()
	body, err := fs.ReadFile(fixtures.FS(), file)
	if err != nil {
		t.Fatal(err)
	}
	obs, err := parse(body)
	if err != nil {
		t.Fatal(err)
	}
	res := ScrapeFixtures(t, name)
	if len(obs) != len(res.Observations) {
		t.Fatalf("Parse %d observations, Scrape %d", len(obs), len(res.Observations))
	}
	for i := range obs {
		a, b := obs[i], res.Observations[i]
		a.URL, b.URL = "", ""
		if !reflect.DeepEqual(a, b) {
			t.Errorf("row %d: Parse %+v, Scrape %+v", i, a, b)
		}
	}
}

// NeedsSecret checks that c disables its source while no secret is set,
// with a reason that mentions each of words, and passes once every secret
// reads as TestSecret.
func NeedsSecret(t *testing.T, c scrapers.Checker, words ...string) {
	t.Helper()
	var d *scrapers.Disabled
	err := c.Check(&scrapers.Env{Getenv: func(string) string { return "" }})
	if !errors.As(err, &d) {
		t.Fatalf("without a secret: %v, want *scrapers.Disabled", err)
	}
	for _, w := range words {
		if !strings.Contains(d.Reason, w) {
			t.Errorf("reason %q does not mention %q", d.Reason, w)
		}
	}
	if err := c.Check(&scrapers.Env{Getenv: TestSecret}); err != nil {
		t.Errorf("with a secret: %v", err)
	}
}

// Golden is the reviewed, checked-in summary of a source's normalized result.
type Golden struct {
	Source       string         `json:"source"`
	Observations int            `json:"observations"`
	Offers       int            `json:"offers"`
	ByMode       map[string]int `json:"by_mode"`
	Unknown      map[string]int `json:"unknown"`
	Invalid      string         `json:"invalid,omitempty"`
	List         []GoldenOffer  `json:"list"`
}

// GoldenOffer is one normalized offer in a golden file.
type GoldenOffer struct {
	Key             string   `json:"key"`
	Card            string   `json:"card"`
	GPUName         string   `json:"gpu_name"`
	GPUs            int      `json:"gpus"`
	Shared          bool     `json:"shared,omitempty"`
	Mode            string   `json:"mode"`
	PricePerGPUHour float64  `json:"price_per_gpu_hour"`
	Currency        string   `json:"currency"`
	Reliability     *float64 `json:"reliability,omitempty"`
	// Kind is set for reference rows only ("reference"); RentUnit and
	// GPUCounts are the normalized rent terms, the counts written compactly
	// (CountsText).
	Kind      string `json:"kind,omitempty"`
	RentUnit  string `json:"rent_unit,omitempty"`
	GPUCounts string `json:"gpu_counts,omitempty"`
	// Available and Stock are set where the source states them.
	Available string `json:"available,omitempty"`
	Stock     string `json:"stock,omitempty"`
	// Bid, StoragePerGBMonth and EgressPerGB are set where the source
	// prices them (Vast: a bid, host-set disk and upload prices).
	Bid               bool    `json:"bid,omitempty"`
	StoragePerGBMonth float64 `json:"storage_price_gb_month,omitempty"`
	EgressPerGB       float64 `json:"egress_price_gb,omitempty"`
	// MonthlyCapHours and FreeEgressGBMonth are a plan's own monthly cap
	// and included egress (Vultr).
	MonthlyCapHours   float64 `json:"monthly_cap_hours,omitempty"`
	FreeEgressGBMonth float64 `json:"free_egress_gb_month,omitempty"`
}

// Normalize runs the default catalog over a result.
func Normalize(name string, res scrapers.Result) (normalize.Result, Golden) {
	nr := normalize.DefaultCatalog().Normalize(res.Observations, At)
	g := Golden{Source: name, Observations: len(res.Observations), Offers: len(nr.Offers),
		ByMode: map[string]int{}, Unknown: nr.Unknown}
	if nr.Invalid != nil {
		g.Invalid = nr.Invalid.Error()
	}
	for _, o := range nr.Offers {
		g.ByMode[string(o.Mode)]++
		g.List = append(g.List, GoldenOffer{
			Key: o.Key, Card: o.Card, GPUName: o.GPUName, GPUs: o.GPUs, Shared: o.Shared,
			Mode: string(o.Mode), PricePerGPUHour: round6(o.PricePerGPUHour), Currency: o.Currency,
			Reliability: o.Reliability, RentUnit: string(o.RentUnit), GPUCounts: CountsText(o.GPUCounts),
			Stock: o.Stock, Bid: o.Bid, StoragePerGBMonth: round6(o.StoragePerGBMonth), EgressPerGB: round6(o.EgressPerGB),
			MonthlyCapHours: round6(o.MonthlyCapHours), FreeEgressGBMonth: round6(o.FreeEgressGBMonth),
		})
		if o.Reference() {
			g.List[len(g.List)-1].Kind = string(o.Kind)
		}
		if o.Available != pricewatch.AvailableUnknown {
			g.List[len(g.List)-1].Available = string(o.Available)
		}
	}
	sort.Slice(g.List, func(i, j int) bool { return g.List[i].Key < g.List[j].Key })
	return nr, g
}

// CountsText writes GPU counts compactly: "1..8" for every count from 1 to
// 8, else the counts joined by commas ("8", "1,2,4"); "" for none.
func CountsText(counts []int) string {
	if n := len(counts); n > 1 && slices.Equal(counts, pricewatch.CountsUpTo(n)) {
		return "1.." + strconv.Itoa(n)
	}
	s := make([]string, len(counts))
	for i, c := range counts {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// CheckGolden compares g with fixtures/<source>/expected.json (or rewrites
// it under -update).
func CheckGolden(t testing.TB, g Golden) {
	t.Helper()
	CheckGoldenFile(t, g, "expected.json")
}

// CheckGoldenFile compares g with fixtures/<source>/<file> (or rewrites it
// under -update): the golden of a source's second mode.
func CheckGoldenFile(t testing.TB, g Golden, file string) {
	t.Helper()
	got, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	file = filepath.Join(fixtures.Dir(), g.Source, file)
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read golden (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		var w Golden
		_ = json.Unmarshal(want, &w)
		t.Errorf("%s: result differs from %s (run go test -update and review the diff)\n"+
			"got %d offers %v unknown %v\nwant %d offers %v unknown %v",
			g.Source, file, g.Offers, g.ByMode, g.Unknown, w.Offers, w.ByMode, w.Unknown)
	}
}

// Find returns the offer with the key, failing the test if absent.
func Find(t testing.TB, nr normalize.Result, key string) pricewatch.Offer {
	t.Helper()
	for _, o := range nr.Offers {
		if o.Key == key {
			return o
		}
	}
	t.Fatalf("no offer %q", key)
	return pricewatch.Offer{}
}

// Price asserts an offer's price per GPU-hour to the cent-fraction.
func Price(t testing.TB, nr normalize.Result, key, card string, mode pricewatch.Mode, want float64) {
	t.Helper()
	o := Find(t, nr, key)
	if math.Abs(o.PricePerGPUHour-want) > 1e-6 || o.Card != card || o.Mode != mode {
		t.Errorf("%s: got %s %s %.6f/GPU-h, want %s %s %.6f", key, o.Card, o.Mode, o.PricePerGPUHour, card, mode, want)
	}
}

// Rent asserts an offer's rent unit and GPU counts (none for an offer whose
// unit is not stated).
func Rent(t testing.TB, nr normalize.Result, key string, unit pricewatch.RentUnit, counts ...int) {
	t.Helper()
	o := Find(t, nr, key)
	if o.RentUnit != unit || !slices.Equal(o.GPUCounts, counts) {
		t.Errorf("%s: rent unit %q counts %v, want %q %v", key, o.RentUnit, o.GPUCounts, unit, counts)
	}
}

// Resold is one offer of a source that resells other clouds' machines,
// as a test expects it: its card, mode, price per GPU-hour (worked by hand
// in the test), GPUs of its fixed unit, availability, and the cloud behind
// it (the offer's provider).
type Resold struct {
	Key, Card, Provider string
	Mode                pricewatch.Mode
	GPUs                int
	Price               float64
	Avail               pricewatch.Availability
}

// ResoldOffers asserts each expected offer of source: price, card and
// mode, one fixed unit of its GPUs, availability, the provider behind it,
// and the source kept as the seller it came through.
func ResoldOffers(t testing.TB, nr normalize.Result, source string, want []Resold) {
	t.Helper()
	for _, c := range want {
		Price(t, nr, c.Key, c.Card, c.Mode, c.Price)
		Rent(t, nr, c.Key, pricewatch.RentFixed, c.GPUs)
		o := Find(t, nr, c.Key)
		if o.Available != c.Avail || o.Provider != c.Provider || o.Source != source {
			t.Errorf("%s: available %q, provider %q, source %q; want %q, %q, %q", c.Key, o.Available, o.Provider, o.Source, c.Avail, c.Provider, source)
		}
	}
}

// FixedUnits asserts that every offer of nr that is not a reference is one
// fixed unit of its GPUs (rent unit fixed, counts [GPUs]), except the offers
// keyed unknown, which must state no rent unit (a size whose GPU count the
// source does not say).
func FixedUnits(t testing.TB, nr normalize.Result, unknown ...string) {
	t.Helper()
	for _, o := range nr.Offers {
		if o.Reference() {
			continue
		}
		if slices.Contains(unknown, o.Key) {
			if o.RentUnit != "" || len(o.GPUCounts) > 0 {
				t.Errorf("%s: rent unit %q counts %v, want none (GPU count unknown)", o.Key, o.RentUnit, o.GPUCounts)
			}
			continue
		}
		if o.RentUnit != pricewatch.RentFixed || !slices.Equal(o.GPUCounts, []int{o.GPUs}) {
			t.Errorf("%s: rent unit %q counts %v, want fixed [%d]", o.Key, o.RentUnit, o.GPUCounts, o.GPUs)
		}
	}
}
