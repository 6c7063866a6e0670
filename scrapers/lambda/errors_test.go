package lambda_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/scrapers/lambda"
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

// servePage answers every request but robots.txt with body as an HTML page.
func servePage(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, body)
	})
}

// The pipeline prefixes a run's error with the source's name, so lambda's
// own errors do not: a failed run reads "lambda: <cause>" once. An empty
// answer is reported as empty, not as a truncated page.
func TestScrape_Errors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"Empty", "", "empty response body"},
		{"Blank", " \n ", "empty response body"},
		{"Truncated", `<html><body><table><tr data-plan="NVIDIA A10"><td data-label="vCPUs">30</td>`, "page truncated"},
		{"BadRows", page(row("NVIDIA A10", "30", "$1.29"), row("NVIDIA H100 PCIe", "26", "Contact sales"), row("NVIDIA A10", "many", "$1.29")),
			`plan "NVIDIA H100 PCIe": price cell "Contact sales"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := scrapertest.ScrapeWith(t, "lambda", servePage(c.body), scrapertest.NoSecret)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
			// What the pipeline records for the run.
			if run := fmt.Sprintf("lambda: %v", err); strings.Count(run, "lambda:") != 1 {
				t.Errorf("run error %q names the source more than once", run)
			}
			if c.want == "empty response body" && (!errors.Is(err, scrapers.ErrEmptyBody) || strings.Contains(err.Error(), "truncated")) {
				t.Errorf("err = %v, want ErrEmptyBody", err)
			}
		})
	}
	if _, err := lambda.Parse(nil, ""); !errors.Is(err, scrapers.ErrEmptyBody) {
		t.Errorf("Parse of nothing: err = %v, want ErrEmptyBody", err)
	}
}
