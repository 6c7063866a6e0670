package httpapi_test

import (
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/pricewatch/pricewatch/httpapi"
)

type openAPIDoc struct {
	OpenAPI    string `yaml:"openapi"`
	Components struct {
		Parameters map[string]openAPIParam `yaml:"parameters"`
	} `yaml:"components"`
	Paths map[string]map[string]yaml.Node `yaml:"paths"`
}

type openAPIParam struct {
	Ref      string `yaml:"$ref"`
	Name     string `yaml:"name"`
	In       string `yaml:"in"`
	Required bool   `yaml:"required"`
}

type openAPIOp struct {
	Parameters []openAPIParam        `yaml:"parameters"`
	Responses  map[string]yaml.Node  `yaml:"responses"`
	Security   []map[string][]string `yaml:"security"`
}

type describedOp struct {
	path, pattern, method string
	query                 []string
	codes                 map[int]bool
	token                 bool
}

func loadOpenAPI(t *testing.T) map[string]*describedOp {
	t.Helper()
	var doc openAPIDoc
	if err := yaml.Unmarshal(httpapi.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	ops := map[string]*describedOp{}
	for path, item := range doc.Paths {
		pattern := path
		if n, ok := item["x-pattern"]; ok {
			pattern = n.Value
		}
		for method, node := range item {
			if strings.HasPrefix(method, "x-") {
				continue
			}
			var op openAPIOp
			if err := node.Decode(&op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			d := &describedOp{path: path, pattern: pattern, method: strings.ToUpper(method), codes: map[int]bool{}, token: len(op.Security) > 0}
			for _, p := range op.Parameters {
				if p.Ref != "" {
					p = doc.Components.Parameters[strings.TrimPrefix(p.Ref, "#/components/parameters/")]
				}
				if p.Name == "" {
					t.Fatalf("%s %s: unresolved parameter", method, path)
				}
				if p.In == "query" {
					d.query = append(d.query, p.Name)
				}
			}
			sort.Strings(d.query)
			for code := range op.Responses {
				n, err := strconv.Atoi(code)
				if err != nil {
					t.Fatalf("%s %s: response %q", method, path, code)
				}
				d.codes[n] = true
			}
			ops[d.method+" "+pattern] = d
		}
	}
	return ops
}

var allowedRe = regexp.MustCompile(`unknown parameter \\?"zz_unknown\\?" \(allowed: ([^)]*)\)`)

// concrete fills a pattern's wildcards so a request reaches its handler.
func concrete(pattern string) string {
	r := strings.NewReplacer("{rest...}", "runpod/nosuch/-/ondemand/history", "{source}", "runpod", "{id}", "1",
		"{card}", "A100-80GB-SXM", "{workload}", "lora-7b", "{file}", "style.css")
	return r.Replace(pattern)
}

// TestOpenAPI_DescribesEveryRoute: every route of the server is described
// and every described operation is a route; every query parameter a GET
// handler accepts (its "allowed" list) is described and no other; and
// every status a probe of an operation gets is among its responses. A
// route added without a description fails here.
func TestOpenAPI_DescribesEveryRoute(t *testing.T) {
	ops := loadOpenAPI(t)
	h := newPlanHarness(t, "t0ken")
	routes := h.srv.Routes()
	if len(routes) < 20 {
		t.Fatalf("routes: %v", routes)
	}
	seen := map[string]bool{}
	for _, r := range routes {
		key := r.Method + " " + r.Pattern
		seen[key] = true
		if _, ok := ops[key]; !ok {
			t.Errorf("route %s is not described in openapi.yaml", key)
		}
	}
	for key := range ops {
		if !seen[key] {
			t.Errorf("openapi.yaml describes %s, which the server does not route", key)
		}
	}
	serve := func(method, target, token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, target, strings.NewReader(""))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.srv.ServeHTTP(rec, req)
		return rec
	}
	for key, op := range ops {
		if !seen[key] {
			continue
		}
		target := concrete(op.pattern)
		check := func(what string, rec *httptest.ResponseRecorder) {
			if !op.codes[rec.Code] {
				t.Errorf("%s %s (%s): status %d is not among its documented responses %v: %.200s", op.method, op.pattern, what, rec.Code, op.codes, rec.Body)
			}
		}
		if op.method == http.MethodGet {
			rec := serve(http.MethodGet, target+"?zz_unknown=1", "")
			body := html.UnescapeString(rec.Body.String())
			if m := allowedRe.FindStringSubmatch(body); m != nil {
				var allowed []string
				if m[1] != "" {
					allowed = strings.Split(m[1], ", ")
				}
				sort.Strings(allowed)
				if !slices.Equal(allowed, op.query) {
					t.Errorf("GET %s: the handler accepts %v, openapi.yaml describes %v", op.pattern, allowed, op.query)
				}
				check("unknown parameter", rec)
			} else if len(op.query) > 0 || rec.Code != http.StatusOK {
				t.Errorf("GET %s: an unknown parameter got %d without the allowed list: %.200s", op.pattern, rec.Code, body)
			}
			check("no parameters", serve(http.MethodGet, target, ""))
		}
		if op.token {
			rec := serve(op.method, target, "")
			if rec.Code != http.StatusUnauthorized {
				t.Errorf("%s %s without a token: %d", op.method, op.pattern, rec.Code)
			}
			check("no token", rec)
			check("wrong token", serve(op.method, target, "wrong"))
			check("token", serve(op.method, target, "t0ken"))
		} else if op.method != http.MethodGet {
			check("empty body", serve(op.method, target, ""))
		}
	}
	// The description is served.
	rec := serve(http.MethodGet, "/openapi.yaml", "")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "openapi: 3.1.0") {
		t.Errorf("/openapi.yaml: %d", rec.Code)
	}
}
