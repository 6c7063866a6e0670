package httpapi

import "time"

// SetNow moves the clock of the history endpoints and the dashboard; the
// returned func restores it.
func SetNow(f func() time.Time) (restore func()) {
	old := now
	now = f
	return func() { now = old }
}
