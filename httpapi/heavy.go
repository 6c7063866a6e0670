package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/pricewatch/pricewatch"
)

// HeavyLimit is how many heavy requests (price history, the dashboard's
// best page with its chart, the exports) run at once. They read the store
// and price many offers, need no token, and each holds its answer in
// memory: without a bound, 16 concurrent /v1/history requests took the
// heap past 2 GB and kept the server busy after their clients had left.
// Up to HeavyQueue more wait for a slot, at most heavyWait (or until their
// client leaves); beyond that a request gets 503 with Retry-After at once.
const HeavyLimit = 4

// HeavyQueue is how many heavy requests may wait for a slot.
const HeavyQueue = 16

// heavyWait is the longest a heavy request waits for a slot.
var heavyWait = 5 * time.Second

// heavyRetryAfter is the Retry-After of a request refused for the limit,
// in seconds.
const heavyRetryAfter = 2

// EBusy is the code of a request refused because HeavyLimit heavy
// requests are running (503 with Retry-After).
const EBusy = "busy"

// heavy runs h under the heavy-request limit.
func (s *Server) heavy(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		busy := func() error {
			w.Header().Set("Retry-After", strconv.Itoa(heavyRetryAfter))
			return pricewatch.Errorf(EBusy, "busy: %d history, dashboard or export requests are running and %d waiting; retry after %d s", HeavyLimit, HeavyQueue, heavyRetryAfter)
		}
		select {
		case s.heavySlots <- struct{}{}:
		default:
			select {
			case s.heavyQueue <- struct{}{}:
			default:
				return busy()
			}
			t := time.NewTimer(heavyWait)
			select {
			case s.heavySlots <- struct{}{}:
				t.Stop()
				<-s.heavyQueue
			case <-t.C:
				<-s.heavyQueue
				return busy()
			case <-r.Context().Done():
				t.Stop()
				<-s.heavyQueue
				return r.Context().Err()
			}
		}
		defer func() {
			<-s.heavySlots
			s.afterHeavy()
		}()
		return h(w, r)
	}
}

// giveBackAfter is how long the server waits after the last heavy request
// ends before it hands the memory those requests used back to the system:
// a burst of requests pays for it once, after the burst.
var giveBackAfter = 2 * time.Second

// afterHeavy schedules the give-back (debug.FreeOSMemory: a collection
// and a scavenge) once no heavy request runs. Without it the heap a
// history or dashboard request grew stayed mapped: idle RSS 194 MB
// against 82 MB before the request.
func (s *Server) afterHeavy() {
	s.idleMu.Lock()
	defer s.idleMu.Unlock()
	if s.idleTimer != nil {
		s.idleTimer.Stop()
	}
	s.idleTimer = time.AfterFunc(giveBackAfter, func() {
		if len(s.heavySlots) == 0 {
			s.giveBack()
		}
	})
}

// cancelled reports an error that is the request's context ending (the
// client left or the deadline passed): the work stopped, there is nobody
// to answer and nothing to log as a failure.
func cancelled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
