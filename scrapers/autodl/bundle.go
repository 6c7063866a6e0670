package autodl

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// The token-less mode reads the list-price table that AutoDL's home page
// bundle carries: JavaScript object literals, one per GPU model, with the
// list price for normal users in yuan per GPU-hour under `originalPrice`
// (next to a name and usually the memory). The exact shape of the bundle
// was never captured, so the scan below is deliberately tolerant: it finds
// every `originalPrice:` key, takes the object literal around it and reads
// that object's top-level name, memory and price, whatever the surrounding
// code (an array literal, JSON.parse('…'), a module's data section) is.

// nameKeys are the keys read as the GPU name, in order of preference.
var nameKeys = []string{"gpuName", "gpu_name", "gpuType", "gpu_type", "gpuModel", "cardName", "name", "title", "label", "model", "gpu", "type"}

// memoryKeys are the keys read as the memory per GPU.
var memoryKeys = []string{"gpuMemory", "gpu_memory", "memory", "vram", "videoMemory", "memorySize", "mem"}

// MaxListPrice is the highest believable list price in yuan per GPU-hour;
// a larger originalPrice means the table changed its unit (li, fen) and
// fails the run rather than being ranked 1000 times too dear.
const MaxListPrice = 1000

var (
	firstNum = regexp.MustCompile(`[0-9]+(?:\.[0-9]+)?|\.[0-9]+`)
)

const maxObject = 4096 // bytes scanned around one originalPrice key

// ListEntry is one row of the list-price table.
type ListEntry struct {
	Name     string
	MemoryGB float64
	Price    float64 // yuan per GPU-hour
}

// ParseBundle extracts the list-price table from a JavaScript bundle and
// returns one on-demand observation per GPU model (OfferID "list/<name>").
func ParseBundle(js []byte, url string) ([]pricewatch.Observation, error) {
	entries, err := ListEntries(js)
	if err != nil {
		return nil, err
	}
	out := make([]pricewatch.Observation, 0, len(entries))
	for _, e := range entries {
		// A list price is per GPU; with no machine behind it, the one
		// rental it surely prices is a single GPU.
		out = append(out, pricewatch.Observation{
			Source: "autodl", OfferID: "list/" + e.Name, GPUName: e.Name, GPUMemoryGB: e.MemoryGB,
			Price: e.Price, Currency: "CNY", Unit: pricewatch.PerHour, PerGPU: true,
			Mode: pricewatch.ModeOnDemand, URL: url,
			RentUnit: pricewatch.RentPerGPU, GPUCounts: []int{1},
		})
	}
	return out, nil
}

// ListEntries scans a bundle for {name, originalPrice} object literals.
// The first entry of a name wins (a bundle may repeat its table).
func ListEntries(js []byte) ([]ListEntry, error) {
	src := string(js)
	if t := bytes.TrimSpace(js); len(t) > 0 && t[0] == '<' && !bytes.Contains(js, []byte("originalPrice")) {
		return nil, fmt.Errorf("expected JavaScript, got markup: %s", snippet(t))
	}
	var out []ListEntry
	seen := map[string]bool{}
	for _, pos := range keyPositions(src, "originalPrice") {
		e, ok := entryAt(src, pos)
		if !ok || seen[e.Name] {
			continue
		}
		if e.Price >= MaxListPrice {
			return nil, fmt.Errorf("originalPrice %g for %q is not a price in yuan per GPU-hour (unit changed?)", e.Price, e.Name)
		}
		seen[e.Name] = true
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no {name, originalPrice} entries in the script", scrapers.ErrNothingParsed)
	}
	return out, nil
}

// keyPositions finds where name is used as an object key: `name:`,
// `"name":`, `'name':` or `\"name\":` (JSON in a string), not preceded by
// an identifier character or a '.' (t.originalPrice is a property access).
func keyPositions(src, name string) []int {
	var out []int
	for i := 0; ; {
		j := strings.Index(src[i:], name)
		if j < 0 {
			return out
		}
		at := i + j
		i = at + len(name)
		if at > 0 {
			c := src[at-1]
			if c == '.' || c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				continue
			}
		}
		k := i
		if k < len(src) && src[k] == '\\' {
			k++
		}
		if k < len(src) && (src[k] == '"' || src[k] == '\'') {
			k++
		}
		for k < len(src) && (src[k] == ' ' || src[k] == '\t' || src[k] == '\n' || src[k] == '\r') {
			k++
		}
		if k < len(src) && src[k] == ':' {
			out = append(out, at)
		}
	}
}

// entryAt reads the object literal around the originalPrice key at pos; if
// that object has no name (a nested price object), its parent is tried.
func entryAt(src string, pos int) (ListEntry, bool) {
	open := enclosingOpen(src, pos)
	if open < 0 {
		return ListEntry{}, false
	}
	fields, ok := objectFields(src, open)
	if !ok {
		return ListEntry{}, false
	}
	price, ok := number(fields["originalPrice"].text)
	if !ok || !(price > 0) {
		return ListEntry{}, false
	}
	name, mem := nameOf(fields), memoryOf(fields)
	if name == "" {
		if parent := enclosingOpen(src, open); parent >= 0 {
			if pf, ok := objectFields(src, parent); ok {
				name, mem = nameOf(pf), memoryOf(pf)
			}
		}
	}
	if name == "" {
		return ListEntry{}, false
	}
	return ListEntry{Name: name, MemoryGB: mem, Price: price}, true
}

// enclosingOpen finds the '{' that opens the object containing pos,
// counting braces backwards (unbalanced '[' are stepped over).
func enclosingOpen(src string, pos int) int {
	depth := 0
	for i := pos - 1; i >= 0 && pos-i <= maxObject; i-- {
		switch src[i] {
		case '}':
			depth++
		case '{':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

// objectFields returns the top-level `key: literal` pairs of the object
// literal opening at open (string values unquoted, other literals as
// written). ok is false when the object does not close within maxObject.
func objectFields(src string, open int) (map[string]literal, bool) {
	depth, end := 0, -1
	for i := open; i < len(src) && i-open <= maxObject; i++ {
		switch src[i] {
		case '{':
			depth++
		case '}':
			depth--
		}
		if depth == 0 {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, false
	}
	obj := src[open : end+1]
	if strings.Contains(obj, `\"`) {
		obj = strings.ReplaceAll(obj, `\"`, `"`) // JSON inside a JS string
	}
	toks := tokenize(obj)
	fields := map[string]literal{}
	depth = 0
	for i, t := range toks {
		switch t.kind {
		case '{', '[', '(':
			depth++
			continue
		case '}', ']', ')':
			depth--
			continue
		}
		// key : literal followed by , or the object's end, at depth 1.
		if depth != 1 || t.kind != ':' || i == 0 {
			continue
		}
		k, v := toks[i-1], tokAt(toks, i+1)
		next := tokAt(toks, i+2)
		if (k.kind != 's' && k.kind != 'w') || (v.kind != 's' && v.kind != 'w') || (next.kind != ',' && next.kind != '}') {
			continue
		}
		if _, dup := fields[k.text]; !dup {
			fields[k.text] = literal{text: v.text, quoted: v.kind == 's'}
		}
	}
	return fields, true
}

// literal is a value as written: a quoted string (unquoted here) or a bare
// word (a number, an identifier, !0).
type literal struct {
	text   string
	quoted bool
}

type token struct {
	kind byte // '{' '}' '[' ']' '(' ')' ':' ',' 's' (string) 'w' (word) '?' (other)
	text string
}

func tokAt(toks []token, i int) token {
	if i < len(toks) {
		return toks[i]
	}
	return token{}
}

func tokenize(s string) []token {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.IndexByte("{}[]():,", c) >= 0:
			out = append(out, token{kind: c})
			i++
		case c == '"' || c == '\'' || c == '`':
			j, str := i+1, strings.Builder{}
			for j < len(s) && s[j] != c {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				str.WriteByte(s[j])
				j++
			}
			out = append(out, token{kind: 's', text: str.String()})
			i = j + 1
		case isWord(c):
			j := i
			for j < len(s) && isWord(s[j]) {
				j++
			}
			out = append(out, token{kind: 'w', text: s[i:j]})
			i = j
		default:
			out = append(out, token{kind: '?'})
			i++
		}
	}
	return out
}

func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '$' || c == '.' || c == '!' || c == '-' || c == '+' || c >= 0x80
}

func nameOf(f map[string]literal) string {
	for _, k := range nameKeys {
		// Only a quoted name: a bare word is a variable or a number.
		if v := strings.TrimSpace(f[k].text); f[k].quoted && strings.ContainsAny(v, letters) {
			return v
		}
	}
	return ""
}

const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func memoryOf(f map[string]literal) float64 {
	for _, k := range memoryKeys {
		v, ok := number(f[k].text)
		if !ok || v <= 0 {
			continue
		}
		switch {
		case v >= 1<<20: // bytes
			return v / (1 << 30)
		case v >= 1024: // MB
			return v / 1024
		default:
			return v
		}
	}
	return 0
}

// number reads the first decimal number of a literal ("1.98", "¥1.98/时");
// a bare identifier (a variable) is not a number.
func number(lit string) (float64, bool) {
	lit = strings.TrimSpace(lit)
	if lit == "" {
		return 0, false
	}
	if c := lit[0]; (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c == '!') && !strings.ContainsAny(lit, " ") {
		return 0, false
	}
	m := firstNum.FindString(lit)
	if m == "" {
		return 0, false
	}
	v, err := strconv.ParseFloat(m, 64)
	return v, err == nil
}

// Scripts lists the JavaScript files a home page at base loads, absolute,
// in the order to search them: <script src> first, then module preloads and
// prefetches, vendor/polyfill/runtime chunks last. Root-relative paths
// ("/assets/…") resolve against root (the site root: scheme and host, or
// the prefix a fixture server mounts the site under).
func Scripts(html []byte, base, root string) ([]string, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(html))
	if err != nil {
		return nil, fmt.Errorf("parse home page: %w", err)
	}
	b, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	var first, late []string
	seen := map[string]bool{}
	add := func(ref string) {
		ref = strings.TrimSpace(ref)
		if ref == "" {
			return
		}
		if root != "" && strings.HasPrefix(ref, "/") && !strings.HasPrefix(ref, "//") {
			ref = strings.TrimRight(root, "/") + ref
		}
		u, err := b.Parse(ref)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return
		}
		abs := u.String()
		if seen[abs] {
			return
		}
		seen[abs] = true
		low := strings.ToLower(u.Path)
		if strings.Contains(low, "vendor") || strings.Contains(low, "polyfill") || strings.Contains(low, "runtime") {
			late = append(late, abs)
		} else {
			first = append(first, abs)
		}
	}
	doc.Find("script[src]").Each(func(_ int, s *goquery.Selection) { add(s.AttrOr("src", "")) })
	doc.Find("link[href]").Each(func(_ int, s *goquery.Selection) {
		rel := strings.ToLower(s.AttrOr("rel", ""))
		href := s.AttrOr("href", "")
		if u, err := url.Parse(href); err != nil || !strings.HasSuffix(strings.ToLower(u.Path), ".js") {
			return
		}
		if strings.Contains(rel, "modulepreload") || strings.Contains(rel, "preload") || strings.Contains(rel, "prefetch") {
			add(href)
		}
	})
	all := append(first, late...)
	if len(all) == 0 {
		t := bytes.TrimSpace(html)
		return nil, fmt.Errorf("%w: no <script src> in the page: %s", scrapers.ErrNothingParsed, snippet(t))
	}
	return all, nil
}

func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
