package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/store"
)

// SourceAccepter is the optional part of a Backend that accepts the level
// a held source shows and runs the source (the pipeline).
type SourceAccepter interface {
	Accept(ctx context.Context, source, by, level string) (store.Level, pipeline.Summary, error)
}

// AcceptResult is the answer of POST /v1/sources/{source}/accept: the
// level accepted and the run the accept started (applied, or why not).
type AcceptResult struct {
	Source   string       `json:"source"`
	Accepted store.Level  `json:"accepted"`
	Run      ScrapeResult `json:"run"`
}

// acceptSource accepts the held level the request names (?level=, the
// label /v1/sources and the hold message show): a level that moved since
// is a 409 naming the current one, as is a level accepted already (of
// concurrent accepts one applies).
func (s *Server) acceptSource(w http.ResponseWriter, r *http.Request) error {
	src, err := s.sourceAction(r, "level")
	if err != nil {
		return err
	}
	acc, ok := s.backend.(SourceAccepter)
	if !ok {
		return pricewatch.Errorf(pricewatch.ENotFound, "accepting a source is not available")
	}
	lv, sum, err := acc.Accept(r.Context(), src, "api", r.URL.Query().Get("level"))
	switch {
	case errors.Is(err, store.ErrNothingToAccept):
		return pricewatch.Errorf(EConflict, "source %s: nothing to accept: no held level waits for an operator", src)
	case errors.Is(err, store.ErrLevelRequired):
		return pricewatch.Errorf(pricewatch.EInvalid, "level: required: %v (?level=%s accepts it)", err, lv.Label())
	case errors.Is(err, store.ErrLevelChanged), errors.Is(err, store.ErrAlreadyAccepted):
		return pricewatch.Errorf(EConflict, "level: %v", err)
	case err != nil && lv.AcceptedBy == "":
		return err
	}
	res := AcceptResult{Source: src, Accepted: lv, Run: NewScrapeResult(sum)}
	if errors.Is(sum.Err, pipeline.ErrBusy) {
		res.Run.Status, res.Run.Reason = "running", "a run was under way; the next run showing the accepted level applies it"
		res.Run.Error = ""
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
