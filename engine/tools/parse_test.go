package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/treelang/treelang/engine"
)

// tool0 builds a one-tool file around a behavior.
func tool0(behavior string) string {
	return `{"tools": [{"name": "x", "properties": {"a": {}, "b": {}}, "behavior": ` + behavior + `}]}`
}

var parseErrorCases = []struct {
	name, src, want string
}{
	{"empty", ``, `tools.json: invalid JSON: the file is empty`},
	{"syntax", "{\"tools\": [\n  }", `tools.json: invalid JSON at line 2, column 3: invalid character '}' looking for beginning of value`},
	{"trailing data", `{"tools": []} {}`, `tools.json: invalid JSON: unexpected data after the JSON value at offset 14`},
	{"not an object", `[]`, `tools.json: a toolbox must be a JSON object {"tools": [...]}`},
	{"no tools", `{}`, `tools.json: missing field "tools"`},
	{"unknown top field", `{"tools": [], "version": 1}`, `tools.json: unknown field "version" (a toolbox has only "tools")`},
	{"tools not array", `{"tools": {}}`, `tools.json: /tools: must be an array of tools, got object`},
	{"tool not object", `{"tools": [1]}`, `tools.json: /tools/0: a tool must be an object, got number`},
	{"no name", `{"tools": [{"properties": {}, "behavior": {"output": 1}}]}`, `tools.json: /tools/0: missing field "name"`},
	{"bad name", `{"tools": [{"name": 5, "properties": {}, "behavior": {"output": 1}}]}`, `tools.json: /tools/0/name: must be a non-empty string, got number`},
	{"empty name", `{"tools": [{"name": "", "properties": {}, "behavior": {"output": 1}}]}`, `tools.json: /tools/0/name: must be a non-empty string, got string`},
	{"unknown tool field", `{"tools": [{"name": "x", "properties": {}, "behaviour": {"output": 1}}]}`,
		`tools.json: /tools/0: unknown field "behaviour" (a tool has "annotations", "behavior", "description", "effects", "input_schema", "name", "properties")`},
	{"no behavior", `{"tools": [{"name": "x", "properties": {}}]}`, `tools.json: /tools/0: tool "x" has no "behavior"`},
	{"no properties", `{"tools": [{"name": "x", "behavior": {"output": 1}}]}`, `tools.json: /tools/0: Tool 'x' has no valid properties definition`},
	{"bad property", `{"tools": [{"name": "x", "properties": {"a": 1}, "behavior": {"output": 1}}]}`, `tools.json: /tools/0: Tool 'x' property 'a' must be a mapping`},
	{"bad description", `{"tools": [{"name": "x", "description": 5, "properties": {}, "behavior": {"output": 1}}]}`, `tools.json: /tools/0: Tool 'x' has no valid description definition`},
	{"bad effects", `{"tools": [{"name": "x", "effects": {"fast": true}, "properties": {}, "behavior": {"output": 1}}]}`, `tools.json: /tools/0: Tool 'x' has invalid effects`},
	{"duplicate", `{"tools": [{"name": "x", "properties": {}, "behavior": {"output": 1}}, {"name": "y", "properties": {}, "behavior": {"output": 1}}, {"name": "x", "properties": {}, "behavior": {"output": 2}}]}`,
		`tools.json: /tools/2/name: duplicate tool name "x" (also /tools/0)`},
	{"behavior not object", tool0(`"add"`), `tools.json: /tools/0/behavior: a behavior must be an object, got string`},
	{"two kinds", tool0(`{"builtin": "add", "output": 1}`), `tools.json: /tools/0/behavior: needs exactly one of "builtin", "output", "table", "script", got builtin and output`},
	{"no kind", tool0(`{"delay_ms": 5}`), `tools.json: /tools/0/behavior: needs exactly one of "builtin", "output", "table", "script", got none`},
	{"unknown behavior field", tool0(`{"output": 1, "delay": 5}`),
		`tools.json: /tools/0/behavior: unknown field "delay" (a behavior has "builtin", "delay_ms", "output", "script", "table", "then")`},
	{"error as behavior", tool0(`{"error": "ValueError"}`),
		`tools.json: /tools/0/behavior: unknown field "error" (a behavior has "builtin", "delay_ms", "output", "script", "table", "then"); an error is a script step: {"script": [{"error": TYPE, "message": "..."}]}`},
	{"builtin not string", tool0(`{"builtin": 1}`), `tools.json: /tools/0/behavior/builtin: must be the name of a builtin, got number`},
	{"unknown builtin", tool0(`{"builtin": "pow"}`),
		`tools.json: /tools/0/behavior/builtin: unknown builtin "pow" (builtins: add, subtract, multiply, divide, greater_than, less_than, equals, is_odd, is_even, negate, concat, length, sum, range, identity)`},
	{"builtin arity", tool0(`{"builtin": "negate"}`), `tools.json: /tools/0/behavior/builtin: builtin "negate" takes 1 argument, but tool "x" has 2 properties`},
	{"builtin too few", `{"tools": [{"name": "x", "properties": {}, "behavior": {"builtin": "identity"}}]}`,
		`tools.json: /tools/0/behavior/builtin: builtin "identity" takes at least 1 argument, but tool "x" has 0 properties`},
	{"then without script", tool0(`{"output": 1, "then": {"output": 2}}`), `tools.json: /tools/0/behavior/then: "then" belongs to a "script" behavior`},
	{"negative delay", tool0(`{"output": 1, "delay_ms": -5}`), `tools.json: /tools/0/behavior/delay_ms: must not be negative, got -5`},
	{"tiny negative delay", tool0(`{"output": 1, "delay_ms": -1e-400}`), `tools.json: /tools/0/behavior/delay_ms: must not be negative, got -1e-400`},
	{"string delay", tool0(`{"output": 1, "delay_ms": "5"}`), `tools.json: /tools/0/behavior/delay_ms: must be a number of milliseconds, got string`},
	{"huge delay", tool0(`{"output": 1, "delay_ms": 1e300}`), `tools.json: /tools/0/behavior/delay_ms: is too large, got 1e300`},
	{"table not array", tool0(`{"table": {}}`), `tools.json: /tools/0/behavior/table: must be an array of {"arguments": {...}, "output": V}, got object`},
	{"row not object", tool0(`{"table": [[]]}`), `tools.json: /tools/0/behavior/table/0: a row must be an object {"arguments": {...}, "output": V}, got array`},
	{"row unknown field", tool0(`{"table": [{"arguments": {}, "output": 1, "error": "x"}]}`), `tools.json: /tools/0/behavior/table/0: unknown field "error" (a row has "arguments" and "output")`},
	{"row no arguments", tool0(`{"table": [{"arguments": {}, "output": 1}, {"output": 1}]}`), `tools.json: /tools/0/behavior/table/1: missing field "arguments"`},
	{"row bad arguments", tool0(`{"table": [{"arguments": [1], "output": 1}]}`), `tools.json: /tools/0/behavior/table/0/arguments: must be an object, got array`},
	{"row no output", tool0(`{"table": [{"arguments": {}}]}`), `tools.json: /tools/0/behavior/table/0: missing field "output"`},
	{"script not array", tool0(`{"script": {"output": 1}}`), `tools.json: /tools/0/behavior/script: must be an array of steps, got object`},
	{"empty script", tool0(`{"script": []}`), `tools.json: /tools/0/behavior/script: needs at least one step, or a "then" step`},
	{"step not object", tool0(`{"script": [1]}`), `tools.json: /tools/0/behavior/script/0: a step must be an object, got number`},
	{"step unknown field", tool0(`{"script": [{"output": 1, "table": []}]}`),
		`tools.json: /tools/0/behavior/script/0: unknown field "table" (a step has "builtin", "delay_ms", "error", "message", "output")`},
	{"step two kinds", tool0(`{"script": [{"output": 1, "error": "ValueError"}]}`),
		`tools.json: /tools/0/behavior/script/0: needs exactly one of "output", "builtin", "error", got output and error`},
	{"unknown error type", `{"tools": [
		{"name": "a", "properties": {}, "behavior": {"output": 1}},
		{"name": "b", "properties": {}, "behavior": {"output": 1}},
		{"name": "c", "properties": {}, "behavior": {"script": [{"output": 1}, {"error": "Oops"}]}}]}`,
		`tools.json: /tools/2/behavior/script/1/error: unknown error type "Oops"`},
	{"error not string", tool0(`{"script": [{"error": 1}]}`), `tools.json: /tools/0/behavior/script/0/error: must be an error type name, got number`},
	{"message not string", tool0(`{"script": [{"error": "ValueError", "message": 1}]}`), `tools.json: /tools/0/behavior/script/0/message: must be a string, got number`},
	{"message without error", tool0(`{"script": [{"output": 1, "message": "m"}]}`), `tools.json: /tools/0/behavior/script/0/message: "message" belongs to an "error" step`},
	{"step unknown builtin", tool0(`{"script": [{"builtin": "nope"}]}`), `tools.json: /tools/0/behavior/script/0/builtin: unknown builtin "nope"`},
	{"then negative delay", tool0(`{"script": [{"output": 1}], "then": {"output": 2, "delay_ms": -1}}`), `tools.json: /tools/0/behavior/then/delay_ms: must not be negative, got -1`},
	{"then not object", tool0(`{"script": [{"output": 1}], "then": "x"}`), `tools.json: /tools/0/behavior/then: a step must be an object, got string`},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range parseErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			tb, err := Parse([]byte(tc.src), "tools.json")
			if err == nil {
				t.Fatalf("Parse succeeded with %d tools, want %q", len(tb.tools), tc.want)
			}
			var e *engine.Error
			if !errors.As(err, &e) || e.Type != engine.ValueError {
				t.Fatalf("error %#v is not an *engine.Error of type ValueError", err)
			}
			if errors.Is(err, engine.ProviderResponseError) || errors.Is(err, engine.TreelangError) {
				t.Errorf("a toolbox file error must be a plain ValueError (an input error): %v", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error\n  %s\nwant\n  %s", err, tc.want)
			}
		})
	}
}

func TestParseAcceptsEveryKind(t *testing.T) {
	tb := mustParse(t, `{"tools": [
		{"name": "b", "description": "d", "properties": {"value": {}}, "behavior": {"builtin": "identity"}},
		{"name": "o", "properties": {}, "effects": {"idempotent": true}, "annotations": {"readOnlyHint": true}, "behavior": {"output": [1, "two"]}},
		{"name": "t", "properties": {"k": {}}, "behavior": {"table": [], "delay_ms": 0}},
		{"name": "s", "input_schema": {"type": "object", "properties": {"v": {}}}, "behavior": {"script": [
			{"output": 1}, {"builtin": "identity", "delay_ms": 1.5},
			{"error": "TypeError"}, {"error": "TimeoutError", "message": "slow"}]}},
		{"name": "u", "description": null, "properties": {"a": {}, "b": {}}, "behavior": {"script": [], "then": {"builtin": "add"}}}
	]}`)
	defs, _ := tb.ListTools(context.Background())
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	if strings.Join(names, " ") != "b o t s u" {
		t.Errorf("tools %v", names)
	}
	if d, _ := tb.Tool(context.Background(), "o"); d.Effects == nil || d.Effects.Idempotent == nil || !*d.Effects.Idempotent {
		t.Error("effects were not kept")
	}
	if d := tb.byName["s"]; d.behavior.script[1].delay != 1500*time.Microsecond {
		t.Errorf("delay 1.5 ms parsed as %v", d.behavior.script[1].delay)
	}
}

func TestLoad(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing.json"))
	var e *engine.Error
	if !errors.As(err, &e) || e.Type != engine.ValueError || !strings.Contains(err.Error(), "cannot read toolbox file") ||
		!errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %#v", err)
	}
	path := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(path, []byte(tool0(`{"builtin": "pow"}`)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.HasPrefix(err.Error(), path+": /tools/0/behavior/builtin: ") {
		t.Errorf("error does not name the file: %v", err)
	}
}
