package mcp

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// parsePyLiteral parses the subset of Python literals that ast.literal_eval
// accepts and JSON can hold: None, True, False, numbers, quoted strings,
// lists, tuples (as lists) and dicts with string keys. Python servers often
// return str(value), so the Python provider falls back to literal_eval
// when a text is not JSON. Sets, bytes and non-string keys are refused.
func parsePyLiteral(s string) (any, bool) {
	if !utf8.ValidString(s) {
		return nil, false
	}
	p := &pyParser{s: s}
	v, ok := p.value(0)
	if !ok {
		return nil, false
	}
	p.space()
	return v, p.i == len(p.s)
}

type pyParser struct {
	s string
	i int
}

const maxPyDepth = 100

func (p *pyParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *pyParser) value(depth int) (any, bool) {
	if depth > maxPyDepth {
		return nil, false
	}
	p.space()
	if p.i >= len(p.s) {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '\'' || c == '"':
		str, ok := p.str()
		if !ok {
			return nil, false
		}
		// Adjacent literals concatenate, as in Python source.
		for {
			save := p.i
			p.space()
			if p.i < len(p.s) && (p.s[p.i] == '\'' || p.s[p.i] == '"') {
				more, ok := p.str()
				if !ok {
					return nil, false
				}
				str += more
				continue
			}
			p.i = save
			return str, true
		}
	case c == '[':
		p.i++
		return p.seq(']', depth)
	case c == '(':
		p.i++
		return p.seq(')', depth)
	case c == '{':
		p.i++
		return p.dict(depth)
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		for _, kw := range []struct {
			word string
			v    any
		}{{"None", nil}, {"True", true}, {"False", false}} {
			if strings.HasPrefix(p.s[p.i:], kw.word) {
				end := p.i + len(kw.word)
				if end < len(p.s) && isIdent(p.s[end]) {
					return nil, false
				}
				p.i = end
				return kw.v, true
			}
		}
	}
	return nil, false
}

func isIdent(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func (p *pyParser) seq(end byte, depth int) (any, bool) {
	out := []any{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			return out, true // empty, or after a trailing comma
		}
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		out = append(out, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case end:
			p.i++
			if end == ')' && len(out) == 1 {
				return out[0], true // (x) is x; (x,) is a tuple
			}
			return out, true
		default:
			return nil, false
		}
	}
}

func (p *pyParser) dict(depth int) (any, bool) {
	out := map[string]any{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return out, true
		}
		k, ok := p.value(depth + 1)
		key, isStr := k.(string)
		if !ok || !isStr {
			return nil, false
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, false
		}
		p.i++
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		out[key] = v
		p.space()
		if p.i >= len(p.s) {
			return nil, false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return out, true
		default:
			return nil, false
		}
	}
}

func (p *pyParser) number() (any, bool) {
	start := p.i
	for p.i < len(p.s) && strings.IndexByte("+-.0123456789eE_", p.s[p.i]) >= 0 {
		if (p.s[p.i] == '+' || p.s[p.i] == '-') && p.i > start && p.s[p.i-1] != 'e' && p.s[p.i-1] != 'E' {
			break
		}
		p.i++
	}
	lit := strings.ReplaceAll(p.s[start:p.i], "_", "")
	lit = strings.TrimPrefix(lit, "+")
	neg := strings.HasPrefix(lit, "-")
	body := strings.TrimPrefix(lit, "-")
	if strings.HasPrefix(body, ".") {
		body = "0" + body
	}
	body = strings.Replace(body, ".e", ".0e", 1)
	body = strings.Replace(body, ".E", ".0E", 1)
	if strings.HasSuffix(body, ".") {
		body += "0"
	}
	// Python forbids leading zeros on non-zero integers; JSON does too.
	if neg {
		body = "-" + body
	}
	if !json.Valid([]byte(body)) {
		return nil, false
	}
	return json.Number(body), true
}

func (p *pyParser) str() (string, bool) {
	q := p.s[p.i]
	triple := strings.HasPrefix(p.s[p.i:], strings.Repeat(string(q), 3))
	if triple {
		p.i += 3
	} else {
		p.i++
	}
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case triple && strings.HasPrefix(p.s[p.i:], strings.Repeat(string(q), 3)):
			p.i += 3
			return b.String(), true
		case !triple && c == q:
			p.i++
			return b.String(), true
		case !triple && c == '\n':
			return "", false
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return "", false
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case '\\', '\'', '"':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'v':
				b.WriteByte('\v')
			case '\n':
			case 'x', 'u', 'U':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if p.i+n > len(p.s) {
					return "", false
				}
				r, err := strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
				if err != nil || !utf8.ValidRune(rune(r)) {
					return "", false
				}
				b.WriteRune(rune(r))
				p.i += n
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", false
}
