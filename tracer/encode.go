package tracer

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendEvent appends e as one JSON object (no newline) in the field order
// of DESIGN.md, leaving out fields that do not apply. On error b may hold a
// partial object; the caller truncates it.
func appendEvent(b []byte, e *Event) ([]byte, error) {
	var err error
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	if !e.Time.IsZero() {
		b = append(b, `,"time":"`...)
		b = appendTime(b, e.Time)
		b = append(b, '"')
	}
	b = append(b, `,"kind":"`...)
	b = append(b, e.Kind.String()...)
	b = append(b, '"')
	if e.Site.Path != "" || len(e.Site.Iter) > 0 {
		b = append(b, `,"site":`...)
		b = appendSiteInstance(b, e.Site)
	}
	if e.Site.Attempt != 0 {
		b = append(b, `,"attempt":`...)
		b = strconv.AppendInt(b, int64(e.Site.Attempt), 10)
	}
	if e.Node != "" {
		b = append(b, `,"node":`...)
		b = appendString(b, e.Node)
	}
	if e.Tool != "" {
		b = append(b, `,"tool":`...)
		b = appendString(b, e.Tool)
	}
	if e.Arguments != nil {
		b = append(b, `,"arguments":`...)
		if b, err = appendValue(b, e.Arguments); err != nil {
			return b, fieldError("arguments", err)
		}
	}
	if e.HasOutput {
		b = append(b, `,"output":`...)
		if b, err = appendValue(b, e.Output); err != nil {
			return b, fieldError("output", err)
		}
	}
	if e.Error != nil {
		b = append(b, `,"error":{"type":`...)
		b = appendString(b, e.Error.Type)
		b = append(b, `,"message":`...)
		b = appendString(b, e.Error.Message)
		b = append(b, '}')
	}
	if e.DelayMS != 0 && !math.IsNaN(e.DelayMS) && !math.IsInf(e.DelayMS, 0) {
		b = append(b, `,"delay_ms":`...)
		b = appendFloat(b, e.DelayMS)
	}
	if e.Branch != -1 {
		b = append(b, `,"branch":`...)
		b = strconv.AppendInt(b, int64(e.Branch), 10)
	}
	if o := e.Outcome; o != nil {
		b = append(b, `,"outcome":{"success":`...)
		b = strconv.AppendBool(b, o.Success)
		if o.Success || o.Value != nil {
			b = append(b, `,"value":`...)
			if b, err = appendValue(b, o.Value); err != nil {
				return b, fieldError("outcome", err)
			}
		}
		if !o.Success || o.ErrorType != "" || o.ErrorMessage != "" {
			b = append(b, `,"error_type":`...)
			b = appendString(b, o.ErrorType)
			b = append(b, `,"error_message":`...)
			b = appendString(b, o.ErrorMessage)
		}
		b = append(b, '}')
	}
	if e.Reason != "" {
		b = append(b, `,"reason":`...)
		b = appendString(b, e.Reason)
	}
	if e.Cause != "" {
		b = append(b, `,"cause":`...)
		b = appendString(b, e.Cause)
	}
	if e.Depth != 0 {
		b = append(b, `,"depth":`...)
		b = strconv.AppendInt(b, int64(e.Depth), 10)
	}
	if c := e.Counters; c != nil {
		b = append(b, `,"counters":{"nodes":`...)
		b = strconv.AppendInt(b, c.Nodes, 10)
		b = append(b, `,"tool_calls":`...)
		b = strconv.AppendInt(b, c.ToolCalls, 10)
		b = append(b, '}')
	}
	if e.Message != "" {
		b = append(b, `,"message":`...)
		b = appendString(b, e.Message)
	}
	if e.Data != nil {
		b = append(b, `,"data":`...)
		if b, err = appendObject(b, e.Data); err != nil {
			return b, fieldError("data", err)
		}
	}
	if e.Duration != 0 {
		b = append(b, `,"duration_ms":`...)
		b = appendDurationMS(b, e.Duration)
	}
	if e.Requested != 0 {
		b = append(b, `,"max_attempts":`...)
		b = strconv.AppendInt(b, int64(e.Requested), 10)
	}
	return append(b, '}'), nil
}

func fieldError(field string, err error) error {
	return fmt.Errorf("tracer: encoding field %q: %w", field, err)
}

// appendTime appends t in UTC in RFC 3339 form with as many fractional
// digits as needed (time.RFC3339Nano), without the cost of AppendFormat.
// Traces keep the instant, not the zone.
func appendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, time.RFC3339Nano)
	}
	hour, minute, sec := t.Clock()
	b = append(b,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+month/10), byte('0'+month%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10))
	if ns := t.Nanosecond(); ns != 0 {
		var digits [9]byte
		for i := 8; i >= 0; i-- {
			digits[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := 9
		for digits[n-1] == '0' {
			n--
		}
		b = append(b, '.')
		b = append(b, digits[:n]...)
	}
	return append(b, 'Z')
}

// appendSiteInstance appends the site without its attempt as a JSON string,
// the same text as s.Instance().String() without allocating it.
func appendSiteInstance(b []byte, s Site) []byte {
	b = appendString(b, s.Path)
	if len(s.Iter) == 0 {
		return b
	}
	b = b[:len(b)-1] // reopen the string
	b = append(b, '[')
	for i, n := range s.Iter {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, ']', '"')
}

// appendDurationMS appends d in milliseconds as an exact decimal with at most
// six fractional digits, so that reading it back gives the same nanoseconds.
func appendDurationMS(b []byte, d time.Duration) []byte {
	u := uint64(d)
	if d < 0 {
		b = append(b, '-')
		u = -u
	}
	b = strconv.AppendUint(b, u/1e6, 10)
	frac := u % 1e6
	if frac == 0 {
		return b
	}
	var digits [6]byte
	for i := 5; i >= 0; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 6
	for digits[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, digits[:n]...)
}

// appendFloat formats f as encoding/json does: the shortest representation
// that reads back exactly, in exponent form only for very small or large
// magnitudes.
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json does.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

var errBadNumber = errors.New("invalid json.Number")

// appendValue appends a JSON value. Decoded JSON (nil, bool, json.Number,
// string, []any, map[string]any) is written directly with map keys sorted;
// numbers keep their exact text. Other Go values go through encoding/json.
func appendValue(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case json.Number:
		if v == "" {
			return append(b, '0'), nil
		}
		if !isNumber(string(v)) {
			return b, fmt.Errorf("%w %q", errBadNumber, string(v))
		}
		return append(b, v...), nil
	case string:
		return appendString(b, v), nil
	case []any:
		b = append(b, '[')
		var err error
		for i, x := range v {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendValue(b, x); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		if v == nil {
			return append(b, "null"...), nil
		}
		return appendObject(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return b, fmt.Errorf("unsupported number %v", v)
		}
		return appendFloat(b, v), nil
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			return b, err
		}
		return append(b, raw...), nil
	}
}

// appendObject appends m with its keys in sorted order.
func appendObject(b []byte, m map[string]any) ([]byte, error) {
	var stack [16]string
	keys := stack[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		if b, err = appendValue(b, m[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// isNumber reports whether s is a JSON number literal.
func isNumber(s string) bool {
	n, ok := scanNumber(s, 0)
	return ok && n == len(s)
}

// scanNumber returns the end of the JSON number starting at s[i], and
// whether one is there.
func scanNumber[T string | []byte](s T, i int) (int, bool) {
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i >= len(s) {
		return i, false
	}
	switch {
	case s[i] == '0':
		i++
	case s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return i, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return i, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return i, false
		}
	}
	return i, true
}
