package tools_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/engine/tools"
)

func ExampleParse() {
	tb, err := tools.Parse([]byte(`{"tools": [{
		"name": "fetch",
		"properties": {"url": {"type": "string"}},
		"behavior": {
			"script": [{"error": "ToolExecutionError", "message": "connection reset"}],
			"then": {"output": "<html>"}
		}
	}]}`), "example.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	for range 3 {
		out, err := tb.CallTool(ctx, &engine.Call{Tool: "fetch", Arguments: map[string]any{"url": "https://example.com"}})
		fmt.Println(out, err)
	}
	fmt.Println("calls:", tb.Calls("fetch"))
	// Output:
	// <nil> connection reset
	// <html> <nil>
	// <html> <nil>
	// calls: 3
}

func ExampleBuiltins() {
	tb := tools.Builtins()
	ctx := context.Background()
	add := func(a, b string) {
		out, err := tb.CallTool(ctx, &engine.Call{Tool: "add", Arguments: map[string]any{"a": json.Number(a), "b": json.Number(b)}})
		fmt.Println(out, err)
	}
	add("1180591620717411303424", "1")
	add("0.1", "0.2")
	add("1.5", "1.5")
	// Output:
	// 1180591620717411303425 <nil>
	// 0.30000000000000004 <nil>
	// 3.0 <nil>
}

func ExampleParse_error() {
	_, err := tools.Parse([]byte(`{"tools": [{"name": "t", "properties": {},
		"behavior": {"script": [{"error": "Oops"}]}}]}`), "tools.json")
	fmt.Println(err)
	fmt.Println(engine.TypeOf(err))
	// Output:
	// tools.json: /tools/0/behavior/script/0/error: unknown error type "Oops"
	// ValueError
}
