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
	"time"

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
		rows = httpapi.ExportRows(p.View().Snapshot, *provider)
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

// fetchExport reads the daemon's /v1/export.csv back into rows.
func fetchExport(ctx context.Context, addr, provider string) ([]httpapi.ExportRow, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	u := "http://" + addr + "/v1/export.csv"
	if provider != "" {
		u += "?" + url.Values{"provider": {provider}}.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		var e struct{ Error string }
		_ = json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&e)
		return nil, fmt.Errorf("HTTP %d: %s", res.StatusCode, e.Error)
	}
	return httpapi.ReadExportCSV(capped(res.Body, maxExportAnswer))
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
