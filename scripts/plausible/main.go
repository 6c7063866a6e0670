// Command plausible builds pipeline/data/plausible.csv, the per-card
// plausible price ranges the gate judges a first run by where the market
// has fewer than three sellers of a card: for every card, the lowest and
// highest on-demand price per GPU-hour among the real catalog rows of
// SkyPilot's fetchers (../shared/reference/catalogs, whose provenance
// ../shared/reference/SOURCES.md gives), GPU names mapped by normalize's
// aliases. Run from the repository root:
//
//	go run ./scripts/plausible ../shared/reference/catalogs > pipeline/data/plausible.csv
package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: plausible CATALOG_DIR")
		os.Exit(2)
	}
	files, _ := filepath.Glob(filepath.Join(os.Args[1], "skypilot-*.csv"))
	type span struct {
		lo, hi float64
		n      int
		files  map[string]bool
	}
	by := map[string]*span{}
	cat := normalize.DefaultCatalog()
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			panic(err)
		}
		rows, err := csv.NewReader(fh).ReadAll()
		fh.Close()
		if err != nil || len(rows) < 2 {
			continue
		}
		col := map[string]int{}
		for i, h := range rows[0] {
			col[h] = i
		}
		for _, r := range rows[1:] {
			get := func(k string) string {
				if i, ok := col[k]; ok && i < len(r) {
					return r[i]
				}
				return ""
			}
			name, cnt, price := get("AcceleratorName"), get("AcceleratorCount"), get("Price")
			n, err1 := strconv.ParseFloat(cnt, 64)
			p, err2 := strconv.ParseFloat(price, 64)
			if name == "" || err1 != nil || err2 != nil || !(n >= 1) || !(p > 0) {
				continue
			}
			obs := pricewatch.Observation{Source: "plausible", OfferID: get("InstanceType"), GPUName: name, GPUCount: int(n),
				Price: p, Currency: "USD", Unit: pricewatch.PerHour, Mode: pricewatch.ModeOnDemand}
			nr := cat.Normalize([]pricewatch.Observation{obs}, time.Now())
			if len(nr.Offers) != 1 || nr.Offers[0].Card == "" {
				continue
			}
			card, per := nr.Offers[0].Card, p/n
			s := by[card]
			if s == nil {
				s = &span{lo: math.Inf(1), files: map[string]bool{}}
				by[card] = s
			}
			s.lo, s.hi, s.n = math.Min(s.lo, per), math.Max(s.hi, per), s.n+1
			s.files[strings.TrimPrefix(filepath.Base(f), "skypilot-")] = true
		}
	}
	cards := make([]string, 0, len(by))
	for c := range by {
		cards = append(cards, c)
	}
	sort.Strings(cards)
	w := csv.NewWriter(os.Stdout)
	fmt.Println("# Plausible on-demand prices per GPU-hour (USD) per card: the lowest and highest among the real")
	fmt.Println("# catalog rows of SkyPilot's fetchers (../shared/reference/catalogs; provenance in that folder's")
	fmt.Println("# SOURCES.md: skypilot-org/skypilot-catalog catalogs/v8/<cloud>/vms.csv at the commits it names).")
	fmt.Println("# Built by scripts/plausible; the gate judges a first run by it where the market has fewer than")
	fmt.Println("# three sellers of a card (pipeline/gate_reference.go). rows: catalog rows the range rests on.")
	w.Write([]string{"card", "min_usd", "max_usd", "rows", "from"})
	for _, c := range cards {
		s := by[c]
		var fs []string
		for f := range s.files {
			fs = append(fs, f)
		}
		sort.Strings(fs)
		w.Write([]string{c, strconv.FormatFloat(s.lo, 'g', 4, 64), strconv.FormatFloat(s.hi, 'g', 4, 64), strconv.Itoa(s.n), strings.Join(fs, " ")})
	}
	w.Flush()
}
