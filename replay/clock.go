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
	p.active--
	defer func() { p.active++ }()
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

// Started is called by the engine when an evaluation goroutine starts.
func (c *virtualClock) Started() { c.p.adjust(+1) }

// Finished is called by the engine when an evaluation goroutine ends.
func (c *virtualClock) Finished() { c.p.adjust(-1) }

// Blocked is called by the engine when a goroutine waits on another.
func (c *virtualClock) Blocked() { c.p.adjust(-1) }

// Unblocked is called by the engine when a waiting goroutine resumes.
func (c *virtualClock) Unblocked() { c.p.adjust(+1) }

func (p *ToolReplay) adjust(d int) {
	p.mu.Lock()
	p.active += d
	p.broadcast()
	p.mu.Unlock()
}
