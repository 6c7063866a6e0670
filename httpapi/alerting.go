package httpapi

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/rank"
	"github.com/pricewatch/pricewatch/store"
)

// Source statuses, re-exported for the API's users.
const (
	StatusOK       = pipeline.StatusOK
	StatusFailing  = pipeline.StatusFailing
	StatusDisabled = pipeline.StatusDisabled
	StatusStale    = pipeline.StatusStale
	StatusPending  = pipeline.StatusPending
	StatusSuspect  = pipeline.StatusSuspect
)

// SourceStatus is one source in /v1/sources.
type SourceStatus = pipeline.SourceStatus

func (s *Server) sources(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r.URL.Query()); err != nil {
		return err
	}
	out := map[string]any{"sources": s.backend.Statuses()}
	// Every flagged measurement, also those of a provider that is no
	// source of its own (one a catalog source such as skypilot lists).
	if wr, err := s.writer(); err == nil {
		below := []rank.NormCheck{}
		for _, c := range wr.NormChecks() {
			if c.BelowNorm {
				below = append(below, c)
			}
		}
		out["below_norm"] = below
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// AlertsResponse is the /v1/alerts answer: the outbox, newest first.
type AlertsResponse struct {
	Pending  int             `json:"pending"`
	Failed   int             `json:"failed"`
	Messages []store.Message `json:"messages"`
}

func (s *Server) alerts(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if err := checkParams(q, "limit", "status"); err != nil {
		return err
	}
	status, limit, err := ParseAlertsQuery(q)
	if err != nil {
		return err
	}
	page, err := s.backend.Outbox(status, limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, Alerts(page))
	return nil
}

// ParseAlertsQuery reads /v1/alerts' status ("": any) and limit (default
// 50, at most 1000); pricewatch alerts checks its flags with it.
func ParseAlertsQuery(q url.Values) (status string, limit int, err error) {
	limit = 50
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 1000 {
			return "", 0, pricewatch.Errorf(pricewatch.EInvalid, "limit must be an integer within 1..1000, got %q", l)
		}
		limit = n
	}
	switch status = q.Get("status"); status {
	case "", store.Pending, store.Sent, store.Logged, store.Failed:
	default:
		return "", 0, pricewatch.Errorf(pricewatch.EInvalid, "status must be pending, sent, logged or failed, got %q", status)
	}
	return status, limit, nil
}

// Alerts is the /v1/alerts answer for an outbox page.
func Alerts(page store.OutboxPage) AlertsResponse {
	resp := AlertsResponse{Pending: page.Pending, Failed: page.Failed, Messages: []store.Message{}}
	for _, m := range page.Messages {
		m.Payload = nil // the text says it; blocks stay in the store
		resp.Messages = append(resp.Messages, m)
	}
	return resp
}

// digest builds today's digest now and queues it for Slack (token needed).
func (s *Server) digest(w http.ResponseWriter, r *http.Request) error {
	if err := s.authorize(r); err != nil {
		return err
	}
	msgs, err := s.backend.Digest()
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if err := s.backend.Enqueue("digest", m); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"queued": len(msgs)})
	return nil
}
