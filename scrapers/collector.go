package scrapers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
)

// DefaultUserAgent identifies pricewatch honestly, with a contact URL.
const DefaultUserAgent = "pricewatch/0.1 (+https://github.com/pricewatch/pricewatch; GPU price watcher)"

// Defaults for the retry policy: a few attempts with exponential backoff on
// 5xx and timeouts, Retry-After honoured on 429 up to a bound, and a budget
// of retries per run so that a dead source cannot hold a run for long.
const (
	DefaultRetries      = 2
	DefaultRetryBackoff = 2 * time.Second
	MaxRetryAfter       = 60 * time.Second
	RetryBudgetPerRun   = 8
)

// Progress is a snapshot of a run: bytes received so far and offers parsed
// so far (streaming scrapers report offers as they go).
type Progress struct {
	Source string
	Bytes  int64
	Offers int
}

// Env is what a scraper gets for one run: its source's settings and the
// means to build a polite collector and to fetch with retries.
type Env struct {
	Name      string
	Settings  Settings
	UserAgent string
	// Getenv reads secrets (API keys, tokens); nil means os.Getenv. Tests
	// inject their own instead of touching the process environment.
	Getenv func(string) string
	// OnProgress, if set, is called as bytes arrive and offers parse.
	OnProgress func(Progress)

	bytes   atomic.Int64
	offers  atomic.Int64
	retries atomic.Int32
}

// URL is the source's configured endpoint.
func (e *Env) URL() string { return e.Settings.URL }

// Secret returns a key or token by name: the environment value, else the
// contents of the file that NAME_FILE names (a systemd credential, a
// mounted secret), trimmed. A file that cannot be read gives "" (the
// source then reports the key missing); its contents are never logged.
func (e *Env) Secret(name string) string {
	get := e.Getenv
	if get == nil {
		get = os.Getenv
	}
	if v := strings.TrimSpace(get(name)); v != "" {
		return v
	}
	if f := strings.TrimSpace(get(name + "_FILE")); f != "" {
		if b, err := os.ReadFile(f); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	return ""
}

// AddOffers reports offers parsed so far (for progress display).
func (e *Env) AddOffers(n int) {
	e.offers.Add(int64(n))
	e.report()
}

// BytesRead is how many response bytes the run has received.
func (e *Env) BytesRead() int64 { return e.bytes.Load() }

func (e *Env) report() {
	if e.OnProgress != nil {
		e.OnProgress(Progress{Source: e.Name, Bytes: e.bytes.Load(), Offers: int(e.offers.Load())})
	}
}

// NewCollector builds a fresh collector for this run: honest user agent,
// robots.txt respected, one rate limit per domain, a request timeout, a
// body cap and the run's context for cancellation. Hosts of extraURLs are
// allowed besides the source URL's. COLLY_* environment variables are not
// honoured: config is the only source of settings.
func (e *Env) NewCollector(ctx context.Context, extraURLs ...string) (*colly.Collector, error) {
	var hosts []string
	for _, raw := range append([]string{e.Settings.URL}, extraURLs...) {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("source %s: bad url %q", e.Name, raw)
		}
		hosts = append(hosts, u.Hostname())
	}
	ua := e.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	c := colly.NewCollector(colly.StdlibContext(ctx), colly.AllowURLRevisit())
	// NewCollector applies COLLY_* env last; set what matters after it.
	c.UserAgent = ua
	c.IgnoreRobotsTxt = false
	c.AllowedDomains = hosts
	c.MaxBodySize = e.maxBody()
	c.CacheDir = ""
	c.SetRequestTimeout(e.timeout())
	c.WithTransport(&transport{base: http.DefaultTransport, env: e})
	par := e.Settings.Parallelism
	if par <= 0 {
		par = 1
	}
	if err := c.Limit(&colly.LimitRule{
		DomainGlob:  "*",
		Parallelism: par,
		Delay:       e.Settings.Delay,
		RandomDelay: e.Settings.Delay / 2,
	}); err != nil {
		return nil, fmt.Errorf("source %s: rate limit: %w", e.Name, err)
	}
	c.OnResponse(func(r *colly.Response) { r.Ctx.Put(ctxResponse, r) })
	c.OnError(func(r *colly.Response, err error) {
		r.Ctx.Put(ctxError, classify(r, err, e.timeout()))
	})
	return c, nil
}

func (e *Env) timeout() time.Duration {
	if e.Settings.Timeout > 0 {
		return e.Settings.Timeout
	}
	return 30 * time.Second
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
	// streamHeader marks a request whose body a consumer streams; the
	// transport strips it before the request leaves.
	streamHeader = "X-Pricewatch-Stream"
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

// TimeoutError is a request that ran out of time.
type TimeoutError struct {
	After time.Duration
	Err   error
}

func (e *TimeoutError) Error() string {
	if e.After == 0 {
		return fmt.Sprintf("request timed out: %v", e.Err)
	}
	return fmt.Sprintf("request timed out after %s: %v", e.After, e.Err)
}
func (e *TimeoutError) Unwrap() error { return e.Err }

// Fetch performs one request on c, retrying 5xx answers, timeouts and
// network errors with exponential backoff and 429 answers after their
// Retry-After (bounded), within the run's retry budget. It returns the
// response or an error naming the cause (status, timeout, robots.txt, size
// cap) and how many attempts were made.
func (e *Env) Fetch(ctx context.Context, c *colly.Collector, r Request) (*colly.Response, error) {
	var resp *colly.Response
	err := e.retry(ctx, func() error {
		var err error
		resp, err = fetchOnce(c, r)
		return err
	})
	return resp, err
}

// Stream performs a request whose body is handed to consume as it arrives,
// never held in memory whole: for offer files of hundreds of MB. The
// request goes through the collector (robots.txt, rate limit, user agent,
// context); the body bypasses colly's buffer. consume runs at most once
// with a successful (2xx) body; it is not retried once it has started.
func (e *Env) Stream(ctx context.Context, c *colly.Collector, r Request, consume func(io.Reader) error) error {
	id := streamIDs.Add(1)
	s := &stream{consume: consume}
	streams.Store(id, s)
	defer streams.Delete(id)
	hdr := http.Header{}
	for k, v := range r.Header {
		hdr[k] = v
	}
	hdr.Set(streamHeader, strconv.FormatUint(id, 10))
	r.Header = hdr
	return e.retry(ctx, func() error {
		_, err := fetchOnce(c, r)
		if s.started.Load() {
			// The consumer saw (part of) a body: its verdict is final.
			return permanent{firstErr(s.err, err)}
		}
		return err
	})
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// permanent wraps an error that must not be retried.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

func (e *Env) retry(ctx context.Context, attempt func() error) error {
	retries := e.Settings.Retries
	if retries < 0 {
		retries = 0
	}
	backoff := e.Settings.RetryBackoff
	if backoff <= 0 {
		backoff = DefaultRetryBackoff
	}
	var err error
	for i := 0; ; i++ {
		err = attempt()
		var p permanent
		if errors.As(err, &p) {
			return p.err
		}
		if err == nil || !retryable(err) || i >= retries || ctx.Err() != nil {
			break
		}
		wait := backoff << i
		wait += time.Duration(rand.Int64N(int64(wait)/4 + 1))
		var he *HTTPError
		if errors.As(err, &he) && he.Status == http.StatusTooManyRequests && he.RetryAfter > 0 {
			if he.RetryAfter > MaxRetryAfter {
				// Waiting that long inside a run holds it up; the next
				// scheduled run asks again.
				return err
			}
			wait = he.RetryAfter
		}
		if e.retries.Add(1) > RetryBudgetPerRun {
			return fmt.Errorf("%w (retry budget of the run spent)", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (cancelled while waiting to retry)", err)
		case <-time.After(wait):
		}
	}
	if err != nil && e.retries.Load() > 0 && retryable(err) {
		return fmt.Errorf("%w (after retries)", err)
	}
	return err
}

// retryable: 5xx, 429, timeouts and network errors are worth another try;
// 4xx, robots.txt, bad bodies are not.
func retryable(err error) bool {
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Status >= 500 || he.Status == http.StatusTooManyRequests
	}
	var te *TimeoutError
	if errors.As(err, &te) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

func fetchOnce(c *colly.Collector, r Request) (*colly.Response, error) {
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
	var err error
	if r.Body != nil {
		err = c.Request(method, r.URL, bytes.NewReader(r.Body), ctx, hdr)
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
		// colly fetches robots.txt itself, past the response hooks: its
		// timeout is named here.
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
			return nil, &TimeoutError{Err: err}
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
	if want := wantedFormat(hdr.Get("Accept")); want != "" && isMarkup(resp.Body) {
		ct := ""
		if resp.Headers != nil {
			ct = resp.Headers.Get("Content-Type")
		}
		return nil, newMarkupError(want, ct, resp.Body)
	}
	return resp, nil
}

// wantedFormat names the data format an Accept header asks for first
// (JSON, CSV, JavaScript), or "" for pages and anything else.
func wantedFormat(accept string) string {
	first, _, _ := strings.Cut(accept, ",")
	mt, _, err := mime.ParseMediaType(strings.TrimSpace(first))
	if err != nil {
		return ""
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return "JSON"
	case mt == "text/csv":
		return "CSV"
	case mt == "application/javascript" || mt == "text/javascript":
		return "JavaScript"
	}
	return ""
}

// isMarkup reports whether a body is an HTML or XML document (its first
// non-space byte is '<'): an error page or a login wall where data was
// asked for.
func isMarkup(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '<'
}

// MarkupError is an HTML (or XML) body where data was expected: an error
// page, a login wall, a bot check. It names the content type the server
// declared or, for a body in hand without one, what the body looks like.
type MarkupError struct {
	// Want is the format expected: JSON, CSV, JavaScript.
	Want string
	// ContentType is the response's Content-Type header ("" if unknown);
	// Sniffed is the type the body looks like when it is unknown.
	ContentType string
	Sniffed     string
	Snippet     string
}

func newMarkupError(want, contentType string, body []byte) *MarkupError {
	e := &MarkupError{Want: want, ContentType: contentType, Snippet: snippet(body)}
	if contentType == "" {
		e.Sniffed = http.DetectContentType(bytes.TrimSpace(body))
	}
	return e
}

func (e *MarkupError) Error() string {
	if e.ContentType == "" {
		return fmt.Sprintf("expected %s, got markup (no content-type known; it looks like %s): %s", e.Want, e.Sniffed, e.Snippet)
	}
	return fmt.Sprintf("expected %s, got markup (content-type %q): %s", e.Want, e.ContentType, e.Snippet)
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
		return &TimeoutError{After: timeout, Err: err}
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
// be empty (it is unknown), and an HTML body then says what it looks like.
// Fetch has already refused markup for a request that asked for JSON,
// naming the response's content type.
func UnmarshalJSON(body []byte, contentType string, v any) error {
	b := bytes.TrimSpace(body)
	if len(b) == 0 {
		return ErrEmptyBody
	}
	if b[0] == '<' {
		return newMarkupError("JSON", contentType, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode JSON: %w", err)
	}
	return nil
}

// ErrEmptyBody is a response without a body (or only white space).
var ErrEmptyBody = errors.New("empty response body")

// ErrNothingParsed is returned by scrapers whose response held no offers:
// a layout change or an empty answer, never "every offer vanished".
var ErrNothingParsed = errors.New("no offers parsed from the response (layout change or empty answer)")

// transport counts the bytes of every response for progress, and hands the
// bodies of streamed requests to their consumer.
type transport struct {
	base http.RoundTripper
	env  *Env
}

type stream struct {
	consume func(io.Reader) error
	started atomic.Bool
	err     error
}

var (
	streams   sync.Map // id → *stream
	streamIDs atomic.Uint64
)

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var s *stream
	if id := req.Header.Get(streamHeader); id != "" {
		req = req.Clone(req.Context())
		req.Header.Del(streamHeader)
		if n, err := strconv.ParseUint(id, 10, 64); err == nil {
			if v, ok := streams.Load(n); ok {
				s = v.(*stream)
			}
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body := &countingReader{r: resp.Body, env: t.env}
	if s == nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{body, resp.Body}
		return resp, nil
	}
	// A streamed body: the consumer reads it here, capped; colly gets an
	// empty body so that it never buffers the file. Markup where data was
	// asked for is refused before the consumer sees it.
	s.started.Store(true)
	limit := int64(t.env.maxBody())
	capped := &capReader{r: body, left: limit, limit: limit}
	br := bufio.NewReader(capped)
	head, _ := br.Peek(512)
	if want := wantedFormat(req.Header.Get("Accept")); want != "" && isMarkup(head) {
		s.err = newMarkupError(want, resp.Header.Get("Content-Type"), head)
	} else {
		s.err = s.consume(br)
	}
	if s.err == nil && capped.over {
		s.err = fmt.Errorf("%w of %d MB", ErrTooLarge, limit>>20)
	}
	resp.Body.Close()
	resp.Body = http.NoBody
	resp.ContentLength = 0
	return resp, nil
}

type countingReader struct {
	r   io.Reader
	env *Env
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.env.bytes.Add(int64(n))
		c.env.report()
	}
	return n, err
}

// capReader stops at the cap and remembers that it did.
type capReader struct {
	r           io.Reader
	left, limit int64
	over        bool
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		c.over = true
		return 0, fmt.Errorf("%w of %d MB", ErrTooLarge, c.limit>>20)
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// Disabled is returned by a scraper's Check when it cannot run as
// configured (a key or token is missing): the source is shown as disabled
// with the reason, not as failing.
type Disabled struct{ Reason string }

func (d *Disabled) Error() string { return "disabled: " + d.Reason }

// Checker is implemented by scrapers that need credentials or other
// preconditions; Check returns a *Disabled when the source cannot run.
type Checker interface {
	Check(env *Env) error
}

// CompleteHTML rejects an empty page (ErrEmptyBody) and a page cut short:
// HTML parses leniently, so half a page would otherwise yield half the rows
// and look like offers that vanished.
func CompleteHTML(body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return ErrEmptyBody
	}
	if !bytes.Contains(bytes.ToLower(body), []byte("</html>")) {
		return errors.New("page truncated (no closing </html>)")
	}
	return nil
}
