package replay

import "context"

// The turn. Under the engine.Scheduler of Clock(), exactly one engine
// goroutine runs at a time: it holds the turn until it waits (for a
// recorded outcome, a backoff, other goroutines, a permit or a memo key),
// and then schedule decides who runs next, in an order that depends only
// on what happened before, never on the Go runtime:
//
//  1. goroutines the engine started, in the order it started them;
//  2. engine waits (Await) that can now proceed, in the order they began;
//  3. waiting calls and backoffs the engine has cancelled, in arrival order;
//  4. the run's deadline, when its recorded turn comes;
//  5. the call or backoff whose recorded completion is next;
//  6. nothing can proceed: the earliest waiting call is told that the
//     replay stalled (a drift), instead of hanging.
//
// Everything here runs with p.mu held.

type waitKind uint8

const (
	waitRank      waitKind = iota // a recorded completion's turn
	waitCancelled                 // cancellation (the recording saw one)
	waitOrder                     // order mode: the cursor to reach entry
)

// waiter is a call or backoff waiting in the replay for its turn.
type waiter struct {
	kind  waitKind
	rank  int
	entry int
	ctx   context.Context
	ch    chan struct{}

	cancelled bool // woken because ctx was cancelled
	stalled   bool // woken because nothing else could proceed
}

// await is an engine goroutine waiting on another (engine.Scheduler.Await).
type await struct {
	ready func() bool
	ch    chan struct{}
}

// block gives up the turn until w may go on, and tells why it did.
func (p *ToolReplay) block(w *waiter) *waiter {
	w.ch = make(chan struct{})
	p.blocked = append(p.blocked, w)
	p.running = false
	p.schedule()
	p.mu.Unlock()
	<-w.ch
	p.mu.Lock()
	return w
}

func (p *ToolReplay) wake(ch chan struct{}) {
	p.running = true
	close(ch)
}

func (p *ToolReplay) unblock(i int) *waiter {
	w := p.blocked[i]
	p.blocked = append(p.blocked[:i], p.blocked[i+1:]...)
	return w
}

// schedule hands the turn on when nobody holds it.
func (p *ToolReplay) schedule() {
	for !p.running {
		if len(p.runq) > 0 {
			ch := p.runq[0]
			p.runq = p.runq[1:]
			p.wake(ch)
			return
		}
		for i, a := range p.awaits {
			if a.ready() {
				p.awaits = append(p.awaits[:i], p.awaits[i+1:]...)
				p.wake(a.ch)
				return
			}
		}
		for i, w := range p.blocked {
			if w.ctx.Err() != nil {
				p.unblock(i).cancelled = true
				p.wake(w.ch)
				return
			}
		}
		if p.deadlineF != nil && p.ready(p.deadline) {
			fire := p.deadlineF
			p.deadlineF = nil
			p.finish(p.deadline)
			fire() // cancels the run: its waiters wake as cancelled
			continue
		}
		for i, w := range p.blocked {
			if (w.kind == waitRank && p.ready(w.rank)) || (w.kind == waitOrder && p.reached(w.entry)) {
				p.unblock(i)
				p.wake(w.ch)
				return
			}
		}
		if len(p.blocked) > 0 {
			w := p.unblock(0)
			w.stalled = true
			p.wake(w.ch)
		}
		return
	}
}

// reached reports whether the order-mode cursor got to entry j.
func (p *ToolReplay) reached(j int) bool {
	p.skipConsumed()
	return p.cursor >= j
}

// nextAnyway reports whether schedule would hand the turn straight back to
// a caller about to wait for rank r, so it need not wait at all: nothing
// else is runnable and r's turn has come. (An engine wait that might now
// proceed is not asked: asking may take its permit.)
func (p *ToolReplay) nextAnyway(ctx context.Context, r int) bool {
	if !p.ready(r) || ctx.Err() != nil || len(p.runq) > 0 || len(p.awaits) > 0 {
		return false
	}
	if p.deadlineF != nil && p.ready(p.deadline) {
		return false
	}
	for _, w := range p.blocked {
		if w.ctx.Err() != nil || (w.kind == waitRank && p.ready(w.rank)) || (w.kind == waitOrder && p.reached(w.entry)) {
			return false
		}
	}
	return true
}
