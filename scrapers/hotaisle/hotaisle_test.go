package hotaisle_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/scrapers/hotaisle"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// The fixture is built in the shape gpuhunt's Hot Aisle provider reads
// (fixtures/hotaisle/PROVENANCE.md): 4 MI300X VM configurations.
func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "hotaisle")
	nr, g := scrapertest.CheckFixture(t, "hotaisle", res)
	scrapertest.FixedUnits(t, nr)
	if len(res.Observations) != 4 || len(g.Unknown) != 0 {
		t.Fatalf("%d observations, unknown %v; want 4, all mapped", len(res.Observations), g.Unknown)
	}
	for _, c := range []struct {
		key   string
		gpus  int
		price float64 // USD per GPU-hour, by hand
	}{
		{"hotaisle/1x MI300X 13x Xeon Platinum 8470/us-michigan-1/ondemand", 1, 1.99},   // 199 ¢ ÷ 100 ÷ 1
		{"hotaisle/2x MI300X 26x Xeon Platinum 8462Y+/us-michigan-1/ondemand", 2, 1.99}, // 398 ¢ ÷ 100 ÷ 2
		{"hotaisle/4x MI300X 52x Xeon Platinum 8462Y+/us-michigan-1/ondemand", 4, 1.99}, // 796 ¢ ÷ 100 ÷ 4
	} {
		scrapertest.Price(t, nr, c.key, "MI300X-192GB", pricewatch.ModeOnDemand, c.price)
		scrapertest.Rent(t, nr, c.key, pricewatch.RentFixed, c.gpus)
	}
	// Bytes to GiB: 448 × 2^30 bytes of RAM = 448 GiB, 12288 GiB of disk.
	o := scrapertest.Find(t, nr, "hotaisle/2x MI300X 26x Xeon Platinum 8470/us-michigan-1/ondemand")
	if o.VCPUs != 26 || o.RAMGB != 448 || o.DiskGB != 12288 || o.Available != pricewatch.AvailableYes || o.Country != "US" {
		t.Errorf("2x: %v cores, %v GiB, %v GiB disk, available %q, country %q", o.VCPUs, o.RAMGB, o.DiskGB, o.Available, o.Country)
	}
}

// The key goes in "Authorization: Token <key>" and the team into the path;
// both are needed.
func TestScrape_KeyAndTeam(t *testing.T) {
	var path, auth string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		path, auth = r.URL.Path, r.Header.Get("Authorization")
		io.WriteString(w, `[{"OnDemandPrice": "199", "Specs": {"cpu_cores": 13, "gpus": [{"count": 1, "model": "MI300X"}]}}]`)
	})
	getenv := func(k string) string {
		return map[string]string{hotaisle.KeyEnv: "k1", hotaisle.TeamEnv: "my-team"}[k]
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	s, env := scrapertest.Scraper(t, "hotaisle", srv.URL)
	env.Settings.URL = srv.URL + "/hotaisle/api/teams/{team}/virtual_machines/available/" // the default URL's form
	env.Getenv = getenv
	res, err := s.Scrape(t.Context(), env)
	if err != nil || len(res.Observations) != 1 || res.Observations[0].Price != 1.99 {
		t.Fatalf("%+v, %v", res.Observations, err)
	}
	if path != "/hotaisle/api/teams/my-team/virtual_machines/available/" || auth != "Token k1" {
		t.Errorf("request %s with %q", path, auth)
	}
	var d *scrapers.Disabled
	noTeam := func(k string) string { return map[string]string{hotaisle.KeyEnv: "k1"}[k] }
	if err := (&hotaisle.Scraper{}).Check(&scrapers.Env{Getenv: noTeam}); !errors.As(err, &d) || !strings.Contains(d.Reason, hotaisle.TeamEnv) {
		t.Errorf("without a team: %v", err)
	}
	if err := (&hotaisle.Scraper{Team: "t"}).Check(&scrapers.Env{Getenv: noTeam}); err != nil {
		t.Errorf("team option: %v", err)
	}
}

func TestNeedsKey(t *testing.T) {
	scrapertest.NeedsSecret(t, &hotaisle.Scraper{}, hotaisle.KeyEnv)
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"detail", `{"detail": "Invalid token."}`, "Invalid token."},
		{"null", `null`, "null instead of the VM list"},
		{"CPU only", `[{"OnDemandPrice": 50, "Specs": {"cpu_cores": 8, "gpus": []}}]`, "no offers parsed"},
		{"truncated", `[{"OnDemandPrice": `, "JSON"},
	} {
		_, err := hotaisle.Parse([]byte(c.body), "u")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}
