package engine

import (
	"context"
	"time"

	"github.com/treelang/treelang/tracer"
)

// Clock is the time source of a run: backoff sleeps and deadlines run on
// it, never on time.Sleep directly, so a replay can run them on virtual
// time.
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx is done, whichever comes first, and
	// returns ctx's error in the second case.
	Sleep(ctx context.Context, d time.Duration) error
	// AfterFunc calls f once d has passed, unless stop is called first.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// Sleep waits on a timer, returning early when ctx is done.
func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// AfterFunc runs f after d on its own goroutine.
func (RealClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

type siteKey struct{}

// ContextWithSite returns ctx carrying the site of the step it is used
// for. The engine passes it to Clock.Sleep for retry backoffs, so a
// replaying clock knows which recorded timer a sleep is.
func ContextWithSite(ctx context.Context, s tracer.Site) context.Context {
	return context.WithValue(ctx, siteKey{}, s)
}

// SiteFromContext returns the site stored by ContextWithSite.
func SiteFromContext(ctx context.Context) (tracer.Site, bool) {
	s, ok := ctx.Value(siteKey{}).(tracer.Site)
	return s, ok
}

// DeadlineTimer is the name the engine gives the run deadline's timer.
const DeadlineTimer = "deadline"

// NamedClock is implemented by clocks that need to tell the engine's
// timers apart (a replay fires a recorded deadline at the recorded point).
type NamedClock interface {
	NamedAfterFunc(name string, d time.Duration, f func()) (stop func() bool)
}

func afterFunc(c Clock, name string, d time.Duration, f func()) func() bool {
	if nc, ok := c.(NamedClock); ok {
		return nc.NamedAfterFunc(name, d, f)
	}
	return c.AfterFunc(d, f)
}

// Scheduler is implemented by clocks that replay a recording. Under a
// Scheduler exactly one evaluation goroutine runs at a time: the engine
// starts goroutines through Go and waits on other goroutines through Await,
// and the replay's provider and clock hand the turn on whenever a
// goroutine waits for a recorded outcome. The order in which goroutines
// get the turn is decided by the scheduler alone, which makes a replay of
// a concurrent run repeat the same sequence of steps, event for event.
type Scheduler interface {
	// Started is called by the goroutine that calls Eval; it runs at once.
	Started()
	// Finished is called by that goroutine when Eval returns.
	Finished()
	// Go runs f on a new goroutine once the scheduler gives it the turn;
	// goroutines started in a row get it in that order.
	Go(f func())
	// Await gives up the turn until ready() holds. The scheduler calls
	// ready only while no evaluation goroutine runs; ready may take a
	// resource (a permit, a lock) when it returns true.
	Await(ready func() bool)
}
