package tracer

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// BreakKind says what a breakpoint stops at.
type BreakKind uint8

// The breakpoint kinds.
const (
	BreakTool          BreakKind = iota // a tool's attempt starts (tool.attempt.start)
	BreakNode                           // a node is entered (node.enter) at a path
	BreakFailure                        // any event with an error, or a failed branch outcome
	BreakRetry                          // a retry's backoff starts (retry.backoff.start)
	BreakCancel                         // a step is cancelled (cancel)
	BreakFailedOutcome                  // a branch outcome that failed (branch.outcome)
	BreakMismatch                       // a replay mismatch (replay.mismatch)
	BreakLimit                          // an execution limit is hit (limit.exceeded)
)

var breakKindNames = [...]string{
	BreakTool:          "tool",
	BreakNode:          "node",
	BreakFailure:       "failure",
	BreakRetry:         "retry",
	BreakCancel:        "cancel",
	BreakFailedOutcome: "failed-outcome",
	BreakMismatch:      "mismatch",
	BreakLimit:         "limit",
}

// String returns the kind's name, such as "tool" or "failed-outcome".
func (k BreakKind) String() string {
	if int(k) < len(breakKindNames) {
		return breakKindNames[k]
	}
	return "break(" + strconv.Itoa(int(k)) + ")"
}

// ParseBreakKind returns the kind named s (as String gives it), or false.
func ParseBreakKind(s string) (BreakKind, bool) {
	for i, n := range breakKindNames {
		if n == s {
			return BreakKind(i), true
		}
	}
	return 0, false
}

// Breakpoint pauses a run at the events it matches.
//
// Tool, when set, narrows any kind to events of that tool (for BreakTool it
// names the tool). Path is the node path of a BreakNode breakpoint: it
// matches node.enter at exactly that path, or, when Path ends in "/", at
// any path below it (a prefix match: "/body/0/" stops at every node inside
// /body/0). Attempt, when positive, narrows BreakTool (and any other kind)
// to that attempt number: {Kind: BreakTool, Tool: "fetch", Attempt: 2}
// stops when fetch is tried the second time.
type Breakpoint struct {
	ID       int
	Kind     BreakKind
	Tool     string
	Path     string
	Attempt  int
	Disabled bool
}

// String describes the breakpoint, for example "#2 tool fetch attempt 2".
func (bp Breakpoint) String() string {
	var b strings.Builder
	if bp.ID != 0 {
		b.WriteString("#" + strconv.Itoa(bp.ID) + " ")
	}
	b.WriteString(bp.Kind.String())
	if bp.Path != "" {
		b.WriteString(" " + bp.Path)
	}
	if bp.Tool != "" {
		b.WriteString(" " + bp.Tool)
	}
	if bp.Attempt > 0 {
		b.WriteString(" attempt " + strconv.Itoa(bp.Attempt))
	}
	if bp.Disabled {
		b.WriteString(" (disabled)")
	}
	return b.String()
}

// Matches reports whether the breakpoint stops at e. A disabled breakpoint
// matches nothing.
func (bp Breakpoint) Matches(e *Event) bool {
	if bp.Disabled {
		return false
	}
	if bp.Tool != "" && e.Tool != bp.Tool {
		return false
	}
	if bp.Attempt > 0 && e.Site.Attempt != bp.Attempt {
		return false
	}
	failedOutcome := e.Kind == BranchOutcome && e.Outcome != nil && !e.Outcome.Success
	switch bp.Kind {
	case BreakTool:
		return e.Kind == ToolAttemptStart
	case BreakNode:
		// Nodes stop at their node.enter; leaves (values, literals,
		// variables), which have none, at their node.exit.
		if e.Kind != NodeEnter && (e.Kind != NodeExit || !IsLeafNode(e.Node)) {
			return false
		}
		if strings.HasSuffix(bp.Path, "/") {
			return strings.HasPrefix(e.Site.Path, bp.Path) || e.Site.Path+"/" == bp.Path
		}
		return e.Site.Path == bp.Path
	case BreakFailure:
		return e.Error != nil || failedOutcome
	case BreakRetry:
		return e.Kind == RetryBackoffStart
	case BreakCancel:
		return e.Kind == Cancel
	case BreakFailedOutcome:
		return failedOutcome
	case BreakMismatch:
		return e.Kind == ReplayMismatch
	case BreakLimit:
		return e.Kind == LimitExceeded
	}
	return false
}

// Gate pauses a live run at chosen events until the user steps or
// continues. The Tracer consults it after writing each event to the sinks.
//
// The run pauses at an event when stepping is on, when Pause or Step asked
// for the next event, or when an enabled breakpoint matches. While the run
// is paused, every other event that reaches the gate (parallel branches)
// waits behind the paused one, so the whole run holds still. The waiting
// events are queued in Seq order: Step releases exactly one, the paused
// event, and the next in line becomes the paused event; Continue releases
// the paused event and every waiting event that no breakpoint matches.
//
// Wait never blocks past the cancellation of its context. A gate with
// stepping off, no pause requested, no enabled breakpoint and no event
// waiting costs one atomic load per event.
type Gate struct {
	armed atomic.Bool // anything that could pause: the fast-path check

	mu        sync.Mutex
	stepping  bool
	pauseNext bool
	bps       []Breakpoint
	onPause   func(*Event, *Breakpoint)
	waiting   []*waiter // in Seq order
	current   *waiter   // the event the run is paused at
	detached  bool
}

// waiter is one event held at the gate.
type waiter struct {
	e         *Event
	hit       *Breakpoint // the breakpoint that matched, or nil
	wake      chan struct{}
	released  bool
	announced bool // OnPause has been called for it
}

// NewGate returns a gate that pauses nowhere until told to.
func NewGate() *Gate { return &Gate{} }

// updateArmed recomputes the fast-path flag; g.mu is held.
func (g *Gate) updateArmed() {
	if g.detached {
		g.armed.Store(false)
		return
	}
	armed := g.stepping || g.pauseNext || len(g.waiting) > 0
	for i := 0; !armed && i < len(g.bps); i++ {
		armed = !g.bps[i].Disabled
	}
	g.armed.Store(armed)
}

// SetStepping turns step mode on (pause at every event) or off (pause only
// at breakpoints). It does not release a paused event.
func (g *Gate) SetStepping(on bool) {
	g.mu.Lock()
	g.stepping = on
	g.updateArmed()
	g.mu.Unlock()
}

// Stepping reports whether step mode is on.
func (g *Gate) Stepping() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stepping
}

// SetBreakpoints replaces the breakpoints with a copy of bps.
func (g *Gate) SetBreakpoints(bps []Breakpoint) {
	g.mu.Lock()
	g.bps = slices.Clone(bps)
	g.updateArmed()
	g.mu.Unlock()
}

// Breakpoints returns a copy of the breakpoints.
func (g *Gate) Breakpoints() []Breakpoint {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.bps)
}

// OnPause sets the function called when the run pauses at an event, with
// the breakpoint that matched it (nil when the run paused because of
// stepping or Pause). It is called from the goroutine that emitted the
// event, with no lock held, before that goroutine blocks; it must not block
// for long, and it may call the gate's methods. An event that is released
// before its goroutine gets to run (Step or Continue called in the instant
// after it became the paused event, without waiting for OnPause) is not
// announced.
func (g *Gate) OnPause(f func(e *Event, hit *Breakpoint)) {
	g.mu.Lock()
	g.onPause = f
	g.mu.Unlock()
}

// Paused returns the event the run is paused at, or nil while it runs.
func (g *Gate) Paused() *Event {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.current == nil {
		return nil
	}
	return g.current.e
}

// Pause makes the run pause at the next event that reaches the gate.
func (g *Gate) Pause() {
	g.mu.Lock()
	g.pauseNext = true
	g.updateArmed()
	g.mu.Unlock()
}

// Step releases the paused event; the run pauses again at the next one (the
// next waiting event, in Seq order, or else the next to arrive). Called
// while the run is not paused, it acts as Pause.
func (g *Gate) Step() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.current != nil {
		g.release(g.current)
		g.current = nil
	}
	if len(g.waiting) == 0 {
		g.pauseNext = true
	}
	g.promote()
	g.updateArmed()
}

// Continue turns stepping off, releases the paused event and every waiting
// event that no breakpoint matches, and lets the run go on until the next
// breakpoint.
func (g *Gate) Continue() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stepping = false
	g.pauseNext = false
	if g.current != nil {
		g.release(g.current)
		g.current = nil
	}
	for _, w := range slices.Clone(g.waiting) {
		if w.hit = g.match(w.e); w.hit == nil {
			g.release(w)
		}
	}
	g.promote()
	g.updateArmed()
}

// Detach releases every waiting event and makes the gate pause nowhere from
// then on, whatever its settings: for a debugger that goes away (the user
// quits) while the run may still emit events, such as run.end on a context
// that is not cancelled.
func (g *Gate) Detach() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.detached = true
	g.current = nil
	for len(g.waiting) > 0 {
		g.release(g.waiting[0])
	}
	g.updateArmed()
}

// match returns a copy of the first enabled breakpoint that matches e;
// g.mu is held.
func (g *Gate) match(e *Event) *Breakpoint {
	for i := range g.bps {
		if g.bps[i].Matches(e) {
			bp := g.bps[i]
			return &bp
		}
	}
	return nil
}

// release lets w go; g.mu is held.
func (g *Gate) release(w *waiter) {
	w.released = true
	if i := slices.Index(g.waiting, w); i >= 0 {
		g.waiting = slices.Delete(g.waiting, i, i+1)
	}
	signal(w.wake)
}

// promote makes the first waiting event the paused one if none is; g.mu
// is held. Its goroutine wakes to call OnPause.
func (g *Gate) promote() {
	if g.current != nil || len(g.waiting) == 0 {
		return
	}
	g.current = g.waiting[0]
	signal(g.current.wake)
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Wait blocks while the run should pause at e: until Step or Continue
// releases it, or until ctx is cancelled, when it returns
// context.Cause(ctx). It returns nil at once when e does not pause.
// Tracer.Emit calls it; other callers must call it at most once per event.
func (g *Gate) Wait(ctx context.Context, e *Event) error {
	w := g.arrive(e)
	if w == nil {
		return nil
	}
	return g.await(ctx, w)
}

// arrive decides whether e pauses and, if so, queues it.
func (g *Gate) arrive(e *Event) *waiter {
	if !g.armed.Load() {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.detached {
		return nil
	}
	hit := g.match(e)
	if !g.stepping && !g.pauseNext && hit == nil && len(g.waiting) == 0 {
		return nil
	}
	g.pauseNext = false
	w := &waiter{e: e, hit: hit, wake: make(chan struct{}, 1)}
	i := len(g.waiting)
	for i > 0 && g.waiting[i-1].e.Seq > e.Seq {
		i--
	}
	g.waiting = slices.Insert(g.waiting, i, w)
	g.promote()
	g.updateArmed()
	return w
}

// await blocks until w is released or ctx is cancelled.
func (g *Gate) await(ctx context.Context, w *waiter) error {
	for {
		g.mu.Lock()
		if w.released {
			g.mu.Unlock()
			return nil
		}
		if ctx.Err() != nil {
			g.abandon(w)
			g.mu.Unlock()
			return context.Cause(ctx)
		}
		if g.current == w && !w.announced {
			w.announced = true
			f := g.onPause
			g.mu.Unlock()
			if f != nil {
				f(w.e, w.hit)
			}
			continue
		}
		g.mu.Unlock()
		select {
		case <-w.wake:
		case <-ctx.Done():
		}
	}
}

// abandon removes a waiter whose context was cancelled; g.mu is held.
func (g *Gate) abandon(w *waiter) {
	w.released = true
	if i := slices.Index(g.waiting, w); i >= 0 {
		g.waiting = slices.Delete(g.waiting, i, i+1)
	}
	if g.current == w {
		g.current = nil
		g.promote()
	}
	g.updateArmed()
}

// IsLeafNode reports whether a node type is a leaf that the engine reports
// with a node.exit event only (it takes no time to evaluate).
func IsLeafNode(node string) bool {
	switch node {
	case "value", "literal", "variable":
		return true
	}
	return false
}
