package httpapi

import (
	"net/http"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/profileimport"
)

// ETooLarge is the code of a request whose body is over its route's limit.
const ETooLarge = "too_large"

// MaxSmallBody caps the bodies of the small JSON writes (a profile, a
// silence) and of every route that takes no body at all.
const MaxSmallBody = 64 << 10

// bodyLimits is the largest body each route reads; a route not listed
// reads at most MaxSmallBody.
var bodyLimits = map[string]int64{
	"/v1/plan":            MaxEstimateBody, // a job spec may carry a config.json of up to 1 MiB
	"/v1/estimate":        MaxEstimateBody,
	"/v1/profiles/import": profileimport.MaxInputBytes,
	"/slack/command":      MaxSlashBody,
}

func bodyLimit(pattern string) int64 {
	if n, ok := bodyLimits[pattern]; ok {
		return n
	}
	return MaxSmallBody
}

// limitBody refuses a declared body over the route's limit before anything
// reads it (a 1 GB Content-Length would otherwise hold the handler until
// read_timeout), and bounds an undeclared (chunked) one, whose excess then
// fails the handler's read with *http.MaxBytesError. It reports whether
// the request may go on.
func limitBody(w http.ResponseWriter, r *http.Request, limit int64) bool {
	if r.ContentLength > limit {
		// The unread body is not drained: net/http closes the connection
		// after the answer.
		w.Header().Set("Connection", "close")
		writeError(w, pricewatch.Errorf(ETooLarge, "body: %d bytes declared, over the limit of %d bytes for %s", r.ContentLength, limit, r.URL.Path))
		return false
	}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	return true
}
