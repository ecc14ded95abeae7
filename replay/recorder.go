package replay

import (
	"context"
	"iter"
	"sort"
	"sync"
	"time"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/fixtures"
)

// RecorderVersion is stamped into every fixture this package writes.
const RecorderVersion = "treelang-go/1"

// Recorder wraps a live provider and records every physical attempt
// (successes, errors and cancellations) with its site, attempt number and
// when it started and completed. Starts, completions and timer firings
// are numbered in one sequence, so "started" and "completed" of a fixture
// entry say what had happened before what. Its Clock records the
// backoff timers and the deadline in the same completion sequence. A
// Recorder is safe for concurrent use.
type Recorder struct {
	inner engine.ToolProvider

	mu     sync.Mutex
	calls  []fixtures.Call
	timers []fixtures.Timer
	// seq numbers attempt starts, attempt completions and timer firings in
	// one sequence, so a replay knows what had happened before what.
	seq       int
	tools     map[string]*engine.ToolDefinition
	toolOrder []string
	models    []fixtures.ModelCall
}

// NewRecorder returns a recorder around inner.
func NewRecorder(inner engine.ToolProvider) *Recorder {
	return &Recorder{inner: inner, tools: map[string]*engine.ToolDefinition{}}
}

func (r *Recorder) noteTool(def *engine.ToolDefinition) {
	if def == nil {
		return
	}
	r.mu.Lock()
	if _, ok := r.tools[def.Name]; !ok {
		r.tools[def.Name] = def
		r.toolOrder = append(r.toolOrder, def.Name)
	}
	r.mu.Unlock()
}

// ListTools passes through and records the definitions.
func (r *Recorder) ListTools(ctx context.Context) ([]*engine.ToolDefinition, error) {
	defs, err := r.inner.ListTools(ctx)
	for _, d := range defs {
		r.noteTool(d)
	}
	return defs, err
}

// Tool passes through and records the definition.
func (r *Recorder) Tool(ctx context.Context, name string) (*engine.ToolDefinition, error) {
	def, err := r.inner.Tool(ctx, name)
	if err == nil {
		r.noteTool(def)
	}
	return def, err
}

// CallTool calls the live provider and records the attempt.
func (r *Recorder) CallTool(ctx context.Context, call *engine.Call) (any, error) {
	r.mu.Lock()
	r.seq++
	idx := len(r.calls)
	r.calls = append(r.calls, fixtures.Call{Name: call.Tool, Arguments: engine.CloneValue(call.Arguments).(map[string]any),
		Site: call.Site.Instance().String(), Attempt: call.Site.Attempt, Started: r.seq})
	r.mu.Unlock()

	out, err := r.inner.CallTool(ctx, call)

	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	c := &r.calls[idx]
	c.Completed = r.seq
	switch {
	case err == nil && ctx.Err() == nil:
		c.Output, c.HasOutput = engine.CloneValue(out), true
	case ctx.Err() != nil:
		c.Cancelled = true
		c.Error = &fixtures.CallError{Type: "CancelledError", Message: ctx.Err().Error()}
	default:
		c.Error = &fixtures.CallError{Type: string(engine.TypeOf(err)), Message: err.Error()}
	}
	return out, err
}

// Clock wraps inner so backoff timers and the deadline are numbered in the
// completion sequence.
func (r *Recorder) Clock(inner engine.Clock) engine.Clock {
	if inner == nil {
		inner = engine.RealClock{}
	}
	rc := &recordingClock{r: r, inner: inner}
	if s, ok := inner.(engine.Scheduler); ok {
		return &schedRecordingClock{recordingClock: rc, sched: s}
	}
	return rc
}

type recordingClock struct {
	r     *Recorder
	inner engine.Clock
}

func (c *recordingClock) Now() time.Time { return c.inner.Now() }

func (c *recordingClock) Sleep(ctx context.Context, d time.Duration) error {
	err := c.inner.Sleep(ctx, d)
	if err != nil {
		return err
	}
	if site, ok := engine.SiteFromContext(ctx); ok {
		c.r.mu.Lock()
		c.r.seq++
		c.r.timers = append(c.r.timers, fixtures.Timer{Site: site.Instance().String(), Attempt: site.Attempt,
			DelayMS: float64(d) / float64(time.Millisecond), Completed: c.r.seq})
		c.r.mu.Unlock()
	}
	return nil
}

func (c *recordingClock) AfterFunc(d time.Duration, f func()) func() bool {
	return c.inner.AfterFunc(d, f)
}

// NamedAfterFunc records the deadline when it fires.
func (c *recordingClock) NamedAfterFunc(name string, d time.Duration, f func()) func() bool {
	after := c.inner.AfterFunc
	if nc, ok := c.inner.(engine.NamedClock); ok {
		after = func(d time.Duration, f func()) func() bool { return nc.NamedAfterFunc(name, d, f) }
	}
	if name != engine.DeadlineTimer {
		return after(d, f)
	}
	return after(d, func() {
		c.r.mu.Lock()
		c.r.seq++
		c.r.timers = append(c.r.timers, fixtures.Timer{Site: fixtures.DeadlineTimerSite, DelayMS: float64(d) / float64(time.Millisecond), Completed: c.r.seq})
		c.r.mu.Unlock()
		f()
	})
}

// schedRecordingClock is a recording clock over a replaying one (a replay
// being re-recorded): the engine's scheduling goes through to it, which
// keeps the replay deterministic.
type schedRecordingClock struct {
	*recordingClock
	sched engine.Scheduler
}

// Started forwards to the replaying clock.
func (c *schedRecordingClock) Started() { c.sched.Started() }

// Finished forwards to the replaying clock.
func (c *schedRecordingClock) Finished() { c.sched.Finished() }

// Go forwards to the replaying clock.
func (c *schedRecordingClock) Go(f func()) { c.sched.Go(f) }

// Await forwards to the replaying clock.
func (c *schedRecordingClock) Await(ready func() bool) { c.sched.Await(ready) }

// RecordModel wraps a model transport so its requests and responses go
// into the fixture's model_calls.
func (r *Recorder) RecordModel(inner engine.ModelTransport) engine.ModelTransport {
	return &recordingTransport{r: r, inner: inner}
}

type recordingTransport struct {
	r     *Recorder
	inner engine.ModelTransport
}

func (t *recordingTransport) Complete(ctx context.Context, req map[string]any) (string, error) {
	out, err := t.inner.Complete(ctx, req)
	if err == nil {
		t.r.mu.Lock()
		t.r.models = append(t.r.models, fixtures.ModelCall{Kind: fixtures.KindComplete, Request: engine.CloneValue(req).(map[string]any), Response: out})
		t.r.mu.Unlock()
	}
	return out, err
}

func (t *recordingTransport) Stream(ctx context.Context, req map[string]any) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		var chunks []string
		ok := true
		for c, err := range t.inner.Stream(ctx, req) {
			if err != nil {
				ok = false
				yield("", err)
				return
			}
			chunks = append(chunks, c)
			if !yield(c, nil) {
				ok = false
				break
			}
		}
		if ok {
			t.r.mu.Lock()
			t.r.models = append(t.r.models, fixtures.ModelCall{Kind: fixtures.KindStream, Request: engine.CloneValue(req).(map[string]any), Chunks: chunks})
			t.r.mu.Unlock()
		}
	}
}

// Fixture returns what was recorded so far: calls in the order they
// started, the timers that fired, the tool definitions that were used and
// stamps for programJSON (nil when there is no program, as for a plain
// model recording).
func (r *Recorder) Fixture(programJSON []byte) *fixtures.Fixture {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := fixtures.New()
	f.Calls = make([]fixtures.Call, len(r.calls))
	copy(f.Calls, r.calls)
	for i := range f.Calls {
		if f.Calls[i].Completed == 0 {
			// Still running when the fixture was taken (a crash or an
			// interrupted run): keep it as cancelled.
			f.Calls[i].Cancelled = true
			f.Calls[i].Error = &fixtures.CallError{Type: "CancelledError", Message: "run ended before the attempt completed"}
		}
	}
	sort.SliceStable(f.Calls, func(i, j int) bool { return f.Calls[i].Started < f.Calls[j].Started })
	f.Timers = append([]fixtures.Timer(nil), r.timers...)
	f.ModelCalls = append([]fixtures.ModelCall(nil), r.models...)
	for _, name := range r.toolOrder {
		f.Tools = append(f.Tools, r.tools[name])
	}
	if programJSON != nil {
		if st, err := fixtures.NewStamps(programJSON, f.Tools, RecorderVersion); err == nil {
			f.Stamps = st
		}
	}
	return f
}
