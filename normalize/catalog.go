// Package normalize turns what sources say into comparable offers: it maps GPU
// names to canonical cards (cards.csv ids through per-source aliases), and
// prices in any unit, per instance or per GPU, into a price per GPU-hour in
// the offer's own currency. It performs no I/O beyond reading its embedded
// data and imports neither the store nor Slack.
package normalize

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/pricewatch/pricewatch"
)

//go:embed data/cards.csv
var cardsCSV []byte

//go:embed data/aliases.csv
var aliasesCSV []byte

// Catalog is the set of known cards and the aliases sources use for them.
type Catalog struct {
	cards   map[string]pricewatch.Card
	ids     []string
	aliases map[aliasKey][]alias
}

type aliasKey struct{ source, name string }

type alias struct {
	memoryGB float64 // 0: any
	card     string
}

// DefaultCatalog returns the embedded card list and aliases, parsed once
// (a Catalog is read-only and safe to share). It panics only if the
// embedded data is broken, which the package tests rule out.
func DefaultCatalog() *Catalog { return defaultCatalog() }

var defaultCatalog = sync.OnceValue(func() *Catalog {
	c, err := LoadCatalog(bytes.NewReader(cardsCSV), bytes.NewReader(aliasesCSV))
	if err != nil {
		panic(fmt.Sprintf("normalize: embedded catalog: %v", err))
	}
	return c
})

// LoadCatalog reads cards (cards.csv layout) and aliases (source,name,memory_gb,card).
func LoadCatalog(cards, aliases io.Reader) (*Catalog, error) {
	c := &Catalog{cards: map[string]pricewatch.Card{}, aliases: map[aliasKey][]alias{}}
	rows, err := readCSV(cards)
	if err != nil {
		return nil, fmt.Errorf("read cards: %w", err)
	}
	for i, r := range rows {
		card, err := parseCard(r)
		if err != nil {
			return nil, fmt.Errorf("cards row %d: %w", i+2, err)
		}
		if _, dup := c.cards[card.ID]; dup {
			return nil, fmt.Errorf("cards row %d: duplicate id %q", i+2, card.ID)
		}
		c.cards[card.ID] = card
		c.ids = append(c.ids, card.ID)
		// Every canonical id is its own alias for every source.
		k := aliasKey{"*", Fold(card.ID)}
		c.aliases[k] = append(c.aliases[k], alias{card: card.ID})
	}
	sort.Strings(c.ids)
	arows, err := readCSV(aliases)
	if err != nil {
		return nil, fmt.Errorf("read aliases: %w", err)
	}
	for i, r := range arows {
		card := r["card"]
		if _, ok := c.cards[card]; !ok {
			return nil, fmt.Errorf("aliases row %d: unknown card %q", i+2, card)
		}
		a := alias{card: card}
		if m := r["memory_gb"]; m != "" {
			if a.memoryGB, err = strconv.ParseFloat(m, 64); err != nil {
				return nil, fmt.Errorf("aliases row %d: memory_gb: %w", i+2, err)
			}
		}
		k := aliasKey{r["source"], Fold(r["name"])}
		c.aliases[k] = append(c.aliases[k], a)
	}
	return c, nil
}

func readCSV(r io.Reader) ([]map[string]string, error) {
	// Lines starting with '#' are comments (aliases.csv documents itself).
	cr := csv.NewReader(r)
	cr.Comment = '#'
	header, err := cr.Read()
	if err != nil {
		return nil, err
	}
	var out []map[string]string
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		m := make(map[string]string, len(header))
		for i, h := range header {
			if i < len(rec) {
				m[h] = strings.TrimSpace(rec[i])
			}
		}
		out = append(out, m)
	}
}

func parseCard(r map[string]string) (pricewatch.Card, error) {
	num := func(col string) (float64, error) {
		s := r[col]
		if s == "" {
			return 0, nil
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", col, err)
		}
		return v, nil
	}
	c := pricewatch.Card{
		ID: r["canonical_id"], Vendor: r["vendor"], Model: r["model"], Variant: r["variant"],
		Architecture: r["architecture"], FormFactor: r["form_factor"],
		Interconnect: r["interconnect"], EstimatorClass: r["estimator_class"],
	}
	if c.ID == "" {
		return c, errors.New("empty canonical_id")
	}
	var err error
	for _, f := range []struct {
		dst *float64
		col string
	}{
		{&c.MemoryGB, "memory_gb"}, {&c.BandwidthGBs, "memory_bandwidth_gbs"},
		{&c.BF16TFLOPS, "bf16_dense_tflops"}, {&c.FP16TFLOPS, "fp16_dense_tflops"},
		{&c.FP8TFLOPS, "fp8_dense_tflops"}, {&c.FP4TFLOPS, "fp4_dense_tflops"}, {&c.TDPWatts, "tdp_w"}, {&c.LinkGBs, "gpu_link_gbs"},
	} {
		if *f.dst, err = num(f.col); err != nil {
			return c, err
		}
	}
	if c.MemoryGB <= 0 || c.TrainPeakTFLOPS() <= 0 {
		return c, fmt.Errorf("card %s: memory and a 16-bit tensor rate are required", c.ID)
	}
	return c, nil
}

// Card returns the card with the canonical id.
func (c *Catalog) Card(id string) (pricewatch.Card, bool) {
	card, ok := c.cards[id]
	return card, ok
}

// IDs lists every canonical card id, sorted (a copy: the catalog is shared).
func (c *Catalog) IDs() []string { return append([]string(nil), c.ids...) }

// Fold reduces a GPU name to its matching key: upper case, separators as
// single spaces, vendor and brand words dropped.
func Fold(name string) string {
	s := strings.ToUpper(name)
	s = strings.NewReplacer("-", " ", "_", " ", "/", " ", ",", " ").Replace(s)
	words := strings.Fields(s)
	out := words[:0]
	for _, w := range words {
		switch w {
		case "NVIDIA", "GEFORCE", "TESLA", "AMD", "QUADRO":
			continue
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// Resolve maps a GPU name as a source writes it (and the memory per GPU the
// source states, 0 if none) to a canonical card id. ok is false when no
// alias matches or several cards do.
func (c *Catalog) Resolve(source, name string, memoryGB float64) (card string, ok bool) {
	key := Fold(name)
	if key == "" {
		return "", false
	}
	for _, src := range []string{source, "*"} {
		cands := c.aliases[aliasKey{src, key}]
		if len(cands) == 0 {
			continue
		}
		var found []string
		for _, a := range cands {
			if a.memoryGB > 0 && (memoryGB <= 0 || math.Abs(memoryGB-a.memoryGB) > 0.15*a.memoryGB) {
				continue
			}
			if !contains(found, a.card) {
				found = append(found, a.card)
			}
		}
		if len(found) == 1 {
			return found[0], true
		}
		return "", false
	}
	return "", false
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
