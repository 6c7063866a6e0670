// Package testfile reads the test data files several packages share.
package testfile

import (
	"compress/gzip"
	"io"
	"os"
	"testing"
)

// Gunzip returns the contents of a gzipped file, failing the test if it
// cannot.
func Gunzip(tb testing.TB, path string) []byte {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
