package tracer

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestTracerNumbersAndStamps(t *testing.T) {
	mem := NewMemory()
	tr := New(mem)
	now := t0
	tr.SetClock(func() time.Time { now = now.Add(time.Millisecond); return now })
	ctx := context.Background()
	for range 3 {
		if err := tr.Emit(ctx, &Event{Kind: NodeEnter, Branch: -1}); err != nil {
			t.Fatal(err)
		}
	}
	events := mem.Events()
	for i, e := range events {
		if e.Seq != uint64(i+1) || !e.Time.Equal(t0.Add(time.Duration(i+1)*time.Millisecond)) {
			t.Errorf("event %d: seq %d time %v", i, e.Seq, e.Time)
		}
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestNilTracer(t *testing.T) {
	var tr *Tracer
	if err := tr.Emit(context.Background(), &Event{}); err != nil {
		t.Fatal(err)
	}
	if tr.Err() != nil || tr.Flush() != nil || tr.Close() != nil {
		t.Fatal("nil tracer reported an error")
	}
}

// orderSink fails the test if it sees events out of Seq order, and checks
// that writes never overlap.
type orderSink struct {
	t       *testing.T
	mu      sync.Mutex
	busy    bool
	last    uint64
	n       int
	failAt  uint64
	flushes int
}

func (s *orderSink) Write(e *Event) error {
	s.mu.Lock()
	if s.busy {
		s.t.Error("concurrent Write")
	}
	s.busy = true
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.busy = false; s.mu.Unlock() }()
	if e.Seq != s.last+1 {
		s.t.Errorf("seq %d after %d", e.Seq, s.last)
	}
	s.last = e.Seq
	s.n++
	if e.Seq == s.failAt {
		return errors.New("sink broke")
	}
	return nil
}
func (s *orderSink) Flush() error { s.flushes++; return nil }
func (s *orderSink) Close() error { return nil }

func TestTracerConcurrentOrder(t *testing.T) {
	const goroutines, each = 16, 500
	sink := &orderSink{t: t, failAt: 10}
	mem := NewMemory()
	tr := New(sink, mem)
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				tr.Emit(context.Background(), &Event{Kind: NodeEnter, Branch: -1})
			}
		})
	}
	wg.Wait()
	if sink.n != goroutines*each || mem.Len() != goroutines*each {
		t.Errorf("sink saw %d, memory %d", sink.n, mem.Len())
	}
	if err := tr.Err(); err == nil || err.Error() != "sink broke" {
		t.Errorf("Err() = %v", err)
	}
	tr.Flush()
	if sink.flushes != 1 {
		t.Errorf("flushes %d", sink.flushes)
	}
	if err := tr.Close(); err == nil {
		t.Error("Close hid the sink error")
	}
}

func TestTracerGateCancel(t *testing.T) {
	g := NewGate()
	g.SetStepping(true)
	tr := New(NewMemory())
	tr.SetGate(g)
	cause := errors.New("user quit")
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error)
	go func() { done <- tr.Emit(ctx, &Event{Kind: NodeEnter, Branch: -1}) }()
	waitPaused(t, g)
	cancel(cause)
	if err := <-done; err != cause {
		t.Fatalf("Emit returned %v", err)
	}
	if g.Paused() != nil {
		t.Error("still paused after cancellation")
	}
	// Not paused: nil even with a cancelled context.
	g.SetStepping(false)
	if err := tr.Emit(ctx, &Event{Kind: NodeEnter, Branch: -1}); err != nil {
		t.Fatal(err)
	}
}

func TestTracerAddSinkWhileEmitting(t *testing.T) {
	first := NewMemory()
	tr := New(first)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				tr.Emit(context.Background(), &Event{Kind: NodeEnter, Branch: -1})
			}
		})
	}
	late := &orderSink{t: t}
	late.last = ^uint64(0) // accept any first Seq; then each must follow
	tr.AddSink(checkFrom{late})
	wg.Wait()
	if first.Len() != 800 {
		t.Errorf("first sink saw %d", first.Len())
	}
	evs := first.Events()
	if late.n == 0 || late.last != evs[len(evs)-1].Seq {
		t.Errorf("late sink saw %d events, last %d", late.n, late.last)
	}
}

// checkFrom starts an orderSink's sequence at the first event it sees.
type checkFrom struct{ s *orderSink }

func (c checkFrom) Write(e *Event) error {
	if c.s.last == ^uint64(0) {
		c.s.last = e.Seq - 1
	}
	return c.s.Write(e)
}
func (c checkFrom) Flush() error { return nil }
func (c checkFrom) Close() error { return nil }
