package ecb_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/scrapers/ecb"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// golden is what fixtures/ecb/expected.json pins: the rates without the
// fetch time.
type golden struct {
	Base  string             `json:"base"`
	Date  string             `json:"date"`
	Rates map[string]float64 `json:"rates"`
}

// updating reports whether the -update flag (defined by scrapertest) is set.
func updating() bool {
	f := flag.Lookup("update")
	if f == nil {
		return false
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	b, _ := g.Get().(bool)
	return b
}

func checkGolden(t *testing.T, r *pricewatch.Rates) {
	t.Helper()
	got, err := json.MarshalIndent(golden{r.Base, r.Date, r.Rates}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	file := filepath.Join(fixtures.Dir(), "ecb", "expected.json")
	if updating() {
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
		t.Errorf("rates differ from %s (run go test -update and review the diff)\ngot:\n%s", file, got)
	}
}

func TestScraper_Fixture(t *testing.T) {
	res := scrapertest.ScrapeFixtures(t, "ecb")
	if len(res.Observations) != 0 {
		t.Errorf("ecb yields rates only, got %d observations", len(res.Observations))
	}
	r := res.Rates
	if r == nil {
		t.Fatal("no rates")
	}
	checkGolden(t, r)
	if r.Base != "EUR" || r.Date != "2022-07-08" || len(r.Rates) != 31 {
		t.Errorf("base %s date %s %d rates, want EUR 2022-07-08 31", r.Base, r.Date, len(r.Rates))
	}
	for cur, want := range map[string]float64{"USD": 1.0163, "CNY": 6.8095, "JPY": 138.05, "GBP": 0.84585, "IDR": 15210.73} {
		if r.Rates[cur] != want {
			t.Errorf("%s = %v, want %v", cur, r.Rates[cur], want)
		}
	}
	if r.FetchedAt.IsZero() || time.Since(r.FetchedAt) > time.Minute {
		t.Errorf("fetched at %v", r.FetchedAt)
	}
	// 100 USD is 100 / 1.0163 EUR, or 100 / 1.0163 * 6.8095 CNY.
	if v, err := r.Convert(100, "USD", "CNY"); err != nil || v < 670.02 || v > 670.03 {
		t.Errorf("100 USD = %v CNY (%v), want about 670.03", v, err)
	}
}

// TestParse_SameAsScrape checks that Parse, over the raw file, yields what
// the collector's callback yields.
func TestParse_SameAsScrape(t *testing.T) {
	body, err := fs.ReadFile(fixtures.FS(), "ecb/eurofxref-daily.xml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := ecb.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	s := scrapertest.ScrapeFixtures(t, "ecb").Rates
	a, _ := json.Marshal(golden{r.Base, r.Date, r.Rates})
	b, _ := json.Marshal(golden{s.Base, s.Date, s.Rates})
	if !bytes.Equal(a, b) {
		t.Errorf("Parse %s\nScrape %s", a, b)
	}
}

// TestScraper_HTML: an HTML answer (an error page served with 200) fails the run.
func TestScraper_HTML(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<html><body><Cube time="2022-07-08"><Cube currency="USD" rate="1"/></Cube></body></html>`)
	})
	// The pipeline names the source; the error must not name it again
	// ("ecb: ecb: …" was the old double prefix).
	if _, err := scrapertest.Scrape(t, "ecb", h); err == nil || strings.Contains(err.Error(), "ecb:") {
		t.Fatalf("err = %v: an HTML page must fail the run", err)
	}
}

const envelope = `<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
<gesmes:subject>Reference rates</gesmes:subject><Cube>%s</Cube></gesmes:Envelope>`

func file(cubes string) string { return strings.Replace(envelope, "%s", cubes, 1) }

// TestParse_History: of several days (the history files), the newest wins.
func TestParse_History(t *testing.T) {
	r, err := ecb.Parse([]byte(file(
		`<Cube time='2022-07-08'><Cube currency='USD' rate='1.0163'/><Cube currency='CNY' rate='6.8095'/></Cube>` +
			`<Cube time='2022-07-07'><Cube currency='USD' rate='1.0180'/><Cube currency='CNY' rate='6.8270'/><Cube currency='XXX' rate='oops'/></Cube>`)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Date != "2022-07-08" || r.Rates["USD"] != 1.0163 || len(r.Rates) != 2 {
		t.Errorf("rates %+v", r)
	}
}

func TestParse_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"NoUSD", file(`<Cube time='2022-07-08'><Cube currency='JPY' rate='138.05'/><Cube currency='CNY' rate='6.8095'/></Cube>`), "rates for USD/CNY missing"},
		{"NoCNY", file(`<Cube time='2022-07-08'><Cube currency='USD' rate='1.0163'/></Cube>`), "rates for USD/CNY missing"},
		{"NoDay", file(``), "rates for USD/CNY missing"},
		{"ZeroRate", file(`<Cube time='2022-07-08'><Cube currency='USD' rate='0'/><Cube currency='CNY' rate='6.8095'/></Cube>`), `rate "0" for USD is not a positive number`},
		{"NegativeRate", file(`<Cube time='2022-07-08'><Cube currency='USD' rate='-1.0163'/><Cube currency='CNY' rate='6.8095'/></Cube>`), `rate "-1.0163" for USD`},
		{"GarbageRate", file(`<Cube time='2022-07-08'><Cube currency='USD' rate='1,0163'/><Cube currency='CNY' rate='6.8095'/></Cube>`), `rate "1,0163" for USD`},
		{"NaNRate", file(`<Cube time='2022-07-08'><Cube currency='USD' rate='NaN'/><Cube currency='CNY' rate='6.8095'/></Cube>`), `rate "NaN" for USD`},
		{"BadDate", file(`<Cube time='08.07.2022'><Cube currency='USD' rate='1.0163'/><Cube currency='CNY' rate='6.8095'/></Cube>`), `bad date "08.07.2022"`},
		{"HTML", `<!DOCTYPE html><html><body>Service unavailable</body></html>`, "rates for USD/CNY missing"},
		{"Truncated", `<?xml version="1.0"?><gesmes:Envelope xmlns:gesmes="x"><Cube><Cube time='2022-07-08'><Cube currency='USD' ra`, "parse XML"},
		{"JSON", `{"rates": {"USD": 1.0163}}`, "parse XML"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ecb.Parse([]byte(c.body))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	seed, err := fs.ReadFile(fixtures.FS(), "ecb/eurofxref-daily.xml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(file(`<Cube time='2022-07-08'><Cube currency='USD' rate='1e309'/><Cube currency='CNY' rate='6.8'/></Cube>`)))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ecb.Parse(body)
		if err != nil {
			return
		}
		if r.Base != "EUR" || r.Date == "" || !r.Has("USD") || !r.Has("CNY") {
			t.Fatalf("incomplete rates accepted: %+v", r)
		}
		for cur, v := range r.Rates {
			if !(v > 0) || v > 1e12 {
				t.Fatalf("rate %s = %v accepted", cur, v)
			}
		}
	})
}
