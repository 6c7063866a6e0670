package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// POST /v1/sources/{source}/accept needs the token, names an unknown
// source with 404 and a source with nothing held with 409; the run it
// starts is reported.
func TestAcceptSource_Errors(t *testing.T) {
	h := newPlanHarness(t, "tok")
	for _, c := range []struct {
		target, token string
		code          int
		want          string
	}{
		{"/v1/sources/runpod/accept", "", 401, ""},
		{"/v1/sources/runpod/accept", "wrong", 401, ""},
		{"/v1/sources/nosuch/accept", "tok", 404, `unknown source \"nosuch\"`},
		{"/v1/sources/runpod/accept", "tok", 409, "nothing to accept"},
	} {
		code, body := h.do(t, http.MethodPost, c.target, "", c.token)
		var e struct{ Error string }
		json.Unmarshal(body, &e)
		if code != c.code || e.Error == "" || !strings.Contains(string(body), c.want) {
			t.Errorf("%s (token %q): %d %s, want %d with %q", c.target, c.token, code, body, c.code, c.want)
		}
	}
}
