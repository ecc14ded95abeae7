package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/engine/tools"
)

// conformancePrograms returns every program of the conformance suite, as
// seeds for the fuzzers.
func conformancePrograms(f *testing.F) [][]byte {
	f.Helper()
	files, _ := filepath.Glob(filepath.Join("testdata", "conformance", "*.json"))
	var out [][]byte
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var cases []confCase
		if err := json.Unmarshal(data, &cases); err != nil {
			f.Fatalf("%s: %v", file, err)
		}
		for _, c := range cases {
			if c.ProgramText != nil {
				out = append(out, []byte(*c.ProgramText))
			} else {
				out = append(out, c.Program)
			}
		}
	}
	return out
}

// FuzzParseProgram: parsing never panics, every failure is a ValueError,
// and a program that parses writes out (MarshalProgram) as JSON that
// parses again to the same output.
func FuzzParseProgram(f *testing.F) {
	for _, p := range conformancePrograms(f) {
		f.Add(p)
	}
	f.Add([]byte(`{"schema_version":"2.0","body":[{"type":"memo","key":"k","expression":{"type":"literal","value":{"b":1,"a":[1.0,null]}}}]}`))
	f.Add([]byte(`{"type":"program","mode":"single","body":[{"type":"value","name":"v","value":"\ud83d\ude00 \u0000"}],"body":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := engine.ParseProgram(data)
		if err != nil {
			if typ := engine.TypeOf(err); typ != engine.ValueError {
				t.Fatalf("parse failure of type %s: %v", typ, err)
			}
			return
		}
		out := engine.MarshalProgram(p)
		p2, err := engine.ParseProgram(out)
		if err != nil {
			t.Fatalf("the written program does not parse: %v\ninput: %s\nwritten: %s", err, data, out)
		}
		if p2.Version != p.Version || p2.NodeCount() != p.NodeCount() {
			t.Fatalf("round trip changed the program: version %s/%s, %d/%d nodes", p.Version, p2.Version, p.NodeCount(), p2.NodeCount())
		}
		if out2 := engine.MarshalProgram(p2); !bytes.Equal(out, out2) {
			t.Fatalf("round trip is not stable:\nfirst:  %s\nsecond: %s", out, out2)
		}
	})
}

// FuzzParsePolicy: parsing a policy file never panics, failures are
// ValueErrors, and a parsed policy is valid.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{
		`{}`, `null`, `[]`, `{"parallel_failures":"collect"}`,
		`{"retry":{"max_attempts":3,"delay_seconds":0.5,"idempotent_tools":["a","functions.b"],"retryable_exceptions":["ToolExecutionError","TimeoutError"]}}`,
		`{"retry":{"backoff_multiplier":2,"max_delay_seconds":1,"jitter":0.5,"jitter_seed":7,"attempt_timeout_seconds":0.1}}`,
		`{"limits":{"max_nodes":10,"max_depth":3,"max_call_depth":2,"max_tool_calls":5,"max_concurrency":2,"timeout_seconds":0.001}}`,
		`{"limits":{"max_nodes":0}}`, `{"limits":{"timeout_seconds":1e400}}`, `{"limits":{"max_nodes":99999999999999999999}}`,
		`{"retry":{"retryable_exceptions":[1]}}`, `{"limits":null,"retry":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pol, lim, err := engine.ParsePolicy(data)
		if err != nil {
			if typ := engine.TypeOf(err); typ != engine.ValueError {
				t.Fatalf("policy failure of type %s: %v", typ, err)
			}
			return
		}
		if err := pol.Validate(); err != nil {
			t.Fatalf("a parsed policy does not validate: %v\n%s", err, data)
		}
		if lim.MaxNodes < 0 || lim.MaxDepth < 0 || lim.MaxCallDepth < 0 || lim.MaxToolCalls < 0 || lim.MaxConcurrency < 0 || lim.Timeout < 0 {
			t.Fatalf("negative limit from %s: %+v", data, lim)
		}
		_ = engine.Summary(pol, lim)
	})
}

// nest wraps inner in n layers of open/close.
func nest(n int, open, inner, close string) []byte {
	var b bytes.Buffer
	b.Grow(n*(len(open)+len(close)) + len(inner))
	for i := 0; i < n; i++ {
		b.WriteString(open)
	}
	b.WriteString(inner)
	for i := 0; i < n; i++ {
		b.WriteString(close)
	}
	return b.Bytes()
}

func TestParseDeeplyNestedProgram(t *testing.T) {
	const deep = 100000
	for _, tc := range []struct {
		name string
		src  []byte
	}{
		{"v1 functions", nest(deep, `{"type":"program","mode":"single","body":[{"type":"function","name":"identity","params":[`,
			`{"type":"value","name":"v","value":7}`, `]}]}`)},
		{"v2 conditionals", append(append([]byte(`{"schema_version":"2.0","body":[`),
			nest(deep, `{"type":"conditional","condition":{"type":"literal","value":true},"false_branch":{"type":"literal","value":0},"true_branch":`,
				`{"type":"literal","value":7}`, `}`)...), `]}`...)},
		{"v2 tool calls", append(append([]byte(`{"schema_version":"2.0","body":[`),
			nest(deep, `{"type":"tool_call","tool":"identity","arguments":{"value":`, `{"type":"literal","value":7}`, `}}`)...), `]}`...)},
		{"nested arrays in a value", append(append([]byte(`{"type":"program","mode":"single","body":[{"type":"value","name":"v","value":`),
			nest(deep, `[`, `1`, `]`)...), `}]}`...)},
		{"unclosed", bytes.Repeat([]byte(`[`), deep)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := engine.ParseProgram(tc.src)
			if err == nil {
				t.Fatal("a program nested 100,000 deep parsed")
			}
			if engine.TypeOf(err) != engine.ValueError {
				t.Fatalf("error of type %s: %v", engine.TypeOf(err), err)
			}
			if len(err.Error()) > 300 {
				t.Errorf("error message of %d bytes", len(err.Error()))
			}
			t.Log(err)
		})
	}
}

// TestEvalDeepButAcceptedPrograms: nesting just within the parser's limit
// evaluates (no host-stack trouble in v1's recursion or v2's machine).
func TestEvalDeepButAcceptedPrograms(t *testing.T) {
	const deep = 4000
	for _, tc := range []struct {
		name string
		src  []byte
	}{
		{"v1", append(append([]byte(`{"type":"program","mode":"single","body":[`),
			nest(deep, `{"type":"function","name":"identity","params":[`, `{"type":"value","name":"v","value":7}`, `]}`)...), `]}`...)},
		{"v2", append(append([]byte(`{"schema_version":"2.0","body":[`),
			nest(deep, `{"type":"tool_call","tool":"identity","arguments":{"value":`, `{"type":"literal","value":7}`, `}}`)...), `]}`...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := engine.ParseProgram(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			tb := tools.Builtins()
			v, err := engine.Eval(context.Background(), p, tb, engine.Options{})
			if err != nil || fmt.Sprint(v) != "7" {
				t.Fatalf("got %v, %v", v, err)
			}
			if n := tb.Calls("identity"); n != deep {
				t.Fatalf("%d calls, want %d", n, deep)
			}
			var lim engine.Limits
			lim.MaxDepth = deep
			if _, err := engine.Eval(context.Background(), p, tools.Builtins(), engine.Options{Limits: lim}); err == nil {
				t.Fatal("max_depth was not enforced")
			}
		})
	}
}

// TestLargeProgram parses and evaluates a program of about 10 MB: a sum
// over a literal list of 1,300,000 integers, and a map over 100,000 of
// them.
func TestLargeProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("large input")
	}
	const n = 1300000
	var b bytes.Buffer
	b.WriteString(`{"type":"program","mode":"parallel","body":[{"type":"function","name":"sum","params":[{"type":"value","name":"values","value":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	b.WriteString(`]}]},{"type":"map","function":{"type":"lambda","params":["x"],"body":{"type":"function","name":"identity","params":[{"type":"value","name":"x","value":null}]}},"iterable":{"type":"value","name":"items","value":[`)
	for i := 0; i < 100000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	b.WriteString(`]}}]}`)
	if b.Len() < 9<<20 {
		t.Fatalf("program of %d bytes, want about 10 MB", b.Len())
	}
	start := time.Now()
	p, err := engine.ParseProgram(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	parsed := time.Since(start)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	v, err := engine.Eval(ctx, p, tools.Builtins(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := v.([]any)
	if got, want := fmt.Sprint(out[0]), strconv.Itoa(n*(n-1)/2); got != want {
		t.Fatalf("sum %s, want %s", got, want)
	}
	if items := out[1].([]any); len(items) != 100000 || fmt.Sprint(items[99999]) != "99999" {
		t.Fatalf("map gave %d items", len(items))
	}
	t.Logf("%d bytes: parsed in %v, parsed and evaluated in %v", b.Len(), parsed, time.Since(start))
}

// fuzzTools are builtins whose cost does not grow with their arguments'
// values (no range), for evaluating fuzzed programs.
const fuzzTools = `{"tools": [
  {"name": "add", "properties": {"a": {}, "b": {}}, "behavior": {"builtin": "add"}},
  {"name": "subtract", "properties": {"a": {}, "b": {}}, "behavior": {"builtin": "subtract"}},
  {"name": "multiply", "properties": {"a": {}, "b": {}}, "behavior": {"builtin": "multiply"}},
  {"name": "less_than", "properties": {"a": {}, "b": {}}, "behavior": {"builtin": "less_than"}},
  {"name": "is_even", "properties": {"value": {}}, "behavior": {"builtin": "is_even"}},
  {"name": "negate", "properties": {"value": {}}, "behavior": {"builtin": "negate"}},
  {"name": "identity", "properties": {"value": {}}, "behavior": {"builtin": "identity"}},
  {"name": "typed", "input_schema": {"type": "object", "properties": {"value": {"type": "integer", "minimum": 0}}}, "behavior": {"builtin": "identity"}},
  {"name": "flaky", "properties": {"value": {}}, "behavior": {"script": [{"error": "ToolExecutionError", "message": "temporary"}], "then": {"builtin": "identity"}}}
]}`

// FuzzEvalProgram: evaluating any program that parses, under tight limits
// and every policy shape, never panics, never leaves a tool call running,
// and fails only with a typed error.
func FuzzEvalProgram(f *testing.F) {
	for _, p := range conformancePrograms(f) {
		f.Add(p, uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		prog, err := engine.ParseProgram(data)
		if err != nil {
			return
		}
		tb, err := tools.Parse([]byte(fuzzTools), "fuzz")
		if err != nil {
			t.Fatal(err)
		}
		opts := engine.Options{Limits: engine.Limits{MaxNodes: 2000, MaxToolCalls: 200, MaxCallDepth: 50, Timeout: 2 * time.Second, TimeoutText: "2"}}
		if mode&1 != 0 {
			opts.Policy.ParallelFailures = engine.FailCollect
		}
		if mode&2 != 0 {
			opts.Policy.Retry = engine.RetryPolicy{MaxAttempts: 3, IdempotentTools: []string{"flaky", "add"}}
		}
		if mode&4 != 0 {
			opts.Limits.MaxConcurrency = 2
		}
		_, err = engine.Eval(context.Background(), prog, tb, opts)
		if err != nil && engine.TypeOf(err) == "" {
			t.Fatalf("untyped failure: %v", err)
		}
		defs, _ := tb.ListTools(context.Background())
		for _, d := range defs {
			if tb.Active(d.Name) != 0 {
				t.Fatalf("%s still running after Eval returned", d.Name)
			}
		}
	})
}
