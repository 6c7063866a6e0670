package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Set with -ldflags "-X main.version=… -X main.commit=… -X main.buildDate=…"
// by a release build; otherwise read from debug.ReadBuildInfo.
var (
	version   = ""
	commit    = ""
	buildDate = ""
)

// versionInfo is the module version, the commit (with "+dirty" for a
// modified tree) and the build date: -X values where given, else the
// build info's module version and its vcs.revision and vcs.time.
func versionInfo() (ver, rev, date string) {
	ver, rev, date = version, commit, buildDate
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return orUnknown(ver), orUnknown(rev), orUnknown(date)
	}
	if ver == "" {
		ver = bi.Main.Version
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if rev == "" {
				rev = s.Value
			}
		case "vcs.time":
			if date == "" {
				date = s.Value
			}
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && rev != "" && commit == "" {
		rev += "+dirty"
	}
	return orUnknown(ver), orUnknown(rev), orUnknown(date)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", stdout, stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	ver, rev, date := versionInfo()
	fmt.Fprintf(stdout, "pricewatch %s (commit %s, built %s, %s %s/%s)\n", ver, rev, date, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
