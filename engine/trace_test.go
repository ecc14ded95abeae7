package engine_test

// The engine's trace, checked from the outside:
//
//   - TestTraceGolden runs the scenarios of testdata/trace/*.json against
//     the scripted toolbox testdata/trace/toolbox.json with a memory sink,
//     groups the events by body branch and compares them line by line with
//     testdata/trace/NAME.golden: kind, site (path, iterations, #attempt),
//     node, tool, attempt n/max, delay_ms, error type, cancel message,
//     reason, cause, outcome, the output of attempts and of the run, the
//     counters of run.end and limit.exceeded, event data; never a time or a
//     duration. Regenerate with
//
//     go test -run TraceGolden ./engine/ -update
//
//   - the TestGate* tests drive a tracer.Gate over live runs: pause, step
//     one event at a time, breakpoints, cancellation while paused.
//
// Runs are deterministic per branch: a branch's own events are sequential,
// a tool that must fail only once its siblings are in flight is held by
// the test until they are, and backoffs sleep on a fake clock. No test
// asserts a duration; every wait is bounded by a generous guard so a
// regression fails instead of hanging.
//
//	go test -race -run 'Trace|Gate' ./engine/

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/engine/tools"
	"github.com/treelang/treelang/tracer"
)

// The -update flag is shared with the conformance suite; define it here
// only if no other test file of the package has.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

func traceUpdating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// traceGuard bounds every wait of these tests: far longer than any of them
// takes, so only a hang reaches it.
const traceGuard = 20 * time.Second

// ---- fake clock and held provider ----

// traceClock runs backoffs on virtual time: Sleep returns at once, except
// at the sites listed in block, where it sleeps until cancelled. When
// fireWhen is set, timers (the run deadline) fire as soon as it reports
// true instead of after their duration.
type traceClock struct {
	block    map[string]bool // node paths whose backoffs never end
	fireWhen func() bool

	mu       sync.Mutex
	sleeping int // sleeps blocked right now
	sleeps   []time.Duration
}

func (c *traceClock) Now() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

func (c *traceClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	site, _ := engine.SiteFromContext(ctx)
	if !c.block[site.Path] {
		return nil
	}
	c.mu.Lock()
	c.sleeping++
	c.mu.Unlock()
	<-ctx.Done()
	c.mu.Lock()
	c.sleeping--
	c.mu.Unlock()
	return context.Cause(ctx)
}

func (c *traceClock) AfterFunc(d time.Duration, f func()) func() bool {
	if c.fireWhen == nil {
		return engine.RealClock{}.AfterFunc(d, f)
	}
	stop := make(chan struct{})
	var once sync.Once
	var fired atomic.Bool
	go func() {
		for !c.fireWhen() {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
		select {
		case <-stop:
		default:
			fired.Store(true)
			f()
		}
	}()
	return func() bool {
		once.Do(func() { close(stop) })
		return !fired.Load()
	}
}

func (c *traceClock) blocked() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sleeping
}

// traceHold says what must be true before a held tool's attempt runs:
// at least Active[tool] calls of each tool in flight, and at least
// Sleeping backoffs blocked on the clock.
type traceHold struct {
	Active   map[string]int `json:"active"`
	Sleeping int            `json:"sleeping"`
}

// heldToolbox delays the attempts of some tools until their siblings are
// where the scenario wants them, so which branch fails first and what the
// others are doing at that moment never depends on scheduling.
type heldToolbox struct {
	*tools.Toolbox
	clock *traceClock
	hold  map[string]traceHold
}

// ready reports whether the siblings are where want says.
func (h *heldToolbox) ready(want traceHold) bool {
	for name, n := range want.Active {
		if h.Active(name) < n {
			return false
		}
	}
	return h.clock.blocked() >= want.Sleeping
}

func (h *heldToolbox) CallTool(ctx context.Context, call *engine.Call) (any, error) {
	if want, ok := h.hold[call.Tool]; ok {
		guard := time.Now().Add(traceGuard)
		for !h.ready(want) {
			if time.Now().After(guard) {
				return nil, fmt.Errorf("test: %s held forever: %+v never happened", call.Tool, want)
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Millisecond):
			}
		}
	}
	return h.Toolbox.CallTool(ctx, call)
}

func traceToolbox(t testing.TB) *tools.Toolbox {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "trace", "toolbox.json"))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := tools.Parse(data, "toolbox.json")
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// ---- golden traces ----

type traceScenario struct {
	Comment      string               `json:"comment"`
	Program      json.RawMessage      `json:"program"`
	Policy       json.RawMessage      `json:"policy"`
	Hold         map[string]traceHold `json:"hold"`
	BlockBackoff []string             `json:"block_backoff"`
	DeadlineWhen *traceHold           `json:"deadline_when"`
}

func TestTraceGolden(t *testing.T) {
	for name, file := range traceScenarios(t) {
		t.Run(name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			got := renderTrace(runTraceScenario(t, file))
			golden := filepath.Join("testdata", "trace", name+".golden")
			if traceUpdating() {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if d := traceDiff(string(want), got); d != "" {
				t.Errorf("trace differs from %s (-want +got):\n%s", golden, d)
			}
		})
	}
}

// runTraceScenario runs one scenario file and returns its trace.
func runTraceScenario(t *testing.T, file string) []*tracer.Event {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var sc traceScenario
	if err := json.Unmarshal(data, &sc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	prog, err := engine.ParseProgram(sc.Program)
	if err != nil {
		t.Fatalf("%s: program: %v", file, err)
	}
	var opts engine.Options
	if len(sc.Policy) > 0 {
		if opts.Policy, opts.Limits, err = engine.ParsePolicy(sc.Policy); err != nil {
			t.Fatalf("%s: policy: %v", file, err)
		}
	}
	clock := &traceClock{block: map[string]bool{}}
	for _, p := range sc.BlockBackoff {
		clock.block[p] = true
	}
	prov := &heldToolbox{Toolbox: traceToolbox(t), clock: clock, hold: sc.Hold}
	if w := sc.DeadlineWhen; w != nil {
		clock.fireWhen = func() bool { return prov.ready(*w) }
	}
	mem := tracer.NewMemory()
	opts.Tracer = tracer.New(mem)
	opts.Clock = clock
	ctx, cancel := context.WithTimeout(context.Background(), traceGuard)
	defer cancel()
	_, _ = engine.Eval(ctx, prog, prov, opts)
	if ctx.Err() != nil {
		t.Fatalf("the run hung until the guard: %v", ctx.Err())
	}
	for name := range sc.Hold {
		if prov.Active(name) != 0 {
			t.Errorf("%s still active after Eval returned", name)
		}
	}
	return mem.Events()
}

// traceScenarios returns the scenario files of testdata/trace by name.
func traceScenarios(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "trace", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, file := range files {
		if name := strings.TrimSuffix(filepath.Base(file), ".json"); name != "toolbox" {
			out[name] = file
		}
	}
	if len(out) == 0 {
		t.Fatal("no scenarios in testdata/trace")
	}
	return out
}

// TestTraceNodeEnterExitPaired: in every scenario, within each branch, node
// events nest: each node.exit closes the innermost open node.enter, with
// the same site and node type, failed nodes included, and no node is left
// open when the run ends. A debugger's tree and its cancellation view
// depend on it.
func TestTraceNodeEnterExitPaired(t *testing.T) {
	for name, file := range traceScenarios(t) {
		t.Run(name, func(t *testing.T) {
			open := map[int][]*tracer.Event{}
			for _, e := range runTraceScenario(t, file) {
				switch e.Kind {
				case tracer.NodeEnter:
					open[e.Branch] = append(open[e.Branch], e)
				case tracer.NodeExit:
					if tracer.IsLeafNode(e.Node) {
						continue // leaves are reported by their exit alone
					}
					stack := open[e.Branch]
					if len(stack) == 0 {
						t.Errorf("branch %d: %s closes no open node", e.Branch, traceDescribe(e))
						continue
					}
					top := stack[len(stack)-1]
					open[e.Branch] = stack[:len(stack)-1]
					if top.Site.String() != e.Site.String() || top.Node != e.Node {
						t.Errorf("branch %d: %s closes %s", e.Branch, traceDescribe(e), traceDescribe(top))
					}
				}
			}
			for br, stack := range open {
				for _, e := range stack {
					t.Errorf("branch %d: %s never exits", br, traceDescribe(e))
				}
			}
		})
	}
}

// renderTrace groups events by branch (-1, the run's own events, first)
// and writes one line per event, in Seq order within a branch.
func renderTrace(events []*tracer.Event) string {
	byBranch := map[int][]*tracer.Event{}
	for _, e := range events {
		byBranch[e.Branch] = append(byBranch[e.Branch], e)
	}
	branches := make([]int, 0, len(byBranch))
	for b := range byBranch {
		branches = append(branches, b)
	}
	sort.Ints(branches)
	var b strings.Builder
	for i, br := range branches {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "# branch %d\n", br)
		for _, e := range byBranch[br] {
			b.WriteString(traceLine(e))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// traceLine renders the parts of an event that do not depend on time or
// on how goroutines interleave.
func traceLine(e *tracer.Event) string {
	site := e.Site.String()
	if site == "" {
		site = "-"
	}
	parts := []string{e.Kind.String(), site}
	add := func(k, v string) { parts = append(parts, k+"="+v) }
	if e.Node != "" {
		add("node", e.Node)
	}
	if e.Tool != "" {
		add("tool", e.Tool)
	}
	switch e.Kind {
	case tracer.ToolAttemptStart, tracer.ToolAttemptEnd, tracer.RetryBackoffStart, tracer.RetryBackoffEnd:
		a := strconv.Itoa(e.Site.Attempt)
		if e.Requested > 0 {
			a += "/" + strconv.Itoa(e.Requested)
		}
		add("attempt", a)
	}
	if e.DelayMS != 0 || e.Kind == tracer.RetryBackoffStart || e.Kind == tracer.RetryBackoffEnd {
		add("delay_ms", strconv.FormatFloat(e.DelayMS, 'g', -1, 64))
	}
	if e.Error != nil {
		add("error", e.Error.Type)
	}
	if e.Kind == tracer.Cancel && e.Message != "" {
		add("message", strconv.Quote(e.Message))
	}
	if e.Reason != "" {
		add("reason", strconv.Quote(e.Reason))
	}
	if e.Cause != "" {
		add("cause", e.Cause)
	}
	if o := e.Outcome; o != nil {
		if o.Success {
			add("outcome", "success:"+traceJSON(o.Value))
		} else {
			add("outcome", "failure:"+o.ErrorType)
		}
	}
	if e.HasOutput && (e.Kind == tracer.ToolAttemptEnd || e.Kind == tracer.RunEnd) {
		add("output", traceJSON(e.Output))
	}
	if c := e.Counters; c != nil && (e.Kind == tracer.RunEnd || e.Kind == tracer.LimitExceeded) {
		add("counters", fmt.Sprintf("nodes:%d,tool_calls:%d", c.Nodes, c.ToolCalls))
	}
	if len(e.Data) > 0 {
		keys := make([]string, 0, len(e.Data))
		for k := range e.Data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			add(k, strconv.Quote(fmt.Sprint(e.Data[k])))
		}
	}
	return strings.Join(parts, " ")
}

func traceJSON(v any) string {
	b, err := engine.EncodeValue(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// traceDiff returns "" when the texts are equal, or a line diff: the
// lines of the longest common subsequence kept as "  ", the rest as "- "
// (wanted, missing) and "+ " (got, unexpected), each with its line number
// in its own text; runs of equal lines far from a change are elided.
func traceDiff(want, got string) string {
	if want == got {
		return ""
	}
	w := strings.Split(want, "\n")
	g := strings.Split(got, "\n")
	// lcs[i][j]: length of the LCS of w[i:] and g[j:].
	lcs := make([][]int, len(w)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(g)+1)
	}
	for i := len(w) - 1; i >= 0; i-- {
		for j := len(g) - 1; j >= 0; j-- {
			if w[i] == g[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		n    int
		text string
	}
	var lines []line
	i, j := 0, 0
	for i < len(w) || j < len(g) {
		switch {
		case i < len(w) && j < len(g) && w[i] == g[j]:
			lines = append(lines, line{' ', i + 1, w[i]})
			i, j = i+1, j+1
		case i < len(w) && (j == len(g) || lcs[i+1][j] >= lcs[i][j+1]):
			lines = append(lines, line{'-', i + 1, w[i]})
			i++
		default:
			lines = append(lines, line{'+', j + 1, g[j]})
			j++
		}
	}
	changed := func(k int) bool { return k >= 0 && k < len(lines) && lines[k].op != ' ' }
	var b strings.Builder
	skipped := false
	for k, l := range lines {
		if l.op == ' ' && !changed(k-1) && !changed(k+1) && !changed(k-2) && !changed(k+2) {
			skipped = true
			continue
		}
		if skipped {
			b.WriteString("  ...\n")
			skipped = false
		}
		fmt.Fprintf(&b, "%c %3d %s\n", l.op, l.n, l.text)
	}
	return b.String()
}

// ---- the gate over live runs ----

// gatePause is one pause the gate announced through OnPause.
type gatePause struct {
	e   *tracer.Event
	hit *tracer.Breakpoint
}

// gatedRun is a run started on its own goroutine with a gate on its
// tracer; every pause is announced on pauses.
type gatedRun struct {
	t      *testing.T
	gate   *tracer.Gate
	mem    *tracer.Memory
	tb     *tools.Toolbox
	pauses chan gatePause
	cancel context.CancelFunc
	done   chan struct{}
	result any
	err    error
}

// startGated parses src and runs it against the trace toolbox (holding
// the tools in hold) with a memory sink and a gate that setup configures
// before the run starts. Backoffs run on the fake clock.
func startGated(t *testing.T, src string, opts engine.Options, hold map[string]traceHold, setup func(*tracer.Gate)) *gatedRun {
	t.Helper()
	prog, err := engine.ParseProgram([]byte(src))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	r := &gatedRun{t: t, gate: tracer.NewGate(), mem: tracer.NewMemory(), tb: traceToolbox(t),
		pauses: make(chan gatePause, 4096), done: make(chan struct{})}
	r.gate.OnPause(func(e *tracer.Event, hit *tracer.Breakpoint) { r.pauses <- gatePause{e, hit} })
	if setup != nil {
		setup(r.gate)
	}
	tr := tracer.New(r.mem)
	tr.SetGate(r.gate)
	opts.Tracer = tr
	clock := &traceClock{}
	opts.Clock = clock
	prov := &heldToolbox{Toolbox: r.tb, clock: clock, hold: hold}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		defer close(r.done)
		r.result, r.err = engine.Eval(ctx, prog, prov, opts)
	}()
	t.Cleanup(func() {
		// Never leave a run behind, whatever the test did.
		r.cancel()
		r.gate.SetBreakpoints(nil)
		r.gate.Continue()
		<-r.done
	})
	return r
}

// next waits for the next pause; ok is false when the run finished first.
func (r *gatedRun) next() (gatePause, bool) {
	r.t.Helper()
	select {
	case p := <-r.pauses:
		return p, true
	case <-r.done:
		select {
		case p := <-r.pauses:
			return p, true
		default:
		}
		return gatePause{}, false
	case <-time.After(traceGuard):
		r.t.Fatalf("no pause and no end of run within %v; paused at %v", traceGuard, r.gate.Paused())
	}
	return gatePause{}, false
}

// mustPause waits for the next pause and fails if the run ends instead.
func (r *gatedRun) mustPause() gatePause {
	r.t.Helper()
	p, ok := r.next()
	if !ok {
		r.t.Fatalf("the run finished (result %v, error %v) instead of pausing", r.result, r.err)
	}
	return p
}

// wait waits for the run to finish.
func (r *gatedRun) wait() (any, error) {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(traceGuard):
		r.t.Fatalf("the run did not finish within %v; paused at %v", traceGuard, r.gate.Paused())
	}
	return r.result, r.err
}

// calls is the number of tool attempts the toolbox has started, all tools.
func (r *gatedRun) calls() int {
	n := 0
	for _, name := range []string{"flaky", "broken", "boom", "invalid", "wait", "slow", "identity", "add", "range"} {
		n += r.tb.Calls(name)
	}
	return n
}

// traceStartsBefore counts tool.attempt.start events with Seq below seq: the
// attempts the gate has released while it holds event seq.
func traceStartsBefore(events []*tracer.Event, seq uint64) int {
	n := 0
	for _, e := range events {
		if e.Kind == tracer.ToolAttemptStart && e.Seq < seq {
			n++
		}
	}
	return n
}

func traceDescribe(e *tracer.Event) string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("#%d %s", e.Seq, traceLine(e))
}

// gateSeqProgram is sequential (one goroutine): identity(flaky(identity(1)))
// under a retry policy, so flaky takes three attempts and two backoffs.
const gateSeqProgram = `{"type":"program","mode":"single","body":[
  {"type":"function","name":"identity","params":[
    {"type":"function","name":"flaky","params":[
      {"type":"function","name":"identity","params":[{"type":"value","name":"value","value":1}]}]}]}]}`

// gateSeqProgramV2 is the same program in schema 2.0.
const gateSeqProgramV2 = `{"schema_version":"2.0","mode":"single","body":[
  {"type":"tool_call","tool":"identity","arguments":{"value":
    {"type":"tool_call","tool":"flaky","arguments":{"value":
      {"type":"tool_call","tool":"identity","arguments":{"value":{"type":"literal","value":1}}}}}}}]}`

func gateRetry() engine.Options {
	return engine.Options{Policy: engine.Policy{Retry: engine.RetryPolicy{
		MaxAttempts: 3, Delay: 250 * time.Millisecond, IdempotentTools: []string{"flaky"}}}}
}

// TestGateStepsLiveRun: with stepping on, the run holds still at run.start
// (no event, no tool call), then each Step releases exactly one event and
// a tool is called only once its tool.attempt.start has been released;
// Continue lets the run finish with its result.
func TestGateStepsLiveRun(t *testing.T) {
	for _, tc := range []struct{ name, src string }{{"v1", gateSeqProgram}, {"v2", gateSeqProgramV2}} {
		t.Run(tc.name, func(t *testing.T) { gateStepsLiveRun(t, tc.src) })
	}
}

func gateStepsLiveRun(t *testing.T, src string) {
	defer goleak.VerifyNone(t)
	r := startGated(t, src, gateRetry(), nil, func(g *tracer.Gate) { g.SetStepping(true) })

	p := r.mustPause()
	if p.e.Kind != tracer.RunStart || p.e.Seq != 1 || p.hit != nil {
		t.Fatalf("first pause at %s (hit %v), want run.start #1 without breakpoint", traceDescribe(p.e), p.hit)
	}
	// Held: nothing moves while the gate holds the run.
	time.Sleep(30 * time.Millisecond)
	if n := r.mem.Len(); n != 1 {
		t.Fatalf("%d events while paused at run.start, want 1", n)
	}
	if n := r.calls(); n != 0 {
		t.Fatalf("%d tool calls while paused at run.start, want 0", n)
	}
	if g := r.gate.Paused(); g != p.e {
		t.Fatalf("Paused() = %s, want %s", traceDescribe(g), traceDescribe(p.e))
	}

	// Step to three events past flaky's second attempt, then continue.
	prev := p.e
	sawSecondAttempt := false
	after := 3
	for i := 0; after > 0; i++ {
		if sawSecondAttempt {
			after--
		}
		callsBefore := r.calls()
		r.gate.Step()
		p := r.mustPause()
		if p.e.Seq != prev.Seq+1 {
			t.Fatalf("step %d: paused at %s after %s, want the next event", i+1, traceDescribe(p.e), traceDescribe(prev))
		}
		events := r.mem.Events()
		if len(events) != int(p.e.Seq) {
			t.Fatalf("step %d: %d events in the sink while paused at %s, want exactly %d (one per step)", i+1, len(events), traceDescribe(p.e), p.e.Seq)
		}
		if got, want := r.calls(), traceStartsBefore(events, p.e.Seq); got != want {
			t.Fatalf("step %d: paused at %s: %d tool calls, want %d (one per released tool.attempt.start)", i+1, traceDescribe(p.e), got, want)
		}
		if p.e.Kind == tracer.ToolAttemptStart && r.calls() != callsBefore {
			t.Fatalf("step %d: the tool ran before its start %s was released", i+1, traceDescribe(p.e))
		}
		if prev.Kind == tracer.ToolAttemptStart && r.calls() != callsBefore+1 {
			t.Fatalf("step %d: releasing %s made %d calls, want 1", i+1, traceDescribe(prev), r.calls()-callsBefore)
		}
		if p.e.Kind == tracer.ToolAttemptStart && p.e.Tool == "flaky" && p.e.Site.Attempt == 2 {
			sawSecondAttempt = true
		}
		prev = p.e
	}
	// Still held after the steps.
	n, c := r.mem.Len(), r.calls()
	time.Sleep(30 * time.Millisecond)
	if r.mem.Len() != n || r.calls() != c {
		t.Fatalf("the run moved while paused at %s: events %d -> %d, calls %d -> %d", traceDescribe(prev), n, r.mem.Len(), c, r.calls())
	}

	r.gate.Continue()
	v, err := r.wait()
	if err != nil {
		t.Fatalf("run failed: %v", err)
	}
	if got := traceJSON(v); got != "1" {
		t.Fatalf("result %s, want 1", got)
	}
	if f := r.tb.Calls("flaky"); f != 3 {
		t.Errorf("flaky called %d times, want 3", f)
	}
	events := r.mem.Events()
	if last := events[len(events)-1]; last.Kind != tracer.RunEnd || last.Error != nil {
		t.Errorf("last event %s, want a successful run.end", traceDescribe(last))
	}
	if got, want := r.calls(), traceStartsBefore(events, ^uint64(0)); got != want {
		t.Errorf("%d tool calls for %d tool.attempt.start events", got, want)
	}
}

// TestGatePausesMidFlight: Pause while a tool is running stops the run at
// the next event; nothing happens until Step, which releases one event.
func TestGatePausesMidFlight(t *testing.T) {
	defer goleak.VerifyNone(t)
	src := `{"type":"program","mode":"single","body":[{"type":"map",
	  "function":{"type":"lambda","params":["x"],"body":{"type":"function","name":"slow","params":[{"type":"value","name":"x","value":null}]}},
	  "iterable":{"type":"function","name":"range","params":[{"type":"value","name":"stop","value":5}]}}]}`
	r := startGated(t, src, engine.Options{}, nil, nil)
	guard := time.Now().Add(traceGuard)
	for r.tb.Active("slow") == 0 {
		if time.Now().After(guard) {
			t.Fatal("slow never ran")
		}
		time.Sleep(time.Millisecond)
	}
	r.gate.Pause()
	p := r.mustPause()
	if p.hit != nil {
		t.Fatalf("paused by breakpoint %v, want by Pause", p.hit)
	}
	n, c := r.mem.Len(), r.calls()
	if n != int(p.e.Seq) {
		t.Fatalf("%d events while paused at %s", n, traceDescribe(p.e))
	}
	time.Sleep(50 * time.Millisecond)
	if r.mem.Len() != n || r.calls() != c || r.tb.Active("slow") != 0 {
		t.Fatalf("the run moved while paused at %s: events %d -> %d, calls %d -> %d, active %d",
			traceDescribe(p.e), n, r.mem.Len(), c, r.calls(), r.tb.Active("slow"))
	}
	for i := 0; i < 4; i++ {
		prev := p.e
		r.gate.Step()
		p = r.mustPause()
		if p.e.Seq != prev.Seq+1 || r.mem.Len() != int(p.e.Seq) {
			t.Fatalf("step %d: paused at %s after %s with %d events", i+1, traceDescribe(p.e), traceDescribe(prev), r.mem.Len())
		}
	}
	r.gate.Continue()
	v, err := r.wait()
	if err != nil || traceJSON(v) != "[0,1,2,3,4]" {
		t.Fatalf("result %s, %v; want [0,1,2,3,4]", traceJSON(v), err)
	}
	if got := r.tb.Calls("slow"); got != 5 {
		t.Fatalf("slow called %d times, want 5", got)
	}
}

// TestGateStepParallelNeverCallsAhead: in a parallel run the other
// branches queue behind the paused event; a tool is never called before
// its tool.attempt.start is released.
func TestGateStepParallelNeverCallsAhead(t *testing.T) {
	defer goleak.VerifyNone(t)
	src := `{"type":"program","mode":"parallel","body":[
	  {"type":"function","name":"identity","params":[{"type":"value","name":"value","value":0}]},
	  {"type":"function","name":"slow","params":[{"type":"value","name":"value","value":1}]},
	  {"type":"function","name":"identity","params":[{"type":"value","name":"value","value":2}]}]}`
	r := startGated(t, src, engine.Options{}, nil, func(g *tracer.Gate) { g.SetStepping(true) })
	steps := 0
	for {
		p, ok := r.next()
		if !ok {
			break
		}
		if got, max := r.calls(), traceStartsBefore(r.mem.Events(), p.e.Seq); got > max {
			t.Fatalf("paused at %s: %d tool calls but only %d tool.attempt.start released", traceDescribe(p.e), got, max)
		}
		steps++
		r.gate.Step()
	}
	v, err := r.wait()
	if err != nil || traceJSON(v) != "[0,1,2]" {
		t.Fatalf("result %s, %v; want [0,1,2]", traceJSON(v), err)
	}
	if steps != r.mem.Len() {
		t.Errorf("paused %d times for %d events, want one pause per event", steps, r.mem.Len())
	}
}

// TestGateBreakpoints: each kind of breakpoint stops the run at the right
// event, with the run held there; Continue goes on to the next hit.
func TestGateBreakpoints(t *testing.T) {
	failFast := `{"type":"program","mode":"parallel","body":[
	  {"type":"function","name":"wait","params":[{"type":"value","name":"value","value":1}]},
	  {"type":"function","name":"boom","params":[]}]}`
	collect := `{"type":"program","mode":"parallel","body":[
	  {"type":"function","name":"boom","params":[]}]}`
	tests := []struct {
		name   string
		src    string
		hold   map[string]traceHold
		opts   *engine.Options // nil: gateRetry()
		bp     tracer.Breakpoint
		want   []string // traceLine of every event the run pauses at
		calls  int      // tool calls made when the first pause happens
		err    string   // error type of the run, "" for success
		result string   // the run's value as JSON when it succeeds; "" means 1
	}{
		{name: "tool_second_attempt", src: gateSeqProgram, bp: tracer.Breakpoint{ID: 1, Kind: tracer.BreakTool, Tool: "flaky", Attempt: 2},
			want:  []string{"tool.attempt.start /body/0/params/0#2 tool=flaky attempt=2/3"},
			calls: 2, // identity(1) and flaky's first attempt
		},
		{name: "failure", src: gateSeqProgram, bp: tracer.Breakpoint{Kind: tracer.BreakFailure},
			want: []string{
				"tool.attempt.end /body/0/params/0#1 tool=flaky attempt=1/3 error=ToolExecutionError",
				"retry.backoff.start /body/0/params/0#1 tool=flaky attempt=1/3 delay_ms=250 error=ToolExecutionError",
				"tool.attempt.end /body/0/params/0#2 tool=flaky attempt=2/3 error=ToolExecutionError",
				"retry.backoff.start /body/0/params/0#2 tool=flaky attempt=2/3 delay_ms=250 error=ToolExecutionError",
			},
			calls: 2,
		},
		{name: "node_prefix", src: gateSeqProgram, bp: tracer.Breakpoint{Kind: tracer.BreakNode, Path: "/body/0/params/0/"},
			want: []string{"node.enter /body/0/params/0 node=function", // the node itself, then all below it
				"node.enter /body/0/params/0/params/0 node=function", "node.exit /body/0/params/0/params/0/params/0 node=value"},
			calls: 0,
		},
		{name: "failed_outcome", src: collect, opts: &engine.Options{Policy: engine.Policy{ParallelFailures: engine.FailCollect}},
			bp:     tracer.Breakpoint{Kind: tracer.BreakFailedOutcome},
			want:   []string{"branch.outcome /body/0 outcome=failure:ToolExecutionError"},
			calls:  1,
			result: `[{"error_message":"boom","error_type":"ToolExecutionError","success":false}]`,
		},
		{name: "limit", src: gateSeqProgram, opts: &engine.Options{Limits: engine.Limits{MaxToolCalls: 1}},
			bp:    tracer.Breakpoint{Kind: tracer.BreakLimit},
			want:  []string{`limit.exceeded /body/0/params/0#1 error=ExecutionLimitError counters=nodes:5,tool_calls:2 limit="1" resource="tool_calls"`},
			calls: 1,
			err:   "ExecutionLimitError",
		},
		{name: "retry", src: gateSeqProgram, bp: tracer.Breakpoint{Kind: tracer.BreakRetry, Tool: "flaky"},
			want: []string{
				"retry.backoff.start /body/0/params/0#1 tool=flaky attempt=1/3 delay_ms=250 error=ToolExecutionError",
				"retry.backoff.start /body/0/params/0#2 tool=flaky attempt=2/3 delay_ms=250 error=ToolExecutionError",
			},
			calls: 2,
		},
		{name: "cancel", src: failFast, hold: map[string]traceHold{"boom": {Active: map[string]int{"wait": 1}}}, bp: tracer.Breakpoint{Kind: tracer.BreakCancel},
			want:  []string{`cancel /body/0#1 tool=wait message="boom" reason="sibling_failure" cause=/body/1`},
			calls: 2,
			err:   "ToolExecutionError",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			opts := gateRetry()
			if tc.opts != nil {
				opts = *tc.opts
			}
			r := startGated(t, tc.src, opts, tc.hold, func(g *tracer.Gate) { g.SetBreakpoints([]tracer.Breakpoint{tc.bp}) })
			var got []string
			for {
				p, ok := r.next()
				if !ok {
					break
				}
				if p.hit == nil || p.hit.Kind != tc.bp.Kind || p.hit.ID != tc.bp.ID {
					t.Errorf("paused at %s by %v, want by %v", traceDescribe(p.e), p.hit, tc.bp)
				}
				if len(got) == 0 {
					if n := r.calls(); n != tc.calls {
						t.Errorf("first pause at %s after %d tool calls, want %d", traceDescribe(p.e), n, tc.calls)
					}
					// Held at the breakpoint: no event and no call.
					n, c := r.mem.Len(), r.calls()
					time.Sleep(20 * time.Millisecond)
					if r.mem.Len() != n || r.calls() != c {
						t.Errorf("the run moved while paused at %s", traceDescribe(p.e))
					}
				}
				got = append(got, traceLine(p.e))
				r.gate.Continue()
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("paused at\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(tc.want, "\n\t"))
			}
			v, err := r.wait()
			want := tc.result
			if want == "" {
				want = "1"
			}
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("run failed: %v", err)
			case tc.err == "" && traceJSON(v) != want:
				t.Errorf("result %s, want %s", traceJSON(v), want)
			case tc.err != "" && string(engine.TypeOf(err)) != tc.err:
				t.Errorf("run error %v (%s), want %s", err, engine.TypeOf(err), tc.err)
			}
		})
	}
}

// TestGateCancelWhilePaused: cancelling the run's context while it is
// paused (with events of other branches queued behind the paused one)
// makes Eval return context.Canceled promptly, with no goroutine left and
// no tool called for the held attempts.
func TestGateCancelWhilePaused(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
	}{
		{"sequential", gateSeqProgram},
		{"parallel", `{"type":"program","mode":"parallel","body":[
		  {"type":"function","name":"identity","params":[{"type":"value","name":"value","value":0}]},
		  {"type":"function","name":"slow","params":[{"type":"value","name":"value","value":1}]},
		  {"type":"function","name":"flaky","params":[{"type":"value","name":"value","value":2}]}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			r := startGated(t, tc.src, gateRetry(), nil, func(g *tracer.Gate) { g.SetStepping(true) })
			// Step to the first tool.attempt.start and hold the run there.
			var p gatePause
			for p = r.mustPause(); p.e.Kind != tracer.ToolAttemptStart; p = r.mustPause() {
				r.gate.Step()
			}
			held := r.calls()
			r.cancel()
			// The guard detects a hang, it times nothing: a cancelled
			// run has nothing left to wait for.
			const guard = 5 * time.Second
			select {
			case <-r.done:
			case <-time.After(guard):
				t.Errorf("Eval did not return within %v of the cancellation while paused at %s; now paused at %s",
					guard, traceDescribe(p.e), traceDescribe(r.gate.Paused()))
				r.gate.SetStepping(false)
				r.gate.Continue() // let the test end
				<-r.done
			}
			if !errors.Is(r.err, context.Canceled) {
				t.Errorf("Eval returned %v, %v; want context.Canceled", r.result, r.err)
			}
			// run.end still reaches the sinks, though nothing waits on it.
			events := r.mem.Events()
			if last := events[len(events)-1]; last.Kind != tracer.RunEnd || last.Error == nil || last.Error.Type != "CancelledError" {
				t.Errorf("last event %s, want run.end with CancelledError", traceDescribe(last))
			}
			if r.calls() != held {
				t.Errorf("%d tool calls after the cancellation (the held %s must never run)", r.calls()-held, traceDescribe(p.e))
			}
		})
	}
}
