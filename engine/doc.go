// Package engine is the Treelang language: the schema 1.0 and 2.0 ASTs,
// parsing and validation, evaluation with the Python library's semantics,
// the opt-in execution policy (retries, parallel failures), limits and the
// error types, and the two boundaries to the outside world: ToolProvider
// and ModelTransport.
//
// Values are decoded JSON (nil, bool, json.Number, string, []any,
// map[string]any); numbers are never converted through float64.
//
// Concurrency: Eval may run sibling operations (v1 function params, program
// body items) on several goroutines. Every goroutine it starts has ended
// when Eval returns, so no tool call is running or starts afterwards.
// Events go to the optional tracer; with none attached, tracing costs a
// nil check per step. Every node is reported: node.enter and node.exit
// around it, except leaves (values, literals, variables), which take no
// time and are reported by their node.exit alone.
package engine
