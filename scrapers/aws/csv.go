package aws

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pricewatch/pricewatch"
)

// CSV columns, by their names in the real header (91 columns in the
// 2025-09-12 file). Columns not listed are ignored, so added columns and a
// changed order do not matter; a missing required one is a layout change.
const (
	colTermType      = "TermType"
	colUnit          = "Unit"
	colPrice         = "PricePerUnit"
	colCurrency      = "Currency"
	colLease         = "LeaseContractLength"
	colPurchase      = "PurchaseOption"
	colClass         = "OfferingClass"
	colProductFamily = "Product Family"
	colInstanceType  = "Instance Type"
	colTenancy       = "Tenancy"
	colOS            = "Operating System"
	colPreInstalled  = "Pre Installed S/W"
	colCapacity      = "CapacityStatus"
	colMarket        = "MarketOption"
	colLocationType  = "Location Type"
	colOperation     = "operation"
	colGPU           = "GPU"
	colRegionCode    = "Region Code"
	colVCPU          = "vCPU"
	colMemory        = "Memory"
	colStorage       = "Storage"
)

var (
	requiredColumns = []string{colTermType, colUnit, colPrice, colCurrency, colProductFamily,
		colInstanceType, colTenancy, colOS, colGPU}
	optionalColumns = []string{colLease, colPurchase, colClass, colPreInstalled, colCapacity, colMarket,
		colLocationType, colOperation, colRegionCode, colVCPU, colMemory, colStorage}
)

// maxPreamble bounds the metadata lines before the header (5 in real files).
const maxPreamble = 20

// ParseCSV streams a region's CSV offer file: 5 metadata lines
// ("FormatVersion", "Disclaimer", "Publication Date", "Version",
// "OfferCode"), the header, then one row per SKU, term and price dimension.
// It holds one row at a time and calls emit for every kept row. A row with
// fewer fields than the header, a broken quote or a read error fails the
// parse with the line it happened on.
func ParseCSV(r io.Reader, f Filter, emit func(pricewatch.Observation) error) (Stats, error) {
	m := newMatcher(f)
	br := bufio.NewReaderSize(r, 256<<10)
	if c, err := firstByte(br); err == nil && c == '<' {
		head, _ := br.Peek(160)
		return m.stats, fmt.Errorf("expected an AWS price list CSV, got markup: %s", oneLine(head))
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1 // the preamble lines have 2 fields
	cr.ReuseRecord = true
	var header []string
	for i := 0; header == nil; i++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			if i == 0 {
				return m.stats, errors.New("empty CSV offer file")
			}
			return m.stats, fmt.Errorf("CSV offer file ends after %d metadata lines, before the header", i)
		}
		if err != nil {
			return m.stats, fmt.Errorf("CSV preamble: %w", err)
		}
		switch {
		case i == 0 && (len(rec) == 0 || strings.TrimPrefix(rec[0], "\ufeff") != "FormatVersion"):
			return m.stats, fmt.Errorf("not an AWS price list CSV: line 1 starts %q, want \"FormatVersion\"", first(rec))
		case rec[0] == "SKU":
			header = append([]string(nil), rec...)
		case rec[0] == "OfferCode" && len(rec) > 1 && rec[1] != "AmazonEC2":
			return m.stats, fmt.Errorf("offer file is for %q, not AmazonEC2", rec[1])
		case rec[0] == "Version" && len(rec) > 1:
			m.stats.Version = rec[1]
		case rec[0] == "Publication Date" && len(rec) > 1:
			m.stats.Published = rec[1]
		case i >= maxPreamble:
			return m.stats, fmt.Errorf("no CSV header (a line starting \"SKU\") within the first %d lines", maxPreamble)
		}
	}
	col := map[string]int{}
	for i, h := range header {
		if _, dup := col[h]; !dup {
			col[h] = i
		}
	}
	idx := map[string]int{}
	for _, name := range requiredColumns {
		i, ok := col[name]
		if !ok {
			return m.stats, fmt.Errorf("CSV header lacks column %q (layout change?)", name)
		}
		idx[name] = i
	}
	for _, name := range optionalColumns {
		if i, ok := col[name]; ok {
			idx[name] = i
		} else {
			idx[name] = -1
		}
	}
	iType := idx[colInstanceType]
	lastLine, _ := cr.FieldPos(0)
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return m.stats, fmt.Errorf("CSV (file cut short or malformed?): %w", err)
			}
			return m.stats, fmt.Errorf("reading CSV after line %d: %w", lastLine, err)
		}
		m.stats.Rows++
		lastLine, _ = cr.FieldPos(0)
		if len(rec) != len(header) {
			return m.stats, fmt.Errorf("CSV line %d has %d fields, the header %d (file cut short?)", lastLine, len(rec), len(header))
		}
		if !m.familyOK(rec[iType]) {
			continue // the bulk of the file: not a GPU family
		}
		get := func(name string) string {
			if i := idx[name]; i >= 0 {
				return rec[i]
			}
			return ""
		}
		md, ok := mode(get(colTermType), get(colLease), get(colPurchase), get(colClass))
		if !ok || get(colUnit) != "Hrs" {
			continue // upfront "Quantity" rows, other reservations
		}
		p, ok := price(get(colPrice))
		cur := get(colCurrency)
		if !ok || cur == "" {
			continue
		}
		gpus, ok := m.productOK(&product{
			instanceType: rec[iType], productFamily: get(colProductFamily), tenancy: get(colTenancy),
			os: get(colOS), preInstalledSw: get(colPreInstalled), capacityStatus: get(colCapacity),
			marketOption: get(colMarket), locationType: get(colLocationType), operation: get(colOperation),
			gpu: get(colGPU), regionCode: get(colRegionCode),
		})
		if !ok {
			continue
		}
		o, ok := m.observation(rec[iType], gpus, parseMachine(get(colVCPU), get(colMemory), get(colStorage)), md, p, cur)
		if !ok {
			continue
		}
		if err := emit(o); err != nil {
			return m.stats, err
		}
	}
	if m.stats.Rows == 0 {
		return m.stats, errors.New("CSV offer file has a header but no rows")
	}
	return m.stats, nil
}

func first(rec []string) string {
	if len(rec) == 0 {
		return ""
	}
	s := rec[0]
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

func oneLine(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
