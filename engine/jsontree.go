package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
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

// canonical writes v as compact JSON keeping key order and number text:
// Python's json.dumps of the parsed model, where 1 and 1.0 differ and key
// order matters.
func (v *jval) canonical(b *strings.Builder) {
	switch v.kind {
	case 'z':
		b.WriteString("null")
	case 'b':
		b.WriteString(strconv.FormatBool(v.b))
	case 'n':
		b.WriteString(v.s)
	case 's':
		data, _ := json.Marshal(v.s)
		b.Write(data)
	case 'a':
		b.WriteByte('[')
		for i, e := range v.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			e.canonical(b)
		}
		b.WriteByte(']')
	case 'o':
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			data, _ := json.Marshal(k)
			b.Write(data)
			b.WriteByte(':')
			v.vals[i].canonical(b)
		}
		b.WriteByte('}')
	}
}

// decodeTree decodes one JSON document into a jval tree in a single pass.
func decodeTree(data []byte) (*jval, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		v   *jval
		key string
		has bool // an object key was read and awaits its value
	}
	var stack []frame
	var root *jval
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if root == nil || len(stack) > 0 {
				return nil, syntaxError(data, int64(len(data)), "unexpected end of JSON input")
			}
			return root, nil
		}
		if err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				return nil, syntaxError(data, se.Offset, se.Error())
			}
			return nil, syntaxError(data, dec.InputOffset(), err.Error())
		}
		var v *jval
		closing := false
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				v = &jval{kind: 'o'}
			case '[':
				v = &jval{kind: 'a'}
			default:
				closing = true
			}
		case nil:
			v = &jval{kind: 'z'}
		case bool:
			v = &jval{kind: 'b', b: t}
		case json.Number:
			v = &jval{kind: 'n', s: string(t)}
		case string:
			if n := len(stack); n > 0 && stack[n-1].v.kind == 'o' && !stack[n-1].has {
				stack[n-1].key, stack[n-1].has = t, true
				continue
			}
			v = &jval{kind: 's', s: t}
		}
		if closing {
			done := stack[len(stack)-1].v
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				root = done
				if dec.More() {
					return nil, syntaxError(data, dec.InputOffset(), "unexpected data after the top-level value")
				}
			}
			continue
		}
		if n := len(stack); n > 0 {
			parent := &stack[n-1]
			if parent.v.kind == 'o' {
				if i := indexOf(parent.v.keys, parent.key); i >= 0 {
					parent.v.vals[i] = v // duplicate key: last value wins, first position kept
				} else {
					parent.v.keys = append(parent.v.keys, parent.key)
					parent.v.vals = append(parent.v.vals, v)
				}
				parent.has = false
			} else {
				parent.v.arr = append(parent.v.arr, v)
			}
		}
		if v.kind == 'o' || v.kind == 'a' {
			if len(stack) >= MaxNesting {
				return nil, syntaxError(data, dec.InputOffset(), fmt.Sprintf("nesting deeper than %d levels", MaxNesting))
			}
			stack = append(stack, frame{v: v})
			continue
		}
		if len(stack) == 0 {
			root = v
			if dec.More() {
				return nil, syntaxError(data, dec.InputOffset(), "unexpected data after the top-level value")
			}
		}
	}
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
