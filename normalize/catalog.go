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
	"net/url"
	"regexp"
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

//go:embed data/links.csv
var linksCSV []byte

// Links returns the GPU-to-GPU link kinds of links.csv by name.
func Links() map[string]pricewatch.Link { return linkTable().links }

// linkSet is links.csv: the links by name and each one's fallback for
// larger groups (beyond).
type linkSet struct {
	links  map[string]pricewatch.Link
	beyond map[string]string
}

var linkTable = sync.OnceValue(func() linkSet {
	m, b, err := parseLinks(bytes.NewReader(linksCSV))
	if err != nil {
		panic(fmt.Sprintf("normalize: embedded links.csv: %v", err))
	}
	return linkSet{m, b}
})

func parseLinks(r io.Reader) (map[string]pricewatch.Link, map[string]string, error) {
	rows, err := readCSV(r)
	if err != nil {
		return nil, nil, err
	}
	m := map[string]pricewatch.Link{}
	linkBeyond := map[string]string{}
	for i, r := range rows {
		l := pricewatch.Link{Name: r["link"], Kind: r["kind"], P2P: r["p2p"] == "yes", SourceURL: r["source_url"]}
		bw, err1 := strconv.ParseFloat(r["gbs_per_direction"], 64)
		lat, err2 := strconv.ParseFloat(r["latency_us"], 64)
		dom, err3 := strconv.Atoi(r["domain_gpus"])
		if l.Name == "" || err1 != nil || err2 != nil || err3 != nil || bw <= 0 || lat < 0 || dom < 1 ||
			(r["p2p"] != "yes" && r["p2p"] != "no") {
			return nil, nil, fmt.Errorf("links row %d (%q): want a name, gbs_per_direction > 0, latency_us >= 0, domain_gpus >= 1, p2p yes/no", i+2, l.Name)
		}
		l.GBsPerDirection, l.LatencyUS, l.DomainGPUs = bw, lat, dom
		m[l.Name] = l
		linkBeyond[l.Name] = r["beyond"]
	}
	for n, b := range linkBeyond {
		if _, ok := m[b]; b != "" && !ok {
			return nil, nil, fmt.Errorf("link %s: beyond %q is not a link", n, b)
		}
	}
	return m, linkBeyond, nil
}

// Catalog is the set of known cards and the aliases sources use for them.
type Catalog struct {
	cards   map[string]pricewatch.Card
	ids     []string
	aliases map[aliasKey][]alias
}

type aliasKey struct{ source, name string }

// alias is one card a name can denote. A memory-only alias (aliases.csv
// memory_gb set) applies only to observations that state a memory: "RTX
// 4090" is the 24 GB card unless 48 GB is stated.
type alias struct {
	card       string
	memoryOnly bool
}

// MemoryTolerance is how far, as a share of a card's memory, the memory an
// observation or its name states may be from the card's and still name it.
// Sources state memory in GiB or GB and as total or usable memory: "80GB"
// HBM is 80 GiB (Vast reports 79.6), "288GB" B300 is 268 GiB of which
// Verda reports 262 (-9.0%), GDDR cards with ECC on lose 1/16 (an A40
// reports 45 of 48, -6.25%), and Vultr states its 180 GB B200 as 192
// (+6.7%). 10% covers all of these, while same-name variants sit further
// apart (RTX 3080 10/12 GB, H100 80/94 GB, GH200 96/144 GB, H20 96/141 GB,
// RTX 4090 24/48 GB); a stated memory that fits no candidate, or fits two,
// leaves the name unknown.
const MemoryTolerance = 0.10

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

// LoadCatalog reads cards (cards.csv layout) and aliases
// (source,name,memory_gb,card; memory_gb, when set, makes the row apply
// only where a memory is stated and must be its card's). An alias whose
// name states a memory size or form factor its card does not have is an
// error: the guards of Resolve would never let it match.
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
		if why := Contradicts(card.ID, card); why != "" {
			return nil, fmt.Errorf("cards row %d: id %s: %s", i+2, card.ID, why)
		}
		c.cards[card.ID] = card
		c.ids = append(c.ids, card.ID)
		// Every canonical id is its own alias for every source.
		c.addAlias("*", card.ID, alias{card: card.ID})
	}
	sort.Strings(c.ids)
	arows, err := readCSV(aliases)
	if err != nil {
		return nil, fmt.Errorf("read aliases: %w", err)
	}
	for i, r := range arows {
		card, ok := c.cards[r["card"]]
		if !ok {
			return nil, fmt.Errorf("aliases row %d: unknown card %q", i+2, r["card"])
		}
		if r["source"] == "" || Fold(r["name"]) == "" {
			return nil, fmt.Errorf("aliases row %d: empty source or name", i+2)
		}
		if l := r["link"]; l != "" {
			if u, err := url.Parse(l); err != nil || u.Scheme != "https" || u.Host == "" {
				return nil, fmt.Errorf("aliases row %d: link %q is not an https URL", i+2, l)
			}
		}
		if why := Contradicts(r["name"], card); why != "" {
			return nil, fmt.Errorf("aliases row %d: %q cannot name %s: %s", i+2, r["name"], card.ID, why)
		}
		a := alias{card: card.ID}
		if m := r["memory_gb"]; m != "" {
			gb, err := strconv.ParseFloat(m, 64)
			if err != nil {
				return nil, fmt.Errorf("aliases row %d: memory_gb: %w", i+2, err)
			}
			if gb <= 0 || !MemoryAgrees(card.MemoryGB, gb) {
				return nil, fmt.Errorf("aliases row %d: memory_gb %g is not the %g GB of %s", i+2, gb, card.MemoryGB, card.ID)
			}
			a.memoryOnly = true
		}
		c.addAlias(r["source"], r["name"], a)
	}
	return c, nil
}

func (c *Catalog) addAlias(source, name string, a alias) {
	k := aliasKey{source, Fold(name)}
	for i, b := range c.aliases[k] {
		if b.card == a.card {
			// The same card twice: the row that needs no memory wins.
			c.aliases[k][i].memoryOnly = b.memoryOnly && a.memoryOnly
			return
		}
	}
	c.aliases[k] = append(c.aliases[k], a)
}

// ReadTable reads a data table in the layout of the files under data/: a
// header line, then one record per line, '#' lines comments; each record
// is a map from column to trimmed value (a column the header lacks is
// absent from every map). Other packages keep their rule tables so.
func ReadTable(r io.Reader) ([]map[string]string, error) { return readCSV(r) }

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
		if err != nil || v < 0 || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%s: not a non-negative number: %q", col, s)
		}
		return v, nil
	}
	c := pricewatch.Card{
		ID: r["canonical_id"], Vendor: r["vendor"], Model: r["model"], Variant: r["variant"],
		Architecture: r["architecture"], FormFactor: r["form_factor"],
		Interconnect: r["interconnect"], EstimatorClass: r["estimator_class"],
		MemoryUnit: r["memory_unit"],
	}
	if c.ID == "" {
		return c, errors.New("empty canonical_id")
	}
	switch c.MemoryUnit {
	case "", "GiB", "GB":
	default:
		return c, fmt.Errorf("card %s: memory_unit %q: want GiB or GB", c.ID, c.MemoryUnit)
	}
	if n := r["link"]; n != "" {
		t := linkTable()
		l, ok := t.links[n]
		if !ok {
			return c, fmt.Errorf("card %s: link %q is not in links.csv", c.ID, n)
		}
		c.Link = l
		for i, b := 0, t.beyond[n]; i < len(c.Beyond) && b != ""; i, b = i+1, t.beyond[b] {
			c.Beyond[i] = t.links[b]
		}
	}
	var err error
	for _, f := range []struct {
		dst *float64
		col string
	}{
		{&c.MemoryGB, "memory_gb"}, {&c.BandwidthGBs, "memory_bandwidth_gbs"},
		{&c.BF16TFLOPS, "bf16_dense_tflops"}, {&c.FP16TFLOPS, "fp16_dense_tflops"},
		{&c.FP8TFLOPS, "fp8_dense_tflops"}, {&c.FP4TFLOPS, "fp4_dense_tflops"}, {&c.FP32TFLOPS, "fp32_tflops"},
		{&c.TDPWatts, "tdp_w"}, {&c.LinkGBs, "gpu_link_gbs"}, {&c.ECCReserve, "ecc_reserve"},
	} {
		if *f.dst, err = num(f.col); err != nil {
			return c, err
		}
	}
	// bf16 states whether the card has bfloat16; a file without the
	// column says so through the BF16 rate alone.
	switch r["bf16"] {
	case "yes":
		c.BF16 = true
	case "no":
	case "":
		c.BF16 = c.BF16TFLOPS > 0
	default:
		return c, fmt.Errorf("card %s: bf16 %q: want yes or no", c.ID, r["bf16"])
	}
	if c.BF16 != (c.BF16TFLOPS > 0) {
		return c, fmt.Errorf("card %s: bf16 %q disagrees with bf16_dense_tflops %q", c.ID, r["bf16"], r["bf16_dense_tflops"])
	}
	switch r["fp16_slow"] {
	case "yes":
		c.FP16Slow = true
	case "no", "":
	default:
		return c, fmt.Errorf("card %s: fp16_slow %q: want yes or no", c.ID, r["fp16_slow"])
	}
	if c.ECCReserve >= 0.5 {
		return c, fmt.Errorf("card %s: ecc_reserve %g: want a share below 0.5", c.ID, c.ECCReserve)
	}
	// A card without a usable 16-bit rate (consumer Pascal, Maxwell) is
	// still a card offers name; it has an FP32 rate and no estimate.
	if c.MemoryGB <= 0 || c.TrainPeakTFLOPS() <= 0 && c.FP32TFLOPS <= 0 {
		return c, fmt.Errorf("card %s: memory and a 16-bit tensor rate (or, without one, an FP32 rate) are required", c.ID)
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

// separators become spaces in Fold (one replacer for every call: building
// it per call was 44 MB of a 100k-offer run).
var separators = strings.NewReplacer("-", " ", "_", " ", "/", " ", ",", " ")

// Fold reduces a GPU name to its matching key: upper case, separators as
// single spaces, vendor and brand words dropped.
func Fold(name string) string {
	s := strings.ToUpper(name)
	s = separators.Replace(s)
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

// Resolve maps a GPU name as a source writes it, and the memory of one
// whole GPU the source states (also for a share of a GPU; 0 if none), to a
// canonical card id. The name is looked up among the source's aliases, or
// if it has none among the generic ("*") ones. Of the cards it can name,
// only those survive whose memory agrees with the stated one (within
// MemoryTolerance); memory-only aliases need a stated memory; and a memory
// size or form factor the name itself states ("80GB", SXM, PCIe, OAM)
// always agrees, since LoadCatalog rejects aliases that contradict their
// card. ok is false when no card survives or several do: a name whose
// memory fits no card is unknown, never the nearest card.
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
			if a.memoryOnly && memoryGB <= 0 || !MemoryAgrees(c.cards[a.card].MemoryGB, memoryGB) {
				continue
			}
			found = append(found, a.card)
		}
		if len(found) == 1 {
			return found[0], true
		}
		return "", false
	}
	return "", false
}

// MemoryAgrees reports whether a stated memory (GB per GPU; 0 or less: not
// stated) can be that of a card with cardGB, within MemoryTolerance.
func MemoryAgrees(cardGB, statedGB float64) bool {
	return statedGB <= 0 || math.Abs(statedGB-cardGB) <= MemoryTolerance*cardGB
}

// Form factors a GPU name may state, by folded word.
const (
	formSXM  = "SXM"
	formPCIe = "PCIE"
	formOAM  = "OAM"
)

var formWords = map[string]string{
	"SXM": formSXM, "SXM2": formSXM, "SXM3": formSXM, "SXM4": formSXM, "SXM5": formSXM, "SXM6": formSXM,
	"HGX": formSXM, "PCIE": formPCIe, "PCI": formPCIe, "FHHL": formPCIe, "NVL": formPCIe, "OAM": formOAM,
}

// memoryWord is a memory size as names write it: "80GB", "80G", "96GIB".
var memoryWord = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)(?:GB|G|GIB)$`)

// Contradicts says why a GPU name cannot name the card ("" when it can): a
// memory size the name states ("80GB") that disagrees with the card's, or
// a form factor it states (SXM…, HGX, PCIe, FHHL, NVL, OAM) other than the
// card's. NVL is H100 NVL's and H200 NVL's PCIe form; rack names such as
// "NVL72" are not form words.
func Contradicts(name string, card pricewatch.Card) string {
	ff := strings.ToUpper(card.FormFactor)
	for _, w := range strings.Fields(Fold(name)) {
		if m := memoryWord.FindStringSubmatch(w); m != nil {
			gb, _ := strconv.ParseFloat(m[1], 64)
			if !MemoryAgrees(card.MemoryGB, gb) {
				return fmt.Sprintf("name states %g GB, card has %g GB", gb, card.MemoryGB)
			}
		}
		if f, ok := formWords[w]; ok && !strings.HasPrefix(ff, f) {
			return fmt.Sprintf("name states %s, card is %s", w, card.FormFactor)
		}
	}
	return ""
}
