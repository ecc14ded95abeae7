package engine_test

// The conformance suite: cases as data under testdata/conformance/*.json,
// each file an array of cases
//
//	{"name": "...",
//	 "program": {...} | "program_text": "raw, possibly invalid JSON",
//	 "root": "/body/0",            optional: evaluate that node as the root (EvalNode)
//	 "parse_tools": {"add": ["a", "b"]}, optional: the tool arity context of §1.2 rule 1
//	 "tools": {toolbox file} | "name.json" (testdata/toolboxes/), default tools.Builtins()
//	 "raw_tools": {"name": definition}, optional instead of "tools": a provider that
//	      normalizes each definition on lookup (engine.ParseToolDefinition, so
//	      §8.1 errors surface at run time) and returns the arguments it is called with
//	 "policy": {policy file}, optional
//	 "result": V | "error": {"type", "message", "exact", "path", "not_contains"},
//	 "calls": {"tool": n}, optional: every tool of the provider, listed or not (0)
//	 "max_active": {"tool": n}, optional
//	 "golden": true, optional: -update rewrites "result" from the actual value
//	 "skip": "engine bug: ..."}   optional
//
// Results compare as canonical JSON (sorted keys, numbers exactly as
// written, so 2 and 2.0 differ). A lambda's closure compares as the string
// "<closure>". An error's type is the concrete Python class name
// (engine.TypeOf); "message" is a substring unless "exact" is set.
//
// go test ./engine -run Conformance -update rewrites the results of golden
// cases (and writes every file in the canonical layout); plain go test
// fails on any difference.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/engine/tools"
)

var update = flag.Bool("update", false, "rewrite the expected results of conformance cases marked \"golden\"")

type confCase struct {
	Name        string                     `json:"name"`
	Golden      bool                       `json:"golden"`
	Skip        string                     `json:"skip"`
	Program     json.RawMessage            `json:"program"`
	ProgramText *string                    `json:"program_text"`
	Root        string                     `json:"root"`
	ParseTools  map[string][]string        `json:"parse_tools"`
	Tools       json.RawMessage            `json:"tools"`
	RawTools    map[string]json.RawMessage `json:"raw_tools"`
	Policy      json.RawMessage            `json:"policy"`
	Result      json.RawMessage            `json:"result"`
	Error       *confError                 `json:"error"`
	Calls       map[string]int             `json:"calls"`
	MaxActive   map[string]int             `json:"max_active"`
}

type confError struct {
	Type        string   `json:"type"`
	Message     string   `json:"message"`
	Exact       bool     `json:"exact"`
	Path        *string  `json:"path"`
	NotContains []string `json:"not_contains"`
}

// confProvider is what a case runs against: a toolbox or a raw provider,
// both counting calls.
type confProvider interface {
	engine.ToolProvider
	Calls(name string) int
	MaxActive(name string) int
}

func TestConformance(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "conformance", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no conformance files: %v", err)
	}
	total := 0
	for _, file := range files {
		raw, cases := loadConfFile(t, file)
		total += len(cases)
		changed := false
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			seen := map[string]bool{}
			for i := range cases {
				c := &cases[i]
				if seen[c.Name] {
					t.Errorf("%s: duplicate case name %q", file, c.Name)
				}
				seen[c.Name] = true
				t.Run(c.Name, func(t *testing.T) {
					if got, ok := runConfCase(t, c); ok && *update && c.Golden && !bytes.Equal(got, c.Result) {
						raw[i] = setField(t, raw[i], "result", got)
						changed = true
					}
				})
			}
		})
		if *update {
			writeConfFile(t, file, raw)
			if changed {
				t.Logf("%s: golden results updated", file)
			}
		}
	}
	t.Logf("%d conformance cases in %d files", total, len(files))
}

func loadConfFile(t *testing.T, file string) ([]json.RawMessage, []confCase) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	cases := make([]confCase, len(raw))
	for i, r := range raw {
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cases[i]); err != nil {
			t.Fatalf("%s: case %d: %v", file, i, err)
		}
		c := &cases[i]
		if c.Name == "" {
			t.Fatalf("%s: case %d has no name", file, i)
		}
		if (len(c.Result) > 0) == (c.Error != nil) {
			t.Fatalf("%s: case %q needs exactly one of result and error", file, c.Name)
		}
		if (len(c.Program) > 0) == (c.ProgramText != nil) {
			t.Fatalf("%s: case %q needs exactly one of program and program_text", file, c.Name)
		}
	}
	return raw, cases
}

// runConfCase runs one case and checks it. It returns the canonical JSON of
// the result when the run succeeded.
func runConfCase(t *testing.T, c *confCase) ([]byte, bool) {
	t.Helper()
	if c.Skip != "" {
		t.Skip(c.Skip)
	}
	got, err, prov := evalConfCase(t, c)
	if c.Error != nil {
		checkConfError(t, c.Error, err)
	} else if err != nil {
		t.Fatalf("unexpected error %s: %v (path %q)", typeName(err), err, engine.PathOf(err))
	}
	var text []byte
	if err == nil {
		text, err = engine.EncodeValue(normalizeResult(got))
		if err != nil {
			t.Fatalf("result is not JSON: %v", err)
		}
		if c.Error == nil {
			want := canonicalJSON(t, c.Result)
			if !bytes.Equal(text, want) && !(*update && c.Golden) {
				t.Errorf("result\n got: %s\nwant: %s", text, want)
			}
		}
	}
	if prov != nil {
		checkCounts(t, c, prov)
	} else if len(c.Calls) > 0 || len(c.MaxActive) > 0 {
		t.Errorf("calls or max_active expected, but the case failed before a provider existed")
	}
	return text, err == nil
}

// evalConfCase parses the toolbox, policy and program and evaluates. It
// returns the provider once one exists.
func evalConfCase(t *testing.T, c *confCase) (any, error, confProvider) {
	t.Helper()
	prov, err := confToolProvider(t, c)
	if err != nil {
		return nil, err, nil
	}
	var opts engine.Options
	if len(c.Policy) > 0 {
		pol, lim, err := engine.ParsePolicy(c.Policy)
		if err != nil {
			return nil, err, prov
		}
		opts.Policy, opts.Limits = pol, lim
	}
	src := []byte(c.Program)
	if c.ProgramText != nil {
		src = []byte(*c.ProgramText)
	}
	prog, err := engine.ParseProgramWith(src, engine.ParseOptions{ToolParams: c.ParseTools})
	if err != nil {
		return nil, err, prov
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if c.Root != "" {
		var root engine.Node
		for n := range engine.All(prog) {
			if n.Path() == c.Root {
				root = n
				break
			}
		}
		if root == nil {
			t.Fatalf("root %q names no node", c.Root)
		}
		v, err := engine.EvalNode(ctx, root, prov, opts)
		return v, err, prov
	}
	v, err := engine.Eval(ctx, prog, prov, opts)
	return v, err, prov
}

func confToolProvider(t *testing.T, c *confCase) (confProvider, error) {
	t.Helper()
	if c.RawTools != nil {
		if len(c.Tools) > 0 {
			t.Fatal("a case has tools or raw_tools, not both")
		}
		return &rawProvider{defs: c.RawTools, calls: map[string]int{}}, nil
	}
	if len(c.Tools) == 0 {
		return tools.Builtins(), nil
	}
	var file string
	if json.Unmarshal(c.Tools, &file) == nil {
		return loadToolbox(t, file), nil
	}
	tb, err := tools.Parse(c.Tools, "tools")
	if err != nil {
		return nil, err
	}
	return tb, nil
}

var toolboxCache sync.Map // file name -> []byte

// loadToolbox parses a toolbox of testdata/toolboxes afresh (fresh
// counters and script positions).
func loadToolbox(t testing.TB, name string) *tools.Toolbox {
	t.Helper()
	data, ok := toolboxCache.Load(name)
	if !ok {
		b, err := os.ReadFile(filepath.Join("testdata", "toolboxes", name))
		if err != nil {
			t.Fatal(err)
		}
		data, _ = toolboxCache.LoadOrStore(name, b)
	}
	tb, err := tools.Parse(data.([]byte), name)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func checkConfError(t *testing.T, want *confError, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s %q", want.Type, want.Message)
	}
	if got := typeName(err); got != want.Type {
		t.Errorf("error type %s (%v), want %s", got, err, want.Type)
	}
	msg := err.Error()
	if want.Exact {
		if msg != want.Message {
			t.Errorf("error message\n got: %s\nwant: %s", msg, want.Message)
		}
	} else if !strings.Contains(msg, want.Message) {
		t.Errorf("error message %q does not contain %q", msg, want.Message)
	}
	if want.Path != nil {
		if got := engine.PathOf(err); got != *want.Path {
			t.Errorf("error path %q, want %q (%v)", got, *want.Path, err)
		}
	}
	for _, s := range want.NotContains {
		if strings.Contains(msg, s) {
			t.Errorf("error message %q contains %q", msg, s)
		}
	}
}

// typeName is the Python class name of err; cancellation is CancelledError.
func typeName(err error) string {
	if t := engine.TypeOf(err); t != "" {
		return string(t)
	}
	return "CancelledError"
}

func checkCounts(t *testing.T, c *confCase, prov confProvider) {
	t.Helper()
	if c.Calls != nil {
		names := map[string]bool{}
		for k := range c.Calls {
			names[k] = true
		}
		if defs, err := prov.ListTools(context.Background()); err == nil {
			for _, d := range defs {
				names[d.Name] = true
			}
		}
		if rp, ok := prov.(*rawProvider); ok {
			for k := range rp.defs {
				names[k] = true
			}
		}
		for _, name := range slices.Sorted(maps.Keys(names)) {
			if got := prov.Calls(name); got != c.Calls[name] {
				t.Errorf("calls of %s: %d, want %d", name, got, c.Calls[name])
			}
		}
	}
	for name, want := range c.MaxActive {
		if got := prov.MaxActive(name); got != want {
			t.Errorf("max active calls of %s: %d, want %d", name, got, want)
		}
	}
}

// normalizeResult replaces closures, which have no JSON form, by
// "<closure>".
func normalizeResult(v any) any {
	switch x := v.(type) {
	case *engine.Closure:
		return "<closure>"
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeResult(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalizeResult(e)
		}
		return out
	}
	return v
}

func canonicalJSON(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	v, err := engine.DecodeValue(raw)
	if err != nil {
		t.Fatalf("expected result is not JSON: %v", err)
	}
	out, err := engine.EncodeValue(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rawProvider serves raw tool definitions, normalizing each on lookup as a
// provider returning mappings does; "null" is a provider returning no
// definition. A call returns its arguments.
type rawProvider struct {
	defs  map[string]json.RawMessage
	mu    sync.Mutex
	calls map[string]int
}

func (p *rawProvider) ListTools(context.Context) ([]*engine.ToolDefinition, error) { return nil, nil }

func (p *rawProvider) Tool(_ context.Context, name string) (*engine.ToolDefinition, error) {
	raw, ok := p.defs[name]
	if !ok {
		return nil, engine.NotFound(name)
	}
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	return engine.ParseToolDefinition(raw, name)
}

func (p *rawProvider) CallTool(_ context.Context, call *engine.Call) (any, error) {
	p.mu.Lock()
	p.calls[call.Tool]++
	p.mu.Unlock()
	return engine.CloneValue(map[string]any(call.Arguments)), nil
}

func (p *rawProvider) Calls(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[name]
}

func (p *rawProvider) MaxActive(string) int { return 0 }

// ---- the canonical file layout, for -update ----

// setField replaces (or appends) one field of a case object, keeping the
// order of the others.
func setField(t *testing.T, obj json.RawMessage, key string, val []byte) json.RawMessage {
	t.Helper()
	keys, vals, err := engine.OrderedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	found := false
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kj, _ := json.Marshal(k)
		b.Write(kj)
		b.WriteByte(':')
		if k == key {
			b.Write(val)
			found = true
		} else {
			b.Write(vals[i])
		}
	}
	if !found {
		kj, _ := json.Marshal(key)
		fmt.Fprintf(&b, ",%s:%s", kj, val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// writeConfFile writes cases one field per line, each value compact, so a
// regenerated file diffs line by line.
func writeConfFile(t *testing.T, file string, cases []json.RawMessage) {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, c := range cases {
		keys, vals, err := engine.OrderedObject(c)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("  {\n")
		for j, k := range keys {
			kj, _ := json.Marshal(k)
			var v bytes.Buffer
			if err := json.Compact(&v, vals[j]); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "    %s: %s", kj, v.Bytes())
			if j < len(keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString("  }")
		if i < len(cases)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	old, _ := os.ReadFile(file)
	if bytes.Equal(old, b.Bytes()) {
		return
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConformanceErrorHierarchy: error types match their Python bases
// (reference §7), so callers may test for either.
func TestConformanceErrorHierarchy(t *testing.T) {
	for _, tc := range []struct {
		typ   engine.ErrorType
		bases []engine.ErrorType
	}{
		{engine.ToolNotFoundError, []engine.ErrorType{engine.TreelangError, engine.ValueError}},
		{engine.ToolExecutionError, []engine.ErrorType{engine.TreelangError, engine.RuntimeError}},
		{engine.ProviderResponseError, []engine.ErrorType{engine.TreelangError, engine.RuntimeError}},
		{engine.ReplayMismatchError, []engine.ErrorType{engine.ProviderResponseError, engine.TreelangError}},
		{engine.ModelTimeoutError, []engine.ErrorType{engine.ModelTransportError, engine.ProviderResponseError, engine.TimeoutError}},
		{engine.ModelConnectionError, []engine.ErrorType{engine.ModelTransportError, engine.ConnectionError}},
		{engine.ASTValidationError, []engine.ErrorType{engine.TreelangError, engine.ValueError}},
		{engine.ExecutionLimitError, []engine.ErrorType{engine.ASTExecutionError, engine.TreelangError, engine.RuntimeError}},
	} {
		err := engine.Errorf(tc.typ, "x")
		for _, b := range append(tc.bases, tc.typ) {
			if !errors.Is(err, b) {
				t.Errorf("%s is not a %s", tc.typ, b)
			}
		}
	}
	for _, tc := range [][2]engine.ErrorType{
		{engine.ToolExecutionError, engine.ValueError}, {engine.ValueError, engine.TreelangError},
		{engine.TimeoutError, engine.TreelangError}, {engine.ProviderResponseError, engine.ReplayMismatchError},
		{engine.TypeError, engine.ValueError},
	} {
		if errors.Is(engine.Errorf(tc[0], "x"), tc[1]) {
			t.Errorf("%s is a %s", tc[0], tc[1])
		}
	}
	le := error(&engine.LimitError{Resource: "nodes", Limit: "1"})
	if !errors.Is(le, engine.ExecutionLimitError) || !errors.Is(le, engine.TreelangError) || engine.TypeOf(le) != engine.ExecutionLimitError {
		t.Errorf("LimitError does not match its hierarchy")
	}
	if engine.TypeOf(context.Canceled) != "" || !engine.IsCancellation(fmt.Errorf("wrapped: %w", context.Canceled)) {
		t.Errorf("cancellation has a class or is not recognised")
	}
}

// TestConformanceMarshal: serialization always names the schema version
// and keeps a placeholder's null value (reference §1.1, §11.5
// test_schema_v2; gap G8 is deliberately not reproduced).
func TestConformanceMarshal(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`{"mode":"single","body":[{"type":"value","name":"v","value":null}]}`,
			`{"type":"program","body":[{"type":"value","name":"v","value":null}],"mode":"single","schema_version":"1.0"}`},
		{`{"schema_version":"2.0","definitions":[{"name":"f","body":{"type":"literal","value":null}}],"body":[{"type":"call","function":"f"}]}`,
			`{"type":"program","definitions":[{"type":"function_definition","name":"f","params":[],"body":{"type":"literal","value":null}}],"body":[{"type":"call","function":"f","arguments":[]}],"mode":"single","schema_version":"2.0"}`},
	} {
		p, err := engine.ParseProgram([]byte(tc.src))
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := json.Compact(&got, engine.MarshalProgram(p)); err != nil {
			t.Fatal(err)
		}
		if got.String() != tc.want {
			t.Errorf("MarshalProgram\n got: %s\nwant: %s", got.String(), tc.want)
		}
	}
}
