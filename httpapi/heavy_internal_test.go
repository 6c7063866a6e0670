package httpapi

import (
	"sync/atomic"
	"time"
)

// HoldHeavy takes n of the server's heavy-request slots, as n running
// history, dashboard or export requests would; release gives them back.
func (s *Server) HoldHeavy(n int) (release func()) {
	for range n {
		s.heavySlots <- struct{}{}
	}
	return func() {
		for range n {
			<-s.heavySlots
		}
	}
}

// CountGiveBacks replaces the server's give-back with a counter and
// shortens its delay to d; it returns the count so far.
func (s *Server) CountGiveBacks(d time.Duration) func() int64 {
	var n atomic.Int64
	s.giveBack = func() { n.Add(1) }
	giveBackAfter = d
	return n.Load
}

// HoldQueue takes n of the places of requests waiting for a heavy slot.
func (s *Server) HoldQueue(n int) (release func()) {
	for range n {
		s.heavyQueue <- struct{}{}
	}
	return func() {
		for range n {
			<-s.heavyQueue
		}
	}
}

// SetHeavyWait sets how long a heavy request waits for a slot; the
// returned func restores it.
func SetHeavyWait(d time.Duration) (restore func()) {
	old := heavyWait
	heavyWait = d
	return func() { heavyWait = old }
}
