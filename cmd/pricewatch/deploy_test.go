package main

import (
	"os"
	"strings"
	"testing"

	"github.com/pricewatch/pricewatch/config"
)

// The deployment's config stays valid and its unit keeps the hardening the
// README promises (.ci/run also runs systemd-analyze verify on it).
func TestDeploy_ConfigAndUnit(t *testing.T) {
	cfg, err := config.Load("../../deploy/pricewatch.example.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.DB != "/var/lib/pricewatch/pricewatch.db" || cfg.Server.Addr != "127.0.0.1:8080" {
		t.Errorf("deploy config: db %q addr %q", cfg.DB, cfg.Server.Addr)
	}
	b, err := os.ReadFile("../../deploy/pricewatch.service")
	if err != nil {
		t.Fatal(err)
	}
	unit := string(b)
	// A fixed user whose group the operators join (issue 31): the record is
	// shared 0640 with server.record_group; a DynamicUser's state would sit
	// under /var/lib/private, out of their reach.
	if cfg.Server.RecordGroup != "pricewatch" || strings.Contains(unit, "\nDynamicUser=yes\n") {
		t.Errorf("record group %q; the unit must not use DynamicUser", cfg.Server.RecordGroup)
	}
	for _, want := range []string{"\nUser=pricewatch\n", "\nGroup=pricewatch\n", "\nStateDirectoryMode=0750\n", "\nStateDirectory=pricewatch\n", "\nProtectSystem=strict\n",
		"\nNoNewPrivileges=yes\n", "\nRestart=on-failure\n", "\nRestartPreventExitStatus=2 3\n", "\nExecStart=/usr/local/bin/pricewatch serve --config /etc/pricewatch/pricewatch.yml\n"} {
		if !strings.Contains(unit, want) {
			t.Errorf("pricewatch.service lacks %q", strings.TrimSpace(want))
		}
	}
	for _, line := range strings.Split(unit, "\n") {
		if strings.HasPrefix(line, "ExecStart=") && (strings.Contains(line, "TOKEN") || strings.Contains(line, "token")) {
			t.Errorf("a secret on the command line: %s", line)
		}
	}
}
