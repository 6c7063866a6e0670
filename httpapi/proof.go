package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sync/atomic"

	"github.com/pricewatch/pricewatch"
)

// A daemon records its address and a secret of its own in <db>.addr (mode
// 0600); before the CLI sends a token or an upload to the address it read
// there, it asks GET /v1/daemon/proof?challenge=… and checks the answer
// against the secret. A process that took over the recorded port, or wrote
// an address file of its own, cannot answer.

// Challenge lengths the proof endpoint accepts, in bytes.
const (
	MinChallengeBytes = 16
	MaxChallengeBytes = 64
)

// DaemonProof is the answer a daemon with secret, recorded at addr, gives
// to challenge: HMAC-SHA256 over a label, the address and the challenge,
// so that an answer relayed from a daemon at another address fails.
func DaemonProof(secret []byte, addr string, challenge []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("pricewatch daemon proof\x00"))
	m.Write([]byte(addr))
	m.Write([]byte{0})
	m.Write(challenge)
	return m.Sum(nil)
}

type proofKey struct {
	secret []byte
	addr   string
}

// SetDaemonProof makes the server answer GET /v1/daemon/proof with secret,
// as the daemon recorded at addr; until then the endpoint answers 404.
func (s *Server) SetDaemonProof(secret []byte, addr string) {
	s.proof.Store(&proofKey{secret: append([]byte(nil), secret...), addr: addr})
}

type proofHolder = atomic.Pointer[proofKey]

// TokenProof is the answer a daemon holding the API token gives to a
// challenge sent to the address addr (the Host the client dialled): the
// proof a CLI that found no daemon record checks before it sends the
// token, so that the token never goes to a process that does not hold it.
func TokenProof(token, addr string, challenge []byte) []byte {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("pricewatch token proof\x00"))
	m.Write([]byte(addr))
	m.Write([]byte{0})
	m.Write(challenge)
	return m.Sum(nil)
}

func (s *Server) daemonProof(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if err := checkParams(q, "challenge", "key"); err != nil {
		return err
	}
	c, err := hex.DecodeString(q.Get("challenge"))
	if err != nil || len(c) < MinChallengeBytes || len(c) > MaxChallengeBytes {
		return pricewatch.Errorf(pricewatch.EInvalid, "challenge: want %d to %d random bytes in hex", MinChallengeBytes, MaxChallengeBytes)
	}
	switch q.Get("key") {
	case "", "record":
	case "token":
		// Keyed by the API token, over the address the client dialled.
		tok := s.backend.Config().Server.APIToken
		if tok == "" {
			return pricewatch.Errorf(pricewatch.ENotFound, "this daemon has no API token to prove")
		}
		writeJSON(w, http.StatusOK, map[string]string{"proof": hex.EncodeToString(TokenProof(tok, r.Host, c))})
		return nil
	default:
		return pricewatch.Errorf(pricewatch.EInvalid, "key: record (the default) or token, got %q", q.Get("key"))
	}
	k := s.proof.Load()
	if k == nil {
		return pricewatch.Errorf(pricewatch.ENotFound, "this server records no daemon address (serve writes <db>.addr)")
	}
	writeJSON(w, http.StatusOK, map[string]string{"proof": hex.EncodeToString(DaemonProof(k.secret, k.addr, c))})
	return nil
}
