package scrapers_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/scrapers"
)

func env(url string) *scrapers.Env {
	return &scrapers.Env{Name: "test", Settings: scrapers.Settings{
		URL: url, Timeout: 500 * time.Millisecond, Retries: 2, RetryBackoff: 10 * time.Millisecond,
	}}
}

// server answers /robots.txt permissively (unless robots is set) and
// /data with the handler.
func server(t *testing.T, robots string, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, robots)
			return
		}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestEnv_FetchRetries(t *testing.T) {
	for _, c := range []struct {
		name      string
		answers   []int // status per attempt; the last repeats
		retry     string
		wantCalls int32
		wantErr   string
	}{
		{"SucceedsAfter503s", []int{503, 503, 200}, "", 3, ""},
		{"GivesUpAfterRetries", []int{500}, "", 3, "HTTP 500"},
		{"NoRetryOn404", []int{404}, "", 1, "HTTP 404"},
		{"NoRetryOn403", []int{403}, "", 1, "HTTP 403"},
		{"Honours429RetryAfter", []int{429, 200}, "1", 2, ""},
		{"Long429RetryAfterFailsNow", []int{429}, "3600", 1, "retry after 1h0m0s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := server(t, "", func(w http.ResponseWriter, r *http.Request) {
				n := int(calls.Add(1)) - 1
				code := c.answers[min(n, len(c.answers)-1)]
				if c.retry != "" {
					w.Header().Set("Retry-After", c.retry)
				}
				w.WriteHeader(code)
				io.WriteString(w, `{"ok":true}`)
			})
			e := env(srv.URL + "/data")
			col, err := e.NewCollector(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = e.Fetch(t.Context(), col, scrapers.Request{URL: srv.URL + "/data"})
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("err = %v, want %q", err, c.wantErr)
			}
			if calls.Load() != c.wantCalls {
				t.Errorf("calls = %d, want %d", calls.Load(), c.wantCalls)
			}
			if c.retry == "1" && time.Since(start) < time.Second {
				t.Errorf("did not wait for Retry-After: %s", time.Since(start))
			}
		})
	}
}

func TestEnv_FetchTimeoutIsRetriedAndNamed(t *testing.T) {
	var calls atomic.Int32
	srv := server(t, "", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	})
	e := env(srv.URL)
	e.Settings.Timeout = 100 * time.Millisecond
	col, _ := e.NewCollector(t.Context())
	_, err := e.Fetch(t.Context(), col, scrapers.Request{URL: srv.URL + "/data"})
	var te *scrapers.TimeoutError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "timed out after 100ms") {
		t.Fatalf("err = %v", err)
	}
	if calls.Load() != 3 {
		t.Errorf("calls = %d, want 3", calls.Load())
	}
}

func TestEnv_RobotsTxtRespected(t *testing.T) {
	var calls atomic.Int32
	srv := server(t, "User-agent: *\nDisallow: /data\n", func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })
	e := env(srv.URL)
	col, _ := e.NewCollector(t.Context())
	_, err := e.Fetch(t.Context(), col, scrapers.Request{URL: srv.URL + "/data"})
	if err == nil || !strings.Contains(err.Error(), "robots.txt") || calls.Load() != 0 {
		t.Fatalf("err = %v, calls %d", err, calls.Load())
	}
}

func TestEnv_HonestUserAgentDespiteCollyEnv(t *testing.T) {
	t.Setenv("COLLY_USER_AGENT", "Mozilla/5.0 pretending")
	t.Setenv("COLLY_IGNORE_ROBOTSTXT", "y")
	var ua atomic.Value
	srv := server(t, "User-agent: *\nDisallow: /secret\n", func(w http.ResponseWriter, r *http.Request) { ua.Store(r.UserAgent()) })
	e := env(srv.URL)
	col, _ := e.NewCollector(t.Context())
	if _, err := e.Fetch(t.Context(), col, scrapers.Request{URL: srv.URL + "/data"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := ua.Load().(string); got != scrapers.DefaultUserAgent {
		t.Errorf("user agent %q", got)
	}
	if _, err := e.Fetch(t.Context(), col, scrapers.Request{URL: srv.URL + "/secret"}); err == nil {
		t.Error("COLLY_IGNORE_ROBOTSTXT switched robots.txt off")
	}
}

func TestEnv_OnlyTheSourceHost(t *testing.T) {
	other := server(t, "", func(w http.ResponseWriter, r *http.Request) {})
	srv := server(t, "", func(w http.ResponseWriter, r *http.Request) {})
	e := env(srv.URL)
	col, _ := e.NewCollector(t.Context())
	// Both listen on 127.0.0.1, so rewrite the other as "localhost".
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	if _, err := e.Fetch(t.Context(), col, scrapers.Request{URL: otherURL + "/data"}); err == nil {
		t.Error("a request to another host was allowed")
	}
	col, _ = e.NewCollector(t.Context(), otherURL)
	if _, err := e.Fetch(t.Context(), col, scrapers.Request{URL: otherURL + "/data"}); err != nil {
		t.Errorf("an extra URL's host was refused: %v", err)
	}
}

func TestEnv_BodyCap(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 3<<20)
	srv := server(t, "", func(w http.ResponseWriter, r *http.Request) { w.Write(big) })
	e := env(srv.URL)
	e.Settings.MaxBodyMB = 1
	col, _ := e.NewCollector(t.Context())
	if _, err := e.Fetch(t.Context(), col, scrapers.Request{URL: srv.URL + "/data"}); !errors.Is(err, scrapers.ErrTooLarge) {
		t.Errorf("fetch err = %v, want ErrTooLarge", err)
	}
	err := e.Stream(t.Context(), col, scrapers.Request{URL: srv.URL + "/data"}, func(r io.Reader) error {
		_, err := io.Copy(io.Discard, r)
		return err
	})
	if !errors.Is(err, scrapers.ErrTooLarge) {
		t.Errorf("stream err = %v, want ErrTooLarge", err)
	}
}

func TestEnv_StreamHandsTheBodyOverAndReportsProgress(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 500_000) // 5 MB
	var calls atomic.Int32
	srv := server(t, "", func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusBadGateway) // retried: nothing was consumed yet
			return
		}
		w.Write(body)
	})
	e := env(srv.URL)
	var last atomic.Int64
	e.OnProgress = func(p scrapers.Progress) { last.Store(p.Bytes) }
	col, _ := e.NewCollector(t.Context())
	var got int64
	err := e.Stream(t.Context(), col, scrapers.Request{URL: srv.URL + "/data"}, func(r io.Reader) error {
		n, err := io.Copy(io.Discard, r)
		got = n
		return err
	})
	if err != nil || got != int64(len(body)) {
		t.Fatalf("stream: %d bytes, err %v", got, err)
	}
	if last.Load() < int64(len(body)) || e.BytesRead() < int64(len(body)) {
		t.Errorf("progress %d bytes, want ≥ %d", last.Load(), len(body))
	}
	// A consumer's error is final: no second download.
	calls.Store(1)
	err = e.Stream(t.Context(), col, scrapers.Request{URL: srv.URL + "/data"}, func(r io.Reader) error {
		return errors.New("bad row 7")
	})
	if err == nil || err.Error() != "bad row 7" || calls.Load() != 2 {
		t.Errorf("err = %v after %d calls", err, calls.Load())
	}
}

func TestEnv_Secret(t *testing.T) {
	e := &scrapers.Env{Getenv: func(k string) string { return map[string]string{"K": " v \n"}[k] }}
	if e.Secret("K") != "v" || e.Secret("X") != "" {
		t.Error("injected Getenv not used or not trimmed")
	}
}

// A robots.txt that hangs is a timeout too, and says so (colly fetches it
// past the response hooks; the error read "context deadline exceeded").
func TestEnv_RobotsTxtTimeoutIsNamed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	e := env(srv.URL)
	e.Settings.Timeout, e.Settings.Retries = 100*time.Millisecond, 0
	col, _ := e.NewCollector(t.Context())
	_, err := e.Fetch(t.Context(), col, scrapers.Request{URL: srv.URL + "/data"})
	var te *scrapers.TimeoutError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err = %v", err)
	}
}
