package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// Values in this package are decoded JSON: nil, bool, json.Number, string,
// []any and map[string]any. Numbers stay json.Number end to end, so an
// integer beyond 2^53 passes through unchanged and 1 stays distinct from 1.0.

// DecodeValue decodes one JSON document into a value, keeping numbers exact.
func DecodeValue(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("unexpected data after the JSON value at offset %d", dec.InputOffset())
	}
	return v, nil
}

// EncodeValue encodes a value as compact JSON. Object keys come out sorted.
func EncodeValue(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Truthy reports whether v is true by Python's rules: null, false, 0, 0.0,
// "", [] and {} are false; everything else, including "false" and "0", is true.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			// A float, as Python reads it: 1e-400 underflows to 0.0.
			if f, err := strconv.ParseFloat(string(x), 64); err == nil || f == 0 {
				return f != 0
			}
		}
		return !isZeroNumber(string(x))
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	case float64:
		return x != 0
	case int:
		return x != 0
	case int64:
		return x != 0
	}
	return true
}

func isZeroNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	mant := s
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
	}
	for _, c := range mant {
		if c != '0' && c != '.' {
			return false
		}
	}
	return true
}

// IsInteger reports whether the number's value is integral (JSON Schema's
// "integer": 1.0 is an integer, 1.5 is not).
func IsInteger(n json.Number) bool {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		return true
	}
	r, ok := new(big.Rat).SetString(s)
	return ok && r.IsInt()
}

// NumberRat returns the exact rational value of a JSON number.
func NumberRat(n json.Number) (*big.Rat, bool) {
	return new(big.Rat).SetString(string(n))
}

// CompareNumbers compares two JSON numbers by exact value: -1, 0 or +1.
func CompareNumbers(a, b json.Number) int {
	if a == b {
		return 0
	}
	ra, ok1 := NumberRat(a)
	rb, ok2 := NumberRat(b)
	if !ok1 || !ok2 {
		return strings.Compare(string(a), string(b))
	}
	return ra.Cmp(rb)
}

// Equal compares two values as decoded JSON: object key order is ignored,
// numbers compare by value (1 equals 1.0) and booleans are not numbers.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && CompareNumbers(x, y) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !Equal(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

// CloneValue returns a deep copy of v, so a provider's caller cannot mutate
// what the provider keeps (replay entries, scripted outputs).
func CloneValue(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = CloneValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = CloneValue(e)
		}
		return out
	}
	return v
}

// TypeName is the JSON type of a value: null, boolean, number, string,
// array or object.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64, int, int64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// PyRepr renders a value the way Python's repr would, as the library's
// error messages and inspect output do: 'text', True, None, [1, 2].
func PyRepr(v any) string {
	var b strings.Builder
	pyRepr(&b, v)
	return b.String()
}

func pyRepr(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case json.Number:
		b.WriteString(string(x))
	case string:
		b.WriteString(pyQuote(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			pyRepr(b, e)
		}
		b.WriteByte(']')
	case []string:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyQuote(e))
		}
		b.WriteByte(']')
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyQuote(k))
			b.WriteString(": ")
			pyRepr(b, x[k])
		}
		b.WriteByte('}')
	default:
		fmt.Fprint(b, x)
	}
}

func pyQuote(s string) string {
	q := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}
