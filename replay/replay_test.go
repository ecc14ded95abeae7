package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/engine/tools"
	"github.com/treelang/treelang/fixtures"
	"github.com/treelang/treelang/replay"
	"github.com/treelang/treelang/tracer"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const addTool = `{"name":"add","properties":{"a":{"type":"integer"},"b":{"type":"integer"}}}`

func fixture(t *testing.T, text string) *fixtures.Fixture {
	t.Helper()
	f, err := fixtures.Parse([]byte(text), "test.json")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func call(name string, args map[string]any) *engine.Call {
	return &engine.Call{Tool: name, Arguments: args}
}

// Port of tests/test_replay.py (reference §11.2).
func TestPythonReplaySemantics(t *testing.T) {
	ctx := context.Background()
	text := `{"tools":[` + addTool + `],"calls":[{"name":"add","arguments":{"a":2,"b":3},"output":5}]}`

	p, _ := replay.NewToolReplay(fixture(t, text), replay.Options{})
	out, err := p.CallTool(ctx, call("add", map[string]any{"a": n(2), "b": n(3)}))
	if err != nil || fmt.Sprint(out) != "5" {
		t.Fatalf("got %v, %v; want 5", out, err)
	}
	if err := p.AssertConsumed(); err != nil {
		t.Fatalf("AssertConsumed: %v", err)
	}

	p, _ = replay.NewToolReplay(fixture(t, text), replay.Options{Stall: 50 * time.Millisecond})
	_, err = p.CallTool(ctx, call("add", map[string]any{"a": n(3), "b": n(2)}))
	if !errors.Is(err, engine.ReplayMismatchError) || !strings.Contains(err.Error(), "did not match") {
		t.Fatalf("changed call: got %v, want ReplayMismatchError 'did not match'", err)
	}
	var m *replay.MismatchError
	if !errors.As(err, &m) || m.Drift != replay.DriftChanged || m.Entry != 1 || len(m.Diff) != 2 {
		t.Fatalf("report: %+v", m)
	}

	p, _ = replay.NewToolReplay(fixture(t, text), replay.Options{})
	err = p.AssertConsumed()
	if !errors.Is(err, engine.ReplayMismatchError) || !strings.Contains(err.Error(), "unconsumed") {
		t.Fatalf("unconsumed: got %v", err)
	}
	if !errors.Is(err, engine.ProviderResponseError) {
		t.Fatalf("ReplayMismatchError must be a ProviderResponseError")
	}
}

func n(i int) any { return json.Number(fmt.Sprint(i)) }

func TestMismatchKindsInOrderMode(t *testing.T) {
	ctx := context.Background()
	text := `{"tools":[` + addTool + `],"calls":[
		{"name":"add","arguments":{"a":1,"b":1},"output":2},
		{"name":"add","arguments":{"a":2,"b":2},"output":4}]}`
	tests := []struct {
		name  string
		calls [][2]int
		drift replay.Drift
		msg   string
	}{
		{"unexpected after end", [][2]int{{1, 1}, {2, 2}, {3, 3}}, replay.DriftUnexpected, "Unexpected tool call 'add' after replay end"},
		{"changed", [][2]int{{1, 1}, {9, 9}}, replay.DriftChanged, "Tool replay entry 2 did not match call 'add'"},
		{"reordered (its turn never comes)", [][2]int{{2, 2}}, replay.DriftReordered, "Tool replay entry 1 did not match call 'add'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := replay.NewToolReplay(fixture(t, text), replay.Options{Stall: 30 * time.Millisecond})
			var err error
			for _, c := range tt.calls {
				_, err = p.CallTool(ctx, call("add", map[string]any{"a": n(c[0]), "b": n(c[1])}))
			}
			var m *replay.MismatchError
			if !errors.As(err, &m) {
				t.Fatalf("got %v, want a mismatch", err)
			}
			if m.Drift != tt.drift || m.Message != tt.msg {
				t.Fatalf("got %s %q, want %s %q", m.Drift, m.Message, tt.drift, tt.msg)
			}
		})
	}
}

// 1 equals 1.0, key order is ignored, booleans are not numbers.
func TestArgumentMatchingIsDecodedJSON(t *testing.T) {
	ctx := context.Background()
	text := `{"tools":[` + addTool + `],"calls":[{"name":"add","arguments":{"b":1.0,"a":2},"output":3}]}`
	p, _ := replay.NewToolReplay(fixture(t, text), replay.Options{})
	if _, err := p.CallTool(ctx, call("add", map[string]any{"a": n(2), "b": n(1)})); err != nil {
		t.Fatalf("1 should match 1.0: %v", err)
	}
	p, _ = replay.NewToolReplay(fixture(t, text), replay.Options{})
	if _, err := p.CallTool(ctx, call("add", map[string]any{"a": n(2), "b": true})); err == nil {
		t.Fatal("true must not match 1.0")
	}
}

func loadProgram(t *testing.T, path string) (*engine.Program, []byte) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.ParseProgram(src)
	if err != nil {
		t.Fatal(err)
	}
	return p, src
}

func failFastPolicy() engine.Policy {
	return engine.Policy{Retry: engine.RetryPolicy{MaxAttempts: 3, Delay: 20 * time.Millisecond, IdempotentTools: []string{"flaky"}}}
}

// branchSequences groups a run's events by branch, keeping what must be
// identical between replays (kind, site, tool, attempt, error type).
func branchSequences(events []*tracer.Event) map[int][]string {
	out := map[int][]string{}
	for _, e := range events {
		if e.Kind == tracer.ReplayMatch {
			continue
		}
		s := fmt.Sprintf("%s %s %s", e.Kind, e.Site, e.Tool)
		if e.Error != nil {
			s += " " + e.Error.Type
		}
		if e.Outcome != nil {
			s += fmt.Sprintf(" outcome=%v/%s", e.Outcome.Success, e.Outcome.ErrorType)
		}
		out[e.Branch] = append(out[e.Branch], s)
	}
	return out
}

func record(t *testing.T, pol engine.Policy) (*fixtures.Fixture, any, error, map[int][]string) {
	t.Helper()
	prog, src := loadProgram(t, "testdata/failfast.json")
	tb, err := tools.Load("testdata/failfast_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	rec := replay.NewRecorder(tb)
	mem := tracer.NewMemory()
	v, runErr := engine.Eval(context.Background(), prog, rec, engine.Options{Policy: pol, Clock: rec.Clock(nil), Tracer: tracer.New(mem)})
	f := rec.Fixture(src)
	// Round trip through the file format, as users do.
	path := filepath.Join(t.TempDir(), "fx.json")
	if err := fixtures.Save(path, f); err != nil {
		t.Fatal(err)
	}
	f, err = fixtures.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return f, v, runErr, branchSequences(mem.Events())
}

func TestRecorderKeepsEveryAttempt(t *testing.T) {
	f, _, runErr, _ := record(t, failFastPolicy())
	if runErr == nil || runErr.Error() != "failed" {
		t.Fatalf("recording run: %v", runErr)
	}
	var flaky, cancelled int
	for _, c := range f.Calls {
		if c.Site == "" || c.Attempt == 0 || c.Started == 0 || c.Completed == 0 {
			t.Fatalf("entry without ordering data: %+v", c)
		}
		if c.Name == "flaky" {
			flaky++
		}
		if c.Cancelled {
			cancelled++
			if c.Name != "wait" {
				t.Errorf("unexpected cancelled entry %+v", c)
			}
		}
	}
	if flaky != 3 || cancelled != 1 {
		t.Fatalf("flaky attempts %d (want 3), cancelled %d (want 1 wait)", flaky, cancelled)
	}
	if len(f.Timers) != 2 {
		t.Fatalf("backoff timers %d, want 2", len(f.Timers))
	}
	if f.Stamps == nil || f.Stamps.ProgramSHA256 == "" {
		t.Fatal("fixture not stamped")
	}
}

// globalSequence is a run's whole event sequence, time fields aside.
func globalSequence(events []*tracer.Event) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "%d %s %s %s", e.Seq, e.Kind, e.Site, e.Tool)
		if e.Error != nil {
			b.WriteString(" " + e.Error.Type)
		}
		if e.Outcome != nil {
			fmt.Fprintf(&b, " outcome=%v", e.Outcome.Success)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// A failed fail-fast run with retries replays identically, many times:
// the same error, the same events per branch as the recording, and the
// same whole event sequence every time.
func TestReplayFailFastIsDeterministic(t *testing.T) {
	f, _, recErr, recSeq := record(t, failFastPolicy())
	prog, _ := loadProgram(t, "testdata/failfast.json")
	runs := 1000
	if testing.Short() {
		runs = 50
	}
	var firstSeq string
	for i := 0; i < runs; i++ {
		rp, err := replay.NewToolReplay(f, replay.Options{})
		if err != nil {
			t.Fatal(err)
		}
		mem := tracer.NewMemory()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // hang guard only
		_, err = engine.Eval(ctx, prog, rp, engine.Options{Policy: failFastPolicy(), Clock: rp.Clock(), Tracer: tracer.New(mem)})
		cancel()
		if err == nil || err.Error() != recErr.Error() || engine.TypeOf(err) != engine.TypeOf(recErr) {
			t.Fatalf("replay %d: error %v, recorded %v", i, err, recErr)
		}
		if m := rp.FirstMismatch(); m != nil {
			t.Fatalf("replay %d: drift %v", i, m.SideBySide())
		}
		got := branchSequences(mem.Events())
		for b, want := range recSeq {
			if strings.Join(got[b], "\n") != strings.Join(want, "\n") {
				t.Fatalf("replay %d: branch %d events differ\n got: %q\nwant: %q", i, b, got[b], want)
			}
		}
		seq := globalSequence(mem.Events())
		if i == 0 {
			firstSeq = seq
		} else if seq != firstSeq {
			t.Fatalf("replay %d: the event sequence differs from the first replay's\n got:\n%s\nwant:\n%s", i, seq, firstSeq)
		}
	}
}

func TestReplayCollectOutcomes(t *testing.T) {
	pol := failFastPolicy()
	pol.ParallelFailures = engine.FailCollect
	prog, src := loadProgram(t, "testdata/failfast.json")
	_ = src
	tb, err := tools.Load("testdata/failfast_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	// The wait tool takes 10 s live; shorten it for the recording.
	tb.SetClock(fastClock{})
	rec := replay.NewRecorder(tb)
	var want any
	want, err = engine.Eval(context.Background(), prog, rec, engine.Options{Policy: pol, Clock: rec.Clock(nil)})
	if err != nil {
		t.Fatal(err)
	}
	f := rec.Fixture(src)
	var firstSeq string
	for i := 0; i < 20; i++ {
		rp, _ := replay.NewToolReplay(f, replay.Options{})
		mem := tracer.NewMemory()
		got, err := engine.Eval(context.Background(), prog, rp, engine.Options{Policy: pol, Clock: rp.Clock(), Tracer: tracer.New(mem)})
		if seq := globalSequence(mem.Events()); i == 0 {
			firstSeq = seq
		} else if seq != firstSeq {
			t.Fatalf("replay %d: the event sequence differs", i)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !engine.Equal(got, want) {
			t.Fatalf("outcomes differ: got %v want %v", got, want)
		}
		if err := rp.AssertConsumed(); err != nil {
			t.Fatal(err)
		}
	}
}

// fastClock runs toolbox delays instantly (the recording of a slow tool).
type fastClock struct{ engine.RealClock }

func (fastClock) Sleep(ctx context.Context, d time.Duration) error { return ctx.Err() }

// Backoffs run on virtual time: a recording that slept 30 s in total
// replays without sleeping.
func TestVirtualClockSkipsBackoff(t *testing.T) {
	f, _, _, _ := record(t, failFastPolicy())
	for i := range f.Timers {
		f.Timers[i].DelayMS = 15000
	}
	prog, _ := loadProgram(t, "testdata/failfast.json")
	pol := failFastPolicy()
	pol.Retry.Delay = 15 * time.Second
	rp, _ := replay.NewToolReplay(f, replay.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // would need 30 s if it slept
	defer cancel()
	_, err := engine.Eval(ctx, prog, rp, engine.Options{Policy: pol, Clock: rp.Clock()})
	if err == nil || err.Error() != "failed" {
		t.Fatalf("got %v, want the recorded failure", err)
	}
}

// A call the recording made that this run never makes is reported after
// the stall timeout instead of hanging.
func TestStallReportsMissingCall(t *testing.T) {
	text := `{"format":"treelang-fixture","version":1,"tools":[` + addTool + `],"calls":[
	 {"name":"add","arguments":{"a":1,"b":1},"output":2,"site":"/body/0","attempt":1,"started":1,"completed":1},
	 {"name":"add","arguments":{"a":2,"b":2},"output":4,"site":"/body/1","attempt":1,"started":2,"completed":2}]}`
	prog, err := engine.ParseProgram([]byte(`{"type":"program","mode":"parallel","body":[
	 {"type":"function","name":"add","params":[{"type":"value","name":"a","value":2},{"type":"value","name":"b","value":2}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = prog
	rp, _ := replay.NewToolReplay(fixture(t, text), replay.Options{Stall: 50 * time.Millisecond})
	// The body has one item at /body/0, which the fixture recorded with
	// other arguments: a changed call.
	_, err = engine.Eval(context.Background(), prog, rp, engine.Options{Clock: rp.Clock()})
	var m *replay.MismatchError
	if !errors.As(err, &m) || m.Drift != replay.DriftChanged {
		t.Fatalf("got %v, want a changed drift", err)
	}
	// A program whose only call is the second entry waits for the first,
	// which never comes: a stall.
	prog2, _ := engine.ParseProgram([]byte(`{"type":"program","mode":"parallel","body":[
	 {"type":"value","name":"x","value":0},
	 {"type":"function","name":"add","params":[{"type":"value","name":"a","value":2},{"type":"value","name":"b","value":2}]}]}`))
	rp, _ = replay.NewToolReplay(fixture(t, text), replay.Options{Stall: 50 * time.Millisecond})
	_, err = engine.Eval(context.Background(), prog2, rp, engine.Options{Clock: rp.Clock()})
	if !errors.As(err, &m) || m.Drift != replay.DriftMissing || m.Entry != 1 {
		t.Fatalf("got %v, want entry 1 missing", err)
	}
}

func TestPythonShapeFixtureReplaysUnchanged(t *testing.T) {
	f, err := fixtures.Load("testdata/python_fixture.json")
	if err != nil {
		t.Fatal(err)
	}
	prog, err := engine.ParseProgram([]byte(`{"type":"program","mode":"single","body":[
	 {"type":"function","name":"add","params":[
	   {"type":"function","name":"add","params":[{"type":"value","name":"a","value":2},{"type":"value","name":"b","value":3}]},
	   {"type":"value","name":"b","value":10}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rp, _ := replay.NewToolReplay(f, replay.Options{})
	v, err := engine.Eval(context.Background(), prog, rp, engine.Options{Clock: rp.Clock()})
	if err != nil || fmt.Sprint(v) != "15" {
		t.Fatalf("got %v, %v", v, err)
	}
	if err := rp.AssertConsumed(); err != nil {
		t.Fatal(err)
	}
}

// Port of the model replay tests (reference §11.2, 3 and 4).
func TestModelReplay(t *testing.T) {
	ctx := context.Background()
	req := map[string]any{"model": "test", "messages": []any{}}
	tr := replay.NewModelReplay([]fixtures.ModelCall{
		{Kind: fixtures.KindComplete, Request: req, Response: "complete"},
		{Kind: fixtures.KindStream, Request: req, Chunks: []string{"one", "two"}},
	})
	out, err := tr.Complete(ctx, req)
	if err != nil || out != "complete" {
		t.Fatalf("complete: %q %v", out, err)
	}
	var chunks []string
	for c, err := range tr.Stream(ctx, req) {
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, c)
	}
	if strings.Join(chunks, ",") != "one,two" {
		t.Fatalf("chunks %v", chunks)
	}
	if err := tr.AssertConsumed(); err != nil {
		t.Fatal(err)
	}
	tr = replay.NewModelReplay([]fixtures.ModelCall{{Kind: fixtures.KindComplete, Request: map[string]any{"model": "expected"}, Response: "response"}})
	_, err = tr.Complete(ctx, map[string]any{"model": "different"})
	if !errors.Is(err, engine.ReplayMismatchError) || !strings.Contains(err.Error(), "did not match") {
		t.Fatalf("got %v", err)
	}
	_, err = tr.Complete(ctx, map[string]any{"model": "expected"})
	if err == nil || !strings.Contains(err.Error(), "after replay end") {
		t.Fatalf("past the end: %v", err)
	}
}
