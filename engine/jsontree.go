package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxNesting is the deepest JSON nesting a program may have. Deeper input
// is rejected with a clear error instead of exhausting memory.
const MaxNesting = 10000

// jval is a decoded JSON value that keeps object key order and number
// literals, which the AST needs (tool_call argument order, memo canonical
// comparison) and maps would lose.
type jval struct {
	kind byte // 'z' null, 'b' bool, 'n' number, 's' string, 'a' array, 'o' object
	b    bool
	s    string // string value or number literal
	arr  []*jval
	keys []string
	vals []*jval
}

func (v *jval) get(key string) (*jval, bool) {
	for i, k := range v.keys {
		if k == key {
			return v.vals[i], true
		}
	}
	return nil, false
}

func (v *jval) typeName() string {
	switch v.kind {
	case 'z':
		return "null"
	case 'b':
		return "boolean"
	case 'n':
		return "number"
	case 's':
		return "string"
	case 'a':
		return "array"
	}
	return "object"
}

// value converts to a plain engine value.
func (v *jval) value() any {
	switch v.kind {
	case 'z':
		return nil
	case 'b':
		return v.b
	case 'n':
		return json.Number(v.s)
	case 's':
		return v.s
	case 'a':
		out := make([]any, len(v.arr))
		for i, e := range v.arr {
			out[i] = e.value()
		}
		return out
	}
	out := make(map[string]any, len(v.keys))
	for i, k := range v.keys {
		out[k] = v.vals[i].value()
	}
	return out
}

// decodeTree decodes one JSON document into a jval tree in a single pass
// of a hand-written scanner (encoding/json's token API is an order of
// magnitude slower on large programs). It follows RFC 8259 exactly;
// invalid UTF-8 in strings becomes U+FFFD, as encoding/json does.
func decodeTree(data []byte) (*jval, error) {
	s := &scanner{data: data}
	s.skip()
	if s.pos >= len(data) {
		return nil, syntaxError(data, int64(s.pos), "unexpected end of JSON input")
	}
	v, err := s.value(0)
	if err != nil {
		return nil, err
	}
	s.skip()
	if s.pos < len(data) {
		return nil, syntaxError(data, int64(s.pos), "unexpected data after the top-level value")
	}
	return v, nil
}

type scanner struct {
	data []byte
	pos  int
	buf  []byte
}

func (s *scanner) fail(msg string) error { return syntaxError(s.data, int64(s.pos), msg) }

func (s *scanner) skip() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) value(depth int) (*jval, error) {
	if s.pos >= len(s.data) {
		return nil, s.fail("unexpected end of JSON input")
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		if depth >= MaxNesting {
			return nil, s.fail(fmt.Sprintf("nesting deeper than %d levels", MaxNesting))
		}
		return s.object(depth + 1)
	case c == '[':
		if depth >= MaxNesting {
			return nil, s.fail(fmt.Sprintf("nesting deeper than %d levels", MaxNesting))
		}
		return s.array(depth + 1)
	case c == '"':
		str, err := s.str()
		if err != nil {
			return nil, err
		}
		return &jval{kind: 's', s: str}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	case c == 't':
		return s.literal("true", &jval{kind: 'b', b: true})
	case c == 'f':
		return s.literal("false", &jval{kind: 'b'})
	case c == 'n':
		return s.literal("null", &jval{kind: 'z'})
	}
	return nil, s.fail(fmt.Sprintf("invalid character %q looking for beginning of value", s.data[s.pos]))
}

func (s *scanner) literal(word string, v *jval) (*jval, error) {
	if len(s.data)-s.pos < len(word) || string(s.data[s.pos:s.pos+len(word)]) != word {
		return nil, s.fail("invalid literal (expected " + word + ")")
	}
	s.pos += len(word)
	return v, nil
}

func (s *scanner) object(depth int) (*jval, error) {
	v := &jval{kind: 'o'}
	s.pos++ // {
	s.skip()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return v, nil
	}
	for {
		s.skip()
		if s.pos >= len(s.data) {
			return nil, s.fail("unexpected end of JSON input")
		}
		if s.data[s.pos] != '"' {
			return nil, s.fail("expected a string as object key")
		}
		k, err := s.str()
		if err != nil {
			return nil, err
		}
		s.skip()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return nil, s.fail("expected ':' after object key")
		}
		s.pos++
		s.skip()
		e, err := s.value(depth)
		if err != nil {
			return nil, err
		}
		if i := indexOf(v.keys, k); i >= 0 {
			v.vals[i] = e // duplicate key: the last value wins, at the first position
		} else {
			v.keys = append(v.keys, k)
			v.vals = append(v.vals, e)
		}
		s.skip()
		if s.pos >= len(s.data) {
			return nil, s.fail("unexpected end of JSON input")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return v, nil
		default:
			return nil, s.fail("expected ',' or '}' after object value")
		}
	}
}

func (s *scanner) array(depth int) (*jval, error) {
	v := &jval{kind: 'a'}
	s.pos++ // [
	s.skip()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return v, nil
	}
	for {
		s.skip()
		e, err := s.value(depth)
		if err != nil {
			return nil, err
		}
		v.arr = append(v.arr, e)
		s.skip()
		if s.pos >= len(s.data) {
			return nil, s.fail("unexpected end of JSON input")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return v, nil
		default:
			return nil, s.fail("expected ',' or ']' after array element")
		}
	}
}

func (s *scanner) number() (*jval, error) {
	start := s.pos
	d := s.data
	if s.pos < len(d) && d[s.pos] == '-' {
		s.pos++
	}
	digits := func() int {
		n := 0
		for s.pos < len(d) && d[s.pos] >= '0' && d[s.pos] <= '9' {
			s.pos++
			n++
		}
		return n
	}
	if s.pos < len(d) && d[s.pos] == '0' {
		s.pos++
	} else if digits() == 0 {
		return nil, s.fail("invalid number")
	}
	if s.pos < len(d) && d[s.pos] == '.' {
		s.pos++
		if digits() == 0 {
			return nil, s.fail("invalid number: digits expected after '.'")
		}
	}
	if s.pos < len(d) && (d[s.pos] == 'e' || d[s.pos] == 'E') {
		s.pos++
		if s.pos < len(d) && (d[s.pos] == '+' || d[s.pos] == '-') {
			s.pos++
		}
		if digits() == 0 {
			return nil, s.fail("invalid number: digits expected in the exponent")
		}
	}
	return &jval{kind: 'n', s: string(d[start:s.pos])}, nil
}

// str reads a string literal at s.pos (which is '"').
func (s *scanner) str() (string, error) {
	d := s.data
	s.pos++
	start := s.pos
	// Fast path: no escapes, ASCII or valid UTF-8.
	for s.pos < len(d) {
		c := d[s.pos]
		if c == '"' {
			out := d[start:s.pos]
			s.pos++
			return validUTF8(out), nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", s.fail("invalid control character in string")
		}
		s.pos++
	}
	b := append(s.buf[:0], d[start:s.pos]...)
	for s.pos < len(d) {
		c := d[s.pos]
		switch {
		case c == '"':
			s.pos++
			s.buf = b
			return validUTF8(b), nil
		case c < 0x20:
			return "", s.fail("invalid control character in string")
		case c != '\\':
			b = append(b, c)
			s.pos++
			continue
		}
		s.pos++
		if s.pos >= len(d) {
			break
		}
		switch e := d[s.pos]; e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := s.hex4(s.pos + 1)
			if !ok {
				return "", s.fail("invalid \\u escape")
			}
			s.pos += 4
			if utf16.IsSurrogate(r) {
				r2, ok2 := rune(-1), false
				if s.pos+6 < len(d) && d[s.pos+1] == '\\' && d[s.pos+2] == 'u' {
					r2, ok2 = s.hex4(s.pos + 3)
				}
				if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
					r = dec
					s.pos += 6
				} else {
					r = utf8.RuneError
				}
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", s.fail("invalid escape in string")
		}
		s.pos++
	}
	return "", s.fail("unexpected end of JSON input in string")
}

// validUTF8 returns b as a string with every invalid byte replaced by
// U+FFFD, as encoding/json does.
func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return string(out)
}

func (s *scanner) hex4(i int) (rune, bool) {
	if i+4 > len(s.data) {
		return 0, false
	}
	var r rune
	for _, c := range s.data[i : i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

func indexOf(keys []string, k string) int {
	if len(keys) > 16 {
		return -1 // duplicates in large objects are rare; skip the quadratic scan
	}
	for i, x := range keys {
		if x == k {
			return i
		}
	}
	return -1
}

// SyntaxError is invalid JSON, located by line and column.
type SyntaxError struct {
	Offset int64
	Line   int
	Column int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// ErrorType returns ValueError: bad JSON is an input error.
func (e *SyntaxError) ErrorType() ErrorType { return ValueError }

func syntaxError(data []byte, off int64, msg string) error {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := int(off) - bytes.LastIndexByte(data[:off], '\n')
	return &SyntaxError{Offset: off, Line: line, Column: col, Msg: strings.TrimPrefix(msg, "json: ")}
}
