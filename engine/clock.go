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

// Scheduler is implemented by clocks that replay a recording. The engine
// tells it when an evaluation goroutine starts and finishes, and when one
// blocks outside the provider and the clock (waiting for siblings, for a
// concurrency permit or for a memo key) and resumes. A replay then
// releases the next recorded completion only when every goroutine of the
// run is blocked, which makes a concurrent replay deterministic.
type Scheduler interface {
	Started()
	Finished()
	Blocked()
	Unblocked()
}
