package main

import (
	"cmp"
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
// modified tree) and when: -X values where given, else the build info's
// module version and its vcs.revision and vcs.time. Go records no build
// time, only the commit's: without -X main.buildDate the date is labelled
// "committed", never "built".
func versionInfo() (ver, rev, when string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return versionOf(bi, version, commit, buildDate)
}

func versionOf(bi *debug.BuildInfo, xVersion, xCommit, xBuildDate string) (ver, rev, when string) {
	ver, rev = xVersion, xCommit
	if xBuildDate != "" {
		when = "built " + xBuildDate
	}
	if bi == nil {
		return orUnknown(ver), orUnknown(rev), cmp.Or(when, "build date unknown")
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
			if when == "" {
				when = "committed " + s.Value
			}
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && rev != "" && xCommit == "" {
		rev += "+dirty"
	}
	return orUnknown(ver), orUnknown(rev), cmp.Or(when, "build date unknown")
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
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("version takes no arguments, got %q", fs.Args())}
	}
	ver, rev, when := versionInfo()
	fmt.Fprintf(stdout, "pricewatch %s (commit %s, %s, %s %s/%s)\n", ver, rev, when, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
