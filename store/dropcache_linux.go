package store

import (
	"syscall"

	bolt "go.etcd.io/bbolt"
)

// DropPages tells the kernel this process no longer needs the pages of the
// file it has mapped (madvise MADV_DONTNEED): they stay in the page cache,
// shared and reclaimable, but leave the process's resident set. A scan of
// 100k offers touches the whole offers bucket; the daemon drops it after
// such a run. Reads fault the pages back in as they need them.
func (s *Store) DropPages() error {
	return s.view(func(tx *bolt.Tx) error {
		// A read transaction keeps bbolt from re-mapping meanwhile.
		size := int(tx.Size())
		base := s.db.Info().Data
		if base == 0 || size <= 0 {
			return nil
		}
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, base, uintptr(size), syscall.MADV_DONTNEED); e != 0 {
			return e
		}
		return nil
	})
}
