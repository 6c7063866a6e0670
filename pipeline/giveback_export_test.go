package pipeline

// SetBigBody sets the response bytes after which a run's memory is handed
// back; the returned func restores it.
func SetBigBody(n int64) (restore func()) {
	old := bigBody
	bigBody = n
	return func() { bigBody = old }
}
