package store

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A read of a mapped page the file no longer has (cut short under a
// running process) is a SIGBUS; guard turns it into a DamagedError
// through debug.SetPanicOnFault. Without it the runtime ends the process
// ("unexpected fault address … fatal error: fault").
func TestGuard_FaultOnMappedPageIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.db")
	if err := os.WriteFile(path, make([]byte, 2*4096), 0o600); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	b, err := syscall.Mmap(int(fh.Fd()), 0, 2*4096, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(b)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	var got byte
	err = guard(path, func() error { got = b[4096]; return nil })
	var de *DamagedError
	if !errors.As(err, &de) || de.Path != path || !errors.Is(err, ErrDamaged) {
		t.Fatalf("err = %v (read %d), want a DamagedError naming %s", err, got, path)
	}
}
