//go:build !linux

package store

// DropPages does nothing where madvise is not used.
func (s *Store) DropPages() error { return nil }
