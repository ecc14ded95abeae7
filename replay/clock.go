package replay

import (
	"context"
	"fmt"
	"time"

	"github.com/treelang/treelang/engine"
)

// Clock returns the virtual clock of the replay: a backoff sleep returns as
// soon as its recorded turn comes (no real waiting), a backoff the
// recording never finished blocks until the engine cancels it, and the run
// deadline fires exactly where it fired in the recording, or never.
func (p *ToolReplay) Clock() engine.Clock { return &virtualClock{p: p} }

type virtualClock struct{ p *ToolReplay }

func (c *virtualClock) Now() time.Time { return time.Now() }

func (c *virtualClock) Sleep(ctx context.Context, d time.Duration) error {
	p := c.p
	site, ok := engine.SiteFromContext(ctx)
	if !ok || !p.siteMode {
		return ctx.Err() // virtual time: sleeps take no time
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	inst := site.Instance().String()
	p.broadcast()
	r, ok := p.timerRank[keyOf(site)]
	if !ok {
		return p.waitCancel(ctx, func() *MismatchError {
			return &MismatchError{Drift: DriftUnexpected,
				Message: fmt.Sprintf("Unexpected retry backoff at %s after attempt %d", inst, site.Attempt),
				Detail:  "the recording did not retry this call here"}
		})
	}
	if err := p.waitTurn(ctx, r); err != nil {
		return err
	}
	p.finish(r)
	return nil
}

// AfterFunc never fires: attempt timeouts are replayed from the recorded
// outcomes.
func (c *virtualClock) AfterFunc(time.Duration, func()) func() bool {
	return func() bool { return true }
}

// NamedAfterFunc fires the run deadline at its recorded turn.
func (c *virtualClock) NamedAfterFunc(name string, d time.Duration, f func()) func() bool {
	p := c.p
	if name != engine.DeadlineTimer || p.deadline == 0 {
		return func() bool { return true }
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.scheduled {
		// The scheduler fires it when its turn comes (sched.go).
		p.deadlineF = f
		return func() bool {
			p.mu.Lock()
			defer p.mu.Unlock()
			pending := p.deadlineF != nil
			p.deadlineF = nil
			return pending
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.mu.Lock()
		err := p.waitTurn(ctx, p.deadline)
		if err == nil {
			p.finish(p.deadline)
		}
		p.mu.Unlock()
		if err == nil {
			f()
		}
	}()
	return func() bool {
		cancel()
		<-done
		return true
	}
}

// Started is called by the goroutine that calls Eval: it holds the turn.
func (c *virtualClock) Started() {
	p := c.p
	p.mu.Lock()
	p.scheduled, p.running = true, true
	p.mu.Unlock()
}

// Finished is called when Eval returns: the turn is free.
func (c *virtualClock) Finished() {
	p := c.p
	p.mu.Lock()
	p.running = false
	p.schedule()
	p.mu.Unlock()
}

// Go starts f on a goroutine that runs when its turn comes, after the
// goroutines started before it.
func (c *virtualClock) Go(f func()) {
	p := c.p
	ch := make(chan struct{})
	p.mu.Lock()
	p.runq = append(p.runq, ch)
	p.mu.Unlock()
	go func() {
		<-ch
		f()
		p.mu.Lock()
		p.running = false
		p.schedule()
		p.mu.Unlock()
	}()
}

// Await gives up the turn until ready holds.
func (c *virtualClock) Await(ready func() bool) {
	p := c.p
	p.mu.Lock()
	if ready() {
		p.mu.Unlock()
		return
	}
	a := &await{ready: ready, ch: make(chan struct{})}
	p.awaits = append(p.awaits, a)
	p.running = false
	p.schedule()
	p.mu.Unlock()
	<-a.ch
}
