package jsonschema

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// jsonEqual is JSON Schema equality (const, enum, uniqueItems): numbers
// compare by exact value (1 equals 1.0), booleans are not numbers, arrays
// compare element-wise and objects ignore key order.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
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
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	}
	if isNumberKind(a) {
		if !isNumberKind(b) {
			return false
		}
		dx, okx := numberOf(a)
		dy, oky := numberOf(b)
		if !okx || !oky {
			return okx == oky && a == b
		}
		return cmpDec(&dx, &dy) == 0
	}
	return false
}

// canonicalKey writes a canonical encoding of v such that two values are
// jsonEqual exactly when their keys are equal. It is used by uniqueItems on
// large arrays.
func canonicalKey(sb *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		sb.WriteString("n")
	case bool:
		if x {
			sb.WriteString("t")
		} else {
			sb.WriteString("f")
		}
	case string:
		b, _ := json.Marshal(x)
		sb.WriteByte('s')
		sb.Write(b)
	case []any:
		sb.WriteByte('[')
		for _, e := range x {
			canonicalKey(sb, e)
			sb.WriteByte(',')
		}
		sb.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		sb.WriteByte('{')
		for _, k := range keys {
			b, _ := json.Marshal(k)
			sb.Write(b)
			sb.WriteByte(':')
			canonicalKey(sb, x[k])
			sb.WriteByte(',')
		}
		sb.WriteByte('}')
	default:
		d, ok := numberOf(v)
		if !ok {
			sb.WriteString("?") // only ever a bucket; jsonEqual decides
			return
		}
		// Normal form: sign, significant digits, adjusted exponent.
		sb.WriteByte('d')
		if d.neg {
			sb.WriteByte('-')
		}
		for k := d.lo; k <= d.hi; k++ {
			sb.WriteByte(d.digit(k))
		}
		if !d.isZero() {
			sb.WriteByte('e')
			sb.WriteString(strconv.Itoa(d.adj))
		}
	}
}
