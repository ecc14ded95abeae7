package replay

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/fixtures"
	"github.com/treelang/treelang/tracer"
)

// Options tune a ToolReplay.
type Options struct {
	// Stall is how long nothing may progress before the completion that
	// never came is reported as a mismatch. Default 2 s.
	Stall time.Duration
	// Paused reports whether the debugger holds the run; stalls are not
	// reported while it does.
	Paused func() bool
	// Tracer receives replay.match and replay.mismatch events.
	Tracer engine.Emitter
	// Live, when set, serves accepted drifting calls (re-recording the
	// entry); without it an accepted call keeps the recorded outcome.
	Live engine.ToolProvider
	// Interactive makes a mismatch wait for Accept or Reject (the
	// debugger) instead of failing at once.
	Interactive bool
}

// ToolReplay serves a fixture as an engine.ToolProvider. See the package
// documentation for the matching and ordering rules.
type ToolReplay struct {
	fx   *fixtures.Fixture
	opts Options
	defs map[string]*engine.ToolDefinition

	mu       sync.Mutex
	changed  chan struct{}
	waiters  int // goroutines waiting on changed
	progress uint64
	consumed []bool
	outOrder []int
	first    *MismatchError

	siteMode   bool
	bySite     map[siteKey]int // site and attempt -> entry index
	rank       []int           // entry -> completion rank (0: cancelled, unordered)
	timerRank  map[siteKey]int // site and attempt -> rank
	deadline   int             // rank of the deadline firing, 0 when it never fired
	done       []bool          // by rank
	next       int             // lowest rank not done
	needStarts []int           // by rank: how many recorded starts preceded it
	order      []int           // entries in recorded start order
	startPos   []int           // entry -> position in start order
	arrived    []bool          // by start position
	startsDone int             // leading start positions that arrived
	anyCancel  bool

	// The turn (see sched.go): under the Scheduler of Clock(), one engine
	// goroutine runs at a time and the replay decides who runs next.
	scheduled bool
	running   bool
	runq      []chan struct{}
	awaits    []*await
	blocked   []*waiter
	deadlineF func() // the engine's deadline, waiting for its recorded turn

	cursor int // order mode

	decision chan bool // interactive accept/reject of the pending mismatch
}

// NewToolReplay builds a replay provider for f. Tool definitions are taken
// from the fixture.
func NewToolReplay(f *fixtures.Fixture, opts Options) (*ToolReplay, error) {
	if opts.Stall <= 0 {
		opts.Stall = 2 * time.Second
	}
	p := &ToolReplay{fx: f, opts: opts, defs: map[string]*engine.ToolDefinition{}, changed: make(chan struct{}),
		consumed: make([]bool, len(f.Calls)), decision: make(chan bool, 1)}
	for _, d := range f.Tools {
		p.defs[d.Name] = d
	}
	p.siteMode = len(f.Calls) > 0
	for _, c := range f.Calls {
		if c.Site == "" || c.Attempt == 0 || (c.Completed == 0 && !c.Cancelled) {
			p.siteMode = false
			break
		}
	}
	if len(f.Calls) == 0 && len(f.Timers) > 0 {
		p.siteMode = true
	}
	if p.siteMode {
		p.index()
	}
	return p, nil
}

// siteKey identifies one attempt at one node instance without building a
// string: the path, up to two iteration indices inline and the rest (rare:
// three or more nested maps) encoded in more.
type siteKey struct {
	path    string
	n       int
	i0, i1  int
	more    string
	attempt int
}

func keyOf(s tracer.Site) siteKey {
	k := siteKey{path: s.Path, n: len(s.Iter), attempt: s.Attempt}
	switch {
	case len(s.Iter) > 2:
		k.more = fmt.Sprint(s.Iter)
	case len(s.Iter) == 2:
		k.i0, k.i1 = s.Iter[0], s.Iter[1]
	case len(s.Iter) == 1:
		k.i0 = s.Iter[0]
	}
	return k
}

// key parses a fixture's site string ("PATH" or "PATH[i,j]") without
// allocating for up to two indices; an unparsable site keys by its text.
func key(site string, attempt int) siteKey {
	k := siteKey{path: site, attempt: attempt}
	if !strings.HasSuffix(site, "]") {
		return k
	}
	open := strings.LastIndexByte(site, '[')
	if open < 0 {
		return siteKey{path: site, attempt: attempt, n: -1}
	}
	var idx [2]int
	n, cur, digits := 0, 0, 0
	for i := open + 1; i < len(site); i++ {
		c := site[i]
		switch {
		case c >= '0' && c <= '9':
			cur = cur*10 + int(c-'0')
			digits++
		case c == ',' || c == ']':
			if digits == 0 {
				return siteKey{path: site, attempt: attempt, n: -1}
			}
			if n < 2 {
				idx[n] = cur
			}
			n++
			cur, digits = 0, 0
		default:
			return siteKey{path: site, attempt: attempt, n: -1}
		}
	}
	if n > 2 {
		s, err := tracer.ParseSite(site)
		if err != nil {
			return siteKey{path: site, attempt: attempt, n: -1}
		}
		s.Attempt = attempt
		return keyOf(s)
	}
	return siteKey{path: site[:open], n: n, i0: idx[0], i1: idx[1], attempt: attempt}
}

// index assigns completion ranks: every non-cancelled attempt and every
// timer, ordered by the recorded completion sequence.
func (p *ToolReplay) index() {
	p.rank = make([]int, len(p.fx.Calls))
	p.timerRank = map[siteKey]int{}
	type item struct {
		completed int
		call      int // entry index, or -1 for a timer
		timer     int
	}
	items := make([]item, 0, len(p.fx.Calls)+len(p.fx.Timers))
	for i, c := range p.fx.Calls {
		if c.Cancelled {
			p.anyCancel = true
			continue
		}
		items = append(items, item{completed: c.Completed, call: i})
	}
	for i := range p.fx.Timers {
		items = append(items, item{completed: p.fx.Timers[i].Completed, call: -1, timer: i})
	}
	byCompleted := func(a, b item) int { return a.completed - b.completed }
	if !slices.IsSortedFunc(items, byCompleted) {
		slices.SortStableFunc(items, byCompleted)
	}
	p.done = make([]bool, len(items)+2)
	p.next = 1
	// Starts in recorded order; a completion is released only after every
	// attempt that had started before it in the recording started here.
	p.order = make([]int, len(p.fx.Calls))
	for i := range p.order {
		p.order[i] = i
	}
	byStarted := func(a, b int) int { return p.fx.Calls[a].Started - p.fx.Calls[b].Started }
	if !slices.IsSortedFunc(p.order, byStarted) {
		slices.SortStableFunc(p.order, byStarted)
	}
	p.startPos = make([]int, len(p.fx.Calls))
	for pos, i := range p.order {
		p.startPos[i] = pos
	}
	p.arrived = make([]bool, len(p.order))
	p.needStarts = make([]int, len(items)+2)
	k := 0
	for r, it := range items {
		for k < len(p.order) && p.fx.Calls[p.order[k]].Started < it.completed {
			k++
		}
		p.needStarts[r+1] = k
		rank := r + 1
		if it.call >= 0 {
			p.rank[it.call] = rank
			continue
		}
		t := p.fx.Timers[it.timer]
		if t.Site == fixtures.DeadlineTimerSite {
			p.deadline = rank
		} else {
			p.timerRank[key(t.Site, t.Attempt)] = rank
		}
	}
}

// lookup finds the entry recorded for a site. Calls usually arrive in the
// recorded start order, so the next expected entry is tried first; the
// full index is built only when a call arrives out of that order.
func (p *ToolReplay) lookup(k siteKey) (int, bool) {
	if p.startsDone < len(p.order) {
		i := p.order[p.startsDone]
		if c := &p.fx.Calls[i]; key(c.Site, c.Attempt) == k {
			return i, true
		}
	}
	if p.bySite == nil {
		p.bySite = make(map[siteKey]int, len(p.fx.Calls))
		for i := range p.fx.Calls {
			c := &p.fx.Calls[i]
			p.bySite[key(c.Site, c.Attempt)] = i
		}
	}
	i, ok := p.bySite[k]
	return i, ok
}

// ListTools returns the fixture's tool definitions.
func (p *ToolReplay) ListTools(context.Context) ([]*engine.ToolDefinition, error) {
	return append([]*engine.ToolDefinition(nil), p.fx.Tools...), nil
}

// Tool returns a definition from the fixture, or ToolNotFoundError.
func (p *ToolReplay) Tool(_ context.Context, name string) (*engine.ToolDefinition, error) {
	if d, ok := p.defs[name]; ok {
		return d, nil
	}
	return nil, engine.NotFound(name)
}

// broadcast wakes every waiter; the caller holds mu.
func (p *ToolReplay) broadcast() {
	p.progress++
	if p.waiters > 0 {
		close(p.changed)
		p.changed = make(chan struct{})
		p.waiters = 0
	}
}

// wait releases mu until something changes, ctx is done or d passes, and
// reports whether ctx was cancelled.
func (p *ToolReplay) wait(ctx context.Context, d time.Duration) (cancelled bool) {
	ch := p.changed
	p.waiters++
	p.mu.Unlock()
	t := time.NewTimer(d)
	select {
	case <-ch:
	case <-ctx.Done():
		cancelled = true
	case <-t.C:
	}
	t.Stop()
	p.mu.Lock()
	return cancelled
}

// CallTool serves the recorded outcome of the matching entry.
func (p *ToolReplay) CallTool(ctx context.Context, call *engine.Call) (any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.broadcast() // an arrival is progress
	if p.siteMode {
		return p.callBySite(ctx, call)
	}
	return p.callInOrder(ctx, call)
}

func actualOf(call *engine.Call) *Actual {
	return &Actual{Name: call.Tool, Arguments: call.Arguments, Site: call.Site.String()}
}

func matches(e *fixtures.Call, call *engine.Call) bool {
	if e.Name != call.Tool {
		return false
	}
	// Plain equality first (cheap); placeholders of a redacted fixture
	// need the full matcher.
	return engine.Equal(map[string]any(e.Arguments), map[string]any(call.Arguments)) ||
		fixtures.Match(map[string]any(e.Arguments), map[string]any(call.Arguments))
}

func (p *ToolReplay) callBySite(ctx context.Context, call *engine.Call) (any, error) {
	i, ok := p.lookup(keyOf(call.Site))
	if !ok || p.consumed[i] {
		// Not recorded at this site: a call the recording never made.
		if j := p.findUnconsumed(call); j >= 0 {
			e := &p.fx.Calls[j]
			return p.mismatch(ctx, call, &MismatchError{Drift: DriftReordered, Entry: j + 1, Expected: e, Actual: actualOf(call),
				Message: fmt.Sprintf("Tool replay entry %d did not match call '%s'", j+1, call.Tool),
				Detail:  fmt.Sprintf("the call matches entry %d, recorded at %s#%d, but ran at %s", j+1, e.Site, e.Attempt, call.Site)}, -1)
		}
		if p.anyCancel {
			// The recording was cut short by a cancellation: a call it
			// never reached may start here before the same cancellation.
			err := p.waitCancel(ctx, func() *MismatchError {
				return &MismatchError{Drift: DriftUnexpected, Actual: actualOf(call),
					Message: fmt.Sprintf("Unexpected tool call '%s' after replay end", call.Tool),
					Detail:  "the recording never made this call and nothing cancelled it in this replay"}
			})
			return nil, err
		}
		return p.mismatch(ctx, call, &MismatchError{Drift: DriftUnexpected, Actual: actualOf(call),
			Message: fmt.Sprintf("Unexpected tool call '%s' after replay end", call.Tool),
			Detail:  "no fixture entry was recorded at site " + call.Site.String()}, -1)
	}
	e := &p.fx.Calls[i]
	p.arrive(i)
	if !matches(e, call) {
		p.consumed[i] = true
		p.finish(p.rank[i]) // later completions must not wait for this one
		return p.mismatch(ctx, call, &MismatchError{Drift: DriftChanged, Entry: i + 1, Expected: e, Actual: actualOf(call),
			Message: fmt.Sprintf("Tool replay entry %d did not match call '%s'", i+1, call.Tool),
			Diff:    diffCall(e, call)}, i)
	}
	p.consumed[i] = true
	if e.Cancelled {
		return nil, p.waitCancel(ctx, func() *MismatchError {
			return &MismatchError{Drift: DriftMissing, Entry: i + 1, Expected: e, Actual: actualOf(call),
				Message: fmt.Sprintf("Tool replay entry %d was cancelled in the recording but not in this replay", i+1),
				Detail:  "the failure or deadline that cancelled it never happened"}
		})
	}
	r := p.rank[i]
	if err := p.waitTurn(ctx, r); err != nil {
		return nil, err
	}
	p.emitMatch(ctx, i, call)
	return p.serve(e, r)
}

// serve marks rank r done and returns the entry's outcome.
func (p *ToolReplay) serve(e *fixtures.Call, r int) (any, error) {
	p.finish(r)
	if e.Error != nil {
		return nil, outcomeError(e.Error)
	}
	return engine.CloneValue(e.Output), nil
}

func (p *ToolReplay) finish(r int) {
	if r > 0 && r < len(p.done) {
		p.done[r] = true
		for p.next < len(p.done) && p.done[p.next] {
			p.next++
		}
	}
	p.broadcast()
}

func outcomeError(ce *fixtures.CallError) error {
	if ce.Type == "CancelledError" {
		return context.Canceled
	}
	return &engine.Error{Type: engine.ErrorType(ce.Type), Message: ce.Message}
}

func diffCall(e *fixtures.Call, call *engine.Call) []fixtures.FieldDiff {
	var d []fixtures.FieldDiff
	if e.Name != call.Tool {
		d = append(d, fixtures.FieldDiff{Path: "name", Expected: e.Name, Actual: call.Tool, Kind: "changed"})
	}
	for _, f := range fixtures.Diff(map[string]any(e.Arguments), map[string]any(call.Arguments)) {
		f.Path = "arguments" + prefixPath(f.Path)
		d = append(d, f)
	}
	return d
}

func prefixPath(p string) string {
	if p == "" || p[0] == '[' || p[0] == '.' {
		return p
	}
	if p[0] == '/' {
		return p
	}
	return "." + p
}

func (p *ToolReplay) findUnconsumed(call *engine.Call) int {
	for j := range p.fx.Calls {
		if !p.consumed[j] && matches(&p.fx.Calls[j], call) {
			return j
		}
	}
	return -1
}

// arrive records that entry i's attempt started in this replay.
func (p *ToolReplay) arrive(i int) {
	p.arrived[p.startPos[i]] = true
	for p.startsDone < len(p.arrived) && p.arrived[p.startsDone] {
		p.startsDone++
	}
}

// ready reports whether rank r's turn has come: every earlier completion
// happened and every attempt that started before it started here.
func (p *ToolReplay) ready(r int) bool {
	return p.next >= r && p.startsDone >= p.needStarts[r]
}

// waitTurn blocks until rank r may be released; the caller holds mu.
func (p *ToolReplay) waitTurn(ctx context.Context, r int) error {
	if p.scheduled {
		if p.nextAnyway(ctx, r) {
			return nil
		}
		w := p.block(&waiter{kind: waitRank, rank: r, ctx: ctx})
		switch {
		case w.cancelled:
			p.finish(r) // the engine cancelled a call the recording completed
			return ctx.Err()
		case w.stalled:
			return p.stall(ctx, r)
		}
		return nil
	}
	for {
		if p.ready(r) {
			return nil
		}
		now := time.Now()
		progress := p.progress
		if cancelled := p.wait(ctx, p.opts.Stall); cancelled {
			// The engine cancelled a call the recording completed (it
			// lost a race there); let the others go on.
			p.finish(r)
			return ctx.Err()
		}
		if !p.ready(r) && p.progress == progress && time.Since(now) >= p.opts.Stall && !p.paused() {
			return p.stall(ctx, r)
		}
	}
}

// waitCancel blocks until ctx is cancelled, reporting a stall as mismatch.
func (p *ToolReplay) waitCancel(ctx context.Context, onStall func() *MismatchError) error {
	if p.scheduled {
		if w := p.block(&waiter{kind: waitCancelled, ctx: ctx}); w.cancelled {
			return ctx.Err()
		}
		m := onStall()
		p.record(m)
		p.emitMismatch(ctx, m)
		return m
	}
	for {
		progress := p.progress
		now := time.Now()
		if cancelled := p.wait(ctx, p.opts.Stall); cancelled {
			p.broadcast()
			return ctx.Err()
		}
		if p.progress == progress && time.Since(now) >= p.opts.Stall && !p.paused() {
			m := onStall()
			p.record(m)
			return m
		}
	}
}

// branchKey names the body branch a site belongs to: "/body/K" for
// schema 1.0 paths, the first iteration index for schema 2.0 sites.
func branchKey(site string) string {
	s, err := tracer.ParseSite(site)
	if err != nil {
		return site
	}
	if strings.HasPrefix(s.Path, "/body/") {
		rest := s.Path[len("/body/"):]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			rest = rest[:i]
		}
		return "/body/" + rest
	}
	if len(s.Iter) > 0 {
		return "branch " + strconv.Itoa(s.Iter[0])
	}
	return s.Path
}

// abandon gives up the recorded attempts of the branch a drift happened
// in: the drift fails that branch, so they will never come, and nothing
// else may wait for them. They stay unconsumed in the coverage report.
func (p *ToolReplay) abandon(site string) {
	if !p.siteMode {
		return
	}
	b := branchKey(site)
	for i := range p.fx.Calls {
		if p.consumed[i] || branchKey(p.fx.Calls[i].Site) != b {
			continue
		}
		p.arrive(i)
		p.finish(p.rank[i])
	}
	for i := range p.fx.Timers {
		t := &p.fx.Timers[i]
		if branchKey(t.Site) == b {
			p.finish(p.timerRank[key(t.Site, t.Attempt)])
		}
	}
}

// stall reports the start or completion that was expected before rank r
// and never came.
func (p *ToolReplay) stall(ctx context.Context, r int) error {
	m := &MismatchError{Drift: DriftMissing, Message: "Tool replay stalled: an expected call never happened"}
	if p.next >= r {
		// Every earlier completion happened; an attempt that started
		// before this point in the recording never started here.
		for i := range p.fx.Calls {
			if p.startPos[i] == p.startsDone {
				e := &p.fx.Calls[i]
				m.Entry, m.Expected = i+1, e
				m.Message = fmt.Sprintf("Tool replay entry %d (%s at %s#%d) was never called", i+1, e.Name, e.Site, e.Attempt)
			}
		}
		if m.Expected != nil {
			p.abandon(m.Expected.Site)
		}
		p.record(m)
		p.emitMismatch(ctx, m)
		return m
	}
	for i := range p.fx.Calls {
		if p.rank[i] == p.next {
			e := &p.fx.Calls[i]
			m.Entry, m.Expected = i+1, e
			m.Message = fmt.Sprintf("Tool replay entry %d (%s at %s#%d) was never called", i+1, e.Name, e.Site, e.Attempt)
		}
	}
	if m.Expected != nil {
		p.abandon(m.Expected.Site)
	}
	for i := range p.fx.Timers {
		t := &p.fx.Timers[i]
		if p.timerRank[key(t.Site, t.Attempt)] == p.next {
			m.Message = fmt.Sprintf("Tool replay expected the backoff timer at %s#%d to fire, but no retry happened", t.Site, t.Attempt)
		}
	}
	if p.deadline == p.next {
		m.Message = "Tool replay expected the run deadline to fire before this point"
	}
	p.record(m)
	p.emitMismatch(ctx, m)
	return m
}

func (p *ToolReplay) paused() bool { return p.opts.Paused != nil && p.opts.Paused() }

func (p *ToolReplay) record(m *MismatchError) {
	if p.first == nil {
		p.first = m
	}
}

// mismatch reports a drift. In interactive mode it waits for the debugger
// to accept the actual call (which then runs live or keeps the recorded
// outcome) or reject it. entry is the fixture entry to re-record, or -1.
func (p *ToolReplay) mismatch(ctx context.Context, call *engine.Call, m *MismatchError, entry int) (any, error) {
	p.record(m)
	p.broadcast()
	if !p.opts.Interactive {
		p.abandon(call.Site.String())
		p.emitMismatch(ctx, m)
		return nil, m
	}
	// Drain a stale decision, then let the debugger pause at the event.
	select {
	case <-p.decision:
	default:
	}
	p.emitMismatch(ctx, m)
	var accept bool
	p.mu.Unlock()
	select {
	case accept = <-p.decision:
	case <-ctx.Done():
	}
	p.mu.Lock()
	if !accept {
		p.abandon(call.Site.String())
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, m
	}
	if p.first == m {
		p.first = nil
	}
	var out any
	var err error
	if p.opts.Live != nil {
		p.mu.Unlock()
		out, err = p.opts.Live.CallTool(ctx, call)
		p.mu.Lock()
	} else if entry >= 0 && (p.fx.Calls[entry].HasOutput || p.fx.Calls[entry].Error != nil) {
		e := p.fx.Calls[entry]
		if e.Error != nil {
			err = outcomeError(e.Error)
		} else {
			out = engine.CloneValue(e.Output)
		}
	} else {
		return nil, m
	}
	nc := fixtures.Call{Name: call.Tool, Arguments: engine.CloneValue(call.Arguments).(map[string]any),
		Site: call.Site.Instance().String(), Attempt: call.Site.Attempt}
	if err != nil {
		nc.Error = &fixtures.CallError{Type: string(engine.TypeOf(err)), Message: err.Error()}
	} else {
		nc.Output, nc.HasOutput = engine.CloneValue(out), true
	}
	if entry >= 0 {
		nc.Started, nc.Completed = p.fx.Calls[entry].Started, p.fx.Calls[entry].Completed
		p.fx.Calls[entry] = nc
		if p.siteMode {
			p.finish(p.rank[entry])
		}
	} else {
		p.fx.Calls = append(p.fx.Calls, nc)
		p.consumed = append(p.consumed, true)
		if p.siteMode {
			p.rank = append(p.rank, 0)
			if p.bySite != nil {
				p.bySite[key(nc.Site, nc.Attempt)] = len(p.fx.Calls) - 1
			}
			p.order = append(p.order, len(p.fx.Calls)-1)
			p.startPos = append(p.startPos, len(p.arrived))
			p.arrived = append(p.arrived, true)
		}
	}
	return out, err
}

// Accept resolves the pending interactive mismatch by accepting the actual
// call as the new fixture entry.
func (p *ToolReplay) Accept() { p.decide(true) }

// Reject resolves the pending interactive mismatch by failing the run.
func (p *ToolReplay) Reject() { p.decide(false) }

func (p *ToolReplay) decide(v bool) {
	select {
	case p.decision <- v:
	default:
	}
}

func (p *ToolReplay) emitMatch(ctx context.Context, i int, call *engine.Call) {
	if p.opts.Tracer == nil {
		return
	}
	ev := &tracer.Event{Kind: tracer.ReplayMatch, Site: call.Site, Tool: call.Tool, Branch: -1,
		Data: map[string]any{"entry": i + 1}}
	p.mu.Unlock()
	_ = p.opts.Tracer.Emit(ctx, ev)
	p.mu.Lock()
}

func (p *ToolReplay) emitMismatch(ctx context.Context, m *MismatchError) {
	if p.opts.Tracer == nil {
		return
	}
	ev := &tracer.Event{Kind: tracer.ReplayMismatch, Branch: -1, Message: m.Message, Data: m.Report(),
		Error: &tracer.ErrorInfo{Type: string(engine.ReplayMismatchError), Message: m.Message}}
	if m.Actual != nil {
		ev.Tool = m.Actual.Name
		if s, err := tracer.ParseSite(m.Actual.Site); err == nil {
			ev.Site = s
		}
	}
	p.mu.Unlock()
	_ = p.opts.Tracer.Emit(context.WithoutCancel(ctx), ev)
	p.mu.Lock()
}

// callInOrder implements the Python semantics for fixtures without sites.
func (p *ToolReplay) callInOrder(ctx context.Context, call *engine.Call) (any, error) {
	p.skipConsumed()
	if p.cursor >= len(p.fx.Calls) {
		return p.mismatch(ctx, call, &MismatchError{Drift: DriftUnexpected, Actual: actualOf(call),
			Message: fmt.Sprintf("Unexpected tool call '%s' after replay end", call.Tool)}, -1)
	}
	if e := &p.fx.Calls[p.cursor]; matches(e, call) {
		return p.consumeInOrder(p.cursor)
	}
	j := -1
	for k := p.cursor + 1; k < len(p.fx.Calls); k++ {
		if !p.consumed[k] && matches(&p.fx.Calls[k], call) {
			j = k
			break
		}
	}
	if j < 0 {
		i := p.cursor
		e := &p.fx.Calls[i]
		p.consumed[i] = true // the cursor advances even on a mismatch (upstream)
		p.skipConsumed()
		return p.mismatch(ctx, call, &MismatchError{Drift: DriftChanged, Entry: i + 1, Expected: e, Actual: actualOf(call),
			Message: fmt.Sprintf("Tool replay entry %d did not match call '%s'", i+1, call.Tool), Diff: diffCall(e, call)}, i)
	}
	// A later entry matches: wait for the calls before it (concurrent
	// siblings) to consume theirs.
	p.consumed[j] = true
	start := p.cursor
	if p.scheduled && p.cursor < j {
		w := p.block(&waiter{kind: waitOrder, entry: j, ctx: ctx})
		if w.cancelled {
			return nil, ctx.Err()
		}
		if w.stalled {
			p.skipConsumed()
			e := &p.fx.Calls[p.cursor]
			return p.mismatch(ctx, call, &MismatchError{Drift: DriftReordered, Entry: p.cursor + 1, Expected: e, Actual: actualOf(call),
				Message: fmt.Sprintf("Tool replay entry %d did not match call '%s'", p.cursor+1, call.Tool),
				Detail:  fmt.Sprintf("the call matches the later entry %d; entry %d (%s) never came", j+1, p.cursor+1, e.Name)}, -1)
		}
	}
	for p.cursor < j {
		progress := p.progress
		t0 := time.Now()
		if cancelled := p.wait(ctx, p.opts.Stall); cancelled {
			return nil, ctx.Err()
		}
		p.skipConsumed()
		if p.cursor < j && p.progress == progress && time.Since(t0) >= p.opts.Stall && !p.paused() {
			e := &p.fx.Calls[p.cursor]
			return p.mismatch(ctx, call, &MismatchError{Drift: DriftReordered, Entry: p.cursor + 1, Expected: e, Actual: actualOf(call),
				Message: fmt.Sprintf("Tool replay entry %d did not match call '%s'", p.cursor+1, call.Tool),
				Detail:  fmt.Sprintf("the call matches the later entry %d; entry %d (%s) never came", j+1, p.cursor+1, e.Name)}, -1)
		}
	}
	if j != start {
		p.outOrder = append(p.outOrder, j+1)
	}
	return p.serveOrder(ctx, j, call)
}

func (p *ToolReplay) consumeInOrder(i int) (any, error) {
	p.consumed[i] = true
	p.skipConsumed()
	e := &p.fx.Calls[i]
	p.broadcast()
	if e.Error != nil {
		return nil, outcomeError(e.Error)
	}
	return engine.CloneValue(e.Output), nil
}

func (p *ToolReplay) serveOrder(ctx context.Context, j int, call *engine.Call) (any, error) {
	p.skipConsumed()
	p.emitMatch(ctx, j, call)
	return p.consumeInOrder(j)
}

func (p *ToolReplay) skipConsumed() {
	for p.cursor < len(p.fx.Calls) && p.consumed[p.cursor] {
		p.cursor++
	}
}

// Coverage says how much of the fixture a replay used.
type Coverage struct {
	Entries    int   `json:"entries"`
	Consumed   int   `json:"consumed"`
	Unused     []int `json:"unused"`       // 1-based entries never consumed (cancelled ones included)
	OutOfOrder []int `json:"out_of_order"` // 1-based entries consumed before an earlier one
}

// Coverage reports the entries consumed, unused and consumed out of order.
func (p *ToolReplay) Coverage() Coverage {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := Coverage{Entries: len(p.fx.Calls), Unused: []int{}, OutOfOrder: append([]int{}, p.outOrder...)}
	for i, ok := range p.consumed {
		if ok {
			c.Consumed++
		} else {
			c.Unused = append(c.Unused, i+1)
		}
	}
	return c
}

// String renders the coverage report in one line.
func (c Coverage) String() string {
	s := fmt.Sprintf("replay coverage: %d of %d entries consumed", c.Consumed, c.Entries)
	if len(c.Unused) > 0 {
		s += fmt.Sprintf(", unused %v", c.Unused)
	}
	if len(c.OutOfOrder) > 0 {
		s += fmt.Sprintf(", out of order %v", c.OutOfOrder)
	}
	return s
}

// AssertConsumed returns a ReplayMismatchError when entries remain
// unconsumed. Entries the recording saw cancelled are not required.
func (p *ToolReplay) AssertConsumed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var left []int
	for i, ok := range p.consumed {
		if !ok && !p.fx.Calls[i].Cancelled {
			left = append(left, i+1)
		}
	}
	if len(left) == 0 {
		return nil
	}
	m := &MismatchError{Drift: DriftUnconsumed, Entry: left[0], Expected: &p.fx.Calls[left[0]-1],
		Message: fmt.Sprintf("Tool replay has %d unconsumed entries", len(left)),
		Detail:  fmt.Sprintf("unconsumed entries: %v", left)}
	return m
}

// FirstMismatch returns the first drift seen, even if the engine swallowed
// it (a collected branch outcome).
func (p *ToolReplay) FirstMismatch() *MismatchError {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.first
}

// Fixture returns the fixture, with accepted entries re-recorded.
func (p *ToolReplay) Fixture() *fixtures.Fixture {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fx
}
