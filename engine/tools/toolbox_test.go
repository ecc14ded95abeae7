package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/treelang/treelang/engine"
)

func mustParse(t testing.TB, src string) *Toolbox {
	t.Helper()
	tb, err := Parse([]byte(src), "test.json")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return tb
}

// oneTool wraps a behavior in a toolbox with one tool, "t", whose
// properties are given as JSON.
func oneTool(t testing.TB, props, behavior string) *Toolbox {
	t.Helper()
	return mustParse(t, `{"tools":[{"name":"t","properties":`+props+`,"behavior":`+behavior+`}]}`)
}

func call(tb *Toolbox, ctx context.Context, name string, args map[string]any) (any, error) {
	return tb.CallTool(ctx, &engine.Call{Tool: name, Arguments: args})
}

// recordingClock records every sleep and returns at once.
type recordingClock struct {
	mu     sync.Mutex
	sleeps []time.Duration
}

func (c *recordingClock) Now() time.Time { return time.Unix(0, 0) }

func (c *recordingClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.mu.Unlock()
	return ctx.Err()
}

func (c *recordingClock) AfterFunc(time.Duration, func()) func() bool {
	return func() bool { return false }
}

func (c *recordingClock) recorded() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.sleeps)
}

// gateClock's sleeps last until the gate opens or ctx is done.
type gateClock struct{ gate chan struct{} }

func (c *gateClock) Now() time.Time { return time.Unix(0, 0) }

func (c *gateClock) Sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-c.gate:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (c *gateClock) AfterFunc(time.Duration, func()) func() bool { return func() bool { return false } }

// waitFor polls cond; the test's own deadline bounds it.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if t.Context().Err() != nil {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestOutputBehavior(t *testing.T) {
	ctx := context.Background()
	tb := oneTool(t, `{}`, `{"output": {"list": [1, 2.50, 12345678901234567890123]}}`)
	out, err := call(tb, ctx, "t", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	text, _ := engine.EncodeValue(out)
	if string(text) != `{"list":[1,2.50,12345678901234567890123]}` {
		t.Errorf("output %s: numbers not kept as written", text)
	}
	// The caller may change what it got; the next call is unaffected.
	out.(map[string]any)["list"].([]any)[0] = "changed"
	out2, _ := call(tb, ctx, "t", map[string]any{})
	if text2, _ := engine.EncodeValue(out2); string(text2) != string(text) {
		t.Errorf("second output %s, want %s", text2, text)
	}
	// null is an output like any other.
	tb = oneTool(t, `{}`, `{"output": null}`)
	if out, err := call(tb, ctx, "t", nil); out != nil || err != nil {
		t.Errorf("output null: got %v, %v", out, err)
	}
}

func TestTableBehavior(t *testing.T) {
	ctx := context.Background()
	tb := oneTool(t, `{"city":{},"unit":{}}`, `{"table": [
		{"arguments": {"city": "Oslo", "unit": "C"}, "output": -3},
		{"arguments": {"unit": "F", "city": "Oslo"}, "output": 26.6},
		{"arguments": {"city": "Lima", "unit": 1}, "output": {"t": [20]}},
		{"arguments": {"city": "Oslo", "unit": "C"}, "output": "shadowed"}
	]}`)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"city": "Oslo", "unit": "C"}, `-3`},
		{map[string]any{"city": "Oslo", "unit": "F"}, `26.6`},
		{map[string]any{"city": "Lima", "unit": json.Number("1.0")}, `{"t":[20]}`}, // numbers by value
	} {
		out, err := call(tb, ctx, "t", tc.args)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if text, _ := engine.EncodeValue(out); string(text) != tc.want {
			t.Errorf("%v: got %s, want %s", tc.args, text, tc.want)
		}
	}
	_, err := call(tb, ctx, "t", map[string]any{"city": "Rome", "unit": "C"})
	if !errors.Is(err, engine.ToolExecutionError) {
		t.Fatalf("no row: got %v, want a ToolExecutionError", err)
	}
	if want := `Tool 't' has no table row for arguments {"city":"Rome","unit":"C"}`; err.Error() != want {
		t.Errorf("no row: %q, want %q", err, want)
	}
	// Booleans are not numbers when matching rows.
	if _, err := call(tb, ctx, "t", map[string]any{"city": "Lima", "unit": true}); err == nil {
		t.Error("true matched the row for 1")
	}
}

func TestScriptPositionPerArguments(t *testing.T) {
	ctx := context.Background()
	tb := oneTool(t, `{"x":{},"y":{}}`, `{"script": [
		{"output": "first"},
		{"output": "second"},
		{"error": "ToolExecutionError", "message": "third fails"}
	], "then": {"output": "after"}}`)
	a := map[string]any{"x": json.Number("1"), "y": "a"}
	aReordered := map[string]any{"y": "a", "x": json.Number("1")}
	b := map[string]any{"x": json.Number("2"), "y": "a"}
	step := func(args map[string]any) string {
		t.Helper()
		out, err := call(tb, ctx, "t", args)
		if err != nil {
			return "error: " + err.Error()
		}
		return out.(string)
	}
	got := []string{step(a), step(b), step(aReordered), step(a), step(b), step(a), step(a)}
	want := []string{"first", "first", "second", "error: third fails", "second", "after", "after"}
	if !slices.Equal(got, want) {
		t.Errorf("steps %q, want %q", got, want)
	}
	if n := tb.Calls("t"); n != 7 {
		t.Errorf("Calls = %d, want 7", n)
	}
	// Reset rewinds every script.
	tb.Reset()
	if n := tb.Calls("t"); n != 0 {
		t.Errorf("Calls after Reset = %d", n)
	}
	if got := step(b); got != "first" {
		t.Errorf("after Reset: %q, want first", got)
	}
}

func TestScriptDefaultsToLastStep(t *testing.T) {
	ctx := context.Background()
	tb := oneTool(t, `{}`, `{"script": [{"output": 1}, {"error": "ValueError", "message": "boom"}]}`)
	var got []string
	for range 4 {
		out, err := call(tb, ctx, "t", map[string]any{})
		if err != nil {
			got = append(got, string(engine.TypeOf(err))+": "+err.Error())
		} else {
			got = append(got, fmt.Sprint(out))
		}
	}
	want := []string{"1", "ValueError: boom", "ValueError: boom", "ValueError: boom"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// An empty script with "then" always takes "then".
	tb = oneTool(t, `{"value":{}}`, `{"script": [], "then": {"builtin": "identity"}}`)
	for range 2 {
		if out, err := call(tb, ctx, "t", map[string]any{"value": "v"}); out != "v" || err != nil {
			t.Errorf("then identity: %v, %v", out, err)
		}
	}
}

func TestErrorSteps(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		typ  string
		is   []engine.ErrorType
		isnt []engine.ErrorType
	}{
		{"ToolExecutionError", []engine.ErrorType{engine.ToolExecutionError, engine.TreelangError, engine.RuntimeError}, []engine.ErrorType{engine.ValueError}},
		{"TimeoutError", []engine.ErrorType{engine.TimeoutError}, []engine.ErrorType{engine.ToolExecutionError}},
		{"ValueError", []engine.ErrorType{engine.ValueError}, []engine.ErrorType{engine.TreelangError}},
		{"TypeError", []engine.ErrorType{engine.TypeError}, []engine.ErrorType{engine.ValueError}},
		{"ToolNotFoundError", []engine.ErrorType{engine.ToolNotFoundError, engine.ValueError}, nil},
		{"ProviderResponseError", []engine.ErrorType{engine.ProviderResponseError}, []engine.ErrorType{engine.ToolExecutionError}},
		{"ReplayMismatchError", []engine.ErrorType{engine.ReplayMismatchError, engine.ProviderResponseError}, nil},
		{"ExecutionLimitError", []engine.ErrorType{engine.ExecutionLimitError, engine.ASTExecutionError}, nil},
	} {
		tb := oneTool(t, `{}`, `{"script": [{"error": "`+tc.typ+`", "message": "scripted"}]}`)
		_, err := call(tb, ctx, "t", map[string]any{})
		var e *engine.Error
		if !errors.As(err, &e) || string(e.Type) != tc.typ || e.Message != "scripted" {
			t.Errorf("%s: got %#v", tc.typ, err)
			continue
		}
		for _, typ := range tc.is {
			if !errors.Is(err, typ) {
				t.Errorf("%s: errors.Is(err, %s) = false", tc.typ, typ)
			}
		}
		for _, typ := range tc.isnt {
			if errors.Is(err, typ) {
				t.Errorf("%s: errors.Is(err, %s) = true", tc.typ, typ)
			}
		}
		if engine.IsCancellation(err) {
			t.Errorf("%s: counted as a cancellation", tc.typ)
		}
	}
	// Without a message, the message names the type and the tool.
	tb := oneTool(t, `{}`, `{"script": [{"error": "TimeoutError"}]}`)
	if _, err := call(tb, ctx, "t", nil); err == nil || err.Error() != "TimeoutError from tool 't'" {
		t.Errorf("default message: %v", err)
	}
}

// Builtins take their operands in the tool's property order, whatever the
// names.
func TestBuiltinOperandsFollowPropertyOrder(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		props, behavior string
		args            map[string]any
		want            string
	}{
		{`{"total":{},"amount":{}}`, `{"builtin":"subtract"}`, map[string]any{"amount": json.Number("3"), "total": json.Number("10")}, `7`},
		{`{"z":{},"a":{}}`, `{"builtin":"divide"}`, map[string]any{"a": json.Number("4"), "z": json.Number("2")}, `0.5`},
		{`{"z":{},"a":{}}`, `{"builtin":"greater_than"}`, map[string]any{"a": json.Number("1"), "z": json.Number("2")}, `true`},
		{`{"start":{},"stop":{},"step":{}}`, `{"builtin":"range"}`, map[string]any{"start": json.Number("1"), "stop": json.Number("10"), "step": json.Number("3")}, `[1,4,7]`},
		{`{"start":{},"stop":{},"step":{}}`, `{"builtin":"range"}`, map[string]any{"start": json.Number("10"), "stop": json.Number("0"), "step": json.Number("-3")}, `[10,7,4,1]`},
		{`{"start":{},"stop":{},"step":{}}`, `{"builtin":"range"}`, map[string]any{"start": json.Number("0"), "stop": json.Number("10"), "step": json.Number("-1")}, `[]`},
		{`{"start":{},"stop":{}}`, `{"builtin":"range"}`, map[string]any{"start": json.Number("-2"), "stop": json.Number("2")}, `[-2,-1,0,1]`},
		{`{"c":{},"b":{},"a":{}}`, `{"builtin":"concat"}`, map[string]any{"a": "3", "b": "2", "c": "1"}, `"123"`},
		{`{"value":{},"note":{}}`, `{"builtin":"identity"}`, map[string]any{"note": "n", "value": "v"}, `"v"`},
		{`{"b":{},"a":{}}`, `{"script":[{"builtin":"subtract"}]}`, map[string]any{"a": json.Number("1"), "b": json.Number("5")}, `4`},
	} {
		tb := oneTool(t, tc.props, tc.behavior)
		out, err := call(tb, ctx, "t", tc.args)
		if err != nil {
			t.Errorf("%s %s: %v", tc.props, tc.behavior, err)
			continue
		}
		if text, _ := engine.EncodeValue(out); string(text) != tc.want {
			t.Errorf("%s %s %v = %s, want %s", tc.props, tc.behavior, tc.args, text, tc.want)
		}
	}
	// An input_schema tool may omit optional operands: range(stop) alone.
	tb := mustParse(t, `{"tools":[{"name":"r","input_schema":{"type":"object","properties":{"start":{},"stop":{},"step":{}}},"behavior":{"builtin":"range"}}]}`)
	out, err := call(tb, ctx, "r", map[string]any{"start": json.Number("3")})
	if text, _ := engine.EncodeValue(out); err != nil || string(text) != `[0,1,2]` {
		t.Errorf("range(3) = %s, %v", text, err)
	}
	_, err = call(tb, ctx, "r", map[string]any{"start": json.Number("0"), "stop": json.Number("3"), "step": json.Number("0")})
	if err == nil || err.Error() != "r: range() arg 3 must not be zero" {
		t.Errorf("range step 0: %v", err)
	}
	_, err = call(tb, ctx, "r", map[string]any{})
	if err == nil || err.Error() != "r: expects 1 to 3 arguments (builtin range), got 0" {
		t.Errorf("range(): %v", err)
	}
	_, err = call(tb, ctx, "r", map[string]any{"start": json.Number(minInt64), "stop": json.Number(maxInt64)})
	if err == nil || err.Error() != "r: range would have 18446744073709551615 items, more than the limit of 10000000" {
		t.Errorf("huge range: %v", err)
	}
}

func TestDelaysRunOnTheClock(t *testing.T) {
	ctx := context.Background()
	tb := oneTool(t, `{}`, `{"delay_ms": 10, "script": [{"output": 1, "delay_ms": 2.5}, {"output": 2}], "then": {"output": 3, "delay_ms": 0}}`)
	clock := &recordingClock{}
	tb.SetClock(clock)
	for want := 1; want <= 3; want++ {
		out, err := call(tb, ctx, "t", nil)
		if err != nil || fmt.Sprint(out) != fmt.Sprint(want) {
			t.Fatalf("call %d: %v, %v", want, out, err)
		}
	}
	// The behavior's delay runs before the step's; zero delays do not sleep.
	want := []time.Duration{10 * time.Millisecond, 2500 * time.Microsecond, 10 * time.Millisecond, 10 * time.Millisecond}
	if got := clock.recorded(); !slices.Equal(got, want) {
		t.Errorf("sleeps %v, want %v", got, want)
	}
	// A builtin behavior's delay.
	tb = oneTool(t, `{"value":{}}`, `{"builtin": "identity", "delay_ms": 7}`)
	clock = &recordingClock{}
	tb.SetClock(clock)
	if out, err := call(tb, ctx, "t", map[string]any{"value": "x"}); out != "x" || err != nil {
		t.Fatalf("identity: %v, %v", out, err)
	}
	if got := clock.recorded(); !slices.Equal(got, []time.Duration{7 * time.Millisecond}) {
		t.Errorf("sleeps %v", got)
	}
}

// A cancelled context ends a delay at once with the context's error. The
// test would hang (and time out) if it did not.
func TestDelayCancelled(t *testing.T) {
	for _, behavior := range []string{
		`{"output": 1, "delay_ms": 3600000}`,
		`{"script": [{"output": 1, "delay_ms": 3600000}]}`,
		`{"table": [], "delay_ms": 3600000}`,
	} {
		tb := oneTool(t, `{}`, behavior)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := call(tb, ctx, "t", map[string]any{})
			errc <- err
		}()
		waitFor(t, "the call to start", func() bool { return tb.Active("t") == 1 })
		cancel()
		err := <-errc
		if !errors.Is(err, context.Canceled) || !engine.IsCancellation(err) {
			t.Errorf("%s: got %v, want context.Canceled", behavior, err)
		}
		if tb.Active("t") != 0 || tb.Calls("t") != 1 {
			t.Errorf("%s: Active %d, Calls %d after the call", behavior, tb.Active("t"), tb.Calls("t"))
		}
	}
	// Already cancelled: no sleep at all.
	tb := oneTool(t, `{}`, `{"output": 1, "delay_ms": 3600000}`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := call(tb, ctx, "t", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before the call: %v", err)
	}
	// A deadline surfaces as context.DeadlineExceeded (a TimeoutError).
	ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if _, err := call(tb, ctx, "t", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: %v", err)
	}
}

// The script position advances when the attempt starts, before its delay:
// a second call with the same arguments, made while the first is still
// sleeping, takes the next step.
func TestScriptAdvancesBeforeDelay(t *testing.T) {
	tb := oneTool(t, `{}`, `{"script": [{"output": "slow", "delay_ms": 3600000}, {"output": "fast"}]}`)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := call(tb, ctx, "t", map[string]any{})
		errc <- err
	}()
	waitFor(t, "the slow call to start", func() bool { return tb.Calls("t") == 1 })
	out, err := call(tb, context.Background(), "t", map[string]any{})
	if out != "fast" || err != nil {
		t.Errorf("second call: %v, %v; want fast", out, err)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("slow call: %v", err)
	}
}

func TestActiveAndMaxActive(t *testing.T) {
	tb := oneTool(t, `{"value":{}}`, `{"builtin": "identity", "delay_ms": 1}`)
	clock := &gateClock{gate: make(chan struct{})}
	tb.SetClock(clock)
	const n = 5
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			out, err := call(tb, context.Background(), "t", map[string]any{"value": json.Number(fmt.Sprint(i))})
			if err != nil || out != json.Number(fmt.Sprint(i)) {
				t.Errorf("call %d: %v, %v", i, out, err)
			}
		})
	}
	waitFor(t, "every call to be running", func() bool { return tb.Active("t") == n })
	if got := tb.MaxActive("t"); got != n {
		t.Errorf("MaxActive = %d while %d run", got, n)
	}
	close(clock.gate)
	wg.Wait()
	if tb.Active("t") != 0 || tb.MaxActive("t") != n || tb.Calls("t") != n {
		t.Errorf("after: Active %d, MaxActive %d, Calls %d", tb.Active("t"), tb.MaxActive("t"), tb.Calls("t"))
	}
	tb.Reset()
	if tb.MaxActive("t") != 0 || tb.Calls("t") != 0 {
		t.Errorf("after Reset: MaxActive %d, Calls %d", tb.MaxActive("t"), tb.Calls("t"))
	}
	if tb.Calls("nope") != 0 || tb.Active("nope") != 0 || tb.MaxActive("nope") != 0 {
		t.Error("counters of an unknown tool are not zero")
	}
	// SetClock(nil) goes back to the wall clock.
	tb.SetClock(nil)
	if _, err := call(tb, context.Background(), "t", map[string]any{"value": "x"}); err != nil {
		t.Error(err)
	}
}

// Concurrent calls with the same arguments each take a different step;
// run under -race.
func TestConcurrentScript(t *testing.T) {
	const n = 64
	steps := ""
	for i := range n {
		if i > 0 {
			steps += ","
		}
		steps += fmt.Sprintf(`{"output": %d}`, i)
	}
	tb := oneTool(t, `{"k":{}}`, `{"script": [`+steps+`], "then": {"error": "ToolExecutionError", "message": "exhausted"}}`)
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range n {
		for _, k := range []string{"a", "b"} {
			wg.Go(func() {
				out, err := call(tb, context.Background(), "t", map[string]any{"k": k})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen[k+fmt.Sprint(out)]++
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	for _, k := range []string{"a", "b"} {
		for i := range n {
			if c := seen[fmt.Sprint(k, i)]; c != 1 {
				t.Errorf("step %d for %s taken %d times", i, k, c)
			}
		}
	}
	if _, err := call(tb, context.Background(), "t", map[string]any{"k": "a"}); err == nil || err.Error() != "exhausted" {
		t.Errorf("after the script: %v", err)
	}
	if tb.Calls("t") != 2*n+1 {
		t.Errorf("Calls = %d", tb.Calls("t"))
	}
}

func TestUnknownToolCall(t *testing.T) {
	tb := oneTool(t, `{}`, `{"output": 1}`)
	if _, err := call(tb, context.Background(), "other", nil); !errors.Is(err, engine.ToolNotFoundError) || err.Error() != "Tool 'other' not found." {
		t.Errorf("got %v", err)
	}
	if _, err := tb.Tool(context.Background(), "other"); !errors.Is(err, engine.ToolNotFoundError) {
		t.Errorf("got %v", err)
	}
}

// Property order is the file's, not alphabetical, for legacy properties
// and for input_schema; ListTools keeps file order.
func TestPropertyOrderPreserved(t *testing.T) {
	tb := mustParse(t, `{"tools": [
		{"name": "zeta_tool", "properties": {"zeta": {"type": "string"}, "alpha": {}, "mid": {"type": "integer"}}, "behavior": {"output": 1}},
		{"name": "alpha_tool", "input_schema": {"type": "object", "properties": {"b": {}, "a": {}, "c": {}}, "required": ["b"]}, "behavior": {"output": 2}}
	]}`)
	defs, _ := tb.ListTools(context.Background())
	if len(defs) != 2 || defs[0].Name != "zeta_tool" || defs[1].Name != "alpha_tool" {
		t.Fatalf("ListTools order: %v", defs)
	}
	if got := defs[0].PropertyNames(); !slices.Equal(got, []string{"zeta", "alpha", "mid"}) {
		t.Errorf("legacy properties %v", got)
	}
	if got := defs[1].PropertyNames(); !slices.Equal(got, []string{"b", "a", "c"}) {
		t.Errorf("input_schema properties %v", got)
	}
	// ListTools returns a copy of the list.
	defs[0] = nil
	again, _ := tb.ListTools(context.Background())
	if again[0] == nil {
		t.Error("ListTools shares its slice")
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	for _, tb := range []*Toolbox{Builtins(), loadTestdata(t, "arith.json"), loadTestdata(t, "flaky.json")} {
		data, err := tb.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(data, "roundtrip.json")
		if err != nil {
			t.Fatalf("%s: re-parse: %v\n%s", tb.Source(), err, data)
		}
		data2, _ := back.MarshalJSON()
		if string(data) != string(data2) {
			t.Errorf("%s: not stable:\n%s\n%s", tb.Source(), data, data2)
		}
		if !sameTools(tb, back) {
			t.Errorf("%s: tools differ after the round trip", tb.Source())
		}
	}
}

// sameTools compares the tool names, property orders and behaviors.
func sameTools(a, b *Toolbox) bool {
	if len(a.tools) != len(b.tools) {
		return false
	}
	for i := range a.tools {
		x, y := a.tools[i], b.tools[i]
		if x.def.Name != y.def.Name || !slices.Equal(x.def.PropertyNames(), y.def.PropertyNames()) ||
			string(x.raw) != string(y.raw) || x.behavior.kind != y.behavior.kind {
			return false
		}
	}
	return true
}
