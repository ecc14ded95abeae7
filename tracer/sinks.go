package tracer

import (
	"errors"
	"sync"
)

// Memory is a sink that keeps every event in memory. It is safe for
// concurrent use. Events are kept in fixed-size chunks, so a long run never
// copies what it already holds.
type Memory struct {
	mu     sync.Mutex
	chunks [][]*Event
	n      int
}

const memoryChunk = 4096

// NewMemory returns an empty memory sink.
func NewMemory() *Memory { return &Memory{} }

// Write appends e.
func (m *Memory) Write(e *Event) error {
	m.mu.Lock()
	if m.n%memoryChunk == 0 {
		m.chunks = append(m.chunks, make([]*Event, 0, memoryChunk))
	}
	last := len(m.chunks) - 1
	m.chunks[last] = append(m.chunks[last], e)
	m.n++
	m.mu.Unlock()
	return nil
}

// Events returns a snapshot of the events written so far, in order. The
// slice is the caller's; the events are shared and must not be modified.
func (m *Memory) Events() []*Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Event, 0, m.n)
	for _, c := range m.chunks {
		out = append(out, c...)
	}
	return out
}

// Len returns how many events have been written.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

// Flush does nothing.
func (m *Memory) Flush() error { return nil }

// Close does nothing; the events stay readable.
func (m *Memory) Close() error { return nil }

// Multi returns a sink that writes every event to each of sinks in turn.
// Every sink is written even if an earlier one fails; the errors are
// joined.
func Multi(sinks ...Sink) Sink {
	return multi(append([]Sink(nil), sinks...))
}

type multi []Sink

func (m multi) Write(e *Event) error {
	var errs []error
	for _, s := range m {
		if err := s.Write(e); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (m multi) Flush() error {
	var errs []error
	for _, s := range m {
		if err := s.Flush(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (m multi) Close() error {
	var errs []error
	for _, s := range m {
		if err := s.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
