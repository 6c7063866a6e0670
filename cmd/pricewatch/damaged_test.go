package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets a test run the real main in a child process (exit status
// and stderr as a user sees them).
func TestMain(m *testing.M) {
	if args := os.Getenv("PRICEWATCH_TEST_MAIN"); args != "" {
		os.Args = append([]string{"pricewatch"}, strings.Split(args, "\x1f")...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runMain(t *testing.T, args ...string) (code int, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PRICEWATCH_TEST_MAIN="+strings.Join(args, "\x1f"))
	var eb strings.Builder
	cmd.Stderr = &eb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), eb.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, eb.String()
}

// best and serve on a truncated database exit with status 3 and one line
// naming the file and the way out. Before the meta-page check both died
// of SIGBUS: status 2 and a Go stack dump ("fatal error: fault",
// "goroutine 1 … [running]").
func TestMain_DamagedDatabaseExitsCleanly(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "pw.db")
	if code, errOut := runMain(t, "scrape", "--demo", "--db", db); code != 0 {
		t.Fatalf("scrape --demo: %d %s", code, errOut)
	}
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(db, fi.Size()/3); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"best", "--db", db, "--workload", "lora-7b"},
		{"serve", "--db", db, "--addr", "127.0.0.1:0"},
	} {
		code, errOut := runMain(t, args...)
		if code != exitDamaged || strings.Contains(errOut, "goroutine") || !strings.Contains(errOut, db+": database file is damaged") ||
			!strings.Contains(errOut, "compact --rewrite") {
			t.Errorf("%s: exit %d, stderr:\n%s", args[0], code, errOut)
		}
	}
}
