package tracer

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Sink receives events from a Tracer. The Tracer calls Write for one event
// at a time, in Seq order; a sink may keep the *Event, which the engine never
// touches again, but must not modify it.
type Sink interface {
	Write(*Event) error
	Flush() error
	Close() error
}

// Tracer is the hub the engine emits events into. It numbers and stamps
// each event, hands it to every sink in Seq order and then lets the Gate,
// if any, pause the run.
//
// A nil *Tracer is valid and does nothing, so an engine without tracing
// pays one nil check per event.
type Tracer struct {
	mu    sync.Mutex
	seq   uint64
	now   func() time.Time
	sinks []Sink
	err   error // first sink error
	gate  atomic.Pointer[Gate]
}

// New returns a Tracer that writes to sinks.
func New(sinks ...Sink) *Tracer {
	return &Tracer{now: time.Now, sinks: sinks}
}

// SetClock sets the clock that stamps events (default time.Now). Tests and
// replays inject their own.
func (t *Tracer) SetClock(now func() time.Time) {
	t.mu.Lock()
	t.now = now
	t.mu.Unlock()
}

// SetGate installs the gate consulted after every event; nil removes it.
func (t *Tracer) SetGate(g *Gate) { t.gate.Store(g) }

// Emit records e: it assigns e.Seq (strictly increasing from 1) and, unless
// the emitter already read the clock for it, e.Time,
// writes e to every sink, then, outside the lock that orders events, waits
// at the gate if one is set. It returns context.Cause(ctx) if ctx is
// cancelled while the run is paused at this event, and nil otherwise.
//
// Emit is safe for concurrent use; sinks see events in Seq order. A sink's
// write error never fails the run: the first one is kept for Err. The
// caller must not touch e after Emit returns.
func (t *Tracer) Emit(ctx context.Context, e *Event) error {
	if t == nil {
		return nil
	}
	g := t.gate.Load()
	t.mu.Lock()
	t.seq++
	e.Seq = t.seq
	if e.Time.IsZero() {
		e.Time = t.now()
	}
	for _, s := range t.sinks {
		if err := s.Write(e); err != nil && t.err == nil {
			t.err = err
		}
	}
	// Queue at the gate in Seq order, before another goroutine can emit.
	var w *waiter
	if g != nil {
		w = g.arrive(e)
	}
	t.mu.Unlock()
	if w == nil {
		return nil
	}
	return g.await(ctx, w)
}

// Err returns the first error a sink returned, if any.
func (t *Tracer) Err() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// Flush flushes every sink and returns the first error.
func (t *Tracer) Flush() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var first error
	for _, s := range t.sinks {
		if err := s.Flush(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Close closes every sink and returns the first error, including a write
// error kept from an earlier Emit.
func (t *Tracer) Close() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	first := t.err
	for _, s := range t.sinks {
		if err := s.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
