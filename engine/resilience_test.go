package engine_test

// The resilience suite: one test per guarantee of the execution policy,
// limits and cancellation (reference §4, §5, §11.1, §11.3, §11.4 and
// DESIGN.md "Semantics"), each against a scripted toolbox whose calls are
// counted. No test asserts a duration: where time matters, a fake clock
// records what the engine asked for, and every run is bounded by a
// generous deadline so a regression fails instead of hanging.
//
//	go test -race -count=20 -run Resilience ./engine/

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/engine/tools"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// hang is how long a "blocking" tool sleeps: far longer than any test may
// take, so only cancellation ends it.
const hang = 10 * time.Second

// bound is the deadline of every run: generous, so only a hang reaches it.
const bound = 30 * time.Second

// ---- program builders (JSON text) ----

func jF(name string, params ...string) string {
	return `{"type":"function","name":"` + name + `","params":[` + strings.Join(params, ",") + `]}`
}

func jV(name, value string) string {
	return `{"type":"value","name":"` + name + `","value":` + value + `}`
}

func jProg(mode string, body ...string) string {
	return `{"type":"program","mode":"` + mode + `","body":[` + strings.Join(body, ",") + `]}`
}

func jProg2(mode string, body ...string) string {
	return `{"schema_version":"2.0","mode":"` + mode + `","body":[` + strings.Join(body, ",") + `]}`
}

func jTC(tool string, kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%s", kv[i], kv[i+1])
	}
	return `{"type":"tool_call","tool":"` + tool + `","arguments":{` + b.String() + `}}`
}

func jLit(v string) string { return `{"type":"literal","value":` + v + `}` }

func parse(t testing.TB, src string) *engine.Program {
	t.Helper()
	p, err := engine.ParseProgram([]byte(src))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	return p
}

// root is the first body item of a v1 program, for runs of a bare node.
func root(t testing.TB, src string) engine.Node {
	return parse(t, jProg("single", src)).Body[0]
}

// ---- the scripted toolbox of reference §11.1, with probes ----

const resilienceTools = `{"tools": [
  {"name": "flaky", "properties": {"value": {}},
   "behavior": {"script": [{"error": "ToolExecutionError", "message": "temporary"}], "then": {"builtin": "identity"}}},
  {"name": "fail", "properties": {}, "behavior": {"script": [{"error": "ToolExecutionError", "message": "failed"}]}},
  {"name": "wait", "properties": {"value": {}}, "behavior": {"builtin": "identity", "delay_ms": 10000}},
  {"name": "slow", "properties": {"value": {}}, "behavior": {"builtin": "identity", "delay_ms": 50}},
  {"name": "always", "properties": {}, "behavior": {"script": [{"error": "ToolExecutionError", "message": "broken"}]}},
  {"name": "timed_out", "properties": {}, "behavior": {"script": [{"error": "TimeoutError", "message": "provider timed out"}]}},
  {"name": "hang_once", "properties": {},
   "behavior": {"script": [{"output": "late", "delay_ms": 10000}], "then": {"output": "ok"}}},
  {"name": "identity", "properties": {"value": {}}, "behavior": {"builtin": "identity"}},
  {"name": "add", "properties": {"acc": {}, "item": {}}, "behavior": {"builtin": "add"}},
  {"name": "sum2", "properties": {"a": {}, "b": {}}, "behavior": {"builtin": "add"}}
]}`

// probe wraps a toolbox: it records each attempt's arguments and outcome
// and can hold a tool back until a condition holds.
type probe struct {
	*tools.Toolbox
	mu      sync.Mutex
	args    map[string][]map[string]any
	errs    map[string][]error
	ctxErrs map[string][]error
	order   []string // tools in the order their attempts began
	started map[string]chan struct{}
	before  map[string]func(ctx context.Context) error
}

func newProbe(t testing.TB, toolbox string) *probe {
	t.Helper()
	tb, err := tools.Parse([]byte(toolbox), "resilience")
	if err != nil {
		t.Fatal(err)
	}
	return &probe{Toolbox: tb, args: map[string][]map[string]any{}, errs: map[string][]error{}, ctxErrs: map[string][]error{},
		started: map[string]chan struct{}{}, before: map[string]func(context.Context) error{}}
}

// startedCh is closed when the tool's first attempt begins.
func (p *probe) startedCh(tool string) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.started[tool]
	if !ok {
		c = make(chan struct{})
		p.started[tool] = c
	}
	return c
}

func (p *probe) CallTool(ctx context.Context, call *engine.Call) (any, error) {
	c := p.startedCh(call.Tool)
	p.mu.Lock()
	p.args[call.Tool] = append(p.args[call.Tool], call.Arguments)
	p.order = append(p.order, call.Tool)
	select {
	case <-c:
	default:
		close(c)
	}
	before := p.before[call.Tool]
	p.mu.Unlock()
	var out any
	var err error
	if before != nil {
		err = before(ctx)
	}
	if err == nil {
		out, err = p.Toolbox.CallTool(ctx, call)
	}
	p.mu.Lock()
	p.errs[call.Tool] = append(p.errs[call.Tool], err)
	p.ctxErrs[call.Tool] = append(p.ctxErrs[call.Tool], ctx.Err())
	p.mu.Unlock()
	return out, err
}

func (p *probe) attemptErrors(tool string) []error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]error(nil), p.errs[tool]...)
}

// attemptContexts returns ctx.Err() as each attempt of the tool returned:
// context.Canceled for an attempt that observed cancellation.
func (p *probe) attemptContexts(tool string) []error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]error(nil), p.ctxErrs[tool]...)
}

func (p *probe) attemptArgs(tool string) []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]map[string]any(nil), p.args[tool]...)
}

// waitUntilStarted holds a tool back until another tool's first attempt
// has begun (reference §11.1: "fail waits until wait has started").
func (p *probe) waitUntilStarted(tool, other string) {
	c := p.startedCh(other)
	p.mu.Lock()
	p.before[tool] = func(ctx context.Context) error {
		select {
		case <-c:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p.mu.Unlock()
}

func (p *probe) allCalls() map[string]int {
	out := map[string]int{}
	defs, _ := p.ListTools(context.Background())
	for _, d := range defs {
		if n := p.Calls(d.Name); n > 0 {
			out[d.Name] = n
		}
	}
	return out
}

func (p *probe) anyActive() string {
	defs, _ := p.ListTools(context.Background())
	for _, d := range defs {
		if p.Active(d.Name) != 0 {
			return d.Name
		}
	}
	return ""
}

func wantCalls(t *testing.T, p *probe, want map[string]int) {
	t.Helper()
	got := p.allCalls()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("calls %v, want %v", got, want)
	}
}

func retryOn(attempts int, tools ...string) engine.Policy {
	return engine.Policy{Retry: engine.RetryPolicy{MaxAttempts: attempts, IdempotentTools: tools}}
}

// run evaluates under the bound and checks that no goroutine outlives it.
func run(t *testing.T, n engine.Node, p engine.ToolProvider, opts engine.Options) (any, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	v, err := engine.EvalNode(ctx, n, p, opts)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the run hung until the test's bound: %v", err)
	}
	return v, err
}

// runAsync starts a run that the test cancels; wait returns its outcome,
// failing the test if it does not come back within the bound.
func runAsync(t *testing.T, ctx context.Context, n engine.Node, p engine.ToolProvider, opts engine.Options) (wait func() (any, error)) {
	t.Helper()
	type res struct {
		v   any
		err error
	}
	done := make(chan res, 1)
	go func() {
		v, err := engine.EvalNode(ctx, n, p, opts)
		done <- res{v, err}
	}()
	return func() (any, error) {
		t.Helper()
		select {
		case r := <-done:
			return r.v, r.err
		case <-time.After(bound):
			t.Fatal("the run did not return after cancellation")
			return nil, nil
		}
	}
}

func wantType(t *testing.T, err error, typ engine.ErrorType, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s %q", typ, msg)
	}
	if got := engine.TypeOf(err); got != typ {
		t.Fatalf("error %s %q, want %s %q", got, err, typ, msg)
	}
	if msg != "" && err.Error() != msg {
		t.Fatalf("error %q, want %q", err, msg)
	}
}

func wantLimit(t *testing.T, err error, resource, limit string) {
	t.Helper()
	var le *engine.LimitError
	if !errors.As(err, &le) {
		t.Fatalf("error %v (%T), want ExecutionLimitError %s", err, err, resource)
	}
	if le.Resource != resource || (limit != "" && le.Limit != limit) {
		t.Fatalf("limit error %s (%s), want %s (%s)", le.Resource, le.Limit, resource, limit)
	}
	if !errors.Is(err, engine.ExecutionLimitError) || !errors.Is(err, engine.ASTExecutionError) {
		t.Errorf("%v does not match ExecutionLimitError and its base ASTExecutionError", err)
	}
}

func wantCancelled(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v (%T), want context.Canceled", err, err)
	}
	var le *engine.LimitError
	if errors.As(err, &le) {
		t.Fatalf("cancellation was converted to %v", err)
	}
}

// ---- §11.1 tests/trees/test_resilience.py ----

func TestResilienceRetryIdempotentFlaky(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newProbe(t, resilienceTools)
	v, err := run(t, root(t, jF("flaky", jV("value", "7"))), p, engine.Options{Policy: retryOn(2, "flaky")})
	if err != nil || fmt.Sprint(v) != "7" {
		t.Fatalf("got %v, %v; want 7", v, err)
	}
	wantCalls(t, p, map[string]int{"flaky": 2})
}

func TestResilienceNoRetryWhenNotIdempotent(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newProbe(t, resilienceTools)
	_, err := run(t, root(t, jF("flaky", jV("value", "7"))), p, engine.Options{Policy: retryOn(2, "other")})
	wantType(t, err, engine.ToolExecutionError, "temporary")
	wantCalls(t, p, map[string]int{"flaky": 1})
}

func TestResilienceRetryRefusedByToolCallBudget(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newProbe(t, resilienceTools)
	_, err := run(t, root(t, jF("flaky", jV("value", "7"))), p,
		engine.Options{Policy: retryOn(2, "flaky"), Limits: engine.Limits{MaxToolCalls: 1}})
	wantLimit(t, err, "tool_calls", "1")
	wantCalls(t, p, map[string]int{"flaky": 1})
}

func TestResilienceRetryV2(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newProbe(t, resilienceTools)
	prog := parse(t, jProg2("single", jTC("flaky", "value", jLit("9"))))
	v, err := run(t, prog, p, engine.Options{Policy: retryOn(2, "flaky")})
	if err != nil || fmt.Sprint(v) != "9" {
		t.Fatalf("got %v, %v; want 9", v, err)
	}
	wantCalls(t, p, map[string]int{"flaky": 2})
}

func TestResilienceCancelDuringBackoff(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newProbe(t, resilienceTools)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pol := retryOn(2, "flaky")
	pol.Retry.Delay = hang
	wait := runAsync(t, ctx, root(t, jF("flaky", jV("value", "7"))), p, engine.Options{Policy: pol})
	<-p.startedCh("flaky")
	cancel()
	_, err := wait()
	wantCancelled(t, err)
	wantCalls(t, p, map[string]int{"flaky": 1})
}

func TestResilienceFailFastCancelsAndAwaitsSiblings(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newProbe(t, resilienceTools)
	p.waitUntilStarted("fail", "wait")
	prog := parse(t, jProg("parallel", jF("fail"), jF("wait", jV("value", `"late"`))))
	_, err := run(t, prog, p, engine.Options{})
	wantType(t, err, engine.ToolExecutionError, "failed")
	if engine.PathOf(err) != "/body/0" {
		t.Errorf("error path %q, want /body/0", engine.PathOf(err))
	}
	// The waiting sibling observed cancellation before Eval returned.
	if errs := p.attemptContexts("wait"); len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Fatalf("wait's context at return: %v, want one cancelled attempt", errs)
	}
	if name := p.anyActive(); name != "" {
		t.Fatalf("%s still running after Eval returned", name)
	}
	wantCalls(t, p, map[string]int{"fail": 1, "wait": 1})
}

func TestResilienceCollectOutcomes(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newProbe(t, resilienceTools)
	p.waitUntilStarted("fail", "wait")
	close(p.startedCh("wait")) // "wait already marked started"
	prog := parse(t, jProg("parallel", jF("flaky", jV("value", "3")), jF("fail")))
	v, err := run(t, prog, p, engine.Options{Policy: engine.Policy{ParallelFailures: engine.FailCollect}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := engine.EncodeValue(v)
	want := `[{"error_message":"temporary","error_type":"ToolExecutionError","success":false},` +
		`{"error_message":"failed","error_type":"ToolExecutionError","success":false}]`
	if string(got) != want {
		t.Fatalf("outcomes\n got: %s\nwant: %s", got, want)
	}
	wantCalls(t, p, map[string]int{"flaky": 1, "fail": 1})
}

func TestResilienceCollectOneItemIsAList(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newProbe(t, resilienceTools)
	prog := parse(t, jProg("parallel", jF("flaky", jV("value", "3"))))
	v, err := run(t, prog, p, engine.Options{Policy: engine.Policy{ParallelFailures: engine.FailCollect}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := engine.EncodeValue(v)
	if want := `[{"error_message":"temporary","error_type":"ToolExecutionError","success":false}]`; string(got) != want {
		t.Fatalf("outcomes %s, want %s", got, want)
	}
}

func TestResilienceCollectSingleModeIsValueError(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newProbe(t, resilienceTools)
	prog := parse(t, jProg("single", jF("flaky", jV("value", "3"))))
	_, err := run(t, prog, p, engine.Options{Policy: engine.Policy{ParallelFailures: engine.FailCollect}})
	wantType(t, err, engine.ValueError, "Partial-failure collection requires a parallel program")
	if !strings.Contains(err.Error(), "parallel program") {
		t.Errorf("%v does not match 'parallel program'", err)
	}
	wantCalls(t, p, map[string]int{})
}

// ---- retry guarantees beyond upstream's tests ----

func TestResilienceNonIdempotentFailingToolCalledOnce(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newProbe(t, resilienceTools)
	_, err := run(t, root(t, jF("always")), p, engine.Options{Policy: retryOn(5, "flaky")})
	wantType(t, err, engine.ToolExecutionError, "broken")
	wantCalls(t, p, map[string]int{"always": 1})
}

func TestResilienceRetriedCallArgumentsRunOnce(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"v1", jProg("single", jF("flaky", jF("sum2", jV("a", "3"), jV("b", "4"))))},
		{"v2", jProg2("single", jTC("flaky", "value", jTC("sum2", "a", jLit("3"), "b", jLit("4"))))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			p := newProbe(t, resilienceTools)
			v, err := run(t, parse(t, tc.src), p, engine.Options{Policy: retryOn(3, "flaky")})
			if err != nil || fmt.Sprint(v) != "7" {
				t.Fatalf("got %v, %v; want 7", v, err)
			}
			wantCalls(t, p, map[string]int{"flaky": 2, "sum2": 1})
		})
	}
}

func TestResilienceRetryReusesArgumentsUnchanged(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newProbe(t, resilienceTools)
	pol := retryOn(4, "always")
	_, err := run(t, parse(t, jProg2("single", jTC("always"))), p, engine.Options{Policy: pol})
	wantType(t, err, engine.ToolExecutionError, "broken")
	// always takes no arguments; use flaky with an object argument too.
	p = newProbe(t, `{"tools": [{"name": "echo_fail", "properties": {"value": {}},
	  "behavior": {"script": [{"error": "ToolExecutionError", "message": "no"}]}}]}`)
	_, err = run(t, root(t, jF("echo_fail", jV("value", `{"k":[1,2.0,"x"],"big":123456789012345678901}`))), p,
		engine.Options{Policy: retryOn(3, "echo_fail")})
	wantType(t, err, engine.ToolExecutionError, "no")
	args := p.attemptArgs("echo_fail")
	if len(args) != 3 {
		t.Fatalf("%d attempts, want 3", len(args))
	}
	first, _ := engine.EncodeValue(args[0])
	if string(first) != `{"value":{"big":123456789012345678901,"k":[1,2.0,"x"]}}` {
		t.Fatalf("first attempt's arguments %s", first)
	}
	for i, a := range args[1:] {
		if got, _ := engine.EncodeValue(a); string(got) != string(first) {
			t.Errorf("attempt %d arguments %s, want %s", i+2, got, first)
		}
	}
}

func TestResilienceEveryAttemptConsumesToolCalls(t *testing.T) {
	for _, tc := range []struct {
		budget int64
		calls  int
	}{{3, 3}, {5, 5}, {7, 5}} {
		t.Run(fmt.Sprint(tc.budget), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			p := newProbe(t, resilienceTools)
			_, err := run(t, root(t, jF("always")), p,
				engine.Options{Policy: retryOn(5, "always"), Limits: engine.Limits{MaxToolCalls: tc.budget}})
			if tc.budget < 5 {
				wantLimit(t, err, "tool_calls", fmt.Sprint(tc.budget))
			} else {
				wantType(t, err, engine.ToolExecutionError, "broken")
			}
			wantCalls(t, p, map[string]int{"always": tc.calls})
		})
	}
}

func TestResilienceCancelledLongBackoffReturns(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newProbe(t, resilienceTools)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clock := &recordingClock{block: true, sleeping: make(chan time.Duration, 1)}
	pol := retryOn(3, "always")
	pol.Retry.Delay = hang
	wait := runAsync(t, ctx, root(t, jF("always")), p, engine.Options{Policy: pol, Clock: clock})
	if d := <-clock.sleeping; d != hang {
		t.Errorf("backoff of %v, want %v", d, hang)
	}
	cancel()
	_, err := wait()
	wantCancelled(t, err)
	wantCalls(t, p, map[string]int{"always": 1})
}

func TestResilienceNoToolActivityAfterFailFast(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"v1", jProg("parallel", jF("fail"), jF("wait", jV("value", "1")),
			jF("identity", jF("slow", jV("value", "2"))), jF("sum2", jF("wait", jV("value", "3")), jF("slow", jV("value", "4"))))},
		{"v2", jProg2("parallel", jTC("fail"), jTC("wait", "value", jLit("1")),
			jTC("identity", "value", jTC("slow", "value", jLit("2"))))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			p := newProbe(t, resilienceTools)
			p.waitUntilStarted("fail", "wait")
			_, err := run(t, parse(t, tc.src), p, engine.Options{})
			wantType(t, err, engine.ToolExecutionError, "failed")
			if name := p.anyActive(); name != "" {
				t.Fatalf("%s still running right after Eval returned", name)
			}
			before := p.allCalls()
			time.Sleep(100 * time.Millisecond) // longer than slow's 50 ms
			if after := p.allCalls(); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("tool calls after Eval returned: %v, then %v", before, after)
			}
			if n := p.Calls("identity") + p.Calls("sum2"); n != 0 {
				t.Fatalf("a call whose argument was cancelled still ran (%d)", n)
			}
			for _, e := range p.attemptContexts("wait") {
				if !errors.Is(e, context.Canceled) {
					t.Errorf("wait's context at return: %v, want cancellation", e)
				}
			}
		})
	}
}

func TestResilienceExternalCancellationPropagates(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"v1", jProg("single", jF("wait", jV("value", "1")))},
		{"v2", jProg2("single", jTC("wait", "value", jLit("1")))},
		{"v1 parallel", jProg("parallel", jF("wait", jV("value", "1")), jF("wait", jV("value", "2")))},
		{"v1 collect", jProg("parallel", jF("wait", jV("value", "1")), jV("v", "2"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			p := newProbe(t, resilienceTools)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			opts := engine.Options{Limits: engine.Limits{Timeout: 10 * time.Second, TimeoutText: "10"}}
			if strings.Contains(tc.name, "collect") {
				opts.Policy.ParallelFailures = engine.FailCollect
			}
			wait := runAsync(t, ctx, parse(t, tc.src), p, opts)
			<-p.startedCh("wait")
			cancel()
			_, err := wait()
			wantCancelled(t, err)
			if name := p.anyActive(); name != "" {
				t.Fatalf("%s still running after Eval returned", name)
			}
		})
	}
}

func TestResilienceDeadlineIsExecutionLimitError(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"v1", jProg("single", jF("wait", jV("value", "1")))},
		{"v2", jProg2("single", jTC("wait", "value", jLit("1")))},
		{"v1 collect", jProg("parallel", jF("wait", jV("value", "1")), jV("v", "2"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			p := newProbe(t, resilienceTools)
			clock := &deadlineClock{}
			opts := engine.Options{Clock: clock}
			if err := opts.Limits.SetTimeoutSeconds("0.01"); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(tc.name, "collect") {
				opts.Policy.ParallelFailures = engine.FailCollect
			}
			ctx, cancel := context.WithTimeout(context.Background(), bound)
			defer cancel()
			// The deadline fires once the tool has started.
			go func() {
				select {
				case <-p.startedCh("wait"):
					clock.fire()
				case <-ctx.Done():
				}
			}()
			_, err := engine.Eval(ctx, parse(t, tc.src), p, opts)
			wantLimit(t, err, "wall_clock_seconds", "0.01")
			if err.Error() != "Execution wall_clock_seconds limit exceeded (0.01)" {
				t.Errorf("message %q", err)
			}
			if errors.Unwrap(err) != nil {
				t.Errorf("the limit error has a cause chain: %v", errors.Unwrap(err))
			}
			if errs := p.attemptContexts("wait"); len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
				t.Fatalf("wait's context at return: %v, want one cancelled attempt", errs)
			}
			if name := p.anyActive(); name != "" {
				t.Fatalf("%s still running after Eval returned", name)
			}
		})
	}
}

func TestResilienceRealDeadline(t *testing.T) {
	for _, tc := range []struct{ name, src, limit string }{
		{"v1", jProg("single", jF("wait", jV("value", "1"))), "0.01"},
		{"v2", jProg2("single", jTC("wait", "value", jLit("1"))), "0.001"},
		{"v2 forever", `{"schema_version":"2.0","definitions":[{"name":"forever","body":{"type":"call","function":"forever"}}],
			"body":[{"type":"call","function":"forever"}]}`, "0.001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			p := newProbe(t, resilienceTools)
			var opts engine.Options
			if err := opts.Limits.SetTimeoutSeconds(tc.limit); err != nil {
				t.Fatal(err)
			}
			_, err := run(t, parse(t, tc.src), p, opts)
			wantLimit(t, err, "wall_clock_seconds", tc.limit)
			if name := p.anyActive(); name != "" {
				t.Fatalf("%s still running after Eval returned", name)
			}
		})
	}
}

func TestResilienceProviderTimeoutErrorPropagates(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"v1", jProg("single", jF("timed_out"))},
		{"v2", jProg2("single", jTC("timed_out"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			p := newProbe(t, resilienceTools)
			opts := engine.Options{Limits: engine.Limits{Timeout: 10 * time.Second, TimeoutText: "10"}}
			_, err := run(t, parse(t, tc.src), p, opts)
			wantType(t, err, engine.TimeoutError, "provider timed out")
			var le *engine.LimitError
			if errors.As(err, &le) {
				t.Fatalf("a provider TimeoutError became %v", err)
			}
			wantCalls(t, p, map[string]int{"timed_out": 1})
		})
	}
}

// ---- concurrency ----

// barrierClock is a toolbox clock: each sleep waits until `group` sleeps
// have begun since the last group was released (or ctx ends, or a safety
// timer fires), so calls that may overlap are made to overlap. It tracks
// how many sleeps run at once across all tools.
type barrierClock struct {
	engine.RealClock
	group  int
	mu     sync.Mutex
	begun  int
	gates  []chan struct{}
	active atomic.Int64
	max    atomic.Int64
}

func (c *barrierClock) Sleep(ctx context.Context, d time.Duration) error {
	n := c.active.Add(1)
	defer c.active.Add(-1)
	for {
		m := c.max.Load()
		if n <= m || c.max.CompareAndSwap(m, n) {
			break
		}
	}
	c.mu.Lock()
	idx := c.begun / c.group
	c.begun++
	for len(c.gates) <= idx {
		c.gates = append(c.gates, make(chan struct{}))
	}
	gate := c.gates[idx]
	if c.begun%c.group == 0 {
		close(gate)
	}
	c.mu.Unlock()
	safety := time.NewTimer(5 * time.Second) // a wrong engine fails instead of hanging
	defer safety.Stop()
	select {
	case <-gate:
		return nil
	case <-safety.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func TestResilienceMaxConcurrencyCapsActiveCalls(t *testing.T) {
	defer goleak.VerifyNone(t)
	// Reference §11.3.9: tool_0..tool_3 each sleep and return their name.
	var b strings.Builder
	b.WriteString(`{"tools": [`)
	var body []string
	for i := 0; i < 4; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name": "tool_%d", "properties": {}, "behavior": {"output": "tool_%d", "delay_ms": 10}}`, i, i)
		body = append(body, jF(fmt.Sprintf("tool_%d", i)))
	}
	b.WriteString(`]}`)
	p := newProbe(t, b.String())
	clock := &barrierClock{group: 2}
	p.SetClock(clock)
	v, err := run(t, parse(t, jProg("parallel", body...)), p, engine.Options{Limits: engine.Limits{MaxConcurrency: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := engine.EncodeValue(v); string(got) != `["tool_0","tool_1","tool_2","tool_3"]` {
		t.Fatalf("result %s", got)
	}
	if m := clock.max.Load(); m != 2 {
		t.Fatalf("at most %d calls ran at once, want exactly 2", m)
	}
}

func TestResilienceMaxConcurrencySameTool(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newProbe(t, `{"tools": [{"name": "blocker", "properties": {"value": {}}, "behavior": {"builtin": "identity", "delay_ms": 10}}]}`)
	p.SetClock(&barrierClock{group: 2})
	var body []string
	for i := 0; i < 4; i++ {
		body = append(body, jF("blocker", jV("value", fmt.Sprint(i))))
	}
	v, err := run(t, parse(t, jProg("parallel", body...)), p, engine.Options{Limits: engine.Limits{MaxConcurrency: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := engine.EncodeValue(v); string(got) != `[0,1,2,3]` {
		t.Fatalf("result %s", got)
	}
	if m := p.MaxActive("blocker"); m != 2 {
		t.Fatalf("MaxActive %d, want exactly 2", m)
	}
	wantCalls(t, p, map[string]int{"blocker": 4})
}

func TestResilienceMaxConcurrencyNestedGroupsDoNotDeadlock(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newProbe(t, resilienceTools)
	// Each branch holds a permit and has sibling params of its own.
	inner := jF("sum2", jF("identity", jV("v", "1")), jF("identity", jV("v", "2")))
	prog := parse(t, jProg("parallel", inner, inner, inner))
	v, err := run(t, prog, p, engine.Options{Limits: engine.Limits{MaxConcurrency: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := engine.EncodeValue(v); string(got) != `[3,3,3]` {
		t.Fatalf("result %s", got)
	}
	if m := p.MaxActive("identity"); m != 1 {
		t.Fatalf("MaxActive %d, want 1", m)
	}
}

// With max_concurrency set and tools that do not suspend, a branch runs
// its calls in plain left-to-right post-order (reference §12 G2):
// F(A(B(x)), C(y)) calls B, A, C, F.
func TestResilienceMaxConcurrencyPostOrder(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newProbe(t, `{"tools": [
	  {"name": "F", "properties": {"a": {}, "b": {}}, "behavior": {"output": "F"}},
	  {"name": "A", "properties": {"v": {}}, "behavior": {"output": "A"}},
	  {"name": "B", "properties": {"v": {}}, "behavior": {"output": "B"}},
	  {"name": "C", "properties": {"v": {}}, "behavior": {"output": "C"}},
	  {"name": "D", "properties": {"v": {}}, "behavior": {"output": "D"}}]}`)
	prog := parse(t, jProg("single", jF("F", jF("A", jF("B", jV("x", "1"))), jF("C", jF("D", jV("y", "2"))))))
	if _, err := run(t, prog, p, engine.Options{Limits: engine.Limits{MaxConcurrency: 3}}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.order, ","); got != "B,A,D,C,F" {
		t.Fatalf("call order %s, want B,A,D,C,F", got)
	}
}

func TestResilienceV2MaxConcurrencyOne(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newProbe(t, `{"tools": [{"name": "wait", "properties": {"value": {}}, "behavior": {"builtin": "identity", "delay_ms": 10}}]}`)
	prog := parse(t, jProg2("parallel", jTC("wait", "value", jLit("0")), jTC("wait", "value", jLit("1")), jTC("wait", "value", jLit("2"))))
	v, err := run(t, prog, p, engine.Options{Limits: engine.Limits{MaxConcurrency: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := engine.EncodeValue(v); string(got) != `[0,1,2]` {
		t.Fatalf("result %s", got)
	}
	if m := p.MaxActive("wait"); m != 1 {
		t.Fatalf("MaxActive %d, want 1", m)
	}
}

// ---- backoff on an injected clock ----

// recordingClock records every Sleep; it returns at once, or with block
// set waits for ctx, reporting each sleep on sleeping.
type recordingClock struct {
	engine.RealClock
	block    bool
	sleeping chan time.Duration
	mu       sync.Mutex
	sleeps   []time.Duration
}

func (c *recordingClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.mu.Unlock()
	if c.sleeping != nil {
		c.sleeping <- d
	}
	if c.block {
		<-ctx.Done()
		return context.Cause(ctx)
	}
	return ctx.Err()
}

func (c *recordingClock) recorded() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

func backoffRun(t *testing.T, rp engine.RetryPolicy) []time.Duration {
	t.Helper()
	p := newProbe(t, resilienceTools)
	clock := &recordingClock{}
	rp.IdempotentTools = []string{"always"}
	_, err := run(t, root(t, jF("always")), p, engine.Options{Policy: engine.Policy{Retry: rp}, Clock: clock})
	wantType(t, err, engine.ToolExecutionError, "broken")
	if got := p.Calls("always"); got != rp.MaxAttempts {
		t.Fatalf("%d calls, want %d", got, rp.MaxAttempts)
	}
	return clock.recorded()
}

func TestResilienceBackoffSchedule(t *testing.T) {
	defer goleak.VerifyNone(t)
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		rp   engine.RetryPolicy
		want []time.Duration
	}{
		{"zero delay does not sleep", engine.RetryPolicy{MaxAttempts: 4}, nil},
		{"fixed delay", engine.RetryPolicy{MaxAttempts: 4, Delay: 100 * ms}, []time.Duration{100 * ms, 100 * ms, 100 * ms}},
		{"exponential", engine.RetryPolicy{MaxAttempts: 4, Delay: 100 * ms, BackoffMultiplier: 2}, []time.Duration{100 * ms, 200 * ms, 400 * ms}},
		{"exponential capped", engine.RetryPolicy{MaxAttempts: 5, Delay: 100 * ms, BackoffMultiplier: 2, MaxDelay: 250 * ms},
			[]time.Duration{100 * ms, 200 * ms, 250 * ms, 250 * ms}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := backoffRun(t, tc.rp); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("sleeps %v, want %v", got, tc.want)
			}
		})
	}
}

func TestResilienceSeededJitterIsReproducible(t *testing.T) {
	defer goleak.VerifyNone(t)
	ms := time.Millisecond
	rp := engine.RetryPolicy{MaxAttempts: 5, Delay: 100 * ms, BackoffMultiplier: 2, Jitter: 0.5, JitterSeed: 7}
	a, b := backoffRun(t, rp), backoffRun(t, rp)
	if fmt.Sprint(a) != fmt.Sprint(b) || len(a) != 4 {
		t.Fatalf("same seed, different sleeps: %v and %v", a, b)
	}
	base := 100 * ms
	for i, d := range a {
		if d < base/2 || d > base*3/2 {
			t.Errorf("sleep %d is %v, outside %v ± 50%%", i+1, d, base)
		}
		base *= 2
	}
	differs := false
	for seed := uint64(8); seed < 13 && !differs; seed++ {
		rp.JitterSeed = seed
		differs = fmt.Sprint(backoffRun(t, rp)) != fmt.Sprint(a)
	}
	if !differs {
		t.Errorf("seeds 7 to 12 all give the sleeps %v", a)
	}
}

func TestResilienceAttemptTimeoutIsRetryable(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newProbe(t, resilienceTools)
	pol := retryOn(2, "hang_once")
	pol.Retry.AttemptTimeout = 20 * time.Millisecond
	v, err := run(t, root(t, jF("hang_once")), p, engine.Options{Policy: pol})
	if err != nil || v != "ok" {
		t.Fatalf("got %v, %v; want ok", v, err)
	}
	wantCalls(t, p, map[string]int{"hang_once": 2})
	if errs := p.attemptErrors("hang_once"); len(errs) != 2 || errs[0] == nil || errs[1] != nil {
		t.Fatalf("attempts ended with %v, want a timed-out attempt then success", errs)
	}
	if errs := p.attemptContexts("hang_once"); !errors.Is(errs[0], context.Canceled) {
		t.Fatalf("the hung attempt's context at return: %v, want cancelled", errs[0])
	}

	// Without a retry the hung call is a TimeoutError, not a limit error.
	p = newProbe(t, resilienceTools)
	pol = engine.Policy{Retry: engine.RetryPolicy{AttemptTimeout: 20 * time.Millisecond}}
	_, err = run(t, root(t, jF("hang_once")), p, engine.Options{Policy: pol})
	wantType(t, err, engine.TimeoutError, "")
	if name := p.anyActive(); name != "" {
		t.Fatalf("%s still running after Eval returned", name)
	}
}

// deadlineClock runs backoffs for real but holds the run deadline until the
// test fires it.
type deadlineClock struct {
	engine.RealClock
	mu sync.Mutex
	f  func()
}

func (c *deadlineClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.f = f
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		stopped := c.f != nil
		c.f = nil
		return stopped
	}
}

func (c *deadlineClock) fire() {
	c.mu.Lock()
	f := c.f
	c.f = nil
	c.mu.Unlock()
	if f != nil {
		f()
	}
}

// ---- §11.3 tests/trees/test_budget.py ----

func TestResilienceBudgetLimitConstruction(t *testing.T) {
	for _, tc := range []struct{ field, value string }{
		{"max_nodes", "0"}, {"max_depth", "-1"}, {"max_call_depth", "0"},
		{"max_tool_calls", "true"}, {"max_concurrency", "1.5"}, {"timeout_seconds", "0"},
	} {
		_, _, err := engine.ParsePolicy([]byte(`{"limits": {"` + tc.field + `": ` + tc.value + `}}`))
		if err == nil || engine.TypeOf(err) != engine.ValueError || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s=%s: %v, want a ValueError naming the field", tc.field, tc.value, err)
		}
	}
	var l engine.Limits
	for _, text := range []string{"NaN", "nan", "inf", "-1", "0"} {
		err := l.SetTimeoutSeconds(text)
		if err == nil || err.Error() != "timeout_seconds must be a positive number or None" {
			t.Errorf("timeout_seconds=%s: %v", text, err)
		}
	}
}

const budgetTools = `{"tools": [
  {"name": "identity", "properties": {"value": {}}, "behavior": {"builtin": "identity"}},
  {"name": "add", "properties": {"acc": {}, "item": {}}, "behavior": {"builtin": "add"}}
]}`

func TestResilienceBudgetCounts(t *testing.T) {
	value := jProg("single", jV("value", "42"))
	ididv := jProg("single", jF("identity", jF("identity", jV("value", "7"))))
	reduce := `{"type":"reduce","function":{"type":"lambda","params":["acc","item"],"body":` +
		jF("add", jV("acc", "null"), jV("item", "null")) + `},"iterable":` + jV("items", "[1,2,3]") + `}`
	mapN := `{"type":"map","function":{"type":"lambda","params":["value"],"body":` +
		jF("identity", jV("value", "null")) + `},"iterable":` + jV("items", "[1,2]") + `}`
	for _, tc := range []struct {
		name     string
		node     func(t *testing.T) engine.Node
		limits   engine.Limits
		want     string // result JSON, or "" for a limit error
		resource string
		calls    map[string]int
	}{
		{"value program max_nodes 2", func(t *testing.T) engine.Node { return parse(t, value) }, engine.Limits{MaxNodes: 2}, "42", "", map[string]int{}},
		{"value program max_nodes 1", func(t *testing.T) engine.Node { return parse(t, value) }, engine.Limits{MaxNodes: 1}, "", "nodes", map[string]int{}},
		{"identity depth 4", func(t *testing.T) engine.Node { return parse(t, ididv) }, engine.Limits{MaxDepth: 4}, "7", "", map[string]int{"identity": 2}},
		{"identity depth 3", func(t *testing.T) engine.Node { return parse(t, ididv) }, engine.Limits{MaxDepth: 3}, "", "depth", map[string]int{}},
		{"reduce tool_calls 1", func(t *testing.T) engine.Node { return root(t, reduce) }, engine.Limits{MaxToolCalls: 1}, "", "tool_calls", map[string]int{"add": 1}},
		{"map max_nodes 7", func(t *testing.T) engine.Node { return root(t, mapN) }, engine.Limits{MaxNodes: 7}, "[1,2]", "", map[string]int{"identity": 2}},
		{"map max_nodes 6", func(t *testing.T) engine.Node { return root(t, mapN) }, engine.Limits{MaxNodes: 6}, "", "nodes", map[string]int{"identity": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			p := newProbe(t, budgetTools)
			v, err := run(t, tc.node(t), p, engine.Options{Limits: tc.limits})
			if tc.resource != "" {
				wantLimit(t, err, tc.resource, "")
			} else if got, _ := engine.EncodeValue(v); err != nil || string(got) != tc.want {
				t.Fatalf("got %s, %v; want %s", got, err, tc.want)
			}
			wantCalls(t, p, tc.calls)
		})
	}
}

func TestResilienceBudgetNotSharedBetweenRuns(t *testing.T) {
	defer goleak.VerifyNone(t)
	n := root(t, jF("identity", jV("value", "3")))
	var wg sync.WaitGroup
	results := make([]string, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := newProbe(t, budgetTools)
			ctx, cancel := context.WithTimeout(context.Background(), bound)
			defer cancel()
			v, err := engine.EvalNode(ctx, n, p, engine.Options{Limits: engine.Limits{MaxToolCalls: 1}})
			results[i] = fmt.Sprintf("%v %v", v, err)
		}()
	}
	wg.Wait()
	if results[0] != "3 <nil>" || results[1] != "3 <nil>" {
		t.Fatalf("results %q, want 3 twice", results)
	}
	// The same program evaluates again: evaluation never mutates the tree.
	p := newProbe(t, budgetTools)
	if v, err := run(t, n, p, engine.Options{Limits: engine.Limits{MaxToolCalls: 1}}); err != nil || fmt.Sprint(v) != "3" {
		t.Fatalf("third run: %v, %v", v, err)
	}
}

// failingClock's Sleep fails at once without ctx being done, as a replaying
// clock does when the recorded timer can never fire.
type failingClock struct {
	engine.RealClock
	err error
}

func (c failingClock) Sleep(context.Context, time.Duration) error { return c.err }

// A backoff sleep that fails must fail the call: it may not be read as
// success.
func TestResilienceBackoffSleepErrorFailsTheCall(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newProbe(t, resilienceTools)
	mismatch := errors.New("replay: the recorded backoff never fired")
	pol := retryOn(3, "always")
	pol.Retry.Delay = time.Second
	v, err := run(t, root(t, jF("always")), p, engine.Options{Policy: pol, Clock: failingClock{err: mismatch}})
	if err == nil {
		t.Fatalf("the run succeeded with %v after its backoff sleep failed", v)
	}
	if !errors.Is(err, mismatch) {
		t.Errorf("error %v, want the clock's error", err)
	}
	wantCalls(t, p, map[string]int{"always": 1})
}

// The error re-raised by fail fast is the first in time, not the first in
// list order (reference §4.5, G4).
func TestResilienceFirstFailureInTimeWins(t *testing.T) {
	const toolbox = `{"tools": [
	  {"name": "late_fail", "properties": {}, "behavior": {"script": [{"error": "ToolExecutionError", "message": "late", "delay_ms": 10000}]}},
	  {"name": "fail", "properties": {}, "behavior": {"script": [{"error": "ToolExecutionError", "message": "failed"}]}},
	  {"name": "sum2", "properties": {"a": {}, "b": {}}, "behavior": {"builtin": "add"}}]}`
	for _, tc := range []struct{ name, src string }{
		{"v1 late first", jProg("parallel", jF("late_fail"), jF("fail"))},
		{"v1 late last", jProg("parallel", jF("fail"), jF("late_fail"))},
		{"v1 params", jProg("single", jF("sum2", jF("late_fail"), jF("fail")))},
		{"v2", jProg2("parallel", jTC("late_fail"), jTC("fail"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			p := newProbe(t, toolbox)
			p.waitUntilStarted("fail", "late_fail")
			_, err := run(t, parse(t, tc.src), p, engine.Options{})
			wantType(t, err, engine.ToolExecutionError, "failed")
			if errs := p.attemptContexts("late_fail"); len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
				t.Fatalf("late_fail's context at return: %v, want cancelled", errs)
			}
		})
	}
}

// Memo keys are shared by the branches of a run: a value computed once is
// served to every branch, and a failed evaluation caches nothing.
func TestResilienceMemoAcrossBranches(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newProbe(t, `{"tools": [
	  {"name": "slow", "properties": {}, "behavior": {"output": 5, "delay_ms": 20}},
	  {"name": "flaky", "properties": {}, "behavior": {"script": [{"error": "ToolExecutionError", "message": "temporary", "delay_ms": 20}], "then": {"output": 6}}}]}`)
	memo := func(key, tool string) string {
		return `{"type":"memo","key":"` + key + `","expression":` + jTC(tool) + `}`
	}
	v, err := run(t, parse(t, jProg2("parallel", memo("k", "slow"), memo("k", "slow"), memo("k", "slow"))), p, engine.Options{})
	if got, _ := engine.EncodeValue(v); err != nil || string(got) != "[5,5,5]" {
		t.Fatalf("got %s, %v", got, err)
	}
	wantCalls(t, p, map[string]int{"slow": 1})

	v, err = run(t, parse(t, jProg2("parallel", memo("f", "flaky"), memo("f", "flaky"))), p,
		engine.Options{Policy: engine.Policy{ParallelFailures: engine.FailCollect}})
	got, _ := engine.EncodeValue(v)
	want1 := `[{"error_message":"temporary","error_type":"ToolExecutionError","success":false},{"success":true,"value":6}]`
	want2 := `[{"success":true,"value":6},{"error_message":"temporary","error_type":"ToolExecutionError","success":false}]`
	if err != nil || (string(got) != want1 && string(got) != want2) {
		t.Fatalf("got %s, %v; want one failure and one success", got, err)
	}
	wantCalls(t, p, map[string]int{"slow": 1, "flaky": 2})
}
