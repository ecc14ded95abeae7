package main

// End-to-end tests of the treelang CLI. Most call run in-process with
// buffers; the few that need a real process (a signal, an MCP server on
// stdio or HTTP) use the binary that binary() builds on first use and
// TestMain removes. The programs, toolboxes, policies and fixtures they
// use live under testdata/cli/.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hangGuard bounds every wait for a subprocess or a file: a guard against
// a hang, not a timing assertion.
const hangGuard = 20 * time.Second

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary builds the treelang binary once per test process and returns
// its path.
func binary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "treelang-cli-test-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "treelang")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// td names a file under testdata/cli.
func td(name string) string { return filepath.Join("testdata", "cli", name) }

// result is what one invocation of the CLI left behind.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout:\n%s--- stderr:\n%s", r.code, r.stdout, r.stderr)
}

// tl runs the CLI in-process with stdin and args.
func tl(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*hangGuard)
	defer cancel()
	var out, errOut bytes.Buffer
	code := run(ctx, args, strings.NewReader(stdin), &out, &errOut)
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// expect fails the test unless r exited with code.
func (r result) expect(t *testing.T, code int) result {
	t.Helper()
	if r.code != code {
		t.Fatalf("want exit %d, got %s", code, r)
	}
	return r
}

// decode decodes a JSON document keeping numbers exact.
func decode(t *testing.T, text string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, text)
	}
	if dec.More() {
		t.Fatalf("more than one JSON document on stdout:\n%s", text)
	}
	return m
}

// get walks a decoded JSON value along keys and indices ("error", "type",
// 0, ...).
func get(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%v: not an object at %q: %#v", path, k, v)
			}
			if v, ok = m[k]; !ok {
				t.Fatalf("%v: no member %q in %#v", path, k, m)
			}
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("%v: no element %d in %#v", path, k, v)
			}
			v = l[k]
		}
	}
	return v
}

// str returns the string at path.
func str(t *testing.T, v any, path ...any) string {
	t.Helper()
	s, ok := get(t, v, path...).(string)
	if !ok {
		t.Fatalf("%v: not a string: %#v", path, get(t, v, path...))
	}
	return s
}

// failure checks a {"ok": false, "error": {...}} document and returns the
// error object.
func failure(t *testing.T, r result, category, typ string) map[string]any {
	t.Helper()
	doc := decode(t, r.stdout)
	if doc["ok"] != false {
		t.Fatalf("want ok false, got %s", r)
	}
	e, ok := doc["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object: %s", r)
	}
	if e["category"] != category || e["type"] != typ {
		t.Fatalf("want category %q type %q, got %s", category, typ, r)
	}
	if _, ok := e["message"].(string); !ok {
		t.Fatalf("error without a message: %s", r)
	}
	return e
}

// success checks a {"ok": true, "result": V} document and returns it.
func success(t *testing.T, r result) map[string]any {
	t.Helper()
	r.expect(t, exitOK)
	doc := decode(t, r.stdout)
	if doc["ok"] != true {
		t.Fatalf("want ok true, got %s", r)
	}
	if _, ok := doc["result"]; !ok {
		t.Fatalf("no result: %s", r)
	}
	return doc
}

func contains(t *testing.T, what, text string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(text, s) {
			t.Errorf("%s does not contain %q:\n%s", what, s, text)
		}
	}
}

func lacks(t *testing.T, what, text string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if strings.Contains(text, s) {
			t.Errorf("%s contains %q:\n%s", what, s, text)
		}
	}
}

// noCrash checks that stderr shows no Go panic or stack trace.
func noCrash(t *testing.T, r result) {
	t.Helper()
	lacks(t, "stderr", r.stderr, "panic:", "goroutine ", ".go:")
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// traceLines reads a trace file: its header and its events.
func traceLines(t *testing.T, name string) (string, []map[string]any) {
	t.Helper()
	text := readFile(t, name)
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var events []map[string]any
	for _, l := range lines[1:] {
		events = append(events, decode(t, l))
	}
	return lines[0], events
}

func kinds(events []map[string]any) []string {
	var out []string
	for _, e := range events {
		k, _ := e["kind"].(string)
		out = append(out, k)
	}
	return out
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// ---- execute ----

func TestCLIExecuteExactNumbers(t *testing.T) {
	r := tl(t, "", "execute", td("bigint.json"), "--tools", td("tools.json")).expect(t, exitOK)
	if r.stdout != "12345678901234567890124\n" {
		t.Errorf("12345678901234567890123 + 1: got %q", r.stdout)
	}
	if r.stderr != "" {
		t.Errorf("stderr on success: %q", r.stderr)
	}

	r = tl(t, "", "execute", td("float.json"), "--tools", td("tools.json"), "--output", "json")
	doc := success(t, r)
	if n, ok := doc["result"].(json.Number); !ok || n.String() != "0.30000000000000004" {
		t.Errorf("0.1 + 0.2: got %#v", doc["result"])
	}
	contains(t, "stdout", r.stdout, `"result": 0.30000000000000004`)

	r = tl(t, "", "execute", td("bigint.json"), "--tools", td("tools.json"), "--output", "json")
	if n := success(t, r)["result"]; n != json.Number("12345678901234567890124") {
		t.Errorf("json result: %#v", n)
	}
}

func TestCLIExecuteProgramSources(t *testing.T) {
	r := tl(t, "", "execute", td("value.json")).expect(t, exitOK)
	if r.stdout != "42\n" {
		t.Errorf("from a file: %q", r.stdout)
	}
	r = tl(t, readFile(t, td("value.json")), "execute", "-").expect(t, exitOK)
	if r.stdout != "42\n" {
		t.Errorf("from stdin: %q", r.stdout)
	}
	// Several body nodes give the list; strings stay UTF-8 and unescaped,
	// numbers keep their text.
	prog := `{"type": "program", "mode": "parallel", "body": [
		{"type": "value", "name": "s", "value": "<a&b> héllo ✓"},
		{"type": "value", "name": "n", "value": [1, 2.50, -0.0, 1e400, 123456789012345678901234567890]}]}`
	r = tl(t, prog, "execute", "-", "--output", "json")
	doc := success(t, r)
	if want := []any{"<a&b> héllo ✓", []any{json.Number("1"), json.Number("2.50"), json.Number("-0.0"), json.Number("1e400"), json.Number("123456789012345678901234567890")}}; !jsonEqual(doc["result"], want) {
		t.Errorf("list result: %s", r)
	}
	contains(t, "stdout", r.stdout, `"<a&b> héllo ✓"`, "123456789012345678901234567890")
	// An empty body gives the empty list.
	r = tl(t, `{"type": "program", "mode": "single", "body": []}`, "execute", "-", "--output", "json")
	if v, ok := success(t, r)["result"].([]any); !ok || len(v) != 0 {
		t.Errorf("empty body: %s", r)
	}
	// Flags may come after or before PROGRAM.
	r = tl(t, readFile(t, td("add_2_3.json")), "execute", "--output", "json", "-", "--tools", td("tools.json"))
	if v := success(t, r)["result"]; v != json.Number("5") {
		t.Errorf("stdin with flags around: %#v", v)
	}
}

func TestCLIExecuteInputErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope.json")

	t.Run("bad JSON file", func(t *testing.T) {
		r := tl(t, "", "execute", td("bad_json.json")).expect(t, exitInput)
		contains(t, "stderr", r.stderr, "input error", "bad_json.json", "invalid JSON", "line 4, column 1")
		noCrash(t, r)
		if r.stdout != "" {
			t.Errorf("stdout on error in text mode: %q", r.stdout)
		}
		r = tl(t, "", "execute", td("bad_json.json"), "--output", "json").expect(t, exitInput)
		e := failure(t, r, "input", "ValueError")
		contains(t, "message", e["message"].(string), "line 4, column 1")
	})
	t.Run("bad JSON on stdin", func(t *testing.T) {
		r := tl(t, `{"type": "program",`, "execute", "-", "--output", "json").expect(t, exitInput)
		e := failure(t, r, "input", "ValueError")
		contains(t, "message", e["message"].(string), "<stdin>", "line 1, column 20")
	})
	t.Run("not an object", func(t *testing.T) {
		r := tl(t, `[1, 2]`, "execute", "-").expect(t, exitInput)
		noCrash(t, r)
	})
	t.Run("schema violation", func(t *testing.T) {
		r := tl(t, "", "execute", td("schema_violation.json"), "--output", "json").expect(t, exitInput)
		e := failure(t, r, "input", "ValueError")
		if e["path"] != "/body/0/params/1" {
			t.Errorf("path: %#v", e["path"])
		}
		contains(t, "message", e["message"].(string), "/body/0/params/1", "'value' is required")
		r = tl(t, "", "execute", td("schema_violation.json")).expect(t, exitInput)
		contains(t, "stderr", r.stderr, "schema_violation.json", "/body/0/params/1")
	})
	t.Run("unreadable file", func(t *testing.T) {
		r := tl(t, "", "execute", missing).expect(t, exitInput)
		contains(t, "stderr", r.stderr, "input error", "cannot read "+missing, "no such file")
		r = tl(t, "", "execute", missing, "--output", "json").expect(t, exitInput)
		if e := decode(t, r.stdout)["error"]; str(t, e, "category") != "input" {
			t.Errorf("category: %s", r)
		}
		// A directory cannot be read as a program either.
		r = tl(t, "", "execute", dir).expect(t, exitInput)
		contains(t, "stderr", r.stderr, "cannot read "+dir)
		noCrash(t, r)
	})
	t.Run("bad policy", func(t *testing.T) {
		r := tl(t, "", "execute", td("value.json"), "--policy", td("bad_policy.json")).expect(t, exitInput)
		contains(t, "stderr", r.stderr, "bad_policy.json", "/retry/max_attempts")
		r = tl(t, "", "execute", td("value.json"), "--policy", td("bad_policy.json"), "--output", "json").expect(t, exitInput)
		e := failure(t, r, "input", "ValueError")
		contains(t, "message", e["message"].(string), "bad_policy.json", "/retry/max_attempts")
		r = tl(t, "", "execute", td("value.json"), "--policy", missing).expect(t, exitInput)
		contains(t, "stderr", r.stderr, missing)
	})
	t.Run("zero limit", func(t *testing.T) {
		r := tl(t, "", "execute", td("value.json"), "--max-nodes", "0").expect(t, exitInput)
		contains(t, "stderr", r.stderr, "--max-nodes", "max_nodes")
		r = tl(t, "", "execute", td("value.json"), "--max-tool-calls", "many").expect(t, exitInput)
		contains(t, "stderr", r.stderr, "--max-tool-calls")
	})
	t.Run("bad toolbox", func(t *testing.T) {
		r := tl(t, "", "execute", td("value.json"), "--tools", td("value.json")).expect(t, exitInput)
		noCrash(t, r)
	})
	t.Run("usage", func(t *testing.T) {
		r := tl(t, "", "execute").expect(t, exitInput)
		contains(t, "stderr", r.stderr, "exactly one PROGRAM")
		r = tl(t, "", "execute", td("value.json"), "--output", "yaml").expect(t, exitInput)
		contains(t, "stderr", r.stderr, "--output must be text or json")
		r = tl(t, "", "execute", td("value.json"), "--no-such-flag").expect(t, exitInput)
		contains(t, "stderr", r.stderr, "no-such-flag")
		r = tl(t, "", "frobnicate").expect(t, exitInput)
		contains(t, "stderr", r.stderr, `unknown command "frobnicate"`)
		tl(t, "").expect(t, exitInput)
		r = tl(t, "", "help").expect(t, exitOK)
		contains(t, "stdout", r.stdout, "treelang execute PROGRAM")
	})
}

func TestCLIExecuteExecutionErrors(t *testing.T) {
	t.Run("failing tool", func(t *testing.T) {
		r := tl(t, "", "execute", td("boom.json"), "--tools", td("tools.json")).expect(t, exitExecution)
		contains(t, "stderr", r.stderr, "execution error", "ToolExecutionError", "kaboom", "/body/0")
		if r.stdout != "" {
			t.Errorf("stdout: %q", r.stdout)
		}
		r = tl(t, "", "execute", td("boom.json"), "--tools", td("tools.json"), "--output", "json").expect(t, exitExecution)
		e := failure(t, r, "execution", "ToolExecutionError")
		if e["message"] != "kaboom" || e["path"] != "/body/0" {
			t.Errorf("error: %#v", e)
		}
	})
	t.Run("tool not found", func(t *testing.T) {
		// No tools at all (upstream's CLI without a fixture), and a
		// toolbox without the tool.
		for _, extra := range [][]string{nil, {"--tools", td("tools.json")}} {
			args := append([]string{"execute", td("missing_tool.json"), "--output", "json"}, extra...)
			r := tl(t, "", args...).expect(t, exitExecution)
			e := failure(t, r, "execution", "ToolNotFoundError")
			contains(t, "message", e["message"].(string), "no_such_tool")
		}
	})
	t.Run("nodes limit", func(t *testing.T) {
		r := tl(t, "", "execute", td("value.json"), "--max-nodes", "1").expect(t, exitExecution)
		contains(t, "stderr", r.stderr, "nodes limit exceeded", "ExecutionLimitError")
		r = tl(t, "", "execute", td("value.json"), "--max-nodes", "1", "--output", "json").expect(t, exitExecution)
		e := failure(t, r, "execution", "ExecutionLimitError")
		contains(t, "message", e["message"].(string), "nodes limit exceeded")
	})
	t.Run("timeout", func(t *testing.T) {
		r := tl(t, "", "execute", td("slow.json"), "--tools", td("slow_tools.json"), "--timeout", "0.2", "--output", "json").expect(t, exitExecution)
		e := failure(t, r, "execution", "ExecutionLimitError")
		contains(t, "message", e["message"].(string), "limit exceeded")
	})
	t.Run("result with no JSON form", func(t *testing.T) {
		lambda := `{"type": "program", "mode": "single", "body": [{"type": "lambda", "params": ["x"],
			"body": {"type": "function", "name": "f", "params": [{"type": "value", "name": "x", "value": null}]}}]}`
		r := tl(t, lambda, "execute", "-", "--output", "json").expect(t, exitExecution)
		e := failure(t, r, "execution", "TypeError")
		contains(t, "message", e["message"].(string), "not JSON serializable")
	})
	t.Run("collect on a single program", func(t *testing.T) {
		r := tl(t, "", "execute", td("boom.json"), "--tools", td("tools.json"), "--policy", td("collect.json"), "--output", "json").expect(t, exitInput)
		failure(t, r, "input", "ValueError")
	})
}

func TestCLIExecuteCollect(t *testing.T) {
	want := []any{
		map[string]any{"success": true, "value": json.Number("3")},
		map[string]any{"success": false, "error_type": "ToolExecutionError", "error_message": "kaboom"},
	}
	r := tl(t, "", "execute", td("parallel.json"), "--tools", td("tools.json"), "--policy", td("collect.json"), "--output", "json")
	got := success(t, r)["result"]
	if !jsonEqual(got, want) {
		t.Errorf("collect outcomes:\n got %#v\nwant %#v", got, want)
	}
	// Text mode prints the same list.
	r = tl(t, "", "execute", td("parallel.json"), "--tools", td("tools.json"), "--policy", td("collect.json")).expect(t, exitOK)
	var list []any
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.UseNumber()
	if err := dec.Decode(&list); err != nil || !jsonEqual(list, want) {
		t.Errorf("text collect outcomes: %v %s", err, r)
	}
	// One branch at a time gives the same outcomes, in the same order.
	r = tl(t, "", "execute", td("parallel.json"), "--tools", td("tools.json"), "--policy", td("collect.json"), "--max-concurrency", "1", "--output", "json")
	if got := success(t, r)["result"]; !jsonEqual(got, want) {
		t.Errorf("collect with --max-concurrency 1: %s", r)
	}
	// The default policy raises the first failure.
	r = tl(t, "", "execute", td("parallel.json"), "--tools", td("tools.json"), "--output", "json").expect(t, exitExecution)
	failure(t, r, "execution", "ToolExecutionError")
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func TestCLIExecuteSchemaV2(t *testing.T) {
	r := tl(t, "", "execute", td("v2_double.json"), "--tools", td("tools.json")).expect(t, exitOK)
	if r.stdout != "42\n" {
		t.Errorf("double(21): %s", r)
	}
	// validate's output is itself a valid program with the same result.
	v := tl(t, "", "validate", td("v2_double.json")).expect(t, exitOK)
	if doc := decode(t, v.stdout); doc["schema_version"] != "2.0" || str(t, doc, "definitions", 0, "type") != "function_definition" {
		t.Errorf("validate: %s", v.stdout)
	}
	r = tl(t, v.stdout, "execute", "-", "--tools", td("tools.json")).expect(t, exitOK)
	if r.stdout != "42\n" {
		t.Errorf("validated program: %s", r)
	}
	r = tl(t, "", "inspect", td("v2_double.json")).expect(t, exitOK)
	contains(t, "tree", r.stdout, "  definitions:\n    0: function_definition double\n", "    0: call double\n", "        0: literal = 21\n")

	// Static errors are input errors that point into the program.
	src := strings.Replace(readFile(t, td("v2_double.json")), `"a": {"type": "variable", "name": "x"}`, `"a": {"type": "variable", "name": "y"}`, 1)
	r = tl(t, src, "execute", "-", "--output", "json").expect(t, exitInput)
	e := failure(t, r, "input", "ValueError")
	if e["path"] != "/definitions/0/body/arguments/a" {
		t.Errorf("path: %#v", e["path"])
	}
	contains(t, "message", e["message"].(string), "Unbound variable 'y'")

	// Unbounded recursion stops at the call-depth limit.
	loop := `{"schema_version": "2.0", "definitions": [{"name": "loop", "params": [],
		"body": {"type": "call", "function": "loop", "arguments": []}}],
		"body": [{"type": "call", "function": "loop", "arguments": []}]}`
	r = tl(t, loop, "execute", "-", "--max-call-depth", "3", "--output", "json").expect(t, exitExecution)
	e = failure(t, r, "execution", "ExecutionLimitError")
	if e["message"] != "Execution call_depth limit exceeded (3)" {
		t.Errorf("message: %#v", e["message"])
	}
}

// ---- policy and limits ----

func TestCLIPolicyRetry(t *testing.T) {
	dir := t.TempDir()
	// The idempotent tool fails once, is retried and succeeds; the fixture
	// holds one entry per physical attempt.
	fx := filepath.Join(dir, "fetch.fixture.json")
	r := tl(t, "", "execute", td("fetch.json"), "--tools", td("flaky_tools.json"), "--policy", td("retry.json"), "--record", fx, "--output", "json")
	if v := success(t, r)["result"]; v != "fetched" {
		t.Errorf("retried tool: %s", r)
	}
	calls := get(t, decode(t, readFile(t, fx)), "calls").([]any)
	if len(calls) != 2 || str(t, calls[0], "error", "type") != "ToolExecutionError" || get(t, calls[1], "output") != "fetched" {
		t.Errorf("recorded attempts: %#v", calls)
	}

	// Without the policy the first failure is raised.
	r = tl(t, "", "execute", td("fetch.json"), "--tools", td("flaky_tools.json"), "--output", "json").expect(t, exitExecution)
	if e := failure(t, r, "execution", "ToolExecutionError"); e["message"] != "503 once" {
		t.Errorf("no retry by default: %s", r)
	}

	// A tool that is not idempotent is never retried.
	fx2 := filepath.Join(dir, "charge.fixture.json")
	r = tl(t, "", "execute", td("charge.json"), "--tools", td("flaky_tools.json"), "--policy", td("retry.json"), "--record", fx2, "--output", "json").expect(t, exitExecution)
	if e := failure(t, r, "execution", "ToolExecutionError"); e["message"] != "gateway timeout" {
		t.Errorf("non-idempotent tool: %s", r)
	}
	if calls := get(t, decode(t, readFile(t, fx2)), "calls").([]any); len(calls) != 1 {
		t.Errorf("non-idempotent tool ran %d attempts, want 1", len(calls))
	}

	// Every attempt consumes the tool-call budget: the retry hits the limit.
	r = tl(t, "", "execute", td("fetch.json"), "--tools", td("flaky_tools.json"), "--policy", td("retry.json"), "--max-tool-calls", "1", "--output", "json").expect(t, exitExecution)
	e := failure(t, r, "execution", "ExecutionLimitError")
	contains(t, "message", e["message"].(string), "tool_calls limit exceeded")

	// A limit flag adds to the policy file's limits.
	r = tl(t, "", "execute", td("fetch.json"), "--tools", td("flaky_tools.json"), "--policy", td("retry.json"), "--max-tool-calls", "2", "--timeout", "30").expect(t, exitOK)
	if r.stdout != "\"fetched\"\n" {
		t.Errorf("within limits: %s", r)
	}
}

// ---- record and replay ----

func TestCLIRecordReplay(t *testing.T) {
	dir := t.TempDir()
	fx := filepath.Join(dir, "fetch.fixture.json")
	live := tl(t, "", "execute", td("fetch.json"), "--tools", td("flaky_tools.json"), "--policy", td("retry.json"), "--record", fx).expect(t, exitOK)

	t.Run("same result", func(t *testing.T) {
		r := tl(t, "", "replay", td("fetch.json"), "--fixture", fx, "--policy", td("retry.json")).expect(t, exitOK)
		if r.stdout != live.stdout {
			t.Errorf("replay printed %q, the live run %q", r.stdout, live.stdout)
		}
		contains(t, "stderr", r.stderr, "2 of 2 entries consumed")
		lacks(t, "stderr", r.stderr, "warning")
		r = tl(t, "", "replay", td("fetch.json"), "--fixture", fx, "--policy", td("retry.json"), "--output", "json")
		doc := success(t, r)
		if doc["result"] != "fetched" || get(t, doc, "coverage", "consumed") != json.Number("2") {
			t.Errorf("json replay: %s", r)
		}
		// execute --replay serves the same fixture.
		r = tl(t, "", "execute", td("fetch.json"), "--replay", fx, "--policy", td("retry.json")).expect(t, exitOK)
		if r.stdout != live.stdout {
			t.Errorf("execute --replay printed %q", r.stdout)
		}
	})

	t.Run("same error", func(t *testing.T) {
		fx := filepath.Join(dir, "boom.fixture.json")
		live := tl(t, "", "execute", td("boom.json"), "--tools", td("tools.json"), "--record", fx, "--output", "json").expect(t, exitExecution)
		r := tl(t, "", "replay", td("boom.json"), "--fixture", fx, "--output", "json").expect(t, exitExecution)
		want := decode(t, live.stdout)["error"].(map[string]any)
		got := failure(t, r, "execution", "ToolExecutionError")
		delete(got, "coverage")
		if !jsonEqual(got, want) {
			t.Errorf("replayed error %#v, live %#v", got, want)
		}
	})

	t.Run("drift", func(t *testing.T) {
		r := tl(t, "", "replay", td("fetch_drifted.json"), "--fixture", fx, "--policy", td("retry.json")).expect(t, exitExecution)
		contains(t, "stderr", r.stderr, "replay drift: changed at fixture entry 1",
			"EXPECTED (fixture)", "ACTUAL (this run)", `{"item":"book"}`, `{"item":"pen"}`,
			"ReplayMismatchError")
		warn := strings.Index(r.stderr, "program changed since recording")
		if warn < 0 || warn > strings.Index(r.stderr, "replay drift") {
			t.Errorf("want the changed-program warning before the drift:\n%s", r.stderr)
		}
		noCrash(t, r)

		r = tl(t, "", "replay", td("fetch_drifted.json"), "--fixture", fx, "--policy", td("retry.json"), "--output", "json").expect(t, exitExecution)
		e := failure(t, r, "execution", "ReplayMismatchError")
		rep := get(t, e, "report")
		if str(t, rep, "drift") != "changed" || get(t, rep, "entry") != json.Number("1") {
			t.Errorf("report: %#v", rep)
		}
		if str(t, rep, "expected", "arguments", "item") != "book" || str(t, rep, "actual", "arguments", "item") != "pen" {
			t.Errorf("expected/actual: %#v", rep)
		}
		if str(t, rep, "diff", 0, "path") != "arguments.item" || str(t, rep, "diff", 0, "expected") != "book" || str(t, rep, "diff", 0, "actual") != "pen" {
			t.Errorf("diff: %#v", get(t, rep, "diff"))
		}
		// The warning still goes to stderr; stdout stays one document.
		contains(t, "stderr", r.stderr, "program changed since recording")
	})

	t.Run("re-recorded", func(t *testing.T) {
		// Recording a replay gives back the same calls and timers.
		again := filepath.Join(dir, "again.fixture.json")
		tl(t, "", "execute", td("fetch.json"), "--replay", fx, "--policy", td("retry.json"), "--record", again).expect(t, exitOK)
		a, b := decode(t, readFile(t, fx)), decode(t, readFile(t, again))
		for _, k := range []string{"tools", "calls", "timers"} {
			if !jsonEqual(a[k], b[k]) {
				t.Errorf("%s differ:\n%v\n%v", k, a[k], b[k])
			}
		}
	})

	t.Run("traced", func(t *testing.T) {
		tr := filepath.Join(dir, "replay.jsonl")
		tl(t, "", "replay", td("fetch.json"), "--fixture", fx, "--policy", td("retry.json"), "--trace", tr).expect(t, exitOK)
		_, events := traceLines(t, tr)
		if ks := kinds(events); count(ks, "replay.match") != 2 || ks[len(ks)-1] != "run.end" {
			t.Errorf("replay trace kinds: %v", ks)
		}
		tl(t, "", "replay", td("fetch_drifted.json"), "--fixture", fx, "--policy", td("retry.json"), "--trace", tr).expect(t, exitExecution)
		_, events = traceLines(t, tr)
		if ks := kinds(events); count(ks, "replay.mismatch") != 1 || ks[len(ks)-1] != "run.end" {
			t.Errorf("drift trace kinds: %v", ks)
		}
	})

	t.Run("changed program warns before it runs", func(t *testing.T) {
		// Different bytes, same calls: the replay succeeds, with a warning.
		changed := filepath.Join(dir, "fetch_renamed.json")
		src := strings.Replace(readFile(t, td("fetch.json")), `"name": "item"`, `"name": "what"`, 1)
		if err := os.WriteFile(changed, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		r := tl(t, "", "replay", changed, "--fixture", fx, "--policy", td("retry.json")).expect(t, exitOK)
		warn := strings.Index(r.stderr, "warning: program changed since recording")
		cov := strings.Index(r.stderr, "entries consumed")
		if warn < 0 || cov < warn {
			t.Errorf("want the warning first:\n%s", r.stderr)
		}
	})

	t.Run("unconsumed", func(t *testing.T) {
		r := tl(t, "", "replay", td("add_2_3.json"), "--fixture", td("python_fixture.json")).expect(t, exitExecution)
		contains(t, "stderr", r.stderr, "unconsumed", "ReplayMismatchError")
		r = tl(t, "", "replay", td("add_2_3.json"), "--fixture", td("python_fixture.json"), "--output", "json").expect(t, exitExecution)
		e := failure(t, r, "execution", "ReplayMismatchError")
		contains(t, "message", e["message"].(string), "unconsumed")
		if str(t, e, "report", "drift") != "unconsumed" {
			t.Errorf("report: %#v", e["report"])
		}
		// execute --replay does not insist on every entry.
		r = tl(t, "", "execute", td("add_2_3.json"), "--replay", td("python_fixture.json")).expect(t, exitOK)
		if r.stdout != "5\n" {
			t.Errorf("execute --replay: %s", r)
		}
	})

	t.Run("python fixture", func(t *testing.T) {
		before := readFile(t, td("python_fixture.json"))
		r := tl(t, "", "replay", td("add_nested.json"), "--fixture", td("python_fixture.json"), "--output", "json")
		if v := success(t, r)["result"]; v != json.Number("15") {
			t.Errorf("python fixture: %s", r)
		}
		if readFile(t, td("python_fixture.json")) != before {
			t.Error("replay changed the fixture")
		}
	})

	t.Run("bad fixture", func(t *testing.T) {
		r := tl(t, "", "replay", td("fetch.json"), "--fixture", td("bad_json.json")).expect(t, exitInput)
		contains(t, "stderr", r.stderr, "bad_json.json")
		r = tl(t, "", "replay", td("fetch.json")).expect(t, exitInput)
		contains(t, "stderr", r.stderr, "--fixture")
		r = tl(t, "", "replay", "--fixture", td("python_fixture.json")).expect(t, exitInput)
		contains(t, "stderr", r.stderr, "not an ask recording")
	})
}

// TestCLIReplayConcurrentFailure records a parallel run that retries one
// branch, fails another and cancels the third, then replays it: every
// replay ends as the recording did, whatever order goroutines run in.
func TestCLIReplayConcurrentFailure(t *testing.T) {
	dir := t.TempDir()
	fx := filepath.Join(dir, "checkout.fixture.json")
	live := tl(t, "", "execute", td("checkout.json"), "--tools", td("checkout_tools.json"), "--policy", td("checkout_policy.json"), "--record", fx, "--output", "json").expect(t, exitExecution)
	want := failure(t, live, "execution", "ToolExecutionError")
	if want["message"] != "card gateway timeout" || want["path"] != "/body/2" {
		t.Fatalf("live run: %s", live)
	}
	// The ten-second reservation was cancelled by the charge's failure.
	var reserve []any
	for _, c := range get(t, decode(t, readFile(t, fx)), "calls").([]any) {
		if str(t, c, "name") == "reserve_stock" {
			reserve = append(reserve, c)
		}
	}
	if len(reserve) != 1 || get(t, reserve[0], "cancelled") != true {
		t.Errorf("reserve_stock attempts: %#v", reserve)
	}
	for i := 0; i < 3; i++ {
		r := tl(t, "", "replay", td("checkout.json"), "--fixture", fx, "--policy", td("checkout_policy.json"), "--output", "json").expect(t, exitExecution)
		got := failure(t, r, "execution", "ToolExecutionError")
		cov := got["coverage"]
		delete(got, "coverage")
		if !jsonEqual(got, want) {
			t.Errorf("replay %d: %s", i, r)
		}
		if get(t, cov, "consumed") != get(t, cov, "entries") {
			t.Errorf("replay %d coverage: %#v", i, cov)
		}
	}

	// Without the failing branch, the cancellation the recording saw never
	// comes: the replay reports it once nothing progresses, not a hang.
	r := tl(t, "", "replay", td("checkout_no_charge.json"), "--fixture", fx, "--policy", td("checkout_policy.json"), "--stall", "300ms", "--output", "json").expect(t, exitExecution)
	// Which missing completion is named varies from run to run (reported
	// as a replay bug): the charge that was never called, or the reservation
	// still waiting for the cancellation it caused.
	e := failure(t, r, "execution", "ReplayMismatchError")
	if name := str(t, e, "report", "expected", "name"); str(t, e, "report", "drift") != "missing" || (name != "charge_card" && name != "reserve_stock") {
		t.Errorf("report: %s", r)
	}

	// Collected outcomes replay as they were.
	fx2 := filepath.Join(dir, "collect.fixture.json")
	live = tl(t, "", "execute", td("parallel.json"), "--tools", td("tools.json"), "--policy", td("collect.json"), "--record", fx2, "--output", "json")
	r = tl(t, "", "replay", td("parallel.json"), "--fixture", fx2, "--policy", td("collect.json"), "--output", "json")
	if a, b := success(t, live)["result"], success(t, r)["result"]; !jsonEqual(a, b) {
		t.Errorf("collect replay %#v, live %#v", b, a)
	}
}

// TestCLIReplayDeadline: a run that hit its wall-clock limit replays to
// the same ExecutionLimitError.
func TestCLIReplayDeadline(t *testing.T) {
	fx := filepath.Join(t.TempDir(), "deadline.fixture.json")
	live := tl(t, "", "execute", td("slow.json"), "--tools", td("slow_tools.json"), "--timeout", "0.2", "--record", fx, "--output", "json").expect(t, exitExecution)
	want := failure(t, live, "execution", "ExecutionLimitError")
	r := tl(t, "", "replay", td("slow.json"), "--fixture", fx, "--timeout", "0.2", "--output", "json").expect(t, exitExecution)
	got := failure(t, r, "execution", "ExecutionLimitError")
	if got["message"] != want["message"] {
		t.Errorf("replayed %q, live %q", got["message"], want["message"])
	}
}

// ---- traces ----

func TestCLITrace(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "run.jsonl")
	tl(t, "", "execute", td("fetch.json"), "--tools", td("flaky_tools.json"), "--policy", td("retry.json"), "--trace", tr).expect(t, exitOK)
	header, events := traceLines(t, tr)
	if header != `{"format":"treelang-trace","version":1}` {
		t.Errorf("header: %s", header)
	}
	ks := kinds(events)
	if len(ks) == 0 || ks[0] != "run.start" || ks[len(ks)-1] != "run.end" {
		t.Errorf("kinds: %v", ks)
	}
	if count(ks, "tool.attempt.start") != 2 || count(ks, "tool.attempt.end") != 2 || count(ks, "retry.backoff.start") != 1 {
		t.Errorf("kinds: %v", ks)
	}
	for i, e := range events {
		if e["seq"] != json.Number(fmt.Sprint(i+1)) {
			t.Errorf("event %d has seq %v", i, e["seq"])
		}
	}

	r := tl(t, "", "trace", tr, "--output", "text").expect(t, exitOK)
	contains(t, "timeline", r.stdout, "run.start", "tool.attempt.start /body/0 fetch attempt 1/3",
		"503 once", "retry.backoff.start", "fetch attempt 2/3", `result: "fetched"`, "retries: 1")

	// Without a terminal there is no debugger: the timeline is printed.
	r2 := tl(t, "q\n", "trace", tr).expect(t, exitOK)
	if r2.stdout != r.stdout {
		t.Errorf("trace without a terminal:\n%s", r2.stdout)
	}

	// Unreadable traces name the file once, and say what is wrong.
	none := filepath.Join(dir, "none.jsonl")
	r = tl(t, "", "trace", none, "--output", "text").expect(t, exitInput)
	noCrash(t, r)
	if strings.Count(r.stderr, none) != 1 {
		t.Errorf("want the file named once:\n%s", r.stderr)
	}
	notTrace := filepath.Join(dir, "not-a-trace.jsonl")
	os.WriteFile(notTrace, []byte(`{"format":"other","version":9}`+"\n"), 0o644)
	r = tl(t, "", "trace", notTrace, "--output", "text").expect(t, exitInput)
	contains(t, "stderr", r.stderr, "not a treelang trace")
	if strings.Count(r.stderr, notTrace) != 1 {
		t.Errorf("want the file named once:\n%s", r.stderr)
	}
	// A trace cut mid-line (a crash) still reads, with a warning.
	data := readFile(t, tr)
	cut := filepath.Join(dir, "cut.jsonl")
	os.WriteFile(cut, []byte(data[:len(data)-20]), 0o644)
	r = tl(t, "", "trace", cut, "--output", "text").expect(t, exitOK)
	contains(t, "stderr", r.stderr, "warning", "truncated last line")
	contains(t, "timeline", r.stdout, "no run.end")
	r = tl(t, "", "trace", tr, "--output", "html").expect(t, exitInput)
	contains(t, "stderr", r.stderr, "--output must be text")
}

func TestCLITraceRedaction(t *testing.T) {
	const key = "sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	const bearer = "xyzSECRETtoken1234567890abcdef"
	dir := t.TempDir()
	tr, fx := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.fixture.json")
	r := tl(t, "", "execute", td("secret.json"), "--tools", td("secret_tools.json"), "--trace", tr, "--record", fx).expect(t, exitOK)
	for _, name := range []string{tr, fx} {
		text := readFile(t, name)
		lacks(t, name, text, key, bearer)
		contains(t, name, text, "[REDACTED]")
	}
	contains(t, "stderr", r.stderr, "redacted calls[0].arguments.api_key", "redacted calls[0].arguments.header")
	lacks(t, "stderr", r.stderr, key, bearer)
	// The redacted trace still reads, and its arguments still show the tool.
	_, events := traceLines(t, tr)
	for _, e := range events {
		if e["kind"] == "tool.attempt.start" && e["tool"] != "call_api" {
			t.Errorf("attempt: %#v", e)
		}
	}

	tr2, fx2 := filepath.Join(dir, "raw.jsonl"), filepath.Join(dir, "raw.fixture.json")
	r = tl(t, "", "execute", td("secret.json"), "--tools", td("secret_tools.json"), "--trace", tr2, "--record", fx2, "--no-redact").expect(t, exitOK)
	for _, name := range []string{tr2, fx2} {
		contains(t, name, readFile(t, name), key, bearer)
	}
	lacks(t, "stderr", r.stderr, "redacted")
}

func TestCLIFailedRunKeepsTraceAndRecording(t *testing.T) {
	dir := t.TempDir()
	tr, fx := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.fixture.json")
	tl(t, "", "execute", td("boom.json"), "--tools", td("tools.json"), "--trace", tr, "--record", fx).expect(t, exitExecution)
	_, events := traceLines(t, tr)
	last := events[len(events)-1]
	if last["kind"] != "run.end" || str(t, last, "error", "type") != "ToolExecutionError" {
		t.Errorf("last event: %#v", last)
	}
	if ks := kinds(events); count(ks, "tool.attempt.end") != 1 {
		t.Errorf("kinds: %v", ks)
	}
	doc := decode(t, readFile(t, fx))
	if doc["format"] != "treelang-fixture" || str(t, doc, "calls", 0, "error", "message") != "kaboom" {
		t.Errorf("fixture: %#v", doc)
	}
}

// ---- interruption ----

func TestCLIInterrupt(t *testing.T) {
	bin := binary(t)
	t.Run("toolbox", func(t *testing.T) {
		interrupt(t, bin, "--tools", td("slow_tools.json"))
	})
	t.Run("MCP server", func(t *testing.T) {
		// A copy of the toolbox under a unique path finds the server's
		// process afterwards.
		tools := filepath.Join(t.TempDir(), "slow_tools.json")
		if err := os.WriteFile(tools, []byte(readFile(t, td("slow_tools.json"))), 0o644); err != nil {
			t.Fatal(err)
		}
		interrupt(t, bin, "--mcp-stdio", bin+" tools serve --tools "+tools)
		if pids := processesWith(t, tools); len(pids) > 0 {
			t.Errorf("the MCP server outlived the interrupted client: pids %v", pids)
		}
	})
}

// interrupt runs slow.json with toolArgs in the real binary, with --trace
// and --record, sends an interrupt once the ten-second attempt is under
// way, and checks that the process ends promptly and leaves a whole trace
// and a recording that marks the attempt cancelled.
func interrupt(t *testing.T, bin string, toolArgs ...string) {
	dir := t.TempDir()
	tr, fx := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.fixture.json")
	args := append([]string{"execute", td("slow.json"), "--trace", tr, "--record", fx}, toolArgs...)
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-done
		}
	}()

	// Wait until the trace shows the attempt in flight.
	deadline := time.Now().Add(hangGuard)
	for {
		data, _ := os.ReadFile(tr)
		if bytes.Contains(data, []byte(`"kind":"tool.attempt.start"`)) {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("exited before the attempt started: %v\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the trace never showed the attempt start:\n%s", data)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the process did not exit within 5s of the interrupt")
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("want a non-zero exit, got %v\n%s", err, stderr.String())
	}
	t.Logf("exit %d, stderr: %s", exit.ExitCode(), stderr.String())
	lacks(t, "stderr", stderr.String(), "goroutine ", "panic:")
	if stdout.Len() != 0 {
		t.Errorf("stdout: %q", stdout.String())
	}

	_, events := traceLines(t, tr)
	last := events[len(events)-1]
	if last["kind"] != "run.end" || last["error"] == nil {
		t.Errorf("the trace ends with %#v, want run.end with an error", last)
	}
	doc := decode(t, readFile(t, fx))
	calls := get(t, doc, "calls").([]any)
	if len(calls) != 1 || get(t, calls[0], "cancelled") != true || str(t, calls[0], "name") != "slow" {
		t.Errorf("recorded calls: %#v", calls)
	}
}

// processesWith lists the processes whose command line mentions s (Linux;
// elsewhere the check is skipped).
func processesWith(t *testing.T, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	var pids []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(s)) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// ---- validate, inspect, schema ----

func TestCLIValidateInspectSchema(t *testing.T) {
	t.Run("validate", func(t *testing.T) {
		r := tl(t, "", "validate", td("nulls.json")).expect(t, exitOK)
		doc := decode(t, r.stdout)
		for _, k := range []string{"name", "description"} {
			if _, ok := doc[k]; ok {
				t.Errorf("null %s not omitted:\n%s", k, r.stdout)
			}
		}
		if doc["schema_version"] != "1.0" || doc["mode"] != "single" || doc["type"] != "program" {
			t.Errorf("program: %s", r.stdout)
		}
		node := get(t, doc, "body", 0).(map[string]any)
		if _, ok := node["false_branch"]; ok {
			t.Errorf("null false_branch not omitted:\n%s", r.stdout)
		}
		// A value's null is its value, not an absent field.
		if v, ok := get(t, node, "true_branch").(map[string]any)["value"]; !ok || v != nil {
			t.Errorf("value null: %s", r.stdout)
		}
		r2 := tl(t, readFile(t, td("nulls.json")), "validate", "-").expect(t, exitOK)
		if r2.stdout != r.stdout {
			t.Errorf("stdin validate differs:\n%s", r2.stdout)
		}
		r = tl(t, "", "validate", td("schema_violation.json")).expect(t, exitInput)
		contains(t, "stderr", r.stderr, "/body/0/params/1")
		tl(t, "", "validate", td("bad_json.json")).expect(t, exitInput)
	})
	t.Run("inspect", func(t *testing.T) {
		r := tl(t, "", "inspect", td("value.json")).expect(t, exitOK)
		want := "program\n  body:\n    0: value answer = 42\n  mode: 'single'\n"
		if r.stdout != want {
			t.Errorf("tree:\n%q\nwant\n%q", r.stdout, want)
		}
		r = tl(t, "", "inspect", td("add_nested.json"), "--format", "tree").expect(t, exitOK)
		contains(t, "tree", r.stdout, "    0: function add\n      params:\n        0: function add\n", "        1: value b = 10\n")
		r = tl(t, "", "inspect", td("nulls.json"), "--format", "json").expect(t, exitOK)
		v := tl(t, "", "validate", td("nulls.json")).expect(t, exitOK)
		if r.stdout != v.stdout {
			t.Errorf("inspect --format json differs from validate:\n%s\n%s", r.stdout, v.stdout)
		}
		tl(t, "", "inspect", td("value.json"), "--format", "xml").expect(t, exitInput)
	})
	t.Run("schema", func(t *testing.T) {
		docs := map[string]string{}
		for _, v := range []string{"1.0", "2.0"} {
			r := tl(t, "", "schema", "--schema-version", v).expect(t, exitOK)
			doc := decode(t, r.stdout)
			if _, ok := doc["$schema"]; !ok {
				t.Errorf("schema %s has no $schema", v)
			}
			contains(t, "schema "+v, fmt.Sprint(doc["$id"]), v)
			docs[v] = r.stdout
		}
		if docs["1.0"] == docs["2.0"] {
			t.Error("schemas 1.0 and 2.0 are the same")
		}
		if r := tl(t, "", "schema").expect(t, exitOK); r.stdout != docs["1.0"] {
			t.Error("default schema is not 1.0")
		}
		out := filepath.Join(t.TempDir(), "schema.json")
		tl(t, "", "schema", "--schema-version", "2.0", "--output", out).expect(t, exitOK)
		if readFile(t, out) != docs["2.0"] {
			t.Error("--output wrote something else")
		}
		r := tl(t, "", "schema", "--schema-version", "3.0").expect(t, exitInput)
		contains(t, "stderr", r.stderr, "3.0")
	})
}

// ---- redact ----

func TestCLIRedact(t *testing.T) {
	const key = "sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	const bearer = "xyzSECRETtoken1234567890abcdef"
	dir := t.TempDir()
	in := filepath.Join(dir, "secret.fixture.json")
	original := readFile(t, td("secret_fixture.json"))
	if err := os.WriteFile(in, []byte(original), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "clean.fixture.json")

	r := tl(t, "", "redact", in, "-o", out).expect(t, exitOK)
	contains(t, "stdout", r.stdout, "calls[0].arguments.api_key", "key:api_key",
		"calls[0].arguments.header", "pattern:bearer", "sk-l…", "chars")
	lacks(t, "output", r.stdout+r.stderr, key, bearer)
	contains(t, "stderr", r.stderr, "2 change(s)", out)
	if readFile(t, in) != original {
		t.Error("redact -o changed the original")
	}
	red := readFile(t, out)
	lacks(t, "redacted fixture", red, key, bearer)
	contains(t, "redacted fixture", red, "[REDACTED]", `"output": "done"`)

	r = tl(t, "", "redact", "--check", in).expect(t, exitCheck)
	contains(t, "stdout", r.stdout, "calls[0].arguments.api_key", "calls[0].arguments.header")
	contains(t, "stderr", r.stderr, "2 secret(s) found")
	lacks(t, "output", r.stdout+r.stderr, key, bearer)
	tl(t, "", "redact", "--check", out).expect(t, exitOK)
	tl(t, "", "redact", "--check", td("python_fixture.json")).expect(t, exitOK)

	// Without -o the fixture is rewritten in place.
	tl(t, "", "redact", in).expect(t, exitOK)
	lacks(t, "rewritten fixture", readFile(t, in), key, bearer)
	tl(t, "", "redact", "--check", in).expect(t, exitOK)

	r = tl(t, "", "redact", filepath.Join(dir, "none.json")).expect(t, exitInput)
	noCrash(t, r)
}

func TestCLIRedactionRules(t *testing.T) {
	dir := t.TempDir()
	fx := filepath.Join(dir, "fetch.fixture.json")
	r := tl(t, "", "execute", td("fetch.json"), "--tools", td("flaky_tools.json"), "--policy", td("retry.json"), "--record", fx, "--rules", td("rules.json")).expect(t, exitOK)
	contains(t, "stderr", r.stderr, "redacted calls[0].arguments.item", "key:item")
	text := readFile(t, fx)
	lacks(t, "fixture", text, `"book"`)
	// A redacted value matches whatever the replay passes there.
	r = tl(t, "", "replay", td("fetch.json"), "--fixture", fx, "--policy", td("retry.json")).expect(t, exitOK)
	if r.stdout != "\"fetched\"\n" {
		t.Errorf("replay of a redacted fixture: %s", r)
	}

	// A user pattern in redact.
	in := filepath.Join(dir, "orders.fixture.json")
	os.WriteFile(in, []byte(`{"tools": [{"name": "lookup", "properties": {"q": {"type": "string"}}}],
		"calls": [{"name": "lookup", "arguments": {"q": "status of ord-123456"}, "output": "shipped"}]}`), 0o644)
	do := func(args ...string) result { return tl(t, "", args...) }
	do("redact", "--check", in).expect(t, exitOK)
	r = do("redact", "--check", in, "--rules", td("rules.json")).expect(t, exitCheck)
	contains(t, "stdout", r.stdout, "calls[0].arguments.q", "order_id")
	out := filepath.Join(dir, "orders.clean.json")
	do("redact", in, "--rules", td("rules.json"), "-o", out).expect(t, exitOK)
	contains(t, "redacted", readFile(t, out), `"status of [REDACTED]"`)

	// A bad rules file stops the run before any tool is called.
	tr := filepath.Join(dir, "bad.jsonl")
	fx2 := filepath.Join(dir, "bad.fixture.json")
	r = do("execute", td("fetch.json"), "--tools", td("flaky_tools.json"), "--record", fx2, "--trace", tr, "--rules", td("bad_rules.json")).expect(t, exitInput)
	contains(t, "stderr", r.stderr, "bad_rules.json", "/keys")
	if r.stdout != "" {
		t.Errorf("the program ran: %s", r)
	}
	for _, name := range []string{tr, fx2} {
		if _, err := os.Stat(name); err == nil {
			t.Errorf("%s was written", name)
		}
	}
	r = do("redact", in, "--rules", td("bad_rules.json")).expect(t, exitInput)
	contains(t, "stderr", r.stderr, "bad_rules.json")
}

// ---- generate and ask ----

// fakeModel is an OpenAI-compatible endpoint on loopback that answers the
// Nth chat completion with the Nth reply (the last one once they run out).
type fakeModel struct {
	*httptest.Server
	requests atomic.Int32
	last     atomic.Value // the last request, decoded
}

func newFakeModel(t *testing.T, replies ...string) *fakeModel {
	t.Helper()
	m := &fakeModel{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		n := int(m.requests.Add(1))
		program := replies[min(n, len(replies))-1]
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		m.last.Store(req)
		resp := map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion", "model": req["model"],
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": program}}},
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *fakeModel) baseURL() string { return m.URL + "/v1" }

func noModelEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
}

func TestCLIGenerateAsk(t *testing.T) {
	noModelEnv(t)
	program := readFile(t, td("add_2_3.json"))
	m := newFakeModel(t, "Here is the program:\n```json\n"+program+"```\n")

	t.Run("generate", func(t *testing.T) {
		r := tl(t, "", "generate", "What is 2 plus 3?", "--base-url", m.baseURL(), "--tools", td("tools.json")).expect(t, exitOK)
		doc := decode(t, r.stdout)
		if str(t, doc, "body", 0, "name") != "add" || get(t, doc, "body", 0, "params", 1, "value") != json.Number("3") {
			t.Errorf("generated: %s", r)
		}
		tl(t, r.stdout, "validate", "-").expect(t, exitOK)
		// The request carries the tools and the question.
		req := m.last.Load()
		contains(t, "system prompt", str(t, req, "messages", 0, "content"), `"name":"add"`, `"name":"boom"`)
		if str(t, req, "messages", 1, "content") != "What is 2 plus 3?" || str(t, req, "model") == "" {
			t.Errorf("request: %v", req)
		}
	})

	t.Run("ask", func(t *testing.T) {
		r := tl(t, "", "ask", "What is 2 plus 3?", "--base-url", m.baseURL(), "--tools", td("tools.json"), "--output", "json")
		if v := success(t, r)["result"]; v != json.Number("5") {
			t.Errorf("ask: %s", r)
		}
		contains(t, "stderr", r.stderr, "planned program")
		r = tl(t, "What is 2 plus 3?\n", "ask", "-", "--base-url", m.baseURL(), "--tools", td("tools.json")).expect(t, exitOK)
		if r.stdout != "5\n" {
			t.Errorf("ask from stdin: %s", r)
		}
	})

	t.Run("ask trace", func(t *testing.T) {
		tr := filepath.Join(t.TempDir(), "ask.jsonl")
		tl(t, "", "ask", "What is 2 plus 3?", "--base-url", m.baseURL(), "--tools", td("tools.json"), "--trace", tr).expect(t, exitOK)
		header, events := traceLines(t, tr)
		if header != `{"format":"treelang-trace","version":1}` {
			t.Errorf("header: %s", header)
		}
		ks := kinds(events)
		want := []string{"model.request", "model.response", "run.start"}
		if len(ks) < 4 || strings.Join(ks[:3], " ") != strings.Join(want, " ") || ks[len(ks)-1] != "run.end" {
			t.Errorf("kinds: %v", ks)
		}
		if count(ks, "tool.attempt.start") != 1 {
			t.Errorf("kinds: %v", ks)
		}
	})

	t.Run("ask with a policy", func(t *testing.T) {
		fm := newFakeModel(t, readFile(t, td("fetch.json")))
		r := tl(t, "", "ask", "Fetch the book", "--base-url", fm.baseURL(), "--tools", td("flaky_tools.json"), "--policy", td("retry.json"), "--output", "json")
		if v := success(t, r)["result"]; v != "fetched" {
			t.Errorf("ask with retries: %s", r)
		}
		// Bad policies and limits are input errors found before the model
		// is asked.
		before := fm.requests.Load()
		r = tl(t, "", "ask", "Fetch the book", "--base-url", fm.baseURL(), "--tools", td("flaky_tools.json"), "--max-tool-calls", "0").expect(t, exitInput)
		contains(t, "stderr", r.stderr, "--max-tool-calls")
		r = tl(t, "", "ask", "Fetch the book", "--base-url", fm.baseURL(), "--policy", td("bad_policy.json"), "--output", "json").expect(t, exitInput)
		failure(t, r, "input", "ValueError")
		if n := fm.requests.Load() - before; n != 0 {
			t.Errorf("%d model requests for invalid input", n)
		}
	})

	t.Run("flags that do not apply", func(t *testing.T) {
		// Refused before the model is asked, rather than ignored.
		before := m.requests.Load()
		fx := filepath.Join(t.TempDir(), "never.json")
		r := tl(t, "", "ask", "What is 2 plus 3?", "--base-url", m.baseURL(), "--replay", td("python_fixture.json")).expect(t, exitInput)
		contains(t, "stderr", r.stderr, "treelang replay --fixture")
		r = tl(t, "", "generate", "What is 2 plus 3?", "--base-url", m.baseURL(), "--record", fx).expect(t, exitInput)
		contains(t, "stderr", r.stderr, "ask")
		if n := m.requests.Load() - before; n != 0 {
			t.Errorf("%d model requests", n)
		}
		if _, err := os.Stat(fx); err == nil {
			t.Error("generate wrote a recording")
		}
	})

	t.Run("ask without the tools", func(t *testing.T) {
		r := tl(t, "", "ask", "What is 2 plus 3?", "--base-url", m.baseURL(), "--output", "json").expect(t, exitExecution)
		failure(t, r, "execution", "ToolNotFoundError")
	})
}

func TestCLIAskRecordReplayOffline(t *testing.T) {
	noModelEnv(t)
	m := newFakeModel(t, readFile(t, td("add_nested.json")))
	fx := filepath.Join(t.TempDir(), "ask.fixture.json")
	live := tl(t, "", "ask", "What is 2 plus 3, plus 10?", "--base-url", m.baseURL(), "--tools", td("tools.json"), "--record", fx, "--output", "json")
	if v := success(t, live)["result"]; v != json.Number("15") {
		t.Fatalf("ask: %s", live)
	}
	doc := decode(t, readFile(t, fx))
	if doc["question"] != "What is 2 plus 3, plus 10?" || len(get(t, doc, "model_calls").([]any)) != 1 || len(get(t, doc, "calls").([]any)) != 2 {
		t.Errorf("ask fixture: %s", readFile(t, fx))
	}

	served := m.requests.Load()
	m.Close()
	r := tl(t, "", "replay", "--fixture", fx, "--output", "json")
	if v := success(t, r)["result"]; v != json.Number("15") {
		t.Errorf("offline replay: %s", r)
	}
	if m.requests.Load() != served {
		t.Error("the replay reached the model endpoint")
	}
	r = tl(t, "", "replay", "--fixture", fx).expect(t, exitOK)
	if r.stdout != "15\n" {
		t.Errorf("offline replay, text: %s", r)
	}
}

// TestCLIAskRecordingRedactsTheProgram: an ask recording keeps the
// planned program, which may hold the credentials the question gave.
func TestCLIAskRecordingRedactsTheProgram(t *testing.T) {
	const key = "sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	noModelEnv(t)
	m := newFakeModel(t, readFile(t, td("secret.json")))
	fx := filepath.Join(t.TempDir(), "ask.fixture.json")
	tl(t, "", "ask", "Call the API with key "+key, "--base-url", m.baseURL(), "--tools", td("secret_tools.json"), "--record", fx).expect(t, exitOK)
	lacks(t, "ask fixture", readFile(t, fx), key, "xyzSECRETtoken1234567890abcdef")

	raw := filepath.Join(t.TempDir(), "raw.fixture.json")
	tl(t, "", "ask", "Call the API", "--base-url", m.baseURL(), "--tools", td("secret_tools.json"), "--record", raw, "--no-redact").expect(t, exitOK)
	r := tl(t, "", "redact", "--check", raw).expect(t, exitCheck)
	contains(t, "stdout", r.stdout, "program")
}

func TestCLIAskRepair(t *testing.T) {
	noModelEnv(t)
	// The first reply is not a valid program; the model is told why and
	// answers again.
	m := newFakeModel(t, `{"type": "program", "mode": "single", "body": [{"type": "value", "name": "a"}]}`, readFile(t, td("add_2_3.json")))
	fx := filepath.Join(t.TempDir(), "repair.fixture.json")
	r := tl(t, "", "ask", "What is 2 plus 3?", "--base-url", m.baseURL(), "--tools", td("tools.json"), "--record", fx).expect(t, exitOK)
	if r.stdout != "5\n" || m.requests.Load() != 2 {
		t.Errorf("ask after a repair (%d requests): %s", m.requests.Load(), r)
	}
	calls := get(t, decode(t, readFile(t, fx)), "model_calls").([]any)
	if len(calls) != 2 {
		t.Fatalf("%d model calls recorded, want 2", len(calls))
	}
	contains(t, "repair request", fmt.Sprint(get(t, calls[1], "request", "messages")), "'value' is required")
	m.Close()
	r = tl(t, "", "replay", "--fixture", fx).expect(t, exitOK)
	if r.stdout != "5\n" {
		t.Errorf("offline replay of a repaired ask: %s", r)
	}

	// A model that never gets it right: the run stops after the repairs.
	bad := newFakeModel(t, "I cannot write JSON.")
	r = tl(t, "", "generate", "What is 2 plus 3?", "--base-url", bad.baseURL(), "--repairs", "1", "--output", "json")
	if r.code == exitOK || bad.requests.Load() != 2 {
		t.Errorf("want a failure after 2 requests, got %d requests: %s", bad.requests.Load(), r)
	}
	e := decode(t, r.stdout)["error"]
	contains(t, "message", str(t, e, "message"), "did not produce a valid program after 2 attempts")
}

// TestCLIAskReplaySchemaVersions: an offline replay asks for the schema
// version the recording asked for, whatever strings the program holds.
func TestCLIAskReplaySchemaVersions(t *testing.T) {
	noModelEnv(t)
	for _, tc := range []struct {
		program, version, want string
	}{
		{"v1_mentions_2_0.json", "1.0", "[\"2.0\",5]"},
		{"v2_double.json", "2.0", "42"},
	} {
		t.Run(tc.program, func(t *testing.T) {
			m := newFakeModel(t, readFile(t, td(tc.program)))
			fx := filepath.Join(t.TempDir(), "ask.fixture.json")
			r := tl(t, "", "ask", "Go", "--base-url", m.baseURL(), "--tools", td("tools.json"), "--schema-version", tc.version, "--record", fx, "--output", "json")
			if got, _ := json.Marshal(success(t, r)["result"]); string(got) != tc.want {
				t.Fatalf("ask: %s", r)
			}
			m.Close()
			r = tl(t, "", "replay", "--fixture", fx, "--output", "json")
			if got, _ := json.Marshal(success(t, r)["result"]); string(got) != tc.want {
				t.Errorf("offline replay: %s", r)
			}
		})
	}
}

func TestCLIModelProviderErrors(t *testing.T) {
	noModelEnv(t)
	t.Run("missing key", func(t *testing.T) {
		// The key check comes before any request: nothing leaves the machine.
		r := tl(t, "", "generate", "What is 2 plus 3?", "--base-url", "https://api.example.com/v1", "--output", "json").expect(t, exitProvider)
		e := failure(t, r, "provider", "ModelAuthenticationError")
		contains(t, "message", e["message"].(string), "OPENAI_API_KEY")
		r = tl(t, "", "ask", "What is 2 plus 3?", "--base-url", "https://api.example.com/v1").expect(t, exitProvider)
		contains(t, "stderr", r.stderr, "provider error", "OPENAI_API_KEY")
	})
	t.Run("endpoint refuses", func(t *testing.T) {
		const key = "sk-test-0123456789abcdefghijklmnopqrstuv"
		var auth atomic.Value
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			auth.Store(r.Header.Get("Authorization"))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error": {"message": "Incorrect API key provided: %s", "type": "invalid_request_error"}}`, key)
		}))
		defer srv.Close()
		r := tl(t, "", "generate", "What is 2 plus 3?", "--base-url", srv.URL+"/v1", "--api-key", key).expect(t, exitProvider)
		if auth.Load() != "Bearer "+key {
			t.Errorf("Authorization sent: %v", auth.Load())
		}
		contains(t, "stderr", r.stderr, "provider error", "401")
		lacks(t, "stderr", r.stderr, key)
		noCrash(t, r)
		// The key may also come from the environment.
		t.Setenv("OPENAI_API_KEY", key)
		r = tl(t, "", "ask", "What is 2 plus 3?", "--base-url", srv.URL+"/v1", "--output", "json").expect(t, exitProvider)
		failure(t, r, "provider", str(t, decode(t, r.stdout), "error", "type"))
		lacks(t, "stdout", r.stdout, key)
	})
	t.Run("endpoint speaks something else", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"choices": []}`)
		}))
		defer srv.Close()
		r := tl(t, "", "generate", "What is 2 plus 3?", "--base-url", srv.URL+"/v1", "--output", "json").expect(t, exitProvider)
		failure(t, r, "provider", "ProviderResponseError")
	})
	t.Run("unreachable", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base := "http://" + l.Addr().String() + "/v1"
		l.Close()
		r := tl(t, "", "generate", "What is 2 plus 3?", "--base-url", base).expect(t, exitProvider)
		contains(t, "stderr", r.stderr, "provider error", "cannot reach", l.Addr().String())
		noCrash(t, r)
		if n := strings.Count(r.stderr, "\n"); n != 1 {
			t.Errorf("want one line on stderr, got %d:\n%s", n, r.stderr)
		}
		r = tl(t, "", "ask", "What is 2 plus 3?", "--base-url", base, "--tools", td("tools.json"), "--output", "json").expect(t, exitProvider)
		failure(t, r, "provider", "ModelConnectionError")
	})
}

// ---- tools serve ----

func TestCLIToolsServe(t *testing.T) {
	bin := binary(t)
	tools, err := filepath.Abs(td("tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	server := bin + " tools serve --tools " + tools
	fx := filepath.Join(t.TempDir(), "mcp.fixture.json")

	r := tl(t, "", "execute", td("add_2_3.json"), "--mcp-stdio", server, "--record", fx, "--output", "json")
	if v := success(t, r)["result"]; v != json.Number("5") {
		t.Errorf("through MCP: %s", r)
	}
	if str(t, decode(t, readFile(t, fx)), "tools", 0, "name") != "add" {
		t.Errorf("fixture tools: %s", readFile(t, fx))
	}
	r = tl(t, "", "replay", td("add_2_3.json"), "--fixture", fx).expect(t, exitOK)
	if r.stdout != "5\n" {
		t.Errorf("replay without the server: %s", r)
	}

	// A tool error crosses the server as the same error.
	r = tl(t, "", "execute", td("boom.json"), "--mcp-stdio", server, "--output", "json").expect(t, exitExecution)
	e := failure(t, r, "execution", "ToolExecutionError")
	contains(t, "message", e["message"].(string), "kaboom")

	// A server that cannot start is a provider problem.
	r = tl(t, "", "execute", td("add_2_3.json"), "--mcp-stdio", filepath.Join(t.TempDir(), "no-such-server")).expect(t, exitProvider)
	noCrash(t, r)

	tl(t, "", "execute", td("add_2_3.json"), "--mcp-stdio", server, "--tools", tools).expect(t, exitInput)

	// A server that writes something other than JSON-RPC is a provider
	// problem too, reported without a crash.
	r = tl(t, "", "execute", td("add_2_3.json"), "--mcp-stdio", "sh -c 'echo garbage; sleep 30'").expect(t, exitProvider)
	noCrash(t, r)
	contains(t, "stderr", r.stderr, "provider error", "MCP server")
}

func TestCLIToolsServeHTTP(t *testing.T) {
	bin := binary(t)
	cmd := exec.Command(bin, "tools", "serve", "--tools", td("tools.json"), "--http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.AfterFunc(hangGuard, func() { cmd.Process.Kill() })
	defer timer.Stop()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-done
		}
	}()
	// The first line names the address actually listened on.
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil {
		t.Fatalf("no address from the server: %v %q", err, line)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "treelang: serving MCP over HTTP on ")
	if !ok || strings.HasSuffix(addr, ":0") {
		t.Fatalf("server said %q", line)
	}
	go io.Copy(io.Discard, stderr)
	url := "http://" + addr + "/"

	fx := filepath.Join(t.TempDir(), "http.fixture.json")
	r := tl(t, "", "execute", td("bigint.json"), "--mcp-http", url, "--record", fx, "--output", "json")
	if v := success(t, r)["result"]; v != json.Number("12345678901234567890124") {
		t.Errorf("through MCP over HTTP: %s", r)
	}
	r = tl(t, "", "execute", td("boom.json"), "--mcp-http", url, "--output", "json").expect(t, exitExecution)
	failure(t, r, "execution", "ToolExecutionError")

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("server after an interrupt: %v", err)
	}
	// The recording replays with the server gone; talking to it now fails.
	r = tl(t, "", "replay", td("bigint.json"), "--fixture", fx).expect(t, exitOK)
	if r.stdout != "12345678901234567890124\n" {
		t.Errorf("replay: %s", r)
	}
	r = tl(t, "", "execute", td("bigint.json"), "--mcp-http", url, "--output", "json").expect(t, exitProvider)
	failure(t, r, "provider", "ProviderResponseError")
}

// TestCLITrustIdempotentHints: a tool whose MCP annotations claim it is
// idempotent is retried only with --trust-idempotent-hints, in execute
// and in ask.
func TestCLITrustIdempotentHints(t *testing.T) {
	noModelEnv(t)
	bin := binary(t)
	tools, err := filepath.Abs(td("hinted_tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	server := bin + " tools serve --tools " + tools
	r := tl(t, "", "execute", td("fetch.json"), "--mcp-stdio", server, "--policy", td("retry_any.json"), "--output", "json").expect(t, exitExecution)
	failure(t, r, "execution", "ToolExecutionError")
	r = tl(t, "", "execute", td("fetch.json"), "--mcp-stdio", server, "--policy", td("retry_any.json"), "--trust-idempotent-hints", "--output", "json")
	if v := success(t, r)["result"]; v != "fetched" {
		t.Errorf("execute trusting the hint: %s", r)
	}
	m := newFakeModel(t, readFile(t, td("fetch.json")))
	r = tl(t, "", "ask", "Fetch the book", "--base-url", m.baseURL(), "--mcp-stdio", server, "--policy", td("retry_any.json"), "--trust-idempotent-hints", "--output", "json")
	if v := success(t, r)["result"]; v != "fetched" {
		t.Errorf("ask trusting the hint: %s", r)
	}
}

// TestCLIToolsServeProtocol talks to `tools serve` directly: an MCP
// initialize, then tools/list, over newline-delimited JSON-RPC.
func TestCLIToolsServeProtocol(t *testing.T) {
	bin := binary(t)
	cmd := exec.Command(bin, "tools", "serve", "--tools", td("tools.json"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(hangGuard, func() { cmd.Process.Kill() })
	defer timer.Stop()
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	call := func(msg string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() {
			t.Fatalf("no answer to %s: %v\n%s", msg, lines.Err(), stderr.String())
		}
		return decode(t, lines.Text())
	}
	init := call(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cli-test","version":"1"}}}`)
	if _, ok := get(t, init, "result").(map[string]any)["serverInfo"]; !ok {
		t.Errorf("initialize: %#v", init)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	list := call(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var names []string
	for _, tool := range get(t, list, "result", "tools").([]any) {
		names = append(names, str(t, tool, "name"))
	}
	if strings.Join(names, ",") != "add,boom" {
		t.Errorf("tools: %v", names)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve after stdin closed: %v\n%s", err, stderr.String())
	}
}

// ---- demo ----

func TestCLIDemoHeadless(t *testing.T) {
	r := tl(t, "", "demo", "--headless").expect(t, exitOK)
	for i := 1; i <= 4; i++ {
		contains(t, "stdout", r.stdout, fmt.Sprintf("=== %d/4 ", i))
	}
	if n := strings.Count(r.stdout, "=== "); n != 4 {
		t.Errorf("%d scenarios, want 4", n)
	}
	contains(t, "stdout", r.stdout, "run.start", "run.end")
	noCrash(t, r)
}
