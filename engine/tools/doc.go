// Package tools holds the local tool providers: the builtin tools, scripted
// toolbox files (--tools FILE) and NoTools, upstream CLI's provider without
// a fixture. The MCP client lives in the mcp subpackage.
//
// # Builtins
//
// add subtract multiply divide greater_than less_than equals is_odd is_even
// negate concat length sum range identity compute their result from the
// arguments taken in the tool definition's property order (the first
// property is the first operand; arguments the definition does not list are
// ignored). Numbers follow Python: a JSON number without '.', 'e' or 'E' is
// an int and int arithmetic is exact at any size; any other number is a
// float64 and a float result prints as Python's repr does (0.30000000000000004,
// 3.0, 1e+16). Booleans are the ints 0 and 1 in arithmetic, comparisons and
// equals. divide is true division (6/3 is 2.0). Where this package departs
// from Python: a float result that is infinite is an error (JSON cannot hold
// it); is_odd, is_even and range accept integral floats such as 4.0 (JSON
// Schema's "integer"); range refuses results of more than 10,000,000 items.
// Every failure of a builtin is a ToolExecutionError, such as "add: operand
// 'b' must be a number, got string" (messages name the tool and the
// property) or Python's "division by zero".
//
// # Toolbox files
//
// A toolbox file is {"tools": [{"name", "description", "properties" |
// "input_schema", "effects", "annotations", "behavior"}]}; DESIGN.md
// ("File formats") defines the behaviors. Parsing is strict: unknown
// fields, wrong types, unknown builtins or error types and negative delays
// fail with a ValueError naming the file and the JSON pointer of the
// offending value. Property order is kept as the file writes it.
//
// # Concurrency and ordering
//
// A *Toolbox is safe for concurrent use; its definitions and behaviors are
// immutable once parsed. A call counts as started (Calls, and a script's
// position) before any delay runs. A script keeps one position per distinct
// arguments, keyed by their canonical JSON (sorted keys, numbers as
// written, so 1 and 1.0 count separately), under a per-tool lock; calls
// with different arguments never share a position. Delays sleep on the
// toolbox's engine.Clock and return the context's error (context.Canceled,
// or the cause) as soon as it is done; a call without a delay does not
// look at the context. Outputs are deep copies, so a caller may not change
// what the next call returns; identity and the other builtins return their
// operands without copying.
package tools
