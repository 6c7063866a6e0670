package httpapi_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/httpapi"
)

// GET /v1/daemon/proof answers HMAC(secret, label, addr, challenge) once
// serve set a secret; 404 before; 400 for a challenge outside 16..64 bytes.
func TestDaemonProof(t *testing.T) {
	h := newHarness(t, false)
	ch := strings.Repeat("5a", 32)
	if code, body := h.get(t, "/v1/daemon/proof?challenge="+ch); code != 404 {
		t.Errorf("without a secret: %d %s", code, body)
	}
	secret := []byte("0123456789abcdef0123456789abcdef")
	h.srv.SetDaemonProof(secret, "127.0.0.1:8080")
	for _, bad := range []string{"", "zz", strings.Repeat("00", 15), strings.Repeat("00", 65)} {
		if code, body := h.get(t, "/v1/daemon/proof?challenge="+bad); code != 400 || !strings.Contains(string(body), "challenge") {
			t.Errorf("challenge %q: %d %s", bad, code, body)
		}
	}
	code, body := h.get(t, "/v1/daemon/proof?challenge="+ch)
	got := decode[struct{ Proof string }](t, body)
	c, _ := hex.DecodeString(ch)
	want := hex.EncodeToString(httpapi.DaemonProof(secret, "127.0.0.1:8080", c))
	if code != http.StatusOK || got.Proof != want {
		t.Errorf("%d proof %q, want %q", code, got.Proof, want)
	}
	// The proof binds the address: a daemon at another address answers differently.
	if bytes.Equal(httpapi.DaemonProof(secret, "127.0.0.1:9090", c), httpapi.DaemonProof(secret, "127.0.0.1:8080", c)) {
		t.Error("the proof does not depend on the address")
	}
}

// key=token: the daemon proves it holds the API token (HMAC keyed by it,
// over the Host the client dialled); without a token it has nothing to
// prove (404); another key is a 400 naming it.
func TestDaemonProof_KeyedByTheToken(t *testing.T) {
	h := newPlanHarness(t, "tok")
	c := strings.Repeat("5a", 32)
	code, body := h.do(t, http.MethodGet, "/v1/daemon/proof?key=token&challenge="+c, "", "")
	var out struct{ Proof string }
	json.Unmarshal(body, &out)
	raw, _ := hex.DecodeString(c)
	// httptest.NewRequest dials example.com.
	if want := hex.EncodeToString(httpapi.TokenProof("tok", "example.com", raw)); code != 200 || out.Proof != want {
		t.Errorf("%d %s, want proof %s", code, body, want)
	}
	if code, body := h.do(t, http.MethodGet, "/v1/daemon/proof?key=nope&challenge="+c, "", ""); code != 400 || !strings.Contains(string(body), "key:") {
		t.Errorf("key=nope: %d %s", code, body)
	}
	none := newPlanHarness(t, "")
	if code, _ := none.do(t, http.MethodGet, "/v1/daemon/proof?key=token&challenge="+c, "", ""); code != 404 {
		t.Errorf("no token: %d", code)
	}
}
