package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/store"
)

// Silencer is the optional part of a Backend that manages silences.
type Silencer interface {
	Silences() ([]store.Silence, error)
	AddSilence(store.Silence) (uint64, error)
	RemoveSilence(id uint64) error
	WatchNames() []string
}

// SilenceBody is the body of POST /v1/silences.
type SilenceBody struct {
	Watch     string `json:"watch"`
	For       string `json:"for"`
	Reason    string `json:"reason"`
	CreatedBy string `json:"created_by,omitempty"`
}

func (s *Server) silencer() (Silencer, error) {
	sl, ok := s.backend.(Silencer)
	if !ok {
		return nil, pricewatch.Errorf(pricewatch.ENotFound, "silences are not available")
	}
	return sl, nil
}

// NewSilence validates a silence request: a known watch (or "*"), a
// duration up to 30 days, a reason.
func NewSilence(b SilenceBody, watches []string, now time.Time) (store.Silence, error) {
	if b.Watch != "*" && !contains(watches, b.Watch) {
		return store.Silence{}, pricewatch.Errorf(pricewatch.EInvalid, "watch: unknown watch %q (%s, or * for all)", b.Watch, strings.Join(watches, ", "))
	}
	d, err := time.ParseDuration(b.For)
	if err != nil || d <= 0 || d > 30*24*time.Hour {
		return store.Silence{}, pricewatch.Errorf(pricewatch.EInvalid, "for: a duration such as 6h or 90m, at most 720h, got %q", b.For)
	}
	if strings.TrimSpace(b.Reason) == "" || len(b.Reason) > 500 {
		return store.Silence{}, pricewatch.Errorf(pricewatch.EInvalid, "reason: required, at most 500 characters")
	}
	return store.Silence{Watch: b.Watch, Starts: now, Ends: now.Add(d), Reason: strings.TrimSpace(b.Reason), CreatedBy: b.CreatedBy}, nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func (s *Server) listSilences(w http.ResponseWriter, r *http.Request) error {
	sl, err := s.silencer()
	if err != nil {
		return err
	}
	list, err := sl.Silences()
	if err != nil {
		return err
	}
	if list == nil {
		list = []store.Silence{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"silences": list})
	return nil
}

func (s *Server) addSilence(w http.ResponseWriter, r *http.Request) error {
	if err := s.authorize(r); err != nil {
		return err
	}
	sl, err := s.silencer()
	if err != nil {
		return err
	}
	var b SilenceBody
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return pricewatch.Errorf(pricewatch.EInvalid, "invalid body: %v (want {\"watch\", \"for\", \"reason\"})", err)
	}
	if trailing(dec) {
		return pricewatch.Errorf(pricewatch.EInvalid, "trailing data after the silence (want one {\"watch\", \"for\", \"reason\"})")
	}
	silence, err := NewSilence(b, sl.WatchNames(), time.Now().UTC())
	if err != nil {
		return err
	}
	if silence.ID, err = sl.AddSilence(silence); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, silence)
	return nil
}

func (s *Server) removeSilence(w http.ResponseWriter, r *http.Request) error {
	if err := s.authorize(r); err != nil {
		return err
	}
	sl, err := s.silencer()
	if err != nil {
		return err
	}
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil {
		return pricewatch.Errorf(pricewatch.EInvalid, "id: not a silence id: %q", r.PathValue("id"))
	}
	if err := sl.RemoveSilence(id); errors.Is(err, store.ErrNotFound) {
		return pricewatch.Errorf(pricewatch.ENotFound, "no silence %d", id)
	} else if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"removed": id})
	return nil
}
