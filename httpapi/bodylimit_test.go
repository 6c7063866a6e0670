package httpapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/httpapi"
)

// A request declaring a 1 GB body is answered 413 at once, before anything
// reads the body: the client sends the headers only and waits at most two
// seconds. Before the limit was checked up front, /v1/plan and
// /v1/profiles/import sat reading the body (here: the test's read deadline
// expired, "i/o timeout"; in serve: until read_timeout).
func TestBody_DeclaredOverLimitIs413AtOnce(t *testing.T) {
	h := newPlanHarness(t, "tok")
	ts := httptest.NewServer(h.srv)
	defer ts.Close()
	for _, c := range []struct{ method, target string }{
		{http.MethodPost, "/v1/plan"},
		{http.MethodPost, "/v1/estimate"},
		{http.MethodPost, "/v1/profiles/import?card=A100-80GB-SXM&workload=lora-7b"},
		{http.MethodPut, "/v1/profiles/A100-80GB-SXM/lora-7b"},
		{http.MethodPost, "/v1/silences"},
		{http.MethodPost, "/slack/command"},
		{http.MethodGet, "/v1/best?workload=lora-7b"},
	} {
		t.Run(c.method+" "+c.target, func(t *testing.T) {
			conn, err := net.Dial("tcp", ts.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			start := time.Now()
			fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
				c.method, c.target, 1<<30)
			conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer within 2 s: %v", err)
			}
			defer res.Body.Close()
			var e struct{ Error string }
			json.NewDecoder(res.Body).Decode(&e)
			if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(e.Error, "over the limit") {
				t.Errorf("%d %q, want 413 naming the limit", res.StatusCode, e.Error)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("answered after %v", d)
			}
		})
	}
}

// A body that declares no length (chunked) is cut at the route's limit and
// answered 413 too (before: 400 "body larger than").
func TestBody_ChunkedOverLimitIs413(t *testing.T) {
	h := newPlanHarness(t, "tok")
	body := `{"workload": "lora-7b", "tokens": 1, "card": "` + strings.Repeat("x", 2<<20) + `"}`
	req := httptest.NewRequest(http.MethodPost, "/v1/plan", io.MultiReader(strings.NewReader(body)))
	if req.ContentLength != -1 {
		t.Fatalf("the request declares %d bytes; the test needs an undeclared length", req.ContentLength)
	}
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), fmt.Sprintf("larger than %d bytes", httpapi.MaxEstimateBody)) {
		t.Errorf("%d %s, want 413 naming the limit", rec.Code, rec.Body)
	}
	// Under the limit still works.
	if code, body := h.do(t, http.MethodPost, "/v1/plan", `{"workload": "lora-7b", "tokens": 1e6}`, ""); code != 200 {
		t.Errorf("a small plan: %d %s", code, body)
	}
}
