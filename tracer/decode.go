package tracer

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// maxNesting bounds how deeply values in a trace line may nest, so that a
// hostile file cannot exhaust the stack.
const maxNesting = 10000

// parser decodes one line of JSON. Numbers become json.Number, objects
// map[string]any and arrays []any, as encoding/json does with UseNumber.
type parser struct {
	data  []byte
	pos   int
	depth int
}

// syntaxError reports malformed JSON at a byte column of the line.
type syntaxError struct {
	col int // 1-based
	msg string
}

func (e *syntaxError) Error() string {
	return "column " + strconv.Itoa(e.col) + ": " + e.msg
}

func (p *parser) errorf(format string, args ...any) error {
	return &syntaxError{col: p.pos + 1, msg: fmt.Sprintf(format, args...)}
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\r', '\n':
			p.pos++
		default:
			return
		}
	}
}

// describe names the byte at the current position for error messages.
func (p *parser) describe() string {
	if p.pos >= len(p.data) {
		return "end of line"
	}
	c := p.data[p.pos]
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (p *parser) expect(c byte) error {
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == c {
		p.pos++
		return nil
	}
	return p.errorf("expected %q, found %s", c, p.describe())
}

func (p *parser) literal(word string) bool {
	if len(p.data)-p.pos >= len(word) && string(p.data[p.pos:p.pos+len(word)]) == word {
		p.pos += len(word)
		return true
	}
	return false
}

// peekNull consumes a null literal if one comes next.
func (p *parser) peekNull() bool {
	p.skipSpace()
	return p.literal("null")
}

// value decodes any JSON value.
func (p *parser) value() (any, error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, p.errorf("expected a value, found end of line")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		s, err := p.number()
		return json.Number(s), err
	case p.literal("null"):
		return nil, nil
	case p.literal("true"):
		return true, nil
	case p.literal("false"):
		return false, nil
	default:
		return nil, p.errorf("expected a value, found %s", p.describe())
	}
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxNesting {
		return p.errorf("values nested deeper than %d", maxNesting)
	}
	return nil
}

func (p *parser) object() (map[string]any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	m := make(map[string]any)
	err := p.members(func(key string) error {
		v, err := p.value()
		m[key] = v
		return err
	})
	return m, err
}

// members walks an object's members, calling f with each key after the
// colon, positioned at the value, which f must consume.
func (p *parser) members(f func(key string) error) error {
	if err := p.expect('{'); err != nil {
		return err
	}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return p.errorf("expected a member name, found %s", p.describe())
		}
		key, err := p.str()
		if err != nil {
			return err
		}
		if err := p.expect(':'); err != nil {
			return err
		}
		if err := f(key); err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.data) {
			return p.errorf("expected ',' or '}', found end of line")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return nil
		default:
			return p.errorf("expected ',' or '}', found %s", p.describe())
		}
	}
}

func (p *parser) array() ([]any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.pos++ // '['
	a := []any{}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return a, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("expected ',' or ']', found end of line")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return a, nil
		default:
			return nil, p.errorf("expected ',' or ']', found %s", p.describe())
		}
	}
}

// number scans a number literal and returns its text.
func (p *parser) number() (string, error) {
	p.skipSpace()
	end, ok := scanNumber(p.data, p.pos)
	if !ok {
		p.pos = end
		return "", p.errorf("malformed number")
	}
	s := string(p.data[p.pos:end])
	p.pos = end
	return s, nil
}

// str decodes a string. Invalid UTF-8 and unpaired surrogates become
// U+FFFD, as with encoding/json.
func (p *parser) str() (string, error) {
	p.skipSpace()
	if p.pos >= len(p.data) || p.data[p.pos] != '"' {
		return "", p.errorf("expected a string, found %s", p.describe())
	}
	p.pos++
	start := p.pos
	// Fast path: no escapes, ASCII or valid UTF-8.
	for i := start; i < len(p.data); i++ {
		c := p.data[i]
		if c == '"' {
			s := p.data[start:i]
			if !utf8.Valid(s) {
				break
			}
			p.pos = i + 1
			return string(s), nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	var out []byte
	i := start
	for {
		if i >= len(p.data) {
			p.pos = i
			return "", p.errorf("unterminated string")
		}
		c := p.data[i]
		switch {
		case c == '"':
			p.pos = i + 1
			return string(out), nil
		case c < 0x20:
			p.pos = i
			return "", p.errorf("control character 0x%02x in string", c)
		case c == '\\':
			if i+1 >= len(p.data) {
				p.pos = i
				return "", p.errorf("unterminated string")
			}
			i++
			switch p.data[i] {
			case '"', '\\', '/':
				out = append(out, p.data[i])
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(p.data, i+1)
				if !ok {
					p.pos = i
					return "", p.errorf(`malformed \u escape`)
				}
				i += 4
				if utf16.IsSurrogate(r) {
					r2, ok2 := rune(-1), false
					if i+2 < len(p.data) && p.data[i+1] == '\\' && p.data[i+2] == 'u' {
						r2, ok2 = hex4(p.data, i+3)
					}
					if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
						r = dec
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				p.pos = i
				return "", p.errorf("invalid escape %s", strconv.QuoteRune(rune(p.data[i])))
			}
			i++
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(p.data[i:])
			out = utf8.AppendRune(out, r)
			i += size
		}
	}
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// end checks that only white space follows.
func (p *parser) end() error {
	p.skipSpace()
	if p.pos != len(p.data) {
		return p.errorf("unexpected %s after the object", p.describe())
	}
	return nil
}

// fieldErr reports a member whose value has the wrong shape.
type fieldErr struct {
	field string
	err   error
}

func (e *fieldErr) Error() string { return "field " + strconv.Quote(e.field) + ": " + e.err.Error() }
func (e *fieldErr) Unwrap() error { return e.err }

func (p *parser) integer(bits int) (int64, error) {
	s, err := p.number()
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return 0, fmt.Errorf("want an integer, found %s", s)
	}
	return n, nil
}

func (p *parser) boolean() (bool, error) {
	p.skipSpace()
	switch {
	case p.literal("true"):
		return true, nil
	case p.literal("false"):
		return false, nil
	}
	return false, p.errorf("expected true or false, found %s", p.describe())
}

// decodeEvent decodes one trace line. Unknown members are skipped, so that
// readers accept lines from writers that add fields.
func decodeEvent(line []byte) (*Event, error) {
	p := parser{data: line}
	e := &Event{Branch: -1}
	attempt, hasAttempt := 0, false
	err := p.members(func(key string) error {
		var err error
		switch key {
		case "seq":
			var s string
			if s, err = p.number(); err == nil {
				if e.Seq, err = strconv.ParseUint(s, 10, 64); err != nil {
					err = fmt.Errorf("want a non-negative integer, found %s", s)
				}
			}
		case "time":
			var s string
			if p.peekNull() {
				e.Time = time.Time{}
			} else if s, err = p.str(); err == nil {
				if e.Time, err = time.Parse(time.RFC3339Nano, s); err != nil {
					err = fmt.Errorf("want an RFC 3339 time, found %q", s)
				}
			}
		case "kind":
			var s string
			if s, err = p.str(); err == nil {
				var ok bool
				if e.Kind, ok = ParseKind(s); !ok {
					err = fmt.Errorf("unknown event kind %q", s)
				}
			}
		case "site":
			var s string
			if p.peekNull() {
				e.Site = Site{Attempt: e.Site.Attempt}
			} else if s, err = p.str(); err == nil {
				var site Site
				if site, err = ParseSite(s); err == nil {
					if hasAttempt {
						site.Attempt = attempt
					}
					e.Site = site
				}
			}
		case "attempt":
			var n int64
			if n, err = p.nullableInt(); err == nil {
				attempt, hasAttempt = int(n), true
				e.Site.Attempt = attempt
			}
		case "node":
			e.Node, err = p.nullableStr()
		case "tool":
			e.Tool, err = p.nullableStr()
		case "arguments":
			e.Arguments, err = p.value()
		case "output":
			e.Output, err = p.value()
			e.HasOutput = true
		case "error":
			e.Error, err = p.errorInfo()
		case "delay_ms":
			var s string
			if p.peekNull() {
				e.DelayMS = 0
			} else if s, err = p.number(); err == nil {
				if e.DelayMS, err = strconv.ParseFloat(s, 64); err != nil {
					err = fmt.Errorf("number %s out of range", s)
				}
			}
		case "branch":
			var n int64
			if p.peekNull() {
				e.Branch = -1
			} else if n, err = p.integer(strconv.IntSize); err == nil {
				e.Branch = int(n)
			}
		case "outcome":
			e.Outcome, err = p.outcome()
		case "reason":
			e.Reason, err = p.nullableStr()
		case "cause":
			e.Cause, err = p.nullableStr()
		case "depth":
			var n int64
			n, err = p.nullableInt()
			e.Depth = int(n)
		case "counters":
			e.Counters, err = p.counters()
		case "message":
			e.Message, err = p.nullableStr()
		case "data":
			if p.peekNull() {
				e.Data = nil
			} else {
				p.skipSpace()
				if p.pos < len(p.data) && p.data[p.pos] != '{' {
					err = fmt.Errorf("want an object, found %s", p.describe())
				} else {
					e.Data, err = p.object()
				}
			}
		case "duration_ms":
			var s string
			if p.peekNull() {
				e.Duration = 0
			} else if s, err = p.number(); err == nil {
				e.Duration, err = parseDurationMS(s)
			}
		case "max_attempts":
			var n int64
			n, err = p.nullableInt()
			e.Requested = int(n)
		default:
			_, err = p.value()
		}
		if err != nil {
			err = &fieldErr{key, err}
		}
		return err
	})
	if err == nil {
		err = p.end()
	}
	if err == nil && e.Kind == KindUnknown {
		err = errors.New(`missing field "kind"`)
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

func (p *parser) nullableStr() (string, error) {
	if p.peekNull() {
		return "", nil
	}
	return p.str()
}

func (p *parser) nullableInt() (int64, error) {
	if p.peekNull() {
		return 0, nil
	}
	return p.integer(strconv.IntSize)
}

func (p *parser) errorInfo() (*ErrorInfo, error) {
	if p.peekNull() {
		return nil, nil
	}
	info := &ErrorInfo{}
	err := p.members(func(key string) error {
		var err error
		switch key {
		case "type":
			info.Type, err = p.nullableStr()
		case "message":
			info.Message, err = p.nullableStr()
		default:
			_, err = p.value()
		}
		return err
	})
	return info, err
}

func (p *parser) outcome() (*Outcome, error) {
	if p.peekNull() {
		return nil, nil
	}
	o := &Outcome{}
	err := p.members(func(key string) error {
		var err error
		switch key {
		case "success":
			o.Success, err = p.boolean()
		case "value":
			o.Value, err = p.value()
		case "error_type":
			o.ErrorType, err = p.nullableStr()
		case "error_message":
			o.ErrorMessage, err = p.nullableStr()
		default:
			_, err = p.value()
		}
		return err
	})
	return o, err
}

func (p *parser) counters() (*Counters, error) {
	if p.peekNull() {
		return nil, nil
	}
	c := &Counters{}
	err := p.members(func(key string) error {
		var err error
		switch key {
		case "nodes":
			c.Nodes, err = p.integer(64)
		case "tool_calls":
			c.ToolCalls, err = p.integer(64)
		default:
			_, err = p.value()
		}
		return err
	})
	return c, err
}

// parseDurationMS reads a millisecond count. Decimals with at most six
// fractional digits (what the writer produces) convert exactly; anything
// else goes through float64 and is rounded to the nanosecond.
func parseDurationMS(s string) (time.Duration, error) {
	neg := false
	t := s
	if t != "" && t[0] == '-' {
		neg, t = true, t[1:]
	}
	intPart, frac := t, ""
	exact := true
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '.':
			intPart, frac = t[:i], t[i+1:]
		case 'e', 'E':
			exact = false
		}
	}
	if exact && len(frac) <= 6 {
		ms, err := strconv.ParseUint(intPart, 10, 64)
		if err == nil && ms <= math.MaxInt64/1_000_000+1 {
			var f uint64
			for i := 0; i < 6; i++ {
				f *= 10
				if i < len(frac) {
					f += uint64(frac[i] - '0')
				}
			}
			total := ms*1e6 + f
			switch {
			case !neg && total <= math.MaxInt64:
				return time.Duration(total), nil
			case neg && total <= 1<<63:
				return time.Duration(-total), nil
			}
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	ns := math.Round(f * 1e6)
	if err != nil || ns >= math.MaxInt64 || ns < math.MinInt64 {
		return 0, fmt.Errorf("duration %s ms out of range", s)
	}
	return time.Duration(ns), nil
}
