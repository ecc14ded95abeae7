package tui

import (
	"context"
	"errors"
	"fmt"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/treelang/treelang/tracer"
)

// runState is what the status bar reports about a run.
type runState uint8

const (
	stateIdle runState = iota
	stateRunning
	statePaused
	stateDone
	stateFailed
	stateCancelled
)

// String names the state as the status bar shows it.
func (s runState) String() string {
	return [...]string{"idle", "running", "paused", "done", "failed", "cancelled"}[s]
}

// runToID marks the temporary breakpoint behind "run to the next failure,
// retry or cancellation"; user breakpoints have positive IDs.
const runToID = -1

// Messages from a run's forwarding command, addressed by session and run
// generation so that a restarted run's stragglers are ignored.
type (
	eventsMsg struct {
		sid, gen int
		events   []*tracer.Event
	}
	pausedMsg struct{ sid, gen int }
	endedMsg  struct{ sid, gen int }
	// stoppedMsg says a cancelled run has returned; restart or quit go on.
	stoppedMsg struct {
		sid, gen int
		then     stopThen
	}
	// acceptedMsg carries the result of AcceptMismatch.
	acceptedMsg struct {
		sid, gen int
		seq      uint64
		err      error
	}
)

type stopThen uint8

const (
	thenRestart stopThen = iota
	thenQuit
)

// maxBatch bounds how many events one message carries, so the screen keeps
// refreshing while a fast run floods the channel.
const maxBatch = 4096

// liveRun is one execution of RunSpec.Run: its goroutine, gate and sink.
type liveRun struct {
	ctx      context.Context
	cancel   context.CancelFunc
	gate     *tracer.Gate
	sink     *tracer.ChannelSink
	pauses   chan struct{} // capacity 1: the gate paused
	finished chan struct{} // closed after Run returned and the sink closed

	mu       sync.Mutex
	pausedAt *tracer.Event
	hit      *tracer.Breakpoint

	// Written by the run goroutine before finished is closed.
	result any
	err    error
}

// listen returns the command that forwards the run's next events (or its
// next pause, or its end) to the model. Only one is outstanding per run:
// the model issues the next after handling the previous one's message.
func (lr *liveRun) listen(sid, gen int) tea.Cmd {
	return func() tea.Msg {
		c := lr.sink.C()
		select {
		case e, ok := <-c:
			if !ok {
				<-lr.finished
				return endedMsg{sid, gen}
			}
			batch := []*tracer.Event{e}
			for len(batch) < maxBatch {
				select {
				case e, ok := <-c:
					if !ok {
						return eventsMsg{sid, gen, batch}
					}
					batch = append(batch, e)
				default:
					return eventsMsg{sid, gen, batch}
				}
			}
			return eventsMsg{sid, gen, batch}
		case <-lr.pauses:
			return pausedMsg{sid, gen}
		}
	}
}

// wait returns a command that reports when the run goroutine has returned.
func (lr *liveRun) wait(sid, gen int, then stopThen) tea.Cmd {
	return func() tea.Msg {
		<-lr.finished
		return stoppedMsg{sid, gen, then}
	}
}

// session is one RunSpec: its history, breakpoints and, while it runs, the
// live run.
type session struct {
	id    int
	spec  RunSpec
	hist  *history
	gen   int
	live  *liveRun
	state runState

	result any
	err    error

	bps    []tracer.Breakpoint
	nextBP int
	runTo  *tracer.Breakpoint // temporary target of run-to-next
	hit    *tracer.Breakpoint // the breakpoint the cursor stopped at

	pendingPause uint64 // seq the gate paused at, not yet received
	awaitStep    bool   // a Gate.Step was sent; the next pause answers it
	handledPause uint64 // seq of the last pause handled
	queuedSteps  int    // steps pressed while awaiting one, sent on the next pause
	accepted     map[uint64]bool
	note         string // one-line feedback for the status bar
	started      bool
}

func newSession(id int, spec RunSpec) *session {
	s := &session{id: id, spec: spec, nextBP: 1, accepted: map[uint64]bool{}}
	s.hist = newHistory(spec.Outline, len(spec.Events))
	if spec.Mode == "replay" {
		s.addBreakpoint(tracer.Breakpoint{Kind: tracer.BreakMismatch})
	}
	if spec.Run == nil {
		for _, e := range spec.Events {
			s.hist.append(e, false)
		}
		s.started = true
		s.state = stateDone
		if last := s.hist.at(s.hist.len() - 1); last != nil && last.Kind == tracer.RunEnd && last.Error != nil {
			s.state = stateFailed
		}
	}
	return s
}

// canRun reports whether the session has a live run to start or restart.
func (s *session) canRun() bool { return s.spec.Run != nil }

// isLive reports whether a run goroutine is active.
func (s *session) isLive() bool { return s.live != nil }

// ended reports whether the run is over (or there is no run).
func (s *session) ended() bool {
	return s.state == stateDone || s.state == stateFailed || s.state == stateCancelled
}

// start begins a fresh run. The caller has made sure no run is live.
func (s *session) start(parent context.Context, startPaused bool) tea.Cmd {
	if !s.canRun() {
		return nil
	}
	ctx, cancel := context.WithCancel(parent)
	g := tracer.NewGate()
	if startPaused {
		g.SetStepping(true)
	}
	sink := tracer.NewChannelSink(ctx)
	tr := tracer.New(sink)
	tr.SetGate(g)
	lr := &liveRun{
		ctx: ctx, cancel: cancel, gate: g, sink: sink,
		pauses:   make(chan struct{}, 1),
		finished: make(chan struct{}),
	}
	g.OnPause(func(e *tracer.Event, hit *tracer.Breakpoint) {
		lr.mu.Lock()
		lr.pausedAt, lr.hit = e, hit
		lr.mu.Unlock()
		select {
		case lr.pauses <- struct{}{}:
		default:
		}
	})
	s.gen++
	s.live = lr
	s.started = true
	s.hist = newHistory(s.spec.Outline, 0)
	s.state = stateRunning
	s.result, s.err = nil, nil
	s.runTo, s.hit, s.pendingPause = nil, nil, 0
	s.awaitStep, s.queuedSteps, s.handledPause = false, 0, 0
	s.accepted = map[uint64]bool{}
	s.syncGate()
	run := s.spec.Run
	go func() {
		defer close(lr.finished)
		defer tr.Close()
		defer func() {
			if r := recover(); r != nil {
				lr.err = fmt.Errorf("run panicked: %v", r)
			}
		}()
		lr.result, lr.err = run(ctx, tr)
	}()
	if startPaused {
		s.state = statePaused
	}
	return lr.listen(s.id, s.gen)
}

// stop cancels the live run and returns the command that reports when its
// goroutine has returned.
func (s *session) stop(then stopThen) tea.Cmd {
	if s.live == nil {
		return nil
	}
	s.live.cancel()
	return s.live.wait(s.id, s.gen, then)
}

// onEvents appends a batch of events. The cursor follows the newest
// event, except while the run is paused at an event the cursor is on: the
// events that parallel branches emitted meanwhile (held at the gate behind
// it) must not drag the cursor away.
func (s *session) onEvents(evs []*tracer.Event) tea.Cmd {
	hold := s.holding()
	for _, e := range evs {
		s.hist.append(e, hold)
		if s.pendingPause != 0 && e.Seq == s.pendingPause {
			s.hist.seek(s.hist.len() - 1)
			s.pendingPause = 0
			hold = true
		}
	}
	if s.live == nil {
		return nil
	}
	return s.live.listen(s.id, s.gen)
}

// pausedIndex returns the history index of the event the gate holds, or -1.
func (s *session) pausedIndex() int {
	if s.live == nil {
		return -1
	}
	p := s.live.gate.Paused()
	if p == nil {
		return -1
	}
	if i := int(p.Seq) - 1; i >= 0 && i < s.hist.len() && s.hist.at(i).Seq == p.Seq {
		return i
	}
	return -1
}

// holding reports whether the cursor sits on the event the run is paused at.
func (s *session) holding() bool {
	i := s.pausedIndex()
	return i >= 0 && i == s.hist.cursor()
}

// onPaused records where the gate paused and moves the cursor there.
func (s *session) onPaused() tea.Cmd {
	lr := s.live
	if lr == nil {
		return nil
	}
	// Notifications coalesce and may be stale: trust the gate's state.
	e := lr.gate.Paused()
	if e == nil || e.Seq == s.handledPause {
		return lr.listen(s.id, s.gen)
	}
	s.handledPause = e.Seq
	var hit *tracer.Breakpoint
	lr.mu.Lock()
	if lr.pausedAt != nil && lr.pausedAt.Seq == e.Seq {
		hit = lr.hit
	}
	lr.mu.Unlock()
	s.state = statePaused
	s.awaitStep = false
	if s.queuedSteps > 0 && hit == nil {
		s.queuedSteps--
		lr.gate.Step()
		s.awaitStep = true
		s.state = stateRunning
		return lr.listen(s.id, s.gen)
	}
	s.queuedSteps = 0
	if hit != nil {
		s.hit = hit
		if hit.ID == runToID {
			s.runTo = nil
			s.syncGate()
		}
		s.note = "stopped at breakpoint " + describeBreakpoint(*hit)
	} else if s.note == "stepping" {
		s.note = ""
	}
	if i := int(e.Seq) - 1; i >= 0 && i < s.hist.len() && s.hist.at(i).Seq == e.Seq {
		if hit != nil || s.hist.cursor() >= i-1 {
			s.hist.seek(i)
		}
	} else {
		s.pendingPause = e.Seq
	}
	return lr.listen(s.id, s.gen)
}

// onEnded records the run's result once its goroutine returned.
func (s *session) onEnded() {
	lr := s.live
	if lr == nil {
		return
	}
	s.live = nil
	s.result, s.err = lr.result, lr.err
	s.pendingPause = 0
	s.runTo = nil
	s.awaitStep, s.queuedSteps = false, 0
	switch {
	case s.err == nil:
		s.state = stateDone
		s.note = "run finished"
	case errors.Is(s.err, context.Canceled) && lr.ctx.Err() != nil:
		s.state = stateCancelled
		s.note = "run cancelled"
	default:
		s.state = stateFailed
		s.note = "run failed: " + firstLine(s.err.Error())
	}
	lr.cancel()
}

// activeBreakpoints returns the user's breakpoints plus the run-to target.
func (s *session) activeBreakpoints() []tracer.Breakpoint {
	bps := append([]tracer.Breakpoint(nil), s.bps...)
	if s.runTo != nil {
		bps = append(bps, *s.runTo)
	}
	return bps
}

func (s *session) syncGate() {
	if s.live != nil {
		s.live.gate.SetBreakpoints(s.activeBreakpoints())
	}
}

// sameBreakpoint reports whether a and b stop at the same events.
func sameBreakpoint(a, b tracer.Breakpoint) bool {
	return a.Kind == b.Kind && a.Tool == b.Tool && a.Path == b.Path && a.Attempt == b.Attempt
}

func (s *session) addBreakpoint(bp tracer.Breakpoint) {
	for _, b := range s.bps {
		if sameBreakpoint(b, bp) {
			return
		}
	}
	bp.ID = s.nextBP
	s.nextBP++
	s.bps = append(s.bps, bp)
	s.syncGate()
}

// toggleBreakpoint adds bp, or removes the breakpoint equal to it.
func (s *session) toggleBreakpoint(bp tracer.Breakpoint) bool {
	for i, b := range s.bps {
		if sameBreakpoint(b, bp) {
			s.bps = append(s.bps[:i:i], s.bps[i+1:]...)
			s.syncGate()
			s.note = "breakpoint removed: " + describeBreakpoint(b)
			return false
		}
	}
	s.addBreakpoint(bp)
	s.note = "breakpoint set: " + describeBreakpoint(s.bps[len(s.bps)-1])
	return true
}

func (s *session) removeBreakpoint(id int) {
	for i, b := range s.bps {
		if b.ID == id {
			s.bps = append(s.bps[:i:i], s.bps[i+1:]...)
			s.syncGate()
			return
		}
	}
}

func (s *session) setBreakpointEnabled(id int, on bool) {
	for i := range s.bps {
		if s.bps[i].ID == id {
			s.bps[i].Disabled = !on
		}
	}
	s.syncGate()
}

// enabledBreakpoints counts breakpoints that can stop the run.
func (s *session) enabledBreakpoints() int {
	n := 0
	for _, b := range s.bps {
		if !b.Disabled {
			n++
		}
	}
	return n
}

// atNewest reports whether the cursor is on the newest event received.
func (s *session) atNewest() bool { return s.hist.cursor() >= s.hist.len()-1 }

// step moves one event forward; past the newest it releases the gate.
func (s *session) step() {
	s.hit = nil
	if s.live != nil && s.holding() {
		// Paused here while later events wait behind: release this one.
		s.live.gate.Step()
		s.awaitStep = true
		if !s.atNewest() {
			s.hist.seek(s.hist.cursor() + 1)
		}
		s.note = ""
		return
	}
	if !s.atNewest() {
		s.hist.seek(s.hist.cursor() + 1)
		s.note = ""
		return
	}
	if s.live != nil {
		if s.awaitStep {
			s.queuedSteps++ // keys faster than the run: step again on arrival
			return
		}
		s.live.gate.Step()
		s.awaitStep = true
		s.state = stateRunning
		s.note = "stepping"
		return
	}
	s.note = "at the last event"
}

// back moves one event back.
func (s *session) back() {
	s.hit = nil
	if s.hist.cursor() <= 0 {
		s.note = "at the first event"
		return
	}
	s.hist.seek(s.hist.cursor() - 1)
	s.note = ""
}

// matchBreakpoint returns the first enabled breakpoint matching e.
func matchBreakpoint(bps []tracer.Breakpoint, e *tracer.Event) *tracer.Breakpoint {
	for i := range bps {
		if bps[i].Matches(e) {
			bp := bps[i]
			return &bp
		}
	}
	return nil
}

// resume moves forward to the next event a breakpoint in bps matches:
// first through the history, then, if none is there, by letting the live
// run go on (Gate.Continue) until the gate stops it.
func (s *session) resume(bps []tracer.Breakpoint, what string) {
	s.hit = nil
	if len(bps) > 0 {
		i := -1
		if len(bps) == 1 && bps[0].Kind == tracer.BreakFailure && bps[0].Tool == "" && bps[0].Attempt == 0 && !bps[0].Disabled {
			i = s.hist.nextFailure(s.hist.cursor()) // indexed: no scan
		} else {
			i = s.hist.next(s.hist.cursor(), func(e *tracer.Event) bool { return matchBreakpoint(bps, e) != nil })
		}
		if i >= 0 {
			s.hist.seek(i)
			s.hit = matchBreakpoint(bps, s.hist.at(i))
			s.note = "stopped at " + describeBreakpoint(*s.hit)
			if s.hit.ID == runToID && s.runTo != nil {
				s.runTo = nil
				s.syncGate()
			}
			return
		}
	}
	s.hist.seek(s.hist.len() - 1)
	if s.live != nil {
		s.live.gate.Continue()
		s.state = stateRunning
		s.note = what
		return
	}
	if s.runTo != nil {
		s.runTo = nil
	}
	s.note = "no further " + what + " in this run"
	if what == "continuing" {
		s.note = "at the last event"
	}
}

// cont continues to the next breakpoint.
func (s *session) cont() {
	s.awaitStep, s.queuedSteps = false, 0
	s.runTo = nil
	s.syncGate()
	s.resume(s.bps, "continuing")
}

// runToNext continues to the next event of a kind (failure, retry, cancel).
func (s *session) runToNext(kind tracer.BreakKind, what string) {
	s.awaitStep, s.queuedSteps = false, 0
	s.runTo = &tracer.Breakpoint{ID: runToID, Kind: kind}
	s.syncGate()
	s.resume([]tracer.Breakpoint{*s.runTo}, what)
	if s.live == nil {
		s.runTo = nil
	}
}

// pause asks the live run to stop at its next event.
func (s *session) pause() {
	if s.live == nil {
		s.note = "nothing is running"
		return
	}
	s.live.gate.Pause()
	s.note = "pausing at the next event"
}

func describeBreakpoint(bp tracer.Breakpoint) string {
	if bp.ID == runToID {
		bp.ID = 0
	}
	switch {
	case bp.Kind == tracer.BreakTool && bp.Attempt > 1 && bp.Tool == "":
		return fmt.Sprintf("#%d any tool, attempt %d", bp.ID, bp.Attempt)
	case bp.Kind == tracer.BreakMismatch:
		if bp.ID == 0 {
			return "replay mismatch"
		}
		return fmt.Sprintf("#%d replay mismatch", bp.ID)
	}
	return bp.String()
}
