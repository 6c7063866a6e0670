package scrapers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gocolly/colly/v2"
)

// DefaultUserAgent identifies pricewatch honestly, with a contact URL.
const DefaultUserAgent = "pricewatch/0.1 (+https://github.com/pricewatch/pricewatch; GPU price watcher)"

// Env is what a scraper gets for one run: its source's settings and the
// means to build a polite collector.
type Env struct {
	Name      string
	Settings  Settings
	UserAgent string
}

// URL is the source's configured endpoint.
func (e *Env) URL() string { return e.Settings.URL }

// NewCollector builds a fresh collector for this run: honest user agent,
// robots.txt respected, one rate limit per domain, a request timeout, a
// body cap and the run's context for cancellation. COLLY_* environment
// variables are not honoured: config is the only source of settings.
func (e *Env) NewCollector(ctx context.Context) (*colly.Collector, error) {
	u, err := url.Parse(e.Settings.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("source %s: bad url %q", e.Name, e.Settings.URL)
	}
	ua := e.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	c := colly.NewCollector(
		colly.UserAgent(ua),
		colly.AllowedDomains(u.Hostname()),
		colly.StdlibContext(ctx),
		colly.MaxBodySize(e.maxBody()),
		colly.AllowURLRevisit(),
	)
	// NewCollector applies COLLY_* env last; undo what matters for honesty.
	c.UserAgent = ua
	c.IgnoreRobotsTxt = false
	c.AllowedDomains = []string{u.Hostname()}
	c.MaxBodySize = e.maxBody()
	c.CacheDir = ""
	timeout := e.Settings.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	c.SetRequestTimeout(timeout)
	if err := c.Limit(&colly.LimitRule{
		DomainGlob:  "*",
		Parallelism: 1,
		Delay:       e.Settings.Delay,
		RandomDelay: e.Settings.Delay / 2,
	}); err != nil {
		return nil, fmt.Errorf("source %s: rate limit: %w", e.Name, err)
	}
	c.OnResponse(func(r *colly.Response) { r.Ctx.Put(ctxResponse, r) })
	c.OnError(func(r *colly.Response, err error) {
		r.Ctx.Put(ctxError, classify(r, err, timeout))
	})
	return c, nil
}

func (e *Env) maxBody() int {
	mb := e.Settings.MaxBodyMB
	if mb <= 0 {
		mb = 64
	}
	return mb << 20
}

const (
	ctxResponse = "pricewatch.response"
	ctxError    = "pricewatch.error"
)

// Request is one HTTP request of a run.
type Request struct {
	Method string
	URL    string
	Body   []byte
	Header http.Header
}

// HTTPError is a response with a non-success status.
type HTTPError struct {
	Status     int
	RetryAfter time.Duration
	Snippet    string
}

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status))
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	if e.Snippet != "" {
		msg += ": " + e.Snippet
	}
	return msg
}

// ErrTooLarge means the body reached the configured cap and was cut.
var ErrTooLarge = errors.New("response body reached the size cap")

// Fetch performs one request on c and returns the response, or an error
// naming what went wrong (status, timeout, robots.txt, size cap).
func Fetch(c *colly.Collector, r Request) (*colly.Response, error) {
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	hdr := http.Header{}
	for k, v := range r.Header {
		hdr[k] = v
	}
	if hdr.Get("User-Agent") == "" {
		hdr.Set("User-Agent", c.UserAgent)
	}
	ctx := colly.NewContext()
	var body *bytes.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	var err error
	if body != nil {
		err = c.Request(method, r.URL, body, ctx, hdr)
	} else {
		err = c.Request(method, r.URL, nil, ctx, hdr)
	}
	if e, ok := ctx.GetAny(ctxError).(error); ok && e != nil {
		return nil, e
	}
	if err != nil {
		if errors.Is(err, colly.ErrRobotsTxtBlocked) {
			return nil, fmt.Errorf("robots.txt of %s forbids %s", hostOf(r.URL), r.URL)
		}
		return nil, err
	}
	resp, ok := ctx.GetAny(ctxResponse).(*colly.Response)
	if !ok {
		return nil, errors.New("no response")
	}
	if len(resp.Body) >= c.MaxBodySize && c.MaxBodySize > 0 {
		return nil, fmt.Errorf("%w of %d MB", ErrTooLarge, c.MaxBodySize>>20)
	}
	return resp, nil
}

func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Host
	}
	return raw
}

func classify(r *colly.Response, err error, timeout time.Duration) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("request timed out after %s: %w", timeout, err)
	}
	if r != nil && r.StatusCode >= 300 {
		he := &HTTPError{Status: r.StatusCode, Snippet: snippet(r.Body)}
		if r.Headers != nil {
			he.RetryAfter = parseRetryAfter(r.Headers.Get("Retry-After"))
		}
		return he
	}
	return err
}

func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// DecodeJSON decodes a JSON response body into v, saying plainly when the
// body is not JSON at all (an HTML error page, a login wall).
func DecodeJSON(resp *colly.Response, v any) error {
	ct := ""
	if resp.Headers != nil {
		ct = resp.Headers.Get("Content-Type")
	}
	return UnmarshalJSON(resp.Body, ct, v)
}

// UnmarshalJSON is DecodeJSON for a body already in hand; contentType may
// be empty.
func UnmarshalJSON(body []byte, contentType string, v any) error {
	b := bytes.TrimSpace(body)
	if len(b) == 0 {
		return errors.New("empty response body")
	}
	if b[0] == '<' {
		return fmt.Errorf("expected JSON, got markup (content-type %q): %s", contentType, snippet(b))
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode JSON: %w", err)
	}
	return nil
}

// ErrNothingParsed is returned by scrapers whose response held no offers:
// a layout change or an empty answer, never "every offer vanished".
var ErrNothingParsed = errors.New("no offers parsed from the response (layout change or empty answer)")
