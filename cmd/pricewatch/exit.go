package main

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/store"
)

// The exit statuses, the same for every command (docs/cli.md lists them;
// TestExitCodes_DocumentedTable keeps that page in step with exitTable).
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
	// exitDamaged: the unit's RestartPreventExitStatus stops systemd
	// restarting into the same file.
	exitDamaged = 3
)

// exitRule is one row of the exit table: the errors it takes and what it
// says of them.
type exitRule struct {
	code    int
	meaning string
	match   func(error) bool
}

// exitTable is the one table from a command's error to its exit status,
// in the order the rules are tried: damaged data first (a damaged file
// named in a usage message is still damaged), then usage and input, and
// every other failure is a runtime error.
var exitTable = []exitRule{
	{exitDamaged, "damaged or unsupported data: a database file cut short or unreadable, an empty file where the database should be, " +
		"a schema this build does not read, a file that is not a pricewatch database", isDamaged},
	{exitUsage, "usage or input error: an unknown command, flag or argument, a bad flag value, an unknown workload, card, provider, " +
		"region or source, a bad config, spec or model file, no database at the path given (the message says how to start)", isInput},
	{exitRuntime, "runtime error: a daemon that cannot be reached or refuses, the database held by another process, " +
		"a failed write, no exchange rates yet, any other failure", func(error) bool { return true }},
}

// exitCode is the exit status of a command's error (exitOK for nil).
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	for _, r := range exitTable {
		if r.match(err) {
			return r.code
		}
	}
	return exitRuntime
}

func isDamaged(err error) bool {
	return errors.Is(err, store.ErrDamaged) || errors.Is(err, store.ErrEmptyFile) || errors.Is(err, store.ErrUnsupported)
}

// isInput: a usage error, an input error, or an error the API answers 400
// or 404 to (pricewatch.EInvalid, ENotFound: an unknown workload, a silence
// that is not there), so a command exits alike with and without a daemon.
func isInput(err error) bool {
	var ue usageError
	var ie *inputError
	if errors.As(err, &ue) || errors.As(err, &ie) || errors.Is(err, store.ErrNotFound) {
		return true
	}
	var pe *pricewatch.Error
	if errors.As(err, &pe) {
		return pe.Code == pricewatch.EInvalid || pe.Code == pricewatch.ENotFound
	}
	return false
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// inputError marks an error of what the user gave (a config, spec or model
// file, a database path) as an input error, keeping its message and chain.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// asInput marks err (unless nil) as an input error.
func asInput(err error) error {
	if err == nil {
		return nil
	}
	return &inputError{err}
}

// inputf is a new input error.
func inputf(format string, args ...any) error { return &inputError{fmt.Errorf(format, args...)} }

// isNotExist reports a missing file.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
