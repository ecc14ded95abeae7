package engine

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/treelang/treelang/tracer"
)

// Emitter receives the events of a run; *tracer.Tracer implements it.
// Emit may block (a paused debugger) and returns an error only when ctx
// is done, which aborts the run.
type Emitter interface {
	Emit(ctx context.Context, e *tracer.Event) error
}

// Options configure one evaluation. The zero value runs with the Python
// defaults, no limits, no tracing and the wall clock.
type Options struct {
	Policy Policy
	Limits Limits
	Tracer Emitter // nil: no events, no cost (do not pass a typed nil pointer)
	Clock  Clock   // nil: RealClock
}

// Eval runs a parsed program against a provider and returns its value:
// the single body item's value, the list of values for other bodies, or
// in collect mode the list of branch outcomes.
//
// Every goroutine Eval starts has finished when it returns. A deadline
// (Limits.Timeout) becomes an ExecutionLimitError; cancellation of ctx is
// returned as ctx's error and never converted.
func Eval(ctx context.Context, prog *Program, provider ToolProvider, opts Options) (any, error) {
	return evalRoot(ctx, prog, provider, opts)
}

// EvalNode evaluates any schema 1.0 node as the root, as the Python
// library allows (tests evaluate bare function and reduce nodes).
func EvalNode(ctx context.Context, n Node, provider ToolProvider, opts Options) (any, error) {
	return evalRoot(ctx, n, provider, opts)
}

var errDeadline = errors.New("run deadline exceeded")

// siblingFailure is the cancellation cause given to the siblings of a
// failed branch.
type siblingFailure struct {
	site string
	err  error
}

func (s *siblingFailure) Error() string {
	return "cancelled: sibling " + s.site + " failed: " + s.err.Error()
}

// Unwrap makes the cause a cancellation.
func (s *siblingFailure) Unwrap() error { return context.Canceled }

func evalRoot(parent context.Context, root Node, provider ToolProvider, opts Options) (result any, err error) {
	if err := opts.Policy.Validate(); err != nil {
		return nil, err
	}
	r := newRun(provider, opts)
	if r.sched != nil {
		r.sched.Started()
		defer r.sched.Finished()
	}
	prog, _ := root.(*Program)
	if prog != nil {
		r.prog = prog
	}
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	r.runCtx, r.parent = ctx, parent

	if r.tr != nil {
		ev := &tracer.Event{Kind: tracer.RunStart, Node: root.Kind().String(), Site: tracer.Site{Path: root.Path()}, Branch: -1,
			Data: map[string]any{"policy": Summary(opts.Policy, opts.Limits)}}
		if prog != nil {
			ev.Data["schema_version"] = prog.Version
			ev.Data["mode"] = prog.Mode
		}
		if err := r.tr.Emit(ctx, ev); err != nil {
			return nil, err
		}
		start := r.clock.Now()
		defer func() {
			end := &tracer.Event{Kind: tracer.RunEnd, Branch: -1, Counters: r.counters(), Duration: r.clock.Now().Sub(start)}
			if err != nil {
				end.Error = errorInfo(err)
			} else {
				end.Output, end.HasOutput = result, true
			}
			_ = r.tr.Emit(parent, end) // pauses a debugger, unless the caller gave up
		}()
	}

	startDeadline := func() {
		if opts.Limits.Timeout > 0 {
			stop := afterFunc(r.clock, DeadlineTimer, opts.Limits.Timeout, func() { cancel(errDeadline) })
			r.stopDeadline = stop
		}
	}
	if prog != nil && prog.Version == "2.0" {
		result, err = r.evalProgramV2(ctx, prog, startDeadline)
	} else {
		startDeadline()
		result, err = r.eval(ctx, root, 1, &scope{branch: -1})
	}
	if r.stopDeadline != nil {
		r.stopDeadline()
	}
	if err != nil {
		err = r.finishError(parent, ctx, err)
	}
	return result, err
}

// finishError turns the run deadline into an ExecutionLimitError and keeps
// external cancellation as it is.
func (r *run) finishError(parent, ctx context.Context, err error) error {
	if IsCancellation(err) {
		if parent.Err() != nil {
			return parent.Err()
		}
		if context.Cause(ctx) == errDeadline {
			le := &LimitError{Resource: "wall_clock_seconds", Limit: r.limits.TimeoutText}
			if le.Limit == "" {
				le.Limit = PyFloat(r.limits.Timeout.Seconds())
			}
			r.emitLimit(le, tracer.Site{}, -1)
			return le
		}
	}
	return err
}

type run struct {
	prov         ToolProvider
	policy       Policy
	limits       Limits
	tr           Emitter
	clock        Clock
	prog         *Program
	runCtx       context.Context // the run's context (the deadline cancels it)
	parent       context.Context // the caller's context
	stopDeadline func() bool

	nodes      atomic.Int64
	toolCalls  atomic.Int64
	sem        *semaphore.Weighted
	idempotent map[string]bool
	retryable  []ErrorType
	collect    bool
	// sleepsAlways: the clock records or replays timers, so even a zero
	// backoff goes through it.
	sleepsAlways bool
	sched        Scheduler // nil unless the clock replays a recording
	realTime     bool      // the clock is the wall clock the tracer stamps with

	memoMu sync.Mutex
	memos  map[string]*memoEntry

	slabMu      sync.Mutex
	slab        []tracer.Event
	countedSlab []counted
}

func newRun(p ToolProvider, opts Options) *run {
	r := &run{prov: p, policy: opts.Policy, limits: opts.Limits, tr: opts.Tracer, clock: opts.Clock,
		collect: opts.Policy.ParallelFailures == FailCollect}
	if r.clock == nil {
		r.clock = RealClock{}
	}
	_, r.sleepsAlways = r.clock.(NamedClock)
	_, r.realTime = r.clock.(RealClock)
	r.sched, _ = r.clock.(Scheduler)
	if opts.Limits.MaxConcurrency > 0 {
		r.sem = semaphore.NewWeighted(opts.Limits.MaxConcurrency)
	}
	if opts.Policy.Retry.MaxAttempts > 1 {
		r.idempotent = make(map[string]bool, len(opts.Policy.Retry.IdempotentTools))
		for _, t := range opts.Policy.Retry.IdempotentTools {
			r.idempotent[t] = true // matched against the prefix-stripped name, as upstream
		}
	}
	r.retryable = opts.Policy.Retry.Retryable
	if r.retryable == nil {
		r.retryable = DefaultRetryable
	}
	return r
}

func (r *run) counters() *tracer.Counters {
	return &tracer.Counters{Nodes: r.nodes.Load(), ToolCalls: r.toolCalls.Load()}
}

// count records one node evaluation at depth, checking the node and depth
// budgets (nodes first) and cancellation.
func (r *run) count(ctx context.Context, depth int, path string, iter []int, branch int) error {
	n := r.nodes.Add(1)
	if (r.limits.MaxNodes > 0 && n > r.limits.MaxNodes) || (r.limits.MaxDepth > 0 && int64(depth) > r.limits.MaxDepth) {
		return r.overLimit(n, depth, path, iter, branch)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

// overLimit reports which node budget count found exceeded (the node
// count first), out of count's frame.
func (r *run) overLimit(n int64, depth int, path string, iter []int, branch int) error {
	site := tracer.Site{Path: path, Iter: iter}
	if max := r.limits.MaxNodes; max > 0 && n > max {
		return r.limitErr("nodes", max, site, branch)
	}
	return r.limitErr("depth", r.limits.MaxDepth, site, branch)
}

func (r *run) limitErr(resource string, max int64, site tracer.Site, branch int) error {
	le := &LimitError{Resource: resource, Limit: formatInt(max)}
	r.emitLimit(le, site, branch)
	return le
}

func (r *run) emitLimit(le *LimitError, site tracer.Site, branch int) {
	if r.tr == nil {
		return
	}
	_ = r.tr.Emit(r.parent, &tracer.Event{Kind: tracer.LimitExceeded, Site: site, Branch: branch,
		Error: &tracer.ErrorInfo{Type: string(ExecutionLimitError), Message: le.Error()}, Counters: r.counters(),
		Data: map[string]any{"resource": le.Resource, "limit": le.Limit}})
}

func formatInt(n int64) string {
	var b [20]byte
	i := len(b)
	if n == 0 {
		return "0"
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// errorInfo converts an error for events and outcomes.
func errorInfo(err error) *tracer.ErrorInfo {
	t := TypeOf(err)
	if t == "" {
		t = "CancelledError"
	}
	return &tracer.ErrorInfo{Type: string(t), Message: err.Error()}
}

// at attaches the node path to a Treelang error that has none.
func at(err error, path string) error { return atSite(err, path, "") }

// acquirePermit takes a max_concurrency permit, in FIFO order; under a
// Scheduler the wait gives up the turn.
func (r *run) acquirePermit(ctx context.Context) error {
	if r.sched == nil {
		return r.sem.Acquire(ctx, 1)
	}
	acquired := false
	r.sched.Await(func() bool {
		if r.sem.TryAcquire(1) {
			acquired = true
			return true
		}
		return ctx.Err() != nil
	})
	if !acquired {
		return ctx.Err()
	}
	return nil
}

// growStack makes a new branch goroutine grow its stack once, right at
// its start, while the copy is cheap (one frame): the evaluation chain
// down to a tool call needs more than the initial 2 KiB, and growing it
// deep in that chain costs a copy of every frame on the way.
//
//go:noinline
func growStack(n int) byte {
	var pad [2048]byte
	pad[n&2047] = 1
	return pad[(n*7)&2047]
}

// atSite attaches the node path and instance to a Treelang error that has
// none.
func atSite(err error, path, site string) error {
	var e *Error
	if errors.As(err, &e) && e.Path == "" && e == err {
		c := *e
		c.Path, c.Site = path, site
		return &c
	}
	return err
}

// ---- sibling operations ----

// siblings runs n operations as sibling operations (reference §4.5): all
// at once and fail fast (the first failure in time cancels the others,
// which are awaited), or under max_concurrency with FIFO permits at the
// outermost level and sequentially inside a permit holder.
func (r *run) siblings(ctx context.Context, sc *scope, n int, simple func(i int) bool, op func(ctx context.Context, sc *scope, i int) (any, error)) ([]any, error) {
	out := make([]any, n)
	if n == 0 {
		return out, nil
	}
	if sc.permit {
		for i := 0; i < n; i++ {
			v, err := op(ctx, sc, i)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	if r.sem == nil {
		// Operations that cannot block run inline; the rest concurrently.
		complex := 0
		for i := 0; i < n; i++ {
			if !simple(i) {
				complex++
			}
		}
		if complex <= 1 {
			for i := 0; i < n; i++ {
				v, err := op(ctx, sc, i)
				if err != nil {
					return nil, err
				}
				out[i] = v
			}
			return out, nil
		}
	}

	gctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(i int, err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr != nil {
			return
		}
		firstErr = err
		if !IsCancellation(err) {
			site := SiteOf(err)
			if site == "" {
				site = "branch " + formatInt(int64(i))
			}
			cancel(&siblingFailure{site: site, err: err})
		} else {
			cancel(err)
		}
	}
	runOne := func(i int) {
		isc := sc
		if r.sem != nil {
			if err := r.acquirePermit(gctx); err != nil {
				fail(i, gctx.Err())
				return
			}
			defer r.sem.Release(1)
			cp := *sc
			cp.permit = true
			isc = &cp
		}
		v, err := op(gctx, isc, i)
		if err != nil {
			fail(i, err)
			return
		}
		out[i] = v
	}
	var pending atomic.Int64 // goroutines still running, under a Scheduler
	last := -1
	for i := 0; i < n; i++ {
		if r.sem == nil && simple(i) {
			continue
		}
		if last >= 0 {
			if r.sched != nil {
				pending.Add(1)
				j := last
				r.sched.Go(func() {
					defer pending.Add(-1)
					growStack(j)
					runOne(j)
				})
			} else {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					growStack(i)
					runOne(i)
				}(last)
			}
		}
		last = i
	}
	// Simple operations run inline first, then the last complex one on
	// this goroutine.
	if r.sem == nil {
		for i := 0; i < n; i++ {
			if simple(i) {
				v, err := op(gctx, sc, i)
				if err != nil {
					fail(i, err)
					break
				}
				out[i] = v
			}
		}
	}
	if last >= 0 {
		runOne(last)
	}
	if r.sched != nil {
		r.sched.Await(func() bool { return pending.Load() == 0 })
	} else {
		wg.Wait()
	}
	if firstErr != nil {
		if IsCancellation(firstErr) && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, firstErr
	}
	return out, nil
}

// body runs a program's body items as sibling operations under the policy.
func (r *run) body(ctx context.Context, prog *Program, sc *scope, root bool, op func(ctx context.Context, sc *scope, i int) (any, error)) (any, error) {
	simple := func(i int) bool { return isSimple(prog.Body[i]) }
	var scopes []scope // one allocation for every branch's scope
	if root {
		scopes = make([]scope, len(prog.Body))
	}
	branchScope := func(sc *scope, i int) *scope {
		if !root {
			return sc
		}
		s := &scopes[i] // each branch writes only its own
		*s = *sc
		s.branch = i
		return s
	}
	if r.collect {
		if prog.Mode != "parallel" {
			return nil, &Error{Type: ValueError, Path: prog.path, Message: "Partial-failure collection requires a parallel program"}
		}
		return r.siblings(ctx, sc, len(prog.Body), simple, func(ctx context.Context, sc *scope, i int) (any, error) {
			bsc := branchScope(sc, i)
			v, err := op(ctx, bsc, i)
			if err != nil && IsCancellation(err) {
				return nil, err
			}
			var outcome map[string]any
			ev := &tracer.Event{Kind: tracer.BranchOutcome, Site: tracer.Site{Path: prog.Body[i].Path(), Iter: sc.iter}, Branch: i}
			if err != nil {
				outcome = map[string]any{"success": false, "error_type": string(TypeOf(err)), "error_message": err.Error()}
				ev.Outcome = &tracer.Outcome{ErrorType: string(TypeOf(err)), ErrorMessage: err.Error()}
			} else {
				outcome = map[string]any{"success": true, "value": v}
				ev.Outcome = &tracer.Outcome{Success: true, Value: v}
			}
			if r.tr != nil {
				if eerr := r.tr.Emit(ctx, ev); eerr != nil {
					return nil, eerr
				}
			}
			return outcome, nil
		})
	}
	vals, err := r.siblings(ctx, sc, len(prog.Body), simple, func(ctx context.Context, sc *scope, i int) (any, error) {
		return op(ctx, branchScope(sc, i), i)
	})
	if err != nil {
		return nil, err
	}
	if len(vals) == 1 {
		return vals[0], nil
	}
	return vals, nil
}

// isSimple reports whether evaluating n can never block: it contains no
// tool call and no nested program.
func isSimple(n Node) bool {
	switch x := n.(type) {
	case *Value, *Literal, *Variable, *Lambda:
		return true
	case *Conditional:
		return isSimple(x.Condition) && isSimple(x.TrueBranch) && (x.FalseBranch == nil || isSimple(x.FalseBranch))
	}
	return false
}

// ---- tool invocation with the retry policy ----

// invoke calls a tool under the retry policy (reference §5.2). Arguments
// are evaluated once by the caller and reused for every attempt.
//
// Event construction lives in the trace* helpers, out of this frame: a
// branch goroutine runs this function with a small stack, and a large
// frame would make every such goroutine grow (copy) its stack.
func (r *run) invoke(ctx context.Context, sc *scope, path string, iter []int, name string, args map[string]any, depth int) (any, error) {
	at := attempt{site: tracer.Site{Path: path, Iter: iter}, name: name, attempts: 1, branch: sc.branch, depth: depth}
	if r.idempotent != nil && r.idempotent[name] {
		at.attempts = r.policy.Retry.MaxAttempts
	}
	call := &Call{Tool: name, Arguments: args}
	for a := 1; ; a++ {
		n := r.toolCalls.Add(1)
		if max := r.limits.MaxToolCalls; max > 0 && n > max {
			return nil, r.limitErr("tool_calls", max, tracer.Site{Path: path, Iter: iter, Attempt: a}, sc.branch)
		}
		at.site.Attempt = a
		call.Site = at.site
		if r.tr != nil {
			if err := r.traceAttemptStart(ctx, &at, args); err != nil {
				return nil, err
			}
		}
		out, err := r.callOnce(ctx, call, path)
		if err == nil && ctx.Err() != nil {
			err = ctx.Err() // cancelled while the provider was answering
		}
		cancelled := ctx.Err() != nil || (err != nil && IsCancellation(err))
		final := err == nil || cancelled || a >= at.attempts || !r.isRetryable(err)
		if r.tr != nil {
			if eerr := r.traceAttemptEnd(ctx, &at, out, err, cancelled, final); eerr != nil && err == nil {
				return nil, eerr
			}
		}
		if err == nil {
			return out, nil
		}
		if cancelled {
			r.emitCancel(ctx, at.site, name, sc.branch)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		if final {
			return nil, atSite(err, path, at.site.Instance().String())
		}
		if err := r.sleepBackoff(ctx, &at, err); err != nil {
			return nil, err
		}
	}
}

// attempt is what the events of one tool call need.
type attempt struct {
	site     tracer.Site
	name     string
	attempts int // the attempts the policy allows this call
	branch   int
	depth    int
	start    time.Time
}

// callOnce makes one physical attempt, under the per-attempt timeout when
// the policy sets one.
func (r *run) callOnce(ctx context.Context, call *Call, path string) (any, error) {
	d := r.policy.Retry.AttemptTimeout
	if d <= 0 {
		return r.prov.CallTool(ctx, call)
	}
	actx, cancel := context.WithCancelCause(ctx)
	stop := r.clock.AfterFunc(d, func() { cancel(errAttemptTimeout) })
	out, err := r.prov.CallTool(actx, call)
	if err != nil && ctx.Err() == nil && context.Cause(actx) == errAttemptTimeout {
		err = &Error{Type: TimeoutError, Path: path, Message: "Tool '" + call.Tool + "' attempt " +
			formatInt(int64(call.Site.Attempt)) + " timed out after " + d.String()}
	}
	stop()
	cancel(nil)
	return out, err
}

// sleepBackoff sleeps before the next attempt; a cancelled sleep returns
// ctx's error at once.
func (r *run) sleepBackoff(ctx context.Context, at *attempt, failure error) error {
	delay := r.backoff(at.site, at.site.Attempt)
	if r.tr != nil {
		if err := r.traceBackoff(ctx, tracer.RetryBackoffStart, at, delay, failure); err != nil {
			return err
		}
	}
	if delay > 0 || r.sleepsAlways {
		if serr := r.clock.Sleep(ContextWithSite(ctx, at.site), delay); serr != nil {
			if ctx.Err() == nil {
				return serr // the clock failed (a replay drift), not a cancellation
			}
			r.emitCancel(ctx, at.site, at.name, at.branch)
			return ctx.Err()
		}
	} else if ctx.Err() != nil {
		return ctx.Err()
	}
	if r.tr != nil {
		return r.traceBackoff(ctx, tracer.RetryBackoffEnd, at, delay, nil)
	}
	return nil
}

// counted is an event allocated together with its counters.
type counted struct {
	ev tracer.Event
	c  tracer.Counters
}

// Events on the traced hot path come from slabs: one allocation per
// slabSize events instead of one each. Sinks may keep the events; a slab
// stays alive while any of its events does.
const slabSize = 64

func (r *run) newEvent() *tracer.Event {
	r.slabMu.Lock()
	if len(r.slab) == 0 {
		r.slab = make([]tracer.Event, slabSize)
	}
	e := &r.slab[0]
	r.slab = r.slab[1:]
	r.slabMu.Unlock()
	return e
}

func (r *run) countedEvent() *tracer.Event {
	r.slabMu.Lock()
	if len(r.countedSlab) == 0 {
		r.countedSlab = make([]counted, slabSize)
	}
	w := &r.countedSlab[0]
	r.countedSlab = r.countedSlab[1:]
	r.slabMu.Unlock()
	w.c = tracer.Counters{Nodes: r.nodes.Load(), ToolCalls: r.toolCalls.Load()}
	w.ev.Counters = &w.c
	return &w.ev
}

func (r *run) traceAttemptStart(ctx context.Context, at *attempt, args map[string]any) error {
	ev := r.countedEvent()
	ev.Kind, ev.Site, ev.Tool, ev.Arguments = tracer.ToolAttemptStart, at.site, at.name, args
	ev.Requested, ev.Branch, ev.Depth = at.attempts, at.branch, at.depth
	err := r.tr.Emit(ctx, ev)
	at.start = ev.Time // stamped by the tracer; read only
	return err
}

func (r *run) traceAttemptEnd(ctx context.Context, at *attempt, out any, err error, cancelled, final bool) error {
	ev := r.countedEvent()
	ev.Kind, ev.Site, ev.Tool, ev.Requested = tracer.ToolAttemptEnd, at.site, at.name, at.attempts
	now := r.clock.Now()
	ev.Branch, ev.Depth, ev.Duration = at.branch, at.depth, now.Sub(at.start)
	if r.realTime {
		ev.Time = now // one clock read for the duration and the stamp
	}
	switch {
	case cancelled:
		ev.Error = &tracer.ErrorInfo{Type: "CancelledError", Message: context.Cause(ctx).Error()}
	case err != nil:
		ev.Error = errorInfo(err)
	default:
		ev.Output, ev.HasOutput = out, true
	}
	if final {
		ev.Reason = r.stopReason(at.name, err, cancelled, at.site.Attempt, at.attempts)
	}
	return r.tr.Emit(r.emitCtx(ctx), ev)
}

func (r *run) traceBackoff(ctx context.Context, kind tracer.Kind, at *attempt, delay time.Duration, failure error) error {
	ev := &tracer.Event{Kind: kind, Site: at.site, Tool: at.name, Branch: at.branch,
		DelayMS: float64(delay) / float64(time.Millisecond)}
	if kind == tracer.RetryBackoffStart {
		ev.Requested, ev.Error = at.attempts, errorInfo(failure)
	}
	return r.tr.Emit(ctx, ev)
}

var errAttemptTimeout = errors.New("attempt timeout")

// emitCtx is the context for events that report a cancellation: the run's
// own context, so a debugger can still pause at them.
func (r *run) emitCtx(ctx context.Context) context.Context {
	if ctx.Err() != nil {
		return r.runCtx
	}
	return ctx
}

func (r *run) emitCancel(ctx context.Context, site tracer.Site, tool string, branch int) {
	if r.tr == nil {
		return
	}
	ev := &tracer.Event{Kind: tracer.Cancel, Site: site, Tool: tool, Branch: branch, Reason: tracer.ReasonUser}
	cause := context.Cause(ctx)
	var sf *siblingFailure
	switch {
	case errors.As(cause, &sf):
		ev.Reason, ev.Cause = tracer.ReasonSibling, sf.site
		ev.Message = sf.err.Error()
	case cause == errDeadline:
		ev.Reason = tracer.ReasonDeadline
	}
	_ = r.tr.Emit(r.runCtx, ev)
}

// stopReason says why a call made no further attempt, for the debugger's
// retry ladder.
func (r *run) stopReason(name string, err error, cancelled bool, a, attempts int) string {
	switch {
	case err == nil:
		return "succeeded"
	case cancelled:
		return "cancelled"
	case !r.isRetryable(err):
		return "not retryable (" + string(TypeOf(err)) + ")"
	case attempts == 1 && r.policy.Retry.MaxAttempts > 1:
		return "not idempotent: " + name + " is not in idempotent_tools"
	case attempts == 1:
		return "no retry policy"
	}
	return "attempts exhausted (" + formatInt(int64(a)) + " of " + formatInt(int64(attempts)) + ")"
}

func (r *run) isRetryable(err error) bool {
	if IsCancellation(err) {
		return false
	}
	for _, t := range r.retryable {
		if errors.Is(err, t) {
			return true
		}
		if t == TimeoutError && TypeOf(err) == TimeoutError {
			return true
		}
	}
	return false
}

// backoff is the sleep before attempt a+1: the fixed delay, optionally
// growing exponentially up to MaxDelay, with seeded jitter derived from
// the site so a replay sleeps exactly the same.
func (r *run) backoff(site tracer.Site, a int) time.Duration {
	rp := r.policy.Retry
	d := float64(rp.Delay)
	if rp.BackoffMultiplier > 1 {
		d *= math.Pow(rp.BackoffMultiplier, float64(a-1))
	}
	if rp.MaxDelay > 0 && d > float64(rp.MaxDelay) {
		d = float64(rp.MaxDelay)
	}
	if rp.Jitter > 0 && d > 0 {
		h := fnv.New64a()
		var seed [8]byte
		for i := range seed {
			seed[i] = byte(rp.JitterSeed >> (8 * i))
		}
		h.Write(seed[:])
		h.Write([]byte(site.String()))
		u := float64(h.Sum64()>>11) / float64(1<<53) // [0,1)
		d *= 1 + rp.Jitter*(2*u-1)
	}
	if d >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(d)
}
