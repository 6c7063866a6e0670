package httpapi

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
