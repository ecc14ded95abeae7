package tracer

import (
	"bytes"
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
	data        []byte
	pos         int
	depth       int
	scratch     []byte    // unescaped string bytes, reused
	fromScratch bool      // the last strBytes result is in scratch
	in          *interner // shared strings; nil allocates every string
}

// interner shares the strings that recur from line to line of a trace
// (member names, tool names, sites, short values), so that reading a long
// trace does not allocate them again for every event.
type interner struct {
	m     map[string]string
	boxed map[string]any // short string and number values, already in an interface
}

// internMax bounds the interner; strings beyond it are allocated.
const (
	internMax    = 8192
	internMaxLen = 48
)

func newInterner() *interner {
	return &interner{m: make(map[string]string), boxed: make(map[string]any)}
}

// value returns the string or json.Number b as an interface value, shared
// between lines when short. number tells which type it is; the boxed map
// is keyed with a leading byte that keeps the two apart.
func (in *interner) value(b []byte, number bool) any {
	if in == nil || len(b) > internMaxLen {
		if number {
			return json.Number(b)
		}
		return string(b)
	}
	var key [internMaxLen + 1]byte
	key[0] = 's'
	if number {
		key[0] = 'n'
	}
	k := key[:copy(key[1:], b)+1]
	if v, ok := in.boxed[string(k)]; ok {
		return v
	}
	var v any
	if number {
		v = json.Number(b)
	} else {
		v = string(b)
	}
	if len(in.boxed) < internMax {
		in.boxed[string(k)] = v
	}
	return v
}

func (in *interner) get(b []byte) string {
	if in == nil || len(b) > internMaxLen {
		return string(b)
	}
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in.m) < internMax {
		in.m[s] = s
	}
	return s
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
		b, err := p.strBytes()
		if err != nil {
			return nil, err
		}
		return p.in.value(b, false), nil
	case c == '-' || (c >= '0' && c <= '9'):
		b, err := p.numberBytes()
		if err != nil {
			return nil, err
		}
		return p.in.value(b, true), nil
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
	err := p.members(func(key []byte) error {
		k := p.in.get(key)
		v, err := p.value()
		m[k] = v
		return err
	})
	return m, err
}

// members walks an object's members, calling f with each key after the
// colon, positioned at the value, which f must consume. The key is only
// valid until f parses the value.
func (p *parser) members(f func(key []byte) error) error {
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
		key, err := p.strBytes()
		if err != nil {
			return err
		}
		if p.fromScratch {
			key = bytes.Clone(key) // the value may reuse scratch
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

// numberBytes scans a number literal and returns its text, which aliases
// the line.
func (p *parser) numberBytes() ([]byte, error) {
	p.skipSpace()
	end, ok := scanNumber(p.data, p.pos)
	if !ok {
		p.pos = end
		return nil, p.errorf("malformed number")
	}
	b := p.data[p.pos:end]
	p.pos = end
	return b, nil
}

// number scans a number literal and returns its text.
func (p *parser) number() (string, error) {
	b, err := p.numberBytes()
	return string(b), err
}

// str decodes a string.
func (p *parser) str() (string, error) {
	b, err := p.strBytes()
	if err != nil {
		return "", err
	}
	return p.in.get(b), nil
}

// str decodes a string. Invalid UTF-8 and unpaired surrogates become
// U+FFFD, as with encoding/json. The bytes alias the line or a scratch
// buffer that the next string reuses.
func (p *parser) strBytes() ([]byte, error) {
	p.skipSpace()
	if p.pos >= len(p.data) || p.data[p.pos] != '"' {
		return nil, p.errorf("expected a string, found %s", p.describe())
	}
	p.pos++
	p.fromScratch = false
	start := p.pos
	// Fast path: no escapes, ASCII or valid UTF-8.
	for i := start; i < len(p.data); i++ {
		if plain[p.data[i]] {
			continue
		}
		c := p.data[i]
		if c == '"' { // everything before it was plain ASCII
			p.pos = i + 1
			return p.data[start:i], nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		// Non-ASCII: check the whole string once it ends.
		end := bytes.IndexByte(p.data[i:], '"')
		if end < 0 {
			break
		}
		s := p.data[start : i+end]
		if bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) || hasControl(s) {
			break
		}
		p.pos = i + end + 1
		return s, nil
	}
	p.fromScratch = true
	out := p.scratch[:0]
	defer func() { p.scratch = out[:0] }()
	i := start
	for {
		if i >= len(p.data) {
			p.pos = i
			return nil, p.errorf("unterminated string")
		}
		c := p.data[i]
		switch {
		case c == '"':
			p.pos = i + 1
			return out, nil
		case c < 0x20:
			p.pos = i
			return nil, p.errorf("control character 0x%02x in string", c)
		case c == '\\':
			if i+1 >= len(p.data) {
				p.pos = i
				return nil, p.errorf("unterminated string")
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
					return nil, p.errorf(`malformed \u escape`)
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
				return nil, p.errorf("invalid escape %s", strconv.QuoteRune(rune(p.data[i])))
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

// plain marks the ASCII bytes a string can hold unescaped.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func hasControl(s []byte) bool {
	for _, c := range s {
		if c < 0x20 {
			return true
		}
	}
	return false
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
	b, err := p.numberBytes()
	if err != nil {
		return 0, err
	}
	if u, ok := parseDigits(b); ok && u <= 1<<31-1 {
		return int64(u), nil
	}
	n, err := strconv.ParseInt(string(b), 10, bits)
	if err != nil {
		return 0, fmt.Errorf("want an integer, found %s", b)
	}
	return n, nil
}

// parseDigits parses a short run of decimal digits without allocating; ok
// is false for anything else, which the caller hands to strconv.
func parseDigits(b []byte) (n uint64, ok bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

func kindFromBytes(b []byte) (Kind, bool) {
	for i, n := range kindNames {
		if i != 0 && string(b) == n {
			return Kind(i), true
		}
	}
	return KindUnknown, false
}

// site parses a site string as ParseSite does, sharing the path string
// between events; the common form PATH or PATH[i,j] is parsed without
// allocating anything but the indices.
func (p *parser) site(b []byte) (Site, error) {
	if bytes.IndexByte(b, '#') >= 0 {
		return ParseSite(string(b))
	}
	if len(b) == 0 || b[len(b)-1] != ']' {
		if len(b) > 0 && b[0] != '/' {
			return ParseSite(string(b))
		}
		return Site{Path: p.in.get(b)}, nil
	}
	open := bytes.LastIndexByte(b, '[')
	if open < 0 || (open > 0 && b[0] != '/') {
		return ParseSite(string(b))
	}
	list := b[open+1 : len(b)-1]
	iter := make([]int, 0, bytes.Count(list, []byte{','})+1)
	for len(list) > 0 || len(iter) < cap(iter) {
		part := list
		if i := bytes.IndexByte(list, ','); i >= 0 {
			part, list = list[:i], list[i+1:]
		} else {
			list = nil
		}
		n, ok := parseDigits(part)
		if !ok || n > 1<<31-1 {
			return ParseSite(string(b))
		}
		iter = append(iter, int(n))
	}
	return Site{Path: p.in.get(b[:open]), Iter: iter}, nil
}

// parseTimeUTC parses the common form of trace times,
// 2006-01-02T15:04:05[.fraction]Z, faster than time.Parse; ok is false for
// anything else, which the caller hands to time.Parse.
func parseTimeUTC(b []byte) (time.Time, bool) {
	if len(b) < 20 || b[len(b)-1] != 'Z' || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return time.Time{}, false
	}
	num := func(s []byte) int {
		n := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	year, month, day := num(b[0:4]), num(b[5:7]), num(b[8:10])
	hour, minute, sec := num(b[11:13]), num(b[14:16]), num(b[17:19])
	nsec := 0
	switch frac := b[19 : len(b)-1]; {
	case len(frac) == 0:
	case len(frac) >= 2 && len(frac) <= 10 && frac[0] == '.':
		if nsec = num(frac[1:]); nsec < 0 {
			return time.Time{}, false
		}
		for range 10 - len(frac) {
			nsec *= 10
		}
	default:
		return time.Time{}, false
	}
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	if t.Day() != day { // such as February 30
		return time.Time{}, false
	}
	return t, true
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
func decodeEvent(line []byte, in *interner) (*Event, error) {
	p := parser{data: line, in: in}
	e := &Event{Branch: -1}
	attempt, hasAttempt := 0, false
	err := p.members(func(key []byte) error {
		var err error
		switch string(key) {
		case "seq":
			var b []byte
			if b, err = p.numberBytes(); err == nil {
				var ok bool
				if e.Seq, ok = parseDigits(b); !ok {
					if e.Seq, err = strconv.ParseUint(string(b), 10, 64); err != nil {
						err = fmt.Errorf("want a non-negative integer, found %s", b)
					}
				}
			}
		case "time":
			var b []byte
			if p.peekNull() {
				e.Time = time.Time{}
			} else if b, err = p.strBytes(); err == nil {
				var ok bool
				if e.Time, ok = parseTimeUTC(b); !ok {
					if e.Time, err = time.Parse(time.RFC3339Nano, string(b)); err != nil {
						err = fmt.Errorf("want an RFC 3339 time, found %q", b)
					}
				}
			}
		case "kind":
			var b []byte
			if b, err = p.strBytes(); err == nil {
				var ok bool
				if e.Kind, ok = kindFromBytes(b); !ok {
					err = fmt.Errorf("unknown event kind %q", b)
				}
			}
		case "site":
			var b []byte
			if p.peekNull() {
				e.Site = Site{Attempt: e.Site.Attempt}
			} else if b, err = p.strBytes(); err == nil {
				var site Site
				if site, err = p.site(b); err == nil {
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
			err = &fieldErr{string(key), err}
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
	err := p.members(func(key []byte) error {
		var err error
		switch string(key) {
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
	err := p.members(func(key []byte) error {
		var err error
		switch string(key) {
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
	err := p.members(func(key []byte) error {
		var err error
		switch string(key) {
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
