package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"

	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/pipeline"
)

func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("export", stdout, stderr)
	var c common
	c.register(fs, false)
	format := fs.String("format", "csv", "csv (gpuhunt's v2 catalog layout) or json (the same rows as objects)")
	provider := fs.String("provider", "", "only this provider's offers (gpuhunt names a catalog file after its provider)")
	out := fs.String("out", "", "write one file per provider into this folder (<provider>.csv or .json) instead of standard output")
	addr := fs.String("addr", "", "when a running daemon holds the database, ask it at this address")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("export takes no arguments, got %q", fs.Args())}
	}
	if *format != "csv" && *format != "json" {
		return usageError{fmt.Sprintf("--format must be csv or json, got %q", *format)}
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	var rows []httpapi.ExportRow
	err = readOrAsk(ctx, cfg, *addr, stderr, func(p *pipeline.Pipeline) error {
		snap := p.View().Snapshot
		if err := httpapi.CheckExportProvider(snap, *provider); err != nil {
			return usageError{err.Error()}
		}
		rows = httpapi.ExportRows(snap, *provider)
		return nil
	}, func(addr string) error {
		rows, err = fetchExport(ctx, addr, *provider)
		return err
	})
	if err != nil {
		return err
	}
	if *out == "" {
		return writeExport(stdout, rows, *format)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	byProvider := map[string][]httpapi.ExportRow{}
	var order []string
	for _, r := range rows {
		if _, ok := byProvider[r.Provider]; !ok {
			order = append(order, r.Provider)
		}
		byProvider[r.Provider] = append(byProvider[r.Provider], r)
	}
	for _, p := range order {
		var b bytes.Buffer
		if err := writeExport(&b, byProvider[p], *format); err != nil {
			return err
		}
		file := filepath.Join(*out, safeName(p)+"."+*format)
		if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %d offers\n", file, len(byProvider[p]))
	}
	if len(order) == 0 {
		fmt.Fprintln(stderr, "pricewatch: no exportable offer (scrape first)")
	}
	return nil
}

func writeExport(w io.Writer, rows []httpapi.ExportRow, format string) error {
	if format == "json" {
		if rows == nil {
			rows = []httpapi.ExportRow{}
		}
		b, err := json.MarshalIndent(rows, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	}
	return httpapi.WriteExportCSV(w, rows)
}

// fetchExport asks the daemon for the rows as JSON (GET /v1/export.json),
// which carries every value as it is, and the rows are then written here as
// they are offline. Reading the daemon's CSV back would not do: the CSV's
// neutralising quotes cannot be told from scraped text, and encoding/csv
// reads a quoted CR LF as LF.
func fetchExport(ctx context.Context, addr, provider string) ([]httpapi.ExportRow, error) {
	path := "/v1/export.json"
	if provider != "" {
		path += "?" + url.Values{"provider": {provider}}.Encode()
	}
	var rows []httpapi.ExportRow
	if err := daemonJSON(ctx, http.MethodGet, addr, path, "", nil, &rows); err != nil {
		return nil, err
	}
	return rows, nil
}

func safeName(s string) string {
	b := []rune(s)
	for i, r := range b {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}
