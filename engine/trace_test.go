package engine_test

// The engine's trace, checked from the outside:
//
//   - TestTraceGolden runs the scenarios of testdata/trace/*.json against
//     the scripted toolbox testdata/trace/toolbox.json with a memory sink,
//     groups the events by body branch and compares them line by line with
//     testdata/trace/NAME.golden (kind, site, tool, attempt n/max, delay,
//     error type, reason, cause; never a time). Regenerate with
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
// at the sites listed in block, where it sleeps until cancelled.
type traceClock struct {
	block map[string]bool // node paths whose backoffs never end

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
	return engine.RealClock{}.AfterFunc(d, f)
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

func (h *heldToolbox) CallTool(ctx context.Context, call *engine.Call) (any, error) {
	if want, ok := h.hold[call.Tool]; ok {
		ready := func() bool {
			for name, n := range want.Active {
				if h.Active(name) < n {
					return false
				}
			}
			return h.clock.blocked() >= want.Sleeping
		}
		guard := time.Now().Add(traceGuard)
		for !ready() {
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
}

func TestTraceGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "trace", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		if name == "toolbox" {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			got := runTraceScenario(t, file)
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
	if n == 0 {
		t.Fatal("no scenarios in testdata/trace")
	}
}

// runTraceScenario runs one scenario file and renders its trace.
func runTraceScenario(t *testing.T, file string) string {
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
	return renderTrace(mem.Events())
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

// keep imports used while the gate tests are written
var _ = errors.Is
var _ = slices.Index[[]int]
