package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/pricewatch/pricewatch"
)

// HeavyLimit is how many heavy requests (price history, the dashboard's
// best page with its chart, the exports) run at once. They read the store
// and price many offers, need no token, and each holds its answer in
// memory: without a bound, 16 concurrent /v1/history requests took the
// heap past 2 GB and kept the server busy after their clients had left.
// Beyond the limit a request gets 503 with Retry-After at once rather than
// queueing behind the others.
const HeavyLimit = 4

// heavyRetryAfter is the Retry-After of a request refused for the limit,
// in seconds.
const heavyRetryAfter = 2

// EBusy is the code of a request refused because HeavyLimit heavy
// requests are running (503 with Retry-After).
const EBusy = "busy"

// heavy runs h under the heavy-request limit.
func (s *Server) heavy(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		select {
		case s.heavySlots <- struct{}{}:
		default:
			w.Header().Set("Retry-After", strconv.Itoa(heavyRetryAfter))
			return pricewatch.Errorf(EBusy, "busy: %d history, dashboard or export requests are running; retry after %d s", HeavyLimit, heavyRetryAfter)
		}
		defer func() { <-s.heavySlots }()
		return h(w, r)
	}
}

// cancelled reports an error that is the request's context ending (the
// client left or the deadline passed): the work stopped, there is nobody
// to answer and nothing to log as a failure.
func cancelled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
