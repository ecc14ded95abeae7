package tools

import (
	"context"
	"errors"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/treelang/treelang/engine"
)

// FuzzParse: Parse never panics; a toolbox it accepts has unique tool
// names and survives a round trip through MarshalJSON unchanged.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, tc := range parseErrorCases {
		f.Add([]byte(tc.src))
	}
	f.Add([]byte(`{"tools":[{"name":"s","properties":{"b":{},"a":{}},"behavior":{"script":[{"builtin":"subtract","delay_ms":1}],"then":{"error":"ValueError","message":"m"}}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := Parse(data, "fuzz.json")
		if err != nil {
			return
		}
		names := map[string]bool{}
		for _, tl := range tb.tools {
			if names[tl.def.Name] {
				t.Fatalf("duplicate tool %q accepted", tl.def.Name)
			}
			names[tl.def.Name] = true
		}
		out, err := tb.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		back, err := Parse(out, "roundtrip.json")
		if err != nil {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
		if !sameTools(tb, back) {
			t.Fatalf("round trip changed the tools:\n%s", out)
		}
		for i, tl := range tb.tools {
			if !slices.Equal(tl.def.PropertyNames(), back.tools[i].def.PropertyNames()) {
				t.Fatalf("round trip changed property order of %q", tl.def.Name)
			}
		}
	})
}

// FuzzBuiltins: no builtin panics, whatever the operands, and every
// failure is a ToolExecutionError.
func FuzzBuiltins(f *testing.F) {
	for _, tc := range builtinCases {
		f.Add(tc.tool, tc.args)
	}
	tb := Builtins()
	f.Fuzz(func(t *testing.T, tool, args string) {
		v, err := engine.DecodeValue([]byte(args))
		m, ok := v.(map[string]any)
		if err != nil || !ok || tb.byName[tool] == nil {
			return
		}
		out, err := tb.CallTool(context.Background(), &engine.Call{Tool: tool, Arguments: m})
		if err != nil {
			if !errors.Is(err, engine.ToolExecutionError) {
				t.Fatalf("%s(%s): %v is not a ToolExecutionError", tool, args, err)
			}
			return
		}
		if _, err := engine.EncodeValue(out); err != nil {
			t.Fatalf("%s(%s) = %#v, which does not encode: %v", tool, args, out, err)
		}
	})
}

// FuzzIntArith checks exact int arithmetic against math/big.
func FuzzIntArith(f *testing.F) {
	f.Add(int64(1), int64(2), uint8(0))
	f.Add(int64(math.MaxInt64), int64(1), uint8(0))
	f.Add(int64(math.MinInt64), int64(-1), uint8(2))
	f.Add(int64(math.MinInt64), int64(1), uint8(1))
	f.Fuzz(func(t *testing.T, a, b int64, shift uint8) {
		// Scale a past int64 sometimes, to reach the big.Int paths.
		x := new(big.Int).Lsh(big.NewInt(a), uint(shift%80))
		y := big.NewInt(b)
		for i, op := range []byte{'+', '-', '*'} {
			got, err := arith(op, bigNum(new(big.Int).Set(x)), bigNum(new(big.Int).Set(y)))
			if err != nil {
				t.Fatal(err)
			}
			want := new(big.Int)
			switch i {
			case 0:
				want.Add(x, y)
			case 1:
				want.Sub(x, y)
			case 2:
				want.Mul(x, y)
			}
			if v, _ := got.value(); string(v) != want.String() {
				t.Fatalf("%s %c %s = %s, want %s", x, op, y, v, want)
			}
		}
		if c := cmpNum(bigNum(new(big.Int).Set(x)), intNum(b)); c != x.Cmp(y) {
			t.Fatalf("cmp(%s, %s) = %d", x, y, c)
		}
	})
}

// FuzzFormatFloat: the repr round-trips and always reads as a float.
func FuzzFormatFloat(f *testing.F) {
	for _, x := range []float64{0, 1, 0.1, 1e16, 1e-5, 5e-324, math.MaxFloat64, 123456789012345678} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return
		}
		s := formatFloat(x)
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || back != x || math.Signbit(back) != math.Signbit(x) {
			t.Fatalf("formatFloat(%v) = %q, reads back as %v, %v", x, s, back, err)
		}
		if !strings.ContainsAny(s, ".e") {
			t.Fatalf("formatFloat(%v) = %q reads as an int", x, s)
		}
		if n, ok := parseNumber(s); !ok || !n.float || n.f != x {
			t.Fatalf("parseNumber(%q) = %+v, %v", s, n, ok)
		}
	})
}
