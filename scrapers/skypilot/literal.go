package skypilot

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxDepth bounds nesting so that a hostile GpuInfo cannot exhaust the stack.
const maxDepth = 32

// ParseLiteral parses the GpuInfo column: a Python literal as repr() writes
// it ({'Gpus': [{'Name': 'A100', 'Count': 8.0, …}], …} with single quotes,
// None/True/False) or, in the Verda catalog, the same structure as JSON.
// It accepts dicts, lists, tuples, strings, numbers, None/null and
// True/False/true/false, and returns map[string]any, []any, string, float64,
// bool or nil. Nothing is ever evaluated.
func ParseLiteral(s string) (any, error) {
	p := &litParser{s: s}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("literal: unexpected %q at offset %d", p.rest(), p.i)
	}
	return v, nil
}

type litParser struct {
	s string
	i int
}

func (p *litParser) rest() string {
	r := p.s[p.i:]
	if len(r) > 12 {
		r = r[:12] + "…"
	}
	return r
}

func (p *litParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

var errEnd = errors.New("literal: unexpected end")

func (p *litParser) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("literal: nested too deeply")
	}
	p.space()
	if p.i >= len(p.s) {
		return nil, errEnd
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.dict(depth)
	case c == '[':
		return p.list(depth, ']')
	case c == '(':
		return p.list(depth, ')')
	case c == '\'' || c == '"':
		return p.str()
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9':
		return p.number()
	default:
		return p.word()
	}
}

func (p *litParser) dict(depth int) (any, error) {
	p.i++ // {
	m := map[string]any{}
	for {
		p.space()
		if p.i >= len(p.s) {
			return nil, errEnd
		}
		if p.s[p.i] == '}' {
			p.i++
			return m, nil
		}
		k, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		key, ok := k.(string)
		if !ok {
			key = fmt.Sprint(k)
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, fmt.Errorf("literal: want ':' after key %q", key)
		}
		p.i++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[key] = v
		if err := p.sep('}'); err != nil {
			return nil, err
		}
	}
}

func (p *litParser) list(depth int, end byte) (any, error) {
	p.i++ // [ or (
	out := []any{}
	for {
		p.space()
		if p.i >= len(p.s) {
			return nil, errEnd
		}
		if p.s[p.i] == end {
			p.i++
			return out, nil
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if err := p.sep(end); err != nil {
			return nil, err
		}
	}
}

// sep consumes a ',' or leaves the closing bracket for the caller.
func (p *litParser) sep(end byte) error {
	p.space()
	if p.i >= len(p.s) {
		return errEnd
	}
	switch p.s[p.i] {
	case ',':
		p.i++
		return nil
	case end:
		return nil
	}
	return fmt.Errorf("literal: want ',' or %q at offset %d, got %q", end, p.i, p.rest())
}

func (p *litParser) str() (any, error) {
	q := p.s[p.i]
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), nil
		case c == '\\' && p.i+1 < len(p.s):
			p.i += 2
			switch e := p.s[p.i-1]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'u':
				if p.i+4 <= len(p.s) {
					if r, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32); err == nil {
						b.WriteRune(rune(r))
						p.i += 4
						continue
					}
				}
				b.WriteString(`\u`)
			default:
				b.WriteByte(e) // \' \" \\ and anything else: the character itself
			}
		default:
			_, size := utf8.DecodeRuneInString(p.s[p.i:])
			b.WriteString(p.s[p.i : p.i+size])
			p.i += size
		}
	}
	return nil, errors.New("literal: unterminated string")
}

func (p *litParser) number() (any, error) {
	start := p.i
	for p.i < len(p.s) && strings.IndexByte("+-.0123456789eE_", p.s[p.i]) >= 0 {
		p.i++
	}
	v, err := strconv.ParseFloat(p.s[start:p.i], 64)
	if err != nil {
		return nil, fmt.Errorf("literal: bad number %q", p.s[start:p.i])
	}
	return v, nil
}

func (p *litParser) word() (any, error) {
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			break
		}
		p.i++
	}
	switch w := p.s[start:p.i]; w {
	case "None", "null":
		return nil, nil
	case "True", "true":
		return true, nil
	case "False", "false":
		return false, nil
	case "":
		return nil, fmt.Errorf("literal: unexpected %q at offset %d", p.rest(), p.i)
	default:
		return nil, fmt.Errorf("literal: unknown word %q", w)
	}
}

// number reads a float from a literal value: a number, or a string holding
// one (CUDO writes 'Count': '1.0').
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}
