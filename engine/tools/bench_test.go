package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/treelang/treelang/engine"
)

// BenchmarkCallToolIdentity is the hot path of a map over many identity
// calls: it must stay allocation-free.
func BenchmarkCallToolIdentity(b *testing.B) {
	tb := Builtins()
	ctx := context.Background()
	call := &engine.Call{Tool: "identity", Arguments: map[string]any{"value": json.Number("7")}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tb.CallTool(ctx, call); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCallToolIdentityParallel(b *testing.B) {
	tb := Builtins()
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		call := &engine.Call{Tool: "identity", Arguments: map[string]any{"value": json.Number("7")}}
		for pb.Next() {
			if _, err := tb.CallTool(ctx, call); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkBuiltins runs a few of TestBuiltins' cases.
func BenchmarkBuiltins(b *testing.B) {
	tb := Builtins()
	ctx := context.Background()
	for _, tc := range builtinCases {
		switch tc.tool + tc.args {
		case `add{"a":1,"b":2}`, `add{"a":` + two70 + `,"b":1}`, `add{"a":0.1,"b":0.2}`,
			`divide{"a":6,"b":3}`, `equals{"a":1,"b":1.0}`, `less_than{"a":1,"b":2}`,
			`is_even{"value":0}`, `length{"value":"héllo"}`, `range{"stop":5}`:
		default:
			continue
		}
		v, _ := engine.DecodeValue([]byte(tc.args))
		call := &engine.Call{Tool: tc.tool, Arguments: v.(map[string]any)}
		b.Run(tc.tool+tc.args, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tb.CallTool(ctx, call); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkScript(b *testing.B) {
	tb := oneTool(b, `{"k":{}}`, `{"script": [{"output": 1}], "then": {"output": 2}}`)
	ctx := context.Background()
	call := &engine.Call{Tool: "t", Arguments: map[string]any{"k": "v"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tb.CallTool(ctx, call); err != nil {
			b.Fatal(err)
		}
	}
}
