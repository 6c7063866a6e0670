package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/pricewatch/pricewatch/store"
)

// runCompact rolls the raw history older than the raw window into daily
// rows and rewrites the database file so that the space returns to the
// disk (a bbolt file never shrinks by itself). It needs the database to
// itself: stop the daemon first.
func runCompact(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("compact", stdout, stderr)
	var c common
	c.register(fs, false)
	window := fs.Duration("raw-window", 0, "keep every change this long (default: config history.raw_window, 2160h = 90 days)")
	rewrite := fs.Bool("rewrite", true, "rewrite the file afterwards, returning freed space to the disk")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("compact takes no arguments, got %q", fs.Args())}
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	w := cfg.History.RawWindow
	if *window != 0 {
		w = *window
	}
	if w < store.MinRawWindow {
		return usageError{fmt.Sprintf("--raw-window must be at least %s", store.MinRawWindow)}
	}
	// Opening read-write would create a missing file: a typo in --db is
	// refused, not compacted into a new empty database.
	if _, err := os.Stat(cfg.DB); errors.Is(err, os.ErrNotExist) {
		return noDatabase(cfg.DB)
	}
	st, err := openStore(cfg.DB, false)
	if err != nil {
		return err
	}
	start := time.Now()
	stats, err := st.Compact(time.Now().UTC(), w)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "history before %s: %d raw rows of %d offers rolled into %d daily rows; %d change-index entries pruned (%.1fs)\n",
		stats.Cutoff.Format("2006-01-02"), stats.RawRows, stats.Offers, stats.Days, stats.IndexPruned, time.Since(start).Seconds())
	if !*rewrite {
		return nil
	}
	before, after, err := store.Rewrite(cfg.DB)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s → %s\n", cfg.DB, humanBytes(before), humanBytes(after))
	return nil
}

func init() {
	helpText["compact"] = [3]string{"compact [--raw-window 2160h] [--rewrite=false] [--config FILE] [--db FILE | --demo]",
		"Roll every change older than the raw window into one open/min/max/close row per offer and day, then rewrite the database file to return the space (stop the daemon first: it compacts daily by itself, without the rewrite).",
		"pricewatch compact --db pricewatch.db"}
}
