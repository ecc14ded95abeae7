package engine_test

import (
	"context"
	"fmt"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/engine/tools"
)

// A schema 1.0 program: add(multiply(12, 6), 4), the Python library's
// canonical example.
const canonical = `{"type": "program", "mode": "single", "body": [
  {"type": "function", "name": "add", "params": [
    {"type": "function", "name": "multiply", "params": [
      {"type": "value", "name": "a", "value": 12},
      {"type": "value", "name": "b", "value": 6}]},
    {"type": "value", "name": "c", "value": 4}]}]}`

func ExampleParseProgram() {
	prog, err := engine.ParseProgram([]byte(canonical))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(prog.Version, prog.Mode, prog.NodeCount(), "nodes")
	fmt.Print(engine.FormatTree(prog))
	// Output:
	// 1.0 single 6 nodes
	// program
	//   body:
	//     0: function add
	//       params:
	//         0: function multiply
	//           params:
	//             0: value a = 12
	//             1: value b = 6
	//         1: value c = 4
	//   mode: 'single'
}

func ExampleParseProgram_invalid() {
	_, err := engine.ParseProgram([]byte(`{"type": "program", "mode": "single", "body": [
	  {"type": "map", "iterable": {"type": "value", "name": "items", "value": [1, 2]},
	   "function": {"type": "lambda", "params": ["a", "b"],
	     "body": {"type": "function", "name": "add", "params": []}}}]}`))
	fmt.Println(engine.TypeOf(err))
	fmt.Println(err)
	fmt.Println(engine.PathOf(err))
	// Output:
	// ValueError
	// Failed to parse AST: /body/0: Map lambda must declare exactly 1 param.
	// /body/0
}

func ExampleEval() {
	prog, err := engine.ParseProgram([]byte(canonical))
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := engine.Eval(context.Background(), prog, tools.Builtins(), engine.Options{})
	fmt.Println(v, err)
	// Output: 76 <nil>
}

// Schema 2.0: user functions with recursion; numbers stay exact.
func ExampleEval_schema2() {
	prog, err := engine.ParseProgram([]byte(`{"schema_version": "2.0",
	  "definitions": [{"name": "factorial", "params": ["n"], "body":
	    {"type": "conditional",
	     "condition": {"type": "tool_call", "tool": "less_than", "arguments": {"a": {"type": "variable", "name": "n"}, "b": {"type": "literal", "value": 2}}},
	     "true_branch": {"type": "literal", "value": 1},
	     "false_branch": {"type": "tool_call", "tool": "multiply", "arguments": {
	       "a": {"type": "variable", "name": "n"},
	       "b": {"type": "call", "function": "factorial", "arguments": [
	         {"type": "tool_call", "tool": "subtract", "arguments": {"a": {"type": "variable", "name": "n"}, "b": {"type": "literal", "value": 1}}}]}}}}}],
	  "body": [{"type": "call", "function": "factorial", "arguments": [{"type": "literal", "value": 30}]}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := engine.Eval(context.Background(), prog, tools.Builtins(), engine.Options{})
	fmt.Println(v, err)
	// Output: 265252859812191058636308480000000 <nil>
}

// Limits fail with an ExecutionLimitError naming the resource.
func ExampleEval_limits() {
	prog, _ := engine.ParseProgram([]byte(canonical))
	_, err := engine.Eval(context.Background(), prog, tools.Builtins(), engine.Options{
		Limits: engine.Limits{MaxNodes: 5},
	})
	fmt.Println(engine.TypeOf(err)+":", err)
	// Output: ExecutionLimitError: Execution nodes limit exceeded (5)
}

// In collect mode a parallel program returns one outcome per body item.
func ExampleEval_collect() {
	prog, _ := engine.ParseProgram([]byte(`{"type": "program", "mode": "parallel", "body": [
	  {"type": "function", "name": "divide", "params": [{"type": "value", "name": "a", "value": 1}, {"type": "value", "name": "b", "value": 4}]},
	  {"type": "function", "name": "divide", "params": [{"type": "value", "name": "a", "value": 1}, {"type": "value", "name": "b", "value": 0}]}]}`))
	pol, lim, err := engine.ParsePolicy([]byte(`{"parallel_failures": "collect"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := engine.Eval(context.Background(), prog, tools.Builtins(), engine.Options{Policy: pol, Limits: lim})
	out, _ := engine.EncodeValue(v)
	fmt.Println(string(out), err)
	// Output: [{"success":true,"value":0.25},{"error_message":"division by zero","error_type":"ToolExecutionError","success":false}] <nil>
}

// A retry policy re-runs an idempotent tool's failed attempts with the
// arguments evaluated once.
func ExampleEval_retry() {
	tb, err := tools.Parse([]byte(`{"tools": [{"name": "flaky", "properties": {"value": {}},
	  "behavior": {"script": [{"error": "ToolExecutionError", "message": "temporary"}], "then": {"builtin": "identity"}}}]}`), "example")
	if err != nil {
		fmt.Println(err)
		return
	}
	prog, _ := engine.ParseProgram([]byte(`{"schema_version": "2.0", "body": [
	  {"type": "tool_call", "tool": "flaky", "arguments": {"value": {"type": "literal", "value": 9}}}]}`))
	pol := engine.Policy{Retry: engine.RetryPolicy{MaxAttempts: 3, IdempotentTools: []string{"flaky"}}}
	v, err := engine.Eval(context.Background(), prog, tb, engine.Options{Policy: pol})
	fmt.Println(v, err, tb.Calls("flaky"), "attempts")
	// Output: 9 <nil> 2 attempts
}
