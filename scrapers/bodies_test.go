package scrapers_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pricewatch/pricewatch/scrapers"
	_ "github.com/pricewatch/pricewatch/scrapers/all" // every source
	"github.com/pricewatch/pricewatch/scrapers/scrapertest"
)

const loginWall = `<!doctype html><html><head><title>Just a moment...</title></head><body>Checking your browser</body></html>`

func htmlServer(t *testing.T, calls *atomic.Int32) *http.ServeMux {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if calls != nil {
			calls.Add(1)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, loginWall)
	})
	return mux
}

// A request for JSON answered with an HTML page fails at once (no retry),
// saying what came back: the content type the server declared.
func TestEnv_FetchNamesMarkupForJSON(t *testing.T) {
	var calls atomic.Int32
	mux := htmlServer(t, &calls)
	srv := server(t, "", mux.ServeHTTP)
	e := env(srv.URL)
	col, _ := e.NewCollector(t.Context())
	json := http.Header{"Accept": {"application/json"}}
	_, err := e.Fetch(t.Context(), col, scrapers.Request{URL: srv.URL + "/data", Header: json})
	var me *scrapers.MarkupError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), `expected JSON, got markup (content-type "text/html; charset=utf-8")`) ||
		!strings.Contains(err.Error(), "Just a moment") {
		t.Fatalf("err = %v", err)
	}
	if calls.Load() != 1 {
		t.Errorf("%d calls: a login wall is not retried", calls.Load())
	}
	// A page asked for as a page is fine.
	if _, err := e.Fetch(t.Context(), col, scrapers.Request{URL: srv.URL + "/data"}); err != nil {
		t.Errorf("HTML asked for without Accept: %v", err)
	}
	// A streamed JSON file likewise, before the consumer sees any of it.
	consumed := false
	err = e.Stream(t.Context(), col, scrapers.Request{URL: srv.URL + "/data", Header: json}, func(r io.Reader) error {
		consumed = true
		return nil
	})
	if !errors.As(err, &me) || !strings.Contains(err.Error(), `content-type "text/html; charset=utf-8"`) || consumed {
		t.Errorf("stream: err = %v, consumed %v", err, consumed)
	}
}

// A body in hand whose content type is unknown says so and what it looks
// like, never `content-type ""`.
func TestUnmarshalJSON_Markup(t *testing.T) {
	var v any
	err := scrapers.UnmarshalJSON([]byte(loginWall), "", &v)
	if err == nil || strings.Contains(err.Error(), `content-type ""`) || !strings.Contains(err.Error(), "text/html") ||
		!strings.Contains(err.Error(), "expected JSON, got markup") {
		t.Errorf("err = %v", err)
	}
	err = scrapers.UnmarshalJSON([]byte(loginWall), "text/html", &v)
	if err == nil || !strings.Contains(err.Error(), `content-type "text/html"`) {
		t.Errorf("err = %v", err)
	}
	for _, body := range []string{"", " \n\t"} {
		if err := scrapers.UnmarshalJSON([]byte(body), "", &v); !errors.Is(err, scrapers.ErrEmptyBody) {
			t.Errorf("%q: err = %v, want ErrEmptyBody", body, err)
		}
	}
}

// An empty page is empty, not truncated.
func TestCompleteHTML_Empty(t *testing.T) {
	for _, body := range []string{"", "  \r\n"} {
		err := scrapers.CompleteHTML([]byte(body))
		if !errors.Is(err, scrapers.ErrEmptyBody) || strings.Contains(err.Error(), "truncated") {
			t.Errorf("%q: err = %v, want ErrEmptyBody", body, err)
		}
	}
	if err := scrapers.CompleteHTML([]byte("<html><body><table>")); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("cut page: err = %v", err)
	}
}

// Every source that expects JSON and gets a login wall names the content
// type it got: the run's error must tell "the API answered with a page"
// from "the page had no </html>".
func TestSources_HTMLInsteadOfJSON(t *testing.T) {
	for _, name := range scrapers.Names() {
		t.Run(name, func(t *testing.T) {
			_, err := scrapertest.Scrape(t, name, htmlServer(t, nil))
			if err == nil {
				return // a source that reads HTML pages, or one the wall does not fool
			}
			msg := err.Error()
			if strings.Contains(msg, `content-type ""`) {
				t.Errorf("%s: %v", name, err)
			}
			if strings.Contains(msg, "expected JSON") && !strings.Contains(msg, "text/html") {
				t.Errorf("%s does not say what it got: %v", name, err)
			}
			t.Logf("%s: %v", name, err)
		})
	}
}
