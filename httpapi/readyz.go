package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/alerts"
	"github.com/pricewatch/pricewatch/pipeline"
)

// EConflict is the code of a request that clashes with work under way
// (a scrape of the same source already running): 409.
const EConflict = "conflict"

// ready reports whether a ranking exists: the view holds stored offers (a
// restart answers from the last good ranking) or some source has had a
// successful run (a market that is really empty). Before that, rankings
// answer 503 with the reason.
func ready(v *pipeline.View) (bool, string) {
	switch {
	case v == nil || v.Snapshot == nil:
		return false, "starting: reading the stored offers and ranking them"
	case v.Snapshot.OfferCount() > 0:
		return true, ""
	}
	for _, h := range v.Health {
		if !h.LastSuccess.IsZero() {
			return true, ""
		}
	}
	return false, "no ranking yet: the first scrape is still running"
}

// readyz answers 200 once the database is open and a first ranking
// exists, else 503 with the reason.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r.URL.Query()); err != nil {
		return err
	}
	v := s.backend.View()
	if ok, why := ready(v); !ok {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "not ready", "reason": why})
		return nil
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "ranking_generated_at": v.Snapshot.GeneratedAt,
		"ranking_age_seconds": rankingAge(v)})
	return nil
}

func rankingAge(v *pipeline.View) float64 {
	return now().Sub(v.Snapshot.GeneratedAt).Round(time.Millisecond).Seconds()
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r.URL.Query()); err != nil {
		return err
	}
	status := map[string]any{"status": "ok", "ranking_generated_at": nil, "ranking_age_seconds": nil}
	if v := s.backend.View(); v != nil && v.Snapshot != nil {
		status["ranking_generated_at"] = v.Snapshot.GeneratedAt
		status["ranking_age_seconds"] = rankingAge(v)
	}
	writeJSON(w, http.StatusOK, status)
	return nil
}

// ScrapeRunner is the optional part of a Backend that runs a source now
// (the daemon). Scrape starts the run and returns a channel that gets its
// summary; an unknown source is pricewatch.ENotFound, a disabled one
// pricewatch.EInvalid, one already running EConflict.
type ScrapeRunner interface {
	Scrape(source string) (<-chan pipeline.Summary, error)
}

// scrapeWait is how long POST /v1/scrape/{source} waits for the run before
// answering 202 (the run goes on in the daemon).
var scrapeWait = 10 * time.Second

// ScrapeResult is the answer of POST /v1/scrape/{source}.
type ScrapeResult struct {
	Source string `json:"source"`
	// Status is running (202: not done within the wait), ok, held
	// (fetched, not applied), failed or disabled.
	Status          string         `json:"status"`
	Offers          int            `json:"offers"`
	Changes         int            `json:"changes"`
	UnknownGPUs     map[string]int `json:"unknown_gpus,omitempty"`
	DurationSeconds float64        `json:"duration_seconds"`
	Error           string         `json:"error,omitempty"`
	Reason          string         `json:"reason,omitempty"`
}

// NewScrapeResult describes a finished run.
func NewScrapeResult(sum pipeline.Summary) ScrapeResult {
	r := ScrapeResult{Source: sum.Source, Status: "ok", Offers: sum.Offers, Changes: sum.Changes, UnknownGPUs: sum.Unknown,
		DurationSeconds: sum.Duration.Seconds(), Reason: sum.Reason}
	switch {
	case sum.Disabled != "":
		r.Status, r.Reason = "disabled", sum.Disabled
	case sum.Err != nil:
		r.Status, r.Error = "failed", sum.Err.Error()
	case sum.Held != "":
		r.Status = "held"
	}
	return r
}

// sourceAction checks a token-guarded POST on /v1/…/{source}: the token,
// no query parameters, a known source. It returns the source.
func (s *Server) sourceAction(r *http.Request, params ...string) (string, error) {
	if err := s.authorize(r); err != nil {
		return "", err
	}
	if err := checkParams(r.URL.Query(), params...); err != nil {
		return "", err
	}
	src := r.PathValue("source")
	if _, ok := s.backend.Config().Sources[src]; !ok {
		return "", pricewatch.Errorf(pricewatch.ENotFound, "unknown source %q", src)
	}
	return src, nil
}

func (s *Server) scrape(w http.ResponseWriter, r *http.Request) error {
	src, err := s.sourceAction(r)
	if err != nil {
		return err
	}
	sr, ok := s.backend.(ScrapeRunner)
	if !ok {
		return pricewatch.Errorf(pricewatch.ENotFound, "scrapes on request are not available")
	}
	done, err := sr.Scrape(src)
	if err != nil {
		return err
	}
	t := time.NewTimer(scrapeWait)
	defer t.Stop()
	select {
	case sum := <-done:
		writeJSON(w, http.StatusOK, NewScrapeResult(sum))
	case <-t.C:
		writeJSON(w, http.StatusAccepted, ScrapeResult{Source: src, Status: "running"})
	case <-r.Context().Done():
		return context.Cause(r.Context())
	}
	return nil
}

// DigestPreview is the answer of GET /v1/digest: today's digest as it
// would be posted, without queueing it.
type DigestPreview struct {
	Text     string           `json:"text"`
	Messages []alerts.Message `json:"messages"`
}

func (s *Server) digestPreview(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r.URL.Query()); err != nil {
		return err
	}
	if _, err := s.view(); err != nil {
		return err
	}
	msgs, err := s.backend.Digest()
	if err != nil {
		return err
	}
	p := DigestPreview{Messages: msgs}
	if p.Messages == nil {
		p.Messages = []alerts.Message{}
	}
	if len(msgs) > 0 {
		p.Text = msgs[0].Text
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}
