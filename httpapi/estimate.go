package httpapi

import (
	"io"
	"net/http"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
)

// MaxEstimateBody caps a POST /v1/estimate body: a config.json of up to
// rank.MaxConfigBytes inside the request, and room for the other fields.
const MaxEstimateBody = rank.MaxConfigBytes + MaxSmallBody

// DecodeEstimate reads an estimate request strictly: an unknown field or a
// value of the wrong type is an error naming the field.
func DecodeEstimate(r io.Reader) (rank.EstimateRequest, error) {
	var req rank.EstimateRequest
	err := decodeStrict(r, &req, "an estimate request")
	return req, err
}

// Estimate answers one estimate request with the card catalog the rest of
// the API resolves cards with: the one function POST /v1/estimate and
// pricewatch estimate call, so both answer alike. Invalid input is an
// EInvalid error naming the field; a job the GPUs cannot hold is a result
// with fits false and the reason.
func Estimate(req rank.EstimateRequest) (rank.EstimateResult, error) {
	res, err := rank.EstimateFor(req, normalize.DefaultCatalog().Card)
	if err != nil {
		return res, err
	}
	if p := rank.NonFinite(res); p != "" {
		return res, pricewatch.Errorf(pricewatch.EInternal, "the estimate has a number that is not finite (%s): a bug, reported", p)
	}
	return res, nil
}

// estimate serves POST /v1/estimate. It reads no ranking: an estimate
// depends on the request and the embedded catalog only, so it answers
// before the first scrape too.
func (s *Server) estimate(w http.ResponseWriter, r *http.Request) error {
	if len(r.URL.Query()) > 0 {
		return pricewatch.Errorf(pricewatch.EInvalid, "POST /v1/estimate takes a JSON estimate request in the body, no query parameters")
	}
	req, err := DecodeEstimate(http.MaxBytesReader(w, r.Body, MaxEstimateBody))
	if err != nil {
		return err
	}
	// The body may have been slow to arrive: a client that left gets no
	// work done for it.
	if err := r.Context().Err(); err != nil {
		return err
	}
	res, err := Estimate(req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
