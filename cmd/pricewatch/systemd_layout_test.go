package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The shipped systemd layout (deploy/pricewatch.service): serve runs as
// its own user, whose state folder (0750) and database (0600) it owns; an
// operator in its group runs the CLI as another user and reaches the
// daemon through the record, shared 0640 with server.record_group. A user
// outside the group is refused the record. Needs root to run the two
// processes as other users: CI runs as root (it installs packages); a
// developer without root runs it with sudo.
func TestSystemdLayout_CLIOfAnotherUserReachesTheDaemon(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to start processes as other users (CI runs as root)")
	}
	const daemonID, operatorID, strangerID = 41001, 41002, 41003
	tmp := t.TempDir()
	os.Chmod(filepath.Dir(tmp), 0o755) // the other users traverse to the binary and config
	os.Chmod(tmp, 0o755)
	bin := filepath.Join(tmp, "pricewatch.test")
	copyExec(t, os.Args[0], bin)
	state := filepath.Join(tmp, "state")
	if err := os.Mkdir(state, 0o750); err != nil {
		t.Fatal(err)
	}
	os.Chown(state, daemonID, daemonID)
	os.Chmod(state, 0o750)
	db := filepath.Join(state, "pw.db")
	cfg := filepath.Join(tmp, "pw.yml")
	writeFile(t, cfg, "db: "+db+"\nlog_level: warn\nserver:\n  addr: 127.0.0.1:0\n  record_group: \"41001\"\n", 0o644)
	run := func(ctx context.Context, uid int, groups []uint32, stdout io.Writer, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, bin, "-test.run=^$")
		cmd.Env = []string{"PRICEWATCH_TEST_MAIN=" + strings.Join(args, "\x1f"), "PRICEWATCH_API_TOKEN=tok",
			"HOME=" + tmp, "XDG_STATE_HOME=" + tmp, "PATH=/usr/bin:/bin"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: groups}}
		cmd.Stdout, cmd.Stderr = stdout, stdout
		return cmd
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var daemonOut syncBuffer
	serve := run(ctx, daemonID, nil, &daemonOut, "serve", "--config", cfg, "--demo", "--db", db)
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); serve.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if fi, err := os.Stat(db + ".addr"); err == nil && fi.Mode().Perm() == 0o640 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no record 0640 within 30 s; daemon said:\n%s", daemonOut.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	var out bytes.Buffer
	if err := run(ctx, operatorID, []uint32{daemonID}, &out, "sources", "--config", cfg, "--json").Run(); err != nil ||
		!strings.Contains(out.String(), `"name":"runpod"`) {
		t.Fatalf("operator in the group: %v\n%s\ndaemon:\n%s", err, out.String(), daemonOut.String())
	}
	// A token command: the daemon proved the record's secret, the token is
	// sent and accepted (nothing is held: 409 "nothing to accept").
	out.Reset()
	err := run(ctx, operatorID, []uint32{daemonID}, &out, "sources", "accept", "runpod", "--config", cfg, "--level", "factor:x10").Run()
	if err == nil || !strings.Contains(out.String(), "nothing to accept") {
		t.Errorf("operator's accept: %v\n%s", err, out.String())
	}
	out.Reset()
	err = run(ctx, strangerID, nil, &out, "sources", "--config", cfg, "--json").Run()
	if err == nil || strings.Contains(out.String(), `"name":"runpod"`) {
		t.Errorf("a user outside the group reached the daemon: %v\n%s", err, out.String())
	}
}

func copyExec(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
