package tools

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/treelang/treelang/engine"
)

// callJSON calls a tool with arguments written as JSON and returns the
// result as compact JSON, so number spelling ("3" vs "3.0") is checked.
func callJSON(t *testing.T, p engine.ToolProvider, name, args string) (string, error) {
	t.Helper()
	v, err := engine.DecodeValue([]byte(args))
	if err != nil {
		t.Fatalf("bad test arguments %s: %v", args, err)
	}
	m, _ := v.(map[string]any)
	out, err := p.CallTool(context.Background(), &engine.Call{Tool: name, Arguments: m})
	if err != nil {
		return "", err
	}
	text, err := engine.EncodeValue(out)
	if err != nil {
		t.Fatalf("%s(%s) returned a value that does not encode: %#v: %v", name, args, out, err)
	}
	return string(text), nil
}

const (
	two70      = "1180591620717411303424" // 2^70
	two70plus1 = "1180591620717411303425"
	maxInt64   = "9223372036854775807"
	minInt64   = "-9223372036854775808"
	ten400     = "1" + "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
)

type builtinCase struct {
	tool, args string
	want       string // compact JSON of the result
	err        string // substring of a ToolExecutionError's message
}

// The expected values are what Python 3.12+ computes for the same operands
// (json.loads, then the operator).
var builtinCases = []builtinCase{
	// add: exact ints, Python floats, booleans as ints.
	{tool: "add", args: `{"a":1,"b":2}`, want: `3`},
	{tool: "add", args: `{"a":` + two70 + `,"b":1}`, want: two70plus1},
	{tool: "add", args: `{"a":` + maxInt64 + `,"b":1}`, want: `9223372036854775808`},
	{tool: "add", args: `{"a":` + minInt64 + `,"b":-1}`, want: `-9223372036854775809`},
	{tool: "add", args: `{"a":0.1,"b":0.2}`, want: `0.30000000000000004`},
	{tool: "add", args: `{"a":1.5,"b":1.5}`, want: `3.0`},
	{tool: "add", args: `{"a":1,"b":2.0}`, want: `3.0`},
	{tool: "add", args: `{"a":1e16,"b":0}`, want: `1e+16`},
	{tool: "add", args: `{"a":1E2,"b":0}`, want: `100.0`},
	{tool: "add", args: `{"a":9007199254740993,"b":0.0}`, want: `9007199254740992.0`},
	{tool: "add", args: `{"a":-0.0,"b":-0.0}`, want: `-0.0`},
	{tool: "add", args: `{"a":true,"b":1}`, want: `2`},
	{tool: "add", args: `{"a":true,"b":true}`, want: `2`},
	{tool: "add", args: `{"a":false,"b":0.5}`, want: `0.5`},
	{tool: "add", args: `{"a":"x","b":1}`, err: "add: operand 'a' must be a number, got string"},
	{tool: "add", args: `{"a":1,"b":"2"}`, err: "add: operand 'b' must be a number, got string"},
	{tool: "add", args: `{"a":null,"b":1}`, err: "add: operand 'a' must be a number, got null"},
	{tool: "add", args: `{"a":[1],"b":1}`, err: "add: operand 'a' must be a number, got array"},
	{tool: "add", args: `{"a":1e308,"b":1e308}`, err: "add: result is not a finite number"},
	{tool: "add", args: `{"a":` + ten400 + `,"b":1.0}`, err: "add: int too large to convert to float"},
	{tool: "add", args: `{"a":1}`, err: "add: expects 2 arguments (builtin add), got 1"},

	// subtract, multiply.
	{tool: "subtract", args: `{"a":5,"b":7}`, want: `-2`},
	{tool: "subtract", args: `{"a":` + minInt64 + `,"b":1}`, want: `-9223372036854775809`},
	{tool: "subtract", args: `{"a":` + two70plus1 + `,"b":` + two70 + `}`, want: `1`},
	{tool: "subtract", args: `{"a":0.3,"b":0.1}`, want: `0.19999999999999998`},
	{tool: "subtract", args: `{"a":{},"b":1}`, err: "subtract: operand 'a' must be a number, got object"},
	{tool: "multiply", args: `{"a":4294967296,"b":4294967296}`, want: `18446744073709551616`},
	{tool: "multiply", args: `{"a":` + minInt64 + `,"b":-1}`, want: `9223372036854775808`},
	{tool: "multiply", args: `{"a":-1,"b":` + minInt64 + `}`, want: `9223372036854775808`},
	{tool: "multiply", args: `{"a":0,"b":` + two70 + `}`, want: `0`},
	{tool: "multiply", args: `{"a":2.5,"b":2}`, want: `5.0`},
	{tool: "multiply", args: `{"a":0.1,"b":3}`, want: `0.30000000000000004`},
	{tool: "multiply", args: `{"a":true,"b":7}`, want: `7`},
	{tool: "multiply", args: `{"a":1e200,"b":1e200}`, err: "multiply: result is not a finite number"},

	// divide: true division, always a float.
	{tool: "divide", args: `{"a":6,"b":3}`, want: `2.0`},
	{tool: "divide", args: `{"a":1,"b":3}`, want: `0.3333333333333333`},
	{tool: "divide", args: `{"a":7,"b":-2}`, want: `-3.5`},
	{tool: "divide", args: `{"a":true,"b":2}`, want: `0.5`},
	{tool: "divide", args: `{"a":` + two70 + `,"b":2}`, want: `5.902958103587057e+20`},
	{tool: "divide", args: `{"a":` + ten400 + `,"b":1` + ten400[2:] + `}`, want: `10.0`},
	{tool: "divide", args: `{"a":1,"b":0}`, err: "division by zero"},
	{tool: "divide", args: `{"a":1.0,"b":0.0}`, err: "division by zero"},
	{tool: "divide", args: `{"a":1,"b":false}`, err: "division by zero"},
	{tool: "divide", args: `{"a":` + ten400 + `,"b":1}`, err: "integer division result too large for a float"},
	{tool: "divide", args: `{"a":1,"b":"0"}`, err: "divide: operand 'b' must be a number, got string"},

	// greater_than, less_than: exact numbers, strings by code point.
	{tool: "greater_than", args: `{"a":2,"b":1}`, want: `true`},
	{tool: "greater_than", args: `{"a":1,"b":1.0}`, want: `false`},
	{tool: "greater_than", args: `{"a":9007199254740993,"b":9007199254740992.0}`, want: `true`},
	{tool: "greater_than", args: `{"a":` + two70plus1 + `,"b":` + two70 + `}`, want: `true`},
	{tool: "greater_than", args: `{"a":true,"b":0}`, want: `true`},
	{tool: "greater_than", args: `{"a":"b","b":"a"}`, want: `true`},
	{tool: "greater_than", args: `{"a":"é","b":"z"}`, want: `true`},
	{tool: "greater_than", args: `{"a":"1","b":1}`, err: "greater_than: operands 'a' and 'b' must be two numbers or two strings, got string and number"},
	{tool: "less_than", args: `{"a":1,"b":2}`, want: `true`},
	{tool: "less_than", args: `{"a":0.1,"b":0.1}`, want: `false`},
	{tool: "less_than", args: `{"a":9007199254740992.0,"b":9007199254740993}`, want: `true`},
	{tool: "less_than", args: `{"a":` + ten400 + `,"b":1e400}`, want: `true`},
	{tool: "less_than", args: `{"a":-1e400,"b":` + minInt64 + `}`, want: `true`},
	{tool: "less_than", args: `{"a":"apple","b":"apples"}`, want: `true`},
	{tool: "less_than", args: `{"a":[1],"b":[2]}`, err: "got array and array"},
	{tool: "less_than", args: `{"a":null,"b":1}`, err: "got null and number"},

	// equals: Python's ==.
	{tool: "equals", args: `{"a":1,"b":1.0}`, want: `true`},
	{tool: "equals", args: `{"a":1,"b":true}`, want: `true`},
	{tool: "equals", args: `{"a":0,"b":false}`, want: `true`},
	{tool: "equals", args: `{"a":2,"b":true}`, want: `false`},
	{tool: "equals", args: `{"a":` + two70plus1 + `,"b":` + two70 + `}`, want: `false`},
	{tool: "equals", args: `{"a":{"x":1,"y":[1,true]},"b":{"y":[1.0,1],"x":1.0}}`, want: `true`},
	{tool: "equals", args: `{"a":{"x":1},"b":{"x":1,"y":2}}`, want: `false`},
	{tool: "equals", args: `{"a":[1,2],"b":[2,1]}`, want: `false`},
	{tool: "equals", args: `{"a":"1","b":1}`, want: `false`},
	{tool: "equals", args: `{"a":null,"b":null}`, want: `true`},
	{tool: "equals", args: `{"a":null,"b":false}`, want: `false`},
	{tool: "equals", args: `{"a":"x","b":"x"}`, want: `true`},

	// is_odd, is_even.
	{tool: "is_odd", args: `{"value":3}`, want: `true`},
	{tool: "is_odd", args: `{"value":4}`, want: `false`},
	{tool: "is_odd", args: `{"value":-3}`, want: `true`},
	{tool: "is_odd", args: `{"value":` + two70plus1 + `}`, want: `true`},
	{tool: "is_odd", args: `{"value":true}`, want: `true`},
	{tool: "is_odd", args: `{"value":5.0}`, want: `true`},
	{tool: "is_odd", args: `{"value":1.5}`, err: "is_odd: operand 'value' must be an integer, got 1.5"},
	{tool: "is_odd", args: `{"value":"3"}`, err: "is_odd: operand 'value' must be an integer, got string"},
	{tool: "is_even", args: `{"value":0}`, want: `true`},
	{tool: "is_even", args: `{"value":-2}`, want: `true`},
	{tool: "is_even", args: `{"value":` + two70 + `}`, want: `true`},
	{tool: "is_even", args: `{"value":1e300}`, want: `true`},
	{tool: "is_even", args: `{"value":7}`, want: `false`},
	{tool: "is_even", args: `{"value":null}`, err: "is_even: operand 'value' must be an integer, got null"},

	// negate.
	{tool: "negate", args: `{"value":5}`, want: `-5`},
	{tool: "negate", args: `{"value":0}`, want: `0`},
	{tool: "negate", args: `{"value":` + minInt64 + `}`, want: `9223372036854775808`},
	{tool: "negate", args: `{"value":-` + two70 + `}`, want: two70},
	{tool: "negate", args: `{"value":0.0}`, want: `-0.0`},
	{tool: "negate", args: `{"value":1.5}`, want: `-1.5`},
	{tool: "negate", args: `{"value":true}`, want: `false`},
	{tool: "negate", args: `{"value":false}`, want: `true`},
	{tool: "negate", args: `{"value":"x"}`, err: "negate: operand 'value' must be a number or a boolean, got string"},

	// concat.
	{tool: "concat", args: `{"a":"ab","b":"cd"}`, want: `"abcd"`},
	{tool: "concat", args: `{"a":"","b":"é"}`, want: `"é"`},
	{tool: "concat", args: `{"a":[1],"b":[2,[3]]}`, want: `[1,2,[3]]`},
	{tool: "concat", args: `{"a":[],"b":[]}`, want: `[]`},
	{tool: "concat", args: `{"a":"a","b":[1]}`, err: "concat: operand 'b' must be a string like the first, got array"},
	{tool: "concat", args: `{"a":[1],"b":"a"}`, err: "concat: operand 'b' must be an array like the first, got string"},
	{tool: "concat", args: `{"a":1,"b":2}`, err: "concat: operand 'a' must be a string or an array, got number"},

	// length: code points, items, keys.
	{tool: "length", args: `{"value":"héllo"}`, want: `5`},
	{tool: "length", args: `{"value":"😀"}`, want: `1`},
	{tool: "length", args: `{"value":""}`, want: `0`},
	{tool: "length", args: `{"value":[1,2,3]}`, want: `3`},
	{tool: "length", args: `{"value":{"a":1,"b":2}}`, want: `2`},
	{tool: "length", args: `{"value":5}`, err: "length: operand 'value' must be a string, an array or an object, got number"},
	{tool: "length", args: `{"value":true}`, err: "got boolean"},

	// sum: Python 3.12+ sum() (compensated float summation).
	{tool: "sum", args: `{"values":[1,2,3]}`, want: `6`},
	{tool: "sum", args: `{"values":[]}`, want: `0`},
	{tool: "sum", args: `{"values":[true,true,1]}`, want: `3`},
	{tool: "sum", args: `{"values":[` + maxInt64 + `,1]}`, want: `9223372036854775808`},
	{tool: "sum", args: `{"values":[` + two70 + `,1,-1]}`, want: two70},
	{tool: "sum", args: `{"values":[1,2.5]}`, want: `3.5`},
	{tool: "sum", args: `{"values":[0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1]}`, want: `1.0`},
	{tool: "sum", args: `{"values":[0.1,0.2,0.3]}`, want: `0.6`},
	{tool: "sum", args: `{"values":[` + two70 + `,0.5]}`, want: `1.1805916207174113e+21`},
	{tool: "sum", args: `{"values":[1e308,1e308]}`, err: "sum: result is not a finite number"},
	{tool: "sum", args: `{"values":[1,"x"]}`, err: "sum: item 1 of 'values' must be a number, got string"},
	{tool: "sum", args: `{"values":[0.5,null]}`, err: "sum: item 1 of 'values' must be a number, got null"},
	{tool: "sum", args: `{"values":"abc"}`, err: "sum: operand 'values' must be an array of numbers, got string"},

	// range with the builtin definition's single operand, stop.
	{tool: "range", args: `{"stop":5}`, want: `[0,1,2,3,4]`},
	{tool: "range", args: `{"stop":0}`, want: `[]`},
	{tool: "range", args: `{"stop":-3}`, want: `[]`},
	{tool: "range", args: `{"stop":3.0}`, want: `[0,1,2]`},
	{tool: "range", args: `{"stop":true}`, want: `[0]`},
	{tool: "range", args: `{"stop":2.5}`, err: "range: operand 'stop' must be an integer, got 2.5"},
	{tool: "range", args: `{"stop":"3"}`, err: "range: operand 'stop' must be an integer, got string"},
	{tool: "range", args: `{"stop":100000000}`, err: "range: range would have 100000000 items, more than the limit of 10000000"},
	{tool: "range", args: `{"stop":` + two70 + `}`, err: "range: operand 'stop' is too large for a range"},

	// identity.
	{tool: "identity", args: `{"value":` + two70plus1 + `}`, want: two70plus1},
	{tool: "identity", args: `{"value":0.30000000000000004}`, want: `0.30000000000000004`},
	{tool: "identity", args: `{"value":{"x":[1,"two",null]}}`, want: `{"x":[1,"two",null]}`},
	{tool: "identity", args: `{"value":null}`, want: `null`},
	{tool: "identity", args: `{}`, err: "identity: expects at least 1 argument (builtin identity), got 0"},
}

func TestBuiltins(t *testing.T) {
	tb := Builtins()
	for _, tc := range builtinCases {
		t.Run(tc.tool+tc.args, func(t *testing.T) {
			got, err := callJSON(t, tb, tc.tool, tc.args)
			if tc.err != "" {
				if err == nil {
					t.Fatalf("%s(%s) = %s, want error %q", tc.tool, tc.args, got, tc.err)
				}
				if !errors.Is(err, engine.ToolExecutionError) {
					t.Errorf("error %v is a %s, want a ToolExecutionError", err, engine.TypeOf(err))
				}
				if !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error %q does not contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s(%s): %v", tc.tool, tc.args, err)
			}
			if got != tc.want {
				t.Errorf("%s(%s) = %s, want %s", tc.tool, tc.args, got, tc.want)
			}
		})
	}
}

// Every builtin has at least one test case, success and failure.
func TestBuiltinCasesCoverEveryBuiltin(t *testing.T) {
	ok, failed := map[string]bool{}, map[string]bool{}
	for _, tc := range builtinCases {
		if tc.err == "" {
			ok[tc.tool] = true
		} else {
			failed[tc.tool] = true
		}
	}
	for _, name := range BuiltinNames() {
		if !ok[name] {
			t.Errorf("no successful case for %s", name)
		}
		if !failed[name] && name != "equals" {
			t.Errorf("no failing case for %s", name)
		}
	}
}

func TestBuiltinsDefinitions(t *testing.T) {
	ctx := context.Background()
	tb := Builtins()
	defs, err := tb.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
		if !d.Legacy() {
			t.Errorf("%s: not a legacy definition", d.Name)
		}
		for _, p := range d.Properties {
			if len(p.Schema) != 0 {
				t.Errorf("%s.%s: schema %v, want {}", d.Name, p.Name, p.Schema)
			}
		}
		got, err := tb.Tool(ctx, d.Name)
		if err != nil || got != d {
			t.Errorf("Tool(%q) = %v, %v; want the listed definition", d.Name, got, err)
		}
	}
	want := []string{"add", "subtract", "multiply", "divide", "greater_than", "less_than", "equals",
		"is_odd", "is_even", "negate", "concat", "length", "sum", "range", "identity"}
	if !slices.Equal(names, want) || !slices.Equal(BuiltinNames(), want) {
		t.Errorf("ListTools names %v, BuiltinNames %v; want %v", names, BuiltinNames(), want)
	}
	props := map[string][]string{
		"add": {"a", "b"}, "divide": {"a", "b"}, "equals": {"a", "b"}, "concat": {"a", "b"},
		"identity": {"value"}, "is_odd": {"value"}, "length": {"value"}, "sum": {"values"}, "range": {"stop"},
	}
	for name, want := range props {
		d, _ := tb.Tool(ctx, name)
		if got := d.PropertyNames(); !slices.Equal(got, want) {
			t.Errorf("%s properties %v, want %v", name, got, want)
		}
	}
	if _, err := tb.Tool(ctx, "missing"); !errors.Is(err, engine.ToolNotFoundError) {
		t.Errorf("Tool(missing) = %v, want ToolNotFoundError", err)
	}
	if _, err := tb.CallTool(ctx, &engine.Call{Tool: "missing"}); !errors.Is(err, engine.ToolNotFoundError) {
		t.Errorf("CallTool(missing) = %v, want ToolNotFoundError", err)
	}
	// A fresh toolbox per call: counters are not shared.
	if _, err := tb.CallTool(ctx, &engine.Call{Tool: "identity", Arguments: map[string]any{"value": 1}}); err != nil {
		t.Fatal(err)
	}
	if tb.Calls("identity") != 1 || Builtins().Calls("identity") != 0 {
		t.Errorf("Calls: %d and %d, want 1 and 0", tb.Calls("identity"), Builtins().Calls("identity"))
	}
}

// identity returns the very value it was given: no copy.
func TestIdentityReturnsItsArgument(t *testing.T) {
	arg := map[string]any{"k": []any{"v"}}
	out, err := Builtins().CallTool(context.Background(), &engine.Call{Tool: "identity", Arguments: map[string]any{"value": arg}})
	if err != nil {
		t.Fatal(err)
	}
	m, ok := out.(map[string]any)
	if !ok {
		t.Fatalf("identity returned %T", out)
	}
	m["added"] = true
	if _, ok := arg["added"]; !ok {
		t.Error("identity copied its argument")
	}
}

func TestFormatFloat(t *testing.T) {
	tenth, fifth := 0.1, 0.2 // variables: constant arithmetic would be exact
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{3, "3.0"},
		{-2.5, "-2.5"},
		{tenth + fifth, "0.30000000000000004"},
		{1e16, "1e+16"},
		{1e22, "1e+22"},
		{9999999999999998, "9999999999999998.0"},
		{1234567890123456, "1234567890123456.0"},
		{123456789012345678, "1.2345678901234568e+17"},
		{0.0001, "0.0001"},
		{0.00001, "1e-05"},
		{1.5e-5, "1.5e-05"},
		{1.5e300, "1.5e+300"},
		{5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{1.0 / 3, "0.3333333333333333"},
		{2.0 / 3, "0.6666666666666666"},
		{100, "100.0"},
	} {
		if got := formatFloat(tc.f); got != tc.want {
			t.Errorf("formatFloat(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

// Number literals that are not JSON numbers are not numbers.
func TestParseNumberRejectsNonJSON(t *testing.T) {
	for _, s := range []string{"", "-", "+5", "0x1f", "1_000", "inf", "NaN", "Infinity", "1.5x", "+1.5", "0x1p3"} {
		if _, ok := parseNumber(s); ok {
			t.Errorf("parseNumber(%q) accepted a non-JSON number", s)
		}
	}
	for _, s := range []string{"0", "-0", "12", "-1.5", "1e400", "1E-400", "2.5e+3"} {
		if _, ok := parseNumber(s); !ok {
			t.Errorf("parseNumber(%q) rejected a JSON number", s)
		}
	}
}

func TestNoTools(t *testing.T) {
	ctx := context.Background()
	p := NoTools()
	defs, err := p.ListTools(ctx)
	if err != nil || len(defs) != 0 {
		t.Errorf("ListTools = %v, %v; want none", defs, err)
	}
	if _, err := p.Tool(ctx, "add"); !errors.Is(err, engine.ToolNotFoundError) || err.Error() != "Tool 'add' not found." {
		t.Errorf("Tool = %v, want ToolNotFoundError", err)
	}
	_, err = p.CallTool(ctx, &engine.Call{Tool: "add"})
	if !errors.Is(err, engine.ToolExecutionError) ||
		err.Error() != "CLI has no implementation for tool 'add'; use a replay fixture" {
		t.Errorf("CallTool = %v, want upstream's ToolExecutionError", err)
	}
}
